#include "integration/helper_submit.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/store.h"
#include "engine/submit/submit.h"
#include "engine/track/tracker.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

void sub_open(struct sub_env *e, const char *name, const char *cache)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char tmpl[] = "/tmp/taotop-submit-XXXXXX", *err = NULL, *cmd;

	rig_target(&t);
	e->conn = conn_new(&t);
	cr_assert_not_null(mkdtemp(tmpl));
	e->local = xstrdup(tmpl);
	char *jobs = xasprintf("%s/jobs", tmpl);
	e->store = store_open(jobs, &err);
	free(jobs);
	cr_assert_not_null(e->store, "%s", err);
	e->base = xasprintf("%s/submit-tests/%s-%d", r->shared, name, rig_uniq());
	cmd = xasprintf("rm -rf %s && mkdir -p %s/data/train %s/data/val %s/root", e->base, e->base,
	    e->base, e->base);
	free(rig_ssh_ok(cmd));
	free(cmd);
	memset(&e->cl, 0, sizeof(e->cl));
	e->cl.name = xstrdup("rig");
	e->cl.partitions = xstrdup("polar,polar3,polar4,grizzly");
	e->cl.results_root = xasprintf("lustre://%s/root", e->base);
	e->cl.image_cache = cache ? xstrdup(cache) : xasprintf("%s/images", e->base);
	e->cl.cpu_partition = xstrdup("cpu_long");
	/* Probed already, no knobs needed: the NCCL probe's own tests clear
	 * this (and the budget) to exercise them. */
	e->cl.nccl_env = xstrdup("");
	e->cl.nccl_probe_timeout_s = 120;
	e->cl.retry_budget = 0;
	setenv("HF_TOKEN", SUB_TOKEN, 1);
}

void sub_close(struct sub_env *e)
{
	conn_free(e->conn);
	store_close(e->store);
	free(e->cl.name), free(e->cl.partitions), free(e->cl.results_root);
	free(e->cl.image_cache), free(e->cl.cpu_partition), free(e->cl.nccl_env);
	free(e->cl.nccl_ladder);
	free(e->base), free(e->local);
}

/* Write a bundle locally; %B in text stands for the test's base folder. */
char *sub_bundle(struct sub_env *e, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s.yaml", e->local, name);
	struct buf b;
	const char *p;
	FILE *f;

	buf_init(&b);
	for (p = text; *p != '\0'; p++) {
		if (p[0] == '%' && p[1] == 'B') {
			buf_adds(&b, e->base);
			p++;
		} else {
			buf_addc(&b, *p);
		}
	}
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(b.data, f);
	fclose(f);
	buf_free(&b);
	return path;
}

int sub_submit(struct sub_env *e, const char *spec, struct submit_result *res, char **err)
{
	struct submit_opts o = { .spec_path = spec, .gpus = -1, .nodes = -1, .time_hours = -1 };
	return submit_run(e->conn, e->store, &e->cl, &o, NULL, NULL, res, err);
}

/* A file on the rig, whole, or NULL when it does not exist. */
char *sub_slurp(const char *path)
{
	char *err = NULL, *text = file_read_all(path, NULL, &err);
	free(err);
	return text;
}

/* Poll until the record is final; return its state. */
enum tao_state sub_wait_final(struct sub_env *e, const char *id, int timeout_s)
{
	struct tracker *t = tracker_new(&e->cl);
	time_t end = time(NULL) + timeout_s;
	enum tao_state st = TAO_UNKNOWN;

	while (time(NULL) < end) {
		struct poll_result res;
		struct job_record *r;
		char *err = NULL;
		cr_assert_eq(tracker_poll(t, e->conn, e->store, &res, &err), 0, "%s", err);
		poll_result_free(&res);
		cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
		st = r->state;
		record_free(r);
		if (tao_state_final(st))
			break;
		sleep(1);
	}
	tracker_free(t);
	return st;
}


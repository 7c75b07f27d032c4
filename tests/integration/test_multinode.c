/*
 * Multi-node jobs on the two-node test cluster: the rendezvous each rank
 * sees, and the NCCL probe's ladder with the rig's torchrun stand-in, which
 * hangs the all-reduce unless NCCL_P2P_DISABLE=1 is set.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/submit/submit.h"
#include "integration/helper_rig.h"
#include "integration/helper_submit.h"
#include "util/buf.h"
#include "util/xmalloc.h"

/* Each rank prints one line with what it sees. */
static const char *rank_bundle =
	"image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	"network_arch: classification_pyt\n"
	"action: train\n"
	"command:\n"
	"  - sh\n"
	"  - -c\n"
	"  - 'echo \"rank-line NODE_RANK=$NODE_RANK WORLD_SIZE=$WORLD_SIZE NUM_GPU_PER_NODE=$NUM_GPU_PER_NODE "
	"MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT TAO_NODE_COUNT=$TAO_NODE_COUNT "
	"TAO_GPUS_PER_NODE=$TAO_GPUS_PER_NODE TAO_NODE_RANK=$TAO_NODE_RANK NODE=$SLURMD_NODENAME "
	"P2P=${NCCL_P2P_DISABLE:-unset}\"; echo {\\\"status\\\": \\\"SUCCESS\\\"} > {results_dir}/status.json'\n"
	"datasets: [lustre://%B/data/train]\n"
	"nodes: 2\n"
	"gpus: 4\n"
	"cpus_per_task: 2\n"
	"time_hours: 0.5\n";

/* The lines of main.out that start with "rank-line", sorted by rank. */
static void rank_lines(struct sub_env *e, const char *id, char **line0, char **line1)
{
	struct job_record *r;
	char *err = NULL, *path, *text, *p;

	cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
	path = xasprintf("%s/%s-%s/main.out", r->log_dir, r->id, r->backend_ref);
	text = sub_slurp(path);
	cr_assert_not_null(text, "%s is missing", path);
	*line0 = *line1 = NULL;
	for (p = strstr(text, "rank-line"); p != NULL; p = strstr(p + 1, "rank-line")) {
		char *l = xstrndup(p, strcspn(p, "\n"));
		if (strstr(l, "NODE_RANK=0 ") != NULL && *line0 == NULL)
			*line0 = l;
		else if (strstr(l, "NODE_RANK=1 ") != NULL && *line1 == NULL)
			*line1 = l;
		else
			free(l);
	}
	cr_assert(*line0 != NULL && *line1 != NULL, "not one line per rank in %s:\n%s", path, text);
	free(text), free(path);
	record_free(r);
}

static char *field(const char *line, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s=", name);
	p = strstr(line, key);
	cr_assert_not_null(p, "%s not in: %s", name, line);
	p += strlen(key);
	return xstrndup(p, strcspn(p, " "));
}

Test(multinode, a_two_node_job_runs_a_rank_on_each_node_with_the_rendezvous, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL, *l0, *l1;
	const char *same[] = { "WORLD_SIZE", "NUM_GPU_PER_NODE", "MASTER_ADDR", "MASTER_PORT",
	    "TAO_NODE_COUNT", "TAO_GPUS_PER_NODE" };

	sub_open(&e, "twonode", NULL);
	char *spec = sub_bundle(&e, "twonode", rank_bundle);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(sub_wait_final(&e, res.record_id, 180), TAO_DONE);
	rank_lines(&e, res.record_id, &l0, &l1);
	/* WORLD_SIZE is the node count (TAO's meaning), not 4 ranks. */
	cr_expect_not_null(strstr(l0, " WORLD_SIZE=2 "), "%s", l0);
	cr_expect_not_null(strstr(l0, " NUM_GPU_PER_NODE=2 "), "%s", l0);
	cr_expect_not_null(strstr(l0, " MASTER_PORT=29500 "), "%s", l0);
	cr_expect_not_null(strstr(l0, " TAO_NODE_COUNT=2 "), "%s", l0);
	cr_expect_not_null(strstr(l0, " TAO_GPUS_PER_NODE=2 "), "%s", l0);
	cr_expect_not_null(strstr(l0, " TAO_NODE_RANK=0 "), "%s", l0);
	cr_expect_not_null(strstr(l1, " TAO_NODE_RANK=1 "), "%s", l1);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		char *a = field(l0, same[i]), *b = field(l1, same[i]);
		cr_expect_str_eq(a, b, "%s differs between the ranks", same[i]);
		free(a), free(b);
	}
	{
		/* One task on each node, and the master is the first one. */
		char *n0 = field(l0, "NODE"), *n1 = field(l1, "NODE"), *m = field(l0, "MASTER_ADDR");
		cr_expect_str_neq(n0, n1, "both ranks ran on %s", n0);
		cr_expect_str_eq(m, "node01");
		free(n0), free(n1), free(m);
	}
	free(l0), free(l1), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

struct said {
	struct buf	text;
};

static void collect(enum submit_step step, int state, const char *detail, void *data)
{
	struct said *s = data;
	if (step == STEP_PROBE && detail != NULL)
		buf_addf(&s->text, "%d %s\n", state, detail);
}

/* main.out of a record's job. */
static char *main_out(struct sub_env *e, const char *id)
{
	struct job_record *r;
	char *err = NULL, *path, *text;

	cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
	path = xasprintf("%s/%s-%s/main.out", r->log_dir, r->id, r->backend_ref);
	text = sub_slurp(path);
	cr_assert_not_null(text, "%s is missing", path);
	free(path);
	record_free(r);
	return text;
}

/* The probe is the job's first step, in its allocation on its two nodes:
 * the submit queues the job at once; inside it the first rung (no knobs)
 * hangs, the next (NCCL_P2P_DISABLE=1) passes, the training runs with it;
 * the poll caches it, and the next job skips the probe. */
Test(multinode, the_probe_climbs_the_ladder_caches_the_knob_and_later_jobs_skip_it, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct submit_opts o = { .gpus = -1, .nodes = -1, .time_hours = -1 };
	struct said said;
	struct config cfg;
	char *err = NULL, *cfgpath, *text, *sbatch, *l0, *l1, *out;
	const struct cluster_cfg *cached;

	sub_open(&e, "probe", NULL);
	/* Never probed on this cluster. The real nccl_probe.py runs under the
	 * torch stand-in, whose hung all-reduce ends by the collective's own
	 * timeout (10 s on the rig) before the rung's limit, as a real hang
	 * does. */
	free(e.cl.nccl_env);
	e.cl.nccl_env = NULL;
	e.cl.nccl_probe_timeout_s = 90;
	cfgpath = xasprintf("%s/config.yaml", e.local);
	setenv("TAOTOP_CONFIG", cfgpath, 1);
	buf_init(&said.text);
	o.spec_path = sub_bundle(&e, "probe", rank_bundle);
	cr_assert_eq(submit_run(e.conn, e.store, &e.cl, &o, collect, &said, &res, &err), 0, "%s\n%s",
	    err, said.text.data);
	text = said.text.data;
	cr_assert_not_null(strstr(text, "1 the NCCL probe runs as the job's first step on 2x2 (not "
	    "cached for this shape)\n"), "%s", text);
	cr_assert_null(strstr(text, "submitted probe job"), "%s", text);
	cr_assert_not_null(res.slurm_id, "the job itself was submitted");
	cr_assert_eq(sub_wait_final(&e, res.record_id, 240), TAO_DONE);
	/* Its log: the ladder climbed, then the training with the knob. */
	out = main_out(&e, res.record_id);
	cr_expect_not_null(strstr(out, "taotop: the NCCL probe on 2x2, rung 1: none (up to 90s)\n"),
	    "%s", out);
	cr_expect_not_null(strstr(out, "taotop: the NCCL probe hung with none (ended by the "
	    "collective's own timeout)"), "%s", out);
	cr_expect_not_null(strstr(out, "rung 2: NCCL_P2P_DISABLE=1"), "%s", out);
	cr_expect_not_null(strstr(out, "NCCL_PROBE_OK world=4"), "%s", out);
	cr_expect_not_null(strstr(out, "taotop: the NCCL probe passed on 2x2 with "
	    "NCCL_P2P_DISABLE=1"), "%s", out);
	cr_expect(strstr(out, "NCCL_PROBE_OK") != NULL && strstr(out, "rank-line") != NULL &&
	    strstr(out, "NCCL_PROBE_OK") < strstr(out, "rank-line"), "the probe first:\n%s", out);
	free(out);
	rank_lines(&e, res.record_id, &l0, &l1);
	cr_expect_not_null(strstr(l0, " P2P=1"), "%s", l0);
	cr_expect_not_null(strstr(l1, " P2P=1"), "%s", l1);
	free(l0), free(l1);
	/* Cached in the config by the poll, for cluster rig, with the shape. */
	setenv("SLURM_HOSTNAME", "unused", 1);
	setenv("SLURM_USER", "unused", 1);
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cached = config_cluster(&cfg, "rig");
	cr_assert_not_null(cached);
	cr_assert_str_eq(cached->nccl_env, "NCCL_P2P_DISABLE=1");
	cr_assert_str_eq(cached->nccl_env_shape ? cached->nccl_env_shape : "", "2x2");
	{
		/* The record says so too. */
		struct job_record *r;
		size_t i;
		int seen = 0;
		cr_assert_eq(store_load(e.store, res.record_id, &r, &err), 0, "%s", err);
		for (i = 0; i < r->nhist; i++)
			seen |= r->hist[i].message != NULL && strstr(r->hist[i].message,
			    "the NCCL probe passed on 2x2 with NCCL_P2P_DISABLE=1: cached for "
			    "cluster rig") != NULL;
		cr_expect(seen, "no history line for the cached probe");
		record_free(r);
	}
	submit_result_free(&res);

	/* The next multi-node job: no probe, the knob in its sbatch. */
	buf_reset(&said.text);
	free(e.cl.nccl_env);
	e.cl.nccl_env = xstrdup(cached->nccl_env);
	cr_assert_eq(submit_run(e.conn, e.store, &e.cl, &o, collect, &said, &res, &err), 0, "%s", err);
	text = said.text.data ? said.text.data : (char *)"";
	cr_assert_null(strstr(text, "submitted probe job"), "probed again:\n%s", text);
	cr_assert_not_null(strstr(text, "1 cached: NCCL_P2P_DISABLE=1"), "%s", text);
	{
		struct job_record *r;
		char *dir, *path;
		cr_assert_eq(store_load(e.store, res.record_id, &r, &err), 0, "%s", err);
		dir = xstrndup(r->log_dir, strlen(r->log_dir) - strlen("/slurm-logs"));
		path = xasprintf("%s/sbatch/job_%s.sbatch", dir, r->id);
		sbatch = sub_slurp(path);
		cr_assert_not_null(sbatch, "%s", path);
		cr_expect_not_null(strstr(sbatch, "export NCCL_P2P_DISABLE=1"), "%s", sbatch);
		free(dir), free(path), free(sbatch);
		record_free(r);
	}
	cr_assert_eq(sub_wait_final(&e, res.record_id, 180), TAO_DONE);
	submit_result_free(&res);
	config_free(&cfg);
	unsetenv("TAOTOP_CONFIG");
	buf_free(&said.text);
	free(cfgpath), free((char *)o.spec_path);
	sub_close(&e);
}

/* Whether a transition of record id says `what`. */
static int history_says(struct sub_env *e, const char *id, const char *what)
{
	struct job_record *r;
	char *err = NULL;
	int seen = 0;

	cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
	for (size_t i = 0; i < r->nhist; i++)
		seen |= r->hist[i].message != NULL && strstr(r->hist[i].message, what) != NULL;
	record_free(r);
	return seen;
}

/* Every rung of the ladder hangs (the cluster's ladder has no
 * NCCL_P2P_DISABLE=1, without which the rig's all-reduce hangs): the job
 * ends before its training, main.err names the rungs tried, the failure
 * is the infrastructure's (the NCCL probe's), never the program's, and
 * nothing is cached. */
Test(multinode, every_rung_hanging_ends_the_job_before_training_as_the_probes_failure,
    .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL, *cfgpath, *spec, *path, *text;
	struct job_record *r;

	sub_open(&e, "probehang", NULL);
	free(e.cl.nccl_env);
	e.cl.nccl_env = NULL;
	e.cl.nccl_probe_timeout_s = 90;
	e.cl.nccl_ladder = xstrdup("NCCL_IB_DISABLE=1\n");
	cfgpath = xasprintf("%s/config.yaml", e.local);
	setenv("TAOTOP_CONFIG", cfgpath, 1);
	spec = sub_bundle(&e, "probehang", rank_bundle);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(sub_wait_final(&e, res.record_id, 240), TAO_ERROR);
	for (int i = 0; i < 10 && !history_says(&e, res.record_id, "nccl-probe"); i++) {
		sleep(1);
		sub_wait_final(&e, res.record_id, 5);
	}
	cr_expect(history_says(&e, res.record_id, "failure: the cluster's setup (nccl-probe): "
	    "main.err: taotop: the NCCL probe hung with every rung of the ladder on 2x2 (tried: "
	    "none; NCCL_IB_DISABLE=1): the training did not start"), "the verdict");
	cr_expect(history_says(&e, res.record_id, "not retried (a fresh allocation would fail "
	    "the same way)"), "retried: the ladder would hang again");
	cr_expect(!history_says(&e, res.record_id, "retry 1 of"), "retried");
	cr_expect(!history_says(&e, res.record_id, "the program's"), "a program fault");
	cr_assert_eq(store_load(e.store, res.record_id, &r, &err), 0, "%s", err);
	path = xasprintf("%s/%s-%s/main.out", r->log_dir, r->id, r->backend_ref);
	text = sub_slurp(path);
	cr_assert_not_null(text, "%s", path);
	cr_expect_null(strstr(text, "rank-line"), "the training ran:\n%s", text);
	cr_expect_null(strstr(text, "NCCL_PROBE_OK"), "%s", text);
	free(text), free(path);
	path = xasprintf("%s/%s-%s/main.err", r->log_dir, r->id, r->backend_ref);
	text = sub_slurp(path);
	cr_assert_not_null(text, "%s", path);
	cr_expect_not_null(strstr(text, "taotop: the NCCL probe hung with every rung of the ladder on "
	    "2x2 (tried: none; NCCL_IB_DISABLE=1)"), "%s", text);
	free(text), free(path);
	record_free(r);
	text = sub_slurp(cfgpath);
	cr_expect(text == NULL || strstr(text, "nccl_env") == NULL, "cached: %s", text);
	free(text);
	unsetenv("TAOTOP_CONFIG");
	free(cfgpath), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

#include "integration/helper_user.h"

#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

void user_open(struct user *u, const char *name, const char *config)
{
	const struct rig *r = rig_get();
	char tmpl[] = "/tmp/taotop-tao-XXXXXX", *cmd, *path, *out = NULL;
	FILE *f;

	cr_assert_not_null(mkdtemp(tmpl));
	u->local = xstrdup(tmpl);
	u->remote = xasprintf("%s/tao-tests/%s-%d", r->shared, name, rig_uniq());
	cmd = xasprintf("rm -rf %s && mkdir -p %s/datasets/imagenet/train %s/datasets/imagenet/val "
	    "%s/jobs", u->remote, u->remote, u->remote, u->remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	path = xasprintf("%s/config.yaml", u->local);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(config ? config : "# no clusters: the environment names the cluster\n", f);
	fclose(f);
	u->env = xasprintf("HF_TOKEN=%s SLURM_BASE_RESULTS_DIR=lustre://%s/jobs "
	    "XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s", USER_TOKEN, u->remote, u->local, path);
	free(path);
	/* What the README says to do once per cluster for nvcr.io images
	 * (once: a second time taotop leaves the file as it is), the key in a
	 * file of the user's, as a machine without a terminal gives it. */
	path = xasprintf("%s/ngc.key", u->local);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "%s\n", USER_NGC_KEY);
	fclose(f);
	cr_assert_eq(chmod(path, 0600), 0);
	cmd = xasprintf("preflight --install-ngc-credentials --ngc-key-file %s", path);
	if (rig_taotop(u->env, cmd, &out) != 0)
		cr_assert(strstr(out, "already exists") != NULL, "%s", out);
	free(out), free(cmd), free(path);
}

void user_close(struct user *u)
{
	rig_local("rm -rf %s", u->local);
	free(u->local), free(u->remote), free(u->env);
}

char *user_bundle(struct user *u, const char *name, const char *command, const char *extra)
{
	char *path = xasprintf("%s/%s.yaml", u->local, name);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fprintf(f, "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\n%sdatasets: [lustre://%s/datasets/imagenet/train]\ngpus: 1\n"
	    "cpus_per_task: 1\ntime_hours: 0.5\nsecrets: [HF_TOKEN]\n%sspec:\n  train:\n"
	    "    num_epochs: 1\n", command ? command : "", u->remote, extra ? extra : "");
	fclose(f);
	return path;
}

char *text_line_with(const char *text, const char *needle)
{
	const char *at = strstr(text, needle), *from, *to;

	if (at == NULL)
		return NULL;
	for (from = at; from > text && from[-1] != '\n'; from--)
		;
	to = strchr(at, '\n');
	return to ? xasprintf("%.*s", (int)(to - from), from) : xstrdup(from);
}

cJSON *user_json_array(struct user *u, const char *args, char **out)
{
	cJSON *arr;
	const char *at;

	cr_assert_eq(rig_taotop(u->env, args, out), 0, "taotop %s:\n%s", args, *out);
	at = strchr(*out, '[');
	arr = at != NULL ? cJSON_Parse(at) : NULL;
	cr_assert(cJSON_IsArray(arr), "taotop %s printed no JSON array:\n%s", args, *out);
	return arr;
}

cJSON *json_find(cJSON *arr, const char *key, const char *value)
{
	cJSON *o;

	cJSON_ArrayForEach(o, arr)
		if (strcmp(json_str(o, key), value) == 0)
			return o;
	return NULL;
}

/* `taotop submit BUNDLE --json`: the record id (caller frees). */
char *user_submit(struct user *u, const char *bundle, char **out)
{
	char *args = xasprintf("submit %s --json", bundle), *id;
	cJSON *o;
	int rc = rig_taotop(u->env, args, out);

	free(args);
	cr_assert_eq(rc, 0, "taotop submit failed:\n%s", *out);
	o = cJSON_Parse(strchr(*out, '{'));
	cr_assert(cJSON_IsObject(o), "not JSON:\n%s", *out);
	id = xstrdup(cJSON_GetStringValue(cJSON_GetObjectItem(o, "id")));
	cJSON_Delete(o);
	return id;
}

/* `taotop status ID --json` every 2 s until the job is final. */
cJSON *user_wait_final(struct user *u, const char *id, int timeout_s)
{
	return user_wait_final_each(u, id, timeout_s, NULL, NULL);
}

cJSON *user_wait_final_each(struct user *u, const char *id, int timeout_s,
    void (*each)(const cJSON *status, void *arg), void *arg)
{
	char *args = xasprintf("status %s --json", id);
	cJSON *o = NULL;

	for (int waited = 0; waited < timeout_s; waited += 2) {
		char *out = NULL;
		const char *state;
		cJSON_Delete(o);
		o = NULL;
		if (rig_taotop(u->env, args, &out) == 0 && strchr(out, '{') != NULL)
			o = cJSON_Parse(strchr(out, '{'));
		free(out);
		if (o != NULL && each != NULL)
			each(o, arg);
		state = cJSON_GetStringValue(cJSON_GetObjectItem(o, "state"));
		if (state != NULL && (strcmp(state, "Done") == 0 || strcmp(state, "Error") == 0 ||
		    strcmp(state, "Canceled") == 0))
			break;
		sleep(2);
	}
	free(args);
	cr_assert_not_null(o, "no status for %s", id);
	return o;
}

const char *json_str(const cJSON *o, const char *name)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, name));
	return v ? v : "";
}

/* Whether any transition of the status's record says `what`. */
int user_history_says(const cJSON *status, const char *what)
{
	const cJSON *t, *hist = cJSON_GetObjectItem(cJSON_GetObjectItem(status, "record"),
	    "transitions");

	cJSON_ArrayForEach(t, hist) {
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(t, "message"));
		if (m != NULL && strstr(m, what) != NULL)
			return 1;
	}
	return 0;
}


char *user_job_file(struct user *u, const char *id, const char *file)
{
	char *cmd = xasprintf("cat %s/jobs/%s/%s 2>/dev/null; true", u->remote, id, file);
	char *out = rig_ssh_ok(cmd);

	free(cmd);
	return out;
}

char *user_two_clusters(struct user *u, int alpha_reachable)
{
	const struct rig *r = rig_get();
	char *path = xasprintf("%s/config.yaml", u->local), *alpha;
	FILE *f = fopen(path, "w");

	alpha = alpha_reachable ? xasprintf("%s:%d", r->host, r->port) : xstrdup("127.0.0.1:1");
	cr_assert_not_null(f);
	fprintf(f, "default_cluster: alpha\nclusters:\n  alpha:\n    hosts: %s\n    user: %s\n"
	    "  beta:\n    hosts: %s:%d\n    user: %s\n", alpha, r->user, r->host, r->port, r->user);
	fclose(f);
	free(alpha), free(path);
	return xasprintf("%s SLURM_HOSTNAME= SLURM_USER= TAOTOP_CLUSTER=", u->env);
}

/* templates/example.spec.yaml as a user copies it: its /lustre/ paths
 * pointed at their folder on the local cluster, and each (from, to) of
 * edits applied; labels.txt beside it with the content its sha256 names. */
char *user_example_bundle(struct user *u, const char *const edits[][2], size_t nedits)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *src, *text, *err = NULL, *path, *to;
	struct buf b;
	size_t i;
	FILE *f;

	cr_assert_not_null(share, "TAOTOP_SHARE is not set (run through tests/run)");
	src = xasprintf("%s/templates/example.spec.yaml", share);
	text = file_read_all(src, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	free(src);
	to = xasprintf("lustre://%s/", u->remote);
	buf_init(&b);
	buf_adds(&b, text);
	{
		/* Every lustre:///lustre/ path of the example into the user's folder. */
		char *p, *rest = xstrdup(b.data);
		buf_free(&b);
		buf_init(&b);
		for (p = rest; *p != '\0';) {
			if (strncmp(p, "lustre:///lustre/", 17) == 0) {
				buf_adds(&b, to);
				p += 17;
			} else {
				buf_addc(&b, *p++);
			}
		}
		free(rest);
	}
	for (i = 0; i < nedits; i++) {
		char *at = strstr(b.data, edits[i][0]), *next;
		cr_assert_not_null(at, "the example bundle no longer has '%s'", edits[i][0]);
		next = xasprintf("%.*s%s%s", (int)(at - b.data), b.data, edits[i][1],
		    at + strlen(edits[i][0]));
		buf_free(&b);
		buf_init(&b);
		buf_adds(&b, next);
		free(next);
	}
	path = xasprintf("%s/example.spec.yaml", u->local);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(b.data, f);
	fclose(f);
	free(text), free(to);
	buf_free(&b);
	/* sha256("test"), as the example states. */
	rig_local("printf test > %s/labels.txt", u->local);
	return path;
}

#include "engine/logs/logpath.h"

#include <stdlib.h>
#include <string.h>

#include "engine/store/jobref.h"
#include "engine/store/record.h"
#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

#define SCONTROL_TIMEOUT_MS	30000

char *job_log_file(const struct job_record *r, const char *name)
{
	if (r->backend_ref == NULL || r->log_dir == NULL)
		return NULL;
	return xasprintf("%s/%s-%s/%s", r->log_dir, r->id, r->backend_ref, name);
}

static int path_of_record(const struct job_record *r, const char *name, char **path, char **err)
{
	if (r->backend_ref == NULL) {
		*err = xasprintf("%s has not been launched yet", r->id);
		return -1;
	}
	if (r->log_dir == NULL) {
		*err = xasprintf("%s has no log folder", r->id);
		return -1;
	}
	*path = job_log_file(r, name);
	return 0;
}

/* The path SLURM writes StdOut/StdErr to, from squeue's fields. A job
 * without --error writes its stderr into its stdout file: squeue 22.05
 * prints that path as STDERR, 24.11 prints "(null)". */
static char *path_of_squeue(const char *out, const char *nonce, int want_err)
{
	struct slurm_paths sp;
	const char *pattern;
	char *path = NULL;

	if (slurm_paths_parse(out, nonce, &sp) != 0)
		return NULL;
	pattern = want_err && sp.err[0] != '\0' ? sp.err : sp.out;
	if (pattern[0] != '\0') {
		struct slurm_pattern_vars v = { .job_id = sp.job_id, .array_job = sp.array_job,
		    .array_task = sp.array_task, .name = sp.name, .user = sp.user, .node = sp.node };
		path = slurm_expand_pattern(pattern, &v);
	}
	slurm_paths_free(&sp);
	return path;
}

int job_log_paths(struct conn *c, struct record_store *st, const char *job, char *paths[2],
    char **err)
{
	struct job_ref ref;
	struct conn_exec x;
	char *why = NULL, *cmd, nonce[SLURM_NONCE_LEN + 1];
	int rc = -1, i;

	paths[0] = paths[1] = NULL;
	if (job_ref_resolve(st, job, &ref, err) != 0)
		return -1;
	if (ref.rec != NULL) {
		rc = path_of_record(ref.rec, "main.out", &paths[0], err);
		if (rc == 0 && (rc = path_of_record(ref.rec, "main.err", &paths[1], err)) != 0) {
			free(paths[0]);
			paths[0] = NULL;
		}
		job_ref_free(&ref);
		return rc;
	}
	/* Both paths from one answer of the queue. */
	slurm_nonce(nonce);
	cmd = slurm_paths_command(job, nonce);
	conn_exec_init(&x, cmd);
	x.timeout_ms = SCONTROL_TIMEOUT_MS;
	if (conn_exec(c, &x, &why) != CONN_OK) {
		*err = xasprintf("%s: %s", job, why);
	} else if (x.exit_status != 0 || x.out.data == NULL || x.out.data[0] == '\0') {
		*err = xasprintf("%s: SLURM no longer knows this job (it ended more than "
		    "MinJobAge ago); its log path is unknown", job);
	} else {
		for (i = 0; i < 2; i++)
			paths[i] = path_of_squeue(x.out.data, nonce, i);
		rc = 0;
	}
	free(why);
	conn_exec_free(&x);
	free(cmd);
	return rc;
}

int job_log_path(struct conn *c, struct record_store *st, const char *job, int want_err,
    char **path, char **err)
{
	char *paths[2];

	*path = NULL;
	if (job_log_paths(c, st, job, paths, err) != 0)
		return -1;
	*path = paths[want_err != 0];
	free(paths[want_err == 0]);
	if (*path == NULL) {
		*err = xasprintf("%s: SLURM reports no %s path", job, want_err ? "StdErr" : "StdOut");
		return -1;
	}
	return 0;
}

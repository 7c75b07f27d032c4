#include "engine/logpath.h"

#include <stdlib.h>
#include <string.h>

#include "engine/record.h"
#include "engine/slurm.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/xmalloc.h"

#define SCONTROL_TIMEOUT_MS	30000

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
	*path = xasprintf("%s/%s-%s/%s", r->log_dir, r->id, r->backend_ref, name);
	return 0;
}

/* The path SLURM would write StdOut/StdErr to, from one line of
 * `scontrol show job -o`. */
static char *path_of_scontrol(const char *line, int want_err)
{
	char *raw = slurm_scontrol_field(line, want_err ? "StdErr" : "StdOut");
	char *jid = slurm_scontrol_field(line, "JobId");
	char *ajob = slurm_scontrol_field(line, "ArrayJobId");
	char *atask = slurm_scontrol_field(line, "ArrayTaskId");
	char *jname = slurm_scontrol_field(line, "JobName");
	char *user = slurm_scontrol_field(line, "UserId");
	char *node = slurm_scontrol_field(line, "BatchHost");
	char *path = NULL;

	if (user != NULL)
		user[strcspn(user, "(")] = '\0';
	if (raw != NULL) {
		struct slurm_pattern_vars v = { .job_id = jid, .array_job = ajob,
		    .array_task = atask, .name = jname, .user = user, .node = node };
		path = slurm_expand_pattern(raw, &v);
	}
	free(raw), free(jid), free(ajob), free(atask), free(jname), free(user), free(node);
	return path;
}

int job_log_path(struct conn *c, struct record_store *st, const char *job, int want_err,
    char **path, char **err)
{
	const char *name = want_err ? "main.err" : "main.out";
	struct job_record *r = NULL;
	struct conn_exec x;
	char *why = NULL, *cmd, *q;
	int rc = -1;

	*path = NULL;
	if (store_load(st, job, &r, &why) == 0) {
		rc = path_of_record(r, name, path, err);
		record_free(r);
		return rc;
	}
	free(why);
	if (!slurm_id_ok(job)) {
		*err = xasprintf("%s is neither a taotop job id nor a SLURM job id", job);
		return -1;
	}
	q = sh_quote(job);
	cmd = xasprintf("scontrol show job -o %s", q);
	free(q);
	conn_exec_init(&x, cmd);
	x.timeout_ms = SCONTROL_TIMEOUT_MS;
	why = NULL;
	if (conn_exec(c, &x, &why) != CONN_OK) {
		*err = xasprintf("%s: %s", job, why);
	} else if (x.exit_status != 0) {
		*err = xasprintf("%s: SLURM no longer knows this job (it ended more than "
		    "MinJobAge ago); its log path is unknown", job);
	} else if ((*path = path_of_scontrol(x.out.data, want_err)) == NULL) {
		*err = xasprintf("%s: SLURM reports no %s path", job, want_err ? "StdErr" : "StdOut");
	} else {
		rc = 0;
	}
	free(why);
	conn_exec_free(&x);
	free(cmd);
	return rc;
}

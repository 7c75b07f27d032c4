#include "engine/track/usage_report.h"

#include <stdlib.h>
#include <string.h>

#include "engine/slurm/acctreport.h"
#include "engine/store/recindex.h"
#include "engine/store/report.h"
#include "engine/store/store.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

#define REPORT_TIMEOUT_MS	60000

int usage_report_gather(struct conn *c, struct record_store *st, const char *cluster,
    long since_s, struct report *r, char **err)
{
	char *cmd = acct_report_command(since_s), *why = NULL;
	struct acct_job *jobs = NULL;
	struct job_record **recs = NULL;
	struct rec_index *ix = recindex_of(st);
	struct conn_exec x;
	size_t n = 0, i;
	int rc = -1;

	conn_exec_init(&x, cmd);
	x.timeout_ms = REPORT_TIMEOUT_MS;
	x.out_cap = 64u << 20;	/* a busy user's month: a line a job */
	if (conn_exec(c, &x, &why) != CONN_OK) {
		*err = xasprintf("%s: accounting (sacct): %s", cluster, why);
		goto out;
	}
	if (x.exit_status != 0) {
		const char *said = x.out.data != NULL ? x.out.data : "";
		*err = xasprintf("%s: accounting (sacct) said: %.*s", cluster,
		    (int)strcspn(said, "\n"), said);
		goto out;
	}
	acct_report_parse(x.out.data, &jobs, &n);
	/* Only the records of the jobs accounting listed: found by their
	 * SLURM id in the index, read from disk, not every record there is. */
	recindex_refresh(ix, NULL);
	recs = xcalloc(n + 1, sizeof(*recs));
	for (i = 0; i < n; i++) {
		char *id = recindex_find_ref(ix, cluster, jobs[i].id), *lerr = NULL;
		if (id != NULL && store_load(st, id, &recs[i], &lerr) != 0)
			recs[i] = NULL;
		free(lerr);
		free(id);
	}
	report_add(r, cluster, jobs, n, recs);
	rc = 0;
out:
	for (i = 0; recs != NULL && i < n; i++)
		record_free(recs[i]);
	free(recs);
	free(jobs);
	conn_exec_free(&x);
	free(cmd), free(why);
	return rc;
}

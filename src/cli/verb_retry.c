/*
 * `taotop retry JOB`: a finished job submitted again from its staged
 * sbatch (engine/track/retry.h), on its record's cluster.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/session.h"
#include "cli/jobrow.h"
#include "cli/show.h"
#include "engine/store/store.h"
#include "engine/track/retry.h"

/* Where the retry's results go and what it resumes from, as its record
 * says (engine/track/retry.h). */
static void print_paths(struct session *s, const char *id)
{
	struct job_record *r = NULL;
	char *err = NULL;

	if (store_load(s->store, id, &r, &err) != 0) {
		free(err);
		return;
	}
	jobrow_print_resume(r);
	record_free(r);
}

int cli_retry(const struct cli_args *a)
{
	struct session s;
	const char *job = a->pos[0];
	char *new_id = NULL, *slurm_id = NULL, *err = NULL;
	int rc;

	if ((rc = session_open(&s, cli_val(a, "cluster"), job)) != EXIT_OK)
		return rc;
	/* A job that succeeded runs again only with --force: said, not done. */
	if (retry_job(s.conn, s.store, s.cl, job, "asked by the operator",
	    cli_val(a, "force") != NULL, &new_id, &slurm_id, &err) == 0) {
		printf("retried %s as %s, SLURM job %s (the staged sbatch, nothing staged again)\n",
		    job, new_id, slurm_id);
		print_paths(&s, new_id);
	} else {
		rc = session_say(EXIT_FAILED, err);
	}
	free(new_id), free(slurm_id);
	session_close(&s);
	return rc;
}

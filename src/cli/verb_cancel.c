/*
 * `taotop cancel JOB...`: each job on its own cluster (a record's says
 * where it runs, and scancel there is the only one that means it); one
 * connection per cluster in turn. A job that had already ended counts as
 * cancelled, as the seed says.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/session.h"
#include "cli/show.h"
#include "engine/track/tracker.h"

static int cancel_one(struct session *s, const char *job, const char *flag)
{
	const char *want;
	char *owned = NULL, *err = NULL, *msg = NULL;
	int rc;

	if (flag != NULL && config_cluster(&s->cfg, flag) == NULL)
		return session_unknown_cluster(s, flag, "--cluster");

	if (session_cluster_of(s, job, flag, &want, &owned, &err) != 0) {
		fprintf(stderr, "taotop: %s: nothing was cancelled\n", show_err(err));
		free(err);
		return EXIT_FAILED;
	}
	if ((rc = session_connect(s, want, NULL)) != EXIT_OK) {
		if (want != NULL)
			fprintf(stderr, "taotop: %s: not cancelled (its cluster '%s' could not be "
			    "reached)\n", show_err(job), show_err(want));
		free(owned);
		return rc;
	}
	free(owned);
	if (tracker_cancel(s->conn, s->store, s->cl, job, &msg, &err) == 0) {
		printf("%s: %s\n", show(job), show(msg));
	} else {
		fprintf(stderr, "taotop: %s: %s\n", show_err(job), show_err(err));
		rc = EXIT_FAILED;
	}
	free(msg);
	free(err);
	return rc;
}

int cli_cancel(const struct cli_args *a)
{
	struct session s;
	int rc, worst = EXIT_OK, k;

	if ((rc = session_begin(&s)) != EXIT_OK)
		return rc;
	for (k = 0; k < a->npos; k++)
		if ((rc = cancel_one(&s, a->pos[k], cli_val(a, "cluster"))) != EXIT_OK)
			worst = rc;
	session_close(&s);
	return worst;
}

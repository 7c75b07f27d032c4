/*
 * `taotop jobs`: every configured cluster (or --cluster's) polled side by
 * side, each on a thread of its own, and listed as one table or one JSON
 * array; a cluster that cannot be reached is said on stderr, the others
 * are listed.
 */
#include "cli/cli.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jobrow.h"
#include "cli/session.h"
#include "cli/show.h"
#include "engine/slurm/duration.h"
#include "engine/slurm/state.h"
#include "engine/track/tracker.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

/* One cluster's part: its own connection, tracker and poll, on a thread
 * of its own (a libssh session belongs to one thread). The record store
 * is shared: its lock serialises the writers, and each tracker writes
 * only its own cluster's records. */
struct cluster_poll {
	const struct cluster_cfg *cl;
	long			 since_s;	/* --since: accounting's window; 0: none */
	struct record_store	*store;
	pthread_t		 thread;
	struct poll_result	 res;
	int			 polled;	/* res is filled */
	int			 rc;		/* EXIT_* */
	char			*err;
};

static void *poll_cluster(void *arg)
{
	struct cluster_poll *p = arg;
	struct tracker *tr;
	struct conn *c;

	if ((c = session_dial(p->cl, &p->rc, &p->err)) == NULL)
		return NULL;
	tr = tracker_new(p->cl);
	if (p->since_s > 0)
		tracker_set_history(tr, p->since_s, p->since_s, (unsigned)p->cl->history_max);
	if (tracker_poll(tr, c, p->store, &p->res, &p->err) != 0) {
		p->rc = EXIT_FAILED;
	} else {
		p->polled = 1;
		p->rc = p->res.scheduler_ok ? EXIT_OK : EXIT_FAILED;
	}
	tracker_free(tr);
	conn_free(c);
	return NULL;
}

/* The first on this thread, the others each on their own. */
static void poll_all(struct cluster_poll *polls, size_t n)
{
	size_t k;

	for (k = 1; k < n; k++)
		if (pthread_create(&polls[k].thread, NULL, poll_cluster, &polls[k]) != 0)
			poll_cluster(&polls[k]), polls[k].thread = pthread_self();
	if (n > 0)
		poll_cluster(&polls[0]);
	for (k = 1; k < n; k++)
		if (!pthread_equal(polls[k].thread, pthread_self()))
			pthread_join(polls[k].thread, NULL);
}

/* TIME/LIMIT as wide as its longest cell (a day's limit never cut), and
 * the CLUSTER column only when there is more than one to tell apart. */
static void widths(const struct cluster_poll *polls, size_t n, int *cw, int *tw)
{
	size_t k, i;

	*cw = 0;
	*tw = 19;
	for (k = 0; k < n; k++) {
		for (i = 0; polls[k].polled && i < polls[k].res.n; i++) {
			char tl[64];
			jobrow_time(&polls[k].res.rows[i], tl, sizeof(tl));
			if ((int)strlen(tl) > *tw)
				*tw = (int)strlen(tl);
		}
		if (n > 1 && (int)strlen(polls[k].cl->name) > *cw)
			*cw = (int)strlen(polls[k].cl->name);
	}
	if (n > 1 && *cw < 7)
		*cw = 7;
}

static void print_row(const struct job_row *r, const char *cluster, int cw, int tw)
{
	char nxg[32], tl[64];

	jobrow_size(r, nxg, sizeof(nxg));
	jobrow_time(r, tl, sizeof(tl));
	if (cw > 0)
		printf("%-*s ", cw, cluster);
	printf("%-20s %-10s %-24.24s %-9.9s %-5s %-9s %-10.10s %-*s %s\n",
	    r->record_id ? r->record_id : "-",
	    show(r->shown_id[0] ? r->shown_id : (r->slurm_id[0] ? r->slurm_id : "-")),
	    show(r->name ? r->name : ""), show(r->partition ? r->partition : ""), nxg[0] ? nxg : "-",
	    tracker_row_label(r), show(r->native ? r->native : "-"), tw, show(tl),
	    show(r->message ? r->message : ""));
}

static void print_jobs(const struct cluster_poll *polls, size_t n)
{
	int cw, tw;
	size_t k, i;

	widths(polls, n, &cw, &tw);
	if (cw > 0)
		printf("%-*s ", cw, "CLUSTER");
	printf("%-20s %-10s %-24s %-9s %-5s %-9s %-10s %-*s %s\n", "ID", "SLURM", "NAME",
	    "PARTITION", "NxG", "STATE", "NATIVE", tw, "TIME/LIMIT", "NOTE");
	for (k = 0; k < n; k++)
		for (i = 0; polls[k].polled && i < polls[k].res.n; i++)
			print_row(&polls[k].res.rows[i], polls[k].cl->name, cw, tw);
}

static void print_json_array(const struct cluster_poll *polls, size_t n)
{
	cJSON *arr = cJSON_CreateArray();
	size_t k, i;

	for (k = 0; k < n; k++)
		for (i = 0; polls[k].polled && i < polls[k].res.n; i++)
			cJSON_AddItemToArray(arr, jobrow_json(&polls[k].res.rows[i], polls[k].cl->name));
	jobrow_print_json(arr);
}

/* Each cluster's failure or problem on stderr; the worst exit code. */
static int say_problems(const struct cluster_poll *polls, size_t n)
{
	int rc = EXIT_OK;
	size_t k;

	for (k = 0; k < n; k++) {
		if (polls[k].err != NULL)
			fprintf(stderr, "taotop: %s: %s\n", polls[k].cl->name, show_err(polls[k].err));
		else if (polls[k].polled && polls[k].res.problem != NULL)
			fprintf(stderr, "taotop: %s: %s\n", polls[k].cl->name,
			    show_err(polls[k].res.problem));
		if (polls[k].rc > rc)
			rc = polls[k].rc;
	}
	return rc;
}

int cli_jobs(const struct cli_args *a)
{
	struct session s;
	struct cluster_poll *polls;
	size_t n = 0, k;
	int rc;
	long since_s;

	if ((rc = session_begin_clusters(&s, a, NULL, &since_s, &n)) != EXIT_OK)
		return rc;
	polls = xcalloc(n > 0 ? n : 1, sizeof(*polls));
	for (k = 0; k < n; k++) {
		polls[k].cl = session_nth(&s, a, k);
		polls[k].store = s.store;
		polls[k].since_s = since_s;
	}
	poll_all(polls, n);
	rc = say_problems(polls, n);
	if (cli_val(a, "json") != NULL)
		print_json_array(polls, n);
	else
		print_jobs(polls, n);
	for (k = 0; k < n; k++) {
		if (polls[k].polled)
			poll_result_free(&polls[k].res);
		free(polls[k].err);
	}
	free(polls);
	session_close(&s);
	return rc;
}

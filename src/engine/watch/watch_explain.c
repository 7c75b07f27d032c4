/*
 * The explain request: why a pending job waits (engine/track/actions.h's
 * job_explain_pending), asked when the user opens it in the detail view,
 * never by a poll.
 */
#include "engine/watch/watch_priv.h"

#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/track/actions.h"
#include "engine/track/tracker.h"

void watch_run_explain(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct explain_req *r = &t->u.explain;

	if (r->card == 2) {
		/* A taotop job's card completed in its record; the detail
		 * reads the record again. */
		struct job_record *rec = NULL;
		if (store_load(t->w->store, r->job, &rec, &r->err) == 0)
			tracker_card_complete(c, t->w->store, t->w->cl[t->ci].pub.cfg, rec);
		record_free(rec);
		return;
	}
	if ((r->card ? job_card_lines(c, r->job, r->idle_pct, &r->lines, &r->n, &r->err)
	    : job_explain_pending(c, t->w->store, r->job, &r->lines, &r->n, &r->err)) != 0 &&
	    r->err == NULL)
		r->err = xstrdup("the scheduler did not say");
}

void watch_free_explain(struct task *t)
{
	struct explain_req *r = &t->u.explain;

	for (size_t i = 0; i < r->n; i++)
		free(r->lines[i]);
	free(r->lines);
	free(r->job);
	free(r->err);
}

void watch_done_explain(struct watch *w, struct cluster *cl, struct task *t)
{
	struct explain_req *r = &t->u.explain;
	struct watch_event *ev = watch_queue_push(&w->q, WATCH_EV_EXPLAIN, t->ci);

	(void)cl;
	ev->u.explain.job = r->job;
	r->job = NULL;
	if (r->card == 2 && r->err == NULL && t->wt.status == CONN_OK) {
		/* Neither lines nor an error: the record holds the answer. */
	} else if (r->lines != NULL && r->err == NULL) {
		ev->u.explain.lines = r->lines;
		ev->u.explain.n = r->n;
		r->lines = NULL;
		r->n = 0;
	} else {
		ev->u.explain.err = r->err != NULL ? r->err : xstrdup(watch_task_why(t));
		r->err = NULL;
	}
}

static void ask(struct watch *w, size_t cluster, const char *job, int card)
{
	struct task *t;

	if (cluster >= w->n)
		return;
	t = watch_task_new(w, cluster, T_EXPLAIN);
	t->u.explain.job = xstrdup(job);
	t->u.explain.card = card;
	t->u.explain.idle_pct = w->cl[cluster].pub.cfg->idle_percent;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

void watch_explain(struct watch *w, size_t cluster, const char *job)
{
	ask(w, cluster, job, 0);
}

void watch_card(struct watch *w, size_t cluster, const char *slurm_id)
{
	ask(w, cluster, slurm_id, 1);
}

void watch_card_record(struct watch *w, size_t cluster, const char *record_id)
{
	ask(w, cluster, record_id, 2);
}

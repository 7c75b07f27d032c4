/*
 * The cancel request: one per cluster, its outcomes one per job.
 */
#include "engine/watch/watch_priv.h"


#include "engine/config/config.h"

void watch_run_cancel(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct cancel_req *r = &t->u.cancel;
	struct cluster *cl = &t->w->cl[t->ci];
	size_t i;

	r->outs = xcalloc(r->n, sizeof(*r->outs));
	for (i = 0; i < r->n; i++) {
		char *msg = NULL, *err = NULL;
		struct watch_outcome *o = &r->outs[i];
		o->cluster = xstrdup(cl->pub.cfg->name);
		o->job = xstrdup(r->jobs[i]);
		o->ok = tracker_cancel(c, t->w->store, cl->pub.cfg, r->jobs[i], &msg, &err) == 0;
		o->message = o->ok ? msg : err;
		free(o->ok ? err : msg);
	}
}

void watch_free_cancel(struct task *t)
{
	struct cancel_req *r = &t->u.cancel;

	if (r->outs != NULL)
		watch_outcomes_free(r->outs, r->n);
	watch_strv_free(r->jobs, r->n);
}

void watch_done_cancel(struct watch *w, struct cluster *cl, struct task *t)
{
	struct cancel_req *r = &t->u.cancel;
	struct watch_event *ev = watch_queue_push(&w->q, WATCH_EV_OUTCOMES, t->ci);
	size_t i;

	if (r->outs == NULL) {
		/* It never ran (not connected): say so for each job. */
		r->outs = xcalloc(r->n, sizeof(*r->outs));
		for (i = 0; i < r->n; i++) {
			r->outs[i].cluster = xstrdup(cl->pub.cfg->name);
			r->outs[i].job = xstrdup(r->jobs[i]);
			r->outs[i].message = xstrdup(watch_task_why(t));
		}
	}
	ev->u.outcomes.v = r->outs;
	ev->u.outcomes.n = r->n;
	r->outs = NULL;
	watch_poll_soon(cl);
}

void watch_cancel(struct watch *w, size_t cluster, char *const *jobs, size_t n)
{
	struct task *t;

	if (cluster >= w->n || n == 0)
		return;
	t = watch_task_new(w, cluster, T_CANCEL);
	t->u.cancel.jobs = watch_strv_dup(jobs, n);
	t->u.cancel.n = n;
	worker_submit(w->cl[cluster].worker, &t->wt);
}


/*
 * The retry request: a finished job submitted again from what it staged.
 */
#include "engine/watch/watch_priv.h"


#include "engine/track/retry.h"

void watch_run_retry(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct retry_req *r = &t->u.retry;
	struct cluster *cl = &t->w->cl[t->ci];
	char *slurm_id = NULL, *err = NULL;

	if (retry_job(c, t->w->store, cl->pub.cfg, r->job, "asked from the monitor", 1,
	    &r->new_id, &slurm_id, &err) == 0)
		r->message = xasprintf("%s retried as %s, SLURM job %s", r->job, r->new_id,
		    slurm_id);
	else
		r->message = xasprintf("retry of %s: %s", r->job, err ? err : "failed");
	free(slurm_id);
	free(err);
}

void watch_free_retry(struct task *t)
{
	free(t->u.retry.job);
	free(t->u.retry.new_id);
	free(t->u.retry.message);
}

void watch_done_retry(struct watch *w, struct cluster *cl, struct task *t)
{
	struct retry_req *r = &t->u.retry;
	struct watch_event *ev = watch_queue_push(&w->q, WATCH_EV_RETRY, t->ci);

	ev->u.retry.job = xstrdup(r->job);
	ev->u.retry.new_id = r->new_id;
	ev->u.retry.message = r->message ? r->message : xasprintf("retry of %s: %s", r->job,
	    watch_task_why(t));
	r->new_id = r->message = NULL;
	watch_poll_soon(cl);
}

void watch_retry(struct watch *w, size_t cluster, const char *job)
{
	struct task *t;

	if (cluster >= w->n)
		return;
	t = watch_task_new(w, cluster, T_RETRY);
	t->u.retry.job = xstrdup(job);
	worker_submit(w->cl[cluster].worker, &t->wt);
}

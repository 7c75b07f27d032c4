/*
 * The action request: the actions menu's requeue, hold, release, signal
 * and time limit.
 */
#include "engine/watch/watch_priv.h"


#include "engine/track/actions.h"

void watch_run_action(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct action_req *r = &t->u.action;
	char *answer = NULL, *err = NULL;

	r->ok = job_action_run(c, t->w->store, r->job, (enum job_action)r->action, r->arg,
	    &answer, &err) == 0;
	r->message = r->ok ? answer : err;
	free(r->ok ? err : answer);
}

void watch_free_action(struct task *t)
{
	free(t->u.action.job);
	free(t->u.action.arg);
	free(t->u.action.message);
}

void watch_done_action(struct watch *w, struct cluster *cl, struct task *t)
{
	struct action_req *r = &t->u.action;
	struct watch_event *ev = watch_queue_push(&w->q, WATCH_EV_ANSWER, t->ci);

	ev->u.answer.ok = r->message != NULL && r->ok;
	ev->u.answer.text = r->message ? r->message : xasprintf("%s: %s", r->job, watch_task_why(t));
	r->message = NULL;
	watch_poll_soon(cl);
}

void watch_action(struct watch *w, size_t cluster, const char *job, int action, const char *arg)
{
	struct task *t;

	if (cluster >= w->n)
		return;
	t = watch_task_new(w, cluster, T_ACTION);
	t->u.action.job = xstrdup(job);
	t->u.action.action = action;
	t->u.action.arg = arg != NULL ? xstrdup(arg) : NULL;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

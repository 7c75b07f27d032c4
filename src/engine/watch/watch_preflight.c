/*
 * The preflight request: the first-run form's preflight of its cluster.
 */
#include "engine/watch/watch_priv.h"



void watch_run_preflight(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;

	if (preflight_run(c, t->w->cl[t->ci].pub.cfg, &t->u.preflight.p, &wt->err) != 0)
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
	else
		t->u.preflight.ran = 1;
}

void watch_free_preflight(struct task *t)
{
	if (t->u.preflight.ran)
		preflight_free(&t->u.preflight.p);
}

void watch_done_preflight(struct watch *w, struct cluster *cl, struct task *t)
{
	struct preflight_req *r = &t->u.preflight;
	struct watch_event *ev = watch_queue_push(&w->q, WATCH_EV_PREFLIGHT, t->ci);

	(void)cl;
	ev->u.preflight.ok = t->wt.status == CONN_OK && r->ran;
	if (ev->u.preflight.ok) {
		ev->u.preflight.p = r->p;
		r->ran = 0;
	} else {
		ev->u.preflight.err = xstrdup(watch_task_why(t));
	}
}

void watch_preflight(struct watch *w, size_t cluster)
{
	if (cluster < w->n)
		worker_submit(w->cl[cluster].worker, &watch_task_new(w, cluster, T_PREFLIGHT)->wt);
}

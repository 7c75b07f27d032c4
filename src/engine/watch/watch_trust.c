/*
 * The trust request (a refused host key accepted) and a server's question
 * answered.
 */
#include "engine/watch/watch_priv.h"



void watch_run_trust(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;

	wt->status = conn_trust_host(c, t->u.trust.host, t->u.trust.fp, &wt->err);
}

void watch_free_trust(struct task *t)
{
	free(t->u.trust.host);
	free(t->u.trust.fp);
}

void watch_done_trust(struct watch *w, struct cluster *cl, struct task *t)
{
	struct watched *p = &cl->pub;

	cl->trusting = 0;
	if (t->wt.status == CONN_OK) {
		p->link = LINK_CONNECTING;
		watch_set_str(&p->error, NULL);
		watch_set_str(&p->fingerprint, NULL);
		p->next_poll_ms = watch_now_ms();
	} else {
		watch_set_str(&p->error, t->wt.err);
	}
	watch_queue_push_state(&w->q, WATCH_EV_LINK, t->ci);
}

void watch_trust(struct watch *w, size_t cluster)
{
	struct cluster *cl;
	struct task *t;

	if (cluster >= w->n)
		return;
	cl = &w->cl[cluster];
	if (cl->pub.link != LINK_HOSTKEY_UNKNOWN || cl->trusting || cl->pub.host == NULL ||
	    cl->pub.fingerprint == NULL)
		return;
	t = watch_task_new(w, cluster, T_TRUST);
	t->wt.offline = 1;
	t->u.trust.host = xstrdup(cl->pub.host);
	t->u.trust.fp = xstrdup(cl->pub.fingerprint);
	cl->trusting = 1;
	worker_submit(cl->worker, &t->wt);
}

void watch_answer(struct watch *w, size_t cluster, struct buf *answers, size_t n)
{
	struct cluster *cl;

	if (cluster >= w->n)
		return;
	cl = &w->cl[cluster];
	worker_answer(cl->worker, answers, n);
	if (cl->pub.link == LINK_ASKING)
		cl->pub.link = LINK_CONNECTING;
	conn_challenge_free(cl->pub.ask);
	cl->pub.ask = NULL;
}

/*
 * The poll request: run on the worker, its answer taken on the UI thread
 * (rows, the schedule, a sampling round after it), how a poll comes sooner.
 */
#include "engine/watch/watch_priv.h"

#include <string.h>

#include "engine/config/config.h"
#include "util/log.h"

void watch_run_poll(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct cluster *cl = &t->w->cl[t->ci];
	char *err = NULL;

	if (t->u.poll.page > 0)
		tracker_set_page(cl->tracker, t->u.poll.page);	/* the tracker is ours */
	if (t->u.poll.disk) {
		tracker_rows_from_disk(cl->tracker, t->w->store, &t->u.poll.res);
		return;
	}
	if (t->u.poll.spare != NULL)
		tracker_reuse_rows(cl->tracker, t->u.poll.spare, t->u.poll.spare_cap);
	t->u.poll.spare = NULL;
	if (tracker_poll(cl->tracker, c, t->w->store, &t->u.poll.res, &err) != 0) {
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
		wt->err = err;
	}
}

void watch_free_poll(struct task *t)
{
	poll_result_free(&t->u.poll.res);
	free(t->u.poll.spare);	/* it never ran */
}

void watch_done_poll(struct watch *w, struct cluster *cl, struct task *t)
{
	struct watched *p = &cl->pub;
	int64_t now = watch_now_ms(), started_ms = p->poll_started_ms;
	int next_s;

	if (t->u.poll.disk) {
		/* Rows only: the link, its schedule and its errors are the
		 * polls'. Until the next poll the list is the records' (the
		 * cluster's jobs that are not taotop's come back with it). */
		poll_result_free(&p->last);
		p->last = t->u.poll.res;
		memset(&t->u.poll.res, 0, sizeof(t->u.poll.res));
		cl->page_asked = 0;
		watch_queue_push_state(&w->q, WATCH_EV_JOBS, t->ci);
		return;
	}
	p->poll_started_ms = 0;
	if (t->wt.status != CONN_OK) {
		log_msg(LOG_WARN, "monitor: %s: poll failed: %s", p->cfg->name,
		    t->wt.err ? t->wt.err : "?");
		watch_set_str(&p->error, t->wt.err);
		next_s = schedule_after_poll(&cl->sched, 0, 0, 1);
		p->next_poll_ms = watch_waits_for_user(p) ? 0 : now + next_s * 1000LL;
		watch_queue_push_state(&w->q, WATCH_EV_LINK, t->ci);
		return;
	}
	/* A poll that reconnected by itself (a dropped connection found when
	 * it ran, a new code asked meanwhile) has no WEV_CONNECTED: its
	 * success says the link is up. */
	if (p->link == LINK_CONNECTING || p->link == LINK_ASKING)
		p->link = LINK_UP;
	/* The rows array of the result it replaces goes to the next poll. */
	free(cl->spare);
	cl->spare = poll_result_take_rows(&p->last, &cl->spare_cap);
	p->last = t->u.poll.res;
	memset(&t->u.poll.res, 0, sizeof(t->u.poll.res));
	p->polls++;
	next_s = schedule_after_poll(&cl->sched, (unsigned)p->last.changes,
	    p->last.waiting_for_accounting, !p->last.scheduler_ok);
	p->next_poll_ms = now + next_s * 1000LL;
	log_msg(LOG_DEBUG, "monitor: %s: polled in %lld ms, %zu rows, next in %d s", p->cfg->name,
	    (long long)(now - started_ms), p->last.n, next_s);
	watch_queue_push_state(&w->q, WATCH_EV_JOBS, t->ci);
	watch_queue_push_state(&w->q, WATCH_EV_LINK, t->ci);
	watch_maybe_sample(w, t->ci, now);
}

/* After what the user did to a job: poll soon to show it. */
void watch_poll_soon(struct cluster *cl)
{
	schedule_user_action(&cl->sched);
	cl->pub.next_poll_ms = watch_now_ms();
}

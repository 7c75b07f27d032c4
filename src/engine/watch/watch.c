#include "engine/watch/watch_priv.h"


#include "engine/config/config.h"
#include "util/log.h"

int64_t watch_waiting_since(const struct watched *c)
{
	int64_t p = c->poll_started_ms, r = c->read_started_ms;

	return p == 0 ? r : r == 0 || p < r ? p : r;
}

int64_t watch_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- what requests own: lists of strings ------------------------------------------------- */

void watch_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

char **watch_strv_dup(char *const *v, size_t n)
{
	char **d = xcalloc(n, sizeof(*d));
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = xstrdup(v[i]);
	return d;
}

/* ---- clusters ------------------------------------------------------------------------------ */

struct watch *watch_new(const struct config *cfg, struct record_store *st)
{
	struct watch *w = xcalloc(1, sizeof(*w));
	int64_t now = watch_now_ms();
	size_t i;

	w->store = st;
	w->n = cfg->n;
	w->cl = xcalloc(cfg->n > 0 ? cfg->n : 1, sizeof(*w->cl));
	for (i = 0; i < cfg->n; i++) {
		struct cluster *cl = &w->cl[i];
		struct conn_target t;
		cl->pub.cfg = &cfg->clusters[i];
		cl->pub.link = LINK_CONNECTING;
		cl->pub.next_poll_ms = now;
		cl->tracker = tracker_new(cl->pub.cfg);
		/* Finished jobs from accounting, also of before this start. */
		tracker_set_history(cl->tracker, (long)cl->pub.cfg->history_days * 86400,
		    cl->pub.cfg->history_every_s, (unsigned)cl->pub.cfg->history_max);
		/* A year of records is a page of history, not every one. */
		cl->page = TRACKER_PAGE;
		tracker_set_page(cl->tracker, cl->page);
		/* The jobs on disk at once, from the records' index, before
		 * the link is up (here, before the worker that owns the
		 * tracker starts): the first poll's answers update them. */
		tracker_rows_from_disk(cl->tracker, st, &cl->pub.last);
		watch_queue_push_state(&w->q, WATCH_EV_JOBS, i);
		log_msg(LOG_DEBUG, "monitor: %s: %zu rows from the records on disk in %lld ms",
		    cl->pub.cfg->name, cl->pub.last.n, (long long)(watch_now_ms() - now));
		cl->use = use_tracker_new();
		cl->use_backoff = 1;
		schedule_init(&cl->sched, cl->pub.cfg->poll_s, POLL_MAX_S);
		cluster_target(cl->pub.cfg, &t);
		cl->worker = worker_start(&t, NULL);
	}
	return w;
}

static void leftover(struct worker_task *wt)
{
	watch_task_free((struct task *)wt);
}

void watch_free(struct watch *w)
{
	size_t i, k;

	if (w == NULL)
		return;
	/* No lent request goes to a worker from here on; those queued come
	 * back as leftovers, and the lender's threads then end. */
	watch_lend_close(w);
	/* Workers first: their tasks may point at followers. */
	for (i = 0; i < w->n; i++)
		worker_stop(w->cl[i].worker, leftover);
	watch_lend_stop(w);
	for (i = 0; i < w->n; i++) {
		struct watched *p = &w->cl[i].pub;
		tracker_free(w->cl[i].tracker);
		use_tracker_free(w->cl[i].use);
		for (k = 0; k < USE_ASKED; k++)
			free(w->cl[i].asked[k]);
		free(p->use);
		free(p->use_off);
		poll_result_free(&p->last);
		free(w->cl[i].spare);
		free(p->host);
		free(p->fingerprint);
		free(p->error);
		conn_challenge_free(p->ask);
	}
	for (i = 0; i < LOG_CACHED; i++)
		watch_follower_free(w->logs[i]);
	watch_queue_free(&w->q);
	free(w->cl);
	free(w);
}

size_t watch_count(const struct watch *w)
{
	return w->n;
}

const struct watched *watch_cluster(const struct watch *w, size_t i)
{
	return i < w->n ? &w->cl[i].pub : NULL;
}

size_t watch_fds(const struct watch *w, int *fds, size_t max)
{
	size_t i;

	for (i = 0; i < w->n && i < max; i++)
		fds[i] = worker_fd(w->cl[i].worker);
	return i;
}

int watch_waits_for_user(const struct watched *p)
{
	return p->link == LINK_HOSTKEY_UNKNOWN || p->link == LINK_HOSTKEY_CHANGED ||
	    p->link == LINK_AUTH_FAILED;
}

void watch_maybe_sample(struct watch *w, size_t ci, int64_t now);

/* A connection event of cluster ci's worker. */
static void on_event(struct watch *w, size_t ci, const struct worker_event *ev)
{
	struct watched *p = &w->cl[ci].pub;

	switch (ev->kind) {
	case WEV_CONNECTING:
		p->link = LINK_CONNECTING;
		break;
	case WEV_ASK:
		conn_challenge_free(p->ask);
		p->ask = ev->challenge;
		((struct worker_event *)ev)->challenge = NULL;	/* ours now */
		p->link = LINK_ASKING;
		watch_queue_push_state(&w->q, WATCH_EV_LINK, ci);
		watch_queue_push_state(&w->q, WATCH_EV_ASK, ci);
		return;
	case WEV_CONNECTED:
		conn_challenge_free(p->ask);
		p->ask = NULL;
		p->link = LINK_UP;
		watch_set_str(&p->host, ev->host);
		watch_set_str(&p->error, NULL);
		break;
	case WEV_HOSTKEY_REFUSED:
		p->link = ev->status == CONN_HOSTKEY_CHANGED ? LINK_HOSTKEY_CHANGED
		    : LINK_HOSTKEY_UNKNOWN;
		watch_set_str(&p->host, ev->host);
		watch_set_str(&p->fingerprint, ev->detail);
		watch_set_str(&p->error, ev->error);
		p->next_poll_ms = 0;
		watch_queue_push_state(&w->q, WATCH_EV_LINK, ci);
		watch_queue_push_state(&w->q, WATCH_EV_HOSTKEY, ci);
		return;
	case WEV_AUTH_FAILED:
		conn_challenge_free(p->ask);
		p->ask = NULL;
		p->link = LINK_AUTH_FAILED;
		watch_set_str(&p->error, ev->error);
		p->next_poll_ms = 0;
		break;
	case WEV_UNREACHABLE:
	case WEV_DISCONNECTED:
		if (ev->error != NULL)
			watch_set_str(&p->error, ev->error);
		break;
	case WEV_RECONNECTING:
		p->link = LINK_RECONNECTING;
		p->retry_at_ms = watch_now_ms() + ev->in_s * 1000LL;
		if (ev->error != NULL)
			watch_set_str(&p->error, ev->error);
		break;
	}
	watch_queue_push_state(&w->q, WATCH_EV_LINK, ci);
}

/* ---- the kinds of request ------------------------------------------------------------------ */

typedef void task_done_fn(struct watch *w, struct cluster *cl, struct task *t);

static const struct {
	worker_run_fn	*run;		/* on the worker thread */
	task_done_fn	*done;		/* back on the UI thread: queue what it says */
	void		(*free)(struct task *t);
} kinds[] = {
	[T_POLL] = { watch_run_poll, watch_done_poll, watch_free_poll },
	[T_FOLLOW] = { watch_run_follow, watch_done_follow, watch_free_follow },
	[T_CANCEL] = { watch_run_cancel, watch_done_cancel, watch_free_cancel },
	[T_TRUST] = { watch_run_trust, watch_done_trust, watch_free_trust },
	[T_FETCH] = { watch_run_fetch, watch_done_fetch, watch_free_fetch },
	[T_RETRY] = { watch_run_retry, watch_done_retry, watch_free_retry },
	[T_ACTION] = { watch_run_action, watch_done_action, watch_free_action },
	[T_SUBMIT] = { watch_run_submit, watch_done_submit, watch_free_submit },
	[T_SAMPLE] = { watch_run_sample, watch_done_sample, watch_free_sample },
	[T_PREFLIGHT] = { watch_run_preflight, watch_done_preflight, watch_free_preflight },
	[T_EXPLAIN] = { watch_run_explain, watch_done_explain, watch_free_explain },
	[T_REPORT] = { watch_run_report, watch_done_report, watch_free_report },
	[T_LEND] = { watch_run_lend, watch_done_lend, watch_free_lend },
};

struct task *watch_task_new(struct watch *w, size_t ci, enum task_kind kind)
{
	struct task *t = xcalloc(1, sizeof(*t));

	worker_task_init(&t->wt, kinds[kind].run, NULL);
	t->kind = kind;
	t->w = w;
	t->ci = ci;
	return t;
}

void watch_task_free(struct task *t)
{
	kinds[t->kind].free(t);
	free(t->wt.err);
	free(t);
}

void watch_dispatch(struct watch *w)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct worker_msg m;
		while (worker_next(w->cl[i].worker, &m)) {
			struct task *t = (struct task *)m.task;
			if (m.type == WMSG_EVENT) {
				on_event(w, i, &m.ev);
				worker_event_free(&m.ev);
			} else if (m.type == WMSG_NEWS) {
				watch_take_news(w, i, t->u.submit.sub);
			} else {
				kinds[t->kind].done(w, &w->cl[i], t);
				watch_task_free(t);
			}
		}
	}
}

int watch_next(struct watch *w, struct watch_event *ev)
{
	return watch_queue_next(&w->q, ev);
}

static int64_t earliest(int64_t a, int64_t b)
{
	if (a <= 0)
		return b;
	if (b <= 0)
		return a;
	return a < b ? a : b;
}

void watch_tick(struct watch *w, int64_t now_ms, int64_t *next_ms)
{
	int64_t next = -1;
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct cluster *cl = &w->cl[i];
		struct watched *p = &cl->pub;
		if (p->link == LINK_UP && p->polls > 0 && p->poll_started_ms == 0 && !p->submitting &&
		    p->cfg->use_s > 0 && p->use_off == NULL && !cl->use_busy) {
			if (now_ms >= cl->next_use_ms && p->next_poll_ms - now_ms >= USE_GAP_MS)
				watch_maybe_sample(w, i, now_ms);
			else if (now_ms < cl->next_use_ms)
				next = earliest(next, cl->next_use_ms);
		}
		if (p->poll_started_ms == 0 && p->next_poll_ms > 0 && now_ms >= p->next_poll_ms &&
		    !p->submitting) {
			struct task *t = watch_task_new(w, i, T_POLL);
			/* Every poll says the page: one that never ran
			 * (not connected) loses nothing. */
			t->u.poll.page = cl->page;
			cl->page_asked = 0;
			t->u.poll.spare = cl->spare;
			t->u.poll.spare_cap = cl->spare_cap;
			cl->spare = NULL;
			p->poll_started_ms = now_ms;
			p->next_poll_ms = 0;
			log_msg(LOG_DEBUG, "monitor: %s: poll", p->cfg->name);
			worker_submit(cl->worker, &t->wt);
			watch_queue_push_state(&w->q, WATCH_EV_LINK, i);
		}
		if (p->poll_started_ms == 0)
			next = earliest(next, p->next_poll_ms);
	}
	if (w->cur != NULL && w->cur->pub.reading_ms == 0) {
		struct follower *lf = w->cur;
		if (now_ms >= lf->next_ms) {
			struct task *t = watch_task_new(w, lf->pub.cluster, T_FOLLOW);
			t->u.follow.log = lf;
			lf->pub.reading_ms = now_ms;	/* a task reads it, since */
			if (w->cl[lf->pub.cluster].reads++ == 0)
				w->cl[lf->pub.cluster].pub.read_started_ms = now_ms;
			worker_submit(w->cl[lf->pub.cluster].worker, &t->wt);
		} else {
			next = earliest(next, lf->next_ms);
		}
	}
	*next_ms = next;
}

int watch_more_finished(struct watch *w, size_t cluster)
{
	struct cluster *cl;

	if (cluster >= w->n || w->cl[cluster].pub.last.finished_left == 0)
		return -1;
	cl = &w->cl[cluster];
	if (cl->pub.link != LINK_UP && cl->pub.poll_started_ms == 0) {
		/* No poll will run soon (connecting, reconnecting, a host
		 * key to answer): the next page comes from the disk alone,
		 * on the worker (the tracker is its), without connecting. */
		struct task *t;
		if (cl->page_asked)
			return 0;	/* one page at a time: it is on its way */
		t = watch_task_new(w, cluster, T_POLL);
		cl->page_asked = 1;
		cl->page += TRACKER_PAGE;
		t->u.poll.page = cl->page;
		t->u.poll.disk = 1;
		t->wt.local = 1;
		worker_submit(cl->worker, &t->wt);
		return 0;
	}
	if (!cl->page_asked)
		cl->page += TRACKER_PAGE;
	cl->page_asked = 1;
	watch_poll_soon(cl);
	return 0;
}

void watch_poll_now(struct watch *w)
{
	int64_t now = watch_now_ms();
	size_t i;

	for (i = 0; i < w->n; i++) {
		schedule_user_action(&w->cl[i].sched);
		if (w->cl[i].pub.link != LINK_HOSTKEY_CHANGED)
			w->cl[i].pub.next_poll_ms = now;
	}
}

void watch_user_active(struct watch *w)
{
	int64_t now = watch_now_ms();
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct cluster *cl = &w->cl[i];
		int64_t soon = now + (int64_t)schedule_user_action(&cl->sched) * 1000;
		if (cl->pub.next_poll_ms > soon)
			cl->pub.next_poll_ms = soon;
	}
}


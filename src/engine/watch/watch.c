#include "engine/watch/watch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/track/actions.h"
#include "engine/config/config.h"
#include "engine/logs/logpath.h"
#include "engine/logs/logtail.h"
#include "engine/config/preflight.h"
#include "engine/store/record.h"
#include "engine/track/retry.h"
#include "engine/track/schedule.h"
#include "engine/submit/spec.h"
#include "engine/submit/submit.h"
#include "engine/watch/watch_queue.h"
#include "ssh/conn.h"
#include "ssh/worker.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define POLL_MAX_S	60	/* the backoff's cap while nothing changes */
#define LOG_RING_LINES	5000	/* lines kept per followed log */
#define LOG_TAIL_LINES	1000	/* read back when a log is first shown */
#define LOG_CACHED	8	/* followers kept for switching back */
#define FOLLOW_MIN_MS	1000	/* follow ticks: 1 s while lines come, */
#define FOLLOW_MAX_MS	5000	/* backing off to 5 s while none do */
#define FETCH_MAX	(256u << 10)	/* of one fetched file */
#define USE_ASKED	8	/* the user's other jobs sampled on request */
#define USE_BACKOFF	8	/* failed rounds back off to 8 times the cadence */
#define USE_GAP_MS	2000	/* a round between polls only this far from the next */
#define USE_FIRST_S	5	/* the first round's answer read back after this */

/* A followed log with the reading state its worker task uses. */
struct follower {
	struct watch_log	 pub;
	struct log_follow	 f[2];
	int64_t			 next_ms;	/* next tick */
	int			 interval_ms;
	uint64_t		 used;		/* for evicting the least recently used */
};

struct cluster {
	struct watched		 pub;
	struct worker		*worker;
	struct tracker		*tracker;	/* the worker thread's */
	struct poll_schedule	 sched;
	int			 trusting;	/* a trust task runs */
	struct use_tracker	*use;		/* the worker thread's */
	int64_t			 next_use_ms;	/* the next sampling round, after a poll */
	int			 use_busy;	/* a round runs */
	int			 use_backoff;	/* 1, 2, 4...: failed rounds in a row */
	int			 reads;		/* followed-log reads in flight */
	size_t			 page;		/* finished jobs shown (tracker_set_page) */
	struct job_row		*spare;		/* the last result's rows array, for the next poll */
	size_t			 spare_cap;
	int			 page_asked;	/* grown since the last poll started */
	char			*asked[USE_ASKED];	/* other jobs sampled on request */
};

/* A submit handed to a worker: what it takes, the steps it reports (kept
 * under lock until the UI thread queues them) and its result. */
struct submit_job {
	struct spec		 spec;
	char			*bundle;
	struct spec_kv		*secrets;
	size_t			 nsecrets;
	struct submit_opts	 opts;
	struct worker		*worker;
	pthread_mutex_t		 lock;
	struct watch_step	*steps;
	size_t			 nsteps;
	struct submit_result	 res;
	char			*err;
	int			 rc;
};

struct watch {
	struct cluster		*cl;
	size_t			 n;
	struct record_store	*store;
	struct follower		*logs[LOG_CACHED];
	struct follower		*cur;
	uint64_t		 uses;
	uint64_t		 fetch_seq;	/* the newest fetch: older answers dropped */
	struct submit_job	*sub;		/* the submit running, or NULL */
	struct watch_queue	 q;		/* what the UI has not taken yet */
};

/* ---- requests ------------------------------------------------------------------------------ */

/* One kind of request to a worker: its own fields below, run on the worker
 * thread, done on the UI thread (where it queues its event), and what it
 * owns freed. A new kind is a value here, its struct in task.u, one row of
 * kinds[] and the three functions it names. */
enum task_kind { T_POLL, T_FOLLOW, T_CANCEL, T_TRUST, T_FETCH, T_RETRY, T_ACTION, T_SUBMIT,
	T_SAMPLE, T_PREFLIGHT };

struct poll_req {
	struct poll_result	 res;
	size_t			 page;		/* the tracker's page */
	struct job_row		*spare;		/* a rows array for it to fill, or NULL */
	size_t			 spare_cap;
};

struct follow_req {
	struct follower		*log;
	struct buf		 got[2];	/* lines come, main.out and main.err */
	char			*path[2];	/* found on the first read */
};

struct cancel_req {
	char			**jobs;
	size_t			 n;
	struct watch_outcome	*outs;		/* n of them, once it ran */
};

struct trust_req {
	char			*host, *fp;
};

struct fetch_req {
	char			**paths;
	size_t			 n;
	uint64_t		 seq;		/* watch.fetch_seq when asked */
	struct watch_file	*files;		/* n of them, once it ran */
};

struct retry_req {
	char			*job;
	char			*new_id, *message;
};

struct action_req {
	char			*job;
	int			 action;	/* enum job_action */
	char			*arg;		/* the signal or the time limit */
	int			 ok;
	char			*message;
};

struct submit_req {
	struct submit_job	*sub;
};

struct sample_req {
	struct use_job		*uj;		/* the jobs asked about (strings owned) */
	size_t			 nuj;
	struct use_limits	 lim;
	struct job_use		*use;		/* what came back */
	size_t			 nuse;
	struct use_event	*uev;
	size_t			 nuev;
	char			*off;		/* why it cannot work here */
	int			 first;		/* started the first round: no answer yet */
};

struct preflight_req {
	struct preflight	 p;
	int			 ran;		/* p holds its checks */
};

/* A request on a worker. The worker hands back the worker_task pointer,
 * which is the first member; kind says which member of u is its. */
struct task {
	struct worker_task	 wt;
	enum task_kind		 kind;
	struct watch		*w;
	size_t			 ci;
	union {
		struct poll_req		poll;
		struct follow_req	follow;
		struct cancel_req	cancel;
		struct trust_req	trust;
		struct fetch_req	fetch;
		struct retry_req	retry;
		struct action_req	action;
		struct submit_req	submit;
		struct sample_req	sample;
		struct preflight_req	preflight;
	} u;
};

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

static void set_str(char **field, const char *value)
{
	free(*field);
	*field = value != NULL ? xstrdup(value) : NULL;
}

/* Why a task failed, for its answer: the worker's sentence, or that it
 * never ran. */
static const char *task_why(const struct task *t)
{
	return t->wt.err != NULL ? t->wt.err : "not connected";
}

/* ---- tasks, on the worker threads --------------------------------------------------------- */

static void run_poll(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct cluster *cl = &t->w->cl[t->ci];
	char *err = NULL;

	if (t->u.poll.page > 0)
		tracker_set_page(cl->tracker, t->u.poll.page);	/* the tracker is ours */
	if (t->u.poll.spare != NULL)
		tracker_reuse_rows(cl->tracker, t->u.poll.spare, t->u.poll.spare_cap);
	t->u.poll.spare = NULL;
	if (tracker_poll(cl->tracker, c, t->w->store, &t->u.poll.res, &err) != 0) {
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
		wt->err = err;
	}
}

static void run_follow(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct follow_req *r = &t->u.follow;
	struct follower *lf = r->log;
	char *err = NULL;
	int i;

	if (lf->f[0].path == NULL || lf->f[1].path == NULL) {
		/* The first screen of both panes: the paths (from the record,
		 * or one question to the queue) and both tails in one command. */
		const char *paths[2];
		uint64_t end[2] = { 0, 0 };
		int missing[2] = { 0, 0 };

		if (job_log_paths(c, t->w->store, lf->pub.job, r->path, &err) != 0)
			goto fail;
		for (i = 0; i < 2; i++) {
			if (r->path[i] == NULL) {
				err = xasprintf("%s: SLURM reports no %s path", lf->pub.job,
				    i ? "StdErr" : "StdOut");
				goto fail;
			}
			paths[i] = r->path[i];
		}
		if (log_tails(c, paths, 2, LOG_TAIL_LINES, 1, r->got, end, missing, &err) != 0)
			goto fail;
		for (i = 0; i < 2; i++) {
			log_follow_free(&lf->f[i]);
			log_follow_init(&lf->f[i], paths[i], missing[i] ? 0 : end[i]);
		}
		return;
	}
	/* Both panes' follow tick: one round trip. */
	if (log_follow_ticks(lf->f, 2, c, r->got, &err) != 0)
		goto fail;
	return;
fail:
	wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
	wt->err = err;
}

static void run_cancel(struct conn *c, struct worker_task *wt)
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

static void run_trust(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;

	wt->status = conn_trust_host(c, t->u.trust.host, t->u.trust.fp, &wt->err);
}

static void run_fetch(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct fetch_req *r = &t->u.fetch;
	size_t i;

	r->files = xcalloc(r->n, sizeof(*r->files));
	for (i = 0; i < r->n; i++) {
		struct buf b;
		char *err = NULL;
		r->files[i].path = xstrdup(r->paths[i]);
		buf_init(&b);
		if (conn_read_at(c, r->paths[i], 0, FETCH_MAX, &b, &err) == CONN_OK) {
			if (b.data == NULL)
				buf_adds(&b, "");
			r->files[i].text = buf_detach(&b);
		} else {
			r->files[i].error = err ? err : xstrdup("could not be read");
			buf_free(&b);
		}
	}
}

static void run_retry(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct retry_req *r = &t->u.retry;
	struct cluster *cl = &t->w->cl[t->ci];
	char *slurm_id = NULL, *err = NULL;

	if (retry_job(c, t->w->store, cl->pub.cfg, r->job, "asked from the monitor",
	    &r->new_id, &slurm_id, &err) == 0)
		r->message = xasprintf("%s retried as %s, SLURM job %s", r->job, r->new_id,
		    slurm_id);
	else
		r->message = xasprintf("retry of %s: %s", r->job, err ? err : "failed");
	free(slurm_id);
	free(err);
}

static void run_action(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct action_req *r = &t->u.action;
	char *answer = NULL, *err = NULL;

	r->ok = job_action_run(c, t->w->store, r->job, (enum job_action)r->action, r->arg,
	    &answer, &err) == 0;
	r->message = r->ok ? answer : err;
	free(r->ok ? err : answer);
}

/* On the worker thread: a step's news, kept for the UI thread. */
static void submit_progress(enum submit_step step, int state, const char *detail, void *data)
{
	struct task *t = data;
	struct submit_job *sj = t->u.submit.sub;

	pthread_mutex_lock(&sj->lock);
	sj->steps = xreallocarray(sj->steps, sj->nsteps + 1, sizeof(*sj->steps));
	sj->steps[sj->nsteps].step = (int)step;
	sj->steps[sj->nsteps].state = state;
	sj->steps[sj->nsteps].detail = detail != NULL ? xstrdup(detail) : NULL;
	sj->nsteps++;
	pthread_mutex_unlock(&sj->lock);
	worker_news(sj->worker, &t->wt);
}

static void run_submit(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct submit_job *sj = t->u.submit.sub;

	sj->opts.cancel = &wt->cancel;
	sj->rc = submit_run(c, t->w->store, t->w->cl[t->ci].pub.cfg, &sj->opts, submit_progress, t,
	    &sj->res, &sj->err);
}

/* A sampling round: the remote command, the history and flags (the
 * tracker is this worker's), the flags noted in the records. */
static void run_sample(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct sample_req *s = &t->u.sample;
	struct cluster *cl = &t->w->cl[t->ci];
	struct use_round r;
	char *err = NULL;
	int have = 0;

	if (use_sample_behind(c, cl->use, s->uj, s->nuj, &r, &have, &err) != 0) {
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
		wt->err = err;
		return;
	}
	s->first = !have;
	if (!have) {
		return;
	} else if (r.unavailable != NULL) {
		s->off = r.unavailable;
		r.unavailable = NULL;
	} else {
		use_tracker_fold(cl->use, &r, s->uj, s->nuj, &s->lim, watch_now_ms(), &s->use,
		    &s->nuse, &s->uev, &s->nuev);
		use_note_events(t->w->store, s->uev, s->nuev);
	}
	use_round_free(&r);
}

static void run_preflight(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;

	if (preflight_run(c, t->w->cl[t->ci].pub.cfg, &t->u.preflight.p, &wt->err) != 0)
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
	else
		t->u.preflight.ran = 1;
}

/* ---- what each request owns ---------------------------------------------------------------- */

static void strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static char **strv_dup(char *const *v, size_t n)
{
	char **d = xcalloc(n, sizeof(*d));
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = xstrdup(v[i]);
	return d;
}

static void steps_free(struct watch_step *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].detail);
	free(s);
}

static void submit_job_free(struct submit_job *sj)
{
	size_t i;

	if (sj == NULL)
		return;
	spec_free(&sj->spec);
	free(sj->bundle);
	for (i = 0; i < sj->nsecrets; i++) {
		/* The typed values go no further than the sidecar. */
		mem_wipe(sj->secrets[i].value, strlen(sj->secrets[i].value));
		free(sj->secrets[i].key);
		free(sj->secrets[i].value);
	}
	free(sj->secrets);
	pthread_mutex_destroy(&sj->lock);
	steps_free(sj->steps, sj->nsteps);
	submit_result_free(&sj->res);
	free(sj->err);
	free(sj);
}

static void free_poll(struct task *t)
{
	poll_result_free(&t->u.poll.res);
	free(t->u.poll.spare);	/* it never ran */
}

static void free_follow(struct task *t)
{
	struct follow_req *r = &t->u.follow;

	buf_free(&r->got[0]);
	buf_free(&r->got[1]);
	free(r->path[0]);
	free(r->path[1]);
}

static void free_cancel(struct task *t)
{
	struct cancel_req *r = &t->u.cancel;

	if (r->outs != NULL)
		watch_outcomes_free(r->outs, r->n);
	strv_free(r->jobs, r->n);
}

static void free_trust(struct task *t)
{
	free(t->u.trust.host);
	free(t->u.trust.fp);
}

static void free_fetch(struct task *t)
{
	struct fetch_req *r = &t->u.fetch;

	if (r->files != NULL)
		watch_files_free(r->files, r->n);
	strv_free(r->paths, r->n);
}

static void free_retry(struct task *t)
{
	free(t->u.retry.job);
	free(t->u.retry.new_id);
	free(t->u.retry.message);
}

static void free_action(struct task *t)
{
	free(t->u.action.job);
	free(t->u.action.arg);
	free(t->u.action.message);
}

static void free_submit(struct task *t)
{
	submit_job_free(t->u.submit.sub);
}

static void free_sample(struct task *t)
{
	struct sample_req *s = &t->u.sample;
	size_t i;

	for (i = 0; i < s->nuj; i++) {
		free((char *)s->uj[i].slurm_id);
		free((char *)s->uj[i].record_id);
	}
	free(s->uj);
	free(s->use);
	use_events_free(s->uev, s->nuev);
	free(s->off);
}

static void free_preflight(struct task *t)
{
	if (t->u.preflight.ran)
		preflight_free(&t->u.preflight.p);
}

static struct task *task_new(struct watch *w, size_t ci, enum task_kind kind);
static void task_free(struct task *t);

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
		wq_push_state(&w->q, WATCH_EV_JOBS, i);
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
	task_free((struct task *)wt);
}

static void follower_free(struct follower *lf)
{
	int i;

	if (lf == NULL)
		return;
	for (i = 0; i < 2; i++) {
		log_ring_free(&lf->pub.ring[i]);
		log_follow_free(&lf->f[i]);
		free(lf->pub.path[i]);
	}
	free(lf->pub.job);
	free(lf->pub.error);
	free(lf);
}

void watch_free(struct watch *w)
{
	size_t i, k;

	if (w == NULL)
		return;
	/* Workers first: their tasks may point at followers. */
	for (i = 0; i < w->n; i++)
		worker_stop(w->cl[i].worker, leftover);
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
		follower_free(w->logs[i]);
	wq_free(&w->q);
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

static int waits_for_user(const struct watched *p)
{
	return p->link == LINK_HOSTKEY_UNKNOWN || p->link == LINK_HOSTKEY_CHANGED ||
	    p->link == LINK_AUTH_FAILED;
}

static void maybe_sample(struct watch *w, size_t ci, int64_t now);

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
		wq_push_state(&w->q, WATCH_EV_LINK, ci);
		wq_push_state(&w->q, WATCH_EV_ASK, ci);
		return;
	case WEV_CONNECTED:
		conn_challenge_free(p->ask);
		p->ask = NULL;
		p->link = LINK_UP;
		set_str(&p->host, ev->host);
		set_str(&p->error, NULL);
		break;
	case WEV_HOSTKEY_REFUSED:
		p->link = ev->status == CONN_HOSTKEY_CHANGED ? LINK_HOSTKEY_CHANGED
		    : LINK_HOSTKEY_UNKNOWN;
		set_str(&p->host, ev->host);
		set_str(&p->fingerprint, ev->detail);
		set_str(&p->error, ev->error);
		p->next_poll_ms = 0;
		wq_push_state(&w->q, WATCH_EV_LINK, ci);
		wq_push_state(&w->q, WATCH_EV_HOSTKEY, ci);
		return;
	case WEV_AUTH_FAILED:
		conn_challenge_free(p->ask);
		p->ask = NULL;
		p->link = LINK_AUTH_FAILED;
		set_str(&p->error, ev->error);
		p->next_poll_ms = 0;
		break;
	case WEV_UNREACHABLE:
	case WEV_DISCONNECTED:
		if (ev->error != NULL)
			set_str(&p->error, ev->error);
		break;
	case WEV_RECONNECTING:
		p->link = LINK_RECONNECTING;
		p->retry_at_ms = watch_now_ms() + ev->in_s * 1000LL;
		if (ev->error != NULL)
			set_str(&p->error, ev->error);
		break;
	}
	wq_push_state(&w->q, WATCH_EV_LINK, ci);
}

static void done_poll(struct watch *w, struct cluster *cl, struct task *t)
{
	struct watched *p = &cl->pub;
	int64_t now = watch_now_ms(), started_ms = p->poll_started_ms;
	int next_s;

	p->poll_started_ms = 0;
	if (t->wt.status != CONN_OK) {
		log_msg(LOG_WARN, "monitor: %s: poll failed: %s", p->cfg->name,
		    t->wt.err ? t->wt.err : "?");
		set_str(&p->error, t->wt.err);
		next_s = schedule_after_poll(&cl->sched, 0, 0, 1);
		p->next_poll_ms = waits_for_user(p) ? 0 : now + next_s * 1000LL;
		wq_push_state(&w->q, WATCH_EV_LINK, t->ci);
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
	wq_push_state(&w->q, WATCH_EV_JOBS, t->ci);
	wq_push_state(&w->q, WATCH_EV_LINK, t->ci);
	maybe_sample(w, t->ci, now);
}

static int asked_for(const struct cluster *cl, const char *id)
{
	size_t k;

	for (k = 0; k < USE_ASKED; k++)
		if (cl->asked[k] != NULL && strcmp(cl->asked[k], id) == 0)
			return 1;
	return 0;
}

/* When a round is due, right after a poll, or between polls when the next
 * is at least USE_GAP_MS away. The round's command only reads the last
 * round's answer and starts the next behind it on the login node
 * (engine/usage.h): it returns in a round trip, whatever the jobs' nodes
 * do, so it does not stand in a poll's way on the worker's queue. The jobs: taotop's running ones, and the others the
 * user asked about, from the latest poll. */
static void maybe_sample(struct watch *w, size_t ci, int64_t now)
{
	struct cluster *cl = &w->cl[ci];
	struct watched *p = &cl->pub;
	struct task *t;
	struct sample_req *s;
	size_t i, n = 0;

	if (p->cfg->use_s <= 0 || p->use_off != NULL || cl->use_busy || now < cl->next_use_ms)
		return;
	t = task_new(w, ci, T_SAMPLE);
	s = &t->u.sample;
	s->uj = xcalloc(p->last.n + 1, sizeof(*s->uj));
	for (i = 0; i < p->last.n; i++) {
		const struct job_row *r = &p->last.rows[i];
		if (r->state != TAO_RUNNING || !use_id_ok(r->slurm_id) ||
		    (r->native != NULL && strcmp(r->native, "RUNNING") != 0) ||
		    (r->record_id == NULL && !asked_for(cl, r->slurm_id)))
			continue;
		s->uj[n].slurm_id = xstrdup(r->slurm_id);
		s->uj[n].record_id = r->record_id != NULL ? xstrdup(r->record_id) : NULL;
		s->uj[n].nodes = r->nodes > 0 ? r->nodes : 1;
		s->uj[n].epoch = r->epoch;
		n++;
	}
	s->nuj = n;
	if (n == 0) {
		/* Nothing runs: forget what was; look again after a poll
		 * interval, not at every wake-up. */
		free(p->use);
		p->use = NULL;
		p->nuse = 0;
		cl->next_use_ms = now + (int64_t)p->cfg->poll_s * 1000;
		task_free(t);
		return;
	}
	s->lim.idle_percent = p->cfg->idle_percent;
	s->lim.idle_s = p->cfg->idle_s;
	s->lim.stall_s = p->cfg->stall_s;
	cl->use_busy = 1;
	log_msg(LOG_DEBUG, "monitor: %s: sampling %zu jobs", p->cfg->name, n);
	worker_submit(cl->worker, &t->wt);
}

static void done_sample(struct watch *w, struct cluster *cl, struct task *t)
{
	struct sample_req *s = &t->u.sample;
	struct watched *p = &cl->pub;
	int64_t now = watch_now_ms();
	size_t i;

	cl->use_busy = 0;
	if (t->wt.status != CONN_OK) {
		/* Like the poll: back off while it fails. */
		log_msg(LOG_WARN, "monitor: %s: sampling failed: %s", p->cfg->name,
		    t->wt.err ? t->wt.err : "?");
		if (cl->use_backoff < USE_BACKOFF)
			cl->use_backoff *= 2;
		cl->next_use_ms = now + (int64_t)p->cfg->use_s * cl->use_backoff * 1000;
		return;
	}
	cl->use_backoff = 1;
	cl->next_use_ms = now + (int64_t)p->cfg->use_s * 1000;
	if (s->first) {
		/* Its answer is read with the next round: soon, the first time. */
		if (p->cfg->use_s > USE_FIRST_S)
			cl->next_use_ms = now + USE_FIRST_S * 1000;
		return;
	}
	if (s->off != NULL) {
		/* Said once, never tried again on this cluster. */
		log_msg(LOG_WARN, "monitor: %s: GPU use not available: %s", p->cfg->name, s->off);
		p->use_off = s->off;
		s->off = NULL;
		free(p->use);
		p->use = NULL;
		p->nuse = 0;
		wq_push_state(&w->q, WATCH_EV_USE, t->ci);
		wq_push_state(&w->q, WATCH_EV_LINK, t->ci);
		return;
	}
	free(p->use);
	p->use = s->use;
	p->nuse = s->nuse;
	s->use = NULL;
	p->use_rounds++;
	/* The round first, then what it flagged: a flag's job is in it. */
	wq_push_state(&w->q, WATCH_EV_USE, t->ci);
	for (i = 0; i < s->nuev; i++) {
		struct watch_event *ev = wq_push(&w->q, WATCH_EV_FLAG, t->ci);
		ev->u.flag.job = xstrdup(s->uev[i].record_id ? s->uev[i].record_id
		    : s->uev[i].slurm_id);
		ev->u.flag.text = xstrdup(s->uev[i].text);
	}
}

static void done_follow(struct watch *w, struct cluster *cl, struct task *t)
{
	struct follow_req *r = &t->u.follow;
	struct follower *lf = r->log;
	int i, got = 0;

	lf->pub.reading_ms = 0;
	/* The worker runs tasks in turn: another read still queued starts now. */
	cl->pub.read_started_ms = --cl->reads > 0 ? watch_now_ms() : 0;
	for (i = 0; i < 2; i++) {
		if (r->path[i] != NULL) {
			free(lf->pub.path[i]);
			lf->pub.path[i] = r->path[i];
			r->path[i] = NULL;
		}
		if (lf->f[i].restarted) {
			/* The file shrank (rotated, a requeued job started
			 * over): what we hold is no longer its text. */
			log_ring_clear(&lf->pub.ring[i]);
			lf->f[i].restarted = 0;
			got = 1;
		}
		if (r->got[i].len > 0) {
			log_ring_push_lines(&lf->pub.ring[i], r->got[i].data, r->got[i].len);
			got = 1;
		}
	}
	if (t->wt.status == CONN_OK) {
		if (lf->pub.error != NULL || !lf->pub.loaded)
			got = 1;
		set_str(&lf->pub.error, NULL);
		lf->pub.loaded = 1;
		lf->pub.read_ms = watch_now_ms();
	} else if (lf->pub.error == NULL || strcmp(lf->pub.error, t->wt.err ? t->wt.err : "") != 0) {
		set_str(&lf->pub.error, t->wt.err ? t->wt.err : "the log could not be read");
		got = 1;
	}
	lf->interval_ms = got ? FOLLOW_MIN_MS : lf->interval_ms * 2;
	if (lf->interval_ms > FOLLOW_MAX_MS)
		lf->interval_ms = FOLLOW_MAX_MS;
	lf->next_ms = watch_now_ms() + lf->interval_ms;
	if (got)
		lf->pub.generation++;
	if (got && lf == w->cur)
		wq_push_state(&w->q, WATCH_EV_LOG, t->ci);
}

/* After what the user did to a job: poll soon to show it. */
static void poll_soon(struct cluster *cl)
{
	schedule_user_action(&cl->sched);
	cl->pub.next_poll_ms = watch_now_ms();
}

static void done_cancel(struct watch *w, struct cluster *cl, struct task *t)
{
	struct cancel_req *r = &t->u.cancel;
	struct watch_event *ev = wq_push(&w->q, WATCH_EV_OUTCOMES, t->ci);
	size_t i;

	if (r->outs == NULL) {
		/* It never ran (not connected): say so for each job. */
		r->outs = xcalloc(r->n, sizeof(*r->outs));
		for (i = 0; i < r->n; i++) {
			r->outs[i].cluster = xstrdup(cl->pub.cfg->name);
			r->outs[i].job = xstrdup(r->jobs[i]);
			r->outs[i].message = xstrdup(task_why(t));
		}
	}
	ev->u.outcomes.v = r->outs;
	ev->u.outcomes.n = r->n;
	r->outs = NULL;
	poll_soon(cl);
}

static void done_trust(struct watch *w, struct cluster *cl, struct task *t)
{
	struct watched *p = &cl->pub;

	cl->trusting = 0;
	if (t->wt.status == CONN_OK) {
		p->link = LINK_CONNECTING;
		set_str(&p->error, NULL);
		set_str(&p->fingerprint, NULL);
		p->next_poll_ms = watch_now_ms();
	} else {
		set_str(&p->error, t->wt.err);
	}
	wq_push_state(&w->q, WATCH_EV_LINK, t->ci);
}

static void done_fetch(struct watch *w, struct cluster *cl, struct task *t)
{
	struct fetch_req *r = &t->u.fetch;
	struct watch_event *ev;
	size_t i;

	(void)cl;
	if (r->seq != w->fetch_seq)
		return;		/* a newer fetch was asked: this one is moot */
	if (t->wt.status != CONN_OK) {
		/* Never ran: say so for each file. */
		if (r->files != NULL)
			watch_files_free(r->files, r->n);
		r->files = xcalloc(r->n, sizeof(*r->files));
		for (i = 0; i < r->n; i++) {
			r->files[i].path = xstrdup(r->paths[i]);
			r->files[i].error = xstrdup(task_why(t));
		}
	}
	ev = wq_push(&w->q, WATCH_EV_FILES, t->ci);
	ev->u.files.v = r->files;
	ev->u.files.n = r->n;
	r->files = NULL;
}

static void done_retry(struct watch *w, struct cluster *cl, struct task *t)
{
	struct retry_req *r = &t->u.retry;
	struct watch_event *ev = wq_push(&w->q, WATCH_EV_RETRY, t->ci);

	ev->u.retry.job = xstrdup(r->job);
	ev->u.retry.new_id = r->new_id;
	ev->u.retry.message = r->message ? r->message : xasprintf("retry of %s: %s", r->job,
	    task_why(t));
	r->new_id = r->message = NULL;
	poll_soon(cl);
}

static void done_action(struct watch *w, struct cluster *cl, struct task *t)
{
	struct action_req *r = &t->u.action;
	struct watch_event *ev = wq_push(&w->q, WATCH_EV_ANSWER, t->ci);

	ev->u.answer.ok = r->message != NULL && r->ok;
	ev->u.answer.text = r->message ? r->message : xasprintf("%s: %s", r->job, task_why(t));
	r->message = NULL;
	poll_soon(cl);
}

/* A submit's steps, moved from its job to the queue, one event each. */
static void take_news(struct watch *w, size_t ci, struct submit_job *sj)
{
	struct watch_step *steps;
	size_t n, i;

	pthread_mutex_lock(&sj->lock);
	steps = sj->steps;
	n = sj->nsteps;
	sj->steps = NULL;
	sj->nsteps = 0;
	pthread_mutex_unlock(&sj->lock);
	for (i = 0; i < n; i++)
		wq_push(&w->q, WATCH_EV_STEP, ci)->u.step = steps[i];
	free(steps);
}

static void done_submit(struct watch *w, struct cluster *cl, struct task *t)
{
	struct submit_job *sj = t->u.submit.sub;
	struct watch_event *ev;
	int ok = t->wt.status == CONN_OK && sj->rc == 0;

	take_news(w, t->ci, sj);
	w->sub = NULL;
	cl->pub.submitting = 0;
	ev = wq_push(&w->q, WATCH_EV_SUBMITTED, t->ci);
	ev->u.submitted.ok = ok;
	ev->u.submitted.res = sj->res;
	memset(&sj->res, 0, sizeof(sj->res));
	ev->u.submitted.err = sj->err != NULL ? sj->err : ok ? NULL : xstrdup(task_why(t));
	sj->err = NULL;
	/* Show the new job at once; polls waited while it ran. */
	poll_soon(cl);
	wq_push_state(&w->q, WATCH_EV_LINK, t->ci);
}

static void done_preflight(struct watch *w, struct cluster *cl, struct task *t)
{
	struct preflight_req *r = &t->u.preflight;
	struct watch_event *ev = wq_push(&w->q, WATCH_EV_PREFLIGHT, t->ci);

	(void)cl;
	ev->u.preflight.ok = t->wt.status == CONN_OK && r->ran;
	if (ev->u.preflight.ok) {
		ev->u.preflight.p = r->p;
		r->ran = 0;
	} else {
		ev->u.preflight.err = xstrdup(task_why(t));
	}
}

/* ---- the kinds of request ------------------------------------------------------------------ */

typedef void task_done_fn(struct watch *w, struct cluster *cl, struct task *t);

static const struct {
	worker_run_fn	*run;		/* on the worker thread */
	task_done_fn	*done;		/* back on the UI thread: queue what it says */
	void		(*free)(struct task *t);
} kinds[] = {
	[T_POLL] = { run_poll, done_poll, free_poll },
	[T_FOLLOW] = { run_follow, done_follow, free_follow },
	[T_CANCEL] = { run_cancel, done_cancel, free_cancel },
	[T_TRUST] = { run_trust, done_trust, free_trust },
	[T_FETCH] = { run_fetch, done_fetch, free_fetch },
	[T_RETRY] = { run_retry, done_retry, free_retry },
	[T_ACTION] = { run_action, done_action, free_action },
	[T_SUBMIT] = { run_submit, done_submit, free_submit },
	[T_SAMPLE] = { run_sample, done_sample, free_sample },
	[T_PREFLIGHT] = { run_preflight, done_preflight, free_preflight },
};

static struct task *task_new(struct watch *w, size_t ci, enum task_kind kind)
{
	struct task *t = xcalloc(1, sizeof(*t));

	worker_task_init(&t->wt, kinds[kind].run, NULL);
	t->kind = kind;
	t->w = w;
	t->ci = ci;
	return t;
}

static void task_free(struct task *t)
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
				take_news(w, i, t->u.submit.sub);
			} else {
				kinds[t->kind].done(w, &w->cl[i], t);
				task_free(t);
			}
		}
	}
}

int watch_next(struct watch *w, struct watch_event *ev)
{
	return wq_next(&w->q, ev);
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
				maybe_sample(w, i, now_ms);
			else if (now_ms < cl->next_use_ms)
				next = earliest(next, cl->next_use_ms);
		}
		if (p->poll_started_ms == 0 && p->next_poll_ms > 0 && now_ms >= p->next_poll_ms &&
		    !p->submitting) {
			struct task *t = task_new(w, i, T_POLL);
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
			wq_push_state(&w->q, WATCH_EV_LINK, i);
		}
		if (p->poll_started_ms == 0)
			next = earliest(next, p->next_poll_ms);
	}
	if (w->cur != NULL && w->cur->pub.reading_ms == 0) {
		struct follower *lf = w->cur;
		if (now_ms >= lf->next_ms) {
			struct task *t = task_new(w, lf->pub.cluster, T_FOLLOW);
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
	if (!cl->page_asked)
		cl->page += TRACKER_PAGE;
	cl->page_asked = 1;
	poll_soon(cl);
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

struct watch_log *watch_follow(struct watch *w, size_t cluster, const char *job)
{
	struct follower *lf = NULL;
	size_t i, slot = LOG_CACHED;

	if (job == NULL || cluster >= w->n) {
		w->cur = NULL;
		return NULL;
	}
	for (i = 0; i < LOG_CACHED && lf == NULL; i++)
		if (w->logs[i] != NULL && w->logs[i]->pub.cluster == cluster &&
		    strcmp(w->logs[i]->pub.job, job) == 0)
			lf = w->logs[i];
	if (lf == NULL) {
		/* A free slot, else the least recently used idle one. */
		for (i = 0; i < LOG_CACHED; i++) {
			if (w->logs[i] == NULL) {
				slot = i;
				break;
			}
			if (w->logs[i]->pub.reading_ms == 0 && (slot == LOG_CACHED ||
			    w->logs[i]->used < w->logs[slot]->used))
				slot = i;
		}
		if (slot == LOG_CACHED)
			return w->cur != NULL ? &w->cur->pub : NULL;	/* all busy: rare */
		follower_free(w->logs[slot]);
		lf = xcalloc(1, sizeof(*lf));
		lf->pub.cluster = cluster;
		lf->pub.job = xstrdup(job);
		log_ring_init(&lf->pub.ring[0], LOG_RING_LINES);
		log_ring_init(&lf->pub.ring[1], LOG_RING_LINES);
		w->logs[slot] = lf;
	}
	lf->used = ++w->uses;
	lf->interval_ms = FOLLOW_MIN_MS;
	lf->next_ms = 0;	/* read now: switching back catches up at once */
	w->cur = lf;
	return &lf->pub;
}

void watch_cancel(struct watch *w, size_t cluster, char *const *jobs, size_t n)
{
	struct task *t;

	if (cluster >= w->n || n == 0)
		return;
	t = task_new(w, cluster, T_CANCEL);
	t->u.cancel.jobs = strv_dup(jobs, n);
	t->u.cancel.n = n;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

void watch_outcomes_free(struct watch_outcome *o, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(o[i].cluster);
		free(o[i].job);
		free(o[i].message);
	}
	free(o);
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
	t = task_new(w, cluster, T_TRUST);
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

void watch_fetch(struct watch *w, size_t cluster, char *const *paths, size_t n)
{
	struct task *t;

	if (cluster >= w->n || n == 0)
		return;
	t = task_new(w, cluster, T_FETCH);
	t->u.fetch.paths = strv_dup(paths, n);
	t->u.fetch.n = n;
	t->u.fetch.seq = ++w->fetch_seq;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

void watch_files_free(struct watch_file *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(f[i].path);
		free(f[i].text);
		free(f[i].error);
	}
	free(f);
}

void watch_retry(struct watch *w, size_t cluster, const char *job)
{
	struct task *t;

	if (cluster >= w->n)
		return;
	t = task_new(w, cluster, T_RETRY);
	t->u.retry.job = xstrdup(job);
	worker_submit(w->cl[cluster].worker, &t->wt);
}

void watch_action(struct watch *w, size_t cluster, const char *job, int action, const char *arg)
{
	struct task *t;

	if (cluster >= w->n)
		return;
	t = task_new(w, cluster, T_ACTION);
	t->u.action.job = xstrdup(job);
	t->u.action.action = action;
	t->u.action.arg = arg != NULL ? xstrdup(arg) : NULL;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

int watch_submit(struct watch *w, size_t cluster, struct spec *spec, const char *bundle,
    struct spec_kv *secrets, size_t nsecrets, int dry_run)
{
	struct submit_job *sj;
	struct task *t;

	if (w->sub != NULL || cluster >= w->n)
		return -1;
	sj = xcalloc(1, sizeof(*sj));
	sj->spec = *spec;
	memset(spec, 0, sizeof(*spec));
	sj->bundle = bundle != NULL ? xstrdup(bundle) : NULL;
	sj->secrets = secrets;
	sj->nsecrets = nsecrets;
	sj->worker = w->cl[cluster].worker;
	pthread_mutex_init(&sj->lock, NULL);
	sj->opts.spec_path = sj->bundle;
	sj->opts.spec = &sj->spec;
	sj->opts.secrets = sj->secrets;
	sj->opts.nsecrets = sj->nsecrets;
	sj->opts.gpus = sj->opts.nodes = -1;
	sj->opts.time_hours = -1;
	/* What the form shows is what the user asked for, as flags are: the
	 * environment does not override a value typed there. */
	sj->opts.partition = sj->spec.partition;
	sj->opts.account = sj->spec.account;
	sj->opts.dry_run = dry_run;
	t = task_new(w, cluster, T_SUBMIT);
	t->u.submit.sub = sj;
	w->sub = sj;
	w->cl[cluster].pub.submitting = 1;
	worker_submit(w->cl[cluster].worker, &t->wt);
	return 0;
}

int watch_submit_running(const struct watch *w)
{
	return w->sub != NULL;
}

const struct job_use *watch_use(const struct watch *w, size_t cluster, const char *slurm_id)
{
	const struct watched *p;
	size_t i;

	if (cluster >= w->n || slurm_id == NULL)
		return NULL;
	p = &w->cl[cluster].pub;
	for (i = 0; i < p->nuse; i++)
		if (strcmp(p->use[i].slurm_id, slurm_id) == 0)
			return &p->use[i];
	return NULL;
}

void watch_use_request(struct watch *w, size_t cluster, const char *slurm_id)
{
	struct cluster *cl;

	if (cluster >= w->n || !use_id_ok(slurm_id))
		return;
	cl = &w->cl[cluster];
	if (asked_for(cl, slurm_id))
		return;
	/* The newest few: the oldest makes room. */
	free(cl->asked[USE_ASKED - 1]);
	memmove(&cl->asked[1], &cl->asked[0], (USE_ASKED - 1) * sizeof(cl->asked[0]));
	cl->asked[0] = xstrdup(slurm_id);
	cl->next_use_ms = 0;	/* with the next poll */
}

void watch_preflight(struct watch *w, size_t cluster)
{
	if (cluster < w->n)
		worker_submit(w->cl[cluster].worker, &task_new(w, cluster, T_PREFLIGHT)->wt);
}

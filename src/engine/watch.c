#include "engine/watch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/actions.h"
#include "engine/config.h"
#include "engine/logpath.h"
#include "engine/logtail.h"
#include "engine/record.h"
#include "engine/retry.h"
#include "engine/schedule.h"
#include "engine/spec.h"
#include "engine/submit.h"
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
	int			 busy;		/* a task is reading it */
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
	char			*asked[USE_ASKED];	/* other jobs sampled on request */
};

/* A submit handed to a worker: what it takes, the steps it reports (kept
 * under lock until the UI thread takes them) and its result. */
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
	struct watch_outcome	*outs;
	size_t			 nouts;
	struct watch_file	*files;
	size_t			 nfiles;
	uint64_t		 fetch_seq;	/* the newest fetch: older answers dropped */
	struct watch_retry	 retry;
	int			 have_retry;
	char			*answer;	/* the last action's */
	int			 answer_ok;
	struct submit_job	*sub;		/* the submit running, or NULL */
	struct watch_step	*steps;		/* its steps not yet taken */
	size_t			 nsteps;
	int			 sub_done;	/* finished: res/err wait to be taken */
	int			 sub_ok;
	struct submit_result	 sub_res;
	char			*sub_err;
	struct watch_flag	*flags;		/* raised, not yet taken */
	size_t			 nflags;
};

enum task_kind { T_POLL, T_FOLLOW, T_CANCEL, T_TRUST, T_FETCH, T_RETRY, T_ACTION, T_SUBMIT,
	T_SAMPLE };

/* A request on a worker. The worker hands back the worker_task pointer,
 * which is the first member. */
struct task {
	struct worker_task	 wt;
	enum task_kind		 kind;
	struct watch		*w;
	size_t			 ci;
	/* T_POLL */
	struct poll_result	 res;
	int64_t			 started_ms;
	/* T_FOLLOW */
	struct follower		*log;
	struct buf		 got[2];
	char			*path[2];
	/* T_CANCEL */
	char			**jobs;
	size_t			 njobs;
	struct watch_outcome	*outs;
	/* T_TRUST */
	char			*host, *fp;
	/* T_FETCH (jobs: the paths), T_RETRY (jobs[0]) */
	struct watch_file	*files;
	uint64_t		 seq;
	char			*new_id, *message;
	/* T_ACTION (jobs[0], host: its argument) */
	int			 action, action_ok;
	/* T_SUBMIT */
	struct submit_job	*sub;
	/* T_SAMPLE: the jobs asked about (strings owned), what came back */
	struct use_job		*uj;
	size_t			 nuj;
	struct use_limits	 lim;
	struct job_use		*use;
	size_t			 nuse;
	struct use_event	*uev;
	size_t			 nuev;
	char			*use_off;
	int			 use_first;	/* started the first round: no answer yet */
};

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

/* ---- tasks, on the worker threads --------------------------------------------------------- */

static void run_poll(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct cluster *cl = &t->w->cl[t->ci];
	char *err = NULL;

	if (tracker_poll(cl->tracker, c, t->w->store, &t->res, &err) != 0) {
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
		wt->err = err;
	}
}

static void run_follow(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct follower *lf = t->log;
	char *err = NULL;
	int i;

	if (lf->f[0].path == NULL || lf->f[1].path == NULL) {
		/* The first screen of both panes: the paths (from the record,
		 * or one question to the queue) and both tails in one command. */
		const char *paths[2];
		uint64_t end[2] = { 0, 0 };
		int missing[2] = { 0, 0 };

		if (job_log_paths(c, t->w->store, lf->pub.job, t->path, &err) != 0)
			goto fail;
		for (i = 0; i < 2; i++) {
			if (t->path[i] == NULL) {
				err = xasprintf("%s: SLURM reports no %s path", lf->pub.job,
				    i ? "StdErr" : "StdOut");
				goto fail;
			}
			paths[i] = t->path[i];
		}
		if (log_tails(c, paths, 2, LOG_TAIL_LINES, 1, t->got, end, missing, &err) != 0)
			goto fail;
		for (i = 0; i < 2; i++) {
			log_follow_free(&lf->f[i]);
			log_follow_init(&lf->f[i], paths[i], missing[i] ? 0 : end[i]);
		}
		return;
	}
	for (i = 0; i < 2; i++)
		if (log_follow_tick(&lf->f[i], c, &t->got[i], &err) != 0)
			goto fail;
	return;
fail:
	wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
	wt->err = err;
}

static void run_cancel(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct cluster *cl = &t->w->cl[t->ci];
	size_t i;

	t->outs = xcalloc(t->njobs, sizeof(*t->outs));
	for (i = 0; i < t->njobs; i++) {
		char *msg = NULL, *err = NULL;
		struct watch_outcome *o = &t->outs[i];
		o->cluster = xstrdup(cl->pub.cfg->name);
		o->job = xstrdup(t->jobs[i]);
		o->ok = tracker_cancel(c, t->w->store, cl->pub.cfg, t->jobs[i], &msg, &err) == 0;
		o->message = o->ok ? msg : err;
		free(o->ok ? err : msg);
	}
}

static void run_trust(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;

	wt->status = conn_trust_host(c, t->host, t->fp, &wt->err);
}

static void run_fetch(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	size_t i;

	t->files = xcalloc(t->njobs, sizeof(*t->files));
	for (i = 0; i < t->njobs; i++) {
		struct buf b;
		char *err = NULL;
		t->files[i].path = xstrdup(t->jobs[i]);
		buf_init(&b);
		if (conn_read_at(c, t->jobs[i], 0, FETCH_MAX, &b, &err) == CONN_OK) {
			if (b.data == NULL)
				buf_adds(&b, "");
			t->files[i].text = buf_detach(&b);
		} else {
			t->files[i].error = err ? err : xstrdup("could not be read");
			buf_free(&b);
		}
	}
}

static void run_retry(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct cluster *cl = &t->w->cl[t->ci];
	char *slurm_id = NULL, *err = NULL;

	if (retry_job(c, t->w->store, cl->pub.cfg, t->jobs[0], "asked from the monitor",
	    &t->new_id, &slurm_id, &err) == 0)
		t->message = xasprintf("%s retried as %s, SLURM job %s", t->jobs[0], t->new_id,
		    slurm_id);
	else
		t->message = xasprintf("retry of %s: %s", t->jobs[0], err ? err : "failed");
	free(slurm_id);
	free(err);
}

static void run_action(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	char *answer = NULL, *err = NULL;

	t->action_ok = job_action_run(c, t->w->store, t->jobs[0], (enum job_action)t->action,
	    t->host, &answer, &err) == 0;
	t->message = t->action_ok ? answer : err;
	free(t->action_ok ? err : answer);
}

/* On the worker thread: a step's news, kept for the UI thread. */
static void submit_progress(enum submit_step step, int state, const char *detail, void *data)
{
	struct task *t = data;
	struct submit_job *sj = t->sub;

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
	struct submit_job *sj = t->sub;

	sj->opts.cancel = &wt->cancel;
	sj->rc = submit_run(c, t->w->store, t->w->cl[t->ci].pub.cfg, &sj->opts, submit_progress, t,
	    &sj->res, &sj->err);
}

/* A sampling round: the remote command, the history and flags (the
 * tracker is this worker's), the flags noted in the records. */
static void run_sample(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct cluster *cl = &t->w->cl[t->ci];
	struct use_round r;
	char *err = NULL;
	int have = 0;

	if (use_sample_behind(c, cl->use, t->uj, t->nuj, &r, &have, &err) != 0) {
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
		wt->err = err;
		return;
	}
	t->use_first = !have;
	if (!have) {
		return;
	} else if (r.unavailable != NULL) {
		t->use_off = r.unavailable;
		r.unavailable = NULL;
	} else {
		use_tracker_fold(cl->use, &r, t->uj, t->nuj, &t->lim, watch_now_ms(), &t->use,
		    &t->nuse, &t->uev, &t->nuev);
		use_note_events(t->w->store, t->uev, t->nuev);
	}
	use_round_free(&r);
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
	watch_steps_free(sj->steps, sj->nsteps);
	submit_result_free(&sj->res);
	free(sj->err);
	free(sj);
}

static struct task *task_new(struct watch *w, size_t ci, enum task_kind kind)
{
	static worker_run_fn *const run[] = {
		[T_POLL] = run_poll, [T_FOLLOW] = run_follow,
		[T_CANCEL] = run_cancel, [T_TRUST] = run_trust,
		[T_FETCH] = run_fetch, [T_RETRY] = run_retry, [T_ACTION] = run_action,
		[T_SUBMIT] = run_submit, [T_SAMPLE] = run_sample,
	};
	struct task *t = xcalloc(1, sizeof(*t));

	worker_task_init(&t->wt, run[kind], NULL);
	t->kind = kind;
	t->w = w;
	t->ci = ci;
	buf_init(&t->got[0]);
	buf_init(&t->got[1]);
	return t;
}

/* A task carrying n strings (job ids, or paths to fetch). */
static struct task *task_with(struct watch *w, size_t ci, enum task_kind kind,
    const char *const *strs, size_t n)
{
	struct task *t = task_new(w, ci, kind);
	size_t i;

	t->jobs = xcalloc(n, sizeof(*t->jobs));
	for (i = 0; i < n; i++)
		t->jobs[i] = xstrdup(strs[i]);
	t->njobs = n;
	return t;
}

static void task_free(struct task *t)
{
	size_t i;

	poll_result_free(&t->res);
	buf_free(&t->got[0]);
	buf_free(&t->got[1]);
	free(t->path[0]);
	free(t->path[1]);
	for (i = 0; i < t->njobs; i++)
		free(t->jobs[i]);
	free(t->jobs);
	if (t->outs != NULL)
		watch_outcomes_free(t->outs, t->njobs);
	free(t->host);
	free(t->fp);
	if (t->files != NULL)
		watch_files_free(t->files, t->njobs);
	free(t->new_id);
	free(t->message);
	submit_job_free(t->sub);
	for (i = 0; i < t->nuj; i++) {
		free((char *)t->uj[i].slurm_id);
		free((char *)t->uj[i].record_id);
	}
	free(t->uj);
	free(t->use);
	use_events_free(t->uev, t->nuev);
	free(t->use_off);
	free(t->wt.err);
	free(t);
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
		tracker_set_page(cl->tracker, TRACKER_PAGE);
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
		free(p->host);
		free(p->fingerprint);
		free(p->error);
		conn_challenge_free(p->ask);
	}
	for (i = 0; i < LOG_CACHED; i++)
		follower_free(w->logs[i]);
	watch_outcomes_free(w->outs, w->nouts);
	watch_files_free(w->files, w->nfiles);
	if (w->have_retry)
		watch_retry_free(&w->retry);
	free(w->answer);
	watch_steps_free(w->steps, w->nsteps);
	submit_result_free(&w->sub_res);
	free(w->sub_err);
	watch_flags_free(w->flags, w->nflags);
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

static unsigned on_event(struct cluster *cl, const struct worker_event *ev)
{
	struct watched *p = &cl->pub;

	switch (ev->kind) {
	case WEV_CONNECTING:
		p->link = LINK_CONNECTING;
		break;
	case WEV_ASK:
		conn_challenge_free(p->ask);
		p->ask = ev->challenge;
		((struct worker_event *)ev)->challenge = NULL;	/* ours now */
		p->link = LINK_ASKING;
		return WATCH_LINK | WATCH_ASK;
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
		return WATCH_LINK | WATCH_HOSTKEY;
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
	return WATCH_LINK;
}

static unsigned poll_done(struct cluster *cl, struct task *t)
{
	struct watched *p = &cl->pub;
	int64_t now = watch_now_ms();
	int next_s;

	t->started_ms = p->poll_started_ms;
	p->poll_started_ms = 0;
	if (t->wt.status != CONN_OK) {
		log_msg(LOG_WARN, "monitor: %s: poll failed: %s", p->cfg->name,
		    t->wt.err ? t->wt.err : "?");
		set_str(&p->error, t->wt.err);
		next_s = schedule_after_poll(&cl->sched, 0, 0, 1);
		p->next_poll_ms = waits_for_user(p) ? 0 : now + next_s * 1000LL;
		return WATCH_LINK;
	}
	/* A poll that reconnected by itself (a dropped connection found when
	 * it ran, a new code asked meanwhile) has no WEV_CONNECTED: its
	 * success says the link is up. */
	if (p->link == LINK_CONNECTING || p->link == LINK_ASKING)
		p->link = LINK_UP;
	poll_result_free(&p->last);
	p->last = t->res;
	memset(&t->res, 0, sizeof(t->res));
	p->polls++;
	next_s = schedule_after_poll(&cl->sched, (unsigned)p->last.changes,
	    p->last.waiting_for_accounting, !p->last.scheduler_ok);
	p->next_poll_ms = now + next_s * 1000LL;
	log_msg(LOG_DEBUG, "monitor: %s: polled in %lld ms, %zu rows, next in %d s", p->cfg->name,
	    (long long)(now - (t->started_ms)), p->last.n, next_s);
	return WATCH_JOBS | WATCH_LINK;
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
	size_t i, n = 0;

	if (p->cfg->use_s <= 0 || p->use_off != NULL || cl->use_busy || now < cl->next_use_ms)
		return;
	t = task_new(w, ci, T_SAMPLE);
	t->uj = xcalloc(p->last.n + 1, sizeof(*t->uj));
	for (i = 0; i < p->last.n; i++) {
		const struct job_row *r = &p->last.rows[i];
		if (r->state != TAO_RUNNING || !use_id_ok(r->slurm_id) ||
		    (r->native != NULL && strcmp(r->native, "RUNNING") != 0) ||
		    (r->record_id == NULL && !asked_for(cl, r->slurm_id)))
			continue;
		t->uj[n].slurm_id = xstrdup(r->slurm_id);
		t->uj[n].record_id = r->record_id != NULL ? xstrdup(r->record_id) : NULL;
		t->uj[n].nodes = r->nodes > 0 ? r->nodes : 1;
		t->uj[n].epoch = r->epoch;
		n++;
	}
	t->nuj = n;
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
	t->lim.idle_percent = p->cfg->idle_percent;
	t->lim.idle_s = p->cfg->idle_s;
	t->lim.stall_s = p->cfg->stall_s;
	cl->use_busy = 1;
	log_msg(LOG_DEBUG, "monitor: %s: sampling %zu jobs", p->cfg->name, n);
	worker_submit(cl->worker, &t->wt);
}

static unsigned sample_done(struct watch *w, struct cluster *cl, struct task *t)
{
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
		return 0;
	}
	cl->use_backoff = 1;
	cl->next_use_ms = now + (int64_t)p->cfg->use_s * 1000;
	if (t->use_first) {
		/* Its answer is read with the next round: soon, the first time. */
		if (p->cfg->use_s > USE_FIRST_S)
			cl->next_use_ms = now + USE_FIRST_S * 1000;
		return 0;
	}
	if (t->use_off != NULL) {
		/* Said once, never tried again on this cluster. */
		log_msg(LOG_WARN, "monitor: %s: GPU use not available: %s", p->cfg->name, t->use_off);
		p->use_off = t->use_off;
		t->use_off = NULL;
		free(p->use);
		p->use = NULL;
		p->nuse = 0;
		return WATCH_USE | WATCH_LINK;
	}
	free(p->use);
	p->use = t->use;
	p->nuse = t->nuse;
	t->use = NULL;
	p->use_rounds++;
	if (t->nuev > 0) {
		w->flags = xreallocarray(w->flags, w->nflags + t->nuev, sizeof(*w->flags));
		for (i = 0; i < t->nuev; i++) {
			struct watch_flag *f = &w->flags[w->nflags++];
			f->cluster = t->ci;
			f->job = xstrdup(t->uev[i].record_id ? t->uev[i].record_id : t->uev[i].slurm_id);
			f->text = xstrdup(t->uev[i].text);
		}
	}
	return WATCH_USE;
}

static unsigned follow_done(struct watch *w, struct task *t)
{
	struct follower *lf = t->log;
	int i, got = 0;

	lf->busy = 0;
	for (i = 0; i < 2; i++) {
		if (t->path[i] != NULL) {
			free(lf->pub.path[i]);
			lf->pub.path[i] = t->path[i];
			t->path[i] = NULL;
		}
		if (lf->f[i].restarted) {
			/* The file shrank (rotated, a requeued job started
			 * over): what we hold is no longer its text. */
			log_ring_clear(&lf->pub.ring[i]);
			lf->f[i].restarted = 0;
			got = 1;
		}
		if (t->got[i].len > 0) {
			log_ring_push_lines(&lf->pub.ring[i], t->got[i].data, t->got[i].len);
			got = 1;
		}
	}
	if (t->wt.status == CONN_OK) {
		if (lf->pub.error != NULL || !lf->pub.loaded)
			got = 1;
		set_str(&lf->pub.error, NULL);
		lf->pub.loaded = 1;
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
	return got && lf == w->cur ? WATCH_LOG : 0;
}

static unsigned cancel_done(struct watch *w, struct cluster *cl, struct task *t)
{
	size_t i;

	w->outs = xreallocarray(w->outs, w->nouts + t->njobs, sizeof(*w->outs));
	for (i = 0; i < t->njobs; i++) {
		struct watch_outcome *o = &w->outs[w->nouts++];
		if (t->outs != NULL) {
			*o = t->outs[i];
			continue;
		}
		/* It never ran (not connected): say so for each job. */
		o->cluster = xstrdup(cl->pub.cfg->name);
		o->job = xstrdup(t->jobs[i]);
		o->ok = 0;
		o->message = xstrdup(t->wt.err ? t->wt.err : "not connected");
	}
	free(t->outs);
	t->outs = NULL;
	schedule_user_action(&cl->sched);
	cl->pub.next_poll_ms = watch_now_ms();
	return WATCH_CANCEL;
}

static unsigned trust_done(struct cluster *cl, struct task *t)
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
	return WATCH_LINK;
}

/* A submit's steps, moved from its job to what the UI takes. */
static unsigned take_news(struct watch *w, struct submit_job *sj)
{
	size_t n;

	pthread_mutex_lock(&sj->lock);
	n = sj->nsteps;
	if (n > 0) {
		w->steps = xreallocarray(w->steps, w->nsteps + n, sizeof(*w->steps));
		memcpy(&w->steps[w->nsteps], sj->steps, n * sizeof(*sj->steps));
		w->nsteps += n;
		free(sj->steps);
		sj->steps = NULL;
		sj->nsteps = 0;
	}
	pthread_mutex_unlock(&sj->lock);
	return n > 0 ? WATCH_SUBMIT : 0;
}

static unsigned submit_done(struct watch *w, struct cluster *cl, struct task *t)
{
	struct submit_job *sj = t->sub;

	take_news(w, sj);
	w->sub = NULL;
	cl->pub.submitting = 0;
	submit_result_free(&w->sub_res);
	free(w->sub_err);
	w->sub_done = 1;
	w->sub_ok = t->wt.status == CONN_OK && sj->rc == 0;
	w->sub_res = sj->res;
	memset(&sj->res, 0, sizeof(sj->res));
	w->sub_err = sj->err != NULL ? sj->err : w->sub_ok ? NULL
	    : xstrdup(t->wt.err ? t->wt.err : "not connected");
	sj->err = NULL;
	/* Show the new job at once; polls waited while it ran. */
	schedule_user_action(&cl->sched);
	cl->pub.next_poll_ms = watch_now_ms();
	return WATCH_SUBMIT | WATCH_LINK;
}

unsigned watch_dispatch(struct watch *w)
{
	unsigned bits = 0;
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct cluster *cl = &w->cl[i];
		struct worker_msg m;
		while (worker_next(cl->worker, &m)) {
			struct task *t;
			if (m.type == WMSG_EVENT) {
				bits |= on_event(cl, &m.ev);
				worker_event_free(&m.ev);
				continue;
			}
			t = (struct task *)m.task;
			if (m.type == WMSG_NEWS) {
				bits |= take_news(w, t->sub);
				continue;
			}
			switch (t->kind) {
			case T_POLL:
				bits |= poll_done(cl, t);
				if (t->wt.status == CONN_OK)
					maybe_sample(w, i, watch_now_ms());
				break;
			case T_SAMPLE:
				bits |= sample_done(w, cl, t);
				break;
			case T_FOLLOW:
				bits |= follow_done(w, t);
				break;
			case T_CANCEL:
				bits |= cancel_done(w, cl, t);
				break;
			case T_TRUST:
				bits |= trust_done(cl, t);
				break;
			case T_FETCH:
				if (t->seq == w->fetch_seq) {
					watch_files_free(w->files, w->nfiles);
					w->files = t->files;
					w->nfiles = t->njobs;
					t->files = NULL;
					if (t->wt.status != CONN_OK) {
						/* Never ran: say so for each file. */
						size_t k;
						w->files = xcalloc(t->njobs, sizeof(*w->files));
						for (k = 0; k < t->njobs; k++) {
							w->files[k].path = xstrdup(t->jobs[k]);
							w->files[k].error = xstrdup(t->wt.err ? t->wt.err
							    : "not connected");
						}
					}
					bits |= WATCH_FILES;
				}
				break;
			case T_ACTION:
				free(w->answer);
				w->answer = t->message ? t->message : xasprintf("%s: %s", t->jobs[0],
				    t->wt.err ? t->wt.err : "not connected");
				w->answer_ok = t->message != NULL && t->action_ok;
				t->message = NULL;
				schedule_user_action(&cl->sched);
				cl->pub.next_poll_ms = watch_now_ms();
				bits |= WATCH_ACTION;
				break;
			case T_SUBMIT:
				bits |= submit_done(w, cl, t);
				break;
			case T_RETRY:
				if (w->have_retry)
					watch_retry_free(&w->retry);
				w->retry.job = xstrdup(t->jobs[0]);
				w->retry.new_id = t->new_id;
				w->retry.message = t->message ? t->message : xasprintf("retry of %s: %s",
				    t->jobs[0], t->wt.err ? t->wt.err : "not connected");
				t->new_id = t->message = NULL;
				w->have_retry = 1;
				cl->pub.next_poll_ms = watch_now_ms();
				bits |= WATCH_RETRY;
				break;
			}
			task_free(t);
		}
	}
	return bits;
}

static int64_t earliest(int64_t a, int64_t b)
{
	if (a <= 0)
		return b;
	if (b <= 0)
		return a;
	return a < b ? a : b;
}

unsigned watch_tick(struct watch *w, int64_t now_ms, int64_t *next_ms)
{
	unsigned bits = 0;
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
			p->poll_started_ms = now_ms;
			p->next_poll_ms = 0;
			log_msg(LOG_DEBUG, "monitor: %s: poll", p->cfg->name);
			worker_submit(cl->worker, &t->wt);
			bits |= WATCH_LINK;
		}
		if (p->poll_started_ms == 0)
			next = earliest(next, p->next_poll_ms);
	}
	if (w->cur != NULL && !w->cur->busy) {
		struct follower *lf = w->cur;
		if (now_ms >= lf->next_ms) {
			struct task *t = task_new(w, lf->pub.cluster, T_FOLLOW);
			t->log = lf;
			lf->busy = 1;
			worker_submit(w->cl[lf->pub.cluster].worker, &t->wt);
		} else {
			next = earliest(next, lf->next_ms);
		}
	}
	*next_ms = next;
	return bits;
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
			if (!w->logs[i]->busy && (slot == LOG_CACHED ||
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
	t = task_with(w, cluster, T_CANCEL, (const char *const *)jobs, n);
	worker_submit(w->cl[cluster].worker, &t->wt);
}

size_t watch_take_outcomes(struct watch *w, struct watch_outcome **out)
{
	size_t n = w->nouts;

	*out = w->outs;
	w->outs = NULL;
	w->nouts = 0;
	return n;
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
	t->host = xstrdup(cl->pub.host);
	t->fp = xstrdup(cl->pub.fingerprint);
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
	t = task_with(w, cluster, T_FETCH, (const char *const *)paths, n);
	t->seq = ++w->fetch_seq;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

size_t watch_take_files(struct watch *w, struct watch_file **out)
{
	size_t n = w->nfiles;

	*out = w->files;
	w->files = NULL;
	w->nfiles = 0;
	return n;
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
	t = task_with(w, cluster, T_RETRY, &job, 1);
	worker_submit(w->cl[cluster].worker, &t->wt);
}

int watch_take_retry(struct watch *w, struct watch_retry *out)
{
	if (!w->have_retry)
		return 0;
	*out = w->retry;
	memset(&w->retry, 0, sizeof(w->retry));
	w->have_retry = 0;
	return 1;
}

void watch_retry_free(struct watch_retry *r)
{
	free(r->job);
	free(r->new_id);
	free(r->message);
	memset(r, 0, sizeof(*r));
}

void watch_action(struct watch *w, size_t cluster, const char *job, int action, const char *arg)
{
	struct task *t;

	if (cluster >= w->n)
		return;
	t = task_with(w, cluster, T_ACTION, &job, 1);
	t->action = action;
	t->host = arg != NULL ? xstrdup(arg) : NULL;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

char *watch_take_answer(struct watch *w, int *ok)
{
	char *a = w->answer;

	*ok = w->answer_ok;
	w->answer = NULL;
	return a;
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
	t->sub = sj;
	w->sub = sj;
	w->sub_done = 0;
	watch_steps_free(w->steps, w->nsteps);
	w->steps = NULL;
	w->nsteps = 0;
	w->cl[cluster].pub.submitting = 1;
	worker_submit(w->cl[cluster].worker, &t->wt);
	return 0;
}

int watch_submit_running(const struct watch *w)
{
	return w->sub != NULL;
}

size_t watch_take_steps(struct watch *w, struct watch_step **out)
{
	size_t n = w->nsteps;

	*out = w->steps;
	w->steps = NULL;
	w->nsteps = 0;
	return n;
}

void watch_steps_free(struct watch_step *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].detail);
	free(s);
}

int watch_take_submit(struct watch *w, struct submit_result *res, char **err)
{
	int ok;

	if (!w->sub_done)
		return -1;
	w->sub_done = 0;
	*res = w->sub_res;
	memset(&w->sub_res, 0, sizeof(w->sub_res));
	*err = w->sub_err;
	w->sub_err = NULL;
	ok = w->sub_ok;
	return ok;
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

size_t watch_take_flags(struct watch *w, struct watch_flag **out)
{
	size_t n = w->nflags;

	*out = w->flags;
	w->flags = NULL;
	w->nflags = 0;
	return n;
}

void watch_flags_free(struct watch_flag *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(f[i].job);
		free(f[i].text);
	}
	free(f);
}

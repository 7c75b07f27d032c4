/*
 * The watch's parts (watch.h is its interface): one module over several
 * files, as ssh/conn_priv.h does for the connection. watch.c holds the
 * clusters, the loop's side (dispatch, tick) and the kinds[] table; each
 * kind of request is one file, watch_KIND.c, with its run_ (on the worker
 * thread), done_ (on the UI thread: queues its event), free_ and its
 * asking function from watch.h.
 */
#ifndef TAOTOP_ENGINE_WATCH_PRIV_H
#define TAOTOP_ENGINE_WATCH_PRIV_H

#include <pthread.h>
#include <stdlib.h>

#include "engine/logs/logtail.h"
#include "engine/submit/spec.h"
#include "engine/submit/submit.h"
#include "engine/track/schedule.h"
#include "engine/watch/watch.h"
#include "engine/watch/watch_queue.h"
#include "ssh/worker.h"
#include "util/buf.h"
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
	/* Lending the clusters' sessions to the user's other taotop
	 * processes (watch_lend.c, ssh/lend.h): the lender, each cluster's
	 * target as lend_target_key() writes it, and the gate a lender's
	 * thread passes to hand a worker a request (closed before the
	 * workers stop). */
	struct lender		*lender;
	char			**lend_keys;
	pthread_mutex_t		 lend_lock;
	int			 lend_closed;
};

/* One kind of request to a worker: its own fields below, run on the worker
 * thread, done on the UI thread (where it queues its event), and what it
 * owns freed. A new kind is a value here, its struct in task.u, one row of
 * kinds[] (watch.c) and the three functions it names (its file,
 * watch_KIND.c; declared at the end of this header). */
enum task_kind { T_POLL, T_FOLLOW, T_CANCEL, T_TRUST, T_FETCH, T_RETRY, T_ACTION, T_SUBMIT,
	T_SAMPLE, T_PREFLIGHT, T_EXPLAIN, T_REPORT, T_LEND };

struct poll_req {
	struct poll_result	 res;
	size_t			 page;		/* the tracker's page */
	struct job_row		*spare;		/* a rows array for it to fill, or NULL */
	size_t			 spare_cap;
	int			 disk;		/* the page from the records on disk
						 * alone: no link, nothing asked */
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

struct explain_req {
	char			*job;
	int			 card;		/* a finished job's card, not why it waits */
	int			 idle_pct;
	char			**lines;	/* why it waits, once it ran */
	size_t			 n;
	char			*err;
};

struct report_req {
	long			 since_s;
	char			**lines;	/* the cluster's report, once it ran */
	size_t			 n;
	char			*err;
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

/* A lender's request (watch_lend.c) handed to a worker: shared by the
 * lender's thread, which waits, and the task; the last to let go frees
 * it. */
struct lend_call;

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
		struct explain_req	explain;
		struct report_req	report;
		struct lend_call	*lend;
	} u;
};

static inline void watch_set_str(char **field, const char *value)
{
	free(*field);
	*field = value != NULL ? xstrdup(value) : NULL;
}

/* Why a task failed, for its answer: the worker's sentence, or that it
 * never ran. */
static inline const char *watch_task_why(const struct task *t)
{
	return t->wt.err != NULL ? t->wt.err : "not connected";
}

/* watch.c */
void watch_strv_free(char **v, size_t n);
char **watch_strv_dup(char *const *v, size_t n);
int watch_waits_for_user(const struct watched *p);
struct task *watch_task_new(struct watch *w, size_t ci, enum task_kind kind);
void watch_task_free(struct task *t);

/* watch_poll.c */
void watch_poll_soon(struct cluster *cl);
void watch_run_poll(struct conn *c, struct worker_task *wt);
void watch_free_poll(struct task *t);
void watch_done_poll(struct watch *w, struct cluster *cl, struct task *t);

/* watch_follow.c */
void watch_follower_free(struct follower *lf);
void watch_run_follow(struct conn *c, struct worker_task *wt);
void watch_free_follow(struct task *t);
void watch_done_follow(struct watch *w, struct cluster *cl, struct task *t);

/* watch_cancel.c */
void watch_run_cancel(struct conn *c, struct worker_task *wt);
void watch_free_cancel(struct task *t);
void watch_done_cancel(struct watch *w, struct cluster *cl, struct task *t);

/* watch_trust.c */
void watch_run_trust(struct conn *c, struct worker_task *wt);
void watch_free_trust(struct task *t);
void watch_done_trust(struct watch *w, struct cluster *cl, struct task *t);

/* watch_fetch.c */
void watch_run_fetch(struct conn *c, struct worker_task *wt);
void watch_free_fetch(struct task *t);
void watch_done_fetch(struct watch *w, struct cluster *cl, struct task *t);

/* watch_retry.c */
void watch_run_retry(struct conn *c, struct worker_task *wt);
void watch_free_retry(struct task *t);
void watch_done_retry(struct watch *w, struct cluster *cl, struct task *t);

/* watch_action.c */
void watch_run_action(struct conn *c, struct worker_task *wt);
void watch_free_action(struct task *t);
void watch_done_action(struct watch *w, struct cluster *cl, struct task *t);

/* watch_explain.c */
void watch_run_explain(struct conn *c, struct worker_task *wt);
void watch_free_explain(struct task *t);
void watch_done_explain(struct watch *w, struct cluster *cl, struct task *t);

/* watch_report.c */
void watch_run_report(struct conn *c, struct worker_task *wt);
void watch_free_report(struct task *t);
void watch_done_report(struct watch *w, struct cluster *cl, struct task *t);

/* watch_lend.c */
void watch_lend_close(struct watch *w);
void watch_run_lend(struct conn *c, struct worker_task *wt);
void watch_free_lend(struct task *t);
void watch_done_lend(struct watch *w, struct cluster *cl, struct task *t);

/* watch_submit.c */
void watch_take_news(struct watch *w, size_t ci, struct submit_job *sj);
void watch_run_submit(struct conn *c, struct worker_task *wt);
void watch_free_submit(struct task *t);
void watch_done_submit(struct watch *w, struct cluster *cl, struct task *t);

/* watch_sample.c */
void watch_maybe_sample(struct watch *w, size_t ci, int64_t now);
void watch_run_sample(struct conn *c, struct worker_task *wt);
void watch_free_sample(struct task *t);
void watch_done_sample(struct watch *w, struct cluster *cl, struct task *t);

/* watch_preflight.c */
void watch_run_preflight(struct conn *c, struct worker_task *wt);
void watch_free_preflight(struct task *t);
void watch_done_preflight(struct watch *w, struct cluster *cl, struct task *t);

#endif

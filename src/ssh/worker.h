/*
 * A thread that owns one cluster's connection. Callers hand it tasks, which
 * run on that thread against the conn, and get back messages: finished tasks
 * and connection events. worker_fd() becomes readable whenever a message
 * waits, so a poll() loop (the UI's) can wait on it and never block on the
 * network itself.
 *
 * The worker connects as soon as it starts, reconnects after a drop with
 * exponential backoff (capped) trying the hosts in order, and probes an idle
 * connection with keepalives to find a dead peer. A task that arrives while
 * disconnected makes it try at once. A refused host key or failed
 * authentication is not retried by itself: it waits for the next task.
 *
 * A server's question while connecting (a one-time code) comes to the
 * caller as WEV_ASK; the worker waits, connection half made, until the
 * caller answers with worker_answer (or stops the worker). A reconnection
 * that needs a new code asks again the same way.
 */
#ifndef TAOTOP_SSH_WORKER_H
#define TAOTOP_SSH_WORKER_H

#include <stdatomic.h>

#include "ssh/conn.h"

struct worker_task;
typedef void worker_run_fn(struct conn *c, struct worker_task *t);

struct worker_task {
	/* set by the caller; the task stays the caller's */
	worker_run_fn		*run;	/* on the worker thread */
	void			*arg;
	int			 offline;	/* run without connecting first: for a task
						 * that makes the connection possible
						 * (trusting a host key) */
	int			 local;		/* run without the connection and leave
						 * it be: work of the thread's own (the
						 * records on disk); no reconnect after */
	atomic_int		 cancel;	/* set to cancel (see worker_cancel) */
	/* set by run */
	enum conn_status	 status;
	char			*err;		/* a sentence, or NULL; caller frees */
	/* the worker's */
	struct worker_task	*next;
};

enum worker_event_kind {
	WEV_CONNECTING,		/* host: the list being tried */
	WEV_CONNECTED,		/* host, detail: the server's banner */
	WEV_HOSTKEY_REFUSED,	/* host, detail: fingerprint, error: sentence */
	WEV_AUTH_FAILED,	/* host list, error */
	WEV_UNREACHABLE,	/* error */
	WEV_DISCONNECTED,	/* error: why */
	WEV_RECONNECTING,	/* in_s: seconds until the next try */
	WEV_ASK,		/* challenge: answer it with worker_answer */
};

struct worker_event {
	enum worker_event_kind	 kind;
	enum conn_status	 status;
	char			*host;
	char			*detail;
	char			*error;
	int			 in_s;
	struct conn_challenge	*challenge;	/* WEV_ASK */
};

struct worker_msg {
	enum { WMSG_DONE, WMSG_EVENT, WMSG_NEWS } type;
	struct worker_task	*task;	/* WMSG_DONE; WMSG_NEWS: still running, it
					 * has news for the caller (its own) */
	struct worker_event	 ev;	/* WMSG_EVENT: free with worker_event_free */
};

struct worker_opts {
	int	keepalive_s;	/* probe an idle connection this often; 0: 30 */
	int	backoff_max_s;	/* cap of the reconnect backoff; 0: 60 */
};

struct worker;

struct worker *worker_start(const struct conn_target *t, const struct worker_opts *o);
int worker_fd(const struct worker *w);
void worker_submit(struct worker *w, struct worker_task *t);
/* From a task's run, on the worker thread: wake the caller with WMSG_NEWS
 * for t (progress it keeps under its own lock). */
void worker_news(struct worker *w, struct worker_task *t);
/* Ask a queued or running task to stop; it still comes back as WMSG_DONE. */
void worker_cancel(struct worker *w, struct worker_task *t);
/* Answer the WEV_ASK waiting: n answers (the challenge's prompts), taken
 * and wiped from the caller's secret buffers; answers NULL declines. A
 * no-op when nothing waits. */
void worker_answer(struct worker *w, struct buf *answers, size_t n);
/* Pop one message; 1 if there was one. Call until it returns 0 each time
 * worker_fd is readable. */
int worker_next(struct worker *w, struct worker_msg *m);
void worker_event_free(struct worker_event *ev);
/* Stop the thread (cancelling the running task) and free the worker. Tasks
 * not yet returned come back to the caller through `leftover`, cancelled. */
void worker_stop(struct worker *w, void (*leftover)(struct worker_task *t));

/* Ready-made tasks. */
void worker_task_init(struct worker_task *t, worker_run_fn *run, void *arg);
/* arg: a struct conn_exec. */
void worker_run_exec(struct conn *c, struct worker_task *t);

/* Run one task and wait for it, for callers with nothing else to do (the
 * CLI verbs) and no other task in flight. Events meanwhile go to on_event
 * when it is not NULL. */
void worker_call(struct worker *w, struct worker_task *t,
    void (*on_event)(const struct worker_event *ev, void *data), void *data);

#endif

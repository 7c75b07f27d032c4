#include "util/compat.h"
#include "ssh/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/xmalloc.h"

/* An out-message waiting for the caller. */
struct msg_node {
	struct worker_msg	 m;
	struct msg_node		*next;
};

struct worker {
	struct conn		*conn;
	char			*hosts;
	int			 keepalive_s;
	int			 backoff_max_s;

	pthread_t		 thread;
	pthread_mutex_t		 lock;
	pthread_cond_t		 wake;
	int			 stopping;
	pthread_t		 watchdog;	/* ends SFTP requests nobody answers */
	pthread_cond_t		 dog_wake;	/* for stopping it */

	/* in: tasks, in order */
	struct worker_task	*todo_head, *todo_tail;
	struct worker_task	*running;
	/* out: messages, in order, and the pipe that signals them */
	struct msg_node		*out_head, *out_tail;
	int			 pipe_rd, pipe_wr;

	/* a question for the caller (WEV_ASK), under lock */
	pthread_cond_t		 answered;
	int			 asking;	/* 1 while one waits */
	int			 ask_state;	/* 0 waiting, 1 answered, -1 declined */
	struct buf		*ask_answers;
	size_t			 ask_n;

	/* reconnect schedule, worker thread only */
	int			 backoff_s;
	struct timespec		 next_try;	/* zero: none scheduled */
	struct timespec		 next_probe;
};

static struct timespec mono_after_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static int ts_zero(const struct timespec *t)
{
	return t->tv_sec == 0 && t->tv_nsec == 0;
}

static int ts_due(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return !ts_zero(t) && (now.tv_sec > t->tv_sec ||
	    (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec));
}

/* ---- out-messages -------------------------------------------------------------- */

static void post(struct worker *w, const struct worker_msg *m)
{
	struct msg_node *n = xcalloc(1, sizeof(*n));
	char byte = 1;

	n->m = *m;
	pthread_mutex_lock(&w->lock);
	if (w->out_tail != NULL)
		w->out_tail->next = n;
	else
		w->out_head = n;
	w->out_tail = n;
	pthread_mutex_unlock(&w->lock);
	/* Non-blocking: a full pipe already says "messages wait". */
	if (write(w->pipe_wr, &byte, 1) < 0 && errno != EAGAIN)
		log_msg(LOG_WARN, "worker: wake-up pipe: %s", strerror(errno));
}

static void post_event(struct worker *w, enum worker_event_kind kind, enum conn_status st,
    const char *host, const char *detail, const char *error, int in_s)
{
	struct worker_msg m;

	memset(&m, 0, sizeof(m));
	m.type = WMSG_EVENT;
	m.ev.kind = kind;
	m.ev.status = st;
	m.ev.host = host != NULL ? xstrdup(host) : NULL;
	m.ev.detail = detail != NULL ? xstrdup(detail) : NULL;
	m.ev.error = error != NULL ? xstrdup(error) : NULL;
	m.ev.in_s = in_s;
	post(w, &m);
}

static void post_done(struct worker *w, struct worker_task *t)
{
	struct worker_msg m;

	memset(&m, 0, sizeof(m));
	m.type = WMSG_DONE;
	m.task = t;
	post(w, &m);
}

void worker_news(struct worker *w, struct worker_task *t)
{
	struct worker_msg m;

	memset(&m, 0, sizeof(m));
	m.type = WMSG_NEWS;
	m.task = t;
	post(w, &m);
}

void worker_event_free(struct worker_event *ev)
{
	free(ev->host);
	free(ev->detail);
	free(ev->error);
	conn_challenge_free(ev->challenge);
	ev->host = ev->detail = ev->error = NULL;
	ev->challenge = NULL;
}

/* The conn's ask function, on the worker thread: hand the challenge to
 * the caller and wait for the answer. */
static int ask_caller(const struct conn_challenge *ch, struct buf *answers, void *data)
{
	struct worker *w = data;
	struct worker_msg m;
	size_t i;
	int rc;

	memset(&m, 0, sizeof(m));
	m.type = WMSG_EVENT;
	m.ev.kind = WEV_ASK;
	m.ev.status = CONN_AUTH;
	m.ev.host = xstrdup(ch->host);
	m.ev.challenge = conn_challenge_dup(ch);
	pthread_mutex_lock(&w->lock);
	w->asking = 1;
	w->ask_state = 0;
	w->ask_answers = answers;
	w->ask_n = ch->n;
	pthread_mutex_unlock(&w->lock);
	post(w, &m);
	pthread_mutex_lock(&w->lock);
	while (w->ask_state == 0 && !w->stopping)
		pthread_cond_wait(&w->answered, &w->lock);
	rc = w->ask_state == 1 ? 0 : -1;
	w->asking = 0;
	w->ask_answers = NULL;
	pthread_mutex_unlock(&w->lock);
	if (rc != 0)
		for (i = 0; i < ch->n; i++)
			buf_reset(&answers[i]);
	return rc;
}

void worker_answer(struct worker *w, struct buf *answers, size_t n)
{
	size_t i;

	pthread_mutex_lock(&w->lock);
	if (w->asking && w->ask_state == 0) {
		if (answers != NULL && n == w->ask_n) {
			for (i = 0; i < n; i++)
				buf_add(&w->ask_answers[i], answers[i].data, answers[i].len);
			w->ask_state = 1;
		} else {
			w->ask_state = -1;
		}
		pthread_cond_signal(&w->answered);
	}
	pthread_mutex_unlock(&w->lock);
	for (i = 0; answers != NULL && i < n; i++)
		buf_reset(&answers[i]);
}

int worker_next(struct worker *w, struct worker_msg *m)
{
	char drain[256];
	struct msg_node *n;

	/* Drain first, then pop: a message posted after the drain leaves its
	 * byte in the pipe, so the caller's poll() wakes again for it. */
	while (read(w->pipe_rd, drain, sizeof(drain)) > 0)
		;
	pthread_mutex_lock(&w->lock);
	n = w->out_head;
	if (n != NULL) {
		w->out_head = n->next;
		if (w->out_head == NULL)
			w->out_tail = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	if (n == NULL)
		return 0;
	*m = n->m;
	free(n);
	return 1;
}

int worker_fd(const struct worker *w)
{
	return w->pipe_rd;
}

/* ---- connecting ------------------------------------------------------------------- */

static void schedule_retry(struct worker *w, const char *why)
{
	w->backoff_s = w->backoff_s == 0 ? 1 : w->backoff_s * 2;
	if (w->backoff_s > w->backoff_max_s)
		w->backoff_s = w->backoff_max_s;
	w->next_try = mono_after_ms(w->backoff_s * 1000L);
	post_event(w, WEV_RECONNECTING, CONN_UNREACHABLE, NULL, NULL, why, w->backoff_s);
}

/* Connect if needed, telling the caller what happens. */
static enum conn_status ensure_connected(struct worker *w, char **err)
{
	enum conn_status st;
	char *e = NULL;

	if (conn_is_connected(w->conn))
		return CONN_OK;
	post_event(w, WEV_CONNECTING, CONN_OK, w->hosts, NULL, NULL, 0);
	st = conn_connect(w->conn, &e);
	memset(&w->next_try, 0, sizeof(w->next_try));
	switch (st) {
	case CONN_OK:
		w->backoff_s = 0;
		w->next_probe = mono_after_ms(w->keepalive_s * 1000L);
		post_event(w, WEV_CONNECTED, st, conn_host(w->conn), conn_banner(w->conn), NULL, 0);
		break;
	case CONN_HOSTKEY_UNKNOWN:
	case CONN_HOSTKEY_CHANGED:
		post_event(w, WEV_HOSTKEY_REFUSED, st, conn_refused_host(w->conn),
		    conn_refused_fingerprint(w->conn), e, 0);
		break;
	case CONN_AUTH:
		post_event(w, WEV_AUTH_FAILED, st, w->hosts, NULL, e, 0);
		break;
	default:
		post_event(w, WEV_UNREACHABLE, st, w->hosts, NULL, e, 0);
		schedule_retry(w, e);
		break;
	}
	if (err != NULL)
		*err = e;
	else
		free(e);
	return st;
}

/* ---- the thread ----------------------------------------------------------------------- */

static void run_task(struct worker *w, struct worker_task *t)
{
	t->status = CONN_OK;
	t->err = NULL;
	if (atomic_load(&t->cancel)) {
		t->status = CONN_CANCELLED;
		t->err = xstrdup("cancelled before it ran");
		return;
	}
	if (t->local) {
		t->run(w->conn, t);
		return;
	}
	if (!t->offline) {
		t->status = ensure_connected(w, &t->err);
		if (t->status != CONN_OK)
			return;
	}
	free(t->err);
	t->err = NULL;
	t->run(w->conn, t);
	if (t->offline) {
		/* It may have made connecting possible: try now. */
		if (!conn_is_connected(w->conn))
			w->next_try = mono_after_ms(0);
	} else if (!conn_is_connected(w->conn)) {
		post_event(w, WEV_DISCONNECTED, t->status, NULL, NULL, t->err, 0);
		schedule_retry(w, t->err);
	} else {
		w->next_probe = mono_after_ms(w->keepalive_s * 1000L);
	}
}

static void keepalive(struct worker *w)
{
	char *e = NULL;

	int timeout_ms = w->keepalive_s < 10 ? w->keepalive_s * 1000 : 10000;

	if (conn_probe(w->conn, timeout_ms, &e) == CONN_OK) {
		w->next_probe = mono_after_ms(w->keepalive_s * 1000L);
		return;
	}
	post_event(w, WEV_DISCONNECTED, CONN_DISCONNECTED, NULL, NULL, e, 0);
	w->backoff_s = 0;
	schedule_retry(w, e);
	free(e);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		struct worker_task *t = w->todo_head;
		struct timespec until;

		if (t != NULL) {
			w->todo_head = t->next;
			if (w->todo_head == NULL)
				w->todo_tail = NULL;
			t->next = NULL;
			w->running = t;
			pthread_mutex_unlock(&w->lock);
			run_task(w, t);
			pthread_mutex_lock(&w->lock);
			w->running = NULL;
			pthread_mutex_unlock(&w->lock);
			post_done(w, t);
			pthread_mutex_lock(&w->lock);
			continue;
		}
		if (ts_due(&w->next_try)) {
			pthread_mutex_unlock(&w->lock);
			ensure_connected(w, NULL);
			pthread_mutex_lock(&w->lock);
			continue;
		}
		if (conn_is_connected(w->conn) && ts_due(&w->next_probe)) {
			pthread_mutex_unlock(&w->lock);
			keepalive(w);
			pthread_mutex_lock(&w->lock);
			continue;
		}
		/* Sleep until a task comes or the next timer is due: the
		 * keepalive while connected, else the next reconnect (none
		 * after a refused key or failed auth: a task must ask). */
		until = conn_is_connected(w->conn) ? w->next_probe : w->next_try;
		if (ts_zero(&until))
			pthread_cond_wait(&w->wake, &w->lock);
		else
			compat_cond_timedwait_monotonic(&w->wake, &w->lock, &until);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/*
 * libssh's SFTP waits for an answer without end, so a request sent just
 * as the link died silently (no FIN, no RST: a VPN or NAT that forgot the
 * connection) would hold this worker, and every task behind it, forever.
 * A request that has heard nothing for the keepalive time is ended the way
 * a dead peer is: the socket is shut, the call fails as on a drop, and the
 * worker reconnects as after any drop.
 */
static void *watchdog_main(void *arg)
{
	struct worker *w = arg;

	long limit = w->keepalive_s * 1000L, nap = limit;

	/* It wakes when a wait in flight would reach the limit, else once a
	 * limit's time: an idle taotop is not woken every second. */
	pthread_mutex_lock(&w->lock);
	while (!w->stopping) {
		struct timespec until = mono_after_ms(nap);
		int64_t waited;
		compat_cond_timedwait_monotonic(&w->dog_wake, &w->lock, &until);
		waited = conn_sftp_waiting_ms(w->conn);
		if (!w->stopping && waited > limit) {
			log_msg(LOG_WARN, "ssh: an SFTP request had no answer for %d s: the "
			    "connection is taken as dead", w->keepalive_s);
			conn_interrupt(w->conn);
			waited = 0;
		}
		nap = waited > 0 ? limit - (long)waited + 100 : limit;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct worker *worker_start(const struct conn_target *t, const struct worker_opts *o)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	int fds[2];

	{
		/* Questions while connecting go to the caller through us. */
		struct conn_target tt = *t;
		tt.ask = ask_caller;
		tt.ask_data = w;
		w->conn = conn_new(&tt);
	}
	w->hosts = xstrdup(t->hosts != NULL ? t->hosts : "");
	w->keepalive_s = o != NULL && o->keepalive_s > 0 ? o->keepalive_s : 30;
	w->backoff_max_s = o != NULL && o->backoff_max_s > 0 ? o->backoff_max_s : 60;
	pthread_mutex_init(&w->lock, NULL);
	compat_cond_init_monotonic(&w->wake);
	compat_cond_init_monotonic(&w->dog_wake);
	pthread_cond_init(&w->answered, NULL);
	if (compat_pipe_nb_cloexec(fds) != 0)
		abort();	/* out of descriptors at start: nothing sane to do */
	w->pipe_rd = fds[0];
	w->pipe_wr = fds[1];
	/* Connect straight away, so the caller learns the state early. */
	w->next_try = mono_after_ms(0);
	pthread_create(&w->thread, NULL, worker_main, w);
	pthread_create(&w->watchdog, NULL, watchdog_main, w);
	return w;
}

void worker_task_init(struct worker_task *t, worker_run_fn *run, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->run = run;
	t->arg = arg;
	atomic_init(&t->cancel, 0);
}

void worker_submit(struct worker *w, struct worker_task *t)
{
	t->next = NULL;
	pthread_mutex_lock(&w->lock);
	if (w->todo_tail != NULL)
		w->todo_tail->next = t;
	else
		w->todo_head = t;
	w->todo_tail = t;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

void worker_cancel(struct worker *w, struct worker_task *t)
{
	(void)w;
	atomic_store(&t->cancel, 1);
}

void worker_stop(struct worker *w, void (*leftover)(struct worker_task *t))
{
	struct worker_task *t, *next;
	struct worker_msg m;

	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	if (w->running != NULL) {
		atomic_store(&w->running->cancel, 1);
		/* An SFTP request does not look at cancel: waiting on a dead
		 * link it would never return. The task is abandoned anyway. */
		conn_interrupt(w->conn);
	}
	pthread_cond_signal(&w->wake);
	pthread_cond_signal(&w->answered);
	pthread_cond_signal(&w->dog_wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_join(w->watchdog, NULL);

	for (t = w->todo_head; t != NULL; t = next) {
		next = t->next;
		t->status = CONN_CANCELLED;
		if (leftover != NULL)
			leftover(t);
	}
	while (worker_next(w, &m)) {
		if (m.type == WMSG_EVENT)
			worker_event_free(&m.ev);
		else if (m.type == WMSG_DONE && leftover != NULL)
			leftover(m.task);
	}
	conn_free(w->conn);
	close(w->pipe_rd);
	close(w->pipe_wr);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->wake);
	pthread_cond_destroy(&w->dog_wake);
	pthread_cond_destroy(&w->answered);
	free(w->hosts);
	free(w);
}

void worker_run_exec(struct conn *c, struct worker_task *t)
{
	struct conn_exec *x = t->arg;

	x->cancel = &t->cancel;
	t->status = conn_exec(c, x, &t->err);
}

void worker_call(struct worker *w, struct worker_task *t,
    void (*on_event)(const struct worker_event *ev, void *data), void *data)
{
	struct worker_msg m;
	int done = 0;

	worker_submit(w, t);
	while (!done) {
		struct pollfd pfd = { .fd = worker_fd(w), .events = POLLIN };
		poll(&pfd, 1, -1);
		while (worker_next(w, &m)) {
			if (m.type == WMSG_EVENT) {
				if (on_event != NULL)
					on_event(&m.ev, data);
				worker_event_free(&m.ev);
			} else if (m.type == WMSG_DONE && m.task == t) {
				done = 1;
			}
		}
	}
}

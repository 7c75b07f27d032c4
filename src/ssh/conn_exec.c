/*
 * Commands on the session: one channel each, stdin written as the peer's
 * window allows while both streams are read, bounded by a timeout and a
 * cancel flag; a dead idle connection reconnected once before anything is
 * sent.
 */
#include "util/compat.h"
#include "ssh/conn_priv.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libssh/callbacks.h>
/* ssh_send_keepalive is declared here, though clients may use it too. */
#include <libssh/server.h>

#include "util/log.h"
#include "util/xmalloc.h"

#define DEFAULT_OUT_CAP		(64u << 20)
#define DEFAULT_ERR_CAP		(1u << 20)

/* Whether len bytes at p hold the text s (memmem is not POSIX). */
static int bytes_hold(const void *p, size_t len, const char *s)
{
	size_t n = strlen(s), i;

	for (i = 0; p != NULL && i + n <= len; i++)
		if (memcmp((const char *)p + i, s, n) == 0)
			return 1;
	return 0;
}

/* ---- exec ---------------------------------------------------------------------- */

int64_t conn_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One command's progress while pump drives its channel. */
struct exec_state {
	struct conn_exec	*x;
	int			 got_exit;
	int			 got_any;	/* any answer since exec */
	size_t			 off;		/* stdin bytes written */
	int			 eof_sent;
	int64_t			 eof_at;	/* when the output's EOF came, ms */
	int64_t			 nudged;	/* the last keepalive sent, ms */
};

static void on_exit_status(ssh_session s, ssh_channel ch, int status, void *userdata)
{
	struct exec_state *es = userdata;
	(void)s;
	(void)ch;
	es->x->exit_status = status;
	es->got_exit = es->got_any = 1;
}

static void on_exit_signal(ssh_session s, ssh_channel ch, const char *signal, int core,
    const char *errmsg, const char *lang, void *userdata)
{
	struct exec_state *es = userdata;
	(void)s, (void)ch, (void)core, (void)errmsg, (void)lang;
	es->x->exit_status = -1;
	snprintf(es->x->exit_signal, sizeof(es->x->exit_signal), "%s", signal ? signal : "?");
	es->got_exit = es->got_any = 1;
}

void conn_exec_init(struct conn_exec *x, const char *cmd)
{
	memset(x, 0, sizeof(*x));
	x->cmd = cmd;
	buf_init(&x->out);
	buf_init(&x->err);
}

void conn_exec_free(struct conn_exec *x)
{
	buf_free(&x->out);
	buf_free(&x->err);
}

static void keep(struct buf *b, const char *data, size_t n, size_t cap, int *cut)
{
	if (b->len + n > cap) {
		*cut = 1;
		n = b->len < cap ? cap - b->len : 0;
	}
	buf_add(b, data, n);
}

/* Stop a command we no longer wait for. */
static void abandon(ssh_channel ch)
{
	ssh_channel_request_send_signal(ch, "KILL");
	ssh_channel_close(ch);
}

/* Write stdin only as far as the peer's window allows, then EOF once all of
 * it is out: 1 when bytes went out, 0 when none could, -1 when broken. */
static int feed_stdin(ssh_channel ch, struct exec_state *es)
{
	const struct conn_exec *x = es->x;
	int wrote = 0;

	if (!es->eof_sent && es->off < x->in_len) {
		uint32_t win = ssh_channel_window_size(ch);
		if (win > 0) {
			size_t n = x->in_len - es->off;
			if (n > win)
				n = win;
			if (n > IO_CHUNK)
				n = IO_CHUNK;
			int w = ssh_channel_write(ch, (const char *)x->in + es->off, (uint32_t)n);
			if (w == SSH_ERROR)
				return -1;
			es->off += (size_t)w;
			wrote = 1;
		}
	}
	if (!es->eof_sent && es->off >= x->in_len) {
		if (ssh_channel_send_eof(ch) == SSH_ERROR)
			return -1;
		es->eof_sent = 1;
	}
	return wrote;
}

/* Keep what stdout and stderr hold now, up to their caps: 1 when anything
 * came, 0 when nothing, -1 when broken. */
static int drain(struct conn *c, ssh_channel ch, struct exec_state *es)
{
	struct conn_exec *x = es->x;
	size_t out_cap = x->out_cap ? x->out_cap : DEFAULT_OUT_CAP;
	size_t err_cap = x->err_cap ? x->err_cap : DEFAULT_ERR_CAP;
	char chunk[IO_CHUNK];
	int stream, got = 0;

	for (stream = 0; stream < 2; stream++) {
		int n = ssh_channel_read_nonblocking(ch, chunk, sizeof(chunk), stream);
		if (n == SSH_ERROR)
			return -1;
		if (n > 0) {
			c->counters.exec_bytes_read += (uint64_t)n;
			if (stream == 0)
				keep(&x->out, chunk, (size_t)n, out_cap, &x->out_cut);
			else
				keep(&x->err, chunk, (size_t)n, err_cap, &x->err_cut);
			got = es->got_any = 1;
		}
	}
	return got;
}

/* CONN_OK while the command may go on; else it was cancelled or ran over
 * its deadline, and is abandoned. */
static enum conn_status may_go_on(struct conn *c, ssh_channel ch, struct exec_state *es,
    int64_t deadline, char **err)
{
	const struct conn_exec *x = es->x;

	if (x->cancel != NULL && atomic_load(x->cancel)) {
		abandon(ch);
		return conn_fail(err, CONN_CANCELLED, "%s: cancelled: %s", c->at->display, x->cmd);
	}
	if (deadline != 0 && conn_now_ms() >= deadline) {
		/* The server acknowledged the exec request, so it was
		 * alive then: the command ran long, or the server froze
		 * since. Either way the command is abandoned. */
		abandon(ch);
		return conn_fail(err, CONN_TIMEOUT, "%s: the command ran over its %d s limit "
		    "and was killed%s", c->at->display, (x->timeout_ms + 999) / 1000,
		    es->got_any ? "" : " (or the server stopped answering)");
	}
	return CONN_OK;
}

/* Nothing moved: wait for the server, at most until the deadline. */
static void idle(struct conn *c, ssh_channel ch, struct exec_state *es, int64_t deadline)
{
	struct pollfd pfd = { .fd = ssh_get_fd(c->s), .events = POLLIN };
	int wait = ssh_channel_is_eof(ch) ? 50 : 200;

	/*
	 * Seen against OpenSSH 9.2: after a large SFTP transfer on the
	 * same connection, the server sometimes sends EOF but holds the
	 * exit-status until the client sends something. A keepalive
	 * every 50 ms while we wait for it gets it moving. Not at once:
	 * the exit-status mostly follows the EOF within milliseconds (the
	 * server reaps the command after its output closes), and a
	 * keepalive sent meanwhile is a round trip on the wire for nothing.
	 */
	if (ssh_channel_is_eof(ch) && !es->got_exit) {
		int64_t now = conn_now_ms();
		if (es->eof_at == 0)
			es->eof_at = now;
		if (now - es->eof_at >= 50 && now - es->nudged >= 50) {
			ssh_send_keepalive(c->s);
			c->counters.keepalives++;
			es->nudged = now;
		}
	}
	if (deadline != 0 && deadline - conn_now_ms() < wait)
		wait = (int)(deadline - conn_now_ms());
	poll(&pfd, 1, wait < 0 ? 0 : wait);
}

/* Drive one channel: write stdin as the peer's window allows and read both
 * streams in between, so a command that echoes its input while we still
 * write cannot deadlock us. */
static enum conn_status pump(struct conn *c, ssh_channel ch, struct exec_state *es,
    int64_t deadline, char **err)
{
	for (;;) {
		int fed = feed_stdin(ch, es), got = fed < 0 ? -1 : drain(c, ch, es);
		enum conn_status st;

		if (fed < 0 || got < 0)
			goto broken;
		if (!fed && !got && (ssh_channel_is_closed(ch) ||
		    (ssh_channel_is_eof(ch) && es->got_exit)))
			break;
		if (!ssh_is_connected(c->s))
			goto broken;
		st = may_go_on(c, ch, es, deadline, err);
		if (st != CONN_OK)
			return st;
		if (!fed && !got)
			idle(c, ch, es, deadline);
	}
	if (!es->got_exit)
		goto broken;
	return CONN_OK;
broken:
	return conn_fail(err, CONN_DISCONNECTED, "%s: the connection dropped while running a "
	    "command (it may have run): %s", c->at->display, ssh_get_error(c->s));
}

/* ---- channels opened ahead ------------------------------------------------------ */

/*
 * SSH needs the server's answer to a channel open (its number for the
 * channel) before an exec request can be sent on it: a round trip of its
 * own before every command. So each command's channel is opened one
 * command ahead: the next one's open is sent together with this one's
 * open, or with this one's exec request, and its answer comes back in the
 * same round trip. Every command after a session's first then costs one
 * round trip (the exec and its answer), not two. The channel waits unused
 * between commands; it dies with its session (conn_drop_session).
 */

/* Send a channel open without waiting for its answer; NULL when it could
 * not be sent. */
static ssh_channel open_ahead(struct conn *c)
{
	ssh_channel ch = ssh_channel_new(c->s);
	int blocking = ssh_is_blocking(c->s), rc;

	if (ch == NULL)
		return NULL;
	/* Non-blocking, libssh sends the open and returns SSH_AGAIN; the
	 * blocking ssh_channel_open_session later waits for (or finds) its
	 * answer. */
	ssh_set_blocking(c->s, 0);
	rc = ssh_channel_open_session(ch);
	ssh_set_blocking(c->s, blocking);
	if (rc == SSH_ERROR) {
		ssh_channel_free(ch);
		return NULL;
	}
	return ch;
}

/* The channel opened ahead, when the server opened it and the connection
 * did not end while idle (what came meanwhile is read first: a FIN or RST
 * seen here means reconnecting before anything is sent, as a failed open
 * does); else NULL, and it is dropped. */
static ssh_channel take_spare(struct conn *c)
{
	ssh_channel ch = c->spare;

	c->spare = NULL;
	if (ch == NULL)
		return NULL;
	if (ssh_channel_open_session(ch) == SSH_OK && ssh_channel_poll(ch, 0) != SSH_ERROR &&
	    ssh_channel_is_open(ch) && conn_is_connected(c))
		return ch;
	ssh_channel_free(ch);
	return NULL;
}

/* Open a channel: the one opened ahead if it is usable, else a new one
 * (with the next one's open sent beside it); reconnect once when the
 * connection had dropped while idle (nothing was sent yet, so this is safe
 * even for commands that change things). The next command's channel is
 * opened ahead here too. */
static enum conn_status open_channel(struct conn *c, int64_t deadline, ssh_channel *out,
    char **err)
{
	int attempt;
	enum conn_status st;

	for (attempt = 0; attempt < 2; attempt++) {
		ssh_channel ch;
		long left_s = c->connect_timeout_s;
		int fresh;

		st = conn_connect(c, err);
		if (st != CONN_OK)
			return st;
		if (deadline != 0) {
			int64_t left = deadline - conn_now_ms();
			if (left <= 0)
				return conn_fail(err, CONN_TIMEOUT, "%s: no time left to run the command",
				    c->at->display);
			if ((left + 999) / 1000 < left_s)
				left_s = (long)((left + 999) / 1000);
		}
		ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &left_s);
		ch = take_spare(c);
		fresh = ch == NULL && conn_is_connected(c);
		if (fresh)
			ch = open_ahead(c);
		/* The next command's open goes out before this one's answer
		 * (a fresh open's) is waited for. */
		if (ch != NULL)
			c->spare = open_ahead(c);
		if (fresh && ch != NULL && ssh_channel_open_session(ch) != SSH_OK) {
			ssh_channel_free(ch);
			ch = NULL;
		}
		if (ch != NULL) {
			*out = ch;
			return CONN_OK;
		}
		log_msg(LOG_INFO, "ssh: %s: cannot open a channel (%s); reconnecting",
		    c->at->display, ssh_get_error(c->s));
		conn_drop_session(c);
	}
	return conn_fail(err, CONN_DISCONNECTED, "the login host stopped answering and a new "
	    "connection failed too");
}

enum conn_status conn_probe(struct conn *c, int timeout_ms, char **err)
{
	long t = (timeout_ms + 999) / 1000, restore = c->connect_timeout_s;
	enum conn_status st;
	const char *host;
	ssh_channel ch;
	int ok;

	if (lend_client_probe(c, timeout_ms, &st, err))
		return st;
	if (!conn_is_connected(c)) {
		conn_drop_session(c);
		return conn_fail(err, CONN_DISCONNECTED, "not connected");
	}
	host = c->at->display;
	ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &t);
	ch = ssh_channel_new(c->s);
	ok = ch != NULL && ssh_channel_open_session(ch) == SSH_OK;
	if (ch != NULL) {
		if (ok)
			ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	if (ok) {
		ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &restore);
		return CONN_OK;
	}
	conn_fail(err, CONN_TIMEOUT, "%s: the server did not answer a keepalive within %d s",
	    host, (timeout_ms + 999) / 1000);
	conn_drop_session(c);
	return CONN_TIMEOUT;
}

enum conn_status conn_exec(struct conn *c, struct conn_exec *x, char **err)
{
	int64_t deadline = x->timeout_ms > 0 ? conn_now_ms() + x->timeout_ms : 0;
	struct ssh_channel_callbacks_struct cb;
	struct exec_state es = { .x = x };
	long timeout = c->connect_timeout_s;
	ssh_channel ch = NULL;
	enum conn_status st;

	buf_reset(&x->out);
	buf_reset(&x->err);
	x->out_cut = x->err_cut = 0;
	x->exit_status = -1;
	x->exit_signal[0] = '\0';

	if (lend_client_exec(c, x, &st, err))
		return st;
	st = open_channel(c, deadline, &ch, err);
	if (st != CONN_OK)
		return st;
	if (c->lose_left > 0 && (strstr(x->cmd, c->lose_needle) != NULL ||
	    bytes_hold(x->in, x->in_len, c->lose_needle))) {
		c->lose_left--;
		ssh_channel_free(ch);
		conn_drop_session(c);
		return conn_fail(err, CONN_DISCONNECTED, "connection cut as the command was sent "
		    "(test hook)");
	}
	memset(&cb, 0, sizeof(cb));
	cb.userdata = &es;
	cb.channel_exit_status_function = on_exit_status;
	cb.channel_exit_signal_function = on_exit_signal;
	ssh_callbacks_init(&cb);
	ssh_set_channel_callbacks(ch, &cb);

	c->counters.execs++;
	if (ssh_channel_request_exec(ch, x->cmd) != SSH_OK) {
		st = ssh_is_connected(c->s)
		    ? conn_fail(err, CONN_REMOTE, "%s: the server refused to run a command: %s",
			c->at->display, ssh_get_error(c->s))
		    : conn_fail(err, CONN_DISCONNECTED, "%s: the connection dropped as the command "
			"was sent (it may have run)", c->at->display);
		goto out;
	}
	st = pump(c, ch, &es, deadline, err);
	if (st == CONN_OK && x->exit_status == 0 && c->cut_needle != NULL &&
	    (strstr(x->cmd, c->cut_needle) != NULL || bytes_hold(x->in, x->in_len, c->cut_needle))) {
		ssh_remove_channel_callbacks(ch, &cb);
		ssh_channel_free(ch);
		ch = NULL;
		conn_drop_session(c);
		st = conn_fail(err, CONN_DISCONNECTED, "connection cut after the command ran (test hook)");
		goto out;
	}
out:
	if (ch != NULL) {
		/* libssh keeps a channel freed before the server closed it
		 * until the close arrives, and would call our callbacks then:
		 * they live on this stack frame, so detach them first. */
		ssh_remove_channel_callbacks(ch, &cb);
		if (st == CONN_OK)
			ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	if (c->s != NULL)
		ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &timeout);
	if (st == CONN_DISCONNECTED)
		conn_drop_session(c);
	return st;
}


char *conn_run(struct conn *c, const char *cmd, int timeout_ms, int *status, char **err)
{
	struct conn_exec x;
	char *out = NULL;

	conn_exec_init(&x, cmd);
	x.timeout_ms = timeout_ms;
	if (conn_exec(c, &x, err) == CONN_OK) {
		out = xstrdup(x.out.data != NULL ? x.out.data : "");
		*status = x.exit_status;
		if (x.exit_status != 0 && x.err.data != NULL && x.err.data[0] != '\0')
			*err = xasprintf("%.*s", (int)strcspn(x.err.data, "\n"), x.err.data);
	}
	conn_exec_free(&x);
	return out;
}

/*
 * The conn's side of a lent session (ssh/lend.h): on connecting, a conn
 * with a lend folder asks the lenders there for its target, the running
 * monitors first (they hold a session already), then the agent; a yes
 * makes every later operation a request to the lender. Each lend_client_
 * call returns 1 when it did the operation that way (its status in *st)
 * and 0 when the caller must do it on its own session: there is no lender,
 * or the lender went away before it had the request. A lender that goes
 * away after it had a request that changes something (a command, a write)
 * leaves the answer unknown: CONN_DISCONNECTED, as a dropped link would.
 */
#include "util/compat.h"
#include "ssh/conn_priv.h"
#include "ssh/lend.h"
#include "ssh/sftp_kept.h"
#include "ssh/tails.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "util/log.h"
#include "util/xmalloc.h"

#define MONITOR_HELLO_MS	5000
#define SFTP_WAIT_MS		90000	/* the agent ends an SFTP wait at 60 s */
#define EXEC_MARGIN_MS		30000

static long long num(const cJSON *o, const char *name, long long dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(v) ? (long long)v->valuedouble : dflt;
}

void lend_client_drop(struct conn *c)
{
	if (c->lent_fd < 0)
		return;
	pthread_mutex_lock(&c->live_lock);
	close(c->lent_fd);
	c->lent_fd = -1;
	pthread_mutex_unlock(&c->live_lock);
	free(c->lent_by);
	free(c->lent_host);
	free(c->banner);
	c->lent_by = c->lent_host = c->banner = NULL;
}

/* The lender is gone: this process makes its own connection from now on. */
static void lender_gone(struct conn *c, const char *when)
{
	log_msg(LOG_INFO, "ssh: the taotop %s lending the session ended %s; connecting on our own",
	    c->lent_by != NULL ? c->lent_by : "lender", when);
	lend_client_drop(c);
	c->lend_off = 1;
}

/* A server's question the lender passes on: asked here, through the
 * conn's own ask function, the answers sent once and wiped. */
static int answer(struct conn *c, int fd, const cJSON *q)
{
	const cJSON *ps = cJSON_GetObjectItemCaseSensitive(q, "prompts"), *p;
	struct conn_challenge ch = { .host = lend_str(q, "host"), .name = lend_str(q, "name"),
	    .instruction = lend_str(q, "instruction"), .said = lend_str(q, "said"),
	    .attempt = (int)num(q, "attempt", 1) };
	struct conn_prompt *pr;
	struct buf *ans;
	struct lend_blob *bl;
	size_t i = 0, n = (size_t)cJSON_GetArraySize(ps);
	int rc, ok;

	if (n == 0 || n > 8) {
		cJSON *h = cJSON_CreateObject();
		cJSON_AddTrueToObject(h, "declined");
		return lend_send(fd, h, NULL, 0);
	}
	pr = xcalloc(n, sizeof(*pr));
	ans = xcalloc(n, sizeof(*ans));
	bl = xcalloc(n, sizeof(*bl));
	cJSON_ArrayForEach(p, ps) {
		pr[i].text = lend_str(p, "text") != NULL ? lend_str(p, "text") : "";
		pr[i].echo = (int)num(p, "echo", 0);
		buf_init_secret(&ans[i]);
		i++;
	}
	ch.host = ch.host != NULL ? ch.host : "";
	ch.name = ch.name != NULL ? ch.name : "";
	ch.instruction = ch.instruction != NULL ? ch.instruction : "";
	ch.n = n;
	ch.prompts = pr;
	ok = c->ask != NULL && c->ask(&ch, ans, c->ask_data) == 0;
	if (ok) {
		cJSON *h = cJSON_CreateObject();
		cJSON_AddNumberToObject(h, "answers", (double)n);
		for (i = 0; i < n; i++)
			bl[i] = (struct lend_blob){ ans[i].data, ans[i].len };
		rc = lend_send(fd, h, bl, n);
	} else {
		cJSON *h = cJSON_CreateObject();
		cJSON_AddTrueToObject(h, "declined");
		rc = lend_send(fd, h, NULL, 0);
	}
	for (i = 0; i < n; i++)
		buf_free(&ans[i]);
	free(pr), free(ans), free(bl);
	return rc;
}

/* Send req and wait for its answer (each message within wait_ms, -1: no
 * limit), answering the questions that come first. 0 and *reply (caller
 * deletes) with the answer's blobs in out[]; -1 when the lender went away
 * or stopped answering, *sent saying whether it had the request. */
static int call(struct conn *c, int fd, cJSON *req, const struct lend_blob *in, size_t nin,
    cJSON **reply, struct buf *out, size_t nout, int wait_ms, int *sent)
{
	size_t n;

	*sent = 0;
	*reply = NULL;
	if (lend_send(fd, req, in, nin) != 0)
		return -1;
	*sent = 1;
	for (;;) {
		const cJSON *q;
		if (lend_wait(fd, wait_ms) != 0 || lend_recv(fd, reply, out, nout, &n) != 0)
			return -1;
		q = cJSON_GetObjectItemCaseSensitive(*reply, "ask");
		if (q == NULL)
			return 0;
		if (answer(c, fd, q) != 0) {
			cJSON_Delete(*reply);
			*reply = NULL;
			return -1;
		}
		cJSON_Delete(*reply);
		*reply = NULL;
	}
}

/* The answer's status and sentence, and the lender's counts of what it
 * sent the server for us added to ours. */
static enum conn_status status_of(struct conn *c, const cJSON *r, char **err)
{
	enum conn_status st = (enum conn_status)num(r, "status", CONN_DISCONNECTED);
	const char *e = lend_str(r, "err");

	c->counters.execs += (unsigned long)num(r, "execs", 0);
	c->counters.sftp_ops += (unsigned long)num(r, "sftp_ops", 0);
	c->counters.sftp_requests += (unsigned long)num(r, "sftp_requests", 0);
	c->counters.sftp_bytes_read += (uint64_t)num(r, "sftp_bytes_read", 0);
	c->counters.exec_bytes_read += (uint64_t)num(r, "exec_bytes_read", 0);
	if (st != CONN_OK && err != NULL) {
		free(*err);
		*err = xstrdup(e != NULL ? e : conn_status_name(st));
	}
	return st;
}

/* The hello on fd: 1 lent, 0 the lender says no (why logged), -1 it
 * answered with the connection's failure (*st, *err). */
static int hello(struct conn *c, int fd, const char *key, int wait_ms, enum conn_status *st,
    char **err)
{
	cJSON *req = cJSON_CreateObject(), *r;
	struct buf none;
	int sent;

	cJSON_AddStringToObject(req, "op", "hello");
	cJSON_AddNumberToObject(req, "version", LEND_VERSION);
	cJSON_AddStringToObject(req, "key", key);
	cJSON_AddNumberToObject(req, "pid", (double)getpid());
	buf_init(&none);
	if (call(c, fd, req, NULL, 0, &r, &none, 0, wait_ms, &sent) != 0) {
		buf_free(&none);
		return 0;
	}
	buf_free(&none);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok"))) {
		log_msg(LOG_INFO, "ssh: a lender declined: %s", lend_str(r, "why") ? lend_str(r, "why") : "?");
		cJSON_Delete(r);
		return 0;
	}
	*st = status_of(c, r, err);
	/* Refused with no question asked of us: the lender's own means (a
	 * stale ssh-agent socket it was started with) may be what failed,
	 * not ours: our own connection tries. */
	if (*st == CONN_AUTH && num(r, "asked", 0) == 0) {
		log_msg(LOG_INFO, "ssh: the lender could not authenticate: connecting on our own");
		free(*err);
		*err = NULL;
		cJSON_Delete(r);
		return 0;
	}
	if (*st != CONN_OK) {
		const char *h = lend_str(r, "refused_host"), *fp = lend_str(r, "refused_fp");
		if (h != NULL && fp != NULL) {
			free(c->refused_host), free(c->refused_fp);
			c->refused_host = xstrdup(h);
			c->refused_fp = xstrdup(fp);
		}
		cJSON_Delete(r);
		return -1;
	}
	c->lent_by = xstrdup(lend_str(r, "lender") ? lend_str(r, "lender") : "lender");
	c->lent_host = xstrdup(lend_str(r, "host") ? lend_str(r, "host") : "");
	c->banner = xstrdup(lend_str(r, "banner") ? lend_str(r, "banner") : "");
	c->lent_pid = (int)num(r, "pid", 0);
	c->lent_clients = (unsigned)num(r, "clients", 1);
	cJSON_Delete(r);
	return 1;
}

/* The monitors' sockets first (they are connected already), then the
 * agent's. */
static char **lender_names(const char *dir, size_t *n)
{
	char **names = NULL;
	struct dirent *e;
	DIR *d = opendir(dir);

	*n = 0;
	while (d != NULL && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "monitor-", 8) == 0 && strstr(e->d_name, ".sock") != NULL) {
			names = xreallocarray(names, *n + 2, sizeof(*names));
			names[(*n)++] = xstrdup(e->d_name);
		}
	if (d != NULL)
		closedir(d);
	names = xreallocarray(names, *n + 1, sizeof(*names));
	names[(*n)++] = xstrdup(LEND_AGENT_SOCK);
	return names;
}

int lend_client_connect(struct conn *c, enum conn_status *st, char **err)
{
	struct conn_target t = { .hosts = c->hosts_spec, .user = c->user, .key_path = c->key_path,
	    .known_hosts = c->known_hosts, .ssh_config = c->ssh_config,
	    .connect_timeout_s = c->connect_timeout_s, .jump = c->jump_spec,
	    .password_auth = c->password_auth };
	char *key, *why = NULL, **names;
	size_t n, i;
	int done = 0;

	if (c->lend_dir == NULL || c->lend_off)
		return 0;
	if (lend_dir_check(c->lend_dir, &why) != 0) {
		log_msg(LOG_INFO, "ssh: no shared session: %s", why);
		free(why);
		c->lend_off = 1;
		return 0;
	}
	key = lend_target_key(&t);
	names = lender_names(c->lend_dir, &n);
	for (i = 0; i < n && !done; i++) {
		int fd = lend_dial(c->lend_dir, names[i]), rc;
		/* No agent yet, and no monitor had it: the one started now
		 * makes the connection, for this command and the next. */
		if (fd < 0 && i == n - 1 && c->lend_start != NULL &&
		    c->lend_start(c->lend_start_data) == 0)
			fd = lend_dial(c->lend_dir, names[i]);
		if (fd < 0)
			continue;
		/* A monitor holds its connection: it answers at once, or after
		 * the request its worker runs (the agent serves if it is slow).
		 * The agent may have to connect: each host's connect time. */
		rc = hello(c, fd, key, i < n - 1 ? MONITOR_HELLO_MS :
		    (int)(c->connect_timeout_s * (c->nhosts + 2) * 1000 + 30000), st, err);
		if (rc == 1) {
			pthread_mutex_lock(&c->live_lock);
			c->lent_fd = fd;
			pthread_mutex_unlock(&c->live_lock);
			*st = CONN_OK;
			log_msg(LOG_INFO, "ssh: the session of the taotop %s (pid %d) lent to us",
			    c->lent_by, c->lent_pid);
			done = 1;
		} else {
			close(fd);
			done = rc < 0;
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(key);
	if (!done)
		c->lend_off = 1;	/* no lender has it: our own, from now */
	return done;
}

/* A request for an operation: its name and nothing else yet. */
static cJSON *request(const char *op)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "op", op);
	return r;
}

/* An operation that changes nothing on the server (stat, read, tails,
 * probe): any failure of the lender's sends it to our own connection. An
 * operation that changes something: only before the lender had it. */
static int do_call(struct conn *c, cJSON *req, const struct lend_blob *in, size_t nin,
    cJSON **reply, struct buf *out, size_t nout, int changes, int wait_ms, enum conn_status *st,
    char **err)
{
	int sent;

	if (c->lent_fd < 0) {
		cJSON_Delete(req);
		return 0;
	}
	if (call(c, c->lent_fd, req, in, nin, reply, out, nout, wait_ms, &sent) == 0) {
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*reply, "not_run")))
			return 1;
		cJSON_Delete(*reply);
		*reply = NULL;
		sent = 0;	/* the lender says it did not run it */
	}
	lender_gone(c, sent ? "during a request" : "before a request");
	if (!sent || !changes)
		return 0;
	*st = conn_fail(err, CONN_DISCONNECTED, "the taotop session this command went through "
	    "ended or stopped answering before it answered (the command may have run)");
	return -1;
}

int lend_client_exec(struct conn *c, struct conn_exec *x, enum conn_status *st, char **err)
{
	cJSON *req = request("exec"), *r;
	struct lend_blob in = { x->in, x->in_len };
	struct buf out[2];
	const char *sig;
	int rc;

	cJSON_AddStringToObject(req, "cmd", x->cmd);
	cJSON_AddNumberToObject(req, "out_cap", (double)x->out_cap);
	cJSON_AddNumberToObject(req, "err_cap", (double)x->err_cap);
	cJSON_AddNumberToObject(req, "timeout_ms", x->timeout_ms);
	buf_init_secret(&out[0]), buf_init_secret(&out[1]);
	rc = do_call(c, req, &in, x->in != NULL ? 1 : 0, &r, out, 2, 1,
	    x->timeout_ms > 0 ? x->timeout_ms + EXEC_MARGIN_MS : -1, st, err);
	if (rc <= 0) {
		buf_free(&out[0]), buf_free(&out[1]);
		return rc < 0;
	}
	*st = status_of(c, r, err);
	buf_reset(&x->out);
	buf_reset(&x->err);
	buf_add(&x->out, out[0].data != NULL ? out[0].data : "", out[0].len);
	buf_add(&x->err, out[1].data != NULL ? out[1].data : "", out[1].len);
	x->out_cut = (int)num(r, "out_cut", 0);
	x->err_cut = (int)num(r, "err_cut", 0);
	x->exit_status = (int)num(r, "exit_status", -1);
	sig = lend_str(r, "exit_signal");
	snprintf(x->exit_signal, sizeof(x->exit_signal), "%s", sig != NULL ? sig : "");
	buf_free(&out[0]), buf_free(&out[1]);
	cJSON_Delete(r);
	return 1;
}

int lend_client_probe(struct conn *c, int timeout_ms, enum conn_status *st, char **err)
{
	cJSON *req = request("probe"), *r;
	int rc;

	cJSON_AddNumberToObject(req, "timeout_ms", timeout_ms);
	rc = do_call(c, req, NULL, 0, &r, NULL, 0, 0, timeout_ms + EXEC_MARGIN_MS, st, err);
	if (rc <= 0)
		return rc < 0;
	*st = status_of(c, r, err);
	cJSON_Delete(r);
	return 1;
}

int lend_client_stat(struct conn *c, const char *path, struct conn_stat *sb,
    enum conn_status *st, char **err)
{
	cJSON *req = request("stat"), *r;
	int rc;

	cJSON_AddStringToObject(req, "path", path);
	rc = do_call(c, req, NULL, 0, &r, NULL, 0, 0, SFTP_WAIT_MS, st, err);
	if (rc <= 0)
		return rc < 0;
	*st = status_of(c, r, err);
	memset(sb, 0, sizeof(*sb));
	sb->size = (uint64_t)num(r, "size", 0);
	sb->mtime = num(r, "mtime", 0);
	sb->mode = (uint32_t)num(r, "mode", 0);
	sb->is_dir = (int)num(r, "is_dir", 0);
	sb->is_reg = (int)num(r, "is_reg", 0);
	cJSON_Delete(r);
	return 1;
}

int lend_client_read(struct conn *c, const char *path, uint64_t offset, size_t max,
    struct buf *out, enum conn_status *st, char **err)
{
	cJSON *req = request("read"), *r;
	struct buf got;
	int rc;

	cJSON_AddStringToObject(req, "path", path);
	cJSON_AddNumberToObject(req, "offset", (double)offset);
	cJSON_AddNumberToObject(req, "max", (double)max);
	buf_init_secret(&got);	/* a file read may be a secret (Enroot's credentials) */
	rc = do_call(c, req, NULL, 0, &r, &got, 1, 0, SFTP_WAIT_MS, st, err);
	if (rc <= 0) {
		buf_free(&got);
		return rc < 0;
	}
	*st = status_of(c, r, err);
	if (*st == CONN_OK && got.len > 0)
		buf_add(out, got.data, got.len);
	buf_free(&got);
	cJSON_Delete(r);
	return 1;
}

int lend_client_write(struct conn *c, const char *path, const void *data, size_t len,
    mode_t mode, int flags, enum conn_status *st, char **err)
{
	cJSON *req = request("write"), *r;
	struct lend_blob in = { data, len };
	int rc;

	cJSON_AddStringToObject(req, "path", path);
	cJSON_AddNumberToObject(req, "mode", (double)mode);
	cJSON_AddNumberToObject(req, "flags", flags);
	rc = do_call(c, req, &in, 1, &r, NULL, 0, 1, SFTP_WAIT_MS, st, err);
	if (rc <= 0)
		return rc < 0;
	*st = status_of(c, r, err);
	cJSON_Delete(r);
	return 1;
}

/* mkdir -p and remove: op and a path (and a mode). */
static int path_op(struct conn *c, const char *op, const char *path, mode_t mode,
    enum conn_status *st, char **err)
{
	cJSON *req = request(op), *r;
	int rc;

	cJSON_AddStringToObject(req, "path", path);
	cJSON_AddNumberToObject(req, "mode", (double)mode);
	rc = do_call(c, req, NULL, 0, &r, NULL, 0, 1, SFTP_WAIT_MS, st, err);
	if (rc <= 0)
		return rc < 0;
	*st = status_of(c, r, err);
	cJSON_Delete(r);
	return 1;
}

int lend_client_mkdir(struct conn *c, const char *path, mode_t mode, enum conn_status *st,
    char **err)
{
	return path_op(c, "mkdir", path, mode, st, err);
}

int lend_client_unlink(struct conn *c, const char *path, enum conn_status *st, char **err)
{
	return path_op(c, "unlink", path, 0, st, err);
}

int conn_tails_lent(struct conn *c, struct conn_tail *t, size_t n, enum conn_status *st,
    char **err)
{
	cJSON *req, *r, *files;
	struct buf *got;
	const cJSON *f;
	size_t i = 0;
	int rc;

	if (c->lent_fd < 0)
		return 0;
	if (n == 0 || n > 8) {
		*st = conn_fail(err, CONN_REMOTE, "%zu files at once: a lent session reads 1 to 8", n);
		return 1;
	}
	req = request("tails");
	files = cJSON_AddArrayToObject(req, "files");
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", t[i].path);
		cJSON_AddNumberToObject(o, "offset", (double)t[i].offset);
		cJSON_AddNumberToObject(o, "max", (double)t[i].max);
		cJSON_AddItemToArray(files, o);
	}
	got = xcalloc(n, sizeof(*got));
	for (i = 0; i < n; i++)
		buf_init(&got[i]);
	rc = do_call(c, req, NULL, 0, &r, got, n, 0, SFTP_WAIT_MS, st, err);
	if (rc > 0) {
		*st = status_of(c, r, err);
		i = 0;
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "files")) {
			if (i >= n)
				break;
			t[i].from = (uint64_t)num(f, "from", (long long)t[i].offset);
			t[i].missing = (int)num(f, "missing", 0);
			if (*st == CONN_OK && got[i].len > 0)
				buf_add(t[i].out, got[i].data, got[i].len);
			i++;
		}
		cJSON_Delete(r);
	}
	for (i = 0; i < n; i++)
		buf_free(&got[i]);
	free(got);
	return rc > 0 ? 1 : rc < 0;
}

int conn_lent(const struct conn *c, const char **by, int *pid, unsigned *clients)
{
	if (c->lent_fd < 0)
		return 0;
	if (by != NULL)
		*by = c->lent_by;
	if (pid != NULL)
		*pid = c->lent_pid;
	if (clients != NULL)
		*clients = c->lent_clients;
	return 1;
}

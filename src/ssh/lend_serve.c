/*
 * A lender (ssh/lend.h): a socket in the user's private folder, a thread
 * accepting on it, and a thread per client that reads its requests, runs
 * each as the conn.h operation it names on the connection the backend
 * gives (the agent's own, the monitor's worker's) and sends back what the
 * operation returned, with the server's requests it cost counted.
 */
#include "util/compat.h"
#include "ssh/lend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ssh/tails.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define NBLOBS		8
#define TAILS_MAX	8
#define READ_MAX	((size_t)64 << 20)
#define ASK_WAIT_MS	120000	/* a user's answer to a server's question (sshd's
				 * LoginGraceTime), then it is declined */

struct client {
	struct lender	*l;
	int		 fd;
	int		 pid;		/* as the client said */
	void		*handle;	/* its connection, after its hello */
	int		 asked;		/* a server's question went to it */
	struct client	*next;
};

struct lender {
	char		*path;
	dev_t		 dev;		/* the socket file bound: removed at the end */
	ino_t		 ino;		/* only if it is still this one */
	int		 lfd;
	int		 wake[2];
	pthread_t	 accept_th;
	struct lend_backend b;
	lend_status_fn	*status_fn;
	void		*status_ctx;

	pthread_mutex_t	 lock;
	pthread_cond_t	 gone;		/* a client thread ended */
	struct client	*clients;
	unsigned	 nclients;	/* threads alive */
	unsigned	 lent;		/* clients past their hello */
	unsigned long	 served;
	unsigned long	 refused;	/* connections of other users */
	long long	 last_ms;
	int		 stopping;
	int		 stop_asked;
};

/* The client whose request runs on this thread: a server's question while
 * it runs is its to answer (lend_ask_client). */
static __thread struct client *asking;

/* A client's number, within [0, max] (a same-user client may still send
 * nonsense: no cast of it may overflow). */
static double num(const cJSON *o, const char *name, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	double d = cJSON_IsNumber(v) ? v->valuedouble : dflt;

	if (!(d >= 0))
		return 0;	/* negative, NaN */
	return d > 4294967295.0 * 65536 ? 4294967295.0 * 65536 : d;
}

static int num_int(const cJSON *o, const char *name, int dflt)
{
	double d = num(o, name, dflt);

	return d > 2147483647.0 ? 2147483647 : (int)d;
}

static void add_str(cJSON *o, const char *name, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

int lend_ask_client(const struct conn_challenge *ch, struct buf *answers, void *data)
{
	struct client *cl = asking;
	cJSON *h, *q, *ps, *r = NULL;
	struct buf got[NBLOBS];
	size_t i, n = 0;
	int rc = -1;

	(void)data;
	if (cl == NULL || ch->n == 0 || ch->n > NBLOBS)
		return -1;
	cl->asked = 1;
	h = cJSON_CreateObject();
	q = cJSON_AddObjectToObject(h, "ask");
	add_str(q, "host", ch->host);
	add_str(q, "name", ch->name);
	add_str(q, "instruction", ch->instruction);
	add_str(q, "said", ch->said);
	cJSON_AddNumberToObject(q, "attempt", ch->attempt);
	ps = cJSON_AddArrayToObject(q, "prompts");
	for (i = 0; i < ch->n; i++) {
		cJSON *p = cJSON_CreateObject();
		add_str(p, "text", ch->prompts[i].text);
		cJSON_AddNumberToObject(p, "echo", ch->prompts[i].echo);
		cJSON_AddItemToArray(ps, p);
	}
	for (i = 0; i < NBLOBS; i++)
		buf_init_secret(&got[i]);
	/* A user who never answers must not hold the connection for ever
	 * (every other command of that cluster waits behind it). */
	if (lend_send(cl->fd, h, NULL, 0) == 0 && lend_wait(cl->fd, ASK_WAIT_MS) == 0 &&
	    lend_recv(cl->fd, &r, got, NBLOBS, &n) == 0 &&
	    (size_t)num(r, "answers", 0) == ch->n && n == ch->n) {
		for (i = 0; i < n; i++)
			buf_add(&answers[i], got[i].data != NULL ? got[i].data : "", got[i].len);
		rc = 0;
	}
	cJSON_Delete(r);
	for (i = 0; i < NBLOBS; i++)
		buf_free(&got[i]);	/* wiped: they are secret */
	return rc;
}

/* ---- one operation, run on the lender's conn ----------------------------------------------------- */

struct op {
	const cJSON	*req;
	struct buf	*in;		/* the request's blobs */
	size_t		 nin;
	cJSON		*reply;
	struct buf	 out[NBLOBS];	/* the answer's blobs */
	size_t		 nout;
	struct conn_exec x;
	int		 ran;
};

static void counted(cJSON *r, const struct conn_counters *a, const struct conn_counters *b)
{
	cJSON_AddNumberToObject(r, "execs", (double)(b->execs - a->execs));
	cJSON_AddNumberToObject(r, "sftp_ops", (double)(b->sftp_ops - a->sftp_ops));
	cJSON_AddNumberToObject(r, "sftp_requests", (double)(b->sftp_requests - a->sftp_requests));
	cJSON_AddNumberToObject(r, "sftp_bytes_read",
	    (double)(b->sftp_bytes_read - a->sftp_bytes_read));
	cJSON_AddNumberToObject(r, "exec_bytes_read",
	    (double)(b->exec_bytes_read - a->exec_bytes_read));
}

static enum conn_status run_tails(struct conn *c, struct op *o, char **err)
{
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(o->req, "files"), *f;
	struct conn_tail t[TAILS_MAX];
	cJSON *list;
	enum conn_status st;
	size_t n = 0, i;

	cJSON_ArrayForEach(f, files) {
		if (n == TAILS_MAX || lend_str(f, "path") == NULL)
			return CONN_REMOTE;
		t[n] = (struct conn_tail){ .path = lend_str(f, "path"),
		    .offset = (uint64_t)num(f, "offset", 0), .max = (size_t)num(f, "max", 0),
		    .out = &o->out[n] };
		if (t[n].max > READ_MAX)
			t[n].max = READ_MAX;
		n++;
	}
	st = tails_read(c, t, n, err);
	list = cJSON_AddArrayToObject(o->reply, "files");
	for (i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "from", (double)t[i].from);
		cJSON_AddNumberToObject(e, "missing", t[i].missing);
		cJSON_AddItemToArray(list, e);
	}
	o->nout = n;
	return st;
}

static void run_op(struct conn *c, void *arg)
{
	struct op *o = arg;
	const char *op = lend_str(o->req, "op"), *path = lend_str(o->req, "path");
	struct conn_counters before = *conn_counters(c);
	enum conn_status st = CONN_REMOTE;
	char *err = NULL;

	o->ran = 1;
	o->reply = cJSON_CreateObject();
	if (strcmp(op, "exec") == 0 && lend_str(o->req, "cmd") != NULL) {
		conn_exec_init(&o->x, lend_str(o->req, "cmd"));
		if (o->nin > 0) {
			o->x.in = o->in[0].data;
			o->x.in_len = o->in[0].len;
		}
		/* What the command prints may be a secret (a credentials
		 * file read by a remote command): wiped when freed. */
		buf_init_secret(&o->x.out);
		buf_init_secret(&o->x.err);
		o->x.out_cap = (size_t)num(o->req, "out_cap", 0);
		o->x.err_cap = (size_t)num(o->req, "err_cap", 0);
		if (o->x.out_cap > READ_MAX)
			o->x.out_cap = READ_MAX;
		if (o->x.err_cap > READ_MAX)
			o->x.err_cap = READ_MAX;
		o->x.timeout_ms = num_int(o->req, "timeout_ms", 0);
		st = conn_exec(c, &o->x, &err);
		cJSON_AddNumberToObject(o->reply, "exit_status", o->x.exit_status);
		cJSON_AddStringToObject(o->reply, "exit_signal", o->x.exit_signal);
		cJSON_AddNumberToObject(o->reply, "out_cut", o->x.out_cut);
		cJSON_AddNumberToObject(o->reply, "err_cut", o->x.err_cut);
		o->nout = 2;	/* sent from x's own buffers */
	} else if (strcmp(op, "probe") == 0) {
		st = conn_probe(c, num_int(o->req, "timeout_ms", 5000), &err);
	} else if (strcmp(op, "stat") == 0 && path != NULL) {
		struct conn_stat sb;
		st = conn_stat(c, path, &sb, &err);
		if (st == CONN_OK) {
			cJSON_AddNumberToObject(o->reply, "size", (double)sb.size);
			cJSON_AddNumberToObject(o->reply, "mtime", (double)sb.mtime);
			cJSON_AddNumberToObject(o->reply, "mode", sb.mode);
			cJSON_AddNumberToObject(o->reply, "is_dir", sb.is_dir);
			cJSON_AddNumberToObject(o->reply, "is_reg", sb.is_reg);
		}
	} else if (strcmp(op, "read") == 0 && path != NULL) {
		size_t max = (size_t)num(o->req, "max", 0);
		st = conn_read_at(c, path, (uint64_t)num(o->req, "offset", 0),
		    max > READ_MAX ? READ_MAX : max, &o->out[0], &err);
		o->nout = 1;
	} else if (strcmp(op, "write") == 0 && path != NULL && o->nin == 1) {
		st = conn_write_file(c, path, o->in[0].data != NULL ? o->in[0].data : "", o->in[0].len,
		    (mode_t)(num_int(o->req, "mode", 0600) & 07777),
		    num_int(o->req, "flags", 0) & (CONN_WRITE_EXCL | CONN_WRITE_ATOMIC), &err);
	} else if (strcmp(op, "mkdir") == 0 && path != NULL) {
		st = conn_mkdir_p(c, path, (mode_t)(num_int(o->req, "mode", 0700) & 07777), &err);
	} else if (strcmp(op, "unlink") == 0 && path != NULL) {
		st = conn_unlink(c, path, &err);
	} else if (strcmp(op, "tails") == 0) {
		st = run_tails(c, o, &err);
	} else {
		err = xasprintf("the lender does not know the request '%s'", op);
	}
	cJSON_AddNumberToObject(o->reply, "status", st);
	add_str(o->reply, "err", err);
	counted(o->reply, &before, conn_counters(c));
	free(err);
}

/* The hello's connection: made if it is not (a question on the way goes
 * to the client). */
static void run_hello(struct conn *c, void *arg)
{
	struct op *o = arg;
	enum conn_status st = CONN_OK;
	char *err = NULL;

	o->ran = 1;
	o->reply = cJSON_CreateObject();
	if (!conn_is_connected(c))
		st = conn_connect(c, &err);
	cJSON_AddTrueToObject(o->reply, "ok");
	cJSON_AddNumberToObject(o->reply, "status", st);
	add_str(o->reply, "err", err);
	if (st == CONN_HOSTKEY_UNKNOWN || st == CONN_HOSTKEY_CHANGED) {
		add_str(o->reply, "refused_host", conn_refused_host(c));
		add_str(o->reply, "refused_fp", conn_refused_fingerprint(c));
	}
	add_str(o->reply, "host", conn_host(c));
	add_str(o->reply, "banner", conn_banner(c));
	free(err);
}

/* ---- a client ---------------------------------------------------------------------------- */

static cJSON *refusal(const char *why)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddFalseToObject(r, "ok");
	cJSON_AddStringToObject(r, "why", why);
	return r;
}

static cJSON *status_reply(struct lender *l)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddTrueToObject(r, "ok");
	cJSON_AddStringToObject(r, "lender", l->b.kind);
	cJSON_AddNumberToObject(r, "pid", (double)getpid());
	pthread_mutex_lock(&l->lock);
	cJSON_AddNumberToObject(r, "clients", l->lent);
	cJSON_AddNumberToObject(r, "served", (double)l->served);
	cJSON_AddNumberToObject(r, "refused", (double)l->refused);
	cJSON_AddNumberToObject(r, "idle_ms", (double)(lend_now_ms() - l->last_ms));
	pthread_mutex_unlock(&l->lock);
	if (l->status_fn != NULL)
		l->status_fn(l->status_ctx, r);
	return r;
}

/* One request of cl's, answered. -1: the client is gone or spoke
 * nonsense. */
static int serve_one(struct client *cl, cJSON *req, struct buf *in, size_t nin)
{
	struct lender *l = cl->l;
	const char *op = lend_str(req, "op");
	struct op o;
	struct lend_blob out[NBLOBS];
	size_t i;
	int rc;

	if (op == NULL)
		return -1;
	if (strcmp(op, "status") == 0)
		return lend_send(cl->fd, status_reply(l), NULL, 0);
	if (strcmp(op, "stop") == 0) {
		pthread_mutex_lock(&l->lock);
		l->stop_asked = 1;
		pthread_mutex_unlock(&l->lock);
		return lend_send(cl->fd, status_reply(l), NULL, 0);
	}
	memset(&o, 0, sizeof(o));
	o.req = req;
	o.in = in;
	o.nin = nin;
	for (i = 0; i < NBLOBS; i++)
		buf_init_secret(&o.out[i]);	/* a file read may be a secret */
	if (strcmp(op, "hello") == 0) {
		const char *key = lend_str(req, "key");
		cJSON *target = key != NULL ? cJSON_Parse(key) : NULL;
		char *why = NULL;
		if (cl->handle != NULL || num(req, "version", 0) != LEND_VERSION || target == NULL) {
			cJSON_Delete(target);
			return lend_send(cl->fd, refusal("a hello this lender does not speak"), NULL, 0);
		}
		cl->pid = num_int(req, "pid", 0);
		cl->handle = l->b.find(l->b.ctx, key, target, &why);
		cJSON_Delete(target);
		if (cl->handle == NULL) {
			rc = lend_send(cl->fd, refusal(why != NULL ? why : "no such connection here"),
			    NULL, 0);
			free(why);
			return rc;
		}
		asking = cl;
		rc = l->b.run(l->b.ctx, cl->handle, run_hello, &o);
		asking = NULL;
		if (rc != 0 || !o.ran) {
			cJSON_Delete(o.reply);
			cl->handle = NULL;
			return lend_send(cl->fd, refusal("the lender is stopping"), NULL, 0);
		}
		cJSON_AddStringToObject(o.reply, "lender", l->b.kind);
		cJSON_AddNumberToObject(o.reply, "pid", (double)getpid());
		cJSON_AddNumberToObject(o.reply, "asked", cl->asked);
		pthread_mutex_lock(&l->lock);
		if (num(o.reply, "status", 1) == CONN_OK) {
			l->lent++;
			log_msg(LOG_INFO, "lend: %s: lent to pid %d", l->b.kind, cl->pid);
		}
		else
			cl->handle = NULL;
		cJSON_AddNumberToObject(o.reply, "clients", l->lent);
		l->last_ms = lend_now_ms();
		pthread_mutex_unlock(&l->lock);
		return lend_send(cl->fd, o.reply, NULL, 0);
	}
	if (cl->handle == NULL)
		return -1;	/* an operation before a yes: not ours to run */
	asking = cl;
	rc = l->b.run(l->b.ctx, cl->handle, run_op, &o);
	asking = NULL;
	if (rc != 0 || !o.ran) {
		cJSON *r = cJSON_CreateObject();
		cJSON_Delete(o.reply);
		conn_exec_free(&o.x);
		for (i = 0; i < NBLOBS; i++)
			buf_free(&o.out[i]);
		/* Not run: the client does it on its own connection, from now. */
		cJSON_AddTrueToObject(r, "not_run");
		lend_send(cl->fd, r, NULL, 0);
		return -1;
	}
	if (strcmp(op, "exec") == 0) {
		out[0] = (struct lend_blob){ o.x.out.data, o.x.out.len };
		out[1] = (struct lend_blob){ o.x.err.data, o.x.err.len };
	} else {
		for (i = 0; i < o.nout; i++)
			out[i] = (struct lend_blob){ o.out[i].data, o.out[i].len };
	}
	rc = lend_send(cl->fd, o.reply, out, o.nout);
	conn_exec_free(&o.x);
	for (i = 0; i < NBLOBS; i++)
		buf_free(&o.out[i]);
	pthread_mutex_lock(&l->lock);
	l->served++;
	l->last_ms = lend_now_ms();
	pthread_mutex_unlock(&l->lock);
	return rc;
}

static void *client_main(void *arg)
{
	struct client *cl = arg, **pp;
	struct lender *l = cl->l;
	struct buf in[NBLOBS];
	size_t i, n;
	cJSON *req;

	/* A command's standard input may carry a secret (a submit's): wiped
	 * as the buffers are reused and at the end, never kept. */
	for (i = 0; i < NBLOBS; i++)
		buf_init_secret(&in[i]);
	while (lend_recv(cl->fd, &req, in, NBLOBS, &n) == 0) {
		int rc = serve_one(cl, req, in, n);
		cJSON_Delete(req);
		if (rc != 0)
			break;
	}
	for (i = 0; i < NBLOBS; i++)
		buf_free(&in[i]);
	pthread_mutex_lock(&l->lock);
	for (pp = &l->clients; *pp != NULL; pp = &(*pp)->next)
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	/* Only a borrower's leaving counts as use: `agent status` asking
	 * does not keep an agent alive. */
	if (cl->handle != NULL) {
		l->lent--;
		l->last_ms = lend_now_ms();
	}
	l->nclients--;
	close(cl->fd);
	free(cl);
	pthread_cond_broadcast(&l->gone);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct lender *l = arg;

	for (;;) {
		struct pollfd p[2] = { { l->lfd, POLLIN, 0 }, { l->wake[0], POLLIN, 0 } };
		struct client *cl;
		pthread_attr_t at;
		pthread_t th;
		int fd, uid = -1;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept(l->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		/* Not for a child this process starts (a ProxyCommand). */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		if (!lend_peer_ok(fd, &uid)) {
			log_msg(LOG_WARN, "lend: refused a connection from uid %d (not this user)", uid);
			pthread_mutex_lock(&l->lock);
			l->refused++;
			pthread_mutex_unlock(&l->lock);
			close(fd);
			continue;
		}
		cl = xcalloc(1, sizeof(*cl));
		cl->l = l;
		cl->fd = fd;
		pthread_mutex_lock(&l->lock);
		if (l->stopping) {
			pthread_mutex_unlock(&l->lock);
			close(fd);
			free(cl);
			break;
		}
		cl->next = l->clients;
		l->clients = cl;
		l->nclients++;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&th, &at, client_main, cl) != 0) {
			l->clients = cl->next;
			l->nclients--;
			close(fd);
			free(cl);
		}
		pthread_attr_destroy(&at);
		pthread_mutex_unlock(&l->lock);
	}
	return NULL;
}

struct lender *lender_start(const char *dir, const char *name, const struct lend_backend *b,
    char **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct lender *l;
	int fd;

	if (lend_dir_check(dir, err) != 0)
		return NULL;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name) >=
	    sizeof(sa.sun_path)) {
		*err = xasprintf("%s/%s: the path is too long for a socket", dir, name);
		return NULL;
	}
	/* A live lender keeps its socket; a dead one's is taken over. */
	fd = lend_dial(dir, name);
	if (fd >= 0) {
		close(fd);
		*err = xasprintf("%s: another taotop lends there already", sa.sun_path);
		return NULL;
	}
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(sa.sun_path, 0600) != 0 || listen(fd, 16) != 0) {
		*err = xasprintf("%s: %s", sa.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	l = xcalloc(1, sizeof(*l));
	l->path = xstrdup(sa.sun_path);
	{
		struct stat sb;
		if (stat(l->path, &sb) == 0)
			l->dev = sb.st_dev, l->ino = sb.st_ino;
	}
	l->lfd = fd;
	l->b = *b;
	l->last_ms = lend_now_ms();
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->gone, NULL);
	if (compat_pipe_nb_cloexec(l->wake) != 0 ||
	    pthread_create(&l->accept_th, NULL, accept_main, l) != 0) {
		*err = xasprintf("%s: cannot start its thread", sa.sun_path);
		unlink(l->path);
		close(fd);
		free(l->path);
		free(l);
		return NULL;
	}
	log_msg(LOG_INFO, "lend: %s lends its sessions at %s", b->kind, l->path);
	return l;
}

void lender_stop(struct lender *l)
{
	struct client *cl;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->lock);
	l->stopping = 1;
	pthread_mutex_unlock(&l->lock);
	if (write(l->wake[1], "x", 1) < 0)
		log_msg(LOG_WARN, "lend: cannot wake the accepting thread");
	pthread_join(l->accept_th, NULL);
	/* Only the socket that is still ours: a lender started since may
	 * have replaced it. */
	{
		struct stat sb;
		if (stat(l->path, &sb) == 0 && sb.st_dev == l->dev && sb.st_ino == l->ino)
			unlink(l->path);
	}
	close(l->lfd);
	pthread_mutex_lock(&l->lock);
	for (cl = l->clients; cl != NULL; cl = cl->next)
		shutdown(cl->fd, SHUT_RDWR);
	while (l->nclients > 0)
		pthread_cond_wait(&l->gone, &l->lock);
	pthread_mutex_unlock(&l->lock);
	close(l->wake[0]);
	close(l->wake[1]);
	pthread_cond_destroy(&l->gone);
	pthread_mutex_destroy(&l->lock);
	free(l->path);
	free(l);
}

unsigned lender_clients(const struct lender *l)
{
	unsigned n;

	if (l == NULL)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	n = l->lent;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
	return n;
}

unsigned long lender_served(const struct lender *l)
{
	unsigned long n;

	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	n = l->served;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
	return n;
}

long long lender_last_ms(const struct lender *l)
{
	long long n;

	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	n = l->lent > 0 ? lend_now_ms() : l->last_ms;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
	return n;
}

int lender_stop_asked(const struct lender *l)
{
	int n;

	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	n = l->stop_asked;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
	return n;
}

void lender_on_status(struct lender *l, lend_status_fn *fn, void *ctx)
{
	l->status_fn = fn;
	l->status_ctx = ctx;
}

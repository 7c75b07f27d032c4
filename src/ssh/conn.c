/*
 * The conn object and its session: the host list, connecting with failover
 * over it (through the jump hosts when there are any), trust on first use,
 * and the error helper every part reports with. Host keys and
 * authentication are in conn_auth.c, the jump hosts in conn_jump.c, commands
 * in conn_exec.c, files in conn_sftp.c; conn_priv.h is what they share.
 */
#include "util/compat.h"
#include "ssh/conn_priv.h"
#include "ssh/sftp_kept.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ssh_set_log_callback */
#include <libssh/callbacks.h>

#include "ssh/quote.h"
#include "util/log.h"
#include "util/xmalloc.h"


/* ---- errors -------------------------------------------------------------- */

const char *conn_status_name(enum conn_status st)
{
	static const char *names[] = {
		[CONN_OK] = "ok",
		[CONN_UNREACHABLE] = "unreachable",
		[CONN_HOSTKEY_UNKNOWN] = "host-key-unknown",
		[CONN_HOSTKEY_CHANGED] = "host-key-changed",
		[CONN_AUTH] = "auth-failed",
		[CONN_TIMEOUT] = "timeout",
		[CONN_DISCONNECTED] = "disconnected",
		[CONN_CANCELLED] = "cancelled",
		[CONN_NOTFOUND] = "not-found",
		[CONN_REMOTE] = "remote-error",
	};
	if ((size_t)st < sizeof(names) / sizeof(names[0]) && names[st] != NULL)
		return names[st];
	return "unknown";
}

enum conn_status conn_fail(char **err, enum conn_status st, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	log_msg(LOG_WARN, "ssh: %s", msg);
	if (err != NULL) {
		free(*err);
		*err = msg;
	} else {
		free(msg);
	}
	return st;
}

/* ---- library setup ------------------------------------------------------- */

/* libssh would log to stderr, under the UI: send it to our log file. */
static void libssh_log(int priority, const char *function, const char *buffer,
    void *userdata)
{
	(void)userdata;
	log_msg(priority <= SSH_LOG_WARN ? LOG_WARN : LOG_DEBUG, "libssh %s: %s",
	    function, buffer);
}

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_init(void)
{
	/* libssh 0.11 follows a ProxyJump itself, with its own host-key
	 * rules and no way to ask for a one-time code; this asks it for the
	 * ProxyCommand form 0.10 makes, which prepare() reads back into
	 * taotop's own jump chain (and never runs). main() sets it before any
	 * thread exists; this is for programs that start with the library. */
	setenv("OPENSSH_PROXYJUMP", "1", 0);
	ssh_init();
	ssh_set_log_callback(libssh_log);
	ssh_set_log_level(SSH_LOG_WARN);
}

/* ---- the host list --------------------------------------------------------- */

static int parse_host(const char *spec, struct host *h)
{
	const char *at = strchr(spec, '@'), *p = spec, *colon;

	memset(h, 0, sizeof(*h));
	h->display = xstrdup(spec);
	if (at != NULL) {
		h->user = xstrndup(spec, (size_t)(at - spec));
		p = at + 1;
	}
	if (*p == '[') {
		const char *close = strchr(p, ']');
		if (close == NULL)
			return -1;
		h->name = xstrndup(p + 1, (size_t)(close - p - 1));
		if (close[1] == ':')
			h->port = atoi(close + 2);
		else if (close[1] != '\0')
			return -1;
	} else if ((colon = strchr(p, ':')) != NULL && strchr(colon + 1, ':') == NULL) {
		h->name = xstrndup(p, (size_t)(colon - p));
		h->port = atoi(colon + 1);
		if (h->port <= 0 || h->port > 65535)
			return -1;
	} else {
		h->name = xstrdup(p);
	}
	return h->name[0] == '\0' ? -1 : 0;
}

void conn_free_host(struct host *h)
{
	free(h->name);
	free(h->user);
	free(h->display);
}

char *conn_known_hosts_name(const char *spec)
{
	struct host h;
	char *name, *q;

	if (spec == NULL || parse_host(spec, &h) != 0) {
		if (spec != NULL)
			conn_free_host(&h);
		return xstrdup("HOST");
	}
	/* known_hosts names a host on another port "[host]:port". */
	if (h.port != 0 && h.port != 22) {
		name = xasprintf("[%s]:%d", h.name, h.port);
		q = sh_quote(name);
		free(name);
	} else {
		q = sh_quote(h.name);
	}
	conn_free_host(&h);
	return q;
}

char *conn_dup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

void conn_parse_hosts(const char *spec, struct host **hosts, size_t *n)
{
	char *list = xstrdup(spec), *item, *save = NULL;

	for (item = strtok_r(list, ", \t", &save); item != NULL; item = strtok_r(NULL, ", \t", &save)) {
		struct host h;
		if (parse_host(item, &h) != 0) {
			/* Kept with no name: connecting reports it. */
			free(h.name);
			h.name = NULL;
		}
		*hosts = xreallocarray(*hosts, *n + 1, sizeof(**hosts));
		(*hosts)[(*n)++] = h;
	}
	free(list);
}

struct conn *conn_new(const struct conn_target *t)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	pthread_once(&lib_once, lib_init);
	pthread_mutex_init(&c->live_lock, NULL);
	c->live_fd = -1;
	atomic_init(&c->sftp_since, 0);
	c->hosts_spec = xstrdup(t->hosts != NULL ? t->hosts : "");
	c->user = conn_dup(t->user);
	c->key_path = conn_dup(t->key_path);
	c->known_hosts = conn_dup(t->known_hosts);
	c->ssh_config = conn_dup(t->ssh_config);
	c->connect_timeout_s = t->connect_timeout_s > 0 ? t->connect_timeout_s : CONN_CONNECT_DEFAULT_S;
	c->jump_spec = conn_dup(t->jump);
	c->ask = t->ask;
	c->ask_data = t->ask_data;
	c->password_auth = t->password_auth;
	c->lend_dir = conn_dup(t->lend_dir);
	c->lend_start = t->lend_start;
	c->lend_start_data = t->lend_start_data;
	c->lent_fd = -1;

	conn_parse_hosts(c->hosts_spec, &c->hosts, &c->nhosts);
	return c;
}


void conn_drop_session(struct conn *c)
{
	sftp_kept_forget(&c->kept);	/* before the session they belong to */
	pthread_mutex_lock(&c->live_lock);
	c->live_fd = -1;
	pthread_mutex_unlock(&c->live_lock);
	if (c->sftp != NULL) {
		sftp_free(c->sftp);
		c->sftp = NULL;
	}
	c->spare = NULL;	/* a channel of c->s: ssh_free frees it */
	if (c->s != NULL) {
		ssh_disconnect(c->s);
		ssh_free(c->s);
		c->s = NULL;
	}
	/* After the session they carry: its end of the socketpair is closed. */
	conn_hops_free(c->hops, c->nhops);
	c->hops = NULL;
	c->nhops = 0;
	c->at = NULL;
	free(c->banner);
	c->banner = NULL;
}

void conn_disconnect(struct conn *c)
{
	lend_client_drop(c);
	conn_drop_session(c);
}

void conn_free(struct conn *c)
{
	size_t i;

	if (c == NULL)
		return;
	lend_client_drop(c);
	conn_drop_session(c);
	free(c->lend_dir);
	for (i = 0; i < c->nhosts; i++)
		conn_free_host(&c->hosts[i]);
	free(c->hosts);
	for (i = 0; i < c->njumps; i++)
		conn_free_host(&c->jumps[i]);
	free(c->jumps);
	free(c->jump_spec);
	free(c->hosts_spec);
	free(c->user);
	free(c->key_path);
	free(c->known_hosts);
	free(c->ssh_config);
	free(c->refused_host);
	free(c->refused_fp);
	free(c->cut_needle);
	free(c->lose_needle);
	pthread_mutex_destroy(&c->live_lock);
	free(c);
}

int conn_is_connected(const struct conn *c)
{
	if (c->lent_fd >= 0)
		return 1;
	return c->s != NULL && ssh_is_connected(c->s);
}

const char *conn_host(const struct conn *c)
{
	if (c->lent_fd >= 0)
		return c->lent_host;
	return c->at != NULL ? c->at->display : NULL;
}

const char *conn_banner(const struct conn *c)
{
	return c->banner;
}

const char *conn_refused_host(const struct conn *c)
{
	return c->refused_host;
}

const char *conn_refused_fingerprint(const struct conn *c)
{
	return c->refused_fp;
}

const struct conn_counters *conn_counters(const struct conn *c)
{
	return &c->counters;
}


void conn_test_cut_after(struct conn *c, const char *needle)
{
	free(c->cut_needle);
	c->cut_needle = conn_dup(needle);
}

void conn_test_lose_next(struct conn *c, const char *needle, int n)
{
	free(c->lose_needle);
	c->lose_needle = conn_dup(needle);
	c->lose_left = needle != NULL ? n : 0;
}

size_t conn_nhosts(const struct conn *c)
{
	return c->nhosts;
}

const char *conn_host_at(const struct conn *c, size_t i)
{
	return i < c->nhosts ? c->hosts[i].display : NULL;
}

struct conn *conn_new_one(const struct conn *c, size_t i)
{
	struct conn_target t = {
		.hosts = conn_host_at(c, i), .user = c->user, .key_path = c->key_path,
		.known_hosts = c->known_hosts, .ssh_config = c->ssh_config,
		.connect_timeout_s = c->connect_timeout_s, .jump = c->jump_spec,
		.password_auth = 0,
	};

	return conn_new(&t);
}


/* A session for h with its options (ssh config, user, port, timeouts), not
 * connected. For the login host (jumps != NULL), the ProxyJump the config
 * gives it comes back in *jumps. */
static enum conn_status prepare(struct conn *c, const struct host *h, int is_jump,
    char **jumps, ssh_session *out, char **err)
{
	ssh_session s;
	char *proxy = NULL, *cfg_user = NULL;
	long timeout = c->connect_timeout_s;
	int yes = 1, no = 0;

	*out = NULL;
	if (h->name == NULL)
		return conn_fail(err, CONN_UNREACHABLE, "'%s' is not a host name: write %s as host, "
		    "host:port or user@host, separated by commas", h->display,
		    is_jump ? "jump hosts" : "login hosts");
	s = ssh_new();
	if (s == NULL)
		return conn_fail(err, CONN_REMOTE, "%s: libssh could not make a session", h->display);
	ssh_options_set(s, SSH_OPTIONS_HOST, h->name);
	/* ~/.ssh/config first, so that what the user gave explicitly wins. */
	if (c->ssh_config == NULL) {
		if (ssh_options_parse_config(s, NULL) != 0)
			log_msg(LOG_WARN, "ssh: %s: could not parse ~/.ssh/config", h->display);
	} else if (c->ssh_config[0] != '\0') {
		if (ssh_options_parse_config(s, c->ssh_config) != 0) {
			ssh_free(s);
			return conn_fail(err, CONN_REMOTE, "%s: cannot parse ssh config %s",
			    h->display, c->ssh_config);
		}
	}
	ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
	if (ssh_options_get(s, SSH_OPTIONS_PROXYCOMMAND, &proxy) == SSH_OK && proxy != NULL) {
		char *list = NULL;
		if (conn_proxy_to_jumps(proxy, &list) != 0) {
			enum conn_status st = conn_fail(err, CONN_REMOTE, "%s: ~/.ssh/config gives it a "
			    "ProxyCommand (%s); taotop runs no other program to connect: write the "
			    "jump host as ProxyJump there, or as jump: in the cluster's config",
			    h->display, proxy);
			ssh_string_free_char(proxy);
			ssh_free(s);
			return st;
		}
		if (jumps != NULL)
			*jumps = list;
		else {
			log_msg(LOG_INFO, "ssh: jump host %s: its own ProxyJump (%s) is not used: "
			    "the chain comes from the login host's", h->display, list);
			free(list);
		}
		ssh_string_free_char(proxy);
	}
	/* Never let libssh start a process. */
	ssh_options_set(s, SSH_OPTIONS_PROXYCOMMAND, "none");
	if (is_jump && ssh_options_get(s, SSH_OPTIONS_USER, &cfg_user) == SSH_OK)
		;	/* ~/.ssh/config names this jump host's user: it wins */
	else if (h->user == NULL && c->user != NULL)
		ssh_options_set(s, SSH_OPTIONS_USER, c->user);
	ssh_string_free_char(cfg_user);
	if (h->user != NULL)
		ssh_options_set(s, SSH_OPTIONS_USER, h->user);
	if (h->port != 0)
		ssh_options_set(s, SSH_OPTIONS_PORT, &h->port);
	ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout);
	/* Without NODELAY every channel open waits on Nagle + delayed ACK. */
	ssh_options_set(s, SSH_OPTIONS_NODELAY, &yes);
	if (c->known_hosts != NULL)
		ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, c->known_hosts);
	*out = s;
	return CONN_OK;
}

/*
 * Open a session to h, through the jump hosts when there are any (from the
 * cluster's config, else the ProxyJump ~/.ssh/config gives h): each jump
 * host connected, its key checked and authenticated like a login host, and
 * the next one reached over a direct-tcpip channel of it. With tr, stop
 * once the host to trust was reached and its key written.
 */
static enum conn_status open_host(struct conn *c, const struct host *h, struct trust *tr,
    ssh_session *out, struct hop **hops_out, size_t *nhops_out, char **err)
{
	ssh_session s = NULL, js;
	char *cfg_jumps = NULL;
	struct hop *hops = NULL;
	size_t i;
	int fd = -1;
	enum conn_status st;

	*out = NULL;
	*hops_out = NULL;
	*nhops_out = 0;
	st = prepare(c, h, 0, &cfg_jumps, &s, err);
	if (st != CONN_OK)
		return st;
	conn_set_jumps(c, c->jump_spec != NULL ? c->jump_spec : cfg_jumps);
	free(cfg_jumps);
	if (c->njumps > 0)
		hops = xcalloc(c->njumps, sizeof(*hops));
	for (i = 0; i < c->njumps; i++) {
		const struct host *j = &c->jumps[i], *next = i + 1 < c->njumps ? &c->jumps[i + 1] : h;
		ssh_session ns = NULL;

		hops[i].fd = -1;
		st = prepare(c, j, 1, NULL, &js, err);
		if (st != CONN_OK)
			goto out;
		hops[i].s = js;
		*nhops_out = i + 1;
		st = conn_finish_session(c, js, j, fd, tr, err);
		fd = -1;
		if (st != CONN_OK || (tr != NULL && tr->done))
			goto out;
		log_msg(LOG_INFO, "ssh: through jump host %s (%s)", j->display,
		    ssh_get_serverbanner(js) ? ssh_get_serverbanner(js) : "");
		if (next == h) {
			ns = s;
		} else {
			st = prepare(c, next, 1, NULL, &ns, err);
			if (st != CONN_OK)
				goto out;
		}
		st = conn_forward(&hops[i], j, ns, next, &fd, err);
		if (ns != s)
			ssh_free(ns);	/* made for its HostName and port only */
		if (st != CONN_OK)
			goto out;
	}
	st = conn_finish_session(c, s, h, fd, tr, err);
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	if (st != CONN_OK || tr != NULL) {
		if (s != NULL) {
			ssh_disconnect(s);
			ssh_free(s);
		}
		conn_hops_free(hops, *nhops_out);
		*nhops_out = 0;
		return st;
	}
	*out = s;
	*hops_out = hops;
	if (hops != NULL && *nhops_out == 0) {
		free(hops);
		*hops_out = NULL;
	}
	return CONN_OK;
}

enum conn_status conn_connect(struct conn *c, char **err)
{
	struct buf why;
	size_t i;

	enum conn_status lst;

	if (conn_is_connected(c))
		return CONN_OK;
	conn_drop_session(c);
	/* A session another taotop lends first: nothing to pay for it. */
	if (c->nhosts > 0 && lend_client_connect(c, &lst, err))
		return lst;
	if (c->nhosts == 0)
		return conn_fail(err, CONN_UNREACHABLE, "no login host given: set SLURM_HOSTNAME "
		    "(comma-separated hosts) or hosts: in the cluster's config");
	buf_init(&why);
	for (i = 0; i < c->nhosts; i++) {
		char *e = NULL;
		ssh_session s;
		struct hop *hops;
		size_t nhops;
		enum conn_status st = open_host(c, &c->hosts[i], NULL, &s, &hops, &nhops, &e);

		if (st == CONN_OK) {
			c->s = s;
			c->hops = hops;
			c->nhops = nhops;
			c->at = &c->hosts[i];
			c->banner = xstrdup(ssh_get_serverbanner(s) ? ssh_get_serverbanner(s) : "");
			c->counters.connects++;
			pthread_mutex_lock(&c->live_lock);
			c->live_fd = ssh_get_fd(s);
			pthread_mutex_unlock(&c->live_lock);
			log_msg(LOG_INFO, "ssh: connected to %s (%s)%s", c->at->display, c->banner,
			    nhops ? " through jump hosts" : "");
			buf_free(&why);
			free(e);
			return CONN_OK;
		}
		if (st != CONN_UNREACHABLE) {
			/* Not the network: a host key or authentication problem
			 * is the user's to see, not ours to route around. */
			if (err != NULL) {
				free(*err);
				*err = e;
			} else {
				free(e);
			}
			buf_free(&why);
			return st;
		}
		buf_addf(&why, "%s%s", why.len ? "; " : "", e);
		free(e);
	}
	conn_fail(err, CONN_UNREACHABLE, "no login host answered: %s", why.data);
	buf_free(&why);
	return CONN_UNREACHABLE;
}

enum conn_status conn_trust_host(struct conn *c, const char *host, const char *fingerprint,
    char **err)
{
	const struct host *h = NULL;
	struct trust tr = { .host = host, .fp = fingerprint };
	ssh_session s;
	struct hop *hops;
	size_t i, nhops;
	enum conn_status st;

	for (i = 0; i < c->nhosts; i++)
		if (strcmp(c->hosts[i].display, host) == 0)
			h = &c->hosts[i];
	for (i = 0; h == NULL && i < c->njumps; i++)
		if (strcmp(c->jumps[i].display, host) == 0)
			h = &c->hosts[0];	/* reached on the way to the first login host */
	if (h == NULL)
		return conn_fail(err, CONN_REMOTE, "%s is not one of this cluster's login or jump hosts "
		    "(%s)", host, c->hosts_spec);
	st = open_host(c, h, &tr, &s, &hops, &nhops, err);
	if (st == CONN_OK && !tr.done)
		st = conn_fail(err, CONN_REMOTE, "%s: was not reached to accept its key", host);
	if (st == CONN_OK && c->refused_host != NULL && strcmp(c->refused_host, host) == 0) {
		free(c->refused_host);
		free(c->refused_fp);
		c->refused_host = c->refused_fp = NULL;
	}
	return st;
}


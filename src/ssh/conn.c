#include "util/compat.h"
#include "ssh/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
/* ssh_send_keepalive is declared here, though clients may use it too. */
#include <libssh/server.h>
#include <libssh/sftp.h>

#include "ssh/quote.h"
#include "ssh/sftp_kept.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define DEFAULT_OUT_CAP		(64u << 20)
#define DEFAULT_ERR_CAP		(1u << 20)
#define DEFAULT_CONNECT_S	10
#define IO_CHUNK		(64u << 10)
#define ASK_TRIES		3	/* answers refused before giving up */

/* One entry of the host list: "[user@]name[:port]". */
struct host {
	char	*name;
	char	*user;		/* NULL: not given */
	int	 port;		/* 0: not given */
	char	*display;	/* as the user wrote it, for messages */
};

/* A jump host in use: its session, the direct-tcpip channel to the next
 * hop, and the thread that pumps bytes between that channel and the
 * socketpair the next hop's session reads (the next session owns the other
 * end). After the hand-over only the pump thread touches s and ch. */
struct hop {
	ssh_session	 s;
	ssh_channel	 ch;
	int		 fd;		/* our end of the socketpair, or -1 */
	pthread_t	 th;
	int		 running;
	atomic_int	 stop;
};

struct conn {
	char		*hosts_spec;
	char		*user;
	char		*key_path;
	char		*known_hosts;
	char		*ssh_config;
	int		 connect_timeout_s;
	char		*jump_spec;	/* NULL: ~/.ssh/config's ProxyJump */
	conn_ask_fn	*ask;
	void		*ask_data;
	int		 password_auth;

	struct host	*hosts;
	size_t		 nhosts;
	struct host	*jumps;		/* of the last connect: for messages, trust */
	size_t		 njumps;
	struct hop	*hops;		/* under c->s, first to last */
	size_t		 nhops;

	ssh_session	 s;
	sftp_session	 sftp;
	struct sftp_kept *kept;	/* ssh/tails.c's files kept open on sftp */
	const struct host *at;	/* the host connected to */
	char		*banner;

	char		*refused_host;
	char		*refused_fp;

	struct conn_counters counters;
	char		*cut_needle;
};

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

static enum conn_status fail(char **err, enum conn_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum conn_status fail(char **err, enum conn_status st, const char *fmt, ...)
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

static void free_host(struct host *h)
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
			free_host(&h);
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
	free_host(&h);
	return q;
}

static char *dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* A comma-separated list of "[user@]name[:port]" appended to *hosts. */
static void parse_hosts(const char *spec, struct host **hosts, size_t *n)
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
	c->hosts_spec = xstrdup(t->hosts != NULL ? t->hosts : "");
	c->user = dup_or_null(t->user);
	c->key_path = dup_or_null(t->key_path);
	c->known_hosts = dup_or_null(t->known_hosts);
	c->ssh_config = dup_or_null(t->ssh_config);
	c->connect_timeout_s = t->connect_timeout_s > 0 ? t->connect_timeout_s : DEFAULT_CONNECT_S;
	c->jump_spec = dup_or_null(t->jump);
	c->ask = t->ask;
	c->ask_data = t->ask_data;
	c->password_auth = t->password_auth;

	parse_hosts(c->hosts_spec, &c->hosts, &c->nhosts);
	return c;
}

static void hops_free(struct hop *hops, size_t n);

static void drop_session(struct conn *c)
{
	sftp_kept_forget(&c->kept);	/* before the session they belong to */
	if (c->sftp != NULL) {
		sftp_free(c->sftp);
		c->sftp = NULL;
	}
	if (c->s != NULL) {
		ssh_disconnect(c->s);
		ssh_free(c->s);
		c->s = NULL;
	}
	/* After the session they carry: its end of the socketpair is closed. */
	hops_free(c->hops, c->nhops);
	c->hops = NULL;
	c->nhops = 0;
	c->at = NULL;
	free(c->banner);
	c->banner = NULL;
}

void conn_disconnect(struct conn *c)
{
	drop_session(c);
}

void conn_free(struct conn *c)
{
	size_t i;

	if (c == NULL)
		return;
	drop_session(c);
	for (i = 0; i < c->nhosts; i++)
		free_host(&c->hosts[i]);
	free(c->hosts);
	for (i = 0; i < c->njumps; i++)
		free_host(&c->jumps[i]);
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
	free(c);
}

int conn_is_connected(const struct conn *c)
{
	return c->s != NULL && ssh_is_connected(c->s);
}

const char *conn_host(const struct conn *c)
{
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

/* Whether len bytes at p hold the text s (memmem is not POSIX). */
static int bytes_hold(const void *p, size_t len, const char *s)
{
	size_t n = strlen(s), i;

	for (i = 0; p != NULL && i + n <= len; i++)
		if (memcmp((const char *)p + i, s, n) == 0)
			return 1;
	return 0;
}

void conn_test_cut_after(struct conn *c, const char *needle)
{
	free(c->cut_needle);
	c->cut_needle = dup_or_null(needle);
}

/* ---- connecting ------------------------------------------------------------- */

static const char *known_hosts_path(const struct conn *c)
{
	return c->known_hosts != NULL ? c->known_hosts : "~/.ssh/known_hosts";
}

/* How OpenSSH names the host in known_hosts and on its command line. */
static char *ssh_command_for(const struct conn *c, const struct host *h, int port,
    const char *user)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "ssh");
	if (c->known_hosts != NULL) {
		char *q = sh_quote(c->known_hosts);
		buf_addf(&b, " -o UserKnownHostsFile=%s", q);
		free(q);
	}
	if (port != 22)
		buf_addf(&b, " -p %d", port);
	buf_addf(&b, " %s@%s", user, h->name);
	return buf_detach(&b);
}

static enum conn_status check_host_key(struct conn *c, ssh_session s,
    const struct host *h, const char *trust_fp, char **err)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp = NULL, *user = NULL, *cmd, *kh_name, *kh_file;
	unsigned int port = 22;
	enum conn_status st = CONN_OK;
	enum ssh_known_hosts_e known;

	if (ssh_get_server_publickey(s, &key) != SSH_OK ||
	    ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) != 0) {
		ssh_key_free(key);
		return fail(err, CONN_REMOTE, "%s: could not read the server's host key: %s",
		    h->display, ssh_get_error(s));
	}
	fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	known = ssh_session_is_known_server(s);
	ssh_options_get_port(s, &port);
	ssh_options_get(s, SSH_OPTIONS_USER, &user);
	cmd = ssh_command_for(c, h, (int)port, user != NULL ? user : "USER");
	/* known_hosts names a host on another port "[host]:port". */
	kh_name = port != 22 ? xasprintf("'[%s]:%u'", h->name, port) : sh_quote(h->name);
	if (c->known_hosts != NULL) {
		char *q = sh_quote(c->known_hosts);
		kh_file = xasprintf(" -f %s", q);
		free(q);
	} else {
		kh_file = xstrdup("");
	}

	switch (known) {
	case SSH_KNOWN_HOSTS_OK:
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		st = fail(err, CONN_HOSTKEY_CHANGED,
		    "%s: WARNING: HOST KEY CHANGED: the server now shows %s, which does not match "
		    "%s. Someone may be intercepting the connection, or the host was reinstalled: "
		    "ask the cluster's admins before anything else. taotop refuses it; once they "
		    "confirm the new key, remove the old one with: ssh-keygen -R %s%s",
		    h->display, fp, known_hosts_path(c), kh_name, kh_file);
		break;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		if (trust_fp != NULL && strcmp(trust_fp, fp) == 0)
			break;
		if (trust_fp != NULL) {
			st = fail(err, CONN_HOSTKEY_CHANGED, "%s: the host key is now %s, not the %s "
			    "you accepted: refused", h->display, fp, trust_fp);
			break;
		}
		st = fail(err, CONN_HOSTKEY_UNKNOWN,
		    "%s: host key not in %s (%s): check the fingerprint with the cluster's admins, "
		    "then accept it in taotop's monitor or with: %s (answer yes)",
		    h->display, known_hosts_path(c), fp, cmd);
		break;
	case SSH_KNOWN_HOSTS_ERROR:
	default:
		st = fail(err, CONN_REMOTE, "%s: cannot check the host key against %s: %s",
		    h->display, known_hosts_path(c), ssh_get_error(s));
		break;
	}
	if (st == CONN_HOSTKEY_UNKNOWN || st == CONN_HOSTKEY_CHANGED) {
		free(c->refused_host);
		free(c->refused_fp);
		c->refused_host = xstrdup(h->display);
		c->refused_fp = xstrdup(fp);
	}
	ssh_string_free_char(fp);
	ssh_string_free_char(user);
	free(cmd);
	free(kh_name);
	free(kh_file);
	return st;
}

/* known_hosts must live in an existing folder for libssh to append to it. */
static void make_known_hosts_dir(const struct conn *c)
{
	char *path, *slash;

	if (c->known_hosts != NULL) {
		path = xstrdup(c->known_hosts);
	} else {
		const char *home = getenv("HOME");
		if (home == NULL)
			return;
		path = xasprintf("%s/.ssh/known_hosts", home);
	}
	slash = strrchr(path, '/');
	if (slash != NULL && slash != path) {
		*slash = '\0';
		mkdir(path, 0700);
	}
	free(path);
}

/* ---- challenges (keyboard-interactive, password) ---------------------------- */

struct conn_challenge *conn_challenge_dup(const struct conn_challenge *ch)
{
	struct conn_challenge *d;
	struct conn_prompt *p;
	size_t i;

	if (ch == NULL)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	d->host = dup_or_null(ch->host);
	d->name = dup_or_null(ch->name);
	d->instruction = dup_or_null(ch->instruction);
	d->said = dup_or_null(ch->said);
	d->attempt = ch->attempt;
	d->n = ch->n;
	p = xcalloc(ch->n > 0 ? ch->n : 1, sizeof(*p));
	for (i = 0; i < ch->n; i++) {
		p[i].text = dup_or_null(ch->prompts[i].text);
		p[i].echo = ch->prompts[i].echo;
	}
	d->prompts = p;
	return d;
}

void conn_challenge_free(struct conn_challenge *ch)
{
	size_t i;

	if (ch == NULL)
		return;
	for (i = 0; i < ch->n; i++)
		free((char *)ch->prompts[i].text);
	free((void *)ch->prompts);
	free((char *)ch->host);
	free((char *)ch->name);
	free((char *)ch->instruction);
	free((char *)ch->said);
	free(ch);
}

/* Ask the caller's ask function; answers[] are n secret buffers. */
static int ask_user(struct conn *c, const struct conn_challenge *ch, struct buf *answers)
{
	size_t i;

	for (i = 0; i < ch->n; i++)
		buf_init_secret(&answers[i]);
	if (c->ask == NULL)
		return -1;
	if (c->ask(ch, answers, c->ask_data) != 0) {
		for (i = 0; i < ch->n; i++)
			buf_free(&answers[i]);
		return -1;
	}
	return 0;
}

static void wipe_answers(struct buf *answers, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf_free(&answers[i]);
}

/* The server's words from an info request without prompts (PAM's message on
 * a refused code), or NULL. */
static char *server_words(const char *name, const char *instruction)
{
	const char *a = name != NULL ? name : "", *b = instruction != NULL ? instruction : "";
	size_t la = strlen(a), lb = strlen(b);

	while (lb > 0 && (b[lb - 1] == '\n' || b[lb - 1] == ' '))
		lb--;
	if (la == 0 && lb == 0)
		return NULL;
	if (la == 0 || lb == 0)
		return la ? xstrndup(a, la) : xstrndup(b, lb);
	return xasprintf("%s: %.*s", a, (int)lb, b);
}

enum { AUTH_DONE, AUTH_PARTIAL, AUTH_FAILED };

/*
 * Keyboard-interactive: each info request goes to the ask function (one
 * challenge, all its prompts); a refused answer asks again, up to ASK_TRIES
 * times, with the server's words. The answers live only in secret buffers,
 * wiped as soon as libssh has them.
 */
static int kbdint(struct conn *c, ssh_session s, const struct host *h, char **err)
{
	char *said = NULL;
	int attempt = 1, rc;

	for (;;) {
		rc = ssh_userauth_kbdint(s, NULL, NULL);
		while (rc == SSH_AUTH_INFO) {
			int n = ssh_userauth_kbdint_getnprompts(s), i;
			const char *name = ssh_userauth_kbdint_getname(s);
			const char *instr = ssh_userauth_kbdint_getinstruction(s);
			struct conn_prompt *pr;
			struct conn_challenge ch;
			struct buf *answers;

			if (n <= 0) {
				/* Words without a question: OpenSSH sends PAM's
				 * message on a refused code this way. */
				char *w = server_words(name, instr);
				if (w != NULL) {
					free(said);
					said = w;
				}
				rc = ssh_userauth_kbdint(s, NULL, NULL);
				continue;
			}
			pr = xcalloc((size_t)n, sizeof(*pr));
			for (i = 0; i < n; i++) {
				char echo = 0;
				pr[i].text = ssh_userauth_kbdint_getprompt(s, (unsigned)i, &echo);
				pr[i].echo = echo != 0;
			}
			memset(&ch, 0, sizeof(ch));
			ch.host = h->display;
			ch.name = name != NULL ? name : "";
			ch.instruction = instr != NULL ? instr : "";
			ch.said = said;
			ch.attempt = attempt;
			ch.n = (size_t)n;
			ch.prompts = pr;
			answers = xcalloc((size_t)n, sizeof(*answers));
			if (ask_user(c, &ch, answers) != 0) {
				free(answers);
				free(pr);
				fail(err, CONN_AUTH, c->ask == NULL
				    ? "%s: the server asks a question (keyboard-interactive: a one-time "
				      "code or the like) and there is no terminal to ask it on: run taotop "
				      "from a terminal, or open the monitor, which asks in a dialog"
				    : "%s: the server's question was not answered: not connected",
				    h->display);
				free(said);
				return AUTH_FAILED;
			}
			for (i = 0; i < n; i++)
				ssh_userauth_kbdint_setanswer(s, (unsigned)i, answers[i].data);
			wipe_answers(answers, (size_t)n);
			free(answers);
			free(pr);
			rc = ssh_userauth_kbdint(s, NULL, NULL);
		}
		if (rc == SSH_AUTH_SUCCESS || rc == SSH_AUTH_PARTIAL) {
			free(said);
			return rc == SSH_AUTH_SUCCESS ? AUTH_DONE : AUTH_PARTIAL;
		}
		if (rc == SSH_AUTH_ERROR || !ssh_is_connected(s)) {
			fail(err, CONN_AUTH, "%s: the connection failed while answering the server's "
			    "question: %s", h->display, ssh_get_error(s));
			free(said);
			return AUTH_FAILED;
		}
		/* Refused: ask again with what the server said. */
		if (said == NULL)
			said = xstrdup("the server refused the answer");
		if (++attempt > ASK_TRIES ||
		    !(ssh_userauth_list(s, NULL) & SSH_AUTH_METHOD_INTERACTIVE)) {
			fail(err, CONN_AUTH, "%s: the server refused the answer %d times (it said: %s)",
			    h->display, attempt - 1, said);
			free(said);
			return AUTH_FAILED;
		}
		log_msg(LOG_INFO, "ssh: %s: answer refused (%s); asking again", h->display, said);
	}
}

/* Password authentication, only where the config turns it on. */
static int password(struct conn *c, ssh_session s, const struct host *h, const char *user,
    char **err)
{
	struct conn_prompt pr = { .text = "Password: ", .echo = 0 };
	struct conn_challenge ch;
	char *said = NULL, *title = xasprintf("Password for %s@%s", user, h->display);
	int attempt, rc = SSH_AUTH_DENIED;

	for (attempt = 1; attempt <= ASK_TRIES; attempt++) {
		struct buf ans;

		memset(&ch, 0, sizeof(ch));
		ch.host = h->display;
		ch.name = title;
		ch.instruction = "";
		ch.said = said;
		ch.attempt = attempt;
		ch.n = 1;
		ch.prompts = &pr;
		if (ask_user(c, &ch, &ans) != 0) {
			fail(err, CONN_AUTH, "%s: the password was not given: not connected", h->display);
			break;
		}
		rc = ssh_userauth_password(s, NULL, ans.data);
		buf_free(&ans);
		if (rc != SSH_AUTH_DENIED)
			break;
		free(said);
		said = xstrdup("the server refused the password");
	}
	free(title);
	free(said);
	if (rc == SSH_AUTH_SUCCESS)
		return AUTH_DONE;
	if (rc == SSH_AUTH_PARTIAL)
		return AUTH_PARTIAL;
	if (rc == SSH_AUTH_DENIED)
		fail(err, CONN_AUTH, "%s: the server refused the password %d times", h->display,
		    ASK_TRIES);
	else if (rc == SSH_AUTH_ERROR)
		fail(err, CONN_AUTH, "%s: password authentication failed: %s", h->display,
		    ssh_get_error(s));
	return AUTH_FAILED;
}

static enum conn_status authenticate(struct conn *c, ssh_session s, const struct host *h,
    char **err)
{
	char *user = NULL, *tried = NULL;
	struct buf why;
	int rc, methods, round, partial = 0;

	buf_init(&why);
	ssh_options_get(s, SSH_OPTIONS_USER, &user);
	rc = ssh_userauth_none(s, NULL);
	if (rc == SSH_AUTH_SUCCESS)
		goto ok;
	if (c->key_path != NULL && c->key_path[0] != '\0') {
		ssh_key key = NULL;
		if (access(c->key_path, R_OK) != 0) {
			buf_addf(&why, "; SSH_KEY_PATH %s: %s", c->key_path, strerror(errno));
		} else if (ssh_pki_import_privkey_file(c->key_path, NULL, NULL, NULL, &key) != SSH_OK) {
			/* No passphrase prompt, ever: the CLI must not block. */
			buf_addf(&why, "; SSH_KEY_PATH %s cannot be loaded without a passphrase "
			    "(add it to your agent with ssh-add)", c->key_path);
		} else {
			rc = ssh_userauth_publickey(s, NULL, key);
			ssh_key_free(key);
			if (rc == SSH_AUTH_SUCCESS)
				goto ok;
			if (rc != SSH_AUTH_PARTIAL)
				buf_addf(&why, "; the server refused SSH_KEY_PATH %s", c->key_path);
		}
	}
	if (rc != SSH_AUTH_PARTIAL && getenv("SSH_AUTH_SOCK") != NULL) {
		rc = ssh_userauth_agent(s, NULL);
		if (rc == SSH_AUTH_SUCCESS)
			goto ok;
	}
	if (rc != SSH_AUTH_PARTIAL) {
		rc = ssh_userauth_publickey_auto(s, NULL, NULL);
		if (rc == SSH_AUTH_SUCCESS)
			goto ok;
	}
	partial = rc == SSH_AUTH_PARTIAL;

	/* What the server lets us go on with: a question (a one-time code
	 * after the key), or a password where the config allows it. A second
	 * round covers a server that asks for both. */
	for (round = 0; round < 2; round++) {
		int r;
		methods = ssh_userauth_list(s, NULL);
		if (methods & SSH_AUTH_METHOD_INTERACTIVE)
			r = kbdint(c, s, h, err);
		else if (c->password_auth && (methods & SSH_AUTH_METHOD_PASSWORD))
			r = password(c, s, h, user != NULL ? user : "?", err);
		else
			break;
		if (r == AUTH_DONE)
			goto ok;
		if (r == AUTH_FAILED) {
			ssh_string_free_char(user);
			buf_free(&why);
			return CONN_AUTH;
		}
		partial = 1;
	}

	methods = ssh_userauth_list(s, NULL);
	if (!c->password_auth && (methods & SSH_AUTH_METHOD_PASSWORD) &&
	    !(methods & SSH_AUTH_METHOD_PUBLICKEY))
		tried = xstrdup("the server wants a password, which taotop sends only for a "
		    "cluster whose config has password_auth: true");
	else if (partial)
		tried = xstrdup("the server wants another factor that taotop does not answer "
		    "(only keyboard-interactive questions, and passwords where password_auth is "
		    "on)");
	else
		tried = xasprintf("no key was accepted (tried SSH_KEY_PATH, the agent, "
		    "the default keys%s)", why.len ? why.data : "");
	fail(err, CONN_AUTH, "%s: authentication failed for user %s: %s. Check SSH_KEY_PATH "
	    "and that its public key is in ~/.ssh/authorized_keys on the cluster (ssh-copy-id)",
	    h->display, user != NULL ? user : "?", tried);
	ssh_string_free_char(user);
	free(tried);
	buf_free(&why);
	return CONN_AUTH;
ok:
	ssh_string_free_char(user);
	buf_free(&why);
	return CONN_OK;
}

/* ---- jump hosts --------------------------------------------------------------- */

/* Bytes between a jump host's channel and the socketpair under the next
 * hop's session, until either side closes. */
static void *pump_main(void *arg)
{
	struct hop *hp = arg;
	char down[IO_CHUNK], up[IO_CHUNK];
	size_t pend = 0, poff = 0;

	fcntl(hp->fd, F_SETFL, fcntl(hp->fd, F_GETFL) | O_NONBLOCK);
	while (!atomic_load(&hp->stop)) {
		int progress = 0;
		ssize_t n;

		if (pend == 0) {
			int r = ssh_channel_read_nonblocking(hp->ch, down, sizeof(down), 0);
			if (r == SSH_ERROR)
				break;
			if (r > 0) {
				pend = (size_t)r;
				poff = 0;
			}
		}
		if (pend > 0) {
			n = write(hp->fd, down + poff, pend);
			if (n > 0) {
				poff += (size_t)n;
				pend -= (size_t)n;
				progress = 1;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				break;
			}
		}
		n = read(hp->fd, up, sizeof(up));
		if (n == 0)
			break;		/* the session above closed its end */
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (n > 0) {
			if (ssh_channel_write(hp->ch, up, (uint32_t)n) != n)
				break;
			progress = 1;
		}
		if (pend == 0 && (ssh_channel_is_eof(hp->ch) || ssh_channel_is_closed(hp->ch) ||
		    !ssh_is_connected(hp->s)))
			break;
		if (!progress) {
			struct pollfd p[2] = {
				{ .fd = ssh_get_fd(hp->s), .events = POLLIN },
				{ .fd = hp->fd, .events = (short)(POLLIN | (pend ? POLLOUT : 0)) },
			};
			poll(p, 2, 100);
		}
	}
	/* The session above sees its connection end. */
	shutdown(hp->fd, SHUT_RDWR);
	return NULL;
}

/* Last first: each hop carries the ones after it. */
static void hops_free(struct hop *hops, size_t n)
{
	while (n > 0) {
		struct hop *hp = &hops[--n];
		if (hp->running) {
			atomic_store(&hp->stop, 1);
			pthread_join(hp->th, NULL);
		}
		if (hp->fd >= 0)
			close(hp->fd);
		if (hp->ch != NULL) {
			ssh_channel_close(hp->ch);
			ssh_channel_free(hp->ch);
		}
		if (hp->s != NULL) {
			ssh_disconnect(hp->s);
			ssh_free(hp->s);
		}
	}
	free(hops);
}

/*
 * libssh 0.10 turns a ProxyJump of ~/.ssh/config into a ProxyCommand
 * "ssh [-l user] [-p port] [-J rest] -W '[%h]:%p' host" that it would run
 * itself. taotop runs no other program: read the jump list back from it
 * (the first host, then the rest), and clear the command. Any other
 * ProxyCommand is refused.
 */
static int proxy_to_jumps(const char *cmd, char **jumps)
{
	char *copy = xstrdup(cmd), *tok, *save = NULL, *user = NULL, *port = NULL, *rest = NULL,
	    *host = NULL;
	int ok = 1;

	*jumps = NULL;
	tok = strtok_r(copy, " ", &save);
	if (tok == NULL || strcmp(tok, "ssh") != 0)
		ok = 0;
	while (ok && (tok = strtok_r(NULL, " ", &save)) != NULL) {
		if (strcmp(tok, "-l") == 0)
			user = strtok_r(NULL, " ", &save);
		else if (strcmp(tok, "-p") == 0)
			port = strtok_r(NULL, " ", &save);
		else if (strcmp(tok, "-J") == 0)
			rest = strtok_r(NULL, " ", &save);
		else if (strcmp(tok, "-W") == 0)
			strtok_r(NULL, " ", &save);
		else if (host == NULL && tok[0] != '-')
			host = tok;
		else
			ok = 0;
	}
	if (ok && host != NULL) {
		int v6 = strchr(host, ':') != NULL;
		*jumps = xasprintf("%s%s%s%s%s%s%s%s", user ? user : "", user ? "@" : "",
		    v6 && port ? "[" : "", host, v6 && port ? "]" : "", port ? ":" : "",
		    port ? port : "", rest ? "," : "");
		if (rest != NULL) {
			char *all = xasprintf("%s%s", *jumps, rest);
			free(*jumps);
			*jumps = all;
		}
	}
	free(copy);
	return ok && host != NULL ? 0 : -1;
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
		return fail(err, CONN_UNREACHABLE, "'%s' is not a host name: write %s as host, "
		    "host:port or user@host, separated by commas", h->display,
		    is_jump ? "jump hosts" : "login hosts");
	s = ssh_new();
	if (s == NULL)
		return fail(err, CONN_REMOTE, "%s: libssh could not make a session", h->display);
	ssh_options_set(s, SSH_OPTIONS_HOST, h->name);
	/* ~/.ssh/config first, so that what the user gave explicitly wins. */
	if (c->ssh_config == NULL) {
		if (ssh_options_parse_config(s, NULL) != 0)
			log_msg(LOG_WARN, "ssh: %s: could not parse ~/.ssh/config", h->display);
	} else if (c->ssh_config[0] != '\0') {
		if (ssh_options_parse_config(s, c->ssh_config) != 0) {
			ssh_free(s);
			return fail(err, CONN_REMOTE, "%s: cannot parse ssh config %s",
			    h->display, c->ssh_config);
		}
	}
	ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
	if (ssh_options_get(s, SSH_OPTIONS_PROXYCOMMAND, &proxy) == SSH_OK && proxy != NULL) {
		char *list = NULL;
		if (proxy_to_jumps(proxy, &list) != 0) {
			enum conn_status st = fail(err, CONN_REMOTE, "%s: ~/.ssh/config gives it a "
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

/* What a trust-on-first-use asks: accept this host's key if it has fp. */
struct trust {
	const char	*host;
	const char	*fp;
	int		 done;
};

/* Connect s (over fd when >= 0), check its key, and authenticate it, or,
 * when it is the host to trust, write its key to known_hosts instead. */
static enum conn_status finish_session(struct conn *c, ssh_session s, const struct host *h,
    int fd, struct trust *tr, char **err)
{
	enum conn_status st;
	int trusting = tr != NULL && strcmp(tr->host, h->display) == 0;

	if (fd >= 0)
		ssh_options_set(s, SSH_OPTIONS_FD, &fd);	/* the session owns it now */
	if (ssh_connect(s) != SSH_OK)
		return fail(err, CONN_UNREACHABLE, "%s: %s", h->display, ssh_get_error(s));
	st = check_host_key(c, s, h, trusting ? tr->fp : NULL, err);
	if (st != CONN_OK)
		return st;
	if (!trusting)
		return authenticate(c, s, h, err);
	make_known_hosts_dir(c);
	if (ssh_session_update_known_hosts(s) != SSH_OK)
		return fail(err, CONN_REMOTE, "%s: could not add the host key to %s: %s",
		    h->display, known_hosts_path(c), ssh_get_error(s));
	log_msg(LOG_INFO, "ssh: %s: accepted host key %s into %s", h->display, tr->fp,
	    known_hosts_path(c));
	tr->done = 1;
	return CONN_OK;
}

static void set_jumps(struct conn *c, const char *spec)
{
	size_t i;

	for (i = 0; i < c->njumps; i++)
		free_host(&c->jumps[i]);
	free(c->jumps);
	c->jumps = NULL;
	c->njumps = 0;
	if (spec != NULL && strcasecmp(spec, "none") != 0)
		parse_hosts(spec, &c->jumps, &c->njumps);
}

/* Open a direct-tcpip channel from hop to (the host and port next will
 * connect to), and a socketpair between it and next's session. */
static enum conn_status forward(struct hop *hop, const struct host *from,
    ssh_session next, const struct host *to, int *fd, char **err)
{
	char *host = NULL;
	unsigned int port = 22;
	int sv[2];
	enum conn_status st = CONN_OK;

	ssh_options_get(next, SSH_OPTIONS_HOST, &host);	/* HostName from the config */
	ssh_options_get_port(next, &port);
	hop->ch = ssh_channel_new(hop->s);
	if (hop->ch == NULL || ssh_channel_open_forward(hop->ch, host != NULL ? host : to->name,
	    (int)port, "127.0.0.1", 0) != SSH_OK) {
		st = fail(err, CONN_UNREACHABLE, "%s: the jump host %s could not reach %s port %u: %s",
		    to->display, from->display, host != NULL ? host : to->name, port,
		    ssh_get_error(hop->s));
		ssh_string_free_char(host);
		return st;
	}
	ssh_string_free_char(host);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return fail(err, CONN_REMOTE, "%s: socketpair: %s", to->display, strerror(errno));
	hop->fd = sv[1];
	*fd = sv[0];
	atomic_init(&hop->stop, 0);
	if (pthread_create(&hop->th, NULL, pump_main, hop) != 0) {
		close(sv[0]);
		*fd = -1;
		return fail(err, CONN_REMOTE, "%s: cannot start the jump host's relay", to->display);
	}
	hop->running = 1;
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
	set_jumps(c, c->jump_spec != NULL ? c->jump_spec : cfg_jumps);
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
		st = finish_session(c, js, j, fd, tr, err);
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
		st = forward(&hops[i], j, ns, next, &fd, err);
		if (ns != s)
			ssh_free(ns);	/* made for its HostName and port only */
		if (st != CONN_OK)
			goto out;
	}
	st = finish_session(c, s, h, fd, tr, err);
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	if (st != CONN_OK || tr != NULL) {
		if (s != NULL) {
			ssh_disconnect(s);
			ssh_free(s);
		}
		hops_free(hops, *nhops_out);
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

	if (conn_is_connected(c))
		return CONN_OK;
	drop_session(c);
	if (c->nhosts == 0)
		return fail(err, CONN_UNREACHABLE, "no login host given: set SLURM_HOSTNAME "
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
	fail(err, CONN_UNREACHABLE, "no login host answered: %s", why.data);
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
		return fail(err, CONN_REMOTE, "%s is not one of this cluster's login or jump hosts "
		    "(%s)", host, c->hosts_spec);
	st = open_host(c, h, &tr, &s, &hops, &nhops, err);
	if (st == CONN_OK && !tr.done)
		st = fail(err, CONN_REMOTE, "%s: was not reached to accept its key", host);
	if (st == CONN_OK && c->refused_host != NULL && strcmp(c->refused_host, host) == 0) {
		free(c->refused_host);
		free(c->refused_fp);
		c->refused_host = c->refused_fp = NULL;
	}
	return st;
}

/* ---- exec ---------------------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct exec_state {
	struct conn_exec	*x;
	int			 got_exit;
	int			 got_any;	/* any answer since exec */
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

/* Drive one channel: write stdin only as far as the peer's window allows and
 * read both streams in between, so a command that echoes its input while we
 * still write cannot deadlock us. */
static enum conn_status pump(struct conn *c, ssh_channel ch, struct conn_exec *x,
    struct exec_state *es, int64_t deadline, char **err)
{
	char chunk[IO_CHUNK];
	size_t off = 0;
	size_t out_cap = x->out_cap ? x->out_cap : DEFAULT_OUT_CAP;
	size_t err_cap = x->err_cap ? x->err_cap : DEFAULT_ERR_CAP;
	int eof_sent = 0;
	int64_t nudged = 0;
	const char *host = c->at->display;

	for (;;) {
		int progress = 0, stream;

		if (!eof_sent && off < x->in_len) {
			uint32_t win = ssh_channel_window_size(ch);
			if (win > 0) {
				size_t n = x->in_len - off;
				if (n > win)
					n = win;
				if (n > IO_CHUNK)
					n = IO_CHUNK;
				int w = ssh_channel_write(ch, (const char *)x->in + off, (uint32_t)n);
				if (w == SSH_ERROR)
					goto broken;
				off += (size_t)w;
				progress = 1;
			}
		}
		if (!eof_sent && off >= x->in_len) {
			if (ssh_channel_send_eof(ch) == SSH_ERROR)
				goto broken;
			eof_sent = 1;
		}
		for (stream = 0; stream < 2; stream++) {
			int n = ssh_channel_read_nonblocking(ch, chunk, sizeof(chunk), stream);
			if (n == SSH_ERROR)
				goto broken;
			if (n > 0) {
				c->counters.exec_bytes_read += (uint64_t)n;
				if (stream == 0)
					keep(&x->out, chunk, (size_t)n, out_cap, &x->out_cut);
				else
					keep(&x->err, chunk, (size_t)n, err_cap, &x->err_cut);
				progress = es->got_any = 1;
			}
		}
		if (!progress && (ssh_channel_is_closed(ch) ||
		    (ssh_channel_is_eof(ch) && es->got_exit)))
			break;
		if (!ssh_is_connected(c->s))
			goto broken;
		if (x->cancel != NULL && atomic_load(x->cancel)) {
			abandon(ch);
			return fail(err, CONN_CANCELLED, "%s: cancelled: %s", host, x->cmd);
		}
		if (deadline != 0 && now_ms() >= deadline) {
			/* The server acknowledged the exec request, so it was
			 * alive then: the command ran long, or the server froze
			 * since. Either way the command is abandoned. */
			abandon(ch);
			return fail(err, CONN_TIMEOUT, "%s: the command ran over its %d s limit "
			    "and was killed%s", host, (x->timeout_ms + 999) / 1000,
			    es->got_any ? "" : " (or the server stopped answering)");
		}
		/*
		 * Seen against OpenSSH 9.2: after a large SFTP transfer on the
		 * same connection, the server sometimes sends EOF but holds the
		 * exit-status until the client sends something. A keepalive
		 * every 50 ms while we wait for it gets it moving.
		 */
		if (!progress && ssh_channel_is_eof(ch) && !es->got_exit &&
		    now_ms() - nudged >= 50) {
			ssh_send_keepalive(c->s);
			nudged = now_ms();
		}
		if (!progress) {
			struct pollfd pfd = { .fd = ssh_get_fd(c->s), .events = POLLIN };
			int wait = ssh_channel_is_eof(ch) ? 50 : 200;
			if (deadline != 0 && deadline - now_ms() < wait)
				wait = (int)(deadline - now_ms());
			poll(&pfd, 1, wait < 0 ? 0 : wait);
		}
	}
	if (!es->got_exit)
		goto broken;
	return CONN_OK;
broken:
	return fail(err, CONN_DISCONNECTED, "%s: the connection dropped while running a command "
	    "(it may have run): %s", host, ssh_get_error(c->s));
}

/* Open a channel; reconnect once when the connection had dropped while idle
 * (nothing was sent yet, so this is safe even for commands that change
 * things). */
static enum conn_status open_channel(struct conn *c, int64_t deadline, ssh_channel *out,
    char **err)
{
	int attempt;
	enum conn_status st;

	for (attempt = 0; attempt < 2; attempt++) {
		ssh_channel ch;
		long left_s = c->connect_timeout_s;

		st = conn_connect(c, err);
		if (st != CONN_OK)
			return st;
		if (deadline != 0) {
			int64_t left = deadline - now_ms();
			if (left <= 0)
				return fail(err, CONN_TIMEOUT, "%s: no time left to run the command",
				    c->at->display);
			if ((left + 999) / 1000 < left_s)
				left_s = (long)((left + 999) / 1000);
		}
		ssh_options_set(c->s, SSH_OPTIONS_TIMEOUT, &left_s);
		ch = ssh_channel_new(c->s);
		if (ch != NULL && ssh_channel_open_session(ch) == SSH_OK) {
			*out = ch;
			return CONN_OK;
		}
		log_msg(LOG_INFO, "ssh: %s: cannot open a channel (%s); reconnecting",
		    c->at->display, ssh_get_error(c->s));
		if (ch != NULL)
			ssh_channel_free(ch);
		drop_session(c);
	}
	return fail(err, CONN_DISCONNECTED, "the login host stopped answering and a new "
	    "connection failed too");
}

enum conn_status conn_probe(struct conn *c, int timeout_ms, char **err)
{
	long t = (timeout_ms + 999) / 1000, restore = c->connect_timeout_s;
	const char *host;
	ssh_channel ch;
	int ok;

	if (!conn_is_connected(c)) {
		drop_session(c);
		return fail(err, CONN_DISCONNECTED, "not connected");
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
	fail(err, CONN_TIMEOUT, "%s: the server did not answer a keepalive within %d s",
	    host, (timeout_ms + 999) / 1000);
	drop_session(c);
	return CONN_TIMEOUT;
}

enum conn_status conn_exec(struct conn *c, struct conn_exec *x, char **err)
{
	int64_t deadline = x->timeout_ms > 0 ? now_ms() + x->timeout_ms : 0;
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

	st = open_channel(c, deadline, &ch, err);
	if (st != CONN_OK)
		return st;
	memset(&cb, 0, sizeof(cb));
	cb.userdata = &es;
	cb.channel_exit_status_function = on_exit_status;
	cb.channel_exit_signal_function = on_exit_signal;
	ssh_callbacks_init(&cb);
	ssh_set_channel_callbacks(ch, &cb);

	c->counters.execs++;
	if (ssh_channel_request_exec(ch, x->cmd) != SSH_OK) {
		st = ssh_is_connected(c->s)
		    ? fail(err, CONN_REMOTE, "%s: the server refused to run a command: %s",
			c->at->display, ssh_get_error(c->s))
		    : fail(err, CONN_DISCONNECTED, "%s: the connection dropped as the command "
			"was sent (it may have run)", c->at->display);
		goto out;
	}
	st = pump(c, ch, x, &es, deadline, err);
	if (st == CONN_OK && c->cut_needle != NULL && (strstr(x->cmd, c->cut_needle) != NULL ||
	    bytes_hold(x->in, x->in_len, c->cut_needle))) {
		ssh_remove_channel_callbacks(ch, &cb);
		ssh_channel_free(ch);
		ch = NULL;
		drop_session(c);
		st = fail(err, CONN_DISCONNECTED, "connection cut after the command ran (test hook)");
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
		drop_session(c);
	return st;
}

/* ---- SFTP ---------------------------------------------------------------------- */

static enum conn_status sftp_ready(struct conn *c, char **err)
{
	enum conn_status st = conn_connect(c, err);

	if (st != CONN_OK)
		return st;
	if (c->sftp != NULL)
		return CONN_OK;
	c->sftp = sftp_new(c->s);
	c->counters.sftp_requests++;	/* the version exchange */
	if (c->sftp == NULL || sftp_init(c->sftp) != SSH_OK) {
		st = ssh_is_connected(c->s) ? CONN_REMOTE : CONN_DISCONNECTED;
		fail(err, st, "%s: the server's SFTP subsystem did not start: %s",
		    c->at->display, ssh_get_error(c->s));
		if (c->sftp != NULL)
			sftp_free(c->sftp);
		c->sftp = NULL;
		if (st == CONN_DISCONNECTED)
			drop_session(c);
		return st;
	}
	return CONN_OK;
}

/* Map the last SFTP failure on path to a status and a sentence. */
static enum conn_status sftp_fail(struct conn *c, const char *what, const char *path, char **err);

/* For ssh/tails.c (ssh/sftp_kept.h): the session's SFTP, its kept files,
 * its counters and its failures, without a second copy of any of them. */
enum conn_status conn_sftp(struct conn *c, sftp_session *sftp, struct sftp_kept ***kept,
    struct conn_counters **counters, char **err)
{
	enum conn_status st = sftp_ready(c, err);

	*sftp = c->sftp, *kept = &c->kept, *counters = &c->counters;
	return st;
}

enum conn_status conn_sftp_fail(struct conn *c, const char *what, const char *path, char **err)
{
	return sftp_fail(c, what, path, err);
}

static enum conn_status sftp_fail(struct conn *c, const char *what, const char *path, char **err)
{
	int code = c->sftp != NULL ? sftp_get_error(c->sftp) : -1;
	const char *host = c->at != NULL ? c->at->display : "?";

	if (c->s == NULL || !ssh_is_connected(c->s)) {
		drop_session(c);
		return fail(err, CONN_DISCONNECTED, "%s: the connection dropped during %s of %s",
		    host, what, path);
	}
	switch (code) {
	case SSH_FX_NO_SUCH_FILE:
	case SSH_FX_NO_SUCH_PATH:
		return fail(err, CONN_NOTFOUND, "%s: %s: no such file or folder", host, path);
	case SSH_FX_PERMISSION_DENIED:
		return fail(err, CONN_REMOTE, "%s: %s of %s: permission denied", host, what, path);
	case SSH_FX_FILE_ALREADY_EXISTS:
		return fail(err, CONN_REMOTE, "%s: %s: already exists", host, path);
	default:
		return fail(err, CONN_REMOTE, "%s: %s of %s failed: %s", host, what, path,
		    ssh_get_error(c->s));
	}
}

/* Read-only SFTP operations are safe to retry once on a fresh connection;
 * a retry that succeeds drops the first attempt's message (the caller sees
 * CONN_OK and would never free it). */
#define RETRY_ONCE(call)						\
	do {								\
		enum conn_status st_ = (call);				\
		if (st_ == CONN_DISCONNECTED) {				\
			st_ = (call);					\
			if (st_ == CONN_OK && err != NULL) {		\
				free(*err);				\
				*err = NULL;				\
			}						\
		}							\
		return st_;						\
	} while (0)

/* Closing a file is one more request to the server: counted like the others. */
static int counted_close(struct conn *c, sftp_file f)
{
	c->counters.sftp_requests++;
	return sftp_close(f);
}

static int counted_unlink(struct conn *c, const char *path)
{
	c->counters.sftp_requests++;
	return sftp_unlink(c->sftp, path);
}

static enum conn_status stat_once(struct conn *c, const char *path, struct conn_stat *st,
    char **err)
{
	sftp_attributes a;
	enum conn_status rc = sftp_ready(c, err);

	if (rc != CONN_OK)
		return rc;
	c->counters.sftp_ops++;
	c->counters.sftp_requests++;
	a = sftp_stat(c->sftp, path);
	if (a == NULL)
		return sftp_fail(c, "stat", path, err);
	memset(st, 0, sizeof(*st));
	st->size = a->size;
	st->mtime = (int64_t)a->mtime;
	st->mode = a->permissions & 07777;
	st->is_dir = a->type == SSH_FILEXFER_TYPE_DIRECTORY;
	sftp_attributes_free(a);
	return CONN_OK;
}

enum conn_status conn_stat(struct conn *c, const char *path, struct conn_stat *st, char **err)
{
	RETRY_ONCE(stat_once(c, path, st, err));
}

static enum conn_status read_once(struct conn *c, const char *path, uint64_t offset,
    size_t max, struct buf *out, char **err)
{
	size_t start = out->len, got = 0;
	sftp_file f;
	enum conn_status rc = sftp_ready(c, err);

	if (rc != CONN_OK)
		return rc;
	c->counters.sftp_ops++;
	c->counters.sftp_requests++;
	f = sftp_open(c->sftp, path, O_RDONLY, 0);
	if (f == NULL)
		return sftp_fail(c, "open", path, err);
	if (sftp_seek64(f, offset) != 0) {
		counted_close(c, f);
		return sftp_fail(c, "seek", path, err);
	}
	while (got < max) {
		size_t want = max - got > IO_CHUNK ? IO_CHUNK : max - got;
		ssize_t n;

		buf_reserve(out, want);
		c->counters.sftp_requests++;
		n = sftp_read(f, out->data + out->len, want);
		if (n < 0) {
			out->len = start;
			out->data[out->len] = '\0';
			counted_close(c, f);
			return sftp_fail(c, "read", path, err);
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
		out->data[out->len] = '\0';
		got += (size_t)n;
	}
	c->counters.sftp_bytes_read += got;
	counted_close(c, f);
	return CONN_OK;
}

enum conn_status conn_read_at(struct conn *c, const char *path, uint64_t offset, size_t max,
    struct buf *out, char **err)
{
	RETRY_ONCE(read_once(c, path, offset, max, out, err));
}

/* Create path with mode from its first byte (O_EXCL: it must be new, so no
 * earlier, looser file can be reused) and write data into it. */
static enum conn_status create_and_write(struct conn *c, const char *path, const void *data,
    size_t len, mode_t mode, char **err)
{
	size_t off = 0;
	sftp_file f;

	c->counters.sftp_ops++;
	c->counters.sftp_requests++;
	f = sftp_open(c->sftp, path, O_WRONLY | O_CREAT | O_EXCL, mode);
	if (f == NULL) {
		struct conn_stat st;
		enum conn_status rc = sftp_fail(c, "create", path, err);
		/* OpenSSH says only "Failure" for an existing file. */
		if (rc == CONN_REMOTE && stat_once(c, path, &st, NULL) == CONN_OK)
			return fail(err, CONN_REMOTE, "%s: %s: already exists", c->at->display, path);
		return rc;
	}
	while (off < len) {
		size_t n = len - off > IO_CHUNK ? IO_CHUNK : len - off;
		ssize_t w;

		if (c->cut_needle != NULL && strstr(path, c->cut_needle) != NULL && off >= len / 2) {
			counted_close(c, f);
			drop_session(c);
			return fail(err, CONN_DISCONNECTED, "connection cut halfway through "
			    "writing %s (test hook)", path);
		}
		c->counters.sftp_requests++;
		w = sftp_write(f, (const char *)data + off, n);
		if (w <= 0) {
			counted_close(c, f);
			return sftp_fail(c, "write", path, err);
		}
		off += (size_t)w;
	}
	if (sftp_extension_supported(c->sftp, "fsync@openssh.com", "1")) {
		c->counters.sftp_requests++;
		sftp_fsync(f);
	}
	if (counted_close(c, f) != 0)
		return sftp_fail(c, "close", path, err);
	return CONN_OK;
}

static char *temp_name_for(const char *path)
{
	const char *slash = strrchr(path, '/');
	unsigned char rnd[6];
	char hex[13];
	size_t i;

	if (compat_random_bytes(rnd, sizeof(rnd)) != 0)
		memset(rnd, 0, sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	if (slash == NULL)
		return xasprintf(".%s.taotop-%s", path, hex);
	return xasprintf("%.*s/.%s.taotop-%s", (int)(slash - path), path, slash + 1, hex);
}

enum conn_status conn_write_file(struct conn *c, const char *path, const void *data,
    size_t len, mode_t mode, int flags, char **err)
{
	enum conn_status st = sftp_ready(c, err);
	struct conn_exec mv;
	char *tmp, *qtmp, *qpath, *cmd;

	if (st != CONN_OK)
		return st;
	if (!(flags & CONN_WRITE_ATOMIC))
		return create_and_write(c, path, data, len, mode, err);

	/*
	 * Atomic: a temp file beside the target, then rename(2) over it. SFTP v3
	 * rename refuses an existing target on OpenSSH and libssh 0.10 offers
	 * no posix-rename call, so the rename is one `mv -f` on the server.
	 */
	if (flags & CONN_WRITE_EXCL) {
		struct conn_stat sb;
		st = stat_once(c, path, &sb, NULL);
		if (st == CONN_OK)
			return fail(err, CONN_REMOTE, "%s: %s: already exists", c->at->display, path);
	}
	tmp = temp_name_for(path);
	st = create_and_write(c, tmp, data, len, mode, err);
	if (st != CONN_OK) {
		if (st != CONN_DISCONNECTED && c->sftp != NULL)
			counted_unlink(c, tmp);
		free(tmp);
		return st;
	}
	qtmp = sh_quote(tmp);
	qpath = sh_quote(path);
	cmd = xasprintf("mv -f -- %s %s", qtmp, qpath);
	conn_exec_init(&mv, cmd);
	mv.timeout_ms = c->connect_timeout_s * 1000;
	st = conn_exec(c, &mv, err);
	if (st == CONN_OK && mv.exit_status != 0) {
		st = fail(err, CONN_REMOTE, "%s: cannot move %s into place: %s", c->at->display,
		    path, mv.err.len ? mv.err.data : "mv failed");
		if (c->sftp != NULL)
			counted_unlink(c, tmp);
	}
	conn_exec_free(&mv);
	free(cmd);
	free(qtmp);
	free(qpath);
	free(tmp);
	return st;
}

static enum conn_status mkdir_once(struct conn *c, const char *path, mode_t mode, char **err)
{
	struct conn_stat st;
	char *p;
	size_t i, len = strlen(path);
	enum conn_status rc = stat_once(c, path, &st, NULL);

	if (rc == CONN_OK && st.is_dir)
		return CONN_OK;
	if (rc == CONN_OK)
		return fail(err, CONN_REMOTE, "%s: %s exists and is not a folder", c->at->display, path);
	if (rc != CONN_NOTFOUND)
		return stat_once(c, path, &st, err);
	p = xstrdup(path);
	for (i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		rc = stat_once(c, p, &st, NULL);
		if (rc == CONN_NOTFOUND) {
			c->counters.sftp_ops++;
			c->counters.sftp_requests++;
			if (sftp_mkdir(c->sftp, p, mode) != 0) {
				/* Someone else may have made it meanwhile. */
				if (stat_once(c, p, &st, NULL) != CONN_OK || !st.is_dir) {
					rc = sftp_fail(c, "mkdir", p, err);
					free(p);
					return rc;
				}
			}
		} else if (rc != CONN_OK) {
			rc = stat_once(c, p, &st, err);
			free(p);
			return rc;
		} else if (!st.is_dir) {
			rc = fail(err, CONN_REMOTE, "%s: %s exists and is not a folder",
			    c->at->display, p);
			free(p);
			return rc;
		}
		if (i < len)
			p[i] = '/';
	}
	free(p);
	return CONN_OK;
}

enum conn_status conn_mkdir_p(struct conn *c, const char *path, mode_t mode, char **err)
{
	enum conn_status st = sftp_ready(c, err);
	if (st != CONN_OK)
		return st;
	RETRY_ONCE(mkdir_once(c, path, mode, err));
}

enum conn_status conn_unlink(struct conn *c, const char *path, char **err)
{
	enum conn_status st = sftp_ready(c, err);

	if (st != CONN_OK)
		return st;
	c->counters.sftp_ops++;
	if (counted_unlink(c, path) != 0)
		return sftp_fail(c, "remove", path, err);
	return CONN_OK;
}

/*
 * A session's host key checked against known_hosts (or written there on
 * trust on first use), then its authentication: key file, agent, default
 * keys, and the questions a server asks (keyboard-interactive, a password
 * where the config allows it) through the caller's ask function.
 */
#include "util/compat.h"
#include "ssh/conn_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ssh/quote.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define ASK_TRIES		3	/* answers refused before giving up */

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
		return conn_fail(err, CONN_REMOTE, "%s: could not read the server's host key: %s",
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
		st = conn_fail(err, CONN_HOSTKEY_CHANGED,
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
			st = conn_fail(err, CONN_HOSTKEY_CHANGED, "%s: the host key is now %s, not the %s "
			    "you accepted: refused", h->display, fp, trust_fp);
			break;
		}
		st = conn_fail(err, CONN_HOSTKEY_UNKNOWN,
		    "%s: host key not in %s (%s): check the fingerprint with the cluster's admins, "
		    "then accept it in taotop's monitor or with: %s (answer yes)",
		    h->display, known_hosts_path(c), fp, cmd);
		break;
	case SSH_KNOWN_HOSTS_ERROR:
	default:
		st = conn_fail(err, CONN_REMOTE, "%s: cannot check the host key against %s: %s",
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
	d->host = conn_dup(ch->host);
	d->name = conn_dup(ch->name);
	d->instruction = conn_dup(ch->instruction);
	d->said = conn_dup(ch->said);
	d->attempt = ch->attempt;
	d->n = ch->n;
	p = xcalloc(ch->n > 0 ? ch->n : 1, sizeof(*p));
	for (i = 0; i < ch->n; i++) {
		p[i].text = conn_dup(ch->prompts[i].text);
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

/* One info request with n > 0 prompts put to the ask function and its
 * answers given to libssh: 0, or -1 with *err set when no one answered. */
static int answer_info(struct conn *c, ssh_session s, const struct host *h, int n,
    const char *said, int attempt, char **err)
{
	const char *name = ssh_userauth_kbdint_getname(s);
	const char *instr = ssh_userauth_kbdint_getinstruction(s);
	struct conn_prompt *pr = xcalloc((size_t)n, sizeof(*pr));
	struct buf *answers = xcalloc((size_t)n, sizeof(*answers));
	struct conn_challenge ch;
	int i;

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
	if (ask_user(c, &ch, answers) != 0) {
		free(answers);
		free(pr);
		conn_fail(err, CONN_AUTH, c->ask == NULL
		    ? "%s: the server asks a question (keyboard-interactive: a one-time "
		      "code or the like) and there is no terminal to ask it on: run taotop "
		      "from a terminal, or open the monitor, which asks in a dialog"
		    : "%s: the server's question was not answered: not connected",
		    h->display);
		return -1;
	}
	for (i = 0; i < n; i++)
		ssh_userauth_kbdint_setanswer(s, (unsigned)i, answers[i].data);
	wipe_answers(answers, (size_t)n);
	free(answers);
	free(pr);
	return 0;
}

/* One keyboard-interactive exchange to its end (success, partial, refusal
 * or error), each question answered; *said takes the server's words on
 * the way. Returns libssh's last code, or SSH_AUTH_ERROR with *err set
 * when a question went unanswered (*unanswered then 1). */
static int kbdint_round(struct conn *c, ssh_session s, const struct host *h, char **said,
    int attempt, int *unanswered, char **err)
{
	int rc = ssh_userauth_kbdint(s, NULL, NULL);

	while (rc == SSH_AUTH_INFO) {
		int n = ssh_userauth_kbdint_getnprompts(s);

		if (n <= 0) {
			/* Words without a question: OpenSSH sends PAM's
			 * message on a refused code this way. */
			char *w = server_words(ssh_userauth_kbdint_getname(s),
			    ssh_userauth_kbdint_getinstruction(s));
			if (w != NULL) {
				free(*said);
				*said = w;
			}
		} else if (answer_info(c, s, h, n, *said, attempt, err) != 0) {
			*unanswered = 1;
			return SSH_AUTH_ERROR;
		}
		rc = ssh_userauth_kbdint(s, NULL, NULL);
	}
	return rc;
}

/*
 * Keyboard-interactive: each info request goes to the ask function (one
 * challenge, all its prompts); a refused answer asks again, up to ASK_TRIES
 * times, with the server's words. The answers live only in secret buffers,
 * wiped as soon as libssh has them.
 */
static int kbdint(struct conn *c, ssh_session s, const struct host *h, char **err)
{
	char *said = NULL;
	int attempt = 1, rc, unanswered = 0, r = AUTH_FAILED;

	for (;;) {
		rc = kbdint_round(c, s, h, &said, attempt, &unanswered, err);
		if (unanswered)
			break;
		if (rc == SSH_AUTH_SUCCESS || rc == SSH_AUTH_PARTIAL) {
			r = rc == SSH_AUTH_SUCCESS ? AUTH_DONE : AUTH_PARTIAL;
			break;
		}
		if (rc == SSH_AUTH_ERROR || !ssh_is_connected(s)) {
			conn_fail(err, CONN_AUTH, "%s: the connection failed while answering the "
			    "server's question: %s", h->display, ssh_get_error(s));
			break;
		}
		/* Refused: ask again with what the server said. */
		if (said == NULL)
			said = xstrdup("the server refused the answer");
		if (++attempt > ASK_TRIES ||
		    !(ssh_userauth_list(s, NULL) & SSH_AUTH_METHOD_INTERACTIVE)) {
			conn_fail(err, CONN_AUTH, "%s: the server refused the answer %d times (it "
			    "said: %s)", h->display, attempt - 1, said);
			break;
		}
		log_msg(LOG_INFO, "ssh: %s: answer refused (%s); asking again", h->display, said);
	}
	free(said);
	return r;
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
			conn_fail(err, CONN_AUTH, "%s: the password was not given: not connected", h->display);
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
		conn_fail(err, CONN_AUTH, "%s: the server refused the password %d times", h->display,
		    ASK_TRIES);
	else if (rc == SSH_AUTH_ERROR)
		conn_fail(err, CONN_AUTH, "%s: password authentication failed: %s", h->display,
		    ssh_get_error(s));
	return AUTH_FAILED;
}

/* SSH_KEY_PATH's key, sent signed at once (no query first: one round trip);
 * *tried when it went to the server. */
static int try_key_path(struct conn *c, ssh_session s, struct buf *why, int *tried)
{
	ssh_key key = NULL;
	int rc = SSH_AUTH_DENIED;

	*tried = 0;
	if (c->key_path == NULL || c->key_path[0] == '\0')
		return rc;
	if (access(c->key_path, R_OK) != 0) {
		buf_addf(why, "; SSH_KEY_PATH %s: %s", c->key_path, strerror(errno));
	} else if (ssh_pki_import_privkey_file(c->key_path, NULL, NULL, NULL, &key) != SSH_OK) {
		/* No passphrase prompt, ever: the CLI must not block. */
		buf_addf(why, "; SSH_KEY_PATH %s cannot be loaded without a passphrase "
		    "(add it to your agent with ssh-add)", c->key_path);
	} else {
		*tried = 1;
		rc = ssh_userauth_publickey(s, NULL, key);
		ssh_key_free(key);
		if (rc != SSH_AUTH_SUCCESS && rc != SSH_AUTH_PARTIAL)
			buf_addf(why, "; the server refused SSH_KEY_PATH %s", c->key_path);
	}
	return rc;
}

/* The keys, in order: SSH_KEY_PATH, the agent, the default keys. Returns
 * libssh's last code; why gathers what went wrong with SSH_KEY_PATH.
 * The "none" request (a server that asks nothing lets it in; any other
 * answers with its methods) is a round trip of its own on every connect,
 * so it is sent only when SSH_KEY_PATH's key was not: the server's answer
 * to a key lists its methods as well. */
static int try_keys(struct conn *c, ssh_session s, struct buf *why)
{
	int tried, rc = try_key_path(c, s, why, &tried);

	if (rc == SSH_AUTH_SUCCESS)
		return rc;
	if (!tried) {
		rc = ssh_userauth_none(s, NULL);
		if (rc == SSH_AUTH_SUCCESS)
			return rc;
	}
	if (rc != SSH_AUTH_PARTIAL && getenv("SSH_AUTH_SOCK") != NULL) {
		rc = ssh_userauth_agent(s, NULL);
		if (rc == SSH_AUTH_SUCCESS)
			return rc;
	}
	if (rc != SSH_AUTH_PARTIAL)
		rc = ssh_userauth_publickey_auto(s, NULL, NULL);
	return rc;
}

/* What the server lets us go on with: a question (a one-time code after
 * the key), or a password where the config allows it. A second round
 * covers a server that asks for both. AUTH_PARTIAL: neither finished it. */
static int answer_questions(struct conn *c, ssh_session s, const struct host *h,
    const char *user, int *partial, char **err)
{
	int round;

	for (round = 0; round < 2; round++) {
		int r, methods = ssh_userauth_list(s, NULL);
		if (methods & SSH_AUTH_METHOD_INTERACTIVE)
			r = kbdint(c, s, h, err);
		else if (c->password_auth && (methods & SSH_AUTH_METHOD_PASSWORD))
			r = password(c, s, h, user != NULL ? user : "?", err);
		else
			break;
		if (r != AUTH_PARTIAL)
			return r;
		*partial = 1;
	}
	return AUTH_PARTIAL;
}

/* Why authentication failed, for a user to act on. */
static enum conn_status auth_refused(struct conn *c, ssh_session s, const struct host *h,
    const char *user, int partial, const struct buf *why, char **err)
{
	int methods = ssh_userauth_list(s, NULL);
	char *tried;

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
		    "the default keys%s)", why->len ? why->data : "");
	conn_fail(err, CONN_AUTH, "%s: authentication failed for user %s: %s. Check SSH_KEY_PATH "
	    "and that its public key is in ~/.ssh/authorized_keys on the cluster (ssh-copy-id)",
	    h->display, user != NULL ? user : "?", tried);
	free(tried);
	return CONN_AUTH;
}

static enum conn_status authenticate(struct conn *c, ssh_session s, const struct host *h,
    char **err)
{
	char *user = NULL;
	struct buf why;
	int rc, partial;
	enum conn_status st = CONN_OK;

	buf_init(&why);
	ssh_options_get(s, SSH_OPTIONS_USER, &user);
	rc = try_keys(c, s, &why);
	if (rc != SSH_AUTH_SUCCESS) {
		partial = rc == SSH_AUTH_PARTIAL;
		rc = answer_questions(c, s, h, user, &partial, err);
		if (rc == AUTH_FAILED)
			st = CONN_AUTH;
		else if (rc == AUTH_PARTIAL)
			st = auth_refused(c, s, h, user, partial, &why, err);
	}
	ssh_string_free_char(user);
	buf_free(&why);
	return st;
}


enum conn_status conn_finish_session(struct conn *c, ssh_session s, const struct host *h,
    int fd, struct trust *tr, char **err)
{
	enum conn_status st;
	int trusting = tr != NULL && strcmp(tr->host, h->display) == 0;

	if (fd >= 0)
		ssh_options_set(s, SSH_OPTIONS_FD, &fd);	/* the session owns it now */
	if (ssh_connect(s) != SSH_OK)
		return conn_fail(err, CONN_UNREACHABLE, "%s: %s", h->display, ssh_get_error(s));
	st = check_host_key(c, s, h, trusting ? tr->fp : NULL, err);
	if (st != CONN_OK)
		return st;
	if (!trusting)
		return authenticate(c, s, h, err);
	make_known_hosts_dir(c);
	if (ssh_session_update_known_hosts(s) != SSH_OK)
		return conn_fail(err, CONN_REMOTE, "%s: could not add the host key to %s: %s",
		    h->display, known_hosts_path(c), ssh_get_error(s));
	log_msg(LOG_INFO, "ssh: %s: accepted host key %s into %s", h->display, tr->fp,
	    known_hosts_path(c));
	tr->done = 1;
	return CONN_OK;
}


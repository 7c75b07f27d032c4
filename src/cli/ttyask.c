#include "cli/ttyask.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "ssh/conn.h"
#include "util/buf.h"
#include "util/sanitize.h"

#define ANSWER_MAX	512

/* `taotop jobs` connects to every cluster at once: one question at a time. */
static pthread_mutex_t tty_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *prefix, const char *s, size_t len, int nl)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, prefix);
	sanitize_append_line(&b, s, len);
	if (nl)
		buf_addc(&b, '\n');
	fputs(b.data, stderr);
	buf_free(&b);
}

/* Ctrl-C while echo is off: give the terminal its echo back, then die of
 * the signal as before (tcsetattr and raise are async-signal-safe). */
static struct termios tty_saved;

static void restore_and_die(int sig)
{
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &tty_saved);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One line from stdin into a secret buffer, byte by byte (no stdio buffer
 * keeps a copy). -1 on end of input. */
static int read_answer(struct buf *ans)
{
	char c;

	for (;;) {
		ssize_t n = read(STDIN_FILENO, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ans->len > 0 ? 0 : -1;
		if (c == '\n' || c == '\r')
			return 0;
		if (ans->len < ANSWER_MAX)
			buf_addc(ans, c);
	}
}

/* One prompt on stderr, its answer read from stdin, with echo off (and
 * given back on Ctrl-C) unless echo is asked for. */
static int ask_one(const char *t, int echo, struct buf *ans)
{
	struct termios old, quiet;
	struct sigaction old_int, old_term, old_hup;
	int hide = !echo && tcgetattr(STDIN_FILENO, &old) == 0, rc;

	/* Echo off before the prompt shows: keys typed as soon as it
	 * appears must not be echoed. */
	if (hide) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = restore_and_die;
		sigemptyset(&sa.sa_mask);
		tty_saved = old;
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sigaction(SIGHUP, &sa, &old_hup);
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		quiet.c_lflag |= ECHONL;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	say("", t, strlen(t), 0);
	fflush(stderr);
	rc = read_answer(ans);
	if (hide) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
	}
	return rc;
}

int tty_ask_hidden(const char *prompt, struct buf *answer)
{
	int rc;

	if (!isatty(STDIN_FILENO))
		return -1;
	pthread_mutex_lock(&tty_lock);
	rc = ask_one(prompt, 0, answer);
	pthread_mutex_unlock(&tty_lock);
	return rc;
}

static int tty_ask(const struct conn_challenge *ch, struct buf *answers, void *data)
{
	size_t i;
	int rc = 0;

	(void)data;
	pthread_mutex_lock(&tty_lock);
	say("taotop: ", ch->host ? ch->host : "?", strlen(ch->host ? ch->host : "?"), 0);
	fputs(" asks:\n", stderr);
	if (ch->name != NULL && ch->name[0] != '\0')
		say("  ", ch->name, strlen(ch->name), 1);
	if (ch->instruction != NULL && ch->instruction[0] != '\0') {
		const char *p = ch->instruction;
		while (*p != '\0') {
			const char *nl = strchr(p, '\n');
			size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
			if (len > 0)
				say("  ", p, len, 1);
			p += len + (nl != NULL);
		}
	}
	if (ch->said != NULL)
		say("taotop: refused: ", ch->said, strlen(ch->said), 1);
	for (i = 0; i < ch->n && rc == 0; i++)
		rc = ask_one(ch->prompts[i].text ? ch->prompts[i].text : "", ch->prompts[i].echo,
		    &answers[i]);
	pthread_mutex_unlock(&tty_lock);
	return rc;
}

void tty_ask_target(struct conn_target *t)
{
	t->ask = isatty(STDIN_FILENO) ? tty_ask : NULL;
	t->ask_data = NULL;
}

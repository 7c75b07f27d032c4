#include "integration/helper_screen.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "util/file.h"
#include "util/xmalloc.h"

/* Servers this test opened and has not closed: a failed assertion skips
 * screen_close, and the suite's fini kills what is left. */
static char *open_socks[8];

void screen_kill_all(void)
{
	size_t i;

	for (i = 0; i < sizeof(open_socks) / sizeof(open_socks[0]); i++) {
		if (open_socks[i] != NULL) {
			rig_local("tmux -L %s kill-server 2>/dev/null; true", open_socks[i]);
			free(open_socks[i]);
			open_socks[i] = NULL;
		}
	}
}

static void remember(const char *sock, int add)
{
	size_t i;

	for (i = 0; i < sizeof(open_socks) / sizeof(open_socks[0]); i++) {
		if (add && open_socks[i] == NULL) {
			open_socks[i] = xstrdup(sock);
			return;
		}
		if (!add && open_socks[i] != NULL && strcmp(open_socks[i], sock) == 0) {
			free(open_socks[i]);
			open_socks[i] = NULL;
			return;
		}
	}
}

char *screen_tmux(struct screen *s, const char *fmt, ...)
{
	va_list ap;
	char *args, *cmd, *out = NULL;
	FILE *p;
	char buf[4096];
	size_t n, len = 0;

	va_start(ap, fmt);
	args = xvasprintf(fmt, ap);
	va_end(ap);
	cmd = xasprintf("tmux -L %s %s 2>&1", s->sock, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	out = xstrdup("");
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		out = xrealloc(out, len + n + 1);
		memcpy(out + len, buf, n);
		len += n;
		out[len] = '\0';
	}
	pclose(p);
	free(cmd);
	free(args);
	return out;
}

void screen_open(struct screen *s, const char *name, const struct screen_opts *o)
{
	const struct rig *r = rig_get();
	const char *bin = getenv("TAOTOP_BIN");
	char tmpl[] = "/tmp/taotop-screen-XXXXXX", *script, *out, *ts_end;
	FILE *f;

	cr_assert_not_null(bin, "TAOTOP_BIN is not set (run through tests/run)");
	memset(s, 0, sizeof(*s));
	cr_assert_not_null(mkdtemp(tmpl));
	s->dir = xstrdup(tmpl);
	s->sock = xasprintf("taotop-%s-%d", name, rig_uniq());
	s->hosts = o->hosts ? xstrdup(o->hosts) : xasprintf("%s:%d", r->host, r->port);
	/* A shell around taotop, so that what it leaves behind (its exit code,
	 * the terminal's modes) shows on the screen after q. */
	script = xasprintf("%s/run.sh", s->dir);
	f = fopen(script, "w");
	cr_assert_not_null(f);
	ts_end = o->typescript ? xasprintf("\" %s/typescript", s->dir) : xstrdup("");
	{
		fprintf(f, "#!/bin/sh\n"
		    "export SLURM_USER=%s SLURM_HOSTNAME=%s SSH_KEY_PATH=%s TAOTOP_KNOWN_HOSTS=%s\n"
		    "export TAOTOP_CLUSTER=rig XDG_STATE_HOME=%s/state XDG_CONFIG_HOME=%s/config\n"
		    "export TAOTOP_POLL_S=1 TAOTOP_LOG=%s/taotop.log\n"
		    "export LANG=C.UTF-8 TERM=screen-256color %s\n"
		    "trap '' INT\n"	/* Ctrl-C is for taotop: the shell must live on to report */
		    "echo $$ > %s/shell.pid\n"
		    "%s%s %s 2>%s/stderr%s\n"
		    "rc=$?\n"
		    "echo \"[taotop exited $rc] $(stty -a | grep -o -- '-\\?icanon') "
		    "$(stty -a | grep -o -- ' -\\?echo ')\"\n"
		    "sleep 600\n",
		    r->user, s->hosts, r->key, o->known_hosts ? o->known_hosts : r->known_hosts,
		    s->dir, s->dir, s->dir, o->env ? o->env : "", s->dir,
		    o->typescript ? "script -q -f -e -c \"exec " : "", bin, o->args ? o->args : "",
		    s->dir, ts_end);
		fclose(f);
	}
	free(ts_end);
	cr_assert_eq(rig_local("chmod +x %s", script), 0);
	out = screen_tmux(s, "-f /dev/null new-session -d -x %d -y %d '%s' \\; "
	    "set -g set-clipboard on \\; set -g remain-on-exit on",
	    o->cols ? o->cols : 120, o->lines ? o->lines : 40, script);
	remember(s->sock, 1);
	cr_assert_str_eq(out, "", "tmux did not start: %s", out);
	free(out);
	free(script);
}

static char *capture(struct screen *s, int attrs)
{
	return screen_tmux(s, "capture-pane -p %s -t 0", attrs ? "-e" : "");
}

char *screen_text(struct screen *s)
{
	return capture(s, 0);
}

char *screen_text_attrs(struct screen *s)
{
	return capture(s, 1);
}

/* strstr, but a number is found only whole: a SLURM job id looked for
 * ("116") is not found inside a longer number on the screen (a filter's
 * "/dayl123116", a time), which would pick the wrong line. */
static const char *find(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	const char *p;

	if (n == 0 || strspn(needle, "0123456789") != n)
		return strstr(hay, needle);
	for (p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		if ((p == hay || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[n]))
			return p;
	return NULL;
}

/* Does some line of text hold all of want (line: together on one line)? */
static int holds(const char *text, const char *const *want, size_t n, int line)
{
	size_t i;

	if (!line) {
		for (i = 0; i < n; i++)
			if (find(text, want[i]) == NULL)
				return 0;
		return 1;
	}
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t len = strcspn(l, "\n"), ok = 0;
		char *copy = xmalloc(len + 1);
		memcpy(copy, l, len);
		copy[len] = '\0';
		for (i = 0; i < n; i++)
			ok += find(copy, want[i]) != NULL;
		free(copy);
		if (ok == n)
			return 1;
	}
	return 0;
}

/* Whole seconds of time() would make a wait of 2 s last barely 1. */
static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static void wait_for(struct screen *s, int timeout_s, int line, va_list ap)
{
	const char *want[16];
	size_t n = 0;
	const char *w;
	long end = now_ms() + timeout_s * 1000L;
	char *text = NULL;

	while ((w = va_arg(ap, const char *)) != NULL && n < 16)
		want[n++] = w;
	for (;;) {
		free(text);
		text = screen_text(s);
		if (holds(text, want, n, line)) {
			free(text);
			return;
		}
		if (now_ms() >= end)
			break;
		usleep(200 * 1000);
	}
	cr_assert_fail("after %d s the screen does not show '%s'%s%s%s:\n%s", timeout_s, want[0],
	    n > 1 ? " and '" : "", n > 1 ? want[1] : "", n > 1 ? "'" : "", text);
}

void screen_wait_gone(struct screen *s, int timeout_s, const char *text)
{
	long end = now_ms() + timeout_s * 1000L;
	char *screen = NULL;

	for (;;) {
		free(screen);
		screen = screen_text(s);
		if (find(screen, text) == NULL) {
			free(screen);
			return;
		}
		if (now_ms() >= end)
			break;
		usleep(100 * 1000);
	}
	cr_assert_fail("after %d s the screen still shows '%s':\n%s", timeout_s, text, screen);
}

char *screen_wait_line_changed(struct screen *s, int timeout_s, const char *text,
    const char *old)
{
	long end = now_ms() + timeout_s * 1000L;
	char *line = NULL;

	for (;;) {
		free(line);
		line = screen_line_with(s, text);
		if (line != NULL && (old == NULL || strcmp(line, old) != 0))
			return line;
		if (now_ms() >= end)
			break;
		usleep(100 * 1000);
	}
	cr_assert_fail("after %d s the line with '%s' is still '%s'", timeout_s, text,
	    line ? line : "(none)");
	return NULL;
}

char *screen_typescript_wait(struct screen *s, int timeout_s, const char *want)
{
	char *path = xasprintf("%s/typescript", s->dir), *text = rig_wait_file(path, want, timeout_s);

	cr_assert_not_null(text, "%s: not written", path);
	free(path);
	return text;
}

void screen_wait(struct screen *s, int timeout_s, ...)
{
	va_list ap;

	va_start(ap, timeout_s);
	wait_for(s, timeout_s, 0, ap);
	va_end(ap);
}

void screen_wait_line(struct screen *s, int timeout_s, ...)
{
	va_list ap;

	va_start(ap, timeout_s);
	wait_for(s, timeout_s, 1, ap);
	va_end(ap);
}

/* The first line holding text (a copy, caller frees; NULL if none); its
 * row (0-based) in *row, -1 if none. */
static char *find_line(struct screen *s, const char *text, int *row)
{
	char *all = screen_text(s), *l, *found = NULL;
	int r = 0;

	*row = -1;
	for (l = all; *l && found == NULL; r++) {
		size_t len = strcspn(l, "\n");
		char *copy = xstrndup(l, len);
		if (find(copy, text) != NULL) {
			found = copy;
			*row = r;
		} else {
			free(copy);
		}
		l += len + (l[len] == '\n');
	}
	free(all);
	return found;
}

char *screen_line_with(struct screen *s, const char *text)
{
	int row;

	return find_line(s, text, &row);
}

int screen_row_of(struct screen *s, const char *text)
{
	int row;

	free(find_line(s, text, &row));
	return row;
}

void screen_keys(struct screen *s, const char *keys)
{
	free(screen_tmux(s, "send-keys -t 0 %s", keys));
	usleep(150 * 1000);
}

void screen_type(struct screen *s, const char *text)
{
	free(screen_tmux(s, "send-keys -t 0 -l '%s'", text));
	usleep(150 * 1000);
}

void screen_resize(struct screen *s, int cols, int lines)
{
	free(screen_tmux(s, "resize-window -t 0 -x %d -y %d", cols, lines));
	usleep(300 * 1000);
}

int screen_pid(struct screen *s)
{
	char *path = xasprintf("%s/shell.pid", s->dir), *text, *err = NULL;
	int shell, pid = 0;

	text = file_read_all(path, NULL, &err);
	free(err);
	free(path);
	if (text == NULL)
		return 0;
	shell = atoi(text);
	free(text);
	/* taotop is the shell's child while it runs. */
	path = xasprintf("pgrep -P %d -f taotop 2>/dev/null | head -n 1", shell);
	{
		FILE *p = popen(path, "r");
		char buf[32] = "";
		if (p != NULL) {
			if (fgets(buf, sizeof(buf), p) != NULL)
				pid = atoi(buf);
			pclose(p);
		}
	}
	free(path);
	return pid;
}

int screen_wait_exit(struct screen *s, int timeout_s)
{
	char *line;
	int rc = -1;

	screen_wait(s, timeout_s, "[taotop exited", NULL);
	line = screen_line_with(s, "[taotop exited");
	cr_assert_not_null(line);
	sscanf(strstr(line, "exited"), "exited %d", &rc);
	free(line);
	return rc;
}

void screen_close(struct screen *s)
{
	char *path = xasprintf("%s/stderr", s->dir), *err = NULL;
	char *text = file_read_all(path, NULL, &err);

	free(screen_tmux(s, "kill-server"));
	remember(s->sock, 0);
	if (text != NULL) {
		cr_expect(strstr(text, "ERROR: AddressSanitizer") == NULL &&
		    strstr(text, "ERROR: LeakSanitizer") == NULL && strstr(text, "runtime error:") == NULL,
		    "taotop's stderr holds a sanitizer report:\n%s", text);
		cr_expect(text[0] == '\0', "taotop wrote to stderr while it had the screen:\n%.2000s",
		    text);
	}
	free(text);
	free(err);
	free(path);
	rig_local("rm -rf %s", s->dir);
	free(s->dir);
	free(s->sock);
	free(s->hosts);
}

char *screen_shared_dir(const char *name)
{
	const struct rig *r = rig_get();
	char *dir = xasprintf("%s/screen-tests/%s-%d", r->shared, name, rig_uniq());
	char *cmd = xasprintf("rm -rf %s && mkdir -p %s", dir, dir);

	free(rig_ssh_ok(cmd));
	free(cmd);
	return dir;
}

void screen_filter(struct screen *s, const char *text)
{
	screen_keys(s, "Escape");
	screen_keys(s, "/");
	screen_type(s, text);
	screen_keys(s, "Enter");
	/* Taken: the message line says so (the list is drawn in the same
	 * frame), so what the caller looks at next is the filtered list. */
	if (text[0] != '\0') {
		char *said = xasprintf("filter: %s   ", text);
		screen_wait(s, 10, said, NULL);
		free(said);
	}
}

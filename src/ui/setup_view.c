/*
 * The monitor's first run: with no cluster configured, `taotop` opens on
 * this form instead of an error. The user gives the login hosts (those of
 * ~/.ssh/config are offered) and what ssh and the seed's defaults do not
 * say; taotop connects through the engine's watch (engine/watch/watch.h: a
 * worker thread; the keys never wait), asks about
 * an unknown host key with the same words and keys as the monitor's
 * host-key dialog, runs the preflight and shows it, and writes the cluster
 * into config.yaml only when the user says so. Then the monitor goes on to
 * its jobs list with that config.
 *
 * One file: its state, keys and drawing; the loop in setup_view_run is its
 * own, since nothing else of the monitor exists yet. It takes the watch's
 * events as the monitor does (watch_next), over a config of the one
 * cluster tried.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "engine/config/config.h"
#include "engine/config/preflight.h"
#include "engine/config/setup.h"
#include "engine/watch/watch.h"
#include "ssh/conn.h"
#include "ssh/sshconfig.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/text.h"
#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

#define CTRL(c)		((c) & 0x1f)
#define ROW_BUTTON	SF_COUNT	/* the row after the fields */

enum stage {
	S_FORM,
	S_CONNECTING,
	S_HOSTKEY,	/* an unknown host key waits for a or r */
	S_CHECKING,	/* the preflight runs */
	S_RESULTS,	/* shown: write, edit or quit */
	S_FAILED,	/* connecting or checking failed: back to the form */
};

struct setup_view {
	struct setup_draft	 d;
	int			 row;
	enum stage		 stage;
	char			**ssh_hosts;	/* ~/.ssh/config's, offered */
	size_t			 nssh, ssh_next;
	char			*problem;	/* of the focused row, once asked */
	char			*hint;		/* the focused row's hint, made for */
	int			 hint_row;	/* this row and these hosts: it reads */
	char			*hint_hosts;	/* the ssh config, not on every frame */
	struct cluster_cfg	 cl;		/* the draft being tried */
	struct config		 cfg;		/* of cl alone, for the watch */
	struct record_store	*store;
	struct watch		*watch;		/* while it is tried, or NULL */
	int			 trusting;	/* the host key's trust asked */
	int			 checking;	/* the preflight asked */
	char			*host, *fp;	/* the unknown host key */
	char			*failure;
	struct preflight	 p;
	int			 have_p;
	char			*written;	/* the name written, at the end */
};

/* ---- the engine's side ------------------------------------------------------------------- */

static void stop_watch(struct setup_view *v)
{
	/* The watch first: it points at the cluster. */
	watch_free(v->watch);
	v->watch = NULL;
	v->trusting = v->checking = 0;
	config_cluster_free(&v->cl);
}

static void fail(struct setup_view *v, const char *why)
{
	free(v->failure);
	v->failure = xstrdup(why != NULL ? why : "the connection failed");
	v->stage = S_FAILED;
	stop_watch(v);
}

static void start(struct setup_view *v)
{
	setup_cluster(&v->d, &v->cl);
	v->cfg.clusters = &v->cl;
	v->cfg.n = 1;
	v->watch = watch_new(&v->cfg, v->store);	/* it connects at once */
	v->stage = S_CONNECTING;
}

static void check(struct setup_view *v)
{
	v->stage = S_CHECKING;
	v->checking = 1;
	watch_preflight(v->watch, 0);
}

/* Connected: run the preflight; trusted: the preflight makes the worker
 * connect; not connected: back to the form, saying why. */
static void on_link(struct setup_view *v)
{
	const struct watched *c = watch_cluster(v->watch, 0);

	if (v->trusting) {
		v->trusting = 0;
		if (c->link == LINK_HOSTKEY_UNKNOWN)
			fail(v, c->error);	/* could not write known_hosts */
		else
			check(v);
	} else if (c->link == LINK_UP && v->stage == S_CONNECTING && !v->checking) {
		check(v);
	} else if ((c->link == LINK_AUTH_FAILED || c->link == LINK_RECONNECTING) &&
	    (v->stage == S_CONNECTING || v->stage == S_CHECKING)) {
		fail(v, c->error);
	}
}

static void on_hostkey(struct setup_view *v)
{
	const struct watched *c = watch_cluster(v->watch, 0);

	if (c->link == LINK_HOSTKEY_UNKNOWN && c->host != NULL && c->fingerprint != NULL) {
		free(v->host), free(v->fp);
		v->host = xstrdup(c->host);
		v->fp = xstrdup(c->fingerprint);
		v->stage = S_HOSTKEY;
	} else {
		fail(v, c->error);
	}
}

/* A one-time code: the form has no question dialog of its own; taotop
 * init asks it on the terminal. */
static void on_ask(struct setup_view *v)
{
	watch_answer(v->watch, 0, NULL, 0);
	fail(v, "the server asks a question while connecting (a one-time code): set up "
	    "this cluster with 'taotop init' on the terminal, which asks it, then start "
	    "taotop");
}

static void on_preflight(struct setup_view *v, struct watch_event *ev)
{
	v->checking = 0;
	if (!ev->u.preflight.ok) {
		fail(v, ev->u.preflight.err);
		return;
	}
	v->p = ev->u.preflight.p;	/* ours now */
	ev->u.preflight.ok = 0;
	v->have_p = 1;
	v->stage = S_RESULTS;
}

static void on_event(struct setup_view *v, struct watch_event *ev)
{
	switch (ev->kind) {
	case WATCH_EV_LINK:		on_link(v); break;
	case WATCH_EV_HOSTKEY:		on_hostkey(v); break;
	case WATCH_EV_ASK:		on_ask(v); break;
	case WATCH_EV_PREFLIGHT:	on_preflight(v, ev); break;
	default:			break;	/* no jobs, logs or answers here */
	}
}

/* The watch's events; a failure stops the watch, and what is left of its
 * queue with it. */
static void take_events(struct setup_view *v)
{
	struct watch_event ev;

	watch_dispatch(v->watch);
	while (v->watch != NULL && watch_next(v->watch, &ev)) {
		on_event(v, &ev);
		watch_event_free(&ev);
	}
}

/* ---- drawing ------------------------------------------------------------------------------ */

/* s made harmless and on one line (a check's fix may quote the cluster). */
static char *line_of(const char *s)
{
	struct buf b;

	buf_init(&b);
	sanitize_append_line(&b, s, strlen(s));
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_detach(&b);
}

static void put(struct app *a, int y, int x, const char *s, attr_t attr)
{
	char *l = line_of(s);

	if (y < a->lines) {
		wmove(stdscr, y, x);
		text_draw(stdscr, l, strlen(l), 0, a->cols - x - 1, attr, 0);
	}
	free(l);
}

/* A paragraph from row y, wrapped to the width: the rows it took. */
static int para(struct app *a, int y, const char *s, attr_t attr)
{
	char **l = NULL, *one = line_of(s);
	size_t n = 0, i;

	text_wrap(&l, &n, one, "  ", a->cols - 4);
	for (i = 0; i < n; i++) {
		put(a, y + (int)i, 2, l[i], attr);
		free(l[i]);
	}
	free(l);
	free(one);
	return (int)n;
}

static void draw_form(struct app *a, struct setup_view *v, int *y)
{
	int f;

	for (f = 0; f <= ROW_BUTTON; f++, (*y)++) {
		int focus = v->stage == S_FORM && v->row == f;
		attr_t attr = focus ? a->attr[ROLE_SELECTION] : A_NORMAL;
		char *row;

		if (f == ROW_BUTTON)
			row = xstrdup("[ Connect and run the preflight ]");
		else
			row = xasprintf("%-15s %s%s", setup_label((enum setup_field)f), v->d.value[f],
			    focus ? "_" : "");
		wmove(stdscr, *y, 0);
		wclrtoeol(stdscr);
		put(a, *y, 2, row, attr);
		free(row);
	}
	(*y)++;
}

static void draw_help(struct app *a, struct setup_view *v, int y)
{
	if (v->problem != NULL) {
		y += para(a, y, v->problem, a->attr[ROLE_STATUS_ERROR]);
	} else if (v->row < SF_COUNT) {
		if (v->hint == NULL || v->hint_row != v->row ||
		    strcmp(v->hint_hosts, v->d.value[SF_HOSTS]) != 0) {
			free(v->hint), free(v->hint_hosts);
			v->hint = setup_hint(&v->d, (enum setup_field)v->row);
			v->hint_row = v->row;
			v->hint_hosts = xstrdup(v->d.value[SF_HOSTS]);
		}
		y += para(a, y, v->hint, A_DIM);
	} else {
		y += para(a, y, "Enter: connect with these settings and check the cluster",
		    A_DIM);
	}
	if (v->row == SF_HOSTS && v->nssh > 0) {
		struct buf b;
		size_t i;

		buf_init(&b);
		buf_adds(&b, "In ~/.ssh/config (Ctrl-N: the next one):");
		for (i = 0; i < v->nssh; i++)
			buf_addf(&b, "%s %s", i ? "," : "", v->ssh_hosts[i]);
		para(a, y + 1, b.data, A_NORMAL);
		buf_free(&b);
	}
}

static void draw_results(struct app *a, struct setup_view *v, int y)
{
	char *path = config_file_path(), *l;
	size_t i;

	put(a, y++, 2, "Preflight:", A_BOLD);
	for (i = 0; i < v->p.n && y < a->lines - 3; i++) {
		const struct preflight_check *c = &v->p.checks[i];
		l = xasprintf("%s %s%s%s", c->ok ? (text_utf8() ? "\xe2\x9c\x93" : "ok") :
		    c->warn_only ? "!" : (text_utf8() ? "\xe2\x9c\x97" : "X"), c->name,
		    c->fix ? ": " : "", c->fix ? c->fix : "");
		put(a, y++, 4, l, c->ok ? A_NORMAL : a->attr[c->warn_only ? ROLE_JOB_PENDING
		    : ROLE_JOB_ERROR]);
		free(l);
	}
	y++;
	if (!v->p.all_ok)
		y += para(a, y, "Some checks failed: you can write the cluster now and fix them "
		    "later (the preflight runs again with taotop preflight).", A_NORMAL);
	l = xasprintf("Enter/w: write cluster '%s' to %s    e: edit    Esc: quit, nothing "
	    "written", v->cl.name, path);
	para(a, y, l, A_BOLD);
	free(l);
	free(path);
}

static void draw_view(struct app *a, struct setup_view *v)
{
	int y = 0;

	erase();
	put(a, y++, 1, "taotop: set up a cluster", A_BOLD);
	put(a, y++, 1, "Nothing is written until you confirm. Tab/arrows: move, Enter: next, "
	    "Esc: quit", A_DIM);
	y++;
	draw_form(a, v, &y);
	switch (v->stage) {
	case S_FORM:
		draw_help(a, v, y);
		break;
	case S_CONNECTING:
	case S_HOSTKEY:
		put(a, y, 2, "Connecting ...", A_NORMAL);
		break;
	case S_CHECKING:
		put(a, y, 2, "Connected; running the preflight ...", A_NORMAL);
		break;
	case S_RESULTS:
		draw_results(a, v, y);
		break;
	case S_FAILED:
		y += para(a, y, v->failure, a->attr[ROLE_STATUS_ERROR]);
		put(a, y + 1, 2, "Enter/e: back to the form    Esc: quit", A_BOLD);
		break;
	}
	wnoutrefresh(stdscr);
	if (v->stage == S_HOSTKEY) {
		/* The monitor's host-key dialog, its words and keys. */
		char *lines[3], *h = line_of(v->host), *fp = line_of(v->fp);
		lines[0] = xasprintf("%s (cluster %s) is not in known_hosts yet.", h, v->cl.name);
		lines[1] = xasprintf("Its key: %s", fp);
		lines[2] = xstrdup("Compare it with the fingerprint your cluster's admins publish.");
		dialog_draw(a, "Unknown host key", lines, 3, 0,
		    "a: accept and remember    r/Esc: refuse", ROLE_DIALOG);
		free(lines[0]), free(lines[1]), free(lines[2]), free(h), free(fp);
	}
	doupdate();
}

/* ---- keys --------------------------------------------------------------------------------- */

static void type(struct setup_view *v, wint_t ch)
{
	char mb[MB_LEN_MAX + 1];
	mbstate_t st;
	size_t n;
	char *nv;

	memset(&st, 0, sizeof(st));
	n = wcrtomb(mb, (wchar_t)ch, &st);
	if (n == (size_t)-1)
		return;
	mb[n] = '\0';
	nv = xasprintf("%s%s", v->d.value[v->row], mb);
	free(v->d.value[v->row]);
	v->d.value[v->row] = nv;
}

static void backspace(struct setup_view *v)
{
	char *s = v->d.value[v->row];
	size_t n = strlen(s);

	while (n > 0 && ((unsigned char)s[n - 1] & 0xc0) == 0x80)
		n--;	/* a UTF-8 character's continuation bytes */
	if (n > 0)
		n--;
	s[n] = '\0';
}

static void clear_problem(struct setup_view *v)
{
	free(v->problem);
	v->problem = NULL;
}

/* Enter on the button: every field checked, the first wrong one focused. */
static void try_connect(struct setup_view *v, const struct config *existing)
{
	int f;

	clear_problem(v);
	f = setup_first_problem(&v->d, existing, &v->problem);
	if (f >= 0) {
		v->row = f;
		return;
	}
	start(v);
}

/* 1 when the user quits. */
static int form_key(struct setup_view *v, wint_t ch, int func)
{
	if (func && (ch == KEY_UP || ch == KEY_BTAB)) {
		v->row = v->row > 0 ? v->row - 1 : ROW_BUTTON;
		clear_problem(v);
	} else if ((func && ch == KEY_DOWN) || (!func && ch == '\t')) {
		v->row = v->row < ROW_BUTTON ? v->row + 1 : 0;
		clear_problem(v);
	} else if (!func && (ch == '\r' || ch == '\n') && v->row < ROW_BUTTON) {
		clear_problem(v);
		v->problem = setup_problem(&v->d, (enum setup_field)v->row, NULL);
		if (v->problem == NULL)
			v->row++;
	} else if (!func && ch == 27) {
		return 1;
	} else if (v->row == ROW_BUTTON) {
		return 0;
	} else if ((func && ch == KEY_BACKSPACE) || (!func && (ch == 127 || ch == CTRL('H')))) {
		backspace(v);
		clear_problem(v);
	} else if (!func && ch == CTRL('U')) {
		setup_set(&v->d, (enum setup_field)v->row, "");
		clear_problem(v);
	} else if (!func && ch == CTRL('N') && v->row == SF_HOSTS && v->nssh > 0) {
		setup_set(&v->d, SF_HOSTS, v->ssh_hosts[v->ssh_next++ % v->nssh]);
		clear_problem(v);
	} else if (!func && ch >= ' ' && ch != 127) {
		type(v, ch);
		clear_problem(v);
	}
	return 0;
}

/* 1 when the user quits, 2 when the cluster was written. */
static int on_key(struct app *a, struct setup_view *v, const struct config *existing,
    wint_t ch, int func)
{
	char *err = NULL;

	if (func && ch == KEY_RESIZE) {
		getmaxyx(stdscr, a->lines, a->cols);
		return 0;
	}
	switch (v->stage) {
	case S_FORM:
		if (v->row == ROW_BUTTON && !func && (ch == '\r' || ch == '\n')) {
			try_connect(v, existing);
			return 0;
		}
		return form_key(v, ch, func);
	case S_HOSTKEY:
		if (!func && ch == 'a') {
			v->stage = S_CONNECTING;
			v->trusting = 1;
			watch_trust(v->watch, 0);
		} else if (!func && (ch == 'r' || ch == 27)) {
			fail(v, "host key refused: nothing was written");
		}
		return 0;
	case S_CONNECTING:
	case S_CHECKING:
		if (!func && ch == 27) {
			stop_watch(v);		/* back to the form; nothing written */
			v->stage = S_FORM;
		}
		return 0;
	case S_FAILED:
		if (!func && (ch == 'e' || ch == '\r' || ch == '\n'))
			v->stage = S_FORM;
		else if (!func && ch == 27)
			return 1;
		return 0;
	case S_RESULTS:
		if (!func && (ch == 'w' || ch == '\r' || ch == '\n')) {
			if (setup_write(&v->d, &v->written, &err) != 0) {
				fail(v, err);
				free(err);
				return 0;
			}
			return 2;
		}
		if (!func && ch == 'e') {
			stop_watch(v);
			v->stage = S_FORM;
		} else if (!func && ch == 27) {
			return 1;
		}
		return 0;
	}
	return 0;
}

int setup_view_run(struct app *a, int sig_fd, const struct config *existing)
{
	struct setup_view v;
	int done = 0;
	size_t i;

	memset(&v, 0, sizeof(v));
	v.store = a->store;
	setup_draft_init(&v.d);
	v.nssh = sshcfg_hosts(NULL, &v.ssh_hosts);
	while (!done) {
		struct pollfd fds[3];
		nfds_t n = 2;
		int wfd;
		wint_t ch;
		int kr;

		draw_view(a, &v);
		fds[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = sig_fd, .events = POLLIN };
		if (v.watch != NULL && watch_fds(v.watch, &wfd, 1) == 1)
			fds[n++] = (struct pollfd){ .fd = wfd, .events = POLLIN };
		if (poll(fds, n, -1) < 0 && errno != EINTR)
			break;
		if (fds[1].revents & POLLIN) {
			done = 1;	/* SIGINT, SIGTERM, SIGHUP: quit, nothing written */
			break;
		}
		if (n > 2 && (fds[2].revents & POLLIN))
			take_events(&v);
		while (!done && (kr = wget_wch(a->win_input, &ch)) != ERR)
			done = on_key(a, &v, existing, ch, kr == KEY_CODE_YES);
	}
	stop_watch(&v);
	if (v.have_p)
		preflight_free(&v.p);
	for (i = 0; i < v.nssh; i++)
		free(v.ssh_hosts[i]);
	free(v.ssh_hosts);
	free(v.problem), free(v.failure), free(v.host), free(v.fp), free(v.written);
	free(v.hint), free(v.hint_hosts);
	setup_draft_free(&v.d);
	erase();
	wnoutrefresh(stdscr);
	return done == 2 ? 0 : 1;
}

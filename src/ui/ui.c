/*
 * The monitor's loop, its signals and its keys. Drawing is draw.c's, the
 * message line message.c's, each dialog its panel_NAME.c. Over 800 lines
 * because the normal view's keys and the engine's news act on the one
 * loop's state (focus, follow, marks) that nothing else touches; each
 * section is short.
 */
#include "util/compat.h"
#include "ui/ui.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/store.h"
#include "ui/app.h"
#include "ui/keymap.h"
#include "ui/message.h"
#include "ui/text.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define STATUS_TICK_MS	1000	/* while a countdown or "not answering" shows */
#define SPIN_TICK_MS	250	/* while something in flight shows a spinner */
#define MAX_CLUSTERS	64

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- signals: a self-pipe, read by the loop ----------------------------------------------- */

static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (write(sig_pipe[1], &b, 1) < 0) {
		/* full: a signal is already waiting, which is enough */
	}
	errno = saved;
}

/* A crash must not leave the terminal raw: restore it, then die as we
 * would have (htop's CRT_handleSIGSEGV does the same). */
static void on_fatal(int sig)
{
	endwin();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int signals_init(void)
{
	static const int quit_sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa;
	size_t i;

	if (pipe(sig_pipe) != 0)
		return -1;
	for (i = 0; i < 2; i++) {
		fcntl(sig_pipe[i], F_SETFL, fcntl(sig_pipe[i], F_GETFL) | O_NONBLOCK);
		fcntl(sig_pipe[i], F_SETFD, FD_CLOEXEC);
	}
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	for (i = 0; i < sizeof(quit_sigs) / sizeof(quit_sigs[0]); i++)
		sigaction(quit_sigs[i], &sa, NULL);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		sigaction(fatal_sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* ---- following the selected job ----------------------------------------------------------- */

/* The id the engine takes for a row: the record's, else SLURM's own. */
const char *ui_engine_id(const struct job_row *r)
{
	return r->record_id != NULL ? r->record_id : r->slurm_id;
}

/* Follow the selected job's logs if it is another job than before. */
static void follow_selected(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);
	int wrap0 = a->pane[0].wrap, wrap1 = a->pane[1].wrap;

	if (e == NULL) {
		if (a->log_key != NULL) {
			free(a->log_key);
			a->log_key = NULL;
			a->log = watch_follow(a->watch, 0, NULL);
			a->dirty |= DIRTY_PANES;
		}
		return;
	}
	if (a->log_key != NULL && strcmp(a->log_key, e->key) == 0)
		return;
	free(a->log_key);
	a->log_key = xstrdup(e->key);
	a->log = watch_follow(a->watch, e->cluster, ui_engine_id(e->row));
	logpane_init(&a->pane[0]);
	logpane_init(&a->pane[1]);
	a->pane[0].wrap = wrap0;
	a->pane[1].wrap = wrap1;
	a->dirty |= DIRTY_PANES;
}

static void rebuild_jobs(struct app *a)
{
	size_t i, k;

	jt_begin(&a->jt);
	for (i = 0; i < watch_count(a->watch); i++) {
		const struct watched *c = watch_cluster(a->watch, i);
		for (k = 0; k < c->last.n; k++)
			jt_add(&a->jt, i, c->cfg->name, &c->last.rows[k]);
	}
	jt_rebuild(&a->jt);
	follow_selected(a);
	/* The filter's "N of M jobs" is on the message line: it changes too. */
	a->dirty |= DIRTY_JOBS | (a->jt.filter[0] != '\0' ? DIRTY_MESSAGE : 0);
}


/* ---- notifications ---------------------------------------------------------------------------- */

/* An OSC sequence on the terminal, through tmux's passthrough when inside
 * tmux (which drops unknown OSCs otherwise, or passes them where its
 * allow-passthrough lets it). */
static void emit_osc(const char *osc)
{
	struct buf b;
	const char *p;

	buf_init(&b);
	if (getenv("TMUX") != NULL) {
		buf_adds(&b, "\x1bPtmux;");
		for (p = osc; *p != '\0'; p++) {
			if (*p == '\x1b')
				buf_addc(&b, '\x1b');
			buf_addc(&b, *p);
		}
		buf_adds(&b, "\x1b\\");
	} else {
		buf_adds(&b, osc);
	}
	if (write(STDOUT_FILENO, b.data, b.len) < 0) {
		/* the terminal is gone: nothing to tell */
	}
	buf_free(&b);
}

/* Tell text the ways the config asks (notify: [bell, osc9, osc777]). */
static void notify(struct app *a, char *text)
{
	char *osc;
	size_t j;

	/* Nothing that could end or split the sequence. */
	for (j = 0; text[j] != '\0'; j++)
		if ((unsigned char)text[j] < 0x20 || text[j] == 0x7f || text[j] == ';')
			text[j] = ' ';
	if (a->cfg.notify & NOTIFY_BELL)
		beep();
	if (a->cfg.notify & NOTIFY_OSC9) {
		osc = xasprintf("\x1b]9;taotop: %s\x07", text);
		emit_osc(osc);
		free(osc);
	}
	if (a->cfg.notify & NOTIFY_OSC777) {
		osc = xasprintf("\x1b]777;notify;taotop;%s\x07", text);
		emit_osc(osc);
		free(osc);
	}
}

/* A running job flagged by its sampling (GPUs idle, progress stopped):
 * told as a state change is, and on the message line. */
static void notify_flag(struct app *a, const struct watch_event *ev)
{
	const struct watched *c = watch_cluster(a->watch, ev->cluster);
	char text[240];

	snprintf(text, sizeof(text), "%s %s: %s", c ? c->cfg->name : "?", ev->u.flag.job,
	    ev->u.flag.text);
	ui_message(a, 1, "%s", text);
	if (a->cfg.notify != 0)
		notify(a, text);
}

/* Tell of taotop's jobs that changed state in the clusters' newest polls,
 * the ways the config asks (notify: [bell, osc9, osc777]). */
static void notify_changes(struct app *a)
{
	size_t i, k;

	for (i = 0; i < watch_count(a->watch); i++) {
		const struct watched *c = watch_cluster(a->watch, i);
		if (c->polls == a->seen_polls[i])
			continue;
		a->seen_polls[i] = c->polls;
		for (k = 0; k < c->last.changes && a->cfg.notify != 0; k++) {
			const struct state_change *ev = &c->last.events[k];
			char text[200];
			if (ev->what != NULL)
				snprintf(text, sizeof(text), "%s %s: %s", c->cfg->name, ev->record_id,
				    ev->what);
			else
				snprintf(text, sizeof(text), "%s %s is %s (%s)", c->cfg->name,
				    ev->record_id, tao_state_name(ev->to), ev->native ? ev->native : "?");
			notify(a, text);
		}
	}
}

/* ---- engine news: one case per kind of event, each one call ----------------------------------- */

/* A cancel's outcomes (handed to the outcomes panel, which keeps them). */
static void on_outcomes(struct app *a, struct watch_event *ev)
{
	outcomes_panel_add(a, ev->u.outcomes.v, ev->u.outcomes.n);
	ev->u.outcomes.v = NULL;
	ev->u.outcomes.n = 0;
}

/* The detail's fetched files (handed to its panel: it keeps or frees them). */
static void on_files(struct app *a, struct watch_event *ev)
{
	detail_panel_files(a, ev->u.files.v, ev->u.files.n);
	ev->u.files.v = NULL;
	ev->u.files.n = 0;
}

static void on_jobs(struct app *a)
{
	notify_changes(a);
	rebuild_jobs(a);
	detail_panel_refresh(a, 1);
	plot_panel_refresh(a);
}

static void on_link(struct app *a)
{
	a->dirty |= DIRTY_STATUS;
	ask_panel_check(a);
}

static void on_log(struct app *a)
{
	a->dirty |= DIRTY_PANES;
}

static void on_use(struct app *a)
{
	detail_panel_refresh(a, 0);
	a->dirty |= DIRTY_JOBS | DIRTY_STATUS;
}

static void on_answer(struct app *a, const struct watch_event *ev)
{
	ui_message(a, !ev->u.answer.ok, "%s", ev->u.answer.text);
}

/* The engine's news, one event at a time; what a panel asked for goes to
 * its file (ui/panel.h). */
static void on_event(struct app *a, struct watch_event *ev)
{
	switch (ev->kind) {
	case WATCH_EV_JOBS:		on_jobs(a); break;
	case WATCH_EV_LINK:		on_link(a); break;
	case WATCH_EV_LOG:		on_log(a); break;
	case WATCH_EV_HOSTKEY:		hostkey_panel_check(a); break;
	case WATCH_EV_ASK:		ask_panel_check(a); break;
	case WATCH_EV_USE:		on_use(a); break;
	case WATCH_EV_OUTCOMES:		on_outcomes(a, ev); break;
	case WATCH_EV_FILES:		on_files(a, ev); break;
	case WATCH_EV_RETRY:		retry_panel_done(a, &ev->u.retry); break;
	case WATCH_EV_ANSWER:		on_answer(a, ev); break;
	case WATCH_EV_EXPLAIN:		detail_panel_explain(a, ev); break;
	case WATCH_EV_REPORT:		report_panel_add(a, ev); break;
	case WATCH_EV_STEP:		submit_panel_step(a, ev); break;
	case WATCH_EV_SUBMITTED:	submit_panel_ended(a, ev); break;
	case WATCH_EV_FLAG:		notify_flag(a, ev); break;
	case WATCH_EV_PREFLIGHT:	break;	/* the first-run form's (setup_view.c) */
	}
}

/* Every event the engine queued, in the order it happened. */
static void take_events(struct app *a)
{
	struct watch_event ev;

	while (watch_next(a->watch, &ev)) {
		on_event(a, &ev);
		watch_event_free(&ev);
	}
}

static struct logpane *focused_pane(struct app *a, const struct log_ring **ring)
{
	int i = a->focus == FOCUS_ERR ? 1 : 0;

	*ring = a->log != NULL ? &a->log->ring[i] : NULL;
	return &a->pane[i];
}

/* Scroll the focused pane, or move in the jobs list. */
/* Past the end of the jobs list: each cluster holding older finished
 * jobs than it shows brings its next page (with a poll). */
static void more_finished(struct app *a)
{
	size_t i, left = 0;

	for (i = 0; i < watch_count(a->watch); i++) {
		const struct watched *c = watch_cluster(a->watch, i);
		size_t n = c->last.finished_left;
		if (watch_more_finished(a->watch, i) == 0)
			left += n;
	}
	if (left > 0)
		ui_message(a, 0, "older finished jobs: the next %d coming (%zu more on disk)",
		    TRACKER_PAGE, left);
}

static void move_by(struct app *a, long delta, int to_end)
{
	const struct log_ring *ring;
	struct logpane *p;

	if (a->focus == FOCUS_JOBS) {
		if ((delta > 0 || to_end > 0) && a->jt.nlines > 0 && a->jt.sel + 1 >= a->jt.nlines)
			more_finished(a);	/* already on the last line */
		if (to_end < 0)
			jt_select_line(&a->jt, 0), jt_move(&a->jt, 0);
		else if (to_end > 0)
			jt_move(&a->jt, (long)a->jt.nlines);
		else
			jt_move(&a->jt, delta);
		follow_selected(a);
		a->dirty |= DIRTY_JOBS;
		return;
	}
	p = focused_pane(a, &ring);
	if (ring == NULL)
		return;
	if (to_end < 0)
		logpane_top(p, ring);
	else if (to_end > 0)
		logpane_follow(p);
	else
		logpane_scroll(p, ring, delta);
	a->dirty |= DIRTY_PANES;
}

static int page(const struct app *a)
{
	int h = a->focus == FOCUS_JOBS ? draw_jobs_rows(a)
	    : (a->focus == FOCUS_OUT ? a->lay.out.h : a->lay.err.h) - 1;
	return h > 1 ? h - 1 : 1;
}

static void next_focus(struct app *a)
{
	do {
		a->focus = (enum focus)((a->focus + 1) % 3);
	} while ((a->focus == FOCUS_OUT && a->max == MAX_ERR) ||
	    (a->focus == FOCUS_ERR && a->max == MAX_OUT));
	a->dirty |= DIRTY_JOBS | DIRTY_PANES;
}

static void find(struct app *a, int dir)
{
	const struct log_ring *ring;
	struct logpane *p = focused_pane(a, &ring);

	if (ring == NULL || p->search[0] == '\0')
		return;
	switch (logpane_find(p, ring, dir)) {
	case LOGPANE_FOUND:
		break;
	case LOGPANE_WRAPPED:
		ui_message(a, 0, "'%s': none %s, went on from the %s", p->search,
		    dir > 0 ? "below" : "above", dir > 0 ? "top" : "end");
		break;
	default:
		ui_message(a, 1, "'%s' is in none of the pane's lines", p->search);
		break;
	}
	a->dirty |= DIRTY_PANES;
}

/* Moving in the jobs list or the focused pane. 1 if act was one. */
static int act_move(struct app *a, enum action act)
{
	const struct log_ring *ring;
	struct logpane *p;

	switch (act) {
	case ACT_UP:
	case ACT_DOWN:
		move_by(a, act == ACT_UP ? -1 : 1, 0);
		return 1;
	case ACT_PAGE_UP:
	case ACT_PAGE_DOWN:
		move_by(a, act == ACT_PAGE_UP ? -page(a) : page(a), 0);
		return 1;
	case ACT_TOP:
	case ACT_BOTTOM:
		move_by(a, 0, act == ACT_TOP ? -1 : 1);
		return 1;
	case ACT_LEFT:
	case ACT_RIGHT:
		p = focused_pane(a, &ring);
		if (act == ACT_LEFT)
			p->hscroll = p->hscroll > 8 ? p->hscroll - 8 : 0;
		else
			p->hscroll += 8;
		a->dirty |= DIRTY_PANES;
		return 1;
	default:
		return 0;
	}
}

/* How the screen is laid out and what the panes show. 1 if act was one. */
static int act_view(struct app *a, enum action act)
{
	const struct log_ring *ring;
	enum pane_max want;

	switch (act) {
	case ACT_FOCUS_NEXT:
		next_focus(a);
		return 1;
	case ACT_FOCUS_JOBS:
		a->focus = FOCUS_JOBS;
		a->dirty |= DIRTY_JOBS | DIRTY_PANES;
		return 1;
	case ACT_SPLIT:
		a->side_by_side = !a->side_by_side;
		a->dirty |= DIRTY_LAYOUT;
		return 1;
	case ACT_MAXIMIZE:
		want = a->focus == FOCUS_ERR ? MAX_ERR : MAX_OUT;
		a->max = a->max == want ? MAX_NONE : want;
		if (a->focus == FOCUS_JOBS && a->max != MAX_NONE)
			a->focus = FOCUS_OUT;
		a->dirty |= DIRTY_LAYOUT;
		return 1;
	case ACT_WRAP:
		if (a->focus == FOCUS_JOBS) {
			a->pane[0].wrap = a->pane[1].wrap = !a->pane[0].wrap;
		} else {
			struct logpane *p = focused_pane(a, &ring);
			p->wrap = !p->wrap;
		}
		a->dirty |= DIRTY_PANES;
		return 1;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		watch_poll_now(a->watch);
		a->dirty |= DIRTY_ALL;
		return 1;
	default:
		return 0;
	}
}

/* The jobs list: which rows, in which order, which are marked; dd. */
static void act_list(struct app *a, enum action act)
{
	switch (act) {
	case ACT_SORT:
		a->jt.sort = (enum jt_sort)((a->jt.sort + 1) % JT_SORT_COUNT);
		break;
	case ACT_GROUP:
		a->jt.group = !a->jt.group;
		break;
	case ACT_FINISHED:
		a->jt.hide_finished = !a->jt.hide_finished;
		break;
	case ACT_ARRAY:
		if (!jt_toggle_array(&a->jt))
			ui_message(a, 1, "not a job array: e expands or folds one");
		follow_selected(a);
		a->dirty |= DIRTY_JOBS;
		break;
	case ACT_MARK:
		jt_toggle_mark(&a->jt);
		jt_move(&a->jt, 1);
		follow_selected(a);
		a->dirty |= DIRTY_JOBS;
		return;
	case ACT_MARK_ALL:
		jt_mark_all_shown(&a->jt);
		a->dirty |= DIRTY_JOBS;
		return;
	case ACT_CANCEL_PREFIX:
		a->pending_d = !a->pending_d;
		if (!a->pending_d)
			panel_open_by(a, ACT_CANCEL);
		return;
	default:
		return;
	}
	jt_rebuild(&a->jt);
	if (act == ACT_FINISHED)
		follow_selected(a);
	a->dirty |= DIRTY_JOBS;
}

/* A key's action in the normal view: a panel's (its PANEL_LIST line), or
 * the app's own. */
static void act(struct app *a, enum action act)
{
	if (act != ACT_CANCEL_PREFIX)
		a->pending_d = 0;
	if (act != ACT_QUIT)
		a->quit_asked = 0;
	if (panel_open_by(a, act) || act_move(a, act) || act_view(a, act))
		return;
	switch (act) {
	case ACT_QUIT:
		if (submit_panel_running(a) && !a->quit_asked) {
			/* Quitting cuts the submit's remote commands short. */
			a->quit_asked = 1;
			ui_message(a, 1, "a submit is running: q again quits and cuts it short "
			    "(s shows its steps)");
			break;
		}
		a->quit = 1;
		break;
	case ACT_SEARCH:
		if (a->focus == FOCUS_JOBS) {
			a->mode = MODE_FILTER;
			snprintf(a->input, sizeof(a->input), "%s", a->jt.filter);
		} else {
			a->mode = MODE_SEARCH;
			a->input[0] = '\0';
		}
		a->dirty |= DIRTY_MESSAGE;
		break;
	case ACT_NEXT_MATCH:
	case ACT_PREV_MATCH:
		find(a, act == ACT_NEXT_MATCH ? 1 : -1);
		break;
	case ACT_DUMP:
		dump_screen(a);
		break;
	default:
		act_list(a, act);
		break;
	}
}

/* ---- keys --------------------------------------------------------------------------------- */

/* Typing into a prompt (filter or search). 1 while it stays open. */
void ui_edit_input(struct app *a, wint_t ch, int func)
{
	size_t len = strlen(a->input);

	if (func && (ch == KEY_BACKSPACE) ) {
		ch = 127;
		func = 0;
	}
	if (!func && (ch == 127 || ch == 8)) {
		/* Drop the last character, whole if it is multibyte. */
		while (len > 0 && ((unsigned char)a->input[len - 1] & 0xc0) == 0x80)
			len--;
		if (len > 0)
			len--;
		a->input[len] = '\0';
	} else if (!func && ch >= 32 && ch != 127) {
		char mb[8];
		int n = wctomb(mb, (wchar_t)ch);
		if (n > 0 && len + (size_t)n < sizeof(a->input)) {
			memcpy(a->input + len, mb, (size_t)n);
			a->input[len + (size_t)n] = '\0';
		}
	}
	if (a->mode == MODE_FILTER) {
		snprintf(a->jt.filter, sizeof(a->jt.filter), "%s", a->input);
		jt_rebuild(&a->jt);
		follow_selected(a);
		a->dirty |= DIRTY_JOBS;
	}
	a->dirty |= DIRTY_MESSAGE;
}

static void prompt_key(struct app *a, wint_t ch, int func)
{
	if (!func && ch == KEY_ESC) {
		if (a->mode == MODE_FILTER) {
			a->jt.filter[0] = '\0';
			jt_rebuild(&a->jt);
			follow_selected(a);
		} else {
			a->pane[a->focus == FOCUS_ERR].search[0] = '\0';
		}
		a->mode = MODE_NORMAL;
		a->dirty |= DIRTY_JOBS | DIRTY_PANES | DIRTY_MESSAGE;
	} else if (!func && (ch == '\n' || ch == '\r')) {
		if (a->mode == MODE_SEARCH) {
			struct logpane *p = &a->pane[a->focus == FOCUS_ERR];
			snprintf(p->search, sizeof(p->search), "%s", a->input);
			a->mode = MODE_NORMAL;
			/* From the line shown first, itself included. */
			if (p->first_shown > 0)
				p->first_shown--;
			find(a, 1);
		}
		a->mode = MODE_NORMAL;
		a->dirty |= DIRTY_MESSAGE | DIRTY_PANES;
	} else if (func && (ch == KEY_UP || ch == KEY_DOWN) && a->mode == MODE_FILTER) {
		act(a, ch == KEY_UP ? ACT_UP : ACT_DOWN);
	} else {
		ui_edit_input(a, ch, func);
	}
}

int ui_scroll_key(size_t *top, size_t n, wint_t ch, int func)
{
	size_t last = n > 0 ? n - 1 : 0;

	if ((func && ch == KEY_DOWN) || (!func && ch == 'j'))
		*top += *top < last;
	else if ((func && ch == KEY_UP) || (!func && ch == 'k'))
		*top -= *top > 0;
	else if ((func && ch == KEY_NPAGE) || (!func && ch == ' '))
		*top = *top + SCROLL_PAGE < last ? *top + SCROLL_PAGE : last;
	else if (func && ch == KEY_PPAGE)
		*top = *top > SCROLL_PAGE ? *top - SCROLL_PAGE : 0;
	else if ((func && ch == KEY_HOME) || (!func && ch == 'g'))
		*top = 0;
	else if ((func && ch == KEY_END) || (!func && ch == 'G'))
		*top = n > 10 ? n - 10 : 0;	/* the last lines, not the last alone */
	else
		return 0;
	return 1;
}

static void on_mouse(struct app *a)
{
	MEVENT ev;
	const struct rect *r;
	int wheel;

	if (getmouse(&ev) != OK)
		return;
	wheel = ev.bstate & BUTTON4_PRESSED ? -3 : ev.bstate & BUTTON5_PRESSED ? 3 : 0;
	if (wenclose(a->win_jobs, ev.y, ev.x)) {
		a->focus = FOCUS_JOBS;
		if (wheel != 0)
			move_by(a, wheel, 0);
		else if (ev.y > a->lay.jobs.y)
			jt_select_line(&a->jt, a->jt.top + (size_t)(ev.y - a->lay.jobs.y - 1));
		follow_selected(a);
	} else {
		r = a->win_out != NULL && wenclose(a->win_out, ev.y, ev.x) ? &a->lay.out : &a->lay.err;
		if (a->win_err == NULL && r == &a->lay.err)
			return;
		a->focus = r == &a->lay.out ? FOCUS_OUT : FOCUS_ERR;
		if (wheel != 0)
			move_by(a, wheel, 0);
	}
	a->dirty |= DIRTY_JOBS | DIRTY_PANES;
}

static void on_key(struct app *a, wint_t ch, int func)
{
	if (func && ch == KEY_RESIZE) {
		a->dirty |= DIRTY_LAYOUT;
		return;
	}
	if (func && ch == KEY_MOUSE) {
		on_mouse(a);
		return;
	}
	if (a->mode == MODE_FILTER || a->mode == MODE_SEARCH) {
		prompt_key(a, ch, func);
		return;
	}
	if (panel_of(a->mode) != NULL) {
		panel_key(a, ch, func);
		return;
	}
	ui_message_clear(a);
	watch_user_active(a->watch);
	if (!func && ch == KEY_ESC) {
		if (a->jt.filter[0] != '\0') {
			a->jt.filter[0] = '\0';
			jt_rebuild(&a->jt);
			follow_selected(a);
			a->dirty |= DIRTY_JOBS | DIRTY_MESSAGE;
		}
		return;
	}
	act(a, keymap_lookup(a->focus == FOCUS_JOBS ? KC_JOBS : KC_PANE, (int)ch));
}

/* ---- the loop ----------------------------------------------------------------------------- */

/* When the status bar's text will change by itself: a reconnect countdown,
 * a poll about to count as "not answering", or counting how long. -1:
 * never (it changes only with news from the engine). */
static int64_t status_change_at(struct app *a, int64_t now)
{
	int64_t at = -1, t;
	size_t i;

	/* Each cluster, then the detail's fetch (index count). */
	for (i = 0; i <= watch_count(a->watch); i++) {
		const struct watched *c = i < watch_count(a->watch) ? watch_cluster(a->watch, i) : NULL;
		int64_t since = c != NULL ? watch_waiting_since(c) : detail_panel_fetching(a);
		if (c != NULL && (c->link == LINK_RECONNECTING || (c->polls && !c->last.scheduler_ok)))
			t = now + STATUS_TICK_MS;
		else if (since != 0 && now - since < LOGPANE_SLOW_MS)
			t = since + LOGPANE_SLOW_MS;	/* its spinner shows then */
		else if (since != 0)
			t = now + SPIN_TICK_MS;		/* the spinner turns, the seconds count */
		else
			continue;
		if (at < 0 || t < at)
			at = t;
	}
	if (submit_panel_ticking(a) && (at < 0 || now + STATUS_TICK_MS < at))
		at = now + STATUS_TICK_MS;
	/* Commands borrowing a session come and go on the lender's threads,
	 * unseen by the loop: counted again each tick while any does. */
	if ((a->lent_shown > 0 || watch_lent_clients(a->watch) > 0) &&
	    (at < 0 || now + STATUS_TICK_MS < at))
		at = now + STATUS_TICK_MS;
	return at;
}

static void loop(struct app *a)
{
	struct pollfd fds[MAX_CLUSTERS + 2];
	int wfds[MAX_CLUSTERS];
	size_t nw = watch_fds(a->watch, wfds, MAX_CLUSTERS), i;
	int64_t status_at = -1;

	fds[0].fd = STDIN_FILENO;
	fds[1].fd = sig_pipe[0];
	for (i = 0; i < nw; i++)
		fds[2 + i].fd = wfds[i];
	while (!a->quit) {
		int64_t now = watch_now_ms(), next = -1, t0;
		int timeout, rc, keys, news;
		wint_t ch;
		int kr;

		watch_tick(a->watch, now, &next);
		take_events(a);
		if (status_at >= 0 && now >= status_at) {
			a->dirty |= DIRTY_STATUS | DIRTY_JOBS |	/* stale rows dim */
			    DIRTY_PANES |			/* their age, a spinner */
			    (submit_panel_ticking(a) ? DIRTY_DIALOG : 0);
			detail_panel_spin(a);		/* a fetch's spinner */
		}
		status_at = status_change_at(a, now);
		if (status_at >= 0 && (next < 0 || status_at < next))
			next = status_at;
		if (watch_lent_clients(a->watch) != a->lent_shown)
			a->dirty |= DIRTY_STATUS;
		if (a->dirty)
			draw(a);
		timeout = next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
		for (i = 0; i < nw + 2; i++) {
			fds[i].events = POLLIN;
			fds[i].revents = 0;
		}
		rc = poll(fds, nw + 2, timeout);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0 && (fds[1].revents & POLLIN)) {
			unsigned char sig;
			while (read(sig_pipe[0], &sig, 1) == 1)
				if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
					a->quit = 1;
		}
		news = 0;
		for (i = 0; rc > 0 && i < nw; i++)
			news |= (fds[2 + i].revents & POLLIN) != 0;
		if (news) {
			/* One dispatch takes every worker's messages. */
			watch_dispatch(a->watch);
			take_events(a);
		}
		/* Keys (after EINTR too: SIGWINCH leaves KEY_RESIZE), answered
		 * on screen at once; the time that takes is in the debug log
		 * (make bench reads it). */
		keys = 0;
		t0 = now_us();
		while (!a->quit && (kr = wget_wch(a->win_input, &ch)) != ERR) {
			on_key(a, ch, kr == KEY_CODE_YES);
			keys++;
		}
		if (keys > 0)
			ask_panel_check(a);	/* a dialog closed: a question may wait */
		if (keys > 0 && !a->quit) {
			if (a->dirty)
				draw(a);
			log_msg(LOG_DEBUG, "ui: %d key%s answered in %lld us", keys, keys == 1 ? "" : "s",
			    (long long)(now_us() - t0));
		}
	}
}

static void load_theme(struct app *a, const char *name, int use_color, char **warning)
{
	char *err = NULL;

	/* Without colours (NO_COLOR, or a terminal that has none) the
	 * monochrome theme's attributes carry the meaning. */
	if (!use_color)
		name = "monochrome";
	if (theme_load(name, &a->theme, &err) != 0) {
		char *w = xasprintf("using the default theme: %s%s%s", err, *warning ? "; " : "",
		    *warning ? *warning : "");
		free(*warning);
		*warning = w;
		free(err);
		theme_builtin(&a->theme);
	}
}

/* The config's keys: into the keymap; the first problem, with its place
 * in the file, goes to *warning (the rest of the keys still apply). */
static void apply_keys(struct app *a, char **warning)
{
	size_t i;

	for (i = 0; i < a->cfg.nkeys; i++) {
		const struct config_entry *e = &a->cfg.keys[i];
		char *err = NULL, *path;
		if (keymap_bind(e->name, e->key, &err) != 0) {
			if (*warning == NULL) {
				path = config_file_path();
				*warning = xasprintf("%s:%u:%u: %s", path, e->line, e->col, err);
				free(path);
			}
			free(err);
		}
	}
}

/* The config's columns: in their order; an unknown one is reported. */
static void apply_columns(struct app *a, char **warning)
{
	size_t i;

	for (i = 0; i < a->cfg.ncolumns; i++) {
		const struct config_entry *e = &a->cfg.columns[i];
		int c = draw_column_index(e->name);
		if (c < 0 && *warning == NULL) {
			char *path = config_file_path();
			*warning = xasprintf("%s:%u:%u: columns: unknown column '%s' (cluster, id, slurm, "
			    "name, partition, size, state, native, time, progress, reason)", path,
			    e->line, e->col, e->name);
			free(path);
		}
		for (int k = 0; c >= 0 && k < a->ncolumns; k++)
			if (a->columns[k] == c)
				c = -1;		/* once is enough */
		if (c >= 0 && a->ncolumns < (int)(sizeof(a->columns) / sizeof(a->columns[0])))
			a->columns[a->ncolumns++] = c;
	}
}

static int open_log(void)
{
	const char *path = getenv("TAOTOP_LOG");

	if (path == NULL || path[0] == '\0')
		return 0;
	if (log_open(path, getenv("TAOTOP_DEBUG") ? LOG_DEBUG : LOG_INFO) != 0) {
		fprintf(stderr, "taotop: cannot write the log %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* What the monitor reads before the screen is its own: the config (none
 * yet: *first_run), the records, the signals. 0, or the exit status after
 * saying why on stderr. */
static int app_load(struct app *a, int *first_run)
{
	char *err = NULL;
	int rc;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "taotop: the monitor needs a terminal; for scripts use the verbs "
		    "(taotop jobs, taotop status JOB, ...)\n");
		return 2;
	}
	if (open_log() != 0)
		return 1;
	if ((rc = config_load(&a->cfg, &err)) == CONFIG_NONE) {
		*first_run = 1;	/* the setup form, once the screen is ours */
		free(err);
		err = NULL;
	} else if (rc != 0) {
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		return 2;
	}
	if (a->cfg.n > MAX_CLUSTERS) {
		fprintf(stderr, "taotop: %zu clusters configured; the monitor watches at most %d\n",
		    a->cfg.n, MAX_CLUSTERS);
		config_free(&a->cfg);
		return 2;
	}
	a->store = store_open(NULL, &err);
	if (a->store == NULL) {
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		config_free(&a->cfg);
		return 1;
	}
	if (signals_init() != 0) {
		fprintf(stderr, "taotop: %s\n", strerror(errno));
		store_close(a->store);
		config_free(&a->cfg);
		return 1;
	}
	return 0;
}

/* The jobs list, the panes, the config's keys and columns. */
static void app_init(struct app *a, const struct ui_opts *o, char **warning)
{
	setlocale(LC_ALL, "");
	text_init(strcmp(nl_langinfo(CODESET), "UTF-8") == 0);
	a->readonly = o->readonly;
	a->sgr = o->log_colors >= 0 ? o->log_colors : a->cfg.log_colors > 0;
	jt_init(&a->jt);
	logpane_init(&a->pane[0]);
	logpane_init(&a->pane[1]);
	apply_keys(a, warning);
	apply_columns(a, warning);
}

/* The screen is taotop's: curses, the key window, the theme. */
static void screen_open(struct app *a, const struct ui_opts *o, char **warning)
{
	const char *nc = getenv("NO_COLOR");
	int use_color;

	initscr();
	cbreak();
	noecho();
	nonl();
	/* Keys are read from a window of their own that is never drawn:
	 * reading from stdscr would refresh it, blank, over the others. */
	a->win_input = newwin(1, 1, 0, 0);
	keypad(a->win_input, TRUE);
	nodelay(a->win_input, TRUE);
	curs_set(0);
	set_escdelay(25);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	use_color = has_colors() && (nc == NULL || nc[0] == '\0');
	load_theme(a, o->theme ? o->theme : a->cfg.theme ? a->cfg.theme : "default", use_color,
	    warning);
	draw_apply_theme(a, use_color);
	getmaxyx(stdscr, a->lines, a->cols);
	a->side_by_side = a->cols >= 140;
	a->dirty = DIRTY_ALL;
}

/* The loop's end: the terminal given back first (whatever follows may
 * take a moment), then the engine and the app's state. err: why the
 * monitor could not go on, or NULL. */
static void app_close(struct app *a, char *err)
{
	panel_free_all(a);
	draw_free_windows(a);
	delwin(a->win_input);
	endwin();
	if (err != NULL)
		fprintf(stderr, "taotop: %s\n", err);
	free(err);
	if (a->watch != NULL)
		watch_free(a->watch);
	jt_free(&a->jt);
	theme_free(&a->theme);
	free(a->log_key);
	free(a->message);
	free(a->seen_polls);
	store_close(a->store);
	config_free(&a->cfg);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	log_close();
}

int ui_run(const struct ui_opts *o)
{
	struct app a;
	char *err = NULL, *warning = NULL;
	int rc, first_run = 0;

	memset(&a, 0, sizeof(a));
	if ((rc = app_load(&a, &first_run)) != 0)
		return rc;
	app_init(&a, o, &warning);
	screen_open(&a, o, &warning);
	if (first_run && (setup_view_run(&a, sig_pipe[0], NULL) != 0 ||
	    config_load(&a.cfg, &err) != 0)) {
		/* Quit from the form (nothing written), or the file written
		 * does not read back, which would be taotop's bug. */
		a.quit = 1;
	} else {
		a.watch = watch_new(&a.cfg, a.store);
		a.seen_polls = xcalloc(a.cfg.n + 1, sizeof(*a.seen_polls));
		/* The sessions lent to the user's taotop commands: one
		 * connection, one one-time code, for all of them. */
		if (watch_lend_start(a.watch, &a.cfg, &err) < 0 && warning == NULL) {
			warning = xasprintf("sessions not shared with taotop's commands: %s", err);
		}
		free(err);
		err = NULL;
	}
	if (warning != NULL) {
		ui_message(&a, 1, "%s", warning);
		free(warning);
	}
	if (!a.quit)
		loop(&a);
	app_close(&a, err);
	return 0;
}

/* The monitor's loop, its signals and its keys. Drawing is draw.c's. */
#include "ui/ui.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <wchar.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/actions.h"
#include "engine/record.h"
#include "ui/app.h"
#include "ui/detail.h"
#include "ui/keymap.h"
#include "ui/text.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define STATUS_TICK_MS	1000	/* while a countdown or "not answering" shows */
#define MAX_CLUSTERS	64
#define KEY_ESC		27

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

static void set_message(struct app *a, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_message(struct app *a, int error, const char *fmt, ...)
{
	va_list ap;

	free(a->message);
	va_start(ap, fmt);
	a->message = xvasprintf(fmt, ap);
	va_end(ap);
	a->message_error = error;
	a->dirty |= DIRTY_MESSAGE;
}

static void clear_message(struct app *a)
{
	if (a->message != NULL) {
		free(a->message);
		a->message = NULL;
		a->dirty |= DIRTY_MESSAGE;
	}
}

/* The id the engine takes for a row: the record's, else SLURM's own. */
static const char *engine_id(const struct job_row *r)
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
	a->log = watch_follow(a->watch, e->cluster, engine_id(e->row));
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
	a->dirty |= DIRTY_JOBS;
}

static void build_detail(struct app *a);
static void edit_input(struct app *a, wint_t ch, int func);

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
			char text[200], *osc;
			size_t j;
			snprintf(text, sizeof(text), "%s %s is %s (%s)", c->cfg->name, ev->record_id,
			    tao_state_name(ev->to), ev->native ? ev->native : "?");
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
	}
}

/* ---- engine news -------------------------------------------------------------------------- */

static void take_outcomes(struct app *a)
{
	struct watch_outcome *o;
	size_t n = watch_take_outcomes(a->watch, &o), i, ok = 0;

	if (n == 0)
		return;
	a->outs = xreallocarray(a->outs, a->nouts + n, sizeof(*a->outs));
	memcpy(&a->outs[a->nouts], o, n * sizeof(*o));
	a->nouts += n;
	free(o);
	a->outcomes_wanted = a->outcomes_wanted > n ? a->outcomes_wanted - n : 0;
	for (i = 0; i < a->nouts; i++)
		ok += a->outs[i].ok;
	if (a->outcomes_wanted == 0 && a->mode != MODE_OUTCOMES)
		set_message(a, ok < a->nouts, "cancel: %zu of %zu done", ok, a->nouts);
	a->dirty |= DIRTY_DIALOG;
}

static void on_watch(struct app *a, unsigned bits)
{
	size_t i;

	if (bits & WATCH_JOBS) {
		notify_changes(a);
		rebuild_jobs(a);
		/* A poll frees as much as it allocates (every record parsed
		 * anew on the worker's arena): give the pages back. */
		malloc_trim(0);
	}
	if (bits & WATCH_LINK)
		a->dirty |= DIRTY_STATUS;
	if (bits & WATCH_LOG)
		a->dirty |= DIRTY_PANES;
	if (bits & WATCH_CANCEL)
		take_outcomes(a);
	if ((bits & WATCH_FILES) && a->detail_key != NULL) {
		watch_files_free(a->files, a->nfiles);
		a->nfiles = watch_take_files(a->watch, &a->files);
		a->fetching = 0;
		build_detail(a);
	}
	if ((bits & WATCH_JOBS) && a->mode == MODE_DETAIL)
		build_detail(a);
	if (bits & WATCH_ACTION) {
		int ok = 0;
		char *answer = watch_take_answer(a->watch, &ok);
		if (answer != NULL)
			set_message(a, !ok, "%s", answer);
		free(answer);
	}
	if (bits & WATCH_RETRY) {
		struct watch_retry r;
		if (watch_take_retry(a->watch, &r)) {
			set_message(a, r.new_id == NULL, "%s", r.message);
			watch_retry_free(&r);
		}
	}
	if ((bits & WATCH_HOSTKEY) && a->mode == MODE_NORMAL) {
		for (i = 0; i < watch_count(a->watch); i++) {
			enum link_state l = watch_cluster(a->watch, i)->link;
			if (l == LINK_HOSTKEY_UNKNOWN || l == LINK_HOSTKEY_CHANGED) {
				a->hostkey_cluster = i;
				a->mode = MODE_HOSTKEY;
				a->dirty |= DIRTY_DIALOG;
				break;
			}
		}
	}
}

/* ---- the detail view ------------------------------------------------------------------------ */

static void free_detail_lines(struct app *a)
{
	size_t i;

	for (i = 0; i < a->ndetail; i++)
		free(a->detail[i]);
	free(a->detail);
	a->detail = NULL;
	a->ndetail = 0;
}

static void close_detail(struct app *a)
{
	free_detail_lines(a);
	free(a->detail_key);
	a->detail_key = NULL;
	watch_files_free(a->files, a->nfiles);
	a->files = NULL;
	a->nfiles = 0;
	a->fetching = 0;
}

static const struct jt_entry *entry_by_key(const struct app *a, const char *key)
{
	size_t i;

	for (i = 0; key != NULL && i < a->jt.n; i++)
		if (strcmp(a->jt.entries[i].key, key) == 0)
			return &a->jt.entries[i];
	return NULL;
}

/* (Re)build the detail lines from the record (local), the row (the latest
 * poll) and the fetched files. */
static void build_detail(struct app *a)
{
	const struct jt_entry *e = entry_by_key(a, a->detail_key);
	struct job_record *r = NULL;
	char *err = NULL;

	if (e == NULL)
		return;		/* gone from the list: keep what is shown */
	free_detail_lines(a);
	if (e->row->record_id != NULL && store_load(a->store, e->row->record_id, &r, &err) != 0)
		free(err);
	a->ndetail = detail_lines(r, e->row, e->cluster_name, a->files, a->nfiles, a->fetching,
	    text_utf8(), &a->detail);
	record_free(r);
	a->dirty |= DIRTY_DIALOG;
}

static void open_detail(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);
	struct job_record *r = NULL;
	char *err = NULL, **paths;
	size_t n, i;

	if (e == NULL)
		return;
	close_detail(a);
	a->detail_key = xstrdup(e->key);
	a->detail_cluster = e->cluster;
	a->detail_top = 0;
	if (e->row->record_id != NULL && store_load(a->store, e->row->record_id, &r, &err) == 0) {
		n = detail_paths(r, &paths);
		if (n > 0) {
			watch_fetch(a->watch, e->cluster, paths, n);
			a->fetching = 1;
		}
		for (i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		record_free(r);
	}
	free(err);
	build_detail(a);
	a->mode = MODE_DETAIL;
}

/* ---- retry and screen dump ------------------------------------------------------------------- */

static void ask_retry(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);

	if (a->readonly) {
		set_message(a, 1, "read-only (--readonly): retry is disabled");
		return;
	}
	if (e == NULL || e->row->record_id == NULL) {
		set_message(a, 1, "only taotop's own jobs can be retried (they have a staged sbatch)");
		return;
	}
	if (!tao_state_final(e->row->state)) {
		set_message(a, 1, "%s is %s: cancel it first, or wait for it to end", e->row->record_id,
		    tao_state_name(e->row->state));
		return;
	}
	free(a->retry_job);
	a->retry_job = xstrdup(e->row->record_id);
	a->retry_cluster = e->cluster;
	a->mode = MODE_CONFIRM_RETRY;
	a->dirty |= DIRTY_DIALOG;
}

/* ---- the scheduler's other actions ---------------------------------------------------------- */

static void open_actions(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);

	if (a->readonly) {
		set_message(a, 1, "read-only (--readonly): actions are disabled");
		return;
	}
	if (e == NULL)
		return;
	if (e->row->slurm_id[0] == '\0') {
		set_message(a, 1, "%s has no SLURM job to act on", engine_id(e->row));
		return;
	}
	free(a->act_job);
	a->act_job = xstrdup(engine_id(e->row));
	a->act_cluster = e->cluster;
	a->mode = MODE_ACTIONS;
	a->dirty |= DIRTY_DIALOG;
}

/* Signals that end or stop the job ask first; the others are sent. */
static int destroys(int kind, const char *arg)
{
	return kind == ACTION_REQUEUE || (kind == ACTION_SIGNAL && (strcmp(arg, "KILL") == 0 ||
	    strcmp(arg, "TERM") == 0 || strcmp(arg, "INT") == 0 || strcmp(arg, "HUP") == 0 ||
	    strcmp(arg, "STOP") == 0));
}

static void do_action(struct app *a, int kind, const char *arg)
{
	a->act_kind = kind;
	snprintf(a->act_arg, sizeof(a->act_arg), "%s", arg ? arg : "");
	if (destroys(kind, a->act_arg) && a->mode != MODE_CONFIRM_ACTION) {
		a->mode = MODE_CONFIRM_ACTION;
		a->dirty |= DIRTY_DIALOG;
		return;
	}
	watch_action(a->watch, a->act_cluster, a->act_job, kind, arg);
	set_message(a, 0, "%s: %s%s%s...", a->act_job, job_action_name(kind), arg ? " " : "",
	    arg ? arg : "");
	a->mode = MODE_NORMAL;
	a->dirty |= DIRTY_DIALOG;
}

static void actions_key(struct app *a, wint_t ch, int func)
{
	size_t nsig = 0;

	while (job_signals[nsig] != NULL)
		nsig++;
	if (!func && (ch == KEY_ESC || ch == 'q')) {
		a->mode = MODE_NORMAL;
		a->dirty |= DIRTY_DIALOG;
		return;
	}
	switch (a->mode) {
	case MODE_ACTIONS:
		if (ch == 'r')
			do_action(a, ACTION_REQUEUE, NULL);
		else if (ch == 'h')
			do_action(a, ACTION_HOLD, NULL);
		else if (ch == 'l')
			do_action(a, ACTION_RELEASE, NULL);
		else if (ch == 's') {
			a->pick = 0;
			a->mode = MODE_SIGNALS;
		} else if (ch == 't') {
			a->input[0] = '\0';
			a->mode = MODE_TIME;
		}
		break;
	case MODE_SIGNALS:
		if ((func && ch == KEY_DOWN) || (!func && ch == 'j'))
			a->pick += a->pick + 1 < nsig;
		else if ((func && ch == KEY_UP) || (!func && ch == 'k'))
			a->pick -= a->pick > 0;
		else if (!func && (ch == '\r' || ch == '\n'))
			do_action(a, ACTION_SIGNAL, job_signals[a->pick]);
		break;
	case MODE_CONFIRM_ACTION:
		if (!func && (ch == 'y' || ch == 'Y' || ch == '\r' || ch == '\n'))
			do_action(a, a->act_kind, a->act_arg[0] ? a->act_arg : NULL);
		else if (!func && (ch == 'n' || ch == 'N'))
			a->mode = MODE_NORMAL;
		break;
	default:
		break;
	}
	a->dirty |= DIRTY_DIALOG | DIRTY_MESSAGE;
}

/* The time limit prompt: Enter checks and sends it. */
static void time_key(struct app *a, wint_t ch, int func)
{
	char limit[32], *err = NULL;

	if (!func && ch == KEY_ESC) {
		a->mode = MODE_NORMAL;
	} else if (!func && (ch == '\r' || ch == '\n')) {
		if (job_time_limit_parse(a->input, limit, sizeof(limit), &err) != 0) {
			set_message(a, 1, "%s", err);
			free(err);
			a->mode = MODE_NORMAL;
		} else {
			a->mode = MODE_NORMAL;
			do_action(a, ACTION_TIME_LIMIT, limit);
		}
	} else {
		edit_input(a, ch, func);
	}
	a->dirty |= DIRTY_MESSAGE | DIRTY_DIALOG;
}

/* The screen as plain text, in the state folder beside the records. */
static void dump_screen(struct app *a)
{
	const char *dir = store_dir(a->store);
	char stamp[32], *path, *parent;
	const char *slash = strrchr(dir, '/');
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;
	int fd, y;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	parent = slash != NULL ? xstrndup(dir, (size_t)(slash - dir)) : xstrdup(".");
	path = xasprintf("%s/screen-%s.txt", parent, stamp);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		set_message(a, 1, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path), free(parent);
		return;
	}
	for (y = 0; y < a->lines; y++) {
		wchar_t line[1024];
		char mb[4096];
		int n = mvwinnwstr(curscr, y, 0, line, a->cols < 1023 ? a->cols : 1023);
		size_t len;
		if (n == ERR)
			line[0] = L'\0';
		len = wcstombs(mb, line, sizeof(mb) - 1);
		if (len == (size_t)-1)
			len = 0;
		while (len > 0 && mb[len - 1] == ' ')
			len--;
		mb[len] = '\0';
		fprintf(f, "%s\n", mb);
	}
	if (fclose(f) != 0)
		set_message(a, 1, "cannot write %s: %s", path, strerror(errno));
	else
		set_message(a, 0, "screen written to %s", path);
	free(path), free(parent);
}

/* ---- actions ------------------------------------------------------------------------------ */

static void free_cancel(struct app *a)
{
	size_t i;

	for (i = 0; i < a->ncancel; i++) {
		free(a->cancel[i].job);
		free(a->cancel[i].label);
	}
	free(a->cancel);
	a->cancel = NULL;
	a->ncancel = 0;
}

static void ask_cancel(struct app *a)
{
	const struct jt_entry **v;
	size_t n, i;

	if (a->readonly) {
		set_message(a, 1, "read-only (--readonly): cancel is disabled");
		return;
	}
	n = jt_targets(&a->jt, &v);
	if (n == 0) {
		free(v);
		set_message(a, 1, "no job to cancel");
		return;
	}
	free_cancel(a);
	a->cancel = xcalloc(n, sizeof(*a->cancel));
	for (i = 0; i < n; i++) {
		const struct job_row *r = v[i]->row;
		a->cancel[i].cluster = v[i]->cluster;
		a->cancel[i].job = xstrdup(engine_id(r));
		a->cancel[i].label = xasprintf("%s  %s  %s  %s", v[i]->cluster_name,
		    r->record_id ? r->record_id : (r->shown_id[0] ? r->shown_id : r->slurm_id),
		    r->name ? r->name : "", tao_state_name(r->state));
	}
	a->ncancel = n;
	free(v);
	a->mode = MODE_CONFIRM_CANCEL;
	a->dirty |= DIRTY_DIALOG;
}

static void do_cancel(struct app *a)
{
	size_t c, i, n;
	char **jobs = xcalloc(a->ncancel + 1, sizeof(*jobs));

	watch_outcomes_free(a->outs, a->nouts);
	a->outs = NULL;
	a->nouts = 0;
	/* One request per cluster, each cancelling its jobs in turn. */
	for (c = 0; c < watch_count(a->watch); c++) {
		for (i = n = 0; i < a->ncancel; i++)
			if (a->cancel[i].cluster == c)
				jobs[n++] = a->cancel[i].job;
		if (n > 0)
			watch_cancel(a->watch, c, jobs, n);
	}
	free(jobs);
	a->outcomes_wanted = a->ncancel;
	free_cancel(a);
	jt_clear_marks(&a->jt);
	a->mode = MODE_OUTCOMES;
	a->dirty |= DIRTY_DIALOG | DIRTY_JOBS;
}

static struct logpane *focused_pane(struct app *a, const struct log_ring **ring)
{
	int i = a->focus == FOCUS_ERR ? 1 : 0;

	*ring = a->log != NULL ? &a->log->ring[i] : NULL;
	return &a->pane[i];
}

/* Scroll the focused pane, or move in the jobs list. */
static void move_by(struct app *a, long delta, int to_end)
{
	const struct log_ring *ring;
	struct logpane *p;

	if (a->focus == FOCUS_JOBS) {
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
	if (logpane_find(p, ring, dir) != 0)
		set_message(a, 1, "'%s' not found %s", p->search, dir > 0 ? "below" : "above");
	a->dirty |= DIRTY_PANES;
}

static void act(struct app *a, enum action act)
{
	const struct log_ring *ring;
	struct logpane *p;

	if (act != ACT_CANCEL_PREFIX)
		a->pending_d = 0;
	switch (act) {
	case ACT_NONE:
		break;
	case ACT_QUIT:
		a->quit = 1;
		break;
	case ACT_HELP:
		a->mode = MODE_HELP;
		a->help_top = 0;
		a->dirty |= DIRTY_DIALOG;
		break;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		watch_poll_now(a->watch);
		a->dirty |= DIRTY_ALL;
		break;
	case ACT_UP:
		move_by(a, -1, 0);
		break;
	case ACT_DOWN:
		move_by(a, 1, 0);
		break;
	case ACT_PAGE_UP:
		move_by(a, -page(a), 0);
		break;
	case ACT_PAGE_DOWN:
		move_by(a, page(a), 0);
		break;
	case ACT_TOP:
		move_by(a, 0, -1);
		break;
	case ACT_BOTTOM:
		move_by(a, 0, 1);
		break;
	case ACT_FOCUS_NEXT:
		next_focus(a);
		break;
	case ACT_FOCUS_JOBS:
		a->focus = FOCUS_JOBS;
		a->dirty |= DIRTY_JOBS | DIRTY_PANES;
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
		find(a, 1);
		break;
	case ACT_PREV_MATCH:
		find(a, -1);
		break;
	case ACT_SORT:
		a->jt.sort = (enum jt_sort)((a->jt.sort + 1) % JT_SORT_COUNT);
		jt_rebuild(&a->jt);
		a->dirty |= DIRTY_JOBS;
		break;
	case ACT_GROUP:
		a->jt.group = !a->jt.group;
		jt_rebuild(&a->jt);
		a->dirty |= DIRTY_JOBS;
		break;
	case ACT_FINISHED:
		a->jt.hide_finished = !a->jt.hide_finished;
		jt_rebuild(&a->jt);
		follow_selected(a);
		a->dirty |= DIRTY_JOBS;
		break;
	case ACT_MARK:
		jt_toggle_mark(&a->jt);
		jt_move(&a->jt, 1);
		follow_selected(a);
		a->dirty |= DIRTY_JOBS;
		break;
	case ACT_MARK_ALL:
		jt_mark_all_shown(&a->jt);
		a->dirty |= DIRTY_JOBS;
		break;
	case ACT_CANCEL:
		ask_cancel(a);
		break;
	case ACT_CANCEL_PREFIX:
		if (a->pending_d) {
			a->pending_d = 0;
			ask_cancel(a);
		} else {
			a->pending_d = 1;
		}
		break;
	case ACT_SPLIT:
		a->side_by_side = !a->side_by_side;
		a->dirty |= DIRTY_LAYOUT;
		break;
	case ACT_MAXIMIZE: {
		enum pane_max want = a->focus == FOCUS_ERR ? MAX_ERR : MAX_OUT;
		a->max = a->max == want ? MAX_NONE : want;
		if (a->focus == FOCUS_JOBS && a->max != MAX_NONE)
			a->focus = FOCUS_OUT;
		a->dirty |= DIRTY_LAYOUT;
		break;
	}
	case ACT_WRAP:
		if (a->focus == FOCUS_JOBS) {
			a->pane[0].wrap = a->pane[1].wrap = !a->pane[0].wrap;
		} else {
			p = focused_pane(a, &ring);
			p->wrap = !p->wrap;
		}
		a->dirty |= DIRTY_PANES;
		break;
	case ACT_DETAIL:
		open_detail(a);
		break;
	case ACT_RETRY:
		ask_retry(a);
		break;
	case ACT_DUMP:
		dump_screen(a);
		break;
	case ACT_ACTIONS:
		open_actions(a);
		break;
	case ACT_LEFT:
	case ACT_RIGHT:
		p = focused_pane(a, &ring);
		if (act == ACT_LEFT)
			p->hscroll = p->hscroll > 8 ? p->hscroll - 8 : 0;
		else
			p->hscroll += 8;
		a->dirty |= DIRTY_PANES;
		break;
	}
}

/* ---- keys --------------------------------------------------------------------------------- */

/* Typing into a prompt (filter or search). 1 while it stays open. */
static void edit_input(struct app *a, wint_t ch, int func)
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
		edit_input(a, ch, func);
	}
}

static void dialog_key(struct app *a, wint_t ch, int func)
{
	int close = !func && (ch == KEY_ESC || ch == 'q');

	switch (a->mode) {
	case MODE_HELP:
		if (!func && ch == '?')
			close = 1;
		else if ((func && ch == KEY_DOWN) || (!func && ch == 'j'))
			a->help_top += a->help_top + 1 < a->nhelp;
		else if ((func && ch == KEY_UP) || (!func && ch == 'k'))
			a->help_top -= a->help_top > 0;
		else if (func && ch == KEY_NPAGE)
			a->help_top = a->help_top + 10 < a->nhelp ? a->help_top + 10 : a->nhelp - 1;
		else if (func && ch == KEY_PPAGE)
			a->help_top = a->help_top > 10 ? a->help_top - 10 : 0;
		break;
	case MODE_CONFIRM_CANCEL:
		if (!func && (ch == 'y' || ch == 'Y' || ch == '\n' || ch == '\r')) {
			do_cancel(a);
			return;
		}
		if (!func && (ch == 'n' || ch == 'N'))
			close = 1;
		if (close)
			free_cancel(a);
		break;
	case MODE_OUTCOMES:
		close = close || (!func && (ch == '\n' || ch == '\r'));
		break;
	case MODE_DETAIL:
		if (!func && (ch == '\r' || ch == '\n'))
			close = 1;
		else if ((func && ch == KEY_DOWN) || (!func && ch == 'j'))
			a->detail_top += a->detail_top + 1 < a->ndetail;
		else if ((func && ch == KEY_UP) || (!func && ch == 'k'))
			a->detail_top -= a->detail_top > 0;
		else if ((func && ch == KEY_NPAGE) || (!func && ch == ' '))
			a->detail_top = a->detail_top + 20 < a->ndetail ? a->detail_top + 20
			    : (a->ndetail ? a->ndetail - 1 : 0);
		else if (func && ch == KEY_PPAGE)
			a->detail_top = a->detail_top > 20 ? a->detail_top - 20 : 0;
		else if (!func && ch == 'g')
			a->detail_top = 0;
		else if (!func && ch == 'G')
			a->detail_top = a->ndetail > 10 ? a->ndetail - 10 : 0;
		else if (!func && ch == 'P')
			dump_screen(a);
		if (close)
			close_detail(a);
		break;
	case MODE_CONFIRM_RETRY:
		if (!func && (ch == 'y' || ch == 'Y' || ch == '\n' || ch == '\r')) {
			watch_retry(a->watch, a->retry_cluster, a->retry_job);
			set_message(a, 0, "retrying %s from what it staged...", a->retry_job);
			close = 1;
		} else if (!func && (ch == 'n' || ch == 'N')) {
			close = 1;
		}
		break;
	case MODE_HOSTKEY:
		if (!func && ch == 'a' &&
		    watch_cluster(a->watch, a->hostkey_cluster)->link == LINK_HOSTKEY_UNKNOWN) {
			watch_trust(a->watch, a->hostkey_cluster);
			set_message(a, 0, "host key accepted: written to known_hosts; connecting");
			close = 1;
		} else if (!func && ch == 'r') {
			close = 1;
		}
		break;
	default:
		break;
	}
	if (close)
		a->mode = MODE_NORMAL;
	a->dirty |= DIRTY_DIALOG;
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
	if (a->mode == MODE_TIME) {
		time_key(a, ch, func);
		return;
	}
	if (a->mode == MODE_ACTIONS || a->mode == MODE_SIGNALS || a->mode == MODE_CONFIRM_ACTION) {
		actions_key(a, ch, func);
		return;
	}
	if (a->mode != MODE_NORMAL) {
		dialog_key(a, ch, func);
		return;
	}
	clear_message(a);
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
static int64_t status_change_at(const struct app *a, int64_t now)
{
	int64_t at = -1, t;
	size_t i;

	for (i = 0; i < watch_count(a->watch); i++) {
		const struct watched *c = watch_cluster(a->watch, i);
		if (c->link == LINK_RECONNECTING || (c->polled && !c->last.scheduler_ok))
			t = now + STATUS_TICK_MS;
		else if (c->poll_started_ms != 0)
			t = c->poll_started_ms + NOT_ANSWERING_MS > now
			    ? c->poll_started_ms + NOT_ANSWERING_MS : now + STATUS_TICK_MS;
		else
			continue;
		if (at < 0 || t < at)
			at = t;
	}
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
		int timeout, rc, keys;
		wint_t ch;
		int kr;

		on_watch(a, watch_tick(a->watch, now, &next));
		if (status_at >= 0 && now >= status_at)
			a->dirty |= DIRTY_STATUS | DIRTY_JOBS;	/* stale rows dim */
		status_at = status_change_at(a, now);
		if (status_at >= 0 && (next < 0 || status_at < next))
			next = status_at;
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
		for (i = 0; rc > 0 && i < nw; i++)
			if (fds[2 + i].revents & POLLIN)
				on_watch(a, watch_dispatch(a->watch));
		/* Keys (after EINTR too: SIGWINCH leaves KEY_RESIZE), answered
		 * on screen at once; the time that takes is in the debug log
		 * (make bench reads it). */
		keys = 0;
		t0 = now_us();
		while (!a->quit && (kr = wget_wch(a->win_input, &ch)) != ERR) {
			on_key(a, ch, kr == KEY_CODE_YES);
			keys++;
		}
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
		*warning = xasprintf("using the default theme: %s", err);
		free(err);
		theme_builtin(&a->theme);
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

int ui_run(const struct ui_opts *o)
{
	struct app a;
	char *err = NULL, *warning = NULL, **help_lines;
	const char *nc = getenv("NO_COLOR");
	int use_color;
	size_t i, n;

	memset(&a, 0, sizeof(a));
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "taotop: the monitor needs a terminal; for scripts use the verbs "
		    "(taotop jobs, taotop status JOB, ...)\n");
		return 2;
	}
	if (open_log() != 0)
		return 1;
	if (config_load(&a.cfg, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		return 2;
	}
	if (a.cfg.n > MAX_CLUSTERS) {
		fprintf(stderr, "taotop: %zu clusters configured; the monitor watches at most %d\n",
		    a.cfg.n, MAX_CLUSTERS);
		config_free(&a.cfg);
		return 2;
	}
	a.store = store_open(NULL, &err);
	if (a.store == NULL) {
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		config_free(&a.cfg);
		return 1;
	}
	if (signals_init() != 0) {
		fprintf(stderr, "taotop: %s\n", strerror(errno));
		store_close(a.store);
		config_free(&a.cfg);
		return 1;
	}

	setlocale(LC_ALL, "");
	text_init(strcmp(nl_langinfo(CODESET), "UTF-8") == 0);
	a.readonly = o->readonly;
	a.sgr = o->log_colors >= 0 ? o->log_colors : a.cfg.log_colors > 0;
	a.watch = watch_new(&a.cfg, a.store);
	a.seen_polls = xcalloc(a.cfg.n + 1, sizeof(*a.seen_polls));
	jt_init(&a.jt);
	logpane_init(&a.pane[0]);
	logpane_init(&a.pane[1]);
	n = keymap_help(&help_lines);
	a.help = xcalloc(n + 3, sizeof(*a.help));
	for (i = 0; i < n; i++)
		a.help[i] = help_lines[i];
	free(help_lines);
	a.help[n++] = xstrdup("");
	a.help[n++] = xstrdup("Mouse: a click selects a job or focuses a pane; the wheel scrolls");
	a.nhelp = n;

	initscr();
	cbreak();
	noecho();
	nonl();
	/* Keys are read from a window of their own that is never drawn:
	 * reading from stdscr would refresh it, blank, over the others. */
	a.win_input = newwin(1, 1, 0, 0);
	keypad(a.win_input, TRUE);
	nodelay(a.win_input, TRUE);
	curs_set(0);
	set_escdelay(25);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	use_color = has_colors() && (nc == NULL || nc[0] == '\0');
	load_theme(&a, o->theme ? o->theme : a.cfg.theme ? a.cfg.theme : "default", use_color,
	    &warning);
	draw_apply_theme(&a, use_color);
	getmaxyx(stdscr, a.lines, a.cols);
	a.side_by_side = a.cols >= 140;
	a.dirty = DIRTY_ALL;
	if (warning != NULL) {
		set_message(&a, 1, "%s", warning);
		free(warning);
	}

	loop(&a);

	/* The terminal first: whatever follows may take a moment. */
	draw_free_windows(&a);
	delwin(a.win_input);
	endwin();
	watch_free(a.watch);
	jt_free(&a.jt);
	theme_free(&a.theme);
	for (i = 0; i < a.nhelp; i++)
		free(a.help[i]);
	free(a.help);
	free(a.log_key);
	free(a.message);
	free_cancel(&a);
	watch_outcomes_free(a.outs, a.nouts);
	close_detail(&a);
	free(a.retry_job);
	free(a.act_job);
	free(a.seen_polls);
	store_close(a.store);
	config_free(&a.cfg);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	log_close();
	return 0;
}

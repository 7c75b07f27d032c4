/* Repaint: engine data and view state to curses windows; no decisions. */
#include "ui/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "engine/slurm/state.h"
#include "engine/track/tracker.h"
#include "ui/text.h"
#include "util/buf.h"
#include "util/xmalloc.h"


/* ---- theme -------------------------------------------------------------------------------- */

static attr_t attrs_of(unsigned a)
{
	attr_t r = 0;

	if (a & THEME_BOLD)
		r |= A_BOLD;
	if (a & THEME_DIM)
		r |= A_DIM;
	if (a & THEME_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & THEME_REVERSE)
		r |= A_REVERSE;
	if (a & THEME_ITALIC)
		r |= A_ITALIC;
	if (a & THEME_STANDOUT)
		r |= A_STANDOUT;
	return r;
}

void draw_apply_theme(struct app *a, int use_color)
{
	int r;

	if (use_color) {
		start_color();
		use_default_colors();
	}
	for (r = 0; r < ROLE_COUNT; r++) {
		const struct role_style *st = &a->theme.role[r];
		a->attr[r] = attrs_of(st->attrs);
		if (use_color) {
			init_pair((short)(r + 1), theme_fit_color(st->fg, COLORS),
			    theme_fit_color(st->bg, COLORS));
			a->attr[r] |= COLOR_PAIR(r + 1);
		}
	}
	if (!use_color) {
		/* Without colours, the bars and the selection must still stand
		 * out, whatever the theme says. */
		a->attr[ROLE_STATUS_BAR] |= A_REVERSE;
		a->attr[ROLE_STATUS_STALE] |= A_REVERSE;
		a->attr[ROLE_STATUS_ERROR] |= A_REVERSE | A_BOLD;
		a->attr[ROLE_SELECTION] |= A_REVERSE;
		a->attr[ROLE_DIALOG] |= A_REVERSE;
		a->attr[ROLE_DIALOG_WARNING] |= A_REVERSE | A_BOLD;
		a->attr[ROLE_LOG_MATCH] |= A_REVERSE;
	}
	text_set_sgr_pair_base(ROLE_COUNT + 1);
}

/* ---- windows ------------------------------------------------------------------------------ */

static WINDOW *win_for(const struct rect *r)
{
	return r->h > 0 && r->w > 0 ? newwin(r->h, r->w, r->y, r->x) : NULL;
}

void draw_free_windows(struct app *a)
{
	WINDOW **w[] = { &a->win_jobs, &a->win_out, &a->win_err, &a->win_status, &a->win_msg };
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		if (*w[i] != NULL)
			delwin(*w[i]);
		*w[i] = NULL;
	}
}

void draw_make_windows(struct app *a)
{
	draw_free_windows(a);
	getmaxyx(stdscr, a->lines, a->cols);
	layout_compute(a->cols, a->lines, a->side_by_side, a->max, &a->lay);
	if (a->lay.too_small)
		return;
	a->win_jobs = win_for(&a->lay.jobs);
	a->win_out = win_for(&a->lay.out);
	a->win_err = win_for(&a->lay.err);
	a->win_status = win_for(&a->lay.status);
	a->win_msg = win_for(&a->lay.message);
}

int draw_jobs_rows(const struct app *a)
{
	return a->lay.jobs.h > 1 ? a->lay.jobs.h - 1 : 0;
}

/* ---- the jobs list ------------------------------------------------------------------------ */

enum col_id { C_CLUSTER, C_ID, C_SLURM, C_NAME, C_PART, C_SIZE, C_STATE, C_NATIVE, C_TIME,
	C_PROGRESS, C_REASON, C_GPU, C_GPUMEM, C_COUNT };

/* Widths follow the rows shown: each fixed column fits its longest cell up
 * to its cap, a column with nothing to show gives its room away (unless
 * `always`), NAME and REASON take what is left (ui/layout.h). */
static const struct column {
	const char	*title;
	const char	*name;		/* in config.yaml's columns: */
	int		 width;		/* the cap; 0: flexible, takes what is left */
	int		 rank;		/* lower: kept first when narrow */
	int		 always;	/* shown when empty too */
} columns[C_COUNT] = {
	[C_CLUSTER] = { "CLUSTER", "cluster", 16, 2, 0 },	/* with two clusters or more */
	[C_ID] = { "ID", "id", 19, 5, 0 },
	[C_SLURM] = { "SLURM", "slurm", 14, 2, 1 },
	[C_NAME] = { "NAME", "name", 0, 0, 1 },
	[C_PART] = { "PART", "partition", 12, 9, 0 },
	[C_SIZE] = { "NxGPU", "size", 9, 7, 0 },
	[C_STATE] = { "STATE", "state", 8, 1, 1 },
	[C_NATIVE] = { "NATIVE", "native", 13, 6, 0 },
	/* "1-00:00:00/1-00:00:00" whole: a limit is never cut. */
	[C_TIME] = { "USED/LIMIT", "time", 24, 3, 1 },
	[C_PROGRESS] = { "PROGRESS", "progress", 18, 8, 0 },
	[C_REASON] = { "REASON", "reason", 0, 4, 0 },
	/* live use (engine/track/usage.h): "97%", "0% IDLE", "n/a", and
	 * "100% STALL" whole (a hung collective spins its GPUs at 100 %);
	 * once final, its efficiency card's "avg 87%" ("avg 12% !": a note) */
	[C_GPU] = { "GPU%", "gpu", 10, 8, 0 },
	[C_GPUMEM] = { "GPUMEM", "gpumem", 11, 10, 0 },
};

int draw_column_index(const char *name)
{
	int c;

	for (c = 0; c < C_COUNT; c++)
		if (strcmp(columns[c].name, name) == 0)
			return c;
	return -1;
}

int draw_column_count(void)
{
	return C_COUNT;
}

const char *draw_column_name(int c)
{
	return c >= 0 && c < C_COUNT ? columns[c].name : "?";
}

const char *draw_column_title(int c)
{
	return c >= 0 && c < C_COUNT ? columns[c].title : "?";
}

static enum role role_of_state(enum tao_state s)
{
	switch (s) {
	case TAO_PENDING:
		return ROLE_JOB_PENDING;
	case TAO_RUNNING:
		return ROLE_JOB_RUNNING;
	case TAO_DONE:
		return ROLE_JOB_DONE;
	case TAO_ERROR:
		return ROLE_JOB_ERROR;
	case TAO_CANCELED:
		return ROLE_JOB_CANCELED;
	default:
		return ROLE_JOB_UNKNOWN;
	}
}

/* The row drawn is a task under its expanded array: indented. */
static int drawing_task;

static void cell_text(const struct app *a, const struct jt_entry *e, int c, int width, char *buf,
    size_t len)
{
	const struct job_row *r = e->row;
	const struct job_use *u = c == C_GPU || c == C_GPUMEM ? (r->state == TAO_RUNNING ?
	    watch_use(a->watch, e->cluster, r->slurm_id) : NULL) : NULL;

	buf[0] = '\0';
	switch (c) {
	case C_CLUSTER:
		snprintf(buf, len, "%s", e->cluster_name);
		break;
	case C_ID:
		snprintf(buf, len, "%s", r->record_id ? r->record_id : "-");
		break;
	case C_SLURM:
		snprintf(buf, len, "%s%s", drawing_task ? "  " : "",
		    r->shown_id[0] ? r->shown_id : r->slurm_id[0] ? r->slurm_id : "-");
		break;
	case C_NAME:
		snprintf(buf, len, "%s", r->name ? r->name : "");
		break;
	case C_PART:
		snprintf(buf, len, "%s", r->partition ? r->partition : "");
		break;
	case C_SIZE:
		if (r->nodes > 0 && r->gpus_known)
			snprintf(buf, len, "%dx%d", r->nodes, r->gpus / r->nodes);
		else if (r->nodes > 0)
			snprintf(buf, len, "%dx?", r->nodes);
		break;
	case C_STATE:
		snprintf(buf, len, "%s", tracker_row_label(r));
		break;
	case C_NATIVE:
		snprintf(buf, len, "%s", r->native ? r->native : "");
		break;
	case C_TIME:
		if (r->elapsed[0] || r->limit[0])
			snprintf(buf, len, "%s/%s", r->elapsed[0] ? r->elapsed : "-",
			    r->limit[0] ? r->limit : "-");
		break;
	case C_PROGRESS:
		if (r->epoch >= 0 && r->max_epoch > 0) {
			/* "12/30 [#####.....] 4m": the bar takes what the
			 * numbers leave. */
			char b[64];
			int n = r->segments > 1
			    ? snprintf(buf, len, "%d/%d seg%d ", r->epoch, r->max_epoch, r->segments)
			    : snprintf(buf, len, "%d/%d ", r->epoch, r->max_epoch), bar, fill, i;
			bar = width - n - (r->eta[0] ? (int)strlen(r->eta) + 1 : 0);
			if (bar < 3)
				bar = 3;
			if (bar > (int)sizeof(b) - 1)
				bar = (int)sizeof(b) - 1;
			fill = r->epoch >= r->max_epoch ? bar : r->epoch * bar / r->max_epoch;
			for (i = 0; i < bar; i++)
				b[i] = i < fill ? '#' : '.';
			b[bar] = '\0';
			if (n > 0 && (size_t)n < len)
				snprintf(buf + n, len - (size_t)n, "%s%s%s", b, r->eta[0] ? " " : "", r->eta);
		}
		break;
	case C_REASON:
		snprintf(buf, len, "%s", r->message ? r->message : "");
		break;
	case C_GPU:
		if (u != NULL && u->ngpu > 0 && use_mean_util(u) == USE_UNKNOWN)
			snprintf(buf, len, "n/a%s", u->stalled ? " STALL" : "");
		else if (u != NULL && u->ngpu > 0)
			snprintf(buf, len, "%d%%%s", use_mean_util(u), u->idle ? " IDLE" :
			    u->stalled ? " STALL" : "");
		else if (u != NULL)
			snprintf(buf, len, "?");
		else if (tao_state_final(r->state) && r->efficiency[0] != '\0')
			/* Its efficiency card's figure: the run's mean use. */
			snprintf(buf, len, "%s", r->efficiency);
		break;
	case C_GPUMEM:
		if (u != NULL)
			use_mem_text(u, buf, len);
		break;
	}
}

/* Which columns fit, in which order, and how wide, for the rows shown
 * (lines top.. top + rows): the user's columns (a->columns) in their
 * order, else every column by rank. */
static int fit_columns(const struct app *a, int cols, size_t rows, int *width, int *order)
{
	const struct jobtable *t = &a->jt;
	struct layout_col lc[C_COUNT];
	int c, clusters = (int)watch_count(a->watch);
	size_t y;

	for (c = 0; c < C_COUNT; c++) {
		lc[c].title = (int)strlen(columns[c].title);
		lc[c].want = 0;
		lc[c].cap = columns[c].width;
		lc[c].rank = columns[c].rank;
		lc[c].always = columns[c].always && (c != C_CLUSTER || clusters > 1);
	}
	for (y = 0; y < rows && t->top + y < t->nlines; y++) {
		const struct jt_line *l = &t->lines[t->top + y];
		if (l->header)
			continue;
		for (c = 0; c < C_COUNT; c++) {
			char cell[512];
			int w;
			if (c == C_CLUSTER && clusters < 2)
				continue;
			/* The bar takes what the numbers leave: its full width. */
			cell_text(a, &t->entries[l->entry], c, columns[C_PROGRESS].width, cell, sizeof(cell));
			if (cell[0] == '\0' || strcmp(cell, "-") == 0)
				continue;	/* nothing to show */
			w = (int)text_width(cell, strlen(cell));
			if (w > lc[c].want)
				lc[c].want = w;
		}
	}
	return layout_columns(lc, C_COUNT, cols, a->ncolumns > 0 ? a->columns : NULL, a->ncolumns,
	    width, order);
}

/* The header: the columns' titles, and the counts on the right where the
 * titles leave room. */
static void draw_jobs_header(struct app *a, int ncols, const int *order, const int *width)
{
	WINDOW *w = a->win_jobs;
	const struct jobtable *t = &a->jt;
	char info[320], older[64] = "", hidden[48] = "";
	int k, c, x, used = 0;
	size_t i, njobs = 0, left = 0;

	wmove(w, 0, 0);
	wattrset(w, a->attr[ROLE_HEADER]);
	for (k = 0; k < ncols; k++) {
		c = order[k];
		used = getcurx(w) + (int)strlen(columns[c].title) + 1;
		text_draw_fixed(w, columns[c].title, width[c], a->attr[ROLE_HEADER]);
		waddch(w, ' ');
	}
	for (i = 0; i < t->nlines; i++)
		njobs += !t->lines[i].header;
	/* Finished jobs older than the page shown: past the end brings them. */
	for (i = 0; a->watch != NULL && i < watch_count(a->watch); i++)
		left += watch_cluster(a->watch, i)->last.finished_left;
	if (left > 0)
		snprintf(older, sizeof(older), " (%zu older on disk)", left);
	if (t->hide_finished)
		snprintf(hidden, sizeof(hidden), ", %zu finished hidden", t->nhidden);
	snprintf(info, sizeof(info), " %zu job%s%s%s%s%s%s%s ", njobs, njobs == 1 ? "" : "s", older,
	    t->filter[0] ? " matching /" : "", t->filter, hidden, ", by ", jt_sort_name(t->sort));
	x = a->lay.jobs.w - (int)text_width(info, strlen(info));
	if (x >= used) {
		wmove(w, 0, x);
		text_draw(w, info, strlen(info), 0, a->lay.jobs.w - x, a->attr[ROLE_HEADER] | A_REVERSE,
		    0);
	}
}

/* A cluster's group header ("-- name ----"). */
static void draw_group_header(struct app *a, size_t cluster)
{
	const struct watched *cl = watch_cluster(a->watch, cluster);
	char h[128];

	snprintf(h, sizeof(h), "-- %s ", cl ? cl->cfg->name : "?");
	text_draw(a->win_jobs, h, strlen(h), 0, a->lay.jobs.w, a->attr[ROLE_HEADER], 0);
	whline(a->win_jobs, ACS_HLINE, a->lay.jobs.w - (int)strlen(h));
}

/* One job's row at the cursor: its cells, coloured by state, dimmed when
 * stale, then marked, then selected (each wins over the one before). */
static void draw_job_row(struct app *a, const struct jt_entry *e, int selected, int64_t now,
    int ncols, const int *order, const int *width)
{
	WINDOW *w = a->win_jobs;
	int marked = jt_is_marked(&a->jt, e), k, c;
	/* Stale rows stay, dimmed: last known, not current. */
	int stale = draw_cluster_stale(watch_cluster(a->watch, e->cluster), now);
	attr_t at;

	for (k = 0; k < ncols; k++) {
		char cell[512];
		c = order[k];
		cell_text(a, e, c, width[c], cell, sizeof(cell));
		at = c == C_STATE || c == C_PROGRESS ? a->attr[role_of_state(e->row->state)]
		    : a->attr[ROLE_LOG_STDOUT];
		if (c == C_GPU && strchr(cell, ' ') != NULL)
			at = a->attr[ROLE_JOB_ERROR];	/* flagged: idle or stalled */
		if (stale)
			at |= A_DIM;
		if (marked)
			at = a->attr[ROLE_MARKED];
		if (selected)
			at = a->attr[ROLE_SELECTION] | (a->focus == FOCUS_JOBS ? 0 : A_DIM);
		if (k == 0 && marked && width[c] > 1) {
			/* A visible mark even in monochrome. */
			char m[520];
			snprintf(m, sizeof(m), "*%s", cell);
			text_draw_fixed(w, m, width[c], at);
		} else {
			text_draw_fixed(w, cell, width[c], at);
		}
		text_draw_fixed(w, " ", 1, at);
	}
}

static void draw_jobs(struct app *a)
{
	WINDOW *w = a->win_jobs;
	int width[C_COUNT], order[C_COUNT], ncols, rows = draw_jobs_rows(a), y;
	int64_t now = watch_now_ms();
	struct jobtable *t = &a->jt;

	werase(w);
	jt_scroll_to_selection(t, (size_t)rows);
	ncols = fit_columns(a, a->lay.jobs.w, (size_t)rows, width, order);
	draw_jobs_header(a, ncols, order, width);
	for (y = 0; y < rows && t->top + (size_t)y < t->nlines; y++) {
		const struct jt_line *l = &t->lines[t->top + (size_t)y];
		wmove(w, y + 1, 0);
		if (l->header)
			draw_group_header(a, l->cluster);
		else {
			drawing_task = l->task;
			draw_job_row(a, &t->entries[l->entry], t->top + (size_t)y == t->sel, now,
			    ncols, order, width);
			drawing_task = 0;
		}
	}
	if (t->nlines == 0) {
		char said[96];
		const char *empty = said;
		if (t->hide_finished && t->nhidden > 0)
			snprintf(said, sizeof(said), "no live job%s: %zu finished hidden (f shows them)",
			    t->filter[0] ? " matches the filter" : "", t->nhidden);
		else
			empty = t->filter[0] ? "no job matches the filter (Esc clears it)"
			    : "no jobs yet";
		wmove(w, 1, 1);
		text_draw(w, empty, strlen(empty), 0, a->lay.jobs.w - 2, a->attr[ROLE_JOB_UNKNOWN], 0);
	}
	wnoutrefresh(w);
}

/* ---- log panes ---------------------------------------------------------------------------- */

/* Draw one row, with the search's matches picked out. */
static void draw_row(struct app *a, WINDOW *w, const struct pane_row *row, size_t skip, int width,
    attr_t base, const char *needle)
{
	size_t nl = strlen(needle), i = 0, from = 0, col = 0;
	int drawn = 0;

	if (nl == 0) {
		text_draw(w, row->text, row->len, skip, width, base, a->sgr);
		return;
	}
	while (i + nl <= row->len) {
		if (strncasecmp(row->text + i, needle, nl) == 0) {
			size_t wpart = text_width(row->text + from, i - from);
			drawn += text_draw(w, row->text + from, i - from, skip > col ? skip - col : 0,
			    width - drawn, base, a->sgr);
			col += wpart;
			drawn += text_draw(w, row->text + i, nl, skip > col ? skip - col : 0,
			    width - drawn, a->attr[ROLE_LOG_MATCH], 0);
			col += text_width(row->text + i, nl);
			i += nl;
			from = i;
		} else {
			i++;
		}
	}
	text_draw(w, row->text + from, row->len - from, skip > col ? skip - col : 0, width - drawn,
	    base, a->sgr);
}

static void draw_pane(struct app *a, int which)
{
	WINDOW *w = which == 0 ? a->win_out : a->win_err;
	const struct rect *r = which == 0 ? &a->lay.out : &a->lay.err;
	struct logpane *p = &a->pane[which];
	const struct watch_log *lg = a->log;
	const char *name = which == 0 ? "main.out" : "main.err";
	int focused = a->focus == (which == 0 ? FOCUS_OUT : FOCUS_ERR);
	attr_t base = a->attr[which == 0 ? ROLE_LOG_STDOUT : ROLE_LOG_STDERR];
	char title[256];
	int y, h = r->h - 1;

	if (w == NULL)
		return;
	werase(w);
	if (lg == NULL) {
		snprintf(title, sizeof(title), " %s ", name);
	} else {
		struct pane_fresh f = { watch_now_ms(), lg->read_ms, lg->reading_ms, lg->error != NULL };
		logpane_title(title, sizeof(title), p, name, lg->job, lg->ring[which].dropped != 0, &f);
	}
	wmove(w, 0, 0);
	text_draw_fixed(w, title, r->w, a->attr[ROLE_HEADER] | (focused ? A_REVERSE : 0));
	if (lg == NULL || (!lg->loaded && lg->error == NULL) || (lg->error && lg->ring[which].n == 0)) {
		char loading[64];
		const char *say = lg == NULL ? "no job selected" : lg->error ? lg->error : loading;
		if (lg != NULL)
			logpane_loading(loading, sizeof(loading), watch_now_ms(), lg->reading_ms);
		wmove(w, 1, 1);
		text_draw(w, say, strlen(say), 0, r->w - 2, a->attr[ROLE_JOB_UNKNOWN], 0);
	} else {
		struct pane_row *rows = xcalloc((size_t)h + 1, sizeof(*rows));
		size_t n = logpane_layout(&lg->ring[which], p, (size_t)r->w, (size_t)h, a->sgr, rows);
		for (y = 0; y < (int)n; y++) {
			wmove(w, y + 1, 0);
			draw_row(a, w, &rows[y], p->wrap ? 0 : p->hscroll, r->w, base, p->search);
		}
		if (n == 0) {
			const char *say = "(empty so far)";
			wmove(w, 1, 1);
			text_draw(w, say, strlen(say), 0, r->w - 2, a->attr[ROLE_JOB_UNKNOWN], 0);
		}
		logpane_rows_free(rows, n);
		free(rows);
	}
	wnoutrefresh(w);
}

/* ---- status bar and message line ---------------------------------------------------------- */

static void clock_of(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (t == 0) {
		snprintf(buf, len, "never");
		return;
	}
	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

/* "12 s ago", "3 min ago", or "never", for the last good poll. */
static void age_of(time_t t, time_t now, char *buf, size_t len)
{
	long d = (long)(now - t);

	if (t == 0)
		snprintf(buf, len, "never");
	else if (d < 120)
		snprintf(buf, len, "%ld s ago", d < 0 ? 0 : d);
	else if (d < 7200)
		snprintf(buf, len, "%ld min ago", d / 60);
	else
		snprintf(buf, len, "%ld h ago", d / 3600);
}

int draw_cluster_stale(const struct watched *c, int64_t now_ms)
{
	return c->polls && (c->link == LINK_RECONNECTING || c->link == LINK_HOSTKEY_UNKNOWN ||
	    c->link == LINK_HOSTKEY_CHANGED || c->link == LINK_AUTH_FAILED ||
	    (watch_waiting_since(c) != 0 && now_ms - watch_waiting_since(c) >= NOT_ANSWERING_MS) ||
	    !c->last.scheduler_ok);
}

/* One cluster's part of the status bar, and how alarming it is. Stale
 * data says how old it is; fresh data says when it was polled. */
static enum role cluster_status(const struct watched *c, int64_t now, char *buf, size_t len)
{
	char at[16], ago[32];
	int64_t out_ms = watch_waiting_since(c) ? now - watch_waiting_since(c) : 0;

	clock_of(c->last.last_ok, at, sizeof(at));
	age_of(c->last.last_ok, time(NULL), ago, sizeof(ago));
	switch (c->link) {
	case LINK_CONNECTING:
		/* Before the first poll, the rows are the records' own word. */
		snprintf(buf, len, "%s: connecting to %s%s", c->cfg->name, c->cfg->hosts,
		    !c->polls && c->last.n > 0 ? "; jobs as their records last said" : "");
		return c->polls ? ROLE_STATUS_STALE : ROLE_STATUS_BAR;
	case LINK_RECONNECTING: {
		int64_t in = (c->retry_at_ms - now + 999) / 1000;
		snprintf(buf, len, "%s: reconnecting in %llds (last good poll %s)", c->cfg->name,
		    (long long)(in > 0 ? in : 0), ago);
		return ROLE_STATUS_STALE;
	}
	case LINK_HOSTKEY_UNKNOWN:
		snprintf(buf, len, "%s: host key of %s unknown: not connected", c->cfg->name,
		    c->host ? c->host : "?");
		return ROLE_STATUS_ERROR;
	case LINK_HOSTKEY_CHANGED:
		snprintf(buf, len, "%s: host key of %s CHANGED: refused", c->cfg->name,
		    c->host ? c->host : "?");
		return ROLE_STATUS_ERROR;
	case LINK_AUTH_FAILED:
		snprintf(buf, len, "%s: authentication failed", c->cfg->name);
		return ROLE_STATUS_ERROR;
	case LINK_ASKING:
		snprintf(buf, len, "%s: the server asks a question (one-time code?)", c->cfg->name);
		return ROLE_STATUS_BAR;
	case LINK_UP:
		break;
	}
	if (c->submitting) {
		snprintf(buf, len, "%s: submitting (polls wait), polled %s", c->cfg->name,
		    c->polls ? at : "...");
		return ROLE_STATUS_BAR;
	}
	if (out_ms >= NOT_ANSWERING_MS) {
		snprintf(buf, len, "%s: not answering for %llds (last good poll %s)", c->cfg->name,
		    (long long)(out_ms / 1000), ago);
		return ROLE_STATUS_STALE;
	}
	if (c->polls && !c->last.scheduler_ok) {
		snprintf(buf, len, "%s: scheduler not answering (last good poll %s)", c->cfg->name, ago);
		return ROLE_STATUS_STALE;
	}
	if (c->polls && !c->last.accounting_ok) {
		snprintf(buf, len, "%s: accounting not answering; polled %s", c->cfg->name, at);
		return ROLE_STATUS_STALE;
	}
	/* Asked and not answered yet, past the time a near link takes: a spinner. */
	snprintf(buf, len, "%s: %s, polled %s%s%s%s%s", c->cfg->name, c->host ? c->host : "connected",
	    c->polls ? at : "...", out_ms >= LOGPANE_SLOW_MS ? " " : "",
	    out_ms >= LOGPANE_SLOW_MS ? logpane_spinner(out_ms) : "",
	    c->use_off ? "; GPU use not available: " : "", c->use_off ? c->use_off : "");
	return ROLE_STATUS_BAR;
}

static void draw_status(struct app *a)
{
	WINDOW *w = a->win_status;
	int64_t now = watch_now_ms();
	size_t i;
	int x = 0;

	werase(w);
	wbkgdset(w, ' ' | a->attr[ROLE_STATUS_BAR]);
	werase(w);
	wmove(w, 0, 0);
	for (i = 0; i < watch_count(a->watch) && x < a->lay.status.w; i++) {
		char part[256];
		enum role r = cluster_status(watch_cluster(a->watch, i), now, part, sizeof(part));
		x += text_draw(w, " ", 1, 0, a->lay.status.w - x, a->attr[r], 0);
		x += text_draw(w, part, strlen(part), 0, a->lay.status.w - x, a->attr[r], 0);
		x += text_draw(w, " ", 1, 0, a->lay.status.w - x, a->attr[r], 0);
		if (i + 1 < watch_count(a->watch))
			x += text_draw(w, "|", 1, 0, a->lay.status.w - x, a->attr[ROLE_STATUS_BAR], 0);
	}
	/* The monitor's sessions lent to the user's taotop commands. */
	a->lent_shown = watch_lent_clients(a->watch);
	if (a->lent_shown > 0 && x < a->lay.status.w) {
		char part[64];
		snprintf(part, sizeof(part), " | lent to %u command%s ", a->lent_shown,
		    a->lent_shown == 1 ? "" : "s");
		x += text_draw(w, part, strlen(part), 0, a->lay.status.w - x,
		    a->attr[ROLE_STATUS_BAR], 0);
	}
	if (a->readonly && x + 11 < a->lay.status.w) {
		wmove(w, 0, a->lay.status.w - 10);
		text_draw(w, " READONLY ", 10, 0, 10, a->attr[ROLE_STATUS_ERROR], 0);
	}
	wnoutrefresh(w);
}

static void draw_message(struct app *a)
{
	const struct panel *p = panel_of(a->mode);
	WINDOW *w = a->win_msg;
	const char *hint = "?:help  /:filter  Tab:panes  space:mark  c:cancel  v:split  z:zoom  q:quit";
	char buf[256];

	werase(w);
	wmove(w, 0, 0);
	if (a->mode == MODE_FILTER) {
		snprintf(buf, sizeof(buf), "filter: %s_   (Enter keeps, Esc clears)", a->input);
		text_draw(w, buf, strlen(buf), 0, a->lay.message.w, a->attr[ROLE_HEADER], 0);
	} else if (p != NULL && p->prompt != NULL) {
		p->prompt(a, buf, sizeof(buf));
		text_draw(w, buf, strlen(buf), 0, a->lay.message.w, a->attr[ROLE_HEADER], 0);
	} else if (a->mode == MODE_SEARCH) {
		snprintf(buf, sizeof(buf), "search %s: %s_   (Enter finds, Esc stops)",
		    a->focus == FOCUS_ERR ? "main.err" : "main.out", a->input);
		text_draw(w, buf, strlen(buf), 0, a->lay.message.w, a->attr[ROLE_HEADER], 0);
	} else if (a->message != NULL) {
		text_draw(w, a->message, strlen(a->message), 0, a->lay.message.w,
		    a->message_error ? a->attr[ROLE_JOB_ERROR] : a->attr[ROLE_LOG_STDOUT], 0);
	} else if (a->jt.filter[0] != '\0') {
		size_t shown = 0, i;
		for (i = 0; i < a->jt.nlines; i++)
			shown += !a->jt.lines[i].header;
		snprintf(buf, sizeof(buf), "filter: %s   %zu of %zu jobs   (Esc clears)   %s",
		    a->jt.filter, shown, a->jt.n, hint);
		text_draw(w, buf, strlen(buf), 0, a->lay.message.w, a->attr[ROLE_HEADER], 0);
	} else {
		text_draw(w, hint, strlen(hint), 0, a->lay.message.w, a->attr[ROLE_JOB_UNKNOWN], 0);
	}
	wnoutrefresh(w);
}

/* ---- the pass ----------------------------------------------------------------------------- */

/* The terminal smaller than taotop's least: say so, nothing else. */
static void draw_too_small(struct app *a)
{
	char msg[96];

	erase();
	snprintf(msg, sizeof(msg), "taotop needs %dx%d at least (now %dx%d)",
	    LAYOUT_MIN_COLS, LAYOUT_MIN_LINES, a->cols, a->lines);
	mvaddnstr(a->lines / 2, 0, msg, a->cols);
	wnoutrefresh(stdscr);
}

void draw(struct app *a)
{
	const struct panel *p = panel_of(a->mode);
	unsigned d = a->dirty;

	a->dirty = 0;
	if (d & DIRTY_LAYOUT) {
		draw_make_windows(a);
		clearok(curscr, TRUE);
		d = DIRTY_ALL;
	}
	if (a->lay.too_small) {
		draw_too_small(a);
		doupdate();
		return;
	}
	/* A dialog is drawn over the others: drawing, changing or closing
	 * one means redrawing what it covers too. */
	if (d & DIRTY_DIALOG)
		d = DIRTY_ALL;
	if (d & DIRTY_JOBS)
		draw_jobs(a);
	if (d & DIRTY_PANES) {
		draw_pane(a, 0);
		draw_pane(a, 1);
	}
	if (d & DIRTY_STATUS)
		draw_status(a);
	if (d & DIRTY_MESSAGE)
		draw_message(a);
	/* Anything drawn may be under the open panel: it goes on top. */
	if (p != NULL && d != 0)
		p->draw(a);
	doupdate();
}

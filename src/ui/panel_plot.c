/* The curves (p): every metric TAO reported for the selected job, drawn
 * by util/plot.c, the CLI's `taotop plot` drawing, in braille or ASCII as
 * the locale allows. One metric at a time: m (or Tab) the next, l a log
 * scale. A running job's curves are its row's (the tracker follows its
 * status file at each poll: engine/store/series.h's shared copy), drawn
 * again as each poll brings new points; a finished job's are its
 * record's. With two or more jobs marked, their curves of one metric on
 * shared axes, each run with its mark and colour, the legend naming each
 * by the spec values that differ (engine/store/specdiff.h, from the specs
 * their records keep). Nothing is asked of the cluster. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/specdiff.h"
#include "engine/store/store.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "ui/text.h"
#include "util/plot.h"
#include "util/xmalloc.h"

/* One job drawn. */
struct run {
	char			*key;	/* its list entry (jt_entry.key) */
	char			*id;	/* its record's */
	struct job_record	*rec;	/* its record (a finished job's curves, the spec) */
	struct series_shared	*live;	/* a running job's curves, or NULL */
	char			*label;	/* what tells it from the others */
};

struct plotview {
	struct run		 run[PLOT_MAX_SERIES];
	size_t			 nrun;	/* 0: closed; 2 or more: runs compared */
	size_t			 metric;	/* which of the metrics' names */
	char			 name[SERIES_NAME_MAX];	/* its name, kept as curves grow */
	int			 log;
	char			**lines;
	size_t			 n;
	size_t			 plot_from, plot_to;	/* the lines of marks (comparing) */
	size_t			 legend_from;	/* the legend's first line */
};

/* The colours of the runs compared, by role (the theme's, NO_COLOR's). */
static const enum role run_role[PLOT_MAX_SERIES] = {
	ROLE_JOB_RUNNING, ROLE_JOB_ERROR, ROLE_JOB_PENDING, ROLE_JOB_DONE,
	ROLE_LOG_MATCH, ROLE_JOB_CANCELED, ROLE_MARKED, ROLE_HEADER,
};

static struct plotview *state(struct app *a)
{
	return panel_state(a, MODE_PLOT, sizeof(struct plotview));
}

static void free_lines(struct plotview *s)
{
	text_lines_free(&s->lines, &s->n);
}

static void run_free(struct run *r)
{
	free(r->key);
	free(r->id);
	free(r->label);
	record_free(r->rec);
	series_shared_unref(r->live);
	memset(r, 0, sizeof(*r));
}

static void plot_close(struct app *a)
{
	struct plotview *s = state(a);
	size_t i;

	free_lines(s);
	for (i = 0; i < s->nrun; i++)
		run_free(&s->run[i]);
	s->nrun = 0;
}

/* A run's curves: the running job's as the last poll had them, else its
 * record's (none: an empty set). */
static const struct series_set *curves(const struct run *r)
{
	static const struct series_set none;

	return r->live != NULL ? series_shared_set(r->live) : r->rec != NULL ? &r->rec->curves
	    : &none;
}

static void add_line(struct plotview *s, char *line)
{
	text_lines_add(&s->lines, &s->n, line);
}

/* The metrics' names of every run, each once, in the runs' order. */
static size_t names(const struct plotview *s, const char **out, size_t max)
{
	size_t r, i, k, n = 0;

	for (r = 0; r < s->nrun; r++) {
		const struct series_set *set = curves(&s->run[r]);
		for (i = 0; i < set->n && n < max; i++) {
			for (k = 0; k < n && strcmp(out[k], set->s[i].name) != 0; k++)
				;
			if (k == n)
				out[n++] = set->s[i].name;
		}
	}
	return n;
}

/* " last V at epoch N, best V at epoch N" of a series into b. */
static void last_best(char *b, size_t len, const struct series *sr)
{
	long last, best;
	int at = 0;

	b[0] = '\0';
	series_last_best(sr, &last, &best);
	if (last >= 0)
		at = snprintf(b, len, "  last %.6g at epoch %d", sr->value[last], sr->epoch[last]);
	if (best >= 0 && at >= 0 && (size_t)at < len)
		snprintf(b + at, len - (size_t)at, ", best %.6g at epoch %d", sr->value[best],
		    sr->epoch[best]);
}

/* The lines: the metric's name (TAO's; text_draw sanitises it on the
 * screen) with its last and best values, or the runs' legend, then the
 * plot sized to the screen. */
static void build(struct app *a)
{
	struct plotview *s = state(a);
	const char *name[SERIES_MAX_NAMES * PLOT_MAX_SERIES];
	size_t nn = names(s, name, sizeof(name) / sizeof(name[0])), i, r, np = 0;
	int compare = s->nrun > 1;
	struct plot_opts o = { .width = a->cols - 8, .height = a->lines - 9 - (compare ?
		(int)s->nrun : 0), .utf8 = text_utf8(), .log_y = s->log, .x_label = "epoch",
		.marks = compare ? PLOT_MARKS : NULL };
	struct plot_series ps[PLOT_MAX_SERIES];
	double *x[PLOT_MAX_SERIES] = { 0 };
	char *p, *nl, head[256], lb[160];

	free_lines(s);
	if (nn == 0) {
		add_line(s, xstrdup("no metric reported"));
		a->dirty |= DIRTY_DIALOG;
		return;
	}
	/* The metric shown stays the one of its name as the curves grow (a
	 * running job's may gain a name before it). */
	for (i = 0; i < nn; i++)
		if (strcmp(name[i], s->name) == 0)
			s->metric = i;
	if (s->metric >= nn)
		s->metric = 0;
	snprintf(s->name, sizeof(s->name), "%s", name[s->metric]);
	for (r = 0; r < s->nrun; r++) {
		const struct series *sr = series_set_find(curves(&s->run[r]), s->name);
		size_t k;
		if (sr == NULL)
			continue;
		x[r] = xcalloc(sr->n ? sr->n : 1, sizeof(*x[r]));
		for (k = 0; k < sr->n; k++)
			x[r][k] = sr->epoch[k];
		ps[np++] = (struct plot_series){ x[r], sr->value, sr->n };
	}
	snprintf(head, sizeof(head), "%s (%zu of %zu)%s", s->name, s->metric + 1, nn,
	    s->log ? "  log scale" : "");
	if (!compare) {
		const struct series *sr = series_set_find(curves(&s->run[0]), s->name);
		last_best(lb, sizeof(lb), sr);
		add_line(s, xasprintf("%s%s", head, lb));
	} else {
		add_line(s, xasprintf("%s  %zu runs compared", head, s->nrun));
		s->legend_from = s->n;
		for (r = 0; r < s->nrun; r++) {
			const struct series *sr = series_set_find(curves(&s->run[r]), s->name);
			if (sr != NULL)
				last_best(lb, sizeof(lb), sr);
			else
				snprintf(lb, sizeof(lb), "  (no %s)", s->name);
			add_line(s, xasprintf("  %c %s  %s%s%s", PLOT_MARKS[r], s->run[r].label,
			    s->run[r].id, s->run[r].live != NULL ? " (running)" : "", lb));
		}
	}
	/* Comparing: the marks are drawn per run, so a run without the metric
	 * keeps its mark for the others (each series' mark is its run's). */
	if (compare) {
		char marks[PLOT_MAX_SERIES + 1];
		size_t m = 0;
		for (r = 0; r < s->nrun; r++)
			if (x[r] != NULL)
				marks[m++] = PLOT_MARKS[r];
		marks[m] = '\0';
		o.marks = marks;
		p = plot_render(ps, np, &o);
	} else {
		p = plot_render(ps, np, &o);
	}
	s->plot_from = s->plot_to = s->n;
	if (p == NULL) {
		add_line(s, xstrdup(s->log ? "nothing above 0 to draw on a log scale"
		    : "no finite value to draw (or the screen is too small)"));
	} else {
		char *at = p;
		while ((nl = strchr(at, '\n')) != NULL) {
			add_line(s, xstrndup(at, (size_t)(nl - at)));
			at = nl + 1;
		}
		/* The last three: the x axis, its values, its name. */
		s->plot_to = s->n >= s->plot_from + 3 ? s->n - 3 : s->n;
	}
	free(p);
	for (r = 0; r < s->nrun; r++)
		free(x[r]);
	a->dirty |= DIRTY_DIALOG;
}

/* The runs' names from their records' specs (ids when nothing differs). */
static void label_runs(struct plotview *s)
{
	const char *specs[PLOT_MAX_SERIES], *ids[PLOT_MAX_SERIES];
	struct spec_diff d;
	size_t r;

	for (r = 0; r < s->nrun; r++) {
		specs[r] = s->run[r].rec != NULL ? s->run[r].rec->spec : NULL;
		ids[r] = s->run[r].id;
	}
	specdiff_make(specs, ids, s->nrun, &d);
	for (r = 0; r < s->nrun; r++) {
		free(s->run[r].label);
		s->run[r].label = xstrdup(d.label[r]);
	}
	specdiff_free(&d);
}

/* A job's run: its record read (a finished job's curves, the spec), its
 * row's curves held when it runs. -1 with the message said. */
static int take_run(struct app *a, struct run *r, const struct jt_entry *e)
{
	char *err = NULL;

	if (e->row->record_id == NULL) {
		ui_message(a, 1, "no curves for %s: not a job taotop submitted (its record "
		    "keeps them)", e->row->shown_id);
		return -1;
	}
	if (store_load(a->store, e->row->record_id, &r->rec, &err) != 0) {
		if (e->row->curves == NULL) {
			ui_message(a, 1, "%s", err);
			free(err);
			return -1;
		}
		free(err);	/* its curves are the row's: shown without */
	}
	r->live = series_shared_ref(e->row->curves);
	r->key = xstrdup(e->key);
	r->id = xstrdup(e->row->record_id);
	return 0;
}

static void plot_open(struct app *a)
{
	const struct jt_entry **v;
	struct plotview *s = state(a);
	size_t n = jt_targets(&a->jt, &v), i, any = 0;

	plot_close(a);
	if (n == 0) {
		free(v);
		return;
	}
	if (n > PLOT_MAX_SERIES) {
		ui_message(a, 1, "%zu jobs marked: at most %d are compared on one plot", n,
		    PLOT_MAX_SERIES);
		free(v);
		return;
	}
	for (i = 0; i < n; i++) {
		if (take_run(a, &s->run[s->nrun], v[i]) != 0) {
			free(v);
			plot_close(a);
			return;
		}
		any += curves(&s->run[s->nrun])->n > 0;
		s->nrun++;
	}
	if (any == 0) {
		ui_message(a, 1, "no curves for %s yet: TAO has reported no metric%s",
		    n == 1 ? v[0]->row->record_id : "the jobs marked",
		    n == 1 && !tao_state_final(v[0]->row->state) ? " so far" : "");
		free(v);
		plot_close(a);
		return;
	}
	free(v);
	if (s->nrun > 1)
		label_runs(s);
	build(a);
	a->mode = MODE_PLOT;
}

/* A run's curves again after a poll: 1 when they changed. */
static int refresh_run(struct app *a, struct run *r)
{
	const struct jt_entry *e = jt_by_key(&a->jt, r->key);
	struct job_record *rec = NULL;
	char *err = NULL;

	if (e == NULL)
		return 0;	/* gone from the list: keep what is shown */
	if (e->row->curves != NULL) {
		if (e->row->curves == r->live)
			return 0;	/* nothing new */
		series_shared_unref(r->live);
		r->live = series_shared_ref(e->row->curves);
		return 1;
	}
	if (r->live == NULL)
		return 0;
	/* No longer running: its record keeps the whole file's now (until it
	 * does, what the polls had stays). */
	if (store_load(a->store, r->id, &rec, &err) != 0 || rec->curves.n == 0) {
		free(err);
		record_free(rec);
		return 0;
	}
	series_shared_unref(r->live);
	r->live = NULL;
	record_free(r->rec);
	r->rec = rec;
	return 1;
}

void plot_panel_refresh(struct app *a)
{
	struct plotview *s = state(a);
	size_t r;
	int changed = 0;

	if (a->mode != MODE_PLOT)
		return;
	for (r = 0; r < s->nrun; r++)
		changed |= refresh_run(a, &s->run[r]);
	if (changed)
		build(a);
}

static enum panel_next plot_key(struct app *a, wint_t ch, int func)
{
	struct plotview *s = state(a);
	const char *name[SERIES_MAX_NAMES * PLOT_MAX_SERIES];
	size_t nn = names(s, name, sizeof(name) / sizeof(name[0]));

	if (!func && (ch == KEY_ESC || ch == 'q' || ch == 'p'))
		return PANEL_CLOSE;
	if (!func && (ch == 'm' || ch == '\t') && nn > 0) {
		s->metric = (s->metric + 1) % nn;
		s->name[0] = '\0';
		build(a);
	} else if (((!func && ch == 'M') || (func && ch == KEY_BTAB)) && nn > 0) {
		s->metric = (s->metric + nn - 1) % nn;
		s->name[0] = '\0';
		build(a);
	} else if (!func && ch == 'l') {
		s->log = !s->log;
		build(a);
	} else if (!func && keymap_lookup(KC_ANY, (int)ch) == ACT_DUMP) {
		dump_screen(a);
	}
	return PANEL_KEEP;
}

static void plot_draw(struct app *a)
{
	struct plotview *s = state(a);
	char title[160];
	struct dialog_paint paint = { 0 };
	attr_t attr[PLOT_MAX_SERIES];
	size_t r;

	if (s->nrun > 1) {
		snprintf(title, sizeof(title), "Curves: %zu runs compared", s->nrun);
		for (r = 0; r < s->nrun; r++)
			attr[r] = a->attr[run_role[r]] | A_BOLD;
		paint = (struct dialog_paint){ .marks = PLOT_MARKS, .nmarks = s->nrun,
			.attr = attr, .from = s->plot_from, .to = s->plot_to,
			.legend_from = s->legend_from, .legend_to = s->legend_from + s->nrun };
	} else {
		snprintf(title, sizeof(title), "Curves: %s%s", s->run[0].id,
		    s->run[0].live != NULL ? " (running: follows the job)" : "");
	}
	dialog_draw_painted(a, title, s->lines, s->n, 0,
	    "m/Tab: next metric   M: previous   l: log scale   P: write the screen   Esc/p: close",
	    ROLE_DIALOG, s->nrun > 1 ? &paint : NULL);
}

const struct panel plot_panel = {
	.open = plot_open, .key = plot_key, .draw = plot_draw, .close = plot_close,
};

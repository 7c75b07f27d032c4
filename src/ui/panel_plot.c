/* The curves (p): every metric TAO reported for the selected job, drawn
 * by util/plot.c, the CLI's `taotop plot` drawing, in braille or ASCII as
 * the locale allows. One metric at a time: m (or Tab) the next, l a log
 * scale. A running job's curves are its row's (the tracker follows its
 * status file at each poll: engine/store/series.h's shared copy), drawn
 * again as each poll brings new points; a finished job's are its
 * record's. Nothing is asked of the cluster. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/store.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "ui/text.h"
#include "util/plot.h"
#include "util/xmalloc.h"

struct plotview {
	char			*key;	/* the job's list entry (jt_entry.key), NULL: closed */
	char			*id;	/* its record's */
	struct job_record	*rec;	/* a finished job's record, or NULL */
	struct series_shared	*live;	/* a running job's curves, or NULL */
	size_t			 metric;	/* which of the curves */
	char			 name[SERIES_NAME_MAX];	/* its name, kept as curves grow */
	int			 log;
	char			**lines;
	size_t			 n;
};

static struct plotview *state(struct app *a)
{
	return panel_state(a, MODE_PLOT, sizeof(struct plotview));
}

static void free_lines(struct plotview *s)
{
	text_lines_free(&s->lines, &s->n);
}

static void plot_close(struct app *a)
{
	struct plotview *s = state(a);

	free_lines(s);
	record_free(s->rec);
	s->rec = NULL;
	series_shared_unref(s->live);
	s->live = NULL;
	free(s->key);
	free(s->id);
	s->key = s->id = NULL;
}

/* The curves shown: the running job's as the last poll had them, else
 * its record's. */
static const struct series_set *curves(const struct plotview *s)
{
	return s->live != NULL ? series_shared_set(s->live) : &s->rec->curves;
}

static const struct jt_entry *entry_by_key(const struct app *a, const char *key)
{
	size_t i;

	for (i = 0; key != NULL && i < a->jt.n; i++)
		if (strcmp(a->jt.entries[i].key, key) == 0)
			return &a->jt.entries[i];
	return NULL;
}

static void add_line(struct plotview *s, char *line)
{
	text_lines_add(&s->lines, &s->n, line);
}

/* The lines: the metric's name (TAO's, sanitised) with its last and best
 * values, then its plot sized to the screen. */
static void build(struct app *a)
{
	struct plotview *s = state(a);
	const struct series_set *set = curves(s);
	const struct series *sr;
	struct plot_opts o = { .width = a->cols - 8, .height = a->lines - 9, .utf8 = text_utf8(),
		.log_y = s->log, .x_label = "epoch" };
	struct plot_series ps;
	double *x;
	char *p, *nl, head[256];
	long last, best;
	size_t i;
	int len;

	free_lines(s);
	/* The metric shown stays the one of its name as the curves grow (a
	 * running job's may gain a name before it). */
	for (i = 0; i < set->n; i++)
		if (strcmp(set->s[i].name, s->name) == 0)
			s->metric = i;
	if (s->metric >= set->n)
		s->metric = 0;
	sr = &set->s[s->metric];
	snprintf(s->name, sizeof(s->name), "%s", sr->name);
	x = xcalloc(sr->n ? sr->n : 1, sizeof(*x));
	for (i = 0; i < sr->n; i++)
		x[i] = sr->epoch[i];
	series_last_best(sr, &last, &best);
	/* TAO's name, from the cluster: text_draw sanitises it on the screen. */
	len = snprintf(head, sizeof(head), "%s (%zu of %zu)%s", sr->name, s->metric + 1,
	    set->n, s->log ? "  log scale" : "");
	if (last >= 0 && len > 0 && (size_t)len < sizeof(head))
		len += snprintf(head + len, sizeof(head) - (size_t)len, "  last %.6g at epoch %d",
		    sr->value[last], sr->epoch[last]);
	if (best >= 0 && len > 0 && (size_t)len < sizeof(head))
		snprintf(head + len, sizeof(head) - (size_t)len, ", best %.6g at epoch %d",
		    sr->value[best], sr->epoch[best]);
	add_line(s, xstrdup(head));
	ps = (struct plot_series){ x, sr->value, sr->n };
	p = plot_render(&ps, 1, &o);
	if (p == NULL) {
		add_line(s, xstrdup(s->log ? "nothing above 0 to draw on a log scale"
		    : "no finite value to draw (or the screen is too small)"));
	} else {
		char *at = p;
		while ((nl = strchr(at, '\n')) != NULL) {
			add_line(s, xstrndup(at, (size_t)(nl - at)));
			at = nl + 1;
		}
	}
	free(p);
	free(x);
	a->dirty |= DIRTY_DIALOG;
}

static void plot_open(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);
	struct plotview *s = state(a);
	char *err = NULL;

	if (e == NULL)
		return;
	plot_close(a);
	if (e->row->record_id == NULL) {
		ui_message(a, 1, "no curves: not a job taotop submitted (its record keeps them)");
		return;
	}
	if (e->row->curves != NULL) {
		s->live = series_shared_ref(e->row->curves);
	} else if (store_load(a->store, e->row->record_id, &s->rec, &err) != 0) {
		ui_message(a, 1, "%s", err);
		free(err);
		return;
	}
	if (curves(s)->n == 0) {
		ui_message(a, 1, "no curves for %s yet: TAO has reported no metric%s",
		    e->row->record_id, tao_state_final(e->row->state) ? "" : " so far");
		plot_close(a);
		return;
	}
	s->key = xstrdup(e->key);
	s->id = xstrdup(e->row->record_id);
	build(a);
	a->mode = MODE_PLOT;
}

void plot_panel_refresh(struct app *a)
{
	struct plotview *s = state(a);
	const struct jt_entry *e;
	struct job_record *rec = NULL;
	char *err = NULL;

	if (a->mode != MODE_PLOT || (e = entry_by_key(a, s->key)) == NULL)
		return;		/* gone from the list: keep what is shown */
	if (e->row->curves != NULL) {
		if (e->row->curves == s->live)
			return;		/* nothing new */
		series_shared_unref(s->live);
		s->live = series_shared_ref(e->row->curves);
		record_free(s->rec);
		s->rec = NULL;
	} else if (s->live != NULL) {
		/* No longer running: its record keeps the whole file's now
		 * (until it does, what the polls had stays). */
		if (store_load(a->store, s->id, &rec, &err) != 0 || rec->curves.n == 0) {
			free(err);
			record_free(rec);
			return;
		}
		series_shared_unref(s->live);
		s->live = NULL;
		s->rec = rec;
	} else {
		return;
	}
	build(a);
}

static enum panel_next plot_key(struct app *a, wint_t ch, int func)
{
	struct plotview *s = state(a);

	if (!func && (ch == KEY_ESC || ch == 'q' || ch == 'p'))
		return PANEL_CLOSE;
	if (!func && (ch == 'm' || ch == '\t')) {
		s->metric = (s->metric + 1) % curves(s)->n;
		s->name[0] = '\0';
		build(a);
	} else if ((!func && ch == 'M') || (func && ch == KEY_BTAB)) {
		s->metric = (s->metric + curves(s)->n - 1) % curves(s)->n;
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

	snprintf(title, sizeof(title), "Curves: %s%s", s->id,
	    s->live != NULL ? " (running: follows the job)" : "");
	dialog_draw(a, title, s->lines, s->n, 0,
	    "m/Tab: next metric   M: previous   l: log scale   P: write the screen   Esc/p: close",
	    ROLE_DIALOG);
}

const struct panel plot_panel = {
	.open = plot_open, .key = plot_key, .draw = plot_draw, .close = plot_close,
};

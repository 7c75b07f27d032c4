/* The curves (p): every metric TAO reported for the selected job, as its
 * record keeps them once it has ended (engine/store/series.h), drawn by
 * util/plot.c, the CLI's `taotop plot` drawing, in braille or ASCII as the
 * locale allows. One metric at a time: m (or Tab) the next, l a log scale.
 * From the record alone: nothing is asked of the cluster. */
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
	struct job_record	*rec;	/* the job's record, NULL: closed */
	size_t			 metric;	/* which of rec->curves */
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
	const struct series *sr = &s->rec->curves.s[s->metric];
	struct plot_opts o = { .width = a->cols - 8, .height = a->lines - 9, .utf8 = text_utf8(),
		.log_y = s->log, .x_label = "epoch" };
	struct plot_series ps;
	double *x = xcalloc(sr->n ? sr->n : 1, sizeof(*x));
	char *p, *nl, head[256];
	long last, best;
	size_t i;
	int len;

	free_lines(s);
	for (i = 0; i < sr->n; i++)
		x[i] = sr->epoch[i];
	series_last_best(sr, &last, &best);
	/* TAO's name, from the cluster: text_draw sanitises it on the screen. */
	len = snprintf(head, sizeof(head), "%s (%zu of %zu)%s", sr->name, s->metric + 1,
	    s->rec->curves.n, s->log ? "  log scale" : "");
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
	if (store_load(a->store, e->row->record_id, &s->rec, &err) != 0) {
		ui_message(a, 1, "%s", err);
		free(err);
		return;
	}
	if (s->rec->curves.n == 0) {
		ui_message(a, 1, "no curves for %s yet: TAO's metrics are kept as the job ends",
		    e->row->record_id);
		plot_close(a);
		return;
	}
	if (s->metric >= s->rec->curves.n)
		s->metric = 0;
	build(a);
	a->mode = MODE_PLOT;
}

static enum panel_next plot_key(struct app *a, wint_t ch, int func)
{
	struct plotview *s = state(a);

	if (!func && (ch == KEY_ESC || ch == 'q' || ch == 'p'))
		return PANEL_CLOSE;
	if (!func && (ch == 'm' || ch == '\t')) {
		s->metric = (s->metric + 1) % s->rec->curves.n;
		build(a);
	} else if ((!func && ch == 'M') || (func && ch == KEY_BTAB)) {
		s->metric = (s->metric + s->rec->curves.n - 1) % s->rec->curves.n;
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

	snprintf(title, sizeof(title), "Curves: %s", s->rec->id);
	dialog_draw(a, title, s->lines, s->n, 0,
	    "m/Tab: next metric   M: previous   l: log scale   P: write the screen   Esc/p: close",
	    ROLE_DIALOG);
}

const struct panel plot_panel = {
	.open = plot_open, .key = plot_key, .draw = plot_draw, .close = plot_close,
};

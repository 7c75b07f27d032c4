/*
 * The column picker (O): the jobs list's columns, shown ones first in
 * their order, then the others; Space shows or hides one, J/K move it,
 * Enter applies and saves them as config.yaml's columns: (atomically, the
 * rest of the file kept), r goes back to taotop's choice for the width.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "util/xmalloc.h"

#define MAXCOLS	16

struct colpick {
	int	col[MAXCOLS];	/* the order shown, */
	int	on[MAXCOLS];	/* which are shown, */
	int	n;		/* how many, */
	int	sel;		/* and the selection */
};

static struct colpick *state(struct app *a)
{
	return panel_state(a, MODE_COLUMNS, sizeof(struct colpick));
}

static void colpick_open(struct app *a)
{
	struct colpick *s = state(a);
	int c, k, n = 0, shown;

	for (k = 0; k < a->ncolumns; k++) {
		s->col[n] = a->columns[k];
		s->on[n++] = 1;
	}
	for (c = 0; c < draw_column_count(); c++) {
		for (shown = 0, k = 0; k < n; k++)
			shown |= s->col[k] == c;
		if (shown)
			continue;
		/* Taotop's choice: every column (CLUSTER with several). */
		s->col[n] = c;
		s->on[n++] = a->ncolumns == 0 && (strcmp(draw_column_name(c), "cluster") != 0 ||
		    watch_count(a->watch) > 1);
	}
	s->n = n;
	s->sel = 0;
	a->mode = MODE_COLUMNS;
	a->dirty |= DIRTY_DIALOG;
}

static void save(struct app *a)
{
	const char *names[MAXCOLS];
	char *err = NULL, *path = config_file_path();
	int k;

	for (k = 0; k < a->ncolumns; k++)
		names[k] = draw_column_name(a->columns[k]);
	if (config_save_columns(names, (size_t)a->ncolumns, &err) == 0)
		ui_message(a, 0, "columns %s %s", a->ncolumns ? "saved in" : "back to taotop's "
		    "choice; removed from", path);
	else
		ui_message(a, 1, "columns applied, not saved: %s", err);
	free(err);
	free(path);
}

static enum panel_next colpick_key(struct app *a, wint_t ch, int func)
{
	struct colpick *s = state(a);
	int k = s->sel, swap = -1, t;

	if (!func && (ch == KEY_ESC || ch == 'q'))
		return PANEL_CLOSE;
	if ((func && ch == KEY_DOWN) || (!func && ch == 'j')) {
		s->sel += k + 1 < s->n;
	} else if ((func && ch == KEY_UP) || (!func && ch == 'k')) {
		s->sel -= k > 0;
	} else if (!func && ch == ' ') {
		s->on[k] = !s->on[k];
	} else if (!func && (ch == 'J' || ch == '+') && k + 1 < s->n) {
		swap = k + 1;
	} else if (!func && (ch == 'K' || ch == '-') && k > 0) {
		swap = k - 1;
	} else if (!func && (ch == 'r' || ch == '\r' || ch == '\n')) {
		a->ncolumns = 0;
		for (k = 0; ch != 'r' && k < s->n; k++)
			if (s->on[k])
				a->columns[a->ncolumns++] = s->col[k];
		save(a);
		a->dirty |= DIRTY_JOBS;
		return PANEL_CLOSE;
	}
	if (swap >= 0) {
		t = s->col[k], s->col[k] = s->col[swap], s->col[swap] = t;
		t = s->on[k], s->on[k] = s->on[swap], s->on[swap] = t;
		s->sel = swap;
	}
	return PANEL_KEEP;
}

static void colpick_draw(struct app *a)
{
	struct colpick *s = state(a);
	char *v[MAXCOLS] = { NULL };
	int k;

	for (k = 0; k < s->n; k++)
		v[k] = xasprintf("%c [%c] %-11s %s", k == s->sel ? '>' : ' ',
		    s->on[k] ? 'x' : ' ', draw_column_title(s->col[k]),
		    draw_column_name(s->col[k]));
	dialog_draw(a, "Columns of the jobs list", v, (size_t)s->n, 0,
	    "Space: show/hide  J/K: move  Enter: apply and save  r: taotop's choice  Esc: none",
	    ROLE_DIALOG);
	while (k > 0)
		free(v[--k]);
}

const struct panel columns_panel = {
	.open = colpick_open, .key = colpick_key, .draw = colpick_draw,
};

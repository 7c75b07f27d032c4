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
#include "util/xmalloc.h"

void colpick_open(struct app *a)
{
	int c, k, n = 0, shown;

	for (k = 0; k < a->ncolumns; k++) {
		a->pick_col[n] = a->columns[k];
		a->pick_on[n++] = 1;
	}
	for (c = 0; c < draw_column_count(); c++) {
		for (shown = 0, k = 0; k < n; k++)
			shown |= a->pick_col[k] == c;
		if (shown)
			continue;
		/* Taotop's choice: every column (CLUSTER with several). */
		a->pick_col[n] = c;
		a->pick_on[n++] = a->ncolumns == 0 && (strcmp(draw_column_name(c), "cluster") != 0 ||
		    watch_count(a->watch) > 1);
	}
	a->npick = n;
	a->pick = 0;
	a->mode = MODE_COLUMNS;
	a->dirty |= DIRTY_DIALOG;
}

static void save(struct app *a)
{
	const char *names[16];
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

void colpick_key(struct app *a, wint_t ch, int func)
{
	int k = (int)a->pick, swap = -1, t;

	if (!func && (ch == KEY_ESC || ch == 'q')) {
		a->mode = MODE_NORMAL;
	} else if ((func && ch == KEY_DOWN) || (!func && ch == 'j')) {
		a->pick += k + 1 < a->npick;
	} else if ((func && ch == KEY_UP) || (!func && ch == 'k')) {
		a->pick -= k > 0;
	} else if (!func && ch == ' ') {
		a->pick_on[k] = !a->pick_on[k];
	} else if (!func && (ch == 'J' || ch == '+') && k + 1 < a->npick) {
		swap = k + 1;
	} else if (!func && (ch == 'K' || ch == '-') && k > 0) {
		swap = k - 1;
	} else if (!func && (ch == 'r' || ch == '\r' || ch == '\n')) {
		a->ncolumns = 0;
		for (k = 0; ch != 'r' && k < a->npick; k++)
			if (a->pick_on[k])
				a->columns[a->ncolumns++] = a->pick_col[k];
		save(a);
		a->mode = MODE_NORMAL;
		a->dirty |= DIRTY_JOBS;
	}
	if (swap >= 0) {
		t = a->pick_col[k], a->pick_col[k] = a->pick_col[swap], a->pick_col[swap] = t;
		t = a->pick_on[k], a->pick_on[k] = a->pick_on[swap], a->pick_on[swap] = t;
		a->pick = (size_t)swap;
	}
	a->dirty |= DIRTY_DIALOG;
}

void colpick_draw(struct app *a)
{
	char *v[16] = { NULL };
	int k;

	for (k = 0; k < a->npick; k++)
		v[k] = xasprintf("%c [%c] %-11s %s", (size_t)k == a->pick ? '>' : ' ',
		    a->pick_on[k] ? 'x' : ' ', draw_column_title(a->pick_col[k]),
		    draw_column_name(a->pick_col[k]));
	draw_dialog(a, "Columns of the jobs list", v, (size_t)a->npick, 0,
	    "Space: show/hide  J/K: move  Enter: apply and save  r: taotop's choice  Esc: none",
	    ROLE_DIALOG);
	while (k > 0)
		free(v[--k]);
}

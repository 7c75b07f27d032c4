/* The dialog frame every panel draws in: a box in the middle of the screen. */
#include "ui/dialog.h"

#include <stdio.h>
#include <string.h>

#include "ui/text.h"

/* Line i's marks (the legend's: its first one only) in their colours; the
 * text drawn from column 2, one column a character (the plot's are). */
static void paint_line(WINDOW *d, int row, const char *line, const struct dialog_paint *p,
    int legend, int width)
{
	const unsigned char *c;
	int col = 2;

	for (c = (const unsigned char *)line; *c != '\0' && col < width + 2; c++) {
		const char *m;
		if ((*c & 0xC0) == 0x80)
			continue;	/* inside a character */
		if (*c != ' ' && (m = memchr(p->marks, *c, p->nmarks)) != NULL) {
			attr_t at = p->attr[m - p->marks];
			mvwchgat(d, row, col, 1, at & ~A_COLOR, (short)PAIR_NUMBER(at), NULL);
			if (legend)
				return;
		} else if (legend && *c != ' ') {
			return;
		}
		col++;
	}
}

void dialog_draw(struct app *a, const char *title, char *const *lines, size_t n, size_t top,
    const char *footer, enum role role)
{
	dialog_draw_painted(a, title, lines, n, top, footer, role, NULL);
}

void dialog_draw_painted(struct app *a, const char *title, char *const *lines, size_t n,
    size_t top, const char *footer, enum role role, const struct dialog_paint *paint)
{
	int maxw = a->cols - 4, maxh = a->lines - 2, w = (int)strlen(title) + 4, h, y, x;
	size_t i;
	WINDOW *d;

	for (i = 0; i < n; i++) {
		int lw = (int)text_width(lines[i], strlen(lines[i])) + 4;
		if (lw > w)
			w = lw;
	}
	if ((int)strlen(footer) + 4 > w)
		w = (int)strlen(footer) + 4;
	if (w > maxw)
		w = maxw;
	h = (int)n + 4;
	if (h > maxh)
		h = maxh;
	y = (a->lines - h) / 2;
	x = (a->cols - w) / 2;
	d = newwin(h, w, y, x);
	wbkgdset(d, ' ' | a->attr[role]);
	werase(d);
	wattrset(d, a->attr[role]);
	box(d, 0, 0);
	wmove(d, 0, 2);
	text_draw(d, title, strlen(title), 0, w - 4, a->attr[role] | A_BOLD, 0);
	for (i = top; i < n && (int)(i - top) < h - 4; i++) {
		wmove(d, (int)(i - top) + 1, 2);
		text_draw(d, lines[i], strlen(lines[i]), 0, w - 4, a->attr[role], 0);
		if (paint != NULL && ((i >= paint->from && i < paint->to) ||
		    (i >= paint->legend_from && i < paint->legend_to)))
			paint_line(d, (int)(i - top) + 1, lines[i], paint, i >= paint->legend_from &&
			    i < paint->legend_to, w - 4);
	}
	if (n > (size_t)(h - 4)) {
		char more[48];
		snprintf(more, sizeof(more), " %zu-%zu of %zu ", top + 1,
		    top + (size_t)(h - 4) < n ? top + (size_t)(h - 4) : n, n);
		wmove(d, h - 3, w - 2 - (int)strlen(more));
		text_draw(d, more, strlen(more), 0, (int)strlen(more), a->attr[role], 0);
	}
	wmove(d, h - 2, 2);
	text_draw(d, footer, strlen(footer), 0, w - 4, a->attr[role] | A_BOLD, 0);
	wnoutrefresh(d);
	delwin(d);
}

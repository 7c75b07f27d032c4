#include "ui/layout.h"

#include <stdio.h>
#include <string.h>

static struct rect rect(int y, int x, int h, int w)
{
	struct rect r = { y, x, h, w };
	return r;
}

void layout_compute(int cols, int lines, int side_by_side, enum pane_max max, struct layout *l)
{
	int avail, jobs_h, logs_h, logs_y;

	memset(l, 0, sizeof(*l));
	if (cols < LAYOUT_MIN_COLS || lines < LAYOUT_MIN_LINES) {
		l->too_small = 1;
		return;
	}
	l->status = rect(lines - 2, 0, 1, cols);
	l->message = rect(lines - 1, 0, 1, cols);
	avail = lines - 2;
	/* Two fifths for the jobs (a header and at least four rows), the rest
	 * for the logs, where the text is. */
	jobs_h = avail * 2 / 5;
	if (jobs_h < 5)
		jobs_h = 5;
	l->jobs = rect(0, 0, jobs_h, cols);
	logs_y = jobs_h;
	logs_h = avail - jobs_h;
	if (max == MAX_OUT) {
		l->out = rect(logs_y, 0, logs_h, cols);
	} else if (max == MAX_ERR) {
		l->err = rect(logs_y, 0, logs_h, cols);
	} else if (side_by_side) {
		int left = cols / 2;
		l->out = rect(logs_y, 0, logs_h, left);
		l->err = rect(logs_y, left, logs_h, cols - left);
	} else {
		int top = logs_h - logs_h / 2;
		l->out = rect(logs_y, 0, top, cols);
		l->err = rect(logs_y + top, 0, logs_h - top, cols);
	}
}

/* A flexible column's start before it grows: its title, or its content
 * up to 12 (what a narrow screen can give it). */
#define FLEX_START	12

static int start_width(const struct layout_col *c)
{
	int w = c->want;

	if (c->cap > 0 && w > c->cap)
		w = c->cap;
	if (c->cap == 0 && w > FLEX_START)
		w = FLEX_START;
	return w > c->title ? w : c->title;
}

int layout_columns(const struct layout_col *c, int n, int cols, const int *pick, int npick,
    int *width, int *out_order)
{
	int used = 0, i, k, rank, shown = 0, left, last = -1;

	for (i = 0; i < n; i++)
		width[i] = 0;
	if (pick != NULL) {
		for (k = 0; k < npick; k++) {
			int w;
			i = pick[k];
			if (i < 0 || i >= n || width[i] > 0)
				continue;
			w = start_width(&c[i]);
			if (used + w + 1 <= cols) {
				width[i] = w;
				used += w + 1;
				out_order[shown++] = i;
			}
		}
	} else {
		for (rank = 0; rank <= 10; rank++) {
			for (i = 0; i < n; i++) {
				int w = start_width(&c[i]);
				if (c[i].rank != rank || (c[i].want == 0 && !c[i].always))
					continue;
				if (used + w + 1 <= cols) {
					width[i] = w;
					used += w + 1;
				}
			}
		}
		for (i = 0; i < n; i++)
			if (width[i] > 0)
				out_order[shown++] = i;
	}
	/* The flexible columns grow to their longest cell, in order. */
	left = cols - used;
	for (k = 0; k < shown && left > 0; k++) {
		int more;
		i = out_order[k];
		if (c[i].cap != 0 || c[i].want <= width[i])
			continue;
		more = c[i].want - width[i] < left ? c[i].want - width[i] : left;
		width[i] += more;
		left -= more;
	}
	/* The rest to the last column: its title stays where the content
	 * puts it, and the header's right end stays free for the counts. */
	if (shown > 0 && left > 0) {
		last = out_order[shown - 1];
		width[last] += left;
	}
	return shown;
}

void layout_describe(const struct layout *l, char *buf, unsigned long len)
{
	if (l->too_small) {
		snprintf(buf, len, "too small");
		return;
	}
	snprintf(buf, len, "jobs %d,%d %dx%d | out %d,%d %dx%d | err %d,%d %dx%d | status %d | message %d",
	    l->jobs.y, l->jobs.x, l->jobs.w, l->jobs.h, l->out.y, l->out.x, l->out.w, l->out.h,
	    l->err.y, l->err.x, l->err.w, l->err.h, l->status.y, l->message.y);
}

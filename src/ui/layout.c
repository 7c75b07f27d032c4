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

/*
 * Where everything goes, as a pure function of the terminal's size and the
 * view's settings: the jobs list on top, the two log panes below it (side by
 * side or stacked, or one maximised), the status bar and the message line at
 * the bottom. Below 60x15 there is no layout, only a message.
 */
#ifndef TAOTOP_UI_LAYOUT_H
#define TAOTOP_UI_LAYOUT_H

#define LAYOUT_MIN_COLS		60
#define LAYOUT_MIN_LINES	15

struct rect {
	int	y, x, h, w;	/* h or w 0: not shown */
};

enum pane_max { MAX_NONE, MAX_OUT, MAX_ERR };

struct layout {
	int		too_small;
	struct rect	jobs;		/* header line included */
	struct rect	out, err;	/* title line included */
	struct rect	status;
	struct rect	message;	/* hints, prompts, the filter line */
};

void layout_compute(int cols, int lines, int side_by_side, enum pane_max max, struct layout *l);
/* "jobs 0,0 120x15 out ..." for tests. */
void layout_describe(const struct layout *l, char *buf, unsigned long len);

#endif

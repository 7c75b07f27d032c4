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

/* A column of the jobs list as the width sharing sees it. */
struct layout_col {
	int	title;		/* its title's width: the least it takes */
	int	want;		/* its longest cell; 0: nothing to show */
	int	cap;		/* the most a fixed column takes; 0: flexible (NAME,
				 * REASON), it takes what is left, up to want */
	int	rank;		/* lower: kept first when narrow */
	int	always;		/* shown even with nothing to show */
};

/*
 * Widths for a table `cols` wide (width[i] 0: not shown): columns with
 * nothing to show give their room to those that have; a fixed column fits
 * its longest cell (up to its cap); the flexible ones grow to their
 * longest cell, the first first; what is left goes to the last column
 * shown (blank on the right, where the header has its counts). pick: the user's columns in their order (all shown if they fit,
 * empty or not), or NULL for every column by rank. Returns the columns
 * shown, in order, in out_order.
 */
int layout_columns(const struct layout_col *c, int n, int cols, const int *pick, int npick,
    int *width, int *out_order);
/* "jobs 0,0 120x15 out ..." for tests. */
void layout_describe(const struct layout *l, char *buf, unsigned long len);

#endif

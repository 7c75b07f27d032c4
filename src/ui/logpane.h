/*
 * What a log pane shows: which lines of a followed log's ring, cut or
 * wrapped to the pane's width, sanitised. Following shows the end; any
 * scroll stops following, and G resumes it. Positions are absolute line
 * numbers (counting lines the ring has dropped), so the view does not move
 * when old lines fall out of the ring. A line longer than 16 KiB is shown
 * cut, with how much is left out: a 10 MB line costs what a short one does.
 * Pure: no curses, tested as data.
 */
#ifndef TAOTOP_UI_LOGPANE_H
#define TAOTOP_UI_LOGPANE_H

#include <stddef.h>
#include <stdint.h>

struct log_ring;

#define LOGPANE_LINE_MAX	16384	/* bytes of one line shown */
#define LOGPANE_SLOW_MS		500	/* a request in flight longer is shown as such */

struct logpane {
	int	 follow;	/* show the end as lines arrive */
	size_t	 top;		/* first line shown when not following (absolute) */
	size_t	 first_shown;	/* set by the last layout */
	size_t	 hscroll;	/* columns skipped, wrap off */
	int	 wrap;
	char	 search[128];
};

/* One screen row: part of a line, sanitised (SGR kept when asked). */
struct pane_row {
	size_t	 line;		/* absolute line number */
	char	*text;
	size_t	 len;
};

void logpane_init(struct logpane *p);
/* Lay out at most height rows of width columns; returns how many. Free the
 * rows' text with logpane_rows_free. */
size_t logpane_layout(const struct log_ring *r, struct logpane *p, size_t width, size_t height,
    int sgr, struct pane_row *rows);
void logpane_rows_free(struct pane_row *rows, size_t n);

/* Scrolling (stops following). */
void logpane_scroll(struct logpane *p, const struct log_ring *r, long lines);
void logpane_top(struct logpane *p, const struct log_ring *r);
void logpane_follow(struct logpane *p);
/* Move to the next (dir 1) or previous (-1) line holding p->search (case
 * blind), from the line after/before the first shown: LOGPANE_FOUND;
 * past the end (or the start) it goes on from the other end:
 * LOGPANE_WRAPPED; -1 when no line holds it. A pane that follows (its
 * view at the end: nothing below) looks up from its last line, the
 * nearest match above first. */
#define LOGPANE_FOUND	0
#define LOGPANE_WRAPPED	1
int logpane_find(struct logpane *p, const struct log_ring *r, int dir);

/* What a pane knows of its lines' freshness (monotonic ms; 0: none). */
struct pane_fresh {
	int64_t	 now_ms;
	int64_t	 read_ms;	/* the last good read */
	int64_t	 reading_ms;	/* a read in flight since */
	int	 failed;	/* the last read failed */
};

/* A pane's title: name, job, follow state, wrap, dropped lines; and when
 * its lines may be behind (a read waits past LOGPANE_SLOW_MS, or the last
 * one failed) how old they are ("40 s old"), with a spinner while a read
 * waits. The lines stay shown: a slow link never blanks a pane. */
void logpane_title(char *buf, size_t len, const struct logpane *p, const char *name,
    const char *job, int dropped, const struct pane_fresh *f);
/* A pane with nothing to show yet: "loading...", and past LOGPANE_SLOW_MS
 * a spinner and the seconds waited. */
void logpane_loading(char *buf, size_t len, int64_t now_ms, int64_t reading_ms);
/* A spinner's frame for something in flight `ms` long: | / - \ turning
 * four times a second (ASCII: every terminal and locale draws it). */
const char *logpane_spinner(int64_t ms);

#endif

/*
 * The jobs view's model: every row of every cluster's latest poll, narrowed
 * by the filter (any column, case-insensitive, as the user types) and by the
 * finished-jobs toggle, sorted (state, age, name, cluster), optionally
 * grouped by cluster under header lines, with the selection and the marks
 * following jobs (not positions) across polls and re-sorts. Pure: no
 * curses, so it is tested as data, and cheap enough for 10 000 rows.
 */
#ifndef TAOTOP_UI_JOBTABLE_H
#define TAOTOP_UI_JOBTABLE_H

#include <stddef.h>

#include "util/buf.h"

struct job_row;

enum jt_sort { JT_SORT_STATE, JT_SORT_AGE, JT_SORT_NAME, JT_SORT_CLUSTER, JT_SORT_COUNT };

struct jt_entry {
	size_t			 cluster;
	const char		*cluster_name;	/* borrowed */
	const struct job_row	*row;		/* borrowed: valid until the next jt_begin */
	char			*key;		/* "cluster\x1fid": who this job is */
	char			*hay;		/* every column, lower case, for the filter */
					/* (both in the table's text, until jt_begin) */
	size_t			 at[2];		/* where key and hay start in it */
	unsigned long long	 num;		/* the SLURM id as a number, 0 if none */
	int			 rank;		/* of its state, for sorting */
};

/* A line of the list: a job, or (grouped) a cluster's header. A job
 * array's tasks of the user's (not taotop's) are one line, their array's
 * (an entry of the table's own, its row made from theirs: its SLURM id the
 * array's, so a cancel cancels them all; its state the liveliest of
 * theirs; its reason their count by state), unless it is expanded (e): then
 * its tasks follow it, indented (task 1). */
struct jt_line {
	int	 header;
	size_t	 entry;		/* index in entries (jobs) */
	size_t	 cluster;	/* headers */
	int	 task;		/* a task shown under its expanded array */
};

struct jobtable {
	struct jt_entry	*entries;
	size_t		 n, cap;
	/* The entries' keys and hays, one after the other: one block kept
	 * from poll to poll, not 20 000 strings allocated and freed again at
	 * each (the monitor's memory stays flat). */
	struct buf	 text;
	struct jt_line	*lines;
	size_t		 nlines;
	char		 filter[128];
	enum jt_sort	 sort;
	int		 group;		/* by cluster, with headers */
	int		 hide_finished;
	size_t		 nhidden;	/* finished ones the filter would show, hidden */
	size_t		 sel;		/* index in lines; a job line when any exists */
	size_t		 top;		/* first line shown */
	char		*sel_key;
	char		**marks;	/* sorted keys */
	size_t		 nmarks;
	/* The arrays' own rows (made at each rebuild) and the arrays the
	 * user expanded (keys, kept across polls). */
	struct job_row	**arrays;
	size_t		 narrays;
	size_t		 nreal, text_real;	/* the polls' entries and their text */
	char		**expanded;
	size_t		 nexpanded;
};

void jt_init(struct jobtable *t);
void jt_free(struct jobtable *t);

/* Replace the rows: jt_begin, jt_add for each, then jt_rebuild. */
void jt_begin(struct jobtable *t);
void jt_add(struct jobtable *t, size_t cluster, const char *cluster_name, const struct job_row *row);
/* Filter, sort, group; the selection stays on the same job if it is still
 * listed, else on the nearest line. Call after any setting changes. */
void jt_rebuild(struct jobtable *t);

const char *jt_sort_name(enum jt_sort s);
/* The selected job, or NULL when the list is empty. */
const struct jt_entry *jt_selected(const struct jobtable *t);
/* The job of key (jt_entry's key) among the rows, or NULL (key NULL, or
 * no longer listed). */
const struct jt_entry *jt_by_key(const struct jobtable *t, const char *key);
/* Move the selection by delta job lines (headers skipped), clamped. */
void jt_move(struct jobtable *t, long delta);
void jt_select_line(struct jobtable *t, size_t line);
/* Keep the selection within a window of `rows` lines. */
void jt_scroll_to_selection(struct jobtable *t, size_t rows);

/* Whether the selected line is a job array's (rolled up or expanded),
 * and expand or fold it. Returns 1 when the selection was an array. */
int jt_toggle_array(struct jobtable *t);

int jt_is_marked(const struct jobtable *t, const struct jt_entry *e);
void jt_toggle_mark(struct jobtable *t);
/* Mark every job shown; when all are marked already, unmark them. */
void jt_mark_all_shown(struct jobtable *t);
void jt_clear_marks(struct jobtable *t);
/* The jobs to act on: the marked ones shown, else the selected one. Fills
 * out (caller frees the array only); returns how many. */
size_t jt_targets(const struct jobtable *t, const struct jt_entry ***out);

#endif

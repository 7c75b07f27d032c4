/*
 * TAO's metric series, kept whole: every numeric key of status.json's
 * "kpi" and "graphical" objects (as TAO names them), one value per epoch,
 * as a record keeps them (its progress's "curves") and a plot draws them.
 *
 * Bounded: a series holds at most SERIES_MAX_POINTS points. When a point
 * would pass that, every other kept point is dropped (the first kept) and
 * from then on only every stride-th epoch's point is kept, the stride
 * doubled: the points stay evenly spread over the run however long it is.
 * The newest point is always kept (the last value a plot shows), even off
 * the stride; the next point takes its place when it is off the stride.
 *
 * Which value an epoch gets: a value is reported either on the epoch's own
 * line (pinned: it is that epoch's) or on a line without an epoch, which
 * taostatus.h gives the last epoch line's epoch. A pinned value stands; an
 * unpinned one takes the epoch's place unless a pinned one holds it (TAO
 * 7.x writes the next epoch's "Eval metrics generated." while the last
 * epoch line is still this one's, and that epoch line carried this
 * epoch's validation values; its "Train metrics generated." comes after
 * the epoch line, which did not carry them). An epoch before the newest
 * one starts the series over from there (a run resumed from a checkpoint
 * redoes those epochs). NaN and the infinities
 * are kept as such: a plot shows them as gaps.
 */
#ifndef TAOTOP_ENGINE_SERIES_H
#define TAOTOP_ENGINE_SERIES_H

#include <stddef.h>

#define SERIES_MAX_POINTS	2000
/* At most this many series per job (a status file naming thousands of
 * keys is not TAO's); later names are not kept. */
#define SERIES_MAX_NAMES	64
#define SERIES_NAME_MAX		64	/* bytes of a name kept, NUL included */

struct series {
	char	 name[SERIES_NAME_MAX];
	int	*epoch;		/* as the user counts them, increasing */
	double	*value;
	size_t	 n, cap;
	unsigned long stride;	/* keep epochs whose index since the first is a multiple */
	unsigned long seen;	/* distinct epochs reported (the index of the next) */
	int	 tail_off;	/* the last point is off the stride (kept as the newest) */
	int	 pinned;	/* the last point came from its epoch's own line */
};

struct series_set {
	struct series	*s;
	size_t		 n;
};

void series_set_init(struct series_set *set);
void series_set_free(struct series_set *set);
/* A deep copy of src into dst (dst's old content not freed). */
void series_set_copy(struct series_set *dst, const struct series_set *src);
/*
 * A read-only copy of a set shared by whoever holds a reference (counted
 * atomically: a poll's rows are made on a cluster's worker thread and
 * freed on the monitor's). A running job's curves as the tracker follows
 * them: one copy made when new lines came, held by every row given out
 * until the next, never copied again per row.
 */
struct series_shared;
/* A copy of src, one reference held. */
struct series_shared *series_shared_new(const struct series_set *src);
/* Another reference (NULL: NULL). */
struct series_shared *series_shared_ref(struct series_shared *sh);
/* One reference dropped; the last frees it (NULL: nothing). */
void series_shared_unref(struct series_shared *sh);
const struct series_set *series_shared_set(const struct series_shared *sh);

/* The series called name, or NULL. */
const struct series *series_set_find(const struct series_set *set, const char *name);
/* One reported value (pinned: on its epoch's own line): name's series
 * made when new (within the bounds above). */
void series_set_add(struct series_set *set, const char *name, int epoch, double value,
    int pinned);
/* Whether a lower value of metric name is better (-1: a loss, an error),
 * a higher one (1: accuracy, mAP...), or neither (0: a learning rate), by
 * TAO's names for them. */
int series_better(const char *name);
/* The last finite point's index and the best one's by series_better (-1:
 * none). */
void series_last_best(const struct series *s, long *last, long *best);

/* The set as JSON (an array of {"name", "epochs", "values", "stride"};
 * NaN as null, the infinities as the strings "Infinity" and "-Infinity",
 * as json.dumps writes them bare), and back. series_from_json ignores
 * what it cannot read (a display, not what the record stands for). */
struct cJSON;
struct cJSON *series_set_to_json(const struct series_set *set);
void series_set_from_json(const struct cJSON *a, struct series_set *set);

#endif

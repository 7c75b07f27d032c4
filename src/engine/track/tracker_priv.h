/*
 * The tracker's parts (tracker.h is its interface): one module over several
 * files, as ssh/conn_priv.h does for the connection.
 *
 *   tracker.c            the tracker, its status.json follows, one poll step by step
 *   tracker_reconcile.c  one job's native state applied to its record (COMPLETED:
 *                        TAO's status.json decides)
 *   tracker_rows.c       a row of the jobs list from a record, the index or the queue
 *   tracker_shown.c      which records are shown, their cache, the finished ones' page
 *   tracker_foreign.c    the scheduler's answer by id, the user's other jobs
 *   tracker_cancel.c     cancel
 *   tracker_card.c       the efficiency card of a job that ended
 */
#ifndef TAOTOP_ENGINE_TRACKER_PRIV_H
#define TAOTOP_ENGINE_TRACKER_PRIV_H

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "engine/logs/logtail.h"
#include "engine/slurm/state.h"
#include "util/buf.h"
#include "engine/track/taostatus.h"
#include "engine/track/tracker.h"

struct conn;
struct job_record;
struct rec_index;
struct rec_meta;
struct record_store;
struct slurm_job;
struct slurm_poll;
struct strmap;

/* Above SLURM's MessageTimeout (10 s), so a slow controller is not a dead one. */
#define POLL_TIMEOUT_MS		30000
/* status.json can grow long; its last lines decide. A file up to
 * STATUS_WHOLE is read whole as the job ends, so that every epoch's
 * metrics are kept (engine/store/series.h); a longer one by its tail. */
#define STATUS_TAIL		(256u << 10)
#define STATUS_WHOLE		(8u << 20)
#define STATUS_TICK_MAX		(1u << 20)	/* of a status.json read by one poll */

static inline int same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* src into a row's field, cut to fit (snprintf's "%s" without its cost:
 * a poll fills half a dozen of these for each of a thousand rows). */
static inline void set_text(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A running job's status file, followed by offset from poll to poll: at
 * found once it is found (the record keeps where: status_path); until
 * then each poll's command looks in TAO's places, and below the results
 * folder (bounded, every STATUS_SEARCH_EVERY_S). */
struct progress {
	char			*record_id;
	char			*found;		/* NULL: not yet */
	char			**places;	/* tao_status_places */
	size_t			 nplaces;
	char			*search_root;	/* the results folder, or NULL */
	time_t			 next_search;
	struct log_follow	 follow;	/* of found, once found */
	struct tao_status	 ts;
	int			 caught_up;	/* this poll read it to its end: ts
						 * says what the whole file says */
	/* ts's curves as the rows hand them on (series_shared): made again
	 * only after lines came (fresh), so a poll with nothing new copies
	 * nothing, and a running job's plot follows it from memory (no
	 * record written per poll, no command of its own). */
	struct series_shared	*curves;
	int			 fresh;
};
#define STATUS_SEARCH_EVERY_S	60
/* COMPLETED with no final line in TAO's status file: checked again this
 * long (shared storage may show the last write late), then Error. */
#define STATUS_LAG_S		30

/* A job of the user's that taotop did not launch, seen in the queue: kept
 * after it leaves, with its final state from accounting, as history that
 * outlives SLURM's MinJobAge. */
struct seen_job {
	struct job_row	 row;
	int		 ended;	/* accounting gave its final state */
};

#define SEEN_MAX	5000	/* ended jobs beyond this are forgotten, oldest first */

/* A live record as the tracker keeps it between polls, parsed whole (the
 * poll decides from it), read again only when the index says its file
 * changed (gen). */
struct cached {
	char		*id;
	unsigned long	 gen;
	struct job_record *r;
	unsigned long	 mark;		/* the selection that last held it */
};

/*
 * The finished records' rows, from the index (never their files), made
 * again only when one of them changed, came or went (their ids and gens
 * tell): an unchanged page is neither rebuilt nor copied, each poll's
 * result borrows it (job_row.shared) and holds a reference. With a year of
 * records that is 10 000 rows a poll did not copy, and their 50 000
 * strings not allocated and freed again, at every tick.
 */
struct row_page {
	atomic_int	 refs;
	struct job_row	*rows;		/* strings owned here */
	unsigned long	*gens;		/* each row's record's, as the index had it */
	size_t		 n;
};

/* What the index says of a record, taken when it changed. */
struct pick {
	char		*id;
	time_t		 created;
	unsigned long	 gen;
	int		 final;
	struct cached	*c;		/* a live one's, this poll's */
	size_t		 at;		/* a finished one's row in the page; SIZE_MAX: none */
};

/* A live record's segments file (engine/track/segments.h), followed by
 * offset from poll to poll as status.json is: each poll's command sends
 * only what was appended, and only the new complete lines are merged. */
struct seg_follow {
	char		*record_id;
	struct log_follow follow;
	struct buf	 lines;		/* this poll's new complete lines */
	unsigned long	 mark;		/* the poll that last asked for it */
};
#define SEGMENTS_TICK_MAX	(64u << 10)	/* of a segments file read by one poll */

struct tracker {
	const struct cluster_cfg *cl;
	struct seg_follow **segf;	/* one per live record launched */
	size_t		  nsegf;
	struct strmap	 *seg_ix;	/* record id -> its seg_follow */
	struct seg_follow **segq;	/* this poll's command's, in its order */
	size_t		  nsegq;
	unsigned long	  seg_polls;
	struct seen_job	 *seen;
	size_t		  nseen;
	struct strmap	 *seen_ix;	/* SLURM id -> index in seen, plus one */
	struct progress	**prog;
	size_t		  nprog;
	struct strmap	 *prog_ix;	/* record id -> progress */
	struct strmap	 *live;		/* ids the queue listed at the last good poll */
	int	  primed;	/* a poll has succeeded: live means something */
	time_t	  last_ok;
	/* The history window (tracker_set_history). */
	long	  hist_window, hist_every;
	unsigned  hist_max;
	time_t	  hist_next;	/* when to ask next; 0: at the next poll */
	int	  hist_asked;	/* in the last poll */
	/* The records: the ones shown (sel, oldest first), taken again from
	 * the index when its version moves; their cache by id. */
	size_t		  page;		/* finished records shown, newest; 0: all */
	size_t		  left;		/* finished ones older than the page */
	unsigned long	  ix_version, marks;
	int		  selected;
	struct pick	 *sel;
	size_t		  nsel;
	struct cached	**cache;
	size_t		  ncache;
	struct strmap	 *cache_ix;	/* id -> cached */
	struct row_page	 *pg;		/* the finished ones' rows (a reference) */
	struct job_row	 *spare;	/* the next poll's rows array (tracker_reuse_rows) */
	size_t		  spare_cap;
	struct where_wait *ww;		/* tracker_where_awaited's, a few at most */
	size_t		  nww;
};

/* The answer's jobs by id: the queue's, and accounting's (the last line
 * of an id wins, as slurm_poll_find has it). */
struct jobmap {
	struct strmap	*queue, *acct;
};

/* A record taotop made final (a cancel, TAO's final line while SLURM
 * still ran the job) whose last word from SLURM is not a final one: it is
 * still asked about until accounting gives its final state, elapsed time
 * and exit code, as every other job's record keeps them. */
static inline int awaits_accounting(enum tao_state state, const char *native,
    const char *backend_ref)
{
	return tao_state_final(state) && backend_ref != NULL && native_state_live(native);
}
/* Accounting's silence on such a job, this long after it was made final,
 * ends the wait: its last word is dropped, not kept as if it still ran. */
#define SETTLE_GIVE_UP_S	600
/* The first minute of the wait polls soon (accounting lags the end). */
#define SETTLE_SOON_S		60

/* Accounting's final word on a job can come before where the job ran
 * (SLURM 22.05's slurmdbd: the end written, the start's partition not yet,
 * Partition empty for a poll or two). A record that knows only the list of
 * partitions it asked for (or none) waits this long for it, from the first
 * such answer, then takes the final word without it. */
#define WHERE_LAG_S		15
struct where_wait {
	char	*record_id;
	time_t	 first;		/* the first final answer without a partition */
};
/* tracker_reconcile.c: whether r's update waits for a later answer (1), j
 * being accounting's final word without a partition, now the time. */
int tracker_where_awaited(struct tracker *t, const struct job_record *r,
    const struct slurm_job *j, time_t now);

/* tracker_reconcile.c: accounting's last word on a record awaits_accounting
 * names (j: what the answer said of it, or NULL). Returns 1 when the
 * record changed. */
/* r's efficiency card (tracker_card.c): from what the poll has (ask 0: no
 * command), or with accounting's facts (ask 1: one command, once). */
struct cluster_cfg;
void tracker_make_card(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r, int ask);
int tracker_settle(struct record_store *st, struct job_record *r, const struct slurm_job *j,
    struct poll_result *res);
/* tracker_reconcile.c: ts is what the poll read of the job's status file,
 * up to its end (NULL: not followed, or not read to its end yet), found
 * where it was read from. */
int tracker_update_one(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r, const struct slurm_job *j, const struct tao_status *ts,
    const char *found, struct poll_result *res);
/* New complete lines of the job's segments file (text, len) merged into
 * its record, on disk and then in r; epoch: TAO's newest so far (-1:
 * unknown). -1 when the record could not be written: r is unchanged. */
int tracker_keep_segments(struct record_store *st, struct job_record *r, const char *text,
    size_t len, int epoch);
/* Where the job's status file was found, kept in its record. */
void tracker_keep_status_path(struct record_store *st, struct job_record *r, const char *path);

/* tracker_cancel.c: scancel of a job of taotop's (its sidecar removed
 * with it); 0 also when it had already ended. */
int tracker_scancel(struct conn *c, const struct job_record *r, char **err);

/* tracker_rows.c */
struct job_row *tracker_row_add(struct poll_result *res);
void tracker_row_from_slurm(struct job_row *row, const struct slurm_job *j);
void tracker_row_of_meta(struct job_row *row, const struct rec_meta *m);
void tracker_row_fill(struct job_row *row, const struct job_record *r,
    const struct slurm_job *j, const struct tao_status *ts);
void tracker_row_of_foreign(struct job_row *row, const struct slurm_job *j, enum tao_state prev);
void tracker_row_clear(struct job_row *r);
void tracker_row_copy(struct job_row *dst, const struct job_row *src);
void tracker_row_assign(struct job_row *dst, const struct job_row *src);

/* tracker_shown.c */
void tracker_select_records(struct tracker *t, struct rec_index *ix);
void tracker_cache_records(struct tracker *t, struct record_store *st);
void tracker_page_update(struct tracker *t, struct rec_index *ix);
struct row_page *tracker_page_ref(struct row_page *pg);
void tracker_page_unref(struct row_page *pg);
void tracker_sel_free(struct tracker *t);
void tracker_cached_free(struct cached *c);

/* tracker_foreign.c */
void tracker_foreign_rows(struct tracker *t, struct poll_result *res, const struct slurm_poll *p,
    const struct jobmap *jm, struct rec_index *ix);
void tracker_jobmap_build(struct jobmap *m, const struct slurm_poll *p);
void tracker_jobmap_free(struct jobmap *m);
const struct slurm_job *tracker_jobmap_any(const struct jobmap *m, const char *id);

#endif

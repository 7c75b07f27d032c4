/*
 * The status of every job on one cluster, from one remote command: taotop's
 * own jobs (their records move through the seed's state table, with each
 * change in their history) and the user's other jobs. Used by the CLI verbs
 * and, on the cluster's worker thread, by the monitor.
 *
 * When the scheduler does not answer, nothing changes: the last known states
 * stay and the poll says so. When accounting (sacct) does not answer, jobs
 * that left the queue wait for it instead of being guessed.
 */
#ifndef TAOTOP_ENGINE_TRACKER_H
#define TAOTOP_ENGINE_TRACKER_H

#include <stddef.h>
#include <time.h>

#include "engine/slurm/state.h"

struct conn;
struct record_store;
struct cluster_cfg;
struct series_shared;

/* One row: a job of taotop's (record_id set) or another job of the user's.
 * The user's other jobs are listed while in the queue and, once the tracker
 * has seen them there, after they leave it too, with the final state from
 * accounting: history beyond SLURM's MinJobAge, for as long as the tracker
 * lives (the newest 5000). With a history window (tracker_set_history),
 * accounting's finished jobs of that window are listed too, also those the
 * queue never showed and those of before a restart. */
struct job_row {
	char		*record_id;	/* NULL: not taotop's */
	char		 slurm_id[32];
	char		 shown_id[48];
	char		*name;
	char		*partition;
	int		 nodes, gpus;
	int		 gpus_known;	/* gpus is what SLURM or the record said */
	enum tao_state	 state;
	char		*native;	/* SLURM's state word, or NULL if unseen */
	char		*message;	/* pending reason, status.json verdict... */
	/* In duration_format's one format ("00:02:00", "1-00:00:00"); limit
	 * may be SLURM's word ("UNLIMITED"); "" unknown. Seconds: -1 unknown. */
	char		 elapsed[24], limit[24];
	long		 elapsed_s, limit_s;
	char		 exit_code[16];	/* accounting's "0:0", or "" */
	time_t		 created;	/* records only */
	/* TAO progress from status.json, for taotop's running jobs */
	int		 epoch, max_epoch;	/* -1: not reported */
	char		 eta[32];
	char		 metric[32];	/* the series' KPI ("loss"), or "" */
	double		*series;	/* one value per epoch */
	size_t		 nseries;
	/* A running job's every metric so far (status.json as the poll
	 * follows it; engine/store/series.h), a reference of its own, or
	 * NULL: a finished job's are in its record, not in its row. */
	struct series_shared *curves;
	int		 shared;	/* its strings and series are its poll's
					 * page's (below), not its own */
	int		 segments;	/* the run's segments so far (0: none told) */
	int		 requeued;	/* its next segment waits in the queue */
	char		 efficiency[16];	/* a finished job's card (engine/store/card.h):
					 * "avg 87%", "avg 12% !" (a note), "" none */
	int		 segments_more;	/* about this many more needed, -1 unknown */
	long		 eta_total_s;	/* TAO's eta plus the queue's mean wait for
					 * each segment still needed, -1 unknown */
	int		 ending;	/* TAO's final line is written, SLURM
					 * still runs it (cancelled after the
					 * cluster's ending_grace_seconds) */
};

/* What a row's STATE cell says: tao_state_label's word, or "Ending" while
 * TAO has written its final line and SLURM still runs the job. */
const char *tracker_row_label(const struct job_row *row);

/* A record's state changed at this poll. */
struct state_change {
	char		*record_id;
	char		 slurm_id[32];
	enum tao_state	 from, to;
	char		*native;
	time_t		 at;
	char		*what;		/* a segment's news ("requeued after segment 2"), or NULL */
};

/* The rows of taotop's finished records, made once and shared by every
 * poll's result until one of them changes (reference-counted, read-only:
 * a result may be freed on another thread than the one that made it). */
struct row_page;

struct poll_result {
	struct job_row	*rows;
	size_t		 n, rows_cap;
	struct row_page	*page;		/* what the shared rows borrow, or NULL */
	time_t		 at;		/* when this poll ended */
	time_t		 last_ok;	/* the last poll the scheduler answered (this
					 * one or earlier; 0: none yet): how stale
					 * the states shown are */
	int		 scheduler_ok;	/* squeue answered */
	int		 accounting_ok;	/* sacct answered, or was not needed */
	char		*problem;	/* why not ok, as a sentence, or NULL */
	size_t		 changes;	/* records that changed state: */
	struct state_change *events;	/* one each, in order */
	int		 waiting_for_accounting; /* a tracked job left the queue unseen */
	size_t		 finished_left;	/* taotop's finished jobs older than the
					 * page shown (tracker_set_page), not in rows */
	long		 engine_us;	/* this poll's time on the laptop: all but
					 * its command's round trip */
};

/* One cluster's poller. It remembers which jobs the queue listed last time,
 * so that accounting (sacct, the slow half: ~90 ms on the test cluster
 * against ~20 ms for squeue) is asked only about tracked jobs that left the
 * queue; the first poll asks about all of them. */
struct tracker;

struct tracker *tracker_new(const struct cluster_cfg *cl);
void tracker_free(struct tracker *t);

/* Also list accounting's finished jobs of the user's from the last
 * window_s seconds (0: none, the default), at most max of them: asked in
 * the first poll's command and then in one poll's command every every_s
 * seconds (never a command of its own). */
void tracker_set_history(struct tracker *t, long window_s, long every_s, unsigned max);

/* Show at most max_finished of taotop's finished records, the newest (0:
 * all, the default): with a year of records the monitor's list holds a
 * page of them, not every one, and grows it by a page when the user
 * scrolls past its end (watch_more_finished). Live records are always
 * shown. */
void tracker_set_page(struct tracker *t, size_t max_finished);
/* The page the monitor shows. */
#define TRACKER_PAGE	10000

/* The rows the records on disk give, from their index alone (no record
 * file is read, no command run): what the monitor shows before its link
 * is up. The user's other jobs are not in them; scheduler_ok is 0. */
void tracker_rows_from_disk(struct tracker *t, struct record_store *st, struct poll_result *out);

/* Poll once over c and update the records in st. -1 only when the command
 * could not run at all (connection); *err says why. A result with
 * waiting_for_accounting set wants another poll soon (a job just ended).
 * *out is overwritten; its rows array is the one tracker_reuse_rows gave,
 * when one was given. */
int tracker_poll(struct tracker *t, struct conn *c, struct record_store *st,
    struct poll_result *out, char **err);
void poll_result_free(struct poll_result *p);
/* Free all of p but its rows array, returned (NULL: none) with its
 * capacity in *cap; p is left empty. */
struct job_row *poll_result_take_rows(struct poll_result *p, size_t *cap);
/* The next poll's rows go into rows (cap of them; t owns it now): the
 * monitor's polls use two arrays of 10 000 rows in turn, where each
 * allocated one (megabytes, resident again each time) and freed the last. */
void tracker_reuse_rows(struct tracker *t, struct job_row *rows, size_t cap);

/* Cancel a job (a record id or a SLURM id) with scancel, then mark its
 * record Canceled (source: user). A job that had already ended counts as
 * cancelled. -1 with the scheduler's own message otherwise. *msg and *err
 * do not repeat the job: the caller shows them beside it. */
int tracker_cancel(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *job, char **msg, char **err);

/* A finished taotop job's efficiency card completed with accounting's
 * facts (engine/store/card.h; one remote command, once: the poll makes the
 * card from what it has, without one). r updated on disk and in memory. */
struct cluster_cfg;
struct job_record;
void tracker_card_complete(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r);

#endif

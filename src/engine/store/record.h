/*
 * Job records: what taotop knows of each job it submitted, one JSON file per
 * job under $XDG_STATE_HOME/taotop/jobs/ (the seed's tao_job_record.py, in C).
 * A record is opened (its id minted) before anything is launched, and keeps
 * the history of its state transitions. A record here is data and its JSON;
 * the folder of them, its lock and its atomic writes are the store's
 * (store.h).
 */
#ifndef TAOTOP_ENGINE_RECORD_H
#define TAOTOP_ENGINE_RECORD_H

#include <stddef.h>
#include <time.h>

#include "engine/slurm/state.h"
#include "engine/store/card.h"
#include "engine/store/series.h"

struct transition {
	time_t		 at;
	enum tao_state	 from, to;
	char		*native;	/* SLURM's state word then, or NULL */
	char		*message;	/* native sub-state, reason, or NULL */
	char		*source;	/* "scheduler", "user" or "taotop" */
};

/* TAO's progress as a job ended, read once from its status.json, so a
 * finished job keeps what it was (stored as an object in the record). */
struct record_progress {
	int	 epoch, max_epoch;	/* -1: not reported */
	char	 eta[32];
	char	 metric[32];		/* the series' KPI ("loss"), or "" */
	double	*series;		/* one value per epoch */
	size_t	 nseries;
};

/* What SLURM gave the job, as last seen when its state changed (stored as
 * the record's "allocation" object): a finished job keeps its partition,
 * size and times when the queue and accounting's recent window no longer
 * list it. */
struct record_alloc {
	char	 partition[64];	/* "" unknown */
	int	 nodes, gpus;	/* 0: unknown */
	long	 elapsed_s, limit_s;	/* -1: unknown (or UNLIMITED) */
	char	 exit_code[16];	/* accounting's, "" unknown */
};

/* A node a retry keeps away from (sbatch --exclude), with why: the line
 * that tied a failure to it, and the record whose failure that was. */
struct record_exclusion {
	char	*node;		/* a SLURM node name */
	char	*evidence;	/* "main.err: NVRM: Xid (...): 79, ..." */
	char	*from;		/* the record that failed there */
};

/* One segment of a run that requeues itself at its child timeout
 * (docs/segments.md): one SLURM start of the same job, as its batch script
 * told it (the segments file) and the poll saw it. */
struct record_segment {
	int	 n;		/* 1, 2, ... */
	time_t	 start, end;	/* 0: not (yet) known */
	char	 outcome[16];	/* "" running; requeued, done, failed, signalled,
				 * timeout, no_progress, limit, refused */
	char	*resumed_from;	/* the checkpoint it started from, or NULL */
	char	*checkpoint;	/* the newest one at its end, or NULL */
	char	*message;	/* why it stopped the run, or NULL */
	int	 epoch_start, epoch_end;	/* TAO's epochs then; -1 unknown */
};

struct job_record {
	char		*id;
	char		*name;		/* the run's own (the bundle's name:, --name),
					 * or NULL: none given */
	char		*platform;	/* "slurm" */
	char		*cluster;
	char		*image;
	char		*network_arch;
	char		*action;
	char		*storage_tier;	/* "A": Lustre */
	char		*results_dir;
	char		*log_dir;
	char		*backend_ref;	/* the SLURM job id, once launched */
	char		*retry_of;	/* the id this retries, or NULL */
	char		*retried_as;	/* the retry that followed this, or NULL */
	/* Whose failure an Error was, as the skill bank's job record names
	 * it: RECORD_ERR_INFRA (the cluster's: retriable) or
	 * RECORD_ERR_PROGRAM (never retried), NULL: not classified (not an
	 * Error, or one no rule judged: a wall-time end). Set once. */
	char		*err_class;
	char		*secrets;	/* names of the secrets its sidecar held,
					 * comma-separated (a retry writes it again) */
	char		*bundle;	/* the bundle's local path (a retry reads the
					 * .env beside it again), or NULL */
	char		*tao_results_dir; /* the spec's <action>.results_dir, where
					 * TAO then writes, or NULL */
	char		*resume_dir;	/* a retry's: the folder of the run it retries
					 * that it resumes from, or NULL */
	char		*resume_checkpoint; /* a retry's: the checkpoint chosen there
					 * when it was opened, or NULL: none */
	char		*spec;		/* the TAO spec it staged (specs/spec.yaml),
					 * byte for byte: runs compared are told
					 * apart by it (specdiff.h); NULL: an older
					 * record, or one over RECORD_SPEC_MAX */
	/* A Cosmos job's backend, "rl" or "framework" (engine/submit/cosmos.h),
	 * NULL for any other; Cosmos-RL's roles, space-separated
	 * ("controller policy-0 policy-1"), each logging to
	 * <log_dir>/<id>-<SLURM id>/<role>.out. */
	char		*cosmos;
	char		*roles;
	char		*status_path;	/* where TAO's status file was found, or
					 * NULL: not yet (engine/track/taostatus.h) */
	/* The bundle's structured status file (execution.completion) and the
	 * states in it that mean success, joined by newlines: when set, the
	 * job's end is judged from it (engine/track/structured.h), not from
	 * TAO's status file. NULL: TAO's rules. */
	char		*done_status_path;
	char		*success_states;
	/* TAO's final line, seen while SLURM still ran the job (it shows as
	 * Ending; after the cluster's ending_grace_seconds taotop cancels it
	 * and records this verdict): TAO_UNKNOWN when none. */
	enum tao_state	 tao_final;
	char		*tao_final_message;
	time_t		 tao_final_at;	/* when taotop first saw it */
	enum tao_state	 state;
	char		*native;	/* last native state word */
	struct record_progress *progress;	/* NULL until the job ended */
	struct series_set curves;	/* every metric TAO reported, read as the
					 * job ended (series.h); none: n 0 */
	struct record_alloc alloc;
	int		 has_alloc;	/* alloc was written */
	/* taotop's samples of its GPUs while it ran (every sampling round,
	 * the monitor's or `status`'s, folded in), and its efficiency card,
	 * made once as it ended (card.h). */
	struct card_samples samples;
	struct card	 card;
	int		 has_card;
	long		 child_timeout_s;	/* its step's child timeout, 0 unknown */
	struct record_segment *seg;	/* the run's segments, in order */
	size_t		 nseg;
	time_t		 created, updated;
	struct transition *hist;
	size_t		 nhist;
	struct record_exclusion *exclude;	/* the nodes its sbatch excluded */
	size_t		 nexclude;
};

#define RECORD_SPEC_MAX	(64u << 10)

struct job_record *record_new(const char *id);
/* Whether id may name a record (it names its file): letters, digits, '-',
 * '_', '.', no leading dot, at most 128 bytes. */
int record_id_ok(const char *id);
void record_free(struct job_record *r);
/* Set a string field, copying value (NULL clears it). */
void record_set(char **field, const char *value);
/* Set r's progress to a copy of p (NULL clears it). */
void record_set_progress(struct job_record *r, const struct record_progress *p);
/* Set r's curves to a copy of c (NULL clears them). */
void record_set_curves(struct job_record *r, const struct series_set *c);

/* Move r to state `to` (with SLURM's native word and a message) and append
 * a transition when either changed. Returns 1 when r changed. A final
 * record (Done, Error, Canceled) never changes state: a transition to
 * another state is refused (0, nothing written); its native word may still
 * be refined (accounting's final word after a cancel). */
int record_transition(struct job_record *r, enum tao_state to, const char *native,
    const char *message, const char *source, time_t at);

#define RECORD_ERR_INFRA	"ERR_INFRA"
#define RECORD_ERR_PROGRAM	"ERR_PROGRAM"
/* Set r's err_class to cls (one of the two) when it has none: a final
 * record may gain its classification later, never change it. Returns 1
 * when it was set. */
int record_set_err_class(struct job_record *r, const char *cls);

/* Add a node to r's exclusions (once: a node already there keeps its first
 * evidence). Returns 1 when it was added. */
int record_exclude(struct job_record *r, const char *node, const char *evidence,
    const char *from);
/* r's excluded nodes, comma-separated (sbatch --exclude's form), or NULL
 * when none (caller frees). */
char *record_exclude_list(const struct job_record *r);

/* Append an entry whatever the state (from == to): for moments of taotop's
 * own, such as "opened" and "submitted as SLURM job N". */
void record_event(struct job_record *r, const char *message, const char *source, time_t at);

/* Segment n of r, added (its fields unknown) when it is not there yet. */
struct record_segment *record_segment_at(struct job_record *r, int n);
/* Whether r's last segment ended "requeued": its child timeout requeued
 * the job and the next segment waits (while r is Pending) or runs. The one
 * place "requeued" is decided (the index's column, the rows' "Requeued",
 * the tracker's news). */
int record_requeued(const struct job_record *r);

/* JSON, as stored. record_from_json fills *err with what is wrong. */
char *record_to_json(const struct job_record *r);
/* The "progress" object added to o, as records and `--json` rows write it. */
struct cJSON;
void record_progress_json(struct cJSON *o, const struct record_progress *p);
struct job_record *record_from_json(const char *json, char **err);

#endif

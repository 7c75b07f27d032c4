/*
 * Job records: what taotop knows of each job it submitted, one JSON file per
 * job under $XDG_STATE_HOME/taotop/jobs/ (the seed's tao_job_record.py, in C).
 * A record is opened (its id minted) before anything is launched, and keeps
 * the history of its state transitions.
 *
 * Every change is a read-modify-write under a lock (fcntl across processes,
 * a mutex across threads) written atomically (temp file, fsync, rename,
 * fsync of the folder): two processes updating one record lose nothing, and a
 * crash at any moment leaves the old record or the new one. A record that
 * does not parse is reported with its path and never overwritten.
 */
#ifndef TAOTOP_ENGINE_RECORD_H
#define TAOTOP_ENGINE_RECORD_H

#include <stddef.h>
#include <time.h>

#include "engine/slurm/state.h"

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

struct job_record {
	char		*id;
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
	char		*secrets;	/* names of the secrets its sidecar held,
					 * comma-separated (a retry writes it again) */
	char		*bundle;	/* the bundle's local path (a retry reads the
					 * .env beside it again), or NULL */
	enum tao_state	 state;
	char		*native;	/* last native state word */
	struct record_progress *progress;	/* NULL until the job ended */
	struct record_alloc alloc;
	int		 has_alloc;	/* alloc was written */
	time_t		 created, updated;
	struct transition *hist;
	size_t		 nhist;
};

struct job_record *record_new(const char *id);
/* Whether id may name a record (it names its file): letters, digits, '-',
 * '_', '.', no leading dot, at most 128 bytes. */
int record_id_ok(const char *id);
void record_free(struct job_record *r);
/* Set a string field, copying value (NULL clears it). */
void record_set(char **field, const char *value);
/* Set r's progress to a copy of p (NULL clears it). */
void record_set_progress(struct job_record *r, const struct record_progress *p);

/* Move r to state `to` (with SLURM's native word and a message) and append
 * a transition when either changed. Returns 1 when r changed. */
int record_transition(struct job_record *r, enum tao_state to, const char *native,
    const char *message, const char *source, time_t at);

/* Append an entry whatever the state (from == to): for moments of taotop's
 * own, such as "opened" and "submitted as SLURM job N". */
void record_event(struct job_record *r, const char *message, const char *source, time_t at);

/* JSON, as stored. record_from_json fills *err with what is wrong. */
char *record_to_json(const struct job_record *r);
/* The "progress" object added to o, as records and `--json` rows write it. */
struct cJSON;
void record_progress_json(struct cJSON *o, const struct record_progress *p);
struct job_record *record_from_json(const char *json, char **err);

struct record_store;

/* Open (creating it 0700) the folder; NULL: $XDG_STATE_HOME/taotop/jobs,
 * else ~/.local/state/taotop/jobs. */
struct record_store *store_open(const char *dir, char **err);
void store_close(struct record_store *s);
const char *store_dir(const struct record_store *s);

/* A new id, unique in the store: "tao-YYYYMMDD-xxxxxx". */
char *store_mint_id(struct record_store *s);
/* Write a new record; fails if one with its id exists. */
int store_create(struct record_store *s, const struct job_record *r, char **err);
/* Remove a record: one opened for a submit that then never reached the
 * cluster (its checks stopped it before anything was written). */
int store_remove(struct record_store *s, const char *id, char **err);
/* Load one record. -1 with a sentence naming the file when it is missing
 * or does not parse. */
int store_load(struct record_store *s, const char *id, struct job_record **out, char **err);

/* Change a record: fn gets the current one under the lock and returns 1 to
 * write it back, 0 to leave it, -1 to fail (with *err set by fn). */
typedef int record_update_fn(struct job_record *r, void *arg, char **err);
int store_update(struct record_store *s, const char *id, record_update_fn *fn, void *arg,
    char **err);

/* Every record, oldest first. Files that do not parse are skipped, each
 * reported in *warnings (a "\n"-separated list the caller frees, or NULL). */
int store_list(struct record_store *s, struct job_record ***out, size_t *n, char **warnings);
void store_list_free(struct job_record **list, size_t n);

/* Test hook: stop after writing the temp file, before the rename (as a
 * crash there would); store_update then fails. */
void store_test_fail_before_rename(struct record_store *s, int on);

#endif

/*
 * Are the GPUs working? Live use of running jobs, gathered on the jobs' own
 * nodes: one remote command per sampling round for every job watched, which
 * runs, for each job at once, `srun --overlap --jobid=ID` with nvidia-smi's
 * CSV query and the node's load and the user's resident memory, and prints
 * the answers after all have come (a job's lines never mix with another's).
 *
 * Then, per job, across rounds: a short history of GPU use (the detail
 * view's sparkline), and two flags raised once each: GPUs idle (every GPU
 * below a threshold for a while: a stalled data loader, a hung collective,
 * what a site's idle reaper kills) and progress stopped (TAO's epoch
 * unchanged for a while as the job runs).
 *
 * A cluster where this cannot work (srun without --overlap, no nvidia-smi
 * on the nodes) is told apart from a job that could not be sampled this
 * time (it just ended, a timeout): the round says "unavailable", with why.
 */
#ifndef TAOTOP_ENGINE_USAGE_H
#define TAOTOP_ENGINE_USAGE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>


struct conn;
struct record_store;

#define USE_MAX_GPUS	16	/* per job shown (8 per node, two nodes) */
#define USE_HIST	60	/* rounds kept for the sparkline */
#define USE_STEP_TIMEOUT_S 20	/* one job's srun, at most */
#define USE_UNKNOWN	(-1)	/* a reading nvidia-smi cannot give */

struct gpu_reading {
	char	node[32];
	int	index;
	int	util;		/* %; USE_UNKNOWN: nvidia-smi said "[N/A]" or
				 * "[Not Supported]" (a MIG-enabled GPU's
				 * utilization, a vGPU's memory) */
	int	mem_used, mem_total;	/* MiB; USE_UNKNOWN as util */
};

/* A job's use as the latest round saw it, with its history and flags. Plain
 * data: copied whole to the UI. */
struct job_use {
	char		 slurm_id[32];
	int		 ok;		/* sampled this round */
	char		 error[160];	/* why not (raw remote text: sanitise) */
	int		 ngpu;
	struct gpu_reading gpu[USE_MAX_GPUS];
	double		 load;		/* the first node's 1-minute load */
	long		 rss_kib;	/* the user's resident memory on its nodes */
	time_t		 at;
	unsigned char	 hist[USE_HIST];	/* mean GPU %, oldest first */
	size_t		 nhist;
	int		 idle;		/* every GPU below the threshold for idle_s */
	int		 stalled;	/* the epoch has not moved for stall_s */
	long		 idle_for_s, stalled_for_s;
};

/* What to sample: a running job (its SLURM id, digits only), its node
 * count, its record (NULL: not taotop's) and TAO's epoch now (-1: none). */
struct use_job {
	const char	*slurm_id;
	const char	*record_id;
	int		 nodes;
	int		 epoch;
};

struct use_limits {
	int	idle_percent;	/* below this on every GPU counts as idle: 5 */
	int	idle_s;		/* for this long: flagged (600) */
	int	stall_s;	/* the epoch unchanged this long: flagged (1800) */
};

/* A flag raised this round, for the record's history and a notification. */
struct use_event {
	char	 slurm_id[32];
	char	*record_id;	/* NULL: not taotop's */
	char	*text;		/* "GPUs idle: below 5 % for 10 min" */
};

/* One round's parsed answer. */
struct use_round {
	struct job_use	*jobs;
	size_t		 n;
	char		*unavailable;	/* the cluster cannot do this, or NULL */
};

/* The remote command for n jobs (ids pass use_id_ok; nonce from
 * slurm_nonce). Caller frees. */
char *use_command(const struct use_job *jobs, size_t n, const char *nonce);
/* The monitor's form: the answer the round started last time left, then
 * this round started in the background on the login node, so the command returns at once and the
 * worker's next request (a poll) never waits for the jobs' nodes. key
 * names the files it keeps there (hex). Caller frees. */
char *use_command_behind(const struct use_job *jobs, size_t n, const char *nonce, const char *key);
/* Only plain job ids (no array or het suffix) are sampled. */
int use_id_ok(const char *id);
/* Parse what use_command printed: one entry per job asked for, in order. */
void use_parse(const char *out, const char *nonce, const struct use_job *jobs, size_t n,
    struct use_round *r);
void use_round_free(struct use_round *r);

/* A cluster's history of use, kept across rounds by whoever samples. */
struct use_tracker;
struct use_tracker *use_tracker_new(void);
void use_tracker_free(struct use_tracker *t);

/* Fold a round into the history at now_ms (monotonic) and work out the
 * flags; jobs not in the round are forgotten. Flags raised now come back
 * in *ev (caller frees with use_events_free); *out gets every job's use
 * (caller frees the array). */
void use_tracker_fold(struct use_tracker *t, const struct use_round *r,
    const struct use_job *jobs, size_t n, const struct use_limits *lim, int64_t now_ms,
    struct job_use **out, size_t *nout, struct use_event **ev, size_t *nev);
void use_events_free(struct use_event *ev, size_t n);

/* One round over c: run use_command, parse it. -1 only when the command
 * could not run (the connection): *err. */
int use_sample(struct conn *c, const struct use_job *jobs, size_t n, struct use_round *r,
    char **err);
/* The monitor's round over c (use_command_behind): *have is 1 when the
 * previous round's answer came back, in r (the first round has none; its
 * answer comes with the next). -1 only when the command could not run. */
int use_sample_behind(struct conn *c, struct use_tracker *t, const struct use_job *jobs, size_t n,
    struct use_round *r, int *have, char **err);
/* Fold each of taotop's jobs' readings in use into its record's samples
 * (engine/store/card.h), for the efficiency card at its end: every round
 * that read its GPUs, the monitor's or `status`'s. idle_pct: the cluster's
 * idle threshold. */
void use_fold_records(struct record_store *st, const struct job_use *use, size_t nuse,
    const struct use_job *jobs, size_t njobs, int idle_pct);
/* Note the flags raised in their records' history (source "taotop"). */
void use_note_events(struct record_store *st, const struct use_event *ev, size_t n);

/* The mean GPU % of a use (0 with no GPU; USE_UNKNOWN when nvidia-smi could
 * read none of its GPUs: the mean is of those it could), and a
 * "58.1/79.6G" of its memory (the largest GPU's; n/a for what it could
 * not read). */
int use_mean_util(const struct job_use *u);
void use_mem_text(const struct job_use *u, char *buf, size_t len);

#endif

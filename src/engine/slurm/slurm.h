/*
 * Talking SLURM: the one command a status poll runs on the login host, and
 * the parser of what it prints. One command per poll, whatever the number of
 * jobs: squeue for the user's live jobs (their own only), then sacct -X -P,
 * batched by id, for the tracked jobs that left the queue. Every field ends
 * with a delimiter made of the ASCII unit separator and a nonce fresh for
 * each poll, and the section marks carry the nonce too: a job's name,
 * whatever it holds ('|', spaces, US bytes, newlines), can neither move a
 * field nor forge a row or a mark.
 *
 * Now and then (the monitor's start, then every few minutes; `taotop jobs
 * --since`) the same command also asks accounting for the user's jobs of a
 * recent window: history that outlives the queue and a restart, at no
 * extra round trip.
 *
 * The parser is defensive: blank lines, garbage and truncated output are
 * counted and skipped, never fatal.
 */
#ifndef TAOTOP_ENGINE_SLURM_H
#define TAOTOP_ENGINE_SLURM_H

#include <stddef.h>

struct slurm_job {
	char	 id[32];	/* this job's own id (an array task has its own) */
	char	 shown_id[48];	/* as SLURM shows it: "123", "120_3" */
	char	 array_job[32];	/* "120" for a task of array 120, else "" */
	char	 array_task[16];/* "3", else "" */
	char	*name;
	char	*state;		/* as printed: "CANCELLED by 1001" */
	char	*reason;	/* pending reason, or "" */
	char	*partition;
	int	 nodes;
	int	 gpus;		/* total GPUs from squeue's gres; 0 if none or from sacct */
	int	 gpus_known;	/* gpus is what SLURM said (squeue; history's AllocTRES) */
	char	 elapsed[24];	/* in duration_format's one format: "00:03:04" */
	char	 limit[24];	/* the same, or SLURM's word: "UNLIMITED" */
	long	 elapsed_s, limit_s;	/* -1: not a duration */
	char	 exit_code[16];	/* sacct only: "0:0" */
	int	 from_sacct;	/* 0: squeue (live), 1: sacct (accounting) */
	int	 from_history;	/* 1: from the history window's sacct */
};

/* The history window: the user's jobs accounting knows of, since `since_s`
 * seconds ago, the newest `max` lines of sacct's answer at most. */
struct slurm_history {
	long		since_s;
	unsigned	max;
};

struct slurm_poll {
	struct slurm_job *jobs;
	size_t		  n;
	int		  squeue_rc;	/* -1: its answer is missing */
	int		  sacct_rc;	/* -1: missing; 0 also when not asked */
	int		  history_rc;	/* -1: missing or not asked */
	char		 *squeue_err;	/* what it said on stderr, or NULL */
	size_t		  skipped;	/* lines that did not parse */
};

#define SLURM_NONCE_LEN	16

/* A fresh nonce: SLURM_NONCE_LEN hex digits. */
void slurm_nonce(char out[SLURM_NONCE_LEN + 1]);
int slurm_nonce_ok(const char *nonce);

/* The poll command: squeue for the user's live jobs and, when `n` > 0,
 * sacct for these ids, and, when hist is not NULL, sacct for the user's
 * jobs of its window. The ids must be SLURM job ids (digits, '_'); ids
 * that are not are left out. nonce: from slurm_nonce. */
char *slurm_poll_command(const char *const *ids, size_t n, const struct slurm_history *hist,
    const char *nonce);

/* Parse the poll command's stdout (and stderr, for the messages), made
 * with the same nonce. */
void slurm_poll_parse(const char *out, const char *err, const char *nonce, struct slurm_poll *p);
void slurm_poll_free(struct slurm_poll *p);
/* The live (squeue) entry for id, else the sacct one, else NULL. */
const struct slurm_job *slurm_poll_find(const struct slurm_poll *p, const char *id);

/* Whether `have`, one partition, is already more than `said` tells: a job
 * submitted to a list (a,b) shows the list until it starts, and accounting
 * may show it again for a while after a short job ended; the partition it
 * ran on, once seen, is kept over a list that names it. */
int slurm_partition_keep(const char *have, const char *said);

/* GPUs in a gres or TRES string: "gres:gpu:4", "gres/gpu=8,...", "gpu:a100:2"
 * per node times nodes where SLURM prints per-node counts. */
int slurm_count_gpus(const char *s, int nodes, int per_node);

/* What SLURM's filename patterns (sbatch --output) stand for. */
struct slurm_pattern_vars {
	const char	*job_id;	/* %j: the job's own id (an array task's own) */
	const char	*array_job;	/* %A: the array's id, else the job id */
	const char	*array_task;	/* %a: the task id, else "4294967294" */
	const char	*name;		/* %x */
	const char	*user;		/* %u */
	const char	*node;		/* %N: the first node, "" while pending */
};

/* Expand %% %A %a %j %J %N %n %s %t %u %x, with an optional zero-padding
 * width (%4a), as slurmd does for sbatch's --output and --error. The
 * caller frees the result. */
char *slurm_expand_pattern(const char *pattern, const struct slurm_pattern_vars *v);

/* Where a job's output goes, from squeue (live jobs and those that ended
 * within MinJobAge): the patterns as given to sbatch, and what they stand
 * for. Read field by field, never by searching a line a job's name is in. */
struct slurm_paths {
	char	*job_id, *array_job, *array_task, *user, *node;	/* "" if none */
	char	*out, *err;	/* patterns for slurm_expand_pattern */
	char	*name;
};

/* The command (id must pass slurm_id_ok, nonce slurm_nonce_ok). */
char *slurm_paths_command(const char *id, const char *nonce);
/* Its output's first job. 0, or -1 when there is none. */
int slurm_paths_parse(const char *out, const char *nonce, struct slurm_paths *p);
void slurm_paths_free(struct slurm_paths *p);

/* 1 when s is one SLURM name as SLURM prints one and an #SBATCH value or a
 * node list may hold it: letters, digits, _ . and -, not starting with -
 * (it would read as an option), at most SLURM_NAME_MAX characters. */
#define SLURM_NAME_MAX	64
int slurm_name_ok(const char *s);
/* 0 when value passes slurm_name_ok; else -1 with *err naming field,
 * value and from. */
int slurm_name_check(const char *field, const char *value, const char *from, char **err);

/* A SLURM job id as typed: digits, optionally "_" and digits. */
int slurm_id_ok(const char *id);

#endif

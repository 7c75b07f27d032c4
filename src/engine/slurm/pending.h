/*
 * Why a pending job waits, in words: SLURM's one-word reason explained
 * (Priority, Resources, the QOS and association limits, ReqNodeNotAvail,
 * Dependency, BeginTime, held...), the scheduler's start estimate
 * (`squeue --start`), the job's priority factors (`sprio`) and the user's
 * fair-share (`sshare`), and what the user could change.
 *
 * One command asks all of it, on demand only: `squeue --start` makes the
 * controller run a backfill simulation for the job, not something a poll
 * every few seconds should cause. Pure functions: the command, its parser
 * and the lines shown (sanitised: everything here came from the cluster).
 */
#ifndef TAOTOP_ENGINE_PENDING_H
#define TAOTOP_ENGINE_PENDING_H

#include <stddef.h>

struct pending_why {
	char	*state;		/* squeue's (PENDING; else it no longer waits), "" */
	char	*reason;	/* SLURM's reason code: "Resources", "" none */
	char	*partition;	/* the partitions asked */
	char	*time_limit;	/* "4:00:00" */
	char	*nodes, *cpus, *tres;	/* as asked ("1", "16", "gres/gpu:8") */
	char	*submitted;	/* "2026-12-05T07:30:00" */
	char	*job_account;	/* the account it charges */
	char	*start;		/* the estimate, "" none (N/A) */
	char	*sched_nodes;	/* the nodes it is planned on, "" none */
	/* sprio's weighted factors, "" each when none; priority_error: why
	 * there are none (priority/basic: first come, first served). */
	char	*priority, *age, *fairshare, *jobsize, *part_factor, *qos, *nice;
	char	*priority_error;
	/* sshare's line for the user: account, usage and fair-share factor;
	 * share_error when it gave none. */
	char	*account, *norm_shares, *eff_usage, *fs_factor;
	char	*share_error;
};

/* The command for job id (it must pass slurm_id_ok, nonce slurm_nonce_ok). */
char *pending_command(const char *id, const char *nonce);
/* Its output read into *w (every field set, "" when not given). 0, or -1
 * when the output is not this command's (its markers missing). */
int pending_parse(const char *out, const char *nonce, struct pending_why *w);
void pending_free(struct pending_why *w);

/* SLURM's reason code in words, and what the user could do about it
 * (NULL: nothing to change, it will start by itself); never NULL words.
 * A reason with a node list after it ("ReqNodeNotAvail, UnavailableNodes:
 * node03") reads by its first word. */
const char *pending_reason_words(const char *reason, const char **advice);

/* The explanation as lines for a terminal (sanitised, caller frees each
 * and the array); now: the time the estimate is counted from. */
size_t pending_lines(const struct pending_why *w, long now, char ***out);

#endif

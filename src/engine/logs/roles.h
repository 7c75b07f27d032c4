/*
 * A Cosmos-RL job's roles (engine/submit/cosmos.h): the controller, each
 * policy and rollout replica, each its own srun step with its own log,
 * <log_dir>/<id>-<SLURM id>/<role>.out, and, once it has ended, its exit
 * code beside it in <role>.rc (the sbatch's task wrapper writes it).
 */
#ifndef TAOTOP_ENGINE_ROLES_H
#define TAOTOP_ENGINE_ROLES_H

#include <stddef.h>

#include "engine/slurm/state.h"

struct conn;
struct job_record;
struct record_store;

struct role_state {
	char	 name[32];	/* "controller", "policy-1" */
	char	*log;		/* its log on the cluster, NULL before the launch */
	/* "pending", "running", "done" (exit 0), "failed" (rc), "stopped"
	 * (the job ended first: stopped by the script or SLURM). */
	char	 state[16];
	int	 rc;		/* its exit code, -1 unknown */
};

/* Whether r has the role name. */
int roles_has(const struct job_record *r, const char *name);

/* The roles of r as far as the record says (no state read): *n of them,
 * state "pending" before the launch, else "running" or "stopped" by the
 * record's state. 0 roles for a job without any. Caller frees with
 * roles_free. */
size_t roles_of(const struct job_record *r, struct role_state **out);

/* The same, each ended role's exit code read from the cluster (one
 * command). -1 with *err when the cluster did not answer. */
int roles_read(struct conn *c, const struct job_record *r, struct role_state **out,
    size_t *n, char **err);
void roles_free(struct role_state *v, size_t n);

/* `taotop logs JOB --role NAME`: the role's log, from job's record. -1
 * with a sentence in *err (not taotop's, no such role: the roles it has). */
int roles_log_path(struct record_store *st, const char *job, const char *role, char **path,
    char **err);

#endif

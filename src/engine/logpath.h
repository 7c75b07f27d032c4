/*
 * Where a job's main.out and main.err are on the cluster: from its record
 * for taotop's jobs, from `scontrol show job` for the user's other jobs
 * (SLURM's filename patterns expanded by taotop: scontrol leaves "%%"
 * doubled and a pending job's %N empty).
 */
#ifndef TAOTOP_ENGINE_LOGPATH_H
#define TAOTOP_ENGINE_LOGPATH_H

struct conn;
struct record_store;

/* job: a record id or a SLURM id. 0 with *path (caller frees); -1 with a
 * sentence in *err (not launched yet, unknown to SLURM, ...). */
int job_log_path(struct conn *c, struct record_store *st, const char *job, int want_err,
    char **path, char **err);

#endif

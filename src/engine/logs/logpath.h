/*
 * Where a job's main.out and main.err are on the cluster: from its record
 * for taotop's jobs, from squeue's fields for the user's other jobs
 * (SLURM's filename patterns, as squeue gives them, expanded by taotop;
 * a pending job's %N is empty).
 */
#ifndef TAOTOP_ENGINE_LOGPATH_H
#define TAOTOP_ENGINE_LOGPATH_H

struct conn;
struct job_record;
struct record_store;

/* The file `name` (main.out, main.err, segments.jsonl) of taotop's job r on
 * the cluster: <log_dir>/<id>-<SLURM id>/<name>, the folder its sbatch
 * writes; NULL before it was launched, or with no log folder. Caller
 * frees. */
char *job_log_file(const struct job_record *r, const char *name);

/* job: a record id or a SLURM id. 0 with *path (caller frees); -1 with a
 * sentence in *err (not launched yet, unknown to SLURM, ...). */
int job_log_path(struct conn *c, struct record_store *st, const char *job, int want_err,
    char **path, char **err);
/* Both: paths[0] main.out, paths[1] main.err (one remote command at most);
 * one SLURM reports none for is NULL. */
int job_log_paths(struct conn *c, struct record_store *st, const char *job, char *paths[2],
    char **err);

#endif

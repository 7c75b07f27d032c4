/*
 * A job's secrets (HF_TOKEN and the like): their values and the sidecar
 * that carries them to the job.
 *
 * Values come, for each name a bundle lists, from what the user typed (the
 * wizard), else the environment, else a .env file beside the bundle, else
 * .env in the current folder: the same sources for a first submit and for
 * an automatic retry. They travel only into the sidecar,
 * <job_dir>/job_<first id>.env, written 0600 from its first byte.
 *
 * The sidecar lives exactly as long as its job: written just before sbatch,
 * removed by taotop when the submit fails after that, when a job is
 * cancelled, and when taotop's poll sees the job final (before any retry
 * writes it again); the job itself shreds it when it ends on its own, and
 * keeps it when SLURM signals it (a requeue or preemption runs it again).
 */
#ifndef TAOTOP_ENGINE_SECRETS_H
#define TAOTOP_ENGINE_SECRETS_H

#include <stddef.h>

struct buf;
struct conn;
struct spec_kv;
struct job_record;

/* Core dumps off (and no ptrace by others of the same user) for the rest
 * of the process: called before any secret is read or typed. */
void secrets_hold(void);
/* A secret's name: a shell variable name. */
int secrets_name_ok(const char *name);

/* name's value (caller wipes and frees), or NULL when no source has it;
 * where it came from in *from when from is not NULL (caller frees):
 * "typed in", "your environment", or the .env file's path. */
char *secrets_value_from(const char *name, const struct spec_kv *typed, size_t ntyped,
    const char *bundle_path, char **from);

/* The sidecar's text for names (comma-separated): "export NAME='value'"
 * lines, appended to out. -1 with *err naming the first missing secret
 * (and where it was looked for); out is wiped then. */
int secrets_sidecar_text(const char *names, const struct spec_kv *typed, size_t ntyped,
    const char *bundle_path, struct buf *out, char **err);

/* The same, with "NAME from SOURCE" for each, comma-separated, appended
 * to from (the sources as secrets_value_from says them; no value). */
int secrets_sidecar_text_from(const char *names, const struct spec_kv *typed, size_t ntyped,
    const char *bundle_path, struct buf *out, struct buf *from, char **err);

/* Wipe and free a sidecar's text. */
void secrets_wipe(struct buf *text);

/* Where a job folder's sidecar is (caller frees). */
char *secrets_sidecar_path(const char *job_dir, const char *first_id);
/* The sidecar of a record's job, or NULL when it has no secrets or was
 * never staged (caller frees). */
char *secrets_sidecar_of(const struct job_record *r);

/* Remove a record's sidecar if it has one; a file already gone is fine.
 * 0, or -1 with *err. */
int secrets_remove_sidecar(struct conn *c, const struct job_record *r, char **err);

#endif

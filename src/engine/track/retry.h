/*
 * Retries (the seed's "Multi-node and retries"): a taotop job that failed
 * because of the cluster (engine/track/classify.h decides, from its native state,
 * exit code and log tails) is submitted again as a new record whose
 * retry_of names it, running the sbatch already staged for the first job of
 * the chain: nothing is staged again, no image converted again. Only the
 * secrets' sidecar, which the first run shredded, is written again (from
 * the environment). Its logs go to a folder of its own (%x-%j: the new
 * record's name), its results too (<root>/<its id>/results, as a new
 * submit's: the failed run's files stay as they were), and its first
 * segment resumes from the newest usable checkpoint of the run it retries
 * (or of the one before it, down the chain), chosen by the segments'
 * rule (docs/segments.md); the record says which, or that it starts from
 * the start. A failure of the node the job ran on excludes that node
 * from the retry (and the chain's later retries). The cluster's retry
 * budget (10 by default, as NVIDIA's references) bounds a chain; a
 * failure of the program itself is surfaced at once and never uses the
 * budget. Every verdict and retry is written in the records'
 * history, so the chain can be read from either end.
 */
#ifndef TAOTOP_ENGINE_RETRY_H
#define TAOTOP_ENGINE_RETRY_H

struct conn;
struct record_store;
struct cluster_cfg;

/* Retry record `id` now (an operator's `taotop retry`, or the automatic
 * retry below): 0 with *new_id and *slurm_id (caller frees); -1 with *err
 * (still running, already retried, succeeded and not done_too, its staged
 * sbatch gone, a secret not in the environment, sbatch refused). `why`
 * goes into both histories; a job that succeeded keeps its verdict first
 * in its note. */
int retry_job(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *why, int done_too, char **new_id, char **slurm_id, char **err);

/* The run of `id`, whose requeue SLURM refused, going on as a new linked
 * record: retry_job, but in the same results folder (one run, its
 * segments counted on). */
int retry_continue_run(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *why, char **new_id, char **slurm_id, char **err);

/* A line in id's history that judges its failure, with the record's
 * err_class (RECORD_ERR_INFRA or _PROGRAM) set when it has none. */
void retry_note_judged(struct record_store *st, const char *id, const char *err_class,
    const char *message);

/* After record `id` ended in Error with SLURM state `native` (FAILED,
 * NODE_FAIL, ...) and exit code: classify, note the verdict (and the err_class), and retry an
 * infrastructure failure within the budget. Returns 1 when a retry was
 * submitted (*new_id set), 0 when none was due, -1 when one was due but
 * failed (*err, also in the history). */
int retry_after_failure(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *native, const char *exit_code, char **new_id, char **err);

#endif

/*
 * What a user may do to a job besides cancelling it, as the scheduler's own
 * commands: requeue, hold, release, send a signal (to the batch shell and
 * every step: `scancel --signal=SIG --full`), change the time limit
 * (`scontrol update`). Each returns the scheduler's answer as a sentence.
 * The job is a record id (its SLURM job is used) or a SLURM id; every word
 * that reaches the shell is checked and quoted.
 */
#ifndef TAOTOP_ENGINE_ACTIONS_H
#define TAOTOP_ENGINE_ACTIONS_H

#include <stddef.h>

struct conn;
struct record_store;

enum job_action { ACTION_REQUEUE, ACTION_HOLD, ACTION_RELEASE, ACTION_SIGNAL, ACTION_TIME_LIMIT };

/* "requeue", "hold", ... */
const char *job_action_name(enum job_action a);
/* The signals the picker offers, NULL-terminated. */
extern const char *const job_signals[];
/* A time limit as typed ("90", "2:00:00", "1-00:00:00") in SLURM's form;
 * -1 with *err saying what is wrong. */
int job_time_limit_parse(const char *text, char *out, unsigned size, char **err);

/* arg: the signal name for ACTION_SIGNAL, the time limit for
 * ACTION_TIME_LIMIT, else NULL. 0 with *answer, -1 with *err (both the
 * scheduler's words where it gave some). */
int job_action_run(struct conn *c, struct record_store *st, const char *job, enum job_action a,
    const char *arg, char **answer, char **err);

/* Why a pending job waits (engine/slurm/pending.h): SLURM's reason in
 * words, the start estimate, the priority factors, the user's fair-share
 * and what to change, as lines for a terminal (sanitised; caller frees
 * each and the array). One remote command, asked only on demand: it makes
 * the controller simulate the job's start. 0, or -1 with *err. */
#include <stddef.h>
int job_explain_pending(struct conn *c, struct record_store *st, const char *job, char ***lines,
    size_t *n, char **err);

/* A finished job's efficiency card (engine/store/card.h) from accounting
 * alone, for a job of the user's that is not taotop's (taotop's keep
 * theirs): "Efficiency:" and its lines (caller frees each and the array).
 * One remote command. 0, or -1 with *err. */
int job_card_lines(struct conn *c, const char *slurm_id, int idle_pct, char ***lines, size_t *n,
    char **err);

#endif

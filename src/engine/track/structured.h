/*
 * A bundle's structured status file (execution.completion's
 * structured_status_path): the job's end is judged from its last state
 * instead of TAO's status.json rules when the bundle names one. Read as
 * the skill bank's own platform reads it (tao-finetune-cosmos-reason
 * scripts/cosmos_workflow.py): the whole file as JSON (a list of records,
 * an object with a "records" list, or one record), else one JSON record
 * a line; the last record's "status", in upper case.
 */
#ifndef TAOTOP_ENGINE_STRUCTURED_H
#define TAOTOP_ENGINE_STRUCTURED_H

#include <stddef.h>

/* The last record's status into out (size bytes, upper case): 0; -1 with
 * *why (caller frees) when the text holds no record with a status. */
int structured_last_state(const char *text, size_t len, char *out, size_t size, char **why);

/* Whether state is one of the states, a list joined by newlines. */
int structured_state_in(const char *state, const char *states);

#endif

/*
 * A record in the skill bank's job-record form (NVIDIA-TAO/tao-skill-bank
 * skills/core/tao-artifacts/references/job_record.schema.json, written by
 * its scripts/tao_job_record.py), so the bank's tools and scripts written
 * for them read taotop's jobs: schema_version 1, its state names
 * (PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN), terminal_state,
 * err_class, retry_of and the append-only transitions, nothing more (its
 * objects take no other field).
 *
 * taotop's own record stays its format (record.h); this is a view of it.
 * The history's sources map to the bank's: the scheduler's answers are the
 * "poller"'s, taotop's and the user's own acts the "agent"'s. A
 * transition's message is SLURM's native word and taotop's message
 * ("PENDING: Resources"), as the bank puts sub-states there.
 */
#ifndef TAOTOP_ENGINE_BANKRECORD_H
#define TAOTOP_ENGINE_BANKRECORD_H

#include "engine/store/record.h"

struct cJSON;

/* The bank's name of a state ("COMPLETE" for Done). */
const char *bankrecord_state(enum tao_state st);

/* r as the bank's job record (caller deletes). Fields the bank requires
 * and r lacks are written as what they are: an empty image, arch or
 * action as "unknown" (the schema wants a non-empty string). */
struct cJSON *bankrecord_json(const struct job_record *r);

#endif

/*
 * A job's row (engine/track/tracker.h) as the verbs print it: its cells in the
 * one format `jobs` and `status` share, and its JSON object.
 */
#ifndef TAOTOP_CLI_JOBROW_H
#define TAOTOP_CLI_JOBROW_H

#include <cJSON.h>
#include <stddef.h>

struct job_row;
struct poll_result;

/* The row of job (a record id or a SLURM id, as SLURM shows it) in a
 * poll's answer, or NULL. */
const struct job_row *jobrow_find(const struct poll_result *res, const char *job);

/* TIME/LIMIT's cell: the one format, "-" for what is not known. */
void jobrow_time(const struct job_row *r, char *out, size_t len);
/* NxG's cell: "2x4", "2x?" when the GPUs are not known, "" without nodes. */
void jobrow_size(const struct job_row *r, char *out, size_t len);
cJSON *jobrow_json(const struct job_row *r, const char *cluster);
/* o printed on stdout and freed. */
void jobrow_print_json(cJSON *o);

/* A retry's own results folder and what it resumes from (the checkpoint,
 * or "starts from the start"), two lines on stdout, sanitised; nothing
 * for a record that is not such a retry. status and retry print them. */
struct job_record;
void jobrow_print_resume(const struct job_record *rec);

#endif

/*
 * A run's segments (docs/segments.md): the batch script runs TAO's step
 * under the child timeout and, at it, requeues its own job (the same SLURM
 * id) to go on from the newest checkpoint. The script tells each
 * segment's start and end as one JSON line in a file beside the job's
 * logs; the poll reads it and keeps the segments in the record, so the
 * run shows as one across them. Every value read is sanitised and cut to
 * size: the file is the job's to write.
 */
#ifndef TAOTOP_ENGINE_SEGMENTS_H
#define TAOTOP_ENGINE_SEGMENTS_H

#include <stddef.h>

struct job_record;
struct record_segment;

/* Where r's batch script writes them: <log_dir>/<id>-<SLURM id>/
 * segments.jsonl; NULL before it was launched. Caller frees. */
char *segments_path(const struct job_record *r);

/* The file's lines (text, len: its tail, whole lines after the first
 * newline when cut) merged into r's segments; epoch is TAO's newest
 * (-1: unknown), kept as the epoch a segment ended at. Returns 1 when r
 * changed, with *told (caller frees; NULL when nothing new to tell) the
 * sentence for its history. */
int segments_merge(struct job_record *r, const char *text, size_t len, int epoch, char **told);

/* r's last segment, or NULL. */
const struct record_segment *segments_last(const struct job_record *r);

/* Why the script stopped the run at its child timeout (no progress, the
 * segment limit, --no-requeue, a requeue SLURM refused): the last
 * segment's message, or NULL when it did not. */
const char *segments_stopped(const struct job_record *r);

/* The NCCL probe's answer among the file's lines (text, len), when the
 * job's first step told one that passed (engine/submit/probe.h): its knob
 * set as the job wrote it ("none" for no knobs) and its shape ("2x4"),
 * both unchecked (caller frees); 0 when none. The last such line wins. */
int segments_probe_answer(const char *text, size_t len, char **env, char **shape);

#endif

/*
 * Durations as taotop shows them: one format everywhere, SLURM's
 * [D-]HH:MM:SS ("00:02:00", "04:00:00", "1-00:00:00"), whatever SLURM
 * printed (squeue's "2:00" and sacct's "00:02:00" are the same two
 * minutes), and the spans a user types for a history window ("7d", "12h").
 */
#ifndef TAOTOP_ENGINE_DURATION_H
#define TAOTOP_ENGINE_DURATION_H

#include <stddef.h>

/* A duration as squeue or sacct prints it: "M:SS", "H:MM:SS",
 * "D-HH:MM:SS", and sbatch's input forms "MM", "D-HH", "D-HH:MM".
 * 0 with *secs, or -1 for what is no duration ("UNLIMITED",
 * "Partition_Limit", "INVALID", "", garbage). */
int duration_parse(const char *s, long *secs);

/* "00:02:00", "1-00:00:00"; a negative duration gives "". */
void duration_format(long secs, char *out, size_t len);

/* Normalise what SLURM printed: its duration in the one format and
 * seconds, or, when it is no duration, the word as printed ("UNLIMITED")
 * and -1. */
void duration_normalise(const char *printed, char *out, size_t len, long *secs);

/* A span as `taotop jobs --since` and the config's history_days take it:
 * a whole number and a unit, s, m, h, d or w ("7d", "12h", "90m"), from one
 * second to a year. -1 with *err saying what is wrong. */
int duration_since_parse(const char *s, long *secs, char **err);

#endif

/*
 * The job detail view (Enter): a job's record and the history of its
 * transitions, the failure's verdict for a failed job, its retry chain, TAO
 * progress with a sparkline of the metric per epoch, then its staged sbatch
 * and spec.yaml as fetched from the cluster (sanitised). Pure: lines of
 * text from data, so it is tested without a terminal.
 */
#ifndef TAOTOP_UI_DETAIL_H
#define TAOTOP_UI_DETAIL_H

#include <stddef.h>

struct job_record;
struct job_row;
struct watch_file;
struct job_use;

/* The remote files worth showing for a record (its staged sbatch and
 * spec.yaml); caller frees each and the array. 0 for a job without any. */
size_t detail_paths(const struct job_record *r, char ***out);

/* The view's lines (caller frees each and the array). r may be NULL (the
 * user's other jobs); use too (not sampled); files may be NULL while they
 * are being fetched: fetching_ms says how long that has waited (a spinner
 * and the seconds once it is slow), -1 when nothing is. */
size_t detail_lines(const struct job_record *r, const struct job_row *row, const char *cluster,
    const struct job_use *use, const struct watch_file *files, size_t nfiles,
    long long fetching_ms, int utf8, char ***out);

/* A sparkline of v, at most width characters (the last values when there
 * are more): block characters, or "_.:-=+*#" without UTF-8. */
char *detail_sparkline(const double *v, size_t n, size_t width, int utf8);
/* The same for percentages, on the fixed 0..100 scale. */
char *detail_percent_sparkline(const unsigned char *v, size_t n, size_t width, int utf8);

#endif

/*
 * Where the GPU hours went (`taotop report`): over a window, a cluster's
 * jobs of the user's as accounting lists them, each matched with its
 * taotop record when it has one (by SLURM id): GPU hours by outcome (Done;
 * Error by cause, the program's or the infrastructure's as taotop judged
 * it, or not judged; Canceled), the share of them idle (taotop's cards),
 * the jobs that wasted the most, and the median queue wait by partition.
 *
 * A job's GPU hours are its GPUs (accounting's AllocTRES gres/gpu) times
 * its elapsed time; idle hours are a carded job's GPU hours times its
 * GPUs' idle share (100 % minus the mean use); a job's waste is its idle
 * hours, or all its hours when it ended in Error (nothing came of them).
 * Pure: the sums from the lists it is given.
 */
#ifndef TAOTOP_ENGINE_REPORT_H
#define TAOTOP_ENGINE_REPORT_H

#include <stddef.h>

struct acct_job;
struct job_record;
struct cJSON;

enum report_outcome {
	REPORT_DONE, REPORT_ERROR_PROGRAM, REPORT_ERROR_INFRA, REPORT_ERROR_OTHER,
	REPORT_CANCELED, REPORT_RUNNING, REPORT_N
};

#define REPORT_TOP	5

struct report_waste {
	char	 cluster[64];
	char	 id[136];	/* the record id, else the SLURM id */
	char	 what[64];	/* "idle 70 %", "Error (the program's)" */
	double	 hours;
};

struct report_wait {
	char	 cluster[64];
	char	 partition[64];
	long	*waits;		/* seconds, of the jobs that started */
	size_t	 n;
};

struct report {
	double	 hours[REPORT_N];	/* GPU hours by outcome */
	int	 jobs[REPORT_N];
	double	 taotop_hours[REPORT_N];	/* of them, taotop's jobs' */
	double	 idle_hours;		/* of all, idle (carded jobs) */
	double	 carded_hours;		/* the GPU hours whose use is known */
	struct report_waste top[REPORT_TOP];
	size_t	 ntop;
	struct report_wait *waits;
	size_t	 nwaits;
	int	 matched;		/* jobs that are taotop's */
};

const char *report_outcome_name(enum report_outcome o);

/* Add a cluster's jobs (accounting's n), recs[i] job i's taotop record or
 * NULL (recs NULL: none is taotop's). */
void report_add(struct report *r, const char *cluster, const struct acct_job *jobs, size_t n,
    struct job_record *const *recs);
void report_free(struct report *r);

/* The report as lines (caller frees each and the array); since: "7d".
 * The queue waits: the REPORT_WAITS partitions with the most jobs. */
#define REPORT_WAITS	8
size_t report_lines(const struct report *r, const char *since, char ***out);
struct cJSON *report_json(const struct report *r, const char *since);

#endif

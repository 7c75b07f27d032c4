/*
 * What accounting knows of how a finished job used its allocation, asked
 * once when it ends (for its efficiency card, engine/store/card.h): when it
 * was submitted and started, how long it ran against its limit, its CPUs'
 * time and its peak host memory over its steps, its GPUs, and, on a site
 * whose slurmdbd records GPU use (AcctGatherGpuType=gpu/nvml: TRES
 * gres/gpuutil and gres/gpumem in TRESUsageInAve/Max), that too. A
 * jobstats summary in the admin comment ("JS1:...", Princeton's jobstats)
 * is noticed, not decoded (it is gzip'd JSON).
 *
 * The id of a job array sums its tasks' lines: the card of a sweep.
 *
 * Pure: the command and its parser.
 */
#ifndef TAOTOP_ENGINE_ACCTCARD_H
#define TAOTOP_ENGINE_ACCTCARD_H

struct acct_facts {
	long	 wait_s;		/* start - submit; -1 unknown */
	long	 elapsed_s, limit_s;	/* -1 unknown (limit: UNLIMITED) */
	int	 cpus;			/* AllocCPUS; 0 unknown */
	long	 cpu_s;			/* TotalCPU over the job, seconds; -1 */
	long	 rss_peak_kib;		/* the largest MaxRSS of its steps; -1 */
	int	 gpus;			/* gres/gpu in AllocTRES; 0 none or unknown */
	int	 gpu_util;		/* gres/gpuutil, %, the steps' largest; -1 */
	long	 gpu_mem_mib;		/* gres/gpumem peak, MiB; -1 */
	int	 jobstats;		/* the admin comment holds a jobstats summary */
	/* A job array's id: its tasks summed (the allocation lines
	 * "ID_N"); 1 for a plain job. gpu_s and cpu_alloc_s are the sums of
	 * each task's GPUs and CPUs times its time (0: unknown). */
	int	 tasks;
	double	 gpu_s, cpu_alloc_s;
};

/* The command for job id (it must pass slurm_id_ok). */
char *acct_card_command(const char *id);
/* Its output (sacct -P lines: the job's, then its steps') read into *f.
 * 0, or -1 when no line is the job's. */
int acct_card_parse(const char *out, const char *id, struct acct_facts *f);

/* sacct's TotalCPU ("MM:SS.mmm", "HH:MM:SS", "D-HH:MM:SS") in seconds, or
 * -1; a memory size ("1234K", "12M", "1.5G", bytes without a unit) in KiB,
 * or -1. */
long acct_cpu_seconds(const char *s);
long acct_kib(const char *s);

#endif

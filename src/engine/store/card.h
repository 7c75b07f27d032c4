/*
 * A finished job's efficiency card: what its allocation was worth. GPU
 * hours allocated and used (mean and median use over the run, the share of
 * it below the idle threshold, how many of its GPUs did any work), peak GPU
 * memory against the GPUs' total, its CPUs' efficiency and peak host memory
 * (accounting's), the time used against the limit asked, the queue wait,
 * and plain notes where they apply ("asked for 8 GPUs, used 1", "asked for
 * 4 h, needed 40 min", "idle 35 % of its run").
 *
 * Its GPU part comes from the best source there is: SLURM's accounting
 * when the site records GPU use (engine/slurm/acctcard.h), else taotop's
 * own samples of the job's GPUs (struct card_samples: folded into the
 * record as each sampling round reads them, by the monitor or `status`),
 * else none, which the card says; the CPU, memory and time part is
 * accounting's. The card is kept in the record (record.h): the poll makes
 * it as the job ends from what it has (no command of its own), and a
 * user's first look (status, the detail view) adds accounting's facts
 * with one command (acct).
 */
#ifndef TAOTOP_ENGINE_CARD_H
#define TAOTOP_ENGINE_CARD_H

#include <stddef.h>
#include <time.h>

#define CARD_MAX_GPUS	16
#define CARD_BUCKETS	21	/* rounds by mean use: 0-4 %, 5-9 %, ..., 100 % */

/* taotop's samples of a running job's GPUs, summed (the record keeps this,
 * not the readings). */
struct card_samples {
	int	 rounds;			/* rounds that read its GPUs */
	int	 idle_rounds;			/* every GPU below the threshold */
	int	 ngpu;				/* GPUs read (the most in a round) */
	long	 util_sum[CARD_MAX_GPUS];	/* per GPU: % summed over rounds */
	int	 util_n[CARD_MAX_GPUS];		/* and the rounds that read it */
	unsigned hist[CARD_BUCKETS];		/* rounds by their mean % */
	int	 mem_peak_mib, mem_total_mib;	/* the largest GPU's; 0 unknown */
	time_t	 first, last;			/* the first and last round */
};

/* One round's reading of a job: util[i] % (negative: unknown) and memory
 * of each of its n GPUs, folded into s. idle_pct: the threshold. */
void card_samples_fold(struct card_samples *s, const int *util, const int *mem_used,
    const int *mem_total, int n, int idle_pct, time_t at);

struct card {
	char	 gpu_source[16];	/* "accounting", "taotop" or "" (none) */
	int	 jobstats;		/* the site keeps a jobstats summary (not read) */
	int	 gpus;			/* allocated (all nodes); 0 unknown */
	double	 gpu_hours;		/* allocated x elapsed; -1 unknown */
	double	 gpu_hours_used;	/* x the mean use; -1 unknown */
	int	 util_mean, util_median, idle_pct, gpus_used;	/* -1 unknown */
	int	 mem_peak_mib, mem_total_mib;	/* -1 unknown */
	int	 cpu_eff;		/* % of its CPUs' time; -1 */
	long	 rss_peak_kib;		/* -1 */
	long	 elapsed_s, limit_s, wait_s;	/* -1 */
	int	 rounds;		/* taotop's sampling rounds */
	int	 acct;			/* accounting's facts are in it (else the
					 * poll's own time and GPUs, and what taotop
					 * sampled: asked for when a user looks) */
	int	 tasks;			/* a job array's, summed; 1 or 0 a plain job */
};

struct acct_facts;
/* The card from accounting's facts (NULL: none came) and taotop's
 * samples (NULL or none: none), gpus the allocation as taotop knew it (0:
 * accounting's), idle_pct the threshold. */
void card_make(struct card *c, const struct acct_facts *f, const struct card_samples *s,
    int gpus, int idle_pct);

/* The notes that apply, each a short sentence (caller frees each and the
 * array). */
size_t card_notes(const struct card *c, char ***out);
/* The card as lines for a terminal, the notes last (caller frees). */
size_t card_lines(const struct card *c, char ***out);
/* The row's compact figure: "GPU 87%", "GPU 12% !" (a note applies),
 * "no GPU" (none read); out holds 16. */
void card_figure(const struct card *c, char *out, size_t len);

/* JSON (cJSON objects, added to o as name). */
struct cJSON;
void card_samples_to_json(struct cJSON *o, const char *name, const struct card_samples *s);
int card_samples_from_json(const struct cJSON *o, struct card_samples *s);
void card_to_json(struct cJSON *o, const char *name, const struct card *c);
int card_from_json(const struct cJSON *o, struct card *c);

#endif

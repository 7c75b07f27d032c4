/*
 * The seed's resource defaults, as one table, and the rules a submit must
 * pass before anything is staged:
 *
 *  - time: the packaged partitions (polar, polar3, polar4, grizzly) are
 *    4-hour queues: more is refused there, with the reason and the hint to
 *    pick another partition; elsewhere a longer time is accepted only when
 *    the partition's MaxTime (read from the cluster) allows it;
 *  - GPUs: at or above max_num_gpus_per_node (8), nodes are exclusive and
 *    their count derives from the total: the fewest nodes that split it
 *    evenly (16 -> 2 x 8, 12 -> 2 x 6, 20 -> 4 x 5);
 *  - the child timeout is 95 % of the wall time: 3.8 h for 4 h, never 12.
 */
#ifndef TAOTOP_ENGINE_POLICY_H
#define TAOTOP_ENGINE_POLICY_H

struct spec;

struct defaults {
	int	num_nodes;
	int	num_gpus;
	int	max_num_gpus_per_node;
	int	cpus_per_task;
	double	time_hours;
	double	timeout_hours;
	double	max_time_hours;
	int	use_requeue;
	int	use_sqsh;
	const char *partitions;	/* the packaged default list */
};

/* The seed's table (tao-core's defaults). */
extern const struct defaults seed_defaults;

struct resources {
	int	nodes;
	int	gpus_per_node;
	int	gpus_total;
	int	exclusive;
	int	cpus_per_task;
	double	time_hours;
	double	child_timeout_hours;
	char	time[16];		/* "4:00:00", for #SBATCH --time */
	char	child_timeout[16];	/* "13680s", for timeout(1) */
	int	requeue;
};

/* Decide s's resources on partition. max_time_hours is the partition's
 * MaxTime as read from the cluster (<= 0: unknown). -1 with *err when the
 * request is refused; *note (may be NULL) says what was derived. */
int policy_resources(const struct spec *s, const struct defaults *d, const char *partition,
    double max_time_hours, struct resources *out, char **note, char **err);

/* Hours as SLURM's [D-]H:MM:SS, rounded up to the minute. */
void policy_format_time(double hours, char *out, unsigned size);

#endif

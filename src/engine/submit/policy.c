#include "engine/submit/policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/submit/spec.h"
#include "util/xmalloc.h"

const struct defaults seed_defaults = {
	.num_nodes = 1,
	.num_gpus = 4,
	.max_num_gpus_per_node = 8,
	.cpus_per_task = 16,
	.time_hours = 4,
	.timeout_hours = 3.8,
	.max_time_hours = 4,
	.use_requeue = 1,
	.use_sqsh = 1,
	.partitions = "polar,polar3,polar4,grizzly",
};

static int in_list(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

void policy_format_time(double hours, char *out, unsigned size)
{
	long minutes = (long)ceil(hours * 60 - 1e-9);
	long days = minutes / (24 * 60), h = (minutes / 60) % 24, m = minutes % 60;

	if (days > 0)
		snprintf(out, size, "%ld-%ld:%02ld:00", days, h, m);
	else
		snprintf(out, size, "%ld:%02ld:00", h, m);
}

/* Time: the packaged queues are 4-hour queues, whatever else; another
 * partition's MaxTime, where it could be read. */
static int check_time(const struct defaults *d, const char *partition, double hours,
    double max_time_hours, char **err)
{
	if (in_list(d->partitions, partition) && hours > d->max_time_hours + 1e-9) {
		*err = xasprintf("%g h on %s: the packaged partitions %s are %g-hour queues; ask "
		    "for at most %g h, or choose a partition whose MaxTime allows %g h "
		    "(sinfo -o '%%P %%l' lists them)", hours, partition, d->partitions,
		    d->max_time_hours, d->max_time_hours, hours);
		return -1;
	}
	if (!in_list(d->partitions, partition) && hours > d->max_time_hours + 1e-9 &&
	    (max_time_hours <= 0 || hours > max_time_hours + 1e-9)) {
		*err = max_time_hours > 0
		    ? xasprintf("%g h on %s: its MaxTime is %g h", hours, partition, max_time_hours)
		    : xasprintf("%g h on %s: its MaxTime could not be read, so a time above %g h "
			"cannot be checked; ask for at most %g h", hours, partition,
			d->max_time_hours, d->max_time_hours);
		return -1;
	}
	return 0;
}

/* A shape said outright: gpus_per_node, with nodes or a total. */
static int shape_said(const struct spec *s, const struct defaults *d, struct resources *r,
    char **err)
{
	int per = s->gpus_per_node, nodes;

	if (s->nodes <= 0 && s->gpus >= 0 && s->gpus % per != 0) {
		*err = xasprintf("gpus: %d is not a whole number of nodes of gpus_per_node: %d; "
		    "ask for %d or %d", s->gpus, per, s->gpus / per * per, (s->gpus / per + 1) * per);
		return -1;
	}
	nodes = s->nodes > 0 ? s->nodes : s->gpus > 0 ? s->gpus / per : 1;
	if (s->gpus >= 0 && s->gpus != nodes * per) {
		*err = xasprintf("gpus: %d, nodes: %d and gpus_per_node: %d disagree (%d x %d is "
		    "%d): give two of the three", s->gpus, nodes, per, nodes, per, nodes * per);
		return -1;
	}
	r->gpus_total = nodes * per;
	r->nodes = nodes;
	r->gpus_per_node = per;
	r->exclusive = per >= d->max_num_gpus_per_node;
	return 0;
}

/* A total at or above a node's worth: whole, exclusive nodes. */
static int shape_whole_nodes(const struct spec *s, const struct defaults *d, int gpus,
    int nodes, struct resources *r, char **note, char **err)
{
	int max = d->max_num_gpus_per_node;
	int least = (gpus + max - 1) / max, n = least;

	if (s->nodes > 0 && s->nodes > n)
		n = s->nodes;
	/* The fewest nodes that split the total evenly, each still at
	 * least half full: 20 -> 4 x 5; 11 is no shape at all, and must
	 * not become 11 exclusive nodes of one GPU each. */
	while (gpus % n != 0 && gpus / (n + 1) >= max / 2)
		n++;
	if (gpus % n != 0) {
		int below = gpus / max * max, above = below + max;
		*err = xasprintf("%d GPUs do not split evenly over whole nodes of at most %d: "
		    "ask for %d or %d (%d or %d node%s x %d), or say the shape with nodes: "
		    "and fewer GPUs each (e.g. gpus: %d, nodes: %d)", gpus, max, below, above,
		    below / max, above / max, above / max == 1 ? "" : "s", max,
		    least * (gpus / least), least);
		return -1;
	}
	r->gpus_total = gpus;
	r->nodes = n;
	r->gpus_per_node = gpus / n;
	r->exclusive = 1;
	if (note != NULL && (n != nodes || s->nodes <= 0))
		*note = xasprintf("%d GPUs: %d exclusive node%s x %d GPUs", gpus, n,
		    n == 1 ? "" : "s", gpus / n);
	return 0;
}

int policy_resources(const struct spec *s, const struct defaults *d, const char *partition,
    double max_time_hours, struct resources *r, char **note, char **err)
{
	int gpus = s->gpus >= 0 ? s->gpus : d->num_gpus;
	int nodes = s->nodes > 0 ? s->nodes : d->num_nodes;
	double hours = s->time_hours > 0 ? s->time_hours : d->time_hours;

	memset(r, 0, sizeof(*r));
	if (note != NULL)
		*note = NULL;
	if (check_time(d, partition, hours, max_time_hours, err) != 0)
		return -1;
	/* GPUs: a shape said outright, or a total; at or above a node's
	 * worth, whole nodes; below, the nodes asked for. */
	if (s->gpus_per_node > 0) {
		if (shape_said(s, d, r, err) != 0)
			return -1;
	} else if (gpus >= d->max_num_gpus_per_node) {
		if (shape_whole_nodes(s, d, gpus, nodes, r, note, err) != 0)
			return -1;
	} else if (gpus % nodes != 0) {
		*err = xasprintf("%d GPUs do not split evenly over %d nodes", gpus, nodes);
		return -1;
	} else {
		r->gpus_total = gpus;
		r->nodes = nodes;
		r->gpus_per_node = gpus / nodes;
	}
	r->cpus_per_task = s->cpus_per_task > 0 ? s->cpus_per_task : d->cpus_per_task;
	r->time_hours = hours;
	/* The seed's 3.8 h for a 4 h wall, kept in proportion for others;
	 * the bundle's own below the wall, never at or above it: the step
	 * must stop in time for the job to requeue itself. */
	r->child_timeout_hours = hours * (d->timeout_hours / d->time_hours);
	if (s->child_timeout_hours > 0) {
		if (s->child_timeout_hours >= hours) {
			*err = xasprintf("child_timeout_hours %g is at or above the wall (time_hours "
			    "%g): the training step must stop before SLURM's --time so the job can "
			    "requeue itself; give less (the default is %g, 0.95 of the wall)",
			    s->child_timeout_hours, hours, r->child_timeout_hours);
			return -1;
		}
		r->child_timeout_hours = s->child_timeout_hours;
	}
	if (floor(r->child_timeout_hours * 3600) < 1) {
		*err = xasprintf("a child timeout of %g hours is under a second: give "
		    "child_timeout_hours of at least 0.0003 (or a longer time_hours)",
		    r->child_timeout_hours);
		return -1;
	}
	policy_format_time(hours, r->time, sizeof(r->time));
	snprintf(r->child_timeout, sizeof(r->child_timeout), "%lds",
	    (long)floor(r->child_timeout_hours * 3600 + 1e-6));
	r->requeue = s->requeue >= 0 ? s->requeue : d->use_requeue;
	return 0;
}

/*
 * A registry image converted to a .sqsh on the CPU partition, as the seed
 * and NVIDIA's reference do it (tao-skill-bank, skills/platform/
 * tao-run-on-slurm/references/slurm-container-execution.md, "CS-OCI-ORD
 * SQSH conversion profile"): srun with the explicit profile (4 CPUs,
 * 7200M, -t 120), the job's account, node-local enroot temp paths, to a
 * temporary name renamed only when whole, its hsqs magic checked.
 *
 * The srun runs detached on the login host under a name of its own, so a
 * conversion never strands the user: while it waits in the queue its
 * pending reason is told (the CLI and the wizard show it), a dropped
 * connection does not kill it, and QOSGrpMemLimit is handled as the
 * reference says: ReqCPUS and ReqMem read, the pending conversion
 * cancelled and run once more with the explicit profile under a new name;
 * never waited for. Other reasons are shown and waited for, as the seed
 * says of long queue waits.
 */
#ifndef TAOTOP_ENGINE_CONVERT_H
#define TAOTOP_ENGINE_CONVERT_H

#include <stdatomic.h>

struct conn;

/* How often a waiting conversion is looked at. */
#define CONVERT_POLL_MS		5000

/* One look at a conversion: its queue state and reason, what it asked for,
 * and its srun's exit status once it ended. */
struct convert_look {
	int	 ended;		/* the srun ended: rc is its exit status */
	int	 rc;
	char	 state[24];	/* "PENDING", "RUNNING", "" (not in the queue) */
	char	 reason[64];	/* squeue's %r: "Resources", "QOSGrpMemLimit" */
	char	 req_cpus[16];	/* squeue's %C */
	char	 req_mem[24];	/* squeue's %m */
};

/* The look's answer (what convert_look_command prints) read; -1 when it
 * is not one. */
int convert_read_look(const char *out, struct convert_look *l);

enum convert_act { CONVERT_WAIT, CONVERT_DONE, CONVERT_RETRY_EXPLICIT };
/* What a look decides: an ended srun is done; QOSGrpMemLimit, seen on two
 * looks in a row (one look may catch the scheduler mid-pass), is a retry
 * with the explicit profile; anything else is waited for. */
enum convert_act convert_judge(const struct convert_look *l, int qos_mem_before);

struct convert_opts {
	const char	*sqsh;		/* the file to make */
	const char	*docker_uri;	/* what enroot imports */
	const char	*cache;		/* its folder */
	const char	*partition;	/* the CPU partition */
	const char	*account;	/* the job's, or NULL */
	atomic_int	*cancel;	/* set: the conversion is cancelled */
	/* told each new pending reason, and the retry */
	void		(*said)(const char *what, void *data);
	void		*data;
};

/* The srun line of a conversion named name (for --dry-run's plan too).
 * Caller frees. */
char *convert_srun_line(const struct convert_opts *o, const char *name);

/* Convert; 0 when the .sqsh is there and whole. On failure *err says why
 * (enroot's last lines, or the QOS limit that stopped it twice). *retried
 * says the conversion was run once more with the explicit profile. */
int convert_run(struct conn *c, const struct convert_opts *o, int *retried, char **err);

#endif

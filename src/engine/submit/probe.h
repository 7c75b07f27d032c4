/*
 * The NCCL probe (the seed's "NCCL probe first"): before the first job on a
 * cluster that runs NCCL across GPUs (more than one node, or more than one
 * GPU on a node: the intra-node P2P hang), a cheap all-reduce runs under the
 * container's torchrun (templates/nccl_probe.py). It runs as the job's own
 * first step, inside its allocation on the nodes it got (the "taotop-probe"
 * block of both sbatch templates), so the job keeps its place in the queue
 * however long the partition is busy: a probe of its own would wait in the
 * queue first and leave nothing queued if it gave up. Its shape is the
 * job's: one node with its GPUs (the hang is inside a node), or the job's
 * nodes for a multi-node one (the network between them). It passes when
 * its output says NCCL_PROBE_OK; a rung that hangs (past the probe timeout,
 * or ended by the collective's own timeout: PyTorch's watchdog) is followed
 * by the next set of NCCL knobs of the ladder (data: the cluster's
 * nccl_ladder, else templates/nccl-ladder.conf). The set that passes is
 * exported for the training step and told in the segments file, whose
 * line the poll caches in the cluster's config with the shape that passed.
 */
#ifndef TAOTOP_ENGINE_PROBE_H
#define TAOTOP_ENGINE_PROBE_H

#include <stddef.h>

struct buf;

/* What the job's probe block needs. */
struct probe_plan {
	const char	*dir;		/* the job's folder: the probe program, its
					 * rungs' output, the answer for later segments */
	const char	*ladder;	/* the cluster's nccl_ladder, or NULL: the shipped file */
	const char	*template_dir;	/* NULL: taotop's */
	int		 nodes;		/* the job's */
	int		 gpus_per_node;	/* the job's, on each node */
	int		 timeout_s;	/* a rung running longer than this: hung */
};

/* The ladder's rungs: "" (no knobs) first, then each set, one per line of
 * ladder (NULL: the shipped file). Caller frees each and the array. -1 with
 * *err naming the bad line. */
int probe_ladder(const char *ladder, const char *template_dir, char ***rungs, size_t *n,
    char **err);

/* The shell variables the templates' probe block reads (their
 * @@NCCL_PROBE@@), appended to out: "TAOTOP_PROBE=0" for p NULL (no probe:
 * one GPU, or cached knobs), else the shape, the timeout, the folder and
 * the rungs ("none" for the first), each value quoted (the image is the
 * template's own @@IMAGE@@). -1 with *err for a bad ladder. */
int probe_script_vars(const struct probe_plan *p, struct buf *out, char **err);

/* "export NAME='value'" lines for a knob set ("A=1 B=x"); -1 with *err for
 * a word that is not NAME=value. */
int probe_env_lines(const char *set, char **lines, char **err);

/* The names of a knob set's variables, each after a ',' (none before the
 * first when names is empty): for Pyxis's --container-env. */
void probe_env_names(const char *set, struct buf *names);

/* The rendezvous the multi-node template exports. */
#define PROBE_RENDEZVOUS_NAMES \
	"WORLD_SIZE,NUM_GPU_PER_NODE,MASTER_ADDR,MASTER_PORT,TAO_NODE_COUNT,TAO_GPUS_PER_NODE"

/* The line of the segments file the probe block writes, and the word
 * that tells it (engine/track reads it back to cache the answer). */
#define PROBE_EVENT	"nccl_probe"

#endif

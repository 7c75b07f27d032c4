/*
 * The NCCL probe (the seed's "NCCL probe first"): before the first job on a
 * cluster that runs NCCL across GPUs (more than one node, or more than one
 * GPU on a node: the intra-node P2P hang), a cheap all-reduce runs under the
 * container's torchrun (templates/nccl_probe.sbatch.tmpl and
 * templates/nccl_probe.py), in the job's shape: on one node with the job's
 * GPUs for a single-node job (the hang is inside a node, and a user who
 * cannot get two nodes must not wait for them), on two nodes for a
 * multi-node one. It passes when its output says NCCL_PROBE_OK. A rung
 * fails when the collective hangs: the job runs past the timeout (taotop
 * cancels it), or ends by the collective's own timeout (PyTorch's watchdog
 * error). Then the probe runs again with the next set of NCCL knobs of the
 * ladder (data: the cluster's nccl_ladder, else templates/nccl-ladder.conf).
 * The set that passes is the cluster's NCCL env, which the caller caches
 * with the shape that passed.
 */
#ifndef TAOTOP_ENGINE_PROBE_H
#define TAOTOP_ENGINE_PROBE_H

#include <stddef.h>

struct conn;
struct cluster_cfg;

struct probe_opts {
	const char	*image;		/* the job's converted squashfs, on shared storage */
	const char	*dir;		/* a shared folder for the probe's files and output */
	const char	*partition;
	const char	*account;	/* the job's, or NULL */
	const char	*template_dir;	/* NULL: taotop's */
	int		 nodes;		/* 1, or 2 for a multi-node job */
	int		 gpus_per_node;	/* the job's, on each node */
	int		 timeout_s;	/* running longer than this: hung */
	int		 poll_ms;	/* how often to look (0: 2000) */
};

/* What the probe is doing, as a sentence: "submitted probe job 123 (no NCCL
 * knobs)", "running", "timed out after 120 s: the all-reduce hangs",
 * "retrying with NCCL_P2P_DISABLE=1", "passed with NCCL_P2P_DISABLE=1". */
typedef void probe_progress_fn(const char *what, void *data);

/* The ladder's rungs: "" (no knobs) first, then each set, one per line of
 * ladder (NULL: the shipped file). Caller frees each and the array. -1 with
 * *err naming the bad line. */
int probe_ladder(const char *ladder, const char *template_dir, char ***rungs, size_t *n,
    char **err);

/* Climb the ladder on c. 0 with *env (caller frees; "" when no knob was
 * needed); -1 with *err when every rung hung or the probe failed outright
 * (its output's last lines in the sentence). Nothing is left running. */
int probe_nccl(struct conn *c, const struct cluster_cfg *cl, const struct probe_opts *o,
    probe_progress_fn *progress, void *data, char **env, char **err);

/* "export NAME='value'" lines for a knob set ("A=1 B=x"); -1 with *err for
 * a word that is not NAME=value. */
int probe_env_lines(const char *set, char **lines, char **err);

/* The names of a knob set's variables, each after a ',' (none before the
 * first when names is empty): for Pyxis's --container-env. */
struct buf;
void probe_env_names(const char *set, struct buf *names);

/* The rendezvous the multi-node template and the probe export. */
#define PROBE_RENDEZVOUS_NAMES \
	"WORLD_SIZE,NUM_GPU_PER_NODE,MASTER_ADDR,MASTER_PORT,TAO_NODE_COUNT,TAO_GPUS_PER_NODE"

#endif

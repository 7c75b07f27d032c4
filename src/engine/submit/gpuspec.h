/*
 * The GPUs TAO is given. SLURM allocates the job's shape, but TAO trains
 * on what its spec says, one GPU by default (tao-pytorch
 * config/common/common_config.py: train, evaluate and inference each have
 * num_gpus and num_nodes, default 1; export and gen_trt_engine have only a
 * gpu_id). TAO's entry point (core/entrypoint.py) reads the count for
 * train, evaluate, inference and distill (distill's under train); every
 * other action runs on one GPU. Its precedence: environment (WORLD_SIZE,
 * NUM_GPU_PER_NODE: the multi-node template's) > command-line overrides >
 * spec > default.
 *
 * The rules:
 *  - the keys: the bundle's gpu_spec_key (the bank's bundle field, e.g.
 *    train.num_gpus) takes the GPUs per node and its sibling num_nodes the
 *    nodes; without one, <action>.num_gpus and <action>.num_nodes for the
 *    actions above; gpu_spec_key: null, or another action, has none;
 *  - TAO's own command (a bundle without command:) gets them as
 *    overrides, <key>=N, after results_dir=...; a command of the bundle's
 *    own is left as written (it may name {num_gpus} and {num_nodes});
 *  - refused before anything is written, naming both numbers and where
 *    each came from: TAO's spec saying another count at a key (or a
 *    gpu_ids list of another length beside num_gpus), a word of the
 *    bundle's command setting a key to another count, and TAO's own
 *    command for an action TAO runs on one GPU when the job asks more.
 */
#ifndef TAOTOP_ENGINE_GPUSPEC_H
#define TAOTOP_ENGINE_GPUSPEC_H

#include <stddef.h>

struct spec;

/* The job's shape and where its numbers came from (engine/submit/request.h). */
struct gpu_shape {
	int		 gpus_per_node, nodes;
	const char	*gpus_from, *nodes_from;	/* "the bundle", "--gpus", ... */
	int		 asked_gpus;	/* the total as asked (gpus:), or -1 */
};

/* Where TAO reads s's GPUs per node and nodes (caller frees both); both
 * NULL when TAO takes no count for it. */
void gpuspec_keys(const struct spec *s, char **gpus_key, char **nodes_key);

/* The checks above for s against shape g, over the command's words (argv,
 * placeholders unexpanded; taos: TAO's own). -1 with *err. */
int gpuspec_check(const struct spec *s, const struct gpu_shape *g, char *const *argv,
    size_t argc, int taos, char **err);

/* The overrides TAO's own command gets (appended to *argv, which grows;
 * the words are the caller's to free), none when TAO takes no count. */
void gpuspec_overrides(const struct spec *s, const struct gpu_shape *g, char ***argv,
    size_t *argc);

#endif

/*
 * Cosmos jobs by their launch contract (NVIDIA's tao-skill-bank,
 * skills/platform/tao-run-on-slurm/references/cosmos-slurm-guardrails.md;
 * the Cosmos model skill's cosmos_workflow.py; Cosmos-RL's
 * tools/slurm/cosmos_rl_job_multi_node.sh).
 *
 * A bundle is a Cosmos one when its network_arch begins "cosmos"
 * (cosmos-reason, cosmos-embed, ...); its cosmos: mapping names the backend
 * (rl or framework), which taotop cannot guess. The rules, checked before
 * anything is written: the image is a prebuilt .sqsh (a registry image
 * would be converted inside the GPU allocation, which the guardrails
 * forbid), and the job is never requeued (the guardrails: "requeue is off
 * unless separately validated"; the model skill refuses --use-requeue).
 *
 * Cosmos-RL's roles: the controller on node 0 (the first policy node, as
 * Cosmos-RL's own SLURM script places it), one policy replica on every
 * policy node, one rollout replica on each of the last rollout_nodes
 * nodes. Each role is one srun step with COSMOS_NODE_ROLE in its
 * environment; its log is <log folder>/<role>.out (policy-0.out,
 * rollout-0.out: the replica's number among its kind).
 */
#ifndef TAOTOP_ENGINE_COSMOS_H
#define TAOTOP_ENGINE_COSMOS_H

#include <stddef.h>

struct spec;

/* The controller's port (Cosmos-RL's CONTROLLER_PORT). */
#define COSMOS_CONTROLLER_PORT	8082

/* Whether network_arch names a Cosmos model (begins "cosmos"). */
int cosmos_arch(const char *network_arch);

/*
 * The bundle's Cosmos rules: 0 when it is no Cosmos job (no cosmos
 * mapping, network_arch not cosmos*) or a Cosmos job that may run; -1
 * with *err naming the field and what to do. requeue_from names where a
 * requeue asked for came from ("the bundle", "--requeue"), used when
 * s->requeue is 1. nodes: the job's node count (for rollout_nodes).
 */
int cosmos_check(const struct spec *s, const char *requeue_from, int nodes, char **err);

struct cosmos_role {
	char	name[32];	/* "controller", "policy-0", "rollout-1" */
	char	kind[16];	/* "controller", "policy", "rollout" (COSMOS_NODE_ROLE) */
	int	node;		/* the job's node it runs on, 0-based */
};

/* Cosmos-RL's roles on nodes nodes with rollout rollout nodes (as above):
 * *n of them in *out (caller frees), controller first. -1 when the shape
 * leaves no policy node. */
int cosmos_roles(int nodes, int rollout, struct cosmos_role **out, size_t *n);

/* The roles' names joined by spaces ("controller policy-0 policy-1"), as
 * the record keeps them (caller frees); NULL for a bad shape. */
char *cosmos_role_names(int nodes, int rollout);

#endif

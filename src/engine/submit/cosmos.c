#include "engine/submit/cosmos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/spec.h"
#include "util/buf.h"
#include "util/xmalloc.h"

int cosmos_arch(const char *network_arch)
{
	return network_arch != NULL && strncmp(network_arch, "cosmos", 6) == 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n > t && strcmp(s + n - t, tail) == 0;
}

int cosmos_check(const struct spec *s, const char *requeue_from, int nodes, char **err)
{
	int arch = cosmos_arch(s->network_arch);

	if (!arch && s->cosmos_backend == NULL)
		return 0;
	if (!arch) {
		*err = xasprintf("field 'cosmos' is for Cosmos models, but network_arch is '%s': "
		    "a Cosmos bundle's network_arch begins with cosmos (cosmos-reason, "
		    "cosmos-embed); remove cosmos: for any other model",
		    s->network_arch ? s->network_arch : "(none)");
		return -1;
	}
	if (s->cosmos_backend == NULL && s->format == SPEC_FORMAT_BANK) {
		/* The skill bank's Cosmos bundle: its model skill owns the
		 * launch (the guardrails: the platform runs the bundle's one
		 * command with its execution lifecycle, and must not re-encode
		 * model semantics). The platform's rules still hold. */
		if (s->image == NULL || !ends_with(s->image, ".sqsh")) {
			*err = xasprintf("field 'image' is '%s': a Cosmos job runs a prebuilt .sqsh "
			    "only (the guardrails: convert the image before the GPU allocation); "
			    "convert it first and give the .sqsh path", s->image ? s->image : "(none)");
			return -1;
		}
		if (s->requeue == 1) {
			*err = xasprintf("requeue is asked for (%s), but a Cosmos job is never "
			    "requeued (--no-requeue): leave requeue out", requeue_from ? requeue_from
			    : "the bundle");
			return -1;
		}
		return 0;
	}
	if (s->cosmos_backend == NULL) {
		*err = xasprintf("network_arch %s is a Cosmos model: say which backend runs it, "
		    "cosmos: {backend: rl} (Cosmos-RL: a controller and policy replicas) or "
		    "cosmos: {backend: framework} (Cosmos Framework: one torchrun per node)",
		    s->network_arch);
		return -1;
	}
	if (s->image == NULL || !ends_with(s->image, ".sqsh")) {
		*err = xasprintf("field 'image' is '%s': a Cosmos job runs a prebuilt .sqsh only "
		    "(the guardrails: convert the image before the GPU allocation, never inside "
		    "it); convert it first (enroot import on a CPU node, or a plain TAO job's "
		    "cached conversion) and give the .sqsh path",
		    s->image ? s->image : "(none)");
		return -1;
	}
	if (s->requeue == 1) {
		*err = xasprintf("requeue is asked for (%s), but a Cosmos job is never requeued "
		    "(--no-requeue: its controller and replicas cannot resume a half-run step, "
		    "and the guardrails keep requeue off): leave requeue out or say false",
		    requeue_from ? requeue_from : "the bundle");
		return -1;
	}
	if (s->exec.given) {
		*err = xstrdup("field 'execution' is not run around a Cosmos job's roles (each role "
		    "runs the bundle's command, taotop's template launches them): leave it out, or "
		    "give the bundle in the skill bank's form, which runs as one command with its "
		    "execution lifecycle");
		return -1;
	}
	if (strcmp(s->cosmos_backend, "framework") == 0 && s->cosmos_rollout_nodes > 0) {
		*err = xstrdup("field 'cosmos.rollout_nodes' is for Cosmos-RL (backend: rl): "
		    "Cosmos Framework has no rollout replicas");
		return -1;
	}
	if (strcmp(s->cosmos_backend, "rl") == 0 && s->cosmos_rollout_nodes >= nodes) {
		*err = xasprintf("field 'cosmos.rollout_nodes' is %d on %d node%s: at least one "
		    "node must run a policy replica (and the controller, on node 0)",
		    s->cosmos_rollout_nodes, nodes, nodes == 1 ? "" : "s");
		return -1;
	}
	return 0;
}

static void add(struct cosmos_role **v, size_t *n, const char *kind, int k, int node)
{
	struct cosmos_role *r;

	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	r = &(*v)[(*n)++];
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	if (k < 0)
		snprintf(r->name, sizeof(r->name), "%s", kind);
	else
		snprintf(r->name, sizeof(r->name), "%s-%d", kind, k);
	r->node = node;
}

int cosmos_roles(int nodes, int rollout, struct cosmos_role **out, size_t *n)
{
	int policy = nodes - (rollout > 0 ? rollout : 0), i;

	*out = NULL;
	*n = 0;
	if (nodes < 1 || policy < 1)
		return -1;
	add(out, n, "controller", -1, 0);
	for (i = 0; i < policy; i++)
		add(out, n, "policy", i, i);
	for (i = policy; i < nodes; i++)
		add(out, n, "rollout", i - policy, i);
	return 0;
}

char *cosmos_role_names(int nodes, int rollout)
{
	struct cosmos_role *v;
	struct buf b;
	size_t n, i;

	if (cosmos_roles(nodes, rollout, &v, &n) != 0)
		return NULL;
	buf_init(&b);
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s%s", i ? " " : "", v[i].name);
	free(v);
	return buf_detach(&b);
}

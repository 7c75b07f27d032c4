#include "engine/submit/gpuspec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "engine/submit/command.h"
#include "engine/submit/spec.h"
#include "util/xmalloc.h"
#include "util/yamldoc.h"

/* The actions whose count TAO's entry point reads, and under which key. */
static const char *const counted[][2] = {
	{ "train", "train" }, { "evaluate", "evaluate" }, { "inference", "inference" },
	{ "distill", "train" },
};

void gpuspec_keys(const struct spec *s, char **gpus_key, char **nodes_key)
{
	const char *dot;
	size_t i;

	*gpus_key = *nodes_key = NULL;
	if (s->gpu_spec_none)
		return;
	if (s->gpu_spec_key != NULL) {
		dot = strrchr(s->gpu_spec_key, '.');
		*gpus_key = xstrdup(s->gpu_spec_key);
		*nodes_key = dot != NULL ? xasprintf("%.*snum_nodes", (int)(dot + 1 - s->gpu_spec_key),
		    s->gpu_spec_key) : xstrdup("num_nodes");
		return;
	}
	for (i = 0; s->action != NULL && i < sizeof(counted) / sizeof(counted[0]); i++) {
		if (strcmp(s->action, counted[i][0]) == 0) {
			*gpus_key = xasprintf("%s.num_gpus", counted[i][1]);
			*nodes_key = xasprintf("%s.num_nodes", counted[i][1]);
			return;
		}
	}
}

/* A whole number's text as an int; -1 when it is not one. */
static int whole(const char *v)
{
	char *end;
	long x;

	if (v == NULL || *v == '\0')
		return -1;
	errno = 0;
	x = strtol(v, &end, 10);
	return *end == '\0' && errno == 0 && x >= 0 && x < 1 << 20 ? (int)x : -1;
}

/* What the job asks and where from: "the bundle asks gpus: 8 (8 per node x
 * 1 node)" (nodes: what the nodes' side says). */
static char *asked(const struct spec *s, const struct gpu_shape *g, int nodes)
{
	const char *from = nodes ? g->nodes_from : g->gpus_from;
	char *what, *out;

	if (strcmp(from, "the bundle") != 0)
		what = xasprintf("%s asks %d %s", from, nodes ? g->nodes : g->gpus_per_node * g->nodes,
		    nodes ? (g->nodes == 1 ? "node" : "nodes") : "GPUs");
	else if (s->gpus_per_node > 0 && !nodes)
		what = xasprintf("the bundle asks gpus_per_node: %d", s->gpus_per_node);
	else if (nodes && s->nodes > 0)
		what = xasprintf("the bundle asks nodes: %d", s->nodes);
	else if (nodes)
		what = xasprintf("the bundle's shape is %d node%s", g->nodes, g->nodes == 1 ? "" : "s");
	else
		what = xasprintf("the bundle asks gpus: %d", g->asked_gpus >= 0 ? g->asked_gpus
		    : g->gpus_per_node * g->nodes);
	out = xasprintf("%s (%d per node x %d node%s)", what, g->gpus_per_node, g->nodes,
	    g->nodes == 1 ? "" : "s");
	free(what);
	return out;
}

/* TAO's spec against the shape at key (want: its count). */
static int check_spec_key(const struct spec *s, const struct gpu_shape *g, const char *key,
    int want, int nodes, char **err)
{
	int len, have;
	char *v = spec_tao_value(s, key, &len), *a;

	have = whole(v);
	if (have >= 0 && have != want) {
		a = asked(s, g, nodes);
		*err = xasprintf("spec %s is %s but %s: remove %s from the spec (taotop gives TAO the "
		    "job's count) or make the two agree", key, v, a, key);
		free(a), free(v);
		return -1;
	}
	free(v);
	return 0;
}

/* gpu_ids beside num_gpus: a list as long as the GPUs per node. */
static int check_gpu_ids(const struct spec *s, const struct gpu_shape *g, const char *gpus_key,
    char **err)
{
	size_t klen = strlen(gpus_key);
	char *key, *v, *a;
	int len;

	if (klen < 8 || strcmp(gpus_key + klen - 8, "num_gpus") != 0)
		return 0;
	key = xasprintf("%.*sgpu_ids", (int)(klen - 8), gpus_key);
	v = spec_tao_value(s, key, &len);
	free(v);
	if (len >= 0 && len != g->gpus_per_node) {
		a = asked(s, g, 0);
		*err = xasprintf("spec %s lists %d GPU%s but %s: remove %s from the spec or list %d",
		    key, len, len == 1 ? "" : "s", a, key, g->gpus_per_node);
		free(a), free(key);
		return -1;
	}
	free(key);
	return 0;
}

/* A word of the bundle's command setting key=N to another count. */
static int check_words(const struct spec *s, const struct gpu_shape *g, char *const *argv,
    size_t argc, const char *key, int want, int nodes, char **err)
{
	char ngpus[16], nnodes[16];
	struct command_vars cv = { NULL, NULL, NULL, NULL, ngpus, nnodes };
	size_t klen = strlen(key), i;

	snprintf(ngpus, sizeof(ngpus), "%d", g->gpus_per_node);
	snprintf(nnodes, sizeof(nnodes), "%d", g->nodes);
	for (i = 0; i < argc; i++) {
		char *e = NULL, *w = command_expand_word(argv[i], &cv, &e), *a;
		int have = w != NULL && strncmp(w, key, klen) == 0 && w[klen] == '='
		    ? whole(w + klen + 1) : -1;
		free(e);
		if (have >= 0 && have != want) {
			a = asked(s, g, nodes);
			*err = xasprintf("the command's word %s says %d but %s: leave the count to "
			    "taotop (%s={%s}) or make the two agree", argv[i], have, a, key,
			    nodes ? "num_nodes" : "num_gpus");
			free(a), free(w);
			return -1;
		}
		free(w);
	}
	return 0;
}

int gpuspec_check(const struct spec *s, const struct gpu_shape *g, char *const *argv,
    size_t argc, int taos, char **err)
{
	char *gk, *nk, *a;
	int rc = 0;

	gpuspec_keys(s, &gk, &nk);
	if (gk == NULL) {
		if (taos && !s->gpu_spec_none && g->gpus_per_node * g->nodes > 1) {
			a = asked(s, g, 0);
			*err = xasprintf("action %s: TAO's entry point runs it on one GPU (only train, "
			    "evaluate, inference and distill take a count), but %s: ask for gpus: 1, "
			    "or name the spec's key with gpu_spec_key", s->action ? s->action : "?", a);
			free(a);
			rc = -1;
		}
		return rc;
	}
	if (g->gpus_per_node > 0 &&
	    (check_spec_key(s, g, gk, g->gpus_per_node, 0, err) != 0 ||
	     check_spec_key(s, g, nk, g->nodes, 1, err) != 0 || check_gpu_ids(s, g, gk, err) != 0 ||
	     check_words(s, g, argv, argc, gk, g->gpus_per_node, 0, err) != 0 ||
	     check_words(s, g, argv, argc, nk, g->nodes, 1, err) != 0))
		rc = -1;
	free(gk), free(nk);
	return rc;
}

void gpuspec_overrides(const struct spec *s, const struct gpu_shape *g, char ***argv,
    size_t *argc)
{
	char *gk, *nk;

	gpuspec_keys(s, &gk, &nk);
	if (gk != NULL && g->gpus_per_node > 0) {
		*argv = xreallocarray(*argv, *argc + 2, sizeof(**argv));
		(*argv)[(*argc)++] = xasprintf("%s=%d", gk, g->gpus_per_node);
		(*argv)[(*argc)++] = xasprintf("%s=%d", nk, g->nodes);
	}
	free(gk), free(nk);
}

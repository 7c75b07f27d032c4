#include "engine/config.h"

#include <stdlib.h>
#include <string.h>

#include "ssh/conn.h"
#include "util/xmalloc.h"

static char *env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? xstrdup(v) : NULL;
}

int config_load(struct config *cfg, char **err)
{
	struct cluster_cfg *cl;
	const char *missing = NULL;

	memset(cfg, 0, sizeof(*cfg));
	cl = xcalloc(1, sizeof(*cl));
	cl->hosts = env("SLURM_HOSTNAME");
	cl->user = env("SLURM_USER");
	cl->key_path = env("SSH_KEY_PATH");
	cl->known_hosts = env("TAOTOP_KNOWN_HOSTS");
	cl->name = env("TAOTOP_CLUSTER");
	if (cl->name == NULL)
		cl->name = xstrdup("default");
	cl->poll_s = getenv("TAOTOP_POLL_S") ? atoi(getenv("TAOTOP_POLL_S")) : 10;
	cl->partitions = env("SLURM_PARTITION");
	if (cl->partitions == NULL)
		cl->partitions = xstrdup("polar,polar3,polar4,grizzly");
	cl->account = env("SLURM_ACCOUNT");
	cl->results_root = env("SLURM_BASE_RESULTS_DIR");
	cl->image_cache = env("TAOTOP_IMAGE_CACHE");
	cl->cpu_partition = env("TAOTOP_CPU_PARTITION");
	if (cl->cpu_partition == NULL)
		cl->cpu_partition = xstrdup("cpu_long");
	if (cl->poll_s < 1)
		cl->poll_s = 10;
	if (cl->hosts == NULL)
		missing = "SLURM_HOSTNAME (the cluster's login hosts, comma-separated)";
	else if (cl->user == NULL)
		missing = "SLURM_USER (your user name on the cluster)";
	if (missing != NULL) {
		*err = xasprintf("%s is not set: export it in your shell", missing);
		cfg->clusters = cl;
		cfg->n = 1;
		config_free(cfg);
		return -1;
	}
	cfg->clusters = cl;
	cfg->n = 1;
	return 0;
}

void config_free(struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->n; i++) {
		struct cluster_cfg *cl = &cfg->clusters[i];
		free(cl->name), free(cl->hosts), free(cl->user);
		free(cl->key_path), free(cl->known_hosts);
		free(cl->partitions), free(cl->account), free(cl->results_root);
		free(cl->image_cache), free(cl->cpu_partition);
	}
	free(cfg->clusters);
	memset(cfg, 0, sizeof(*cfg));
}

const struct cluster_cfg *config_cluster(const struct config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n; i++)
		if (name == NULL || strcmp(cfg->clusters[i].name, name) == 0)
			return &cfg->clusters[i];
	return NULL;
}

void cluster_target(const struct cluster_cfg *cl, struct conn_target *t)
{
	memset(t, 0, sizeof(*t));
	t->hosts = cl->hosts;
	t->user = cl->user;
	t->key_path = cl->key_path;
	t->known_hosts = cl->known_hosts;
}

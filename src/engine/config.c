#include "engine/config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "ssh/conn.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char *env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? xstrdup(v) : NULL;
}

/* Fields of a cluster, as the file names them. */
enum field_kind { F_TEXT, F_PATH, F_INT };
static const struct field {
	const char	*name;
	enum field_kind	 kind;
	size_t		 off;
} fields[] = {
	{ "hosts", F_TEXT, offsetof(struct cluster_cfg, hosts) },
	{ "user", F_TEXT, offsetof(struct cluster_cfg, user) },
	{ "key", F_PATH, offsetof(struct cluster_cfg, key_path) },
	{ "known_hosts", F_PATH, offsetof(struct cluster_cfg, known_hosts) },
	{ "partitions", F_TEXT, offsetof(struct cluster_cfg, partitions) },
	{ "account", F_TEXT, offsetof(struct cluster_cfg, account) },
	{ "results_root", F_TEXT, offsetof(struct cluster_cfg, results_root) },
	{ "image_cache", F_TEXT, offsetof(struct cluster_cfg, image_cache) },
	{ "cpu_partition", F_TEXT, offsetof(struct cluster_cfg, cpu_partition) },
	{ "poll_seconds", F_INT, offsetof(struct cluster_cfg, poll_s) },
};

/* "~/x" -> "$HOME/x". */
static char *expand_home(const char *p)
{
	const char *home = getenv("HOME");
	if (p[0] == '~' && p[1] == '/' && home != NULL)
		return xasprintf("%s%s", home, p + 1);
	return xstrdup(p);
}

static int at(char **err, const char *file, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int at(char **err, const char *file, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	*err = xasprintf("%s:%zu:%zu: %s", file, n->start_mark.line + 1, n->start_mark.column + 1, msg);
	free(msg);
	return -1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int read_cluster(yaml_document_t *doc, const char *file, const yaml_node_t *name,
    const yaml_node_t *body, struct cluster_cfg *cl, char **err)
{
	yaml_node_pair_t *p;

	memset(cl, 0, sizeof(*cl));
	cl->name = xstrdup(scalar(name));
	if (body->type != YAML_MAPPING_NODE)
		return at(err, file, body, "cluster '%s' must be a mapping of fields (hosts:, user:, ...)",
		    cl->name);
	for (p = body->data.mapping.pairs.start; p < body->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *key = scalar(k), *val = scalar(v);
		const struct field *f = NULL;
		size_t i;

		for (i = 0; key != NULL && i < sizeof(fields) / sizeof(fields[0]); i++)
			if (strcmp(fields[i].name, key) == 0)
				f = &fields[i];
		if (f == NULL)
			return at(err, file, k, "cluster '%s': unknown field '%s' (fields: hosts, user, key, "
			    "known_hosts, partitions, account, results_root, image_cache, cpu_partition, "
			    "poll_seconds)", cl->name, key ? key : "?");
		if (val == NULL || val[0] == '\0')
			return at(err, file, v, "cluster '%s': field '%s' must be a non-empty text",
			    cl->name, key);
		if (f->kind == F_INT) {
			char *end;
			long n = strtol(val, &end, 10);
			if (*end != '\0' || n < 1 || n > 3600)
				return at(err, file, v, "cluster '%s': field '%s' must be seconds from 1 to "
				    "3600", cl->name, key);
			*(int *)((char *)cl + f->off) = (int)n;
		} else {
			char **slot = (char **)((char *)cl + f->off);
			free(*slot);
			*slot = f->kind == F_PATH ? expand_home(val) : xstrdup(val);
		}
	}
	return 0;
}

static char *config_path(void)
{
	const char *p = getenv("TAOTOP_CONFIG"), *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (p != NULL && p[0] != '\0')
		return xstrdup(p);
	if (xdg != NULL && xdg[0] == '/')
		return xasprintf("%s/taotop/config.yaml", xdg);
	return xasprintf("%s/.config/taotop/config.yaml", home != NULL ? home : "");
}

/* Read the file's clusters, if there is a file. */
static int load_file(struct config *cfg, char **err)
{
	char *path = config_path(), *text;
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *p;
	int rc = 0;

	if (access(path, F_OK) != 0) {
		free(path);
		return 0;	/* no file: the environment alone */
	}
	text = file_read_all(path, NULL, err);
	if (text == NULL) {
		free(path);
		return -1;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&parser, &doc)) {
		*err = xasprintf("%s:%zu:%zu: YAML syntax error: %s", path, parser.problem_mark.line + 1,
		    parser.problem_mark.column + 1, parser.problem ? parser.problem : "?");
		yaml_parser_delete(&parser);
		free(text), free(path);
		return -1;
	}
	yaml_parser_delete(&parser);
	root = yaml_document_get_root_node(&doc);
	if (root != NULL && root->type != YAML_MAPPING_NODE)
		rc = at(err, path, root, "the config is a mapping with clusters: and default_cluster:");
	for (p = root && rc == 0 ? root->data.mapping.pairs.start : NULL;
	    p != NULL && p < root->data.mapping.pairs.top && rc == 0; p++) {
		const yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&doc, p->value);
		const char *key = scalar(k);
		if (key != NULL && strcmp(key, "default_cluster") == 0 && scalar(v) != NULL) {
			free(cfg->default_name);
			cfg->default_name = xstrdup(scalar(v));
		} else if (key != NULL && strcmp(key, "theme") == 0 && scalar(v) != NULL) {
			free(cfg->theme);
			cfg->theme = xstrdup(scalar(v));
		} else if (key != NULL && strcmp(key, "log_colors") == 0) {
			const char *b = scalar(v);
			if (b != NULL && (strcmp(b, "true") == 0 || strcmp(b, "render") == 0))
				cfg->log_colors = 1;
			else if (b != NULL && (strcmp(b, "false") == 0 || strcmp(b, "strip") == 0))
				cfg->log_colors = 0;
			else
				rc = at(err, path, v, "log_colors is true (render the logs' colours) "
				    "or false (strip them)");
		} else if (key != NULL && strcmp(key, "clusters") == 0 && v->type == YAML_MAPPING_NODE) {
			yaml_node_pair_t *c;
			for (c = v->data.mapping.pairs.start; c < v->data.mapping.pairs.top && rc == 0; c++) {
				const yaml_node_t *name = yaml_document_get_node(&doc, c->key);
				if (scalar(name) == NULL) {
					rc = at(err, path, name, "a cluster's name must be a text");
					break;
				}
				cfg->clusters = xreallocarray(cfg->clusters, cfg->n + 1, sizeof(*cfg->clusters));
				rc = read_cluster(&doc, path, name, yaml_document_get_node(&doc, c->value),
				    &cfg->clusters[cfg->n], err);
				cfg->n++;
			}
		} else {
			rc = at(err, path, k, "unknown top-level field '%s' (clusters, "
			    "default_cluster, theme, log_colors)",
			    key ? key : "?");
		}
	}
	yaml_document_delete(&doc);
	free(text);
	free(path);
	return rc;
}

/* The environment overrides a cluster's fields (unset ones only stay). */
static void apply_env(struct cluster_cfg *cl)
{
	static const struct { const char *var; size_t off; int path; } vars[] = {
		{ "SLURM_HOSTNAME", offsetof(struct cluster_cfg, hosts), 0 },
		{ "SLURM_USER", offsetof(struct cluster_cfg, user), 0 },
		{ "SSH_KEY_PATH", offsetof(struct cluster_cfg, key_path), 1 },
		{ "TAOTOP_KNOWN_HOSTS", offsetof(struct cluster_cfg, known_hosts), 1 },
		{ "SLURM_PARTITION", offsetof(struct cluster_cfg, partitions), 0 },
		{ "SLURM_ACCOUNT", offsetof(struct cluster_cfg, account), 0 },
		{ "SLURM_BASE_RESULTS_DIR", offsetof(struct cluster_cfg, results_root), 0 },
		{ "TAOTOP_IMAGE_CACHE", offsetof(struct cluster_cfg, image_cache), 0 },
		{ "TAOTOP_CPU_PARTITION", offsetof(struct cluster_cfg, cpu_partition), 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char *v = env(vars[i].var), **slot = (char **)((char *)cl + vars[i].off);
		if (v == NULL)
			continue;
		free(*slot);
		*slot = vars[i].path ? expand_home(v) : xstrdup(v);
		free(v);
	}
	if (getenv("TAOTOP_POLL_S") != NULL && atoi(getenv("TAOTOP_POLL_S")) > 0)
		cl->poll_s = atoi(getenv("TAOTOP_POLL_S"));
	if (cl->partitions == NULL)
		cl->partitions = xstrdup("polar,polar3,polar4,grizzly");
	if (cl->cpu_partition == NULL)
		cl->cpu_partition = xstrdup("cpu_long");
	if (cl->poll_s < 1)
		cl->poll_s = 10;
}

int config_load(struct config *cfg, char **err)
{
	size_t i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->log_colors = -1;
	if (load_file(cfg, err) != 0) {
		config_free(cfg);
		return -1;
	}
	if (cfg->n == 0) {
		/* No file: the seed's variables are the one cluster. */
		cfg->clusters = xcalloc(1, sizeof(*cfg->clusters));
		cfg->clusters[0].name = env("TAOTOP_CLUSTER");
		if (cfg->clusters[0].name == NULL)
			cfg->clusters[0].name = xstrdup("default");
		cfg->n = 1;
	}
	for (i = 0; i < cfg->n; i++) {
		struct cluster_cfg *cl = &cfg->clusters[i];
		const char *missing = NULL;
		apply_env(cl);
		if (cl->hosts == NULL)
			missing = "hosts";
		else if (cl->user == NULL)
			missing = "user";
		if (missing != NULL) {
			*err = xasprintf("cluster '%s' has no %s: set %s in your shell, or %s: in the "
			    "cluster's entry of the config file", cl->name, missing,
			    missing[0] == 'h' ? "SLURM_HOSTNAME (login hosts, comma-separated)"
			    : "SLURM_USER (your user name on the cluster)", missing);
			config_free(cfg);
			return -1;
		}
	}
	return 0;
}

void config_free(struct config *cfg)
{
	size_t i;

	free(cfg->default_name);
	free(cfg->theme);
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

	if (name == NULL)
		name = getenv("TAOTOP_CLUSTER");
	if (name == NULL || name[0] == '\0')
		name = cfg->default_name;
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

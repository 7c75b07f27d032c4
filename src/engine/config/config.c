/*
 * config.yaml: read (one table of fields), the environment applied, and
 * edited in place (the setup form's cluster, the probe's answer, the
 * columns) line by line. Over 800 lines because reading and editing
 * walk the same libyaml document with the same field table; the atomic
 * write itself is util/file.c's.
 */
#include "engine/config/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"
#include "util/yamldoc.h"

int config_name_ok(const char *s)
{
	/* A SLURM name (the record's history names it) that is no hidden file. */
	return slurm_name_ok(s) && s[0] != '.';
}

static char *env(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? xstrdup(v) : NULL;
}

/* Fields of a cluster, as the file names them. */
enum field_kind {
	F_TEXT,		/* non-empty text */
	F_PATH,		/* non-empty text, ~/ expanded */
	F_INT,		/* a number from min to max */
	F_MAYBE_EMPTY,	/* text that may be empty ("" means something) */
	F_LIST,		/* a list of texts, kept one per line */
	F_BOOL,		/* true/false, yes/no */
};
static const struct field {
	const char	*name;
	enum field_kind	 kind;
	size_t		 off;
	int		 min, max;
} fields[] = {
	{ "hosts", F_TEXT, offsetof(struct cluster_cfg, hosts), 0, 0 },
	{ "user", F_TEXT, offsetof(struct cluster_cfg, user), 0, 0 },
	{ "key", F_PATH, offsetof(struct cluster_cfg, key_path), 0, 0 },
	{ "known_hosts", F_PATH, offsetof(struct cluster_cfg, known_hosts), 0, 0 },
	{ "jump", F_TEXT, offsetof(struct cluster_cfg, jump), 0, 0 },
	{ "password_auth", F_BOOL, offsetof(struct cluster_cfg, password_auth), 0, 0 },
	{ "partitions", F_TEXT, offsetof(struct cluster_cfg, partitions), 0, 0 },
	{ "account", F_TEXT, offsetof(struct cluster_cfg, account), 0, 0 },
	{ "results_root", F_TEXT, offsetof(struct cluster_cfg, results_root), 0, 0 },
	{ "image_cache", F_TEXT, offsetof(struct cluster_cfg, image_cache), 0, 0 },
	{ "cpu_partition", F_TEXT, offsetof(struct cluster_cfg, cpu_partition), 0, 0 },
	{ "poll_seconds", F_INT, offsetof(struct cluster_cfg, poll_s), 1, 3600 },
	{ "nccl_env", F_MAYBE_EMPTY, offsetof(struct cluster_cfg, nccl_env), 0, 0 },
	{ "nccl_env_shape", F_TEXT, offsetof(struct cluster_cfg, nccl_env_shape), 0, 0 },
	{ "nccl_ladder", F_LIST, offsetof(struct cluster_cfg, nccl_ladder), 0, 0 },
	{ "nccl_probe_timeout_s", F_INT, offsetof(struct cluster_cfg, nccl_probe_timeout_s), 5, 3600 },
	{ "retry_budget", F_INT, offsetof(struct cluster_cfg, retry_budget), 0, 10 },
	{ "history_days", F_INT, offsetof(struct cluster_cfg, history_days), 0, 366 },
	{ "history_every_seconds", F_INT, offsetof(struct cluster_cfg, history_every_s), 10, 86400 },
	{ "history_max", F_INT, offsetof(struct cluster_cfg, history_max), 1, 5000 },
	{ "gpu_sample_seconds", F_INT, offsetof(struct cluster_cfg, use_s), 0, 86400 },
	{ "gpu_idle_percent", F_INT, offsetof(struct cluster_cfg, idle_percent), 0, 100 },
	{ "gpu_idle_seconds", F_INT, offsetof(struct cluster_cfg, idle_s), 1, 86400 },
	{ "stall_seconds", F_INT, offsetof(struct cluster_cfg, stall_s), 1, 604800 },
	{ "ending_grace_seconds", F_INT, offsetof(struct cluster_cfg, ending_grace_s), 1, 86400 },
	{ "child_timeout_percent", F_INT, offsetof(struct cluster_cfg, child_timeout_pct), 10, 99 },
	{ "max_segments", F_INT, offsetof(struct cluster_cfg, max_segments), 1, 1000 },
};

static char *field_names(void)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		buf_addf(&b, "%s%s", i ? ", " : "", fields[i].name);
	return buf_detach(&b);
}

/* "~/x" -> "$HOME/x". */
static char *expand_home(const char *p)
{
	const char *home = getenv("HOME");
	if (p[0] == '~' && p[1] == '/' && home != NULL)
		return xasprintf("%s%s", home, p + 1);
	return xstrdup(p);
}

static int read_cluster(yaml_document_t *doc, const char *file, const yaml_node_t *name,
    const yaml_node_t *body, struct cluster_cfg *cl, char **err)
{
	yaml_node_pair_t *p;

	memset(cl, 0, sizeof(*cl));
	cl->name = xstrdup(yamldoc_scalar(name));
	cl->retry_budget = -1;
	cl->history_days = -1;
	cl->use_s = cl->idle_percent = cl->idle_s = cl->stall_s = -1;
	if (body->type != YAML_MAPPING_NODE)
		return yamldoc_fail(err, file, body, "cluster '%s' must be a mapping of fields (hosts:, user:, ...)",
		    cl->name);
	for (p = body->data.mapping.pairs.start; p < body->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(doc, p->value);
		const char *key = yamldoc_scalar(k), *val = yamldoc_scalar(v);
		const struct field *f = NULL;
		size_t i;

		for (i = 0; key != NULL && i < sizeof(fields) / sizeof(fields[0]); i++)
			if (strcmp(fields[i].name, key) == 0)
				f = &fields[i];
		if (f == NULL) {
			char *names = field_names();
			int rc = yamldoc_fail(err, file, k, "cluster '%s': unknown field '%s' (fields: %s)",
			    cl->name, key ? key : "?", names);
			free(names);
			return rc;
		}
		if (f->kind == F_LIST) {
			struct buf b;
			yaml_node_item_t *it;
			if (v->type != YAML_SEQUENCE_NODE)
				return yamldoc_fail(err, file, v, "cluster '%s': field '%s' is a list of texts",
				    cl->name, key);
			buf_init(&b);
			for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
				const char *e = yamldoc_scalar(yaml_document_get_node(doc, *it));
				if (e == NULL || strchr(e, '\n') != NULL) {
					buf_free(&b);
					return yamldoc_fail(err, file, v, "cluster '%s': each entry of '%s' is one "
					    "line of text", cl->name, key);
				}
				buf_addf(&b, "%s\n", e);
			}
			free(*(char **)((char *)cl + f->off));
			*(char **)((char *)cl + f->off) = buf_detach(&b);
			continue;
		}
		if (val == NULL || (val[0] == '\0' && f->kind != F_MAYBE_EMPTY))
			return yamldoc_fail(err, file, v, "cluster '%s': field '%s' must be a non-empty text",
			    cl->name, key);
		if (f->kind == F_INT) {
			char *end;
			long n = strtol(val, &end, 10);
			if (*end != '\0' || end == val || n < f->min || n > f->max)
				return yamldoc_fail(err, file, v, "cluster '%s': field '%s' must be a number from "
				    "%d to %d", cl->name, key, f->min, f->max);
			*(int *)((char *)cl + f->off) = (int)n;
		} else if (f->kind == F_BOOL) {
			int yes = strcmp(val, "true") == 0 || strcmp(val, "yes") == 0;
			if (!yes && strcmp(val, "false") != 0 && strcmp(val, "no") != 0)
				return yamldoc_fail(err, file, v, "cluster '%s': field '%s' is true or "
				    "false, not '%s'", cl->name, key, val);
			*(int *)((char *)cl + f->off) = yes;
		} else {
			char **slot = (char **)((char *)cl + f->off);
			free(*slot);
			*slot = f->kind == F_PATH ? expand_home(val) : xstrdup(val);
		}
	}
	return 0;
}

static void entries_free(struct config_entry *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(e[i].name), free(e[i].key);
	free(e);
}

/* The entries of one keys: or columns: field, in the file's order, each
 * with the place of its value (node). */
static void entry_add(struct config_entry **e, size_t *n, const yaml_node_t *node, const char *name,
    const char *key)
{
	struct config_entry *x;

	*e = xreallocarray(*e, *n + 1, sizeof(**e));
	x = &(*e)[(*n)++];
	x->line = (unsigned)node->start_mark.line + 1;
	x->col = (unsigned)node->start_mark.column + 1;
	x->name = xstrdup(name);
	x->key = key != NULL ? xstrdup(key) : NULL;
}

/* keys: { action: key, ... }, kept with each entry's place for the
 * monitor, which knows the actions and keys, to check. */
static int read_keys(yaml_document_t *doc, const char *file, const yaml_node_t *v,
    struct config *cfg, char **err)
{
	yaml_node_pair_t *p;
	struct config_entry *e = NULL;
	size_t n = 0;

	if (v->type != YAML_MAPPING_NODE)
		return yamldoc_fail(err, file, v, "keys is a mapping of actions to keys: { cancel: x, quit: Q }");
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);
		const yaml_node_t *val = yaml_document_get_node(doc, p->value);
		const char *action = yamldoc_scalar(k), *key = yamldoc_scalar(val);
		if (action == NULL || key == NULL || strpbrk(action, " \n") || strpbrk(key, " \n") ||
		    key[0] == '\0') {
			entries_free(e, n);
			return yamldoc_fail(err, file, val, "keys: each entry is an action and one key, like "
			    "cancel: x");
		}
		entry_add(&e, &n, val, action, key);
	}
	entries_free(cfg->keys, cfg->nkeys);
	cfg->keys = e;
	cfg->nkeys = n;
	return 0;
}

/* columns: [slurm, name, state, ...], kept with each entry's place. */
static int read_columns(yaml_document_t *doc, const char *file, const yaml_node_t *v,
    struct config *cfg, char **err)
{
	yaml_node_item_t *it;
	struct config_entry *e = NULL;
	size_t n = 0;

	if (v->type != YAML_SEQUENCE_NODE)
		return yamldoc_fail(err, file, v, "columns is a list, like [slurm, name, state, time, reason]");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		const yaml_node_t *node = yaml_document_get_node(doc, *it);
		const char *name = yamldoc_scalar(node);
		if (name == NULL || name[0] == '\0' || strpbrk(name, " \n")) {
			entries_free(e, n);
			return yamldoc_fail(err, file, node, "columns: each entry is one column's name");
		}
		entry_add(&e, &n, node, name, NULL);
	}
	entries_free(cfg->columns, cfg->ncolumns);
	cfg->columns = e;
	cfg->ncolumns = n;
	return 0;
}

/* notify: a list of bell, osc9, osc777 (or none). */
static int read_notify(yaml_document_t *doc, const char *file, const yaml_node_t *v, unsigned *out,
    char **err)
{
	static const struct { const char *name; unsigned bit; } kinds[] = {
		{ "bell", NOTIFY_BELL }, { "osc9", NOTIFY_OSC9 }, { "osc777", NOTIFY_OSC777 },
		{ "none", 0 },
	};
	yaml_node_item_t *it;
	size_t i;

	*out = 0;
	if (v->type != YAML_SEQUENCE_NODE)
		return yamldoc_fail(err, file, v, "notify is a list: [bell, osc9, osc777], or [none]");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		const yaml_node_t *e = yaml_document_get_node(doc, *it);
		const char *s = yamldoc_scalar(e);
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (s != NULL && strcmp(s, kinds[i].name) == 0)
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0]))
			return yamldoc_fail(err, file, e, "notify: unknown way '%s' (bell, osc9, osc777, none)",
			    s ? s : "?");
		*out |= kinds[i].bit;
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

/* The file's fields into cfg (named path in messages). */
static int parse_text(struct config *cfg, const char *path, const char *text, size_t len,
    char **err)
{
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *p;
	int rc = 0;

	if (yamldoc_load(path, text, len, &doc, err) != 0)
		return -1;
	root = yaml_document_get_root_node(&doc);
	if (root != NULL && root->type != YAML_MAPPING_NODE)
		rc = yamldoc_fail(err, path, root, "the config is a mapping with clusters: and default_cluster:");
	for (p = root && rc == 0 ? root->data.mapping.pairs.start : NULL;
	    p != NULL && p < root->data.mapping.pairs.top && rc == 0; p++) {
		const yaml_node_t *k = yaml_document_get_node(&doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&doc, p->value);
		const char *key = yamldoc_scalar(k);
		if (key != NULL && strcmp(key, "default_cluster") == 0 && yamldoc_scalar(v) != NULL) {
			free(cfg->default_name);
			cfg->default_name = xstrdup(yamldoc_scalar(v));
		} else if (key != NULL && strcmp(key, "theme") == 0 && yamldoc_scalar(v) != NULL) {
			free(cfg->theme);
			cfg->theme = xstrdup(yamldoc_scalar(v));
		} else if (key != NULL && strcmp(key, "log_colors") == 0) {
			const char *b = yamldoc_scalar(v);
			if (b != NULL && (strcmp(b, "true") == 0 || strcmp(b, "render") == 0))
				cfg->log_colors = 1;
			else if (b != NULL && (strcmp(b, "false") == 0 || strcmp(b, "strip") == 0))
				cfg->log_colors = 0;
			else
				rc = yamldoc_fail(err, path, v, "log_colors is true (render the logs' colours) "
				    "or false (strip them)");
		} else if (key != NULL && strcmp(key, "share") == 0) {
			const char *b = yamldoc_scalar(v);
			if (b != NULL && (strcmp(b, "true") == 0 || strcmp(b, "false") == 0))
				cfg->share = strcmp(b, "true") == 0;
			else
				rc = yamldoc_fail(err, path, v, "share is true (the monitor and the "
				    "agent lend their sessions to taotop's commands) or false (each "
				    "command connects on its own)");
		} else if (key != NULL && strcmp(key, "share_idle_minutes") == 0) {
			const char *b = yamldoc_scalar(v);
			char *end = NULL;
			long m = b != NULL ? strtol(b, &end, 10) : -1;
			if (b == NULL || end == b || *end != '\0' || m < 1 || m > 7 * 24 * 60)
				rc = yamldoc_fail(err, path, v, "share_idle_minutes is a whole number of "
				    "minutes from 1 to 10080 (a week): how long the agent keeps a "
				    "session after its last command");
			else
				cfg->share_idle_s = (int)m * 60;
		} else if (key != NULL && strcmp(key, "columns") == 0) {
			rc = read_columns(&doc, path, v, cfg, err);
		} else if (key != NULL && strcmp(key, "keys") == 0) {
			rc = read_keys(&doc, path, v, cfg, err);
		} else if (key != NULL && strcmp(key, "notify") == 0) {
			rc = read_notify(&doc, path, v, &cfg->notify, err);
		} else if (key != NULL && strcmp(key, "clusters") == 0 && v->type == YAML_MAPPING_NODE) {
			yaml_node_pair_t *c;
			for (c = v->data.mapping.pairs.start; c < v->data.mapping.pairs.top && rc == 0; c++) {
				const yaml_node_t *name = yaml_document_get_node(&doc, c->key);
				if (yamldoc_scalar(name) == NULL) {
					rc = yamldoc_fail(err, path, name, "a cluster's name must be a text");
					break;
				}
				if (!config_name_ok(yamldoc_scalar(name))) {
					rc = yamldoc_fail(err, path, name, "cluster name '%s': "
					    CONFIG_NAME_RULE, yamldoc_scalar(name));
					break;
				}
				cfg->clusters = xreallocarray(cfg->clusters, cfg->n + 1, sizeof(*cfg->clusters));
				rc = read_cluster(&doc, path, name, yaml_document_get_node(&doc, c->value),
				    &cfg->clusters[cfg->n], err);
				cfg->n++;
			}
		} else {
			rc = yamldoc_fail(err, path, k, "unknown top-level field '%s' (clusters, "
			    "default_cluster, theme, log_colors, notify, keys, columns, share, "
			    "share_idle_minutes)",
			    key ? key : "?");
		}
	}
	yaml_document_delete(&doc);
	return rc;
}

int config_parse(const char *file, const char *text, size_t len, struct config *cfg, char **err)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->log_colors = -1;
	cfg->share = 1;
	cfg->share_idle_s = CONFIG_SHARE_IDLE_S;
	if (parse_text(cfg, file, text, len, err) != 0) {
		config_free(cfg);
		return -1;
	}
	return 0;
}

/* Read the file's clusters, if there is a file. */
static int load_file(struct config *cfg, char **err)
{
	char *path = config_path(), *text;
	size_t len = 0;
	int rc;

	if (access(path, F_OK) != 0) {
		free(path);
		return 0;	/* no file: the environment alone */
	}
	text = file_read_all(path, &len, err);
	if (text == NULL) {
		free(path);
		return -1;
	}
	rc = parse_text(cfg, path, text, len, err);
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
		{ "TAOTOP_JUMP", offsetof(struct cluster_cfg, jump), 0 },
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
	if (getenv("TAOTOP_RETRY_BUDGET") != NULL && getenv("TAOTOP_RETRY_BUDGET")[0] != '\0')
		cl->retry_budget = atoi(getenv("TAOTOP_RETRY_BUDGET"));
	config_cluster_defaults(cl);
}

void config_cluster_defaults(struct cluster_cfg *cl)
{
	if (cl->partitions == NULL)
		cl->partitions = xstrdup("polar,polar3,polar4,grizzly");
	if (cl->cpu_partition == NULL)
		cl->cpu_partition = xstrdup("cpu_long");
	if (cl->poll_s < 1)
		cl->poll_s = 10;
	if (cl->retry_budget < 0)
		cl->retry_budget = 10;
	if (cl->nccl_probe_timeout_s < 1)
		cl->nccl_probe_timeout_s = 120;
	if (cl->history_days < 0)
		cl->history_days = 7;
	if (cl->history_every_s < 1)
		cl->history_every_s = 300;
	if (cl->history_max < 1)
		cl->history_max = 1000;
	if (cl->use_s < 0)
		cl->use_s = 60;
	if (cl->idle_percent < 0)
		cl->idle_percent = 5;
	if (cl->idle_s < 1)
		cl->idle_s = 600;
	if (cl->stall_s < 1)
		cl->stall_s = 1800;
	if (cl->ending_grace_s < 1)
		cl->ending_grace_s = 120;
	if (cl->child_timeout_pct < 1)
		cl->child_timeout_pct = 95;
	if (cl->max_segments < 1)
		cl->max_segments = 20;
}

int config_load(struct config *cfg, char **err)
{
	const char *hosts = getenv("SLURM_HOSTNAME");
	size_t i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->log_colors = -1;
	cfg->share = 1;
	cfg->share_idle_s = CONFIG_SHARE_IDLE_S;
	if (load_file(cfg, err) != 0) {
		config_free(cfg);
		return -1;
	}
	if (cfg->n == 0 && (hosts == NULL || hosts[0] == '\0')) {
		/* A new user: nothing to connect to yet, which is not an error
		 * of theirs; the caller offers the setup. */
		char *path = config_path();
		*err = xasprintf("no cluster is configured yet: run 'taotop init' (or 'taotop' for "
		    "the setup form) to write %s, or set SLURM_HOSTNAME", path);
		free(path);
		config_free(cfg);
		return CONFIG_NONE;
	}
	if (cfg->n == 0 && getenv("TAOTOP_CLUSTER") != NULL && getenv("TAOTOP_CLUSTER")[0] != '\0' &&
	    !config_name_ok(getenv("TAOTOP_CLUSTER"))) {
		*err = xasprintf("TAOTOP_CLUSTER='%s': " CONFIG_NAME_RULE, getenv("TAOTOP_CLUSTER"));
		config_free(cfg);
		return -1;
	}
	if (cfg->n == 0) {
		/* No file: the seed's variables are the one cluster. */
		cfg->clusters = xcalloc(1, sizeof(*cfg->clusters));
		cfg->clusters[0].retry_budget = -1;
		cfg->clusters[0].history_days = -1;
		cfg->clusters[0].use_s = -1;
		cfg->clusters[0].name = env("TAOTOP_CLUSTER");
		if (cfg->clusters[0].name == NULL)
			cfg->clusters[0].name = xstrdup("default");
		cfg->n = 1;
	}
	for (i = 0; i < cfg->n; i++) {
		struct cluster_cfg *cl = &cfg->clusters[i];
		apply_env(cl);
		/* No user is fine: OpenSSH's rules give one (user@ in hosts,
		 * ~/.ssh/config's User, else the local user's name). */
		if (cl->hosts == NULL) {
			*err = xasprintf("cluster '%s' has no hosts: set SLURM_HOSTNAME (login hosts, "
			    "comma-separated) in your shell, or hosts: in the cluster's entry of "
			    "the config file", cl->name);
			config_free(cfg);
			return -1;
		}
	}
	return 0;
}

void config_cluster_free(struct cluster_cfg *cl)
{
	free(cl->name), free(cl->hosts), free(cl->user);
	free(cl->key_path), free(cl->known_hosts), free(cl->jump);
	free(cl->partitions), free(cl->account), free(cl->results_root);
	free(cl->nccl_env), free(cl->nccl_env_shape), free(cl->nccl_ladder);
	free(cl->image_cache), free(cl->cpu_partition);
	memset(cl, 0, sizeof(*cl));
}

void config_free(struct config *cfg)
{
	size_t i;

	free(cfg->default_name);
	free(cfg->theme);
	entries_free(cfg->keys, cfg->nkeys);
	entries_free(cfg->columns, cfg->ncolumns);
	for (i = 0; i < cfg->n; i++)
		config_cluster_free(&cfg->clusters[i]);
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
	t->ssh_config = getenv("TAOTOP_SSH_CONFIG");	/* NULL: ~/.ssh/config */
	t->jump = cl->jump;
	t->password_auth = cl->password_auth;
}

/* ---- remembering the probe's answer --------------------------------------------------------- */

char *config_file_path(void)
{
	return config_path();
}

/* A YAML double-quoted scalar. */
static char *yaml_quoted(const char *s)
{
	struct buf b;

	buf_init(&b);
	buf_addc(&b, '"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			buf_addc(&b, '\\');
		buf_addc(&b, *s);
	}
	buf_addc(&b, '"');
	return buf_detach(&b);
}

/* Lines of text, '\n' kept: text edited line by line, so that byte
 * offsets (which libyaml counts in characters) never matter. */
struct lines {
	char	**v;
	size_t	  n;
};

static void split_lines(const char *text, struct lines *l)
{
	const char *p = text;

	l->v = NULL;
	l->n = 0;
	while (*p != '\0') {
		size_t len = strcspn(p, "\n");
		l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
		l->v[l->n++] = xasprintf("%.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
}

static void insert_line(struct lines *l, size_t at, char *line)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof(*l->v));
	l->v[at] = line;
	l->n++;
}

/* The line after the last one node n takes. */
static size_t line_after(const struct lines *l, const yaml_node_t *n)
{
	size_t line = n->end_mark.line, col = n->end_mark.column, i;

	if (line >= l->n)
		return l->n;
	/* A block ends where the next token starts: when only blanks come
	 * before that on its line, the node ended on the line above. */
	for (i = 0; i < col && l->v[line][i] == ' '; i++)
		;
	return i == col ? line : line + 1;
}

static const yaml_node_t *value_of(yaml_document_t *doc, const yaml_node_t *map, const char *key,
    const yaml_node_t **key_node)
{
	yaml_node_pair_t *p;

	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);
		if (yamldoc_scalar(k) != NULL && strcmp(yamldoc_scalar(k), key) == 0) {
			if (key_node != NULL)
				*key_node = k;
			return yaml_document_get_node(doc, p->value);
		}
	}
	return NULL;
}

static const yaml_node_t *last_value(yaml_document_t *doc, const yaml_node_t *map)
{
	return yaml_document_get_node(doc, (map->data.mapping.pairs.top - 1)->value);
}

static int write_atomically(const char *path, const struct lines *l, char **err)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *tmp;
	struct buf b;
	size_t i;
	int rc;

	if (slash != NULL)
		*slash = '\0';
	tmp = xasprintf("%s/.config.yaml-XXXXXX", slash != NULL ? dir : ".");
	buf_init(&b);
	for (i = 0; i < l->n; i++)
		buf_adds(&b, l->v[i]);
	rc = file_write_atomic(path, tmp, b.data, b.len, 0);
	if (rc == FILE_FAILED_CREATE)
		*err = xasprintf("cannot write beside %s: %s", path, strerror(errno));
	else if (rc == FILE_FAILED_WRITE)
		*err = xasprintf("cannot write %s: %s", path, strerror(errno));
	else if (rc != 0)
		*err = xasprintf("cannot replace %s: %s", path, strerror(errno));
	buf_free(&b);
	free(tmp);
	free(dir);
	return rc == 0 ? 0 : -1;
}

/* The config file as lines, and as a YAML document when it exists (else
 * its folder is made and a first comment line stands for it); `why`
 * completes the message of a file that does not parse. */
static int edit_open(const char *path, struct lines *l, yaml_document_t *doc, int *have_doc,
    const char *why, char **err)
{
	char *text;

	l->v = NULL;
	l->n = 0;
	*have_doc = 0;
	if (access(path, F_OK) == 0) {
		text = file_read_all(path, NULL, err);
		if (text == NULL)
			return -1;
		if (yamldoc_load(path, text, strlen(text), doc, err) != 0) {
			char *e = *err;
			*err = xasprintf("%s; fix it, then %s", e, why);
			free(e);
			free(text);
			return -1;
		}
		*have_doc = 1;
		split_lines(text, l);
		free(text);
	} else {
		char *dir = xstrdup(path), *slash = strrchr(dir, '/');
		if (slash != NULL) {
			*slash = '\0';
			(void)file_mkdir_p(dir, 0700);
		}
		free(dir);
		insert_line(l, 0, xstrdup("# taotop's config; see templates/config.example.yaml.\n"));
	}
	return 0;
}

static void edit_close(struct lines *l, yaml_document_t *doc, int have_doc)
{
	size_t i;

	if (have_doc)
		yaml_document_delete(doc);
	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* Fields of cluster `name`, one line each. A cluster the file does not
 * have yet gets all of them, after the last one; with `adding`, a cluster
 * it has already is an error. Else (one field) the field's line is
 * replaced, or added after the cluster's last field. */
static int edit_cluster(const char *name, const char *const *field, const char *const *value,
    size_t n, int adding, const char *why, char **err)
{
	char *path = config_path(), *qn = yaml_quoted(name);
	struct lines l = { NULL, 0 };
	yaml_document_t doc;
	const yaml_node_t *root, *clusters, *cl, *v, *k;
	int rc = -1, have_doc = 0;
	size_t i, at;

	if (edit_open(path, &l, &doc, &have_doc, why, err) != 0)
		goto out;
	root = have_doc ? yaml_document_get_root_node(&doc) : NULL;
	clusters = value_of(&doc, root, "clusters", NULL);
	cl = clusters != NULL ? value_of(&doc, clusters, name, NULL) : NULL;
	if (root != NULL && root->type == YAML_MAPPING_NODE && root->data.mapping.style ==
	    YAML_FLOW_MAPPING_STYLE) {
		*err = xasprintf("%s is written as one flow mapping; add cluster '%s' by hand", path,
		    name);
		goto out;
	}
	if (clusters == NULL) {
		if (l.n > 0 && l.v[l.n - 1][0] != '\0' && strchr(l.v[l.n - 1], '\n') == NULL)
			insert_line(&l, l.n, xstrdup("\n"));
		insert_line(&l, l.n, xstrdup("clusters:\n"));
		insert_line(&l, l.n, xasprintf("  %s:\n", qn));
		for (i = 0; i < n; i++) {
			char *qv = yaml_quoted(value[i]);
			insert_line(&l, l.n, xasprintf("    %s: %s\n", field[i], qv));
			free(qv);
		}
	} else if (clusters->type != YAML_MAPPING_NODE || clusters->data.mapping.style ==
	    YAML_FLOW_MAPPING_STYLE || clusters->data.mapping.pairs.top ==
	    clusters->data.mapping.pairs.start || (cl != NULL && (cl->type != YAML_MAPPING_NODE ||
	    cl->data.mapping.style == YAML_FLOW_MAPPING_STYLE ||
	    cl->data.mapping.pairs.top == cl->data.mapping.pairs.start))) {
		*err = xasprintf("%s: clusters are not written one field per line; %s cluster '%s' "
		    "by hand", path, adding ? "add" : "edit", name);
		goto out;
	} else if (cl == NULL) {
		const yaml_node_t *first = yaml_document_get_node(&doc,
		    clusters->data.mapping.pairs.start->key);
		int ind = (int)first->start_mark.column;
		at = line_after(&l, last_value(&doc, clusters));
		insert_line(&l, at++, xasprintf("%*s%s:\n", ind, "", qn));
		for (i = 0; i < n; i++) {
			char *qv = yaml_quoted(value[i]);
			insert_line(&l, at++, xasprintf("%*s%s: %s\n", ind + 2, "", field[i], qv));
			free(qv);
		}
	} else if (adding) {
		*err = xasprintf("%s has a cluster called '%s' already: choose another name, or "
		    "edit that cluster in the file", path, name);
		goto out;
	} else {
		char *qv = yaml_quoted(value[0]);
		if ((v = value_of(&doc, cl, field[0], &k)) != NULL && k->start_mark.line < l.n &&
		    v->start_mark.line == k->start_mark.line) {
			/* Replace the field's line: one line, the way taotop writes it. */
			i = k->start_mark.line;
			free(l.v[i]);
			l.v[i] = xasprintf("%*s%s: %s\n", (int)k->start_mark.column, "", field[0], qv);
		} else {
			const yaml_node_t *first = yaml_document_get_node(&doc,
			    cl->data.mapping.pairs.start->key);
			insert_line(&l, line_after(&l, last_value(&doc, cl)), xasprintf("%*s%s: %s\n",
			    (int)first->start_mark.column, "", field[0], qv));
		}
		free(qv);
	}
	rc = write_atomically(path, &l, err);
out:
	edit_close(&l, &doc, have_doc);
	free(qn);
	free(path);
	return rc;
}

static int save_cluster_field(const char *name, const char *field, const char *value,
    char **err)
{
	return edit_cluster(name, &field, &value, 1, 0, "taotop can remember the NCCL knobs there",
	    err);
}

int config_add_cluster(const struct cluster_cfg *c, char **err)
{
	const char *field[8], *value[8];
	size_t n = 0;

	/* What the user gave, in the order the example file shows it. */
#define ADD(f, v) do { if ((v) != NULL && (v)[0] != '\0') field[n] = (f), value[n++] = (v); } while (0)
	ADD("hosts", c->hosts);
	ADD("user", c->user);
	ADD("key", c->key_path);
	ADD("partitions", c->partitions);
	ADD("account", c->account);
	ADD("results_root", c->results_root);
#undef ADD
	return edit_cluster(c->name, field, value, n, 1, "taotop can add the cluster there", err);
}

int config_save_nccl_env(const char *name, const char *env, const char *shape, char **err)
{
	if (save_cluster_field(name, "nccl_env", env, err) != 0)
		return -1;
	return shape != NULL ? save_cluster_field(name, "nccl_env_shape", shape, err) : 0;
}

int config_save_columns(const char *const *names, size_t n, char **err)
{
	char *path = config_path(), *line;
	struct lines l = { NULL, 0 };
	yaml_document_t doc;
	const yaml_node_t *root, *v, *k = NULL;
	struct buf b;
	int rc = -1, have_doc = 0;
	size_t i, from, to;

	buf_init(&b);
	buf_adds(&b, "columns: [");
	for (i = 0; i < n; i++)
		buf_addf(&b, "%s%s", i ? ", " : "", names[i]);
	buf_adds(&b, "]\n");
	line = buf_detach(&b);
	if (edit_open(path, &l, &doc, &have_doc, "taotop can save the columns there", err) != 0)
		goto out;
	root = have_doc ? yaml_document_get_root_node(&doc) : NULL;
	if (root != NULL && (root->type != YAML_MAPPING_NODE ||
	    root->data.mapping.style == YAML_FLOW_MAPPING_STYLE)) {
		*err = xasprintf("%s is not written one field per line; add %.*s to it by hand", path,
		    (int)strlen(line) - 1, line);
		goto out;
	}
	v = value_of(&doc, root, "columns", &k);
	if (v != NULL && k->start_mark.column != 0) {
		*err = xasprintf("%s: columns is not a top-level field", path);
		goto out;
	}
	if (v != NULL) {
		/* The field's lines, a block list's items included, give way to
		 * one line (none: back to taotop's choice). */
		from = k->start_mark.line;
		to = line_after(&l, v);
		for (i = from; i < to && i < l.n; i++)
			free(l.v[i]);
		memmove(&l.v[from], &l.v[to], (l.n - to) * sizeof(*l.v));
		l.n -= to - from;
		if (n > 0)
			insert_line(&l, from, line), line = NULL;
	} else if (n > 0) {
		insert_line(&l, l.n, line), line = NULL;
	}
	rc = write_atomically(path, &l, err);
out:
	edit_close(&l, &doc, have_doc);
	free(line);
	free(path);
	return rc;
}

#include "engine/submit/execution.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/command.h"
#include "engine/submit/spec.h"
#include "util/buf.h"
#include "util/xmalloc.h"
#include "util/yamldoc.h"

struct ectx {
	const char	*file;
	yaml_document_t	*doc;
	char		**err;
};

static int fail_at(struct ectx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(struct ectx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = yamldoc_vfail(c->err, c->file, n, fmt, ap);
	va_end(ap);
	return rc;
}

static const yaml_node_t *node(struct ectx *c, int id)
{
	return yaml_document_get_node(c->doc, id);
}

int exec_relpath_ok(const char *p)
{
	const char *s;

	if (p == NULL || p[0] == '\0' || p[0] == '/')
		return 0;
	for (s = p; *s != '\0'; s++)
		if (isspace((unsigned char)*s))
			return 0;
	for (s = p; s != NULL; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL)
		if (s[0] == '.' && s[1] == '.' && (s[2] == '/' || s[2] == '\0'))
			return 0;
	return 1;
}

/* p with "." parts and empty ones left out ("./a//b" is "a/b"). */
static char *normal(const char *p)
{
	struct buf b;
	const char *s = p;

	buf_init(&b);
	buf_adds(&b, "");
	while (*s != '\0') {
		size_t n = strcspn(s, "/");
		if (n > 0 && !(n == 1 && s[0] == '.'))
			buf_addf(&b, "%s%.*s", b.len ? "/" : "", (int)n, s);
		s += n + (s[n] == '/');
	}
	return buf_detach(&b);
}

char *exec_destination_clash(char *const *dest, size_t n)
{
	size_t i, k, la, lb;
	char *a, *b, *why = NULL;

	for (i = 0; i < n && why == NULL; i++)
		for (k = 0; k < i && why == NULL; k++) {
			a = normal(dest[k]), b = normal(dest[i]);
			la = strlen(a), lb = strlen(b);
			if (strcmp(a, b) == 0)
				why = xasprintf("'%s' and '%s' name one file", dest[k], dest[i]);
			else if ((la < lb && strncmp(a, b, la) == 0 && b[la] == '/') ||
			    (lb < la && strncmp(a, b, lb) == 0 && a[lb] == '/'))
				why = xasprintf("'%s' and '%s': one would be a folder the other is in",
				    dest[k], dest[i]);
			free(a), free(b);
		}
	return why;
}

static int get_text(struct ectx *c, const char *field, const yaml_node_t *n, char **out)
{
	const char *v = yamldoc_scalar(n);

	if (v == NULL || v[0] == '\0')
		return fail_at(c, n, "field 'execution.%s' must be a non-empty text", field);
	free(*out);
	*out = xstrdup(v);
	return 0;
}

/* A list of non-empty texts. */
static int get_texts(struct ectx *c, const char *field, const yaml_node_t *n, char ***out,
    size_t *count)
{
	yaml_node_item_t *it;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(c, n, "field 'execution.%s' must be a list of texts", field);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const char *v = yamldoc_scalar(node(c, *it));
		if (v == NULL || v[0] == '\0')
			return fail_at(c, node(c, *it), "field 'execution.%s': every entry must be a "
			    "non-empty text", field);
		*out = xreallocarray(*out, *count + 1, sizeof(**out));
		(*out)[(*count)++] = xstrdup(v);
	}
	return 0;
}

/* A placeholder the command could not fill is named now, not at submit. */
static int placeholders_ok(struct ectx *c, const char *field, const yaml_node_t *n,
    const char *v)
{
	char *why = NULL;
	int rc;

	if (command_check_word(v, &why) == 0)
		return 0;
	rc = fail_at(c, n, "field 'execution.%s': %s", field, why);
	free(why);
	return rc;
}

static int get_env(struct ectx *c, const yaml_node_t *n, struct spec_exec *e)
{
	yaml_node_pair_t *p;

	if (n->type != YAML_MAPPING_NODE)
		return fail_at(c, n, "field 'execution.environment' must be a mapping of NAME: value");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *name = yamldoc_scalar(k);
		if (!spec_env_name_ok(name))
			return fail_at(c, k, "field 'execution.environment': '%s' is not a variable "
			    "name (^[A-Z_][A-Z0-9_]*$)", name ? name : "?");
		if (yamldoc_scalar(v) == NULL)
			return fail_at(c, v, "field 'execution.environment': the value of %s must be a "
			    "text", name);
		if (placeholders_ok(c, "environment", v, yamldoc_scalar(v)) != 0)
			return -1;
		e->env = xreallocarray(e->env, e->nenv + 1, sizeof(*e->env));
		e->env[e->nenv].key = xstrdup(name);
		e->env[e->nenv++].value = xstrdup(yamldoc_scalar(v));
	}
	return 0;
}

static int get_distributed(struct ectx *c, const yaml_node_t *n, struct spec_exec *e)
{
	yaml_node_pair_t *p;
	int have_launcher = 0;

	if (n->type != YAML_MAPPING_NODE)
		return fail_at(c, n, "field 'execution.distributed' must be a mapping {launcher, "
		    "processes_per_node}");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *key = yamldoc_scalar(k) ? yamldoc_scalar(k) : "", *val = yamldoc_scalar(v);
		char *end = NULL;
		long x;

		if (strcmp(key, "launcher") == 0) {
			if (val != NULL && strcmp(val, "direct") == 0)
				e->launcher = EXEC_DIRECT;
			else if (val != NULL && strcmp(val, "torchrun") == 0)
				e->launcher = EXEC_TORCHRUN;
			else
				return fail_at(c, v, "field 'execution.distributed.launcher' must be "
				    "direct or torchrun");
			have_launcher = 1;
		} else if (strcmp(key, "processes_per_node") == 0 || strcmp(key, "tasks_per_node") == 0) {
			x = val != NULL ? strtol(val, &end, 10) : 0;
			if (val == NULL || *val == '\0' || *end != '\0' || x < 1 || x > 1024)
				return fail_at(c, v, "field 'execution.distributed.%s' must be a whole "
				    "number from 1", key);
			if (key[0] == 't' && x != 1)
				return fail_at(c, v, "field 'execution.distributed.tasks_per_node' must be "
				    "1: one Pyxis task a node, torchrun starts the processes");
			if (key[0] == 'p')
				e->procs_per_node = (int)x;
		} else {
			return fail_at(c, k, "field 'execution.distributed': unknown key '%s' (keys: "
			    "launcher, processes_per_node, tasks_per_node)", key);
		}
	}
	if (!have_launcher || e->procs_per_node < 0)
		return fail_at(c, n, "field 'execution.distributed' needs launcher and "
		    "processes_per_node");
	return 0;
}

static int lower_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!(isdigit((unsigned char)s[i]) || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

static void file_free(struct exec_file *f)
{
	free(f->source), free(f->destination), free(f->sha256);
}

static int get_file(struct ectx *c, const yaml_node_t *e, struct exec_file *f)
{
	yaml_node_pair_t *p;

	if (e->type != YAML_MAPPING_NODE)
		return fail_at(c, e, "field 'execution.supporting_files': each entry is {source, "
		    "destination, sha256}");
	for (p = e->data.mapping.pairs.start; p < e->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *key = yamldoc_scalar(k) ? yamldoc_scalar(k) : "", *val = yamldoc_scalar(v);
		char **slot = strcmp(key, "source") == 0 ? &f->source
		    : strcmp(key, "destination") == 0 ? &f->destination
		    : strcmp(key, "sha256") == 0 ? &f->sha256 : NULL;

		if (slot == NULL)
			return fail_at(c, k, "field 'execution.supporting_files': unknown key '%s' "
			    "(keys: source, destination, sha256)", key);
		if (val == NULL || val[0] == '\0')
			return fail_at(c, v, "field 'execution.supporting_files.%s' must be a non-empty "
			    "text", key);
		if (slot != &f->sha256 && !exec_relpath_ok(val))
			return fail_at(c, v, "field 'execution.supporting_files.%s': '%s' must be a "
			    "relative path without '..' or spaces (%s)", key, val,
			    slot == &f->source ? "from the bundle's folder"
			    : "below <job_dir>/" EXEC_HELPERS_DIR);
		if (slot == &f->sha256 && !lower_hex64(val))
			return fail_at(c, v, "field 'execution.supporting_files.sha256' must be 64 "
			    "lower-case hex digits (sha256sum FILE)");
		free(*slot);
		*slot = xstrdup(val);
	}
	if (f->source == NULL || f->destination == NULL || f->sha256 == NULL)
		return fail_at(c, e, "field 'execution.supporting_files': each entry needs source, "
		    "destination and sha256");
	return 0;
}

static int get_files(struct ectx *c, const yaml_node_t *n, struct spec_exec *e)
{
	yaml_node_item_t *it;
	char **dest;
	char *why;
	size_t i;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(c, n, "field 'execution.supporting_files' must be a list of {source, "
		    "destination, sha256}");
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		struct exec_file f = { NULL, NULL, NULL };
		if (get_file(c, node(c, *it), &f) != 0) {
			file_free(&f);
			return -1;
		}
		e->files = xreallocarray(e->files, e->nfiles + 1, sizeof(*e->files));
		e->files[e->nfiles++] = f;
	}
	dest = xcalloc(e->nfiles + 1, sizeof(*dest));
	for (i = 0; i < e->nfiles; i++)
		dest[i] = e->files[i].destination;
	why = exec_destination_clash(dest, e->nfiles);
	free(dest);
	if (why != NULL) {
		int rc = fail_at(c, n, "field 'execution.supporting_files': destinations %s: give "
		    "each file its own", why);
		free(why);
		return rc;
	}
	return 0;
}

static int get_completion(struct ectx *c, const yaml_node_t *n, struct spec_exec *e)
{
	yaml_node_pair_t *p;
	size_t i, m;

	if (n->type != YAML_MAPPING_NODE)
		return fail_at(c, n, "field 'execution.completion' must be a mapping "
		    "{child_exit_code_path, structured_status_path, success_states}");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = node(c, p->key), *v = node(c, p->value);
		const char *key = yamldoc_scalar(k) ? yamldoc_scalar(k) : "";
		int rc;

		if (strcmp(key, "child_exit_code_path") == 0)
			rc = get_text(c, "completion.child_exit_code_path", v, &e->exit_code_path);
		else if (strcmp(key, "structured_status_path") == 0)
			rc = get_text(c, "completion.structured_status_path", v, &e->status_path);
		else if (strcmp(key, "success_states") == 0)
			rc = get_texts(c, "completion.success_states", v, &e->success_states,
			    &e->nsuccess);
		else
			return fail_at(c, k, "field 'execution.completion': unknown key '%s' (keys: "
			    "child_exit_code_path, structured_status_path, success_states)", key);
		if (rc != 0)
			return -1;
		if (key[0] != 's' || key[1] != 'u') {
			const char *val = yamldoc_scalar(v);
			if (placeholders_ok(c, key[0] == 'c' ? "completion.child_exit_code_path"
			    : "completion.structured_status_path", v, val) != 0)
				return -1;
			if (strchr(val, '\n') != NULL || strstr(val, "/../") != NULL ||
			    strncmp(val, "../", 3) == 0)
				return fail_at(c, v, "field 'execution.completion.%s': '%s' must be a "
				    "path without '..' or line breaks", key, val);
		}
	}
	if (e->exit_code_path == NULL)
		return fail_at(c, n, "field 'execution.completion' needs child_exit_code_path "
		    "(e.g. {results_dir}/child_exit_code)");
	/* The schema lets either come alone: a status file with no states
	 * named is judged by SUCCESS (the bank's terminal word); states with
	 * no file have nothing to judge, and are kept unused. */
	if (e->nsuccess == 0 && e->status_path != NULL) {
		e->success_states = xcalloc(1, sizeof(*e->success_states));
		e->success_states[0] = xstrdup("SUCCESS");
		e->nsuccess = 1;
	}
	for (i = 0; i < e->nsuccess; i++)
		for (m = 0; m < i; m++)
			if (strcmp(e->success_states[i], e->success_states[m]) == 0)
				return fail_at(c, n, "field 'execution.completion.success_states': '%s' "
				    "is listed twice", e->success_states[i]);
	return 0;
}

/* One key of the execution mapping. */
static int get_key(struct ectx *c, const yaml_node_t *k, const yaml_node_t *v, struct spec_exec *e)
{
	const char *key = yamldoc_scalar(k);

	if (strcmp(key, "environment") == 0)
		return get_env(c, v, e);
	if (strcmp(key, "pre_commands") == 0)
		return get_texts(c, key, v, &e->pre, &e->npre);
	if (strcmp(key, "post_commands") == 0)
		return get_texts(c, key, v, &e->post, &e->npost);
	if (strcmp(key, "post_scope") == 0) {
		const char *s = yamldoc_scalar(v);
		if (s == NULL || (strcmp(s, "leader") != 0 && strcmp(s, "all") != 0))
			return fail_at(c, v, "field 'execution.post_scope' must be leader (task 0 only) "
			    "or all");
		e->post_all = strcmp(s, "all") == 0;
		return 0;
	}
	if (strcmp(key, "distributed") == 0)
		return get_distributed(c, v, e);
	if (strcmp(key, "supporting_files") == 0)
		return get_files(c, v, e);
	if (strcmp(key, "completion") == 0)
		return get_completion(c, v, e);
	return fail_at(c, k, "field 'execution': unknown key '%s' (keys: environment, "
	    "pre_commands, post_commands, post_scope, distributed, supporting_files, completion)",
	    key);
}

int exec_parse(const char *file, yaml_document_t *doc, const yaml_node_t *n,
    struct spec_exec *out, char **err)
{
	struct ectx c = { file, doc, err };
	yaml_node_pair_t *p, *q;

	memset(out, 0, sizeof(*out));
	out->procs_per_node = -1;
	out->given = 1;
	if (n->type != YAML_MAPPING_NODE)
		return fail_at(&c, n, "field 'execution' must be a mapping (environment, "
		    "pre_commands, post_commands, post_scope, distributed, supporting_files, "
		    "completion)");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *key = yamldoc_scalar(node(&c, p->key));
		if (key == NULL)
			return fail_at(&c, node(&c, p->key), "field 'execution': a key must be a text");
		for (q = n->data.mapping.pairs.start; q < p; q++)
			if (strcmp(key, yamldoc_scalar(node(&c, q->key))) == 0)
				return fail_at(&c, node(&c, p->key), "field 'execution.%s' is given "
				    "twice", key);
		if (get_key(&c, node(&c, p->key), node(&c, p->value), out) != 0)
			return -1;
	}
	return 0;
}

void exec_free(struct spec_exec *e)
{
	size_t i;

	for (i = 0; i < e->nenv; i++)
		free(e->env[i].key), free(e->env[i].value);
	free(e->env);
	for (i = 0; i < e->npre; i++)
		free(e->pre[i]);
	free(e->pre);
	for (i = 0; i < e->npost; i++)
		free(e->post[i]);
	free(e->post);
	for (i = 0; i < e->nfiles; i++)
		file_free(&e->files[i]);
	free(e->files);
	for (i = 0; i < e->nsuccess; i++)
		free(e->success_states[i]);
	free(e->success_states);
	free(e->exit_code_path), free(e->status_path);
	memset(e, 0, sizeof(*e));
	e->procs_per_node = -1;
}

char *exec_completion_path(const char *path, const struct command_vars *v, char **err)
{
	char *w = command_expand_word(path, v, err), *abs;

	if (w == NULL || w[0] == '/')
		return w;
	abs = xasprintf("%s/%s", v->results_dir, w);
	free(w);
	return abs;
}

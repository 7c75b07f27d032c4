#include "engine/submit/spec.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "engine/submit/command.h"
#include "engine/submit/spec_priv.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"
#include "util/yamldoc.h"

#define fail_at spec_fail_at

int spec_fail_at(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int rc;
	char *msg;

	va_start(ap, fmt);
	if (c->json) {
		/* A document built from JSON has no marks to name. */
		msg = xvasprintf(fmt, ap);
		*c->err = xasprintf("%s: %s", c->file, msg);
		free(msg);
		rc = -1;
	} else {
		rc = yamldoc_vfail(c->err, c->file, n, fmt, ap);
	}
	va_end(ap);
	return rc;
}

static int get_string(struct ctx *c, const char *field, const yaml_node_t *n, char **out)
{
	const char *v = yamldoc_scalar(n);

	if (v == NULL || v[0] == '\0')
		return fail_at(c, n, "field '%s' must be a non-empty text", field);
	free(*out);
	*out = xstrdup(v);
	return 0;
}

char *spec_name_problem(const char *name)
{
	size_t i, n = strlen(name);
	unsigned char ch;

	if (n == 0)
		return xstrdup("is empty: give the run a name, e.g. lr-0.01");
	if (n > SPEC_NAME_MAX)
		return xasprintf("is %zu characters long: at most %d", n, SPEC_NAME_MAX);
	for (i = 0; i < n; i++) {
		ch = (unsigned char)name[i];
		if (ch < 0x80 && (isalnum(ch) || strchr("-_.+=@,:", ch) != NULL))
			continue;
		if (ch > 0x20 && ch < 0x7f)
			return xasprintf("has '%c' at character %zu: use letters, digits and "
			    "- _ . + = @ , : only", ch, i + 1);
		return xasprintf("has %s at character %zu: use letters, digits and "
		    "- _ . + = @ , : only", ch == ' ' ? "a space" : "a byte that is no letter", i + 1);
	}
	return NULL;
}

static int get_name(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	const char *v = yamldoc_scalar(n);
	char *why;
	int rc;

	if (v == NULL)
		return fail_at(c, n, "field 'name' must be a text, the run's name (e.g. lr-0.01)");
	if ((why = spec_name_problem(v)) != NULL) {
		rc = fail_at(c, n, "field 'name' %s", why);
		free(why);
		return rc;
	}
	free(s->name);
	s->name = xstrdup(v);
	return 0;
}

static int get_int(struct ctx *c, const char *field, const yaml_node_t *n, int min, int max,
    int *out)
{
	const char *v = yamldoc_scalar(n);
	char *end;
	long x;

	errno = 0;
	x = v != NULL ? strtol(v, &end, 10) : 0;
	if (v == NULL || *v == '\0' || *end != '\0' || errno != 0 || x < min || x > max)
		return fail_at(c, n, "field '%s' must be a whole number from %d to %d", field, min, max);
	*out = (int)x;
	return 0;
}

static int get_hours(struct ctx *c, const char *field, const yaml_node_t *n, double *out)
{
	const char *v = yamldoc_scalar(n);
	char *end;
	double x;

	x = v != NULL ? strtod(v, &end) : 0;
	if (v == NULL || *v == '\0' || *end != '\0' || !(x > 0) || x > 24 * 365)
		return fail_at(c, n, "field '%s' must be a number of hours above 0 (e.g. 4 or 3.5)",
		    field);
	*out = x;
	return 0;
}

static int get_bool(struct ctx *c, const char *field, const yaml_node_t *n, int *out)
{
	const char *v = yamldoc_scalar(n);

	if (v != NULL && (strcmp(v, "true") == 0 || strcmp(v, "yes") == 0))
		*out = 1;
	else if (v != NULL && (strcmp(v, "false") == 0 || strcmp(v, "no") == 0))
		*out = 0;
	else
		return fail_at(c, n, "field '%s' must be true or false", field);
	return 0;
}

int spec_env_name_ok(const char *s)
{
	size_t i;

	if (s == NULL || !(isupper((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; s[i] != '\0'; i++)
		if (!(isupper((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

/* A list of texts; a single text counts as a list of one. */
static int get_list(struct ctx *c, const char *field, const yaml_node_t *n, int names,
    char ***out, size_t *count)
{
	yaml_node_item_t *it;

	if (n->type == YAML_SCALAR_NODE) {
		const yaml_node_t *only = n;
		if (names && !spec_env_name_ok(yamldoc_scalar(only)))
			return fail_at(c, only, "field '%s': '%s' is not a variable name (A-Z, 0-9, _)",
			    field, yamldoc_scalar(only));
		*out = xreallocarray(*out, *count + 1, sizeof(**out));
		(*out)[(*count)++] = xstrdup(yamldoc_scalar(only));
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(c, n, "field '%s' must be a list", field);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = yaml_document_get_node(&c->doc, *it);
		const char *v = yamldoc_scalar(e);
		if (v == NULL || v[0] == '\0')
			return fail_at(c, e, "field '%s': every entry must be a non-empty text", field);
		if (names && !spec_env_name_ok(v))
			return fail_at(c, e, "field '%s': '%s' is not a variable name (A-Z, 0-9, _)",
			    field, v);
		*out = xreallocarray(*out, *count + 1, sizeof(**out));
		(*out)[(*count)++] = xstrdup(v);
	}
	return 0;
}

char *spec_join_words(char *const *argv, size_t argc)
{
	struct buf shown;
	size_t i;

	buf_init(&shown);
	buf_adds(&shown, "");
	for (i = 0; i < argc; i++)
		buf_addf(&shown, "%s%s", i ? " " : "", argv[i]);
	return buf_detach(&shown);
}

static int get_command(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	size_t i;

	if (n->type == YAML_SCALAR_NODE) {
		char *copy = xstrdup(yamldoc_scalar(n)), *w, *save = NULL;
		for (w = strtok_r(copy, " \t\n", &save); w != NULL; w = strtok_r(NULL, " \t\n", &save)) {
			s->argv = xreallocarray(s->argv, s->argc + 1, sizeof(*s->argv));
			s->argv[s->argc++] = xstrdup(w);
		}
		free(copy);
	} else if (n->type == YAML_SEQUENCE_NODE) {
		if (get_list(c, "command", n, 0, &s->argv, &s->argc) != 0)
			return -1;
	} else {
		return fail_at(c, n, "field 'command' must be a text or a list of words");
	}
	if (s->argc == 0)
		return fail_at(c, n, "field 'command' is empty");
	for (i = 0; i < s->argc; i++) {
		char *why = NULL;
		if (command_check_word(s->argv[i], &why) != 0) {
			int rc = fail_at(c, n, "%s", why);
			free(why);
			return rc;
		}
	}
	free(s->command);
	s->command = spec_join_words(s->argv, s->argc);
	return 0;
}

static int get_env(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	yaml_node_pair_t *p;

	if (n->type != YAML_MAPPING_NODE)
		return fail_at(c, n, "field 'extra_env' must be a mapping of NAME: value");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		if (!spec_env_name_ok(yamldoc_scalar(k)))
			return fail_at(c, k, "field 'extra_env': '%s' is not a variable name (A-Z, 0-9, _)",
			    yamldoc_scalar(k) ? yamldoc_scalar(k) : "?");
		if (yamldoc_scalar(v) == NULL)
			return fail_at(c, v, "field 'extra_env': the value of %s must be a text", yamldoc_scalar(k));
		s->extra_env = xreallocarray(s->extra_env, s->nextra_env + 1, sizeof(*s->extra_env));
		s->extra_env[s->nextra_env].key = xstrdup(yamldoc_scalar(k));
		s->extra_env[s->nextra_env++].value = xstrdup(yamldoc_scalar(v));
	}
	return 0;
}

static int hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return s[64] == '\0';
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int get_files(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	yaml_node_item_t *it;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(c, n, "field 'supporting_files' must be a list of {path, sha256}");
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = yaml_document_get_node(&c->doc, *it);
		struct spec_file f = { NULL, NULL };
		yaml_node_pair_t *p;

		if (e->type != YAML_MAPPING_NODE)
			return fail_at(c, e, "field 'supporting_files': each entry is {path, sha256}");
		for (p = e->data.mapping.pairs.start; p < e->data.mapping.pairs.top; p++) {
			const yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
			const yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
			const char *key = yamldoc_scalar(k) ? yamldoc_scalar(k) : "";
			char **slot = strcmp(key, "path") == 0 ? &f.path
			    : strcmp(key, "sha256") == 0 ? &f.sha256 : NULL;
			if (slot == NULL || yamldoc_scalar(v) == NULL) {
				free(f.path), free(f.sha256);
				return fail_at(c, k, "field 'supporting_files': unknown or empty key '%s' "
				    "(want path and sha256)", key);
			}
			free(*slot);
			*slot = xstrdup(yamldoc_scalar(v));
		}
		if (f.path == NULL || f.sha256 == NULL || !hex64(f.sha256)) {
			free(f.path), free(f.sha256);
			return fail_at(c, e, "field 'supporting_files': each entry needs a path and the "
			    "sha256 of its content (64 hex digits): sha256sum FILE");
		}
		{
			/* Staged by their names beside spec.yaml: one name, one file. */
			const char *base = basename_of(f.path);
			size_t i;
			for (i = 0; i < s->nfiles; i++)
				if (strcmp(basename_of(s->files[i].path), base) == 0) {
					int rc = fail_at(c, e, "field 'supporting_files': %s and %s would "
					    "both be staged as specs/%s: rename one", s->files[i].path,
					    f.path, base);
					free(f.path), free(f.sha256);
					return rc;
				}
			if (strcmp(base, "spec.yaml") == 0 || base[0] == '\0') {
				int rc = fail_at(c, e, "field 'supporting_files': %s would be staged as "
				    "specs/%s, %s: rename it", f.path, base, base[0] ? "where the "
				    "staged TAO spec is" : "which names no file");
				free(f.path), free(f.sha256);
				return rc;
			}
		}
		s->files = xreallocarray(s->files, s->nfiles + 1, sizeof(*s->files));
		s->files[s->nfiles++] = f;
	}
	return 0;
}

/* A key of TAO's spec as the bank's bundle writes one (field gpu_spec_key,
 * resume_key): names joined by dots ("train.num_gpus") into *out; null (or
 * ~) says there is none (*none). */
static int get_dotted_key(struct ctx *c, const yaml_node_t *n, const char *field,
    const char *example, char **out, int *none)
{
	const char *v = yamldoc_scalar(n);
	size_t i;
	int start = 1;

	if (v != NULL && (strcmp(v, "null") == 0 || strcmp(v, "~") == 0 || v[0] == '\0') &&
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		*none = 1;
		return 0;
	}
	for (i = 0; v != NULL && v[i] != '\0'; i++) {
		int ok = v[i] == '.' ? !start : isalpha((unsigned char)v[i]) || v[i] == '_' ||
		    (!start && isdigit((unsigned char)v[i]));
		if (!ok)
			break;
		start = v[i] == '.';
	}
	if (v == NULL || v[0] == '\0' || v[i] != '\0' || start)
		return fail_at(c, n, "field '%s' must be a key of TAO's spec, its names joined by "
		    "dots (e.g. %s), or null", field, example);
	free(*out);
	*out = xstrdup(v);
	return 0;
}

/* gpu_spec_key: where the GPU count goes. */
static int get_spec_key(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	return get_dotted_key(c, n, "gpu_spec_key", "train.num_gpus", &s->gpu_spec_key,
	    &s->gpu_spec_none);
}

/* resume_key: the override the segments pass the checkpoint as; null: no
 * key, TAO resumes as it would. */
static int get_resume_key(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	return get_dotted_key(c, n, "resume_key", "train.resume_training_checkpoint_path",
	    &s->resume_key, &s->resume_key_none);
}

/* TAO's own spec, kept as the text it was written in. */
static int get_tao_spec(struct ctx *c, const yaml_node_t *v, struct spec *s)
{
	size_t back;

	if (v->type != YAML_MAPPING_NODE)
		return fail_at(c, v, "field 'spec' must be a mapping (TAO's own spec)");
	/* A block mapping is taken from the start of its first line, so every
	 * line keeps one indentation; a flow one ({...}) as it stands. */
	back = v->data.mapping.style == YAML_FLOW_MAPPING_STYLE ? 0 : v->start_mark.column;
	s->tao_spec = xstrndup(c->text + v->start_mark.index - back,
	    v->end_mark.index - v->start_mark.index + back);
	return 0;
}

/* The field k: v of the bundle into s; k is known and given once. */
/* cosmos: {backend: rl|framework, rollout_nodes: N} (engine/submit/cosmos.h). */
static int get_cosmos(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	yaml_node_pair_t *p;

	if (n->type != YAML_MAPPING_NODE)
		return fail_at(c, n, "field 'cosmos' must be a mapping: {backend: rl} or "
		    "{backend: framework}");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		const char *key = yamldoc_scalar(k) ? yamldoc_scalar(k) : "";
		const char *val = yamldoc_scalar(v);

		if (strcmp(key, "backend") == 0) {
			if (val == NULL || (strcmp(val, "rl") != 0 && strcmp(val, "framework") != 0))
				return fail_at(c, v, "field 'cosmos.backend' is '%s': write rl (Cosmos-RL) "
				    "or framework (Cosmos Framework)", val ? val : "?");
			free(s->cosmos_backend);
			s->cosmos_backend = xstrdup(val);
		} else if (strcmp(key, "rollout_nodes") == 0) {
			if (get_int(c, "cosmos.rollout_nodes", v, 0, 1023, &s->cosmos_rollout_nodes) != 0)
				return -1;
		} else {
			return fail_at(c, k, "field 'cosmos': unknown key '%s' (keys: backend, "
			    "rollout_nodes)", key);
		}
	}
	if (s->cosmos_backend == NULL)
		return fail_at(c, n, "field 'cosmos' needs a backend: rl (Cosmos-RL) or framework "
		    "(Cosmos Framework)");
	return 0;
}

static int get_field(struct ctx *c, const char *key, const yaml_node_t *v, struct spec *s)
{
	if (strcmp(key, "name") == 0) return get_name(c, v, s);
	if (strcmp(key, "image") == 0) return get_string(c, key, v, &s->image);
	if (strcmp(key, "network_arch") == 0) return get_string(c, key, v, &s->network_arch);
	if (strcmp(key, "action") == 0) return get_string(c, key, v, &s->action);
	if (strcmp(key, "command") == 0) return get_command(c, v, s);
	if (strcmp(key, "results_dir") == 0) return get_string(c, key, v, &s->results_dir);
	if (strcmp(key, "partition") == 0) return get_string(c, key, v, &s->partition);
	if (strcmp(key, "account") == 0) return get_string(c, key, v, &s->account);
	if (strcmp(key, "gpus") == 0) return get_int(c, key, v, 0, 4096, &s->gpus);
	if (strcmp(key, "nodes") == 0) return get_int(c, key, v, 1, 1024, &s->nodes);
	if (strcmp(key, "gpus_per_node") == 0) return get_int(c, key, v, 1, 64, &s->gpus_per_node);
	if (strcmp(key, "cpus_per_task") == 0) return get_int(c, key, v, 1, 1024, &s->cpus_per_task);
	if (strcmp(key, "time_hours") == 0) return get_hours(c, key, v, &s->time_hours);
	if (strcmp(key, "requeue") == 0) return get_bool(c, key, v, &s->requeue);
	if (strcmp(key, "resume") == 0) return get_bool(c, key, v, &s->resume);
	if (strcmp(key, "auto_resume") == 0) return get_bool(c, key, v, &s->auto_resume);
	if (strcmp(key, "resume_key") == 0) return get_resume_key(c, v, s);
	if (strcmp(key, "child_timeout_hours") == 0)
		return get_hours(c, key, v, &s->child_timeout_hours);
	if (strcmp(key, "max_segments") == 0) return get_int(c, key, v, 1, 1000, &s->max_segments);
	if (strcmp(key, "gpu_spec_key") == 0) return get_spec_key(c, v, s);
	if (strcmp(key, "datasets") == 0) return get_list(c, key, v, 0, &s->datasets, &s->ndatasets);
	if (strcmp(key, "secrets") == 0) return get_list(c, key, v, 1, &s->secrets, &s->nsecrets);
	if (strcmp(key, "extra_env") == 0) return get_env(c, v, s);
	if (strcmp(key, "supporting_files") == 0) return get_files(c, v, s);
	if (strcmp(key, "spec") == 0) return get_tao_spec(c, v, s);
	if (strcmp(key, "execution") == 0) return exec_parse(c->file, &c->doc, v, &s->exec, c->err);
	if (strcmp(key, "cosmos") == 0) return get_cosmos(c, v, s);
	return 0;
}

int spec_get_field(struct ctx *c, const char *key, const yaml_node_t *v, struct spec *s)
{
	return get_field(c, key, v, s);
}

int spec_field_known(const char *key)
{
	static const char *const known =
	    " name image network_arch action command datasets results_dir gpus gpus_per_node nodes cpus_per_task"
	    " time_hours child_timeout_hours partition account requeue resume auto_resume resume_key"
	    " max_segments gpu_spec_key extra_env secrets supporting_files spec execution cosmos ";
	char pattern[64];

	if (key == NULL || strlen(key) > 60)
		return 0;
	snprintf(pattern, sizeof(pattern), " %s ", key);
	return strstr(known, pattern) != NULL;
}

/* Each field of the root mapping: known, given once, then read. */
static int get_fields(struct ctx *c, const yaml_node_t *root, struct spec *s)
{
	yaml_node_pair_t *p, *q;
	int rc = 0;

	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top && rc == 0; p++) {
		const yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const char *key = yamldoc_scalar(k);

		if (!spec_field_known(key))
			return fail_at(c, k, "unknown field '%s' (fields: name, image, network_arch, action, "
			    "command, datasets, results_dir, gpus, gpus_per_node, nodes, cpus_per_task, time_hours, "
			    "child_timeout_hours, partition, account, requeue, resume, auto_resume, "
			    "resume_key, max_segments, gpu_spec_key, extra_env, secrets, "
			    "supporting_files, spec, execution, cosmos)",
			    key ? key : "?");
		for (q = root->data.mapping.pairs.start; q < p; q++) {
			const char *earlier = yamldoc_scalar(yaml_document_get_node(&c->doc, q->key));
			if (earlier != NULL && strcmp(earlier, key) == 0)
				rc = fail_at(c, k, "field '%s' is given twice", key);
		}
		if (rc == 0)
			rc = get_field(c, key, yaml_document_get_node(&c->doc, p->value), s);
	}
	return rc;
}

/* Nor an execution.environment name, for the same reason. */
static int exec_not_secret(struct ctx *c, const yaml_node_t *root, const struct spec *s)
{
	size_t i, k;

	for (i = 0; i < s->exec.nenv; i++)
		for (k = 0; k < s->nsecrets; k++)
			if (strcmp(s->exec.env[i].key, s->secrets[k]) == 0)
				return fail_at(c, root, "field 'execution.environment': %s is listed in "
				    "'secrets', so its value comes from your environment or the .env "
				    "beside the bundle, never from the bundle: remove %s from it",
				    s->secrets[k], s->secrets[k]);
	return 0;
}

/* No extra_env key is a name of secrets:, whatever its value: the job
 * exports extra_env after loading the secrets' sidecar, so a literal in the
 * bundle would silently replace the user's real secret. */
static int secret_not_in_env(struct ctx *c, const yaml_node_t *root, const struct spec *s)
{
	yaml_node_pair_t *p, *q;
	size_t i;

	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		if (yamldoc_scalar(k) == NULL || strcmp(yamldoc_scalar(k), "extra_env") != 0 ||
		    v->type != YAML_MAPPING_NODE)
			continue;
		for (q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
			const yaml_node_t *e = yaml_document_get_node(&c->doc, q->key);
			for (i = 0; i < s->nsecrets; i++)
				if (yamldoc_scalar(e) != NULL && strcmp(yamldoc_scalar(e), s->secrets[i]) == 0)
					return fail_at(c, e, "field 'extra_env': %s is listed in 'secrets', "
					    "so its value comes from your environment or the .env beside the "
					    "bundle, never from the bundle: remove %s from extra_env",
					    s->secrets[i], s->secrets[i]);
		}
	}
	return exec_not_secret(c, root, s);
}

/* The bundle's required image, and its command (TAO's own entry point from
 * network_arch and action when none is given). */
static int complete(struct ctx *c, const yaml_node_t *root, struct spec *s)
{
	char *why = NULL;
	int rc;

	if (s->image == NULL)
		return fail_at(c, root, "field 'image' is missing: the container image (a .sqsh path "
		    "or a registry image)");
	if (s->command != NULL)
		return 0;
	if (command_default(s->network_arch, s->action, &s->argv, &s->argc, &why) != 0) {
		rc = fail_at(c, root, "%s", why);
		free(why);
		return rc;
	}
	s->command = spec_join_words(s->argv, s->argc);
	s->command_is_taos = 1;
	return 0;
}

/* JSON: a .json file, or a text that opens with '{' and parses as
 * JSON (a YAML flow mapping that is not JSON stays YAML). */
static int spec_is_json(const char *file, const char *text, size_t len)
{
	size_t fl = strlen(file), i = 0;
	cJSON *j;

	if (fl > 5 && strcmp(file + fl - 5, ".json") == 0)
		return 1;
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i == len || text[i] != '{')
		return 0;
	j = cJSON_ParseWithLength(text, len);
	cJSON_Delete(j);
	return j != NULL;
}

int spec_parse(const char *file, const char *text, size_t len, struct spec *s, char **err)
{
	yaml_node_t *root;
	struct ctx c = { .file = file, .text = text, .err = err };
	int rc;

	memset(s, 0, sizeof(*s));
	s->gpus = s->nodes = s->cpus_per_task = s->requeue = s->gpus_per_node = s->resume = -1;
	s->auto_resume = s->max_segments = -1;
	s->time_hours = s->child_timeout_hours = -1;
	s->exec.procs_per_node = -1;
	if (spec_is_json(file, text, len)) {
		c.json = 1;
		if (bank_json_load(&c, text, len) != 0)
			return -1;
	} else if (yamldoc_load(file, text, len, &c.doc, err) != 0) {
		return -1;
	}
	root = yaml_document_get_root_node(&c.doc);
	if (root == NULL || root->type != YAML_MAPPING_NODE) {
		*err = xasprintf("%s:1:1: a spec bundle is a mapping of fields (image:, command:, ...); "
		    "see templates/example.spec.yaml", file);
		yaml_document_delete(&c.doc);
		return -1;
	}
	if (bank_field_of(&c, root) != NULL) {
		s->format = SPEC_FORMAT_BANK;
		rc = bank_read(&c, root, s);
	} else {
		rc = get_fields(&c, root, s);
		if (rc == 0)
			rc = secret_not_in_env(&c, root, s);
		if (rc == 0)
			rc = complete(&c, root, s);
	}
	yaml_document_delete(&c.doc);
	if (rc != 0)
		spec_free(s);
	return rc;
}

int spec_load(const char *path, struct spec *out, char **err)
{
	size_t len;
	char *text = file_read_all(path, &len, err);
	int rc;

	if (text == NULL)
		return -1;
	rc = spec_parse(path, text, len, out, err);
	free(text);
	return rc;
}

void spec_free(struct spec *s)
{
	size_t i;

	free(s->name), free(s->image), free(s->network_arch), free(s->action), free(s->command);
	free(s->results_dir), free(s->partition), free(s->account), free(s->tao_spec);
	free(s->gpu_spec_key);
	free(s->resume_key);
	free(s->mode), free(s->config_format), free(s->tao_spec_read);
	for (i = 0; i < s->ninputs; i++) {
		free(s->inputs[i].spec_key), free(s->inputs[i].uri), free(s->inputs[i].path);
	}
	free(s->inputs);
	for (i = 0; i < s->noutputs; i++)
		free(s->outputs[i].spec_key), free(s->outputs[i].path), free(s->outputs[i].under);
	free(s->outputs);
	free(s->cosmos_backend);
	for (i = 0; i < s->argc; i++)
		free(s->argv[i]);
	free(s->argv);
	for (i = 0; i < s->ndatasets; i++)
		free(s->datasets[i]);
	free(s->datasets);
	for (i = 0; i < s->nsecrets; i++)
		free(s->secrets[i]);
	free(s->secrets);
	for (i = 0; i < s->nextra_env; i++) {
		free(s->extra_env[i].key);
		free(s->extra_env[i].value);
	}
	free(s->extra_env);
	for (i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].sha256);
	}
	free(s->files);
	exec_free(&s->exec);
	memset(s, 0, sizeof(*s));
	s->gpus = s->nodes = s->cpus_per_task = s->requeue = s->gpus_per_node = s->resume = -1;
	s->auto_resume = s->max_segments = -1;
	s->time_hours = s->child_timeout_hours = -1;
	s->exec.procs_per_node = -1;
}

static int write_to_buf(void *data, unsigned char *buffer, size_t size)
{
	buf_add(data, buffer, size);
	return 1;
}

/* Parse YAML text and emit it again through libyaml's emitter. */
static int reemit(const char *text, size_t len, struct buf *out, char **err)
{
	yaml_parser_t parser;
	yaml_emitter_t emitter;
	yaml_document_t doc;
	int ok;

	yaml_parser_initialize(&parser);
	/* libyaml asserts on a NULL input: an empty text is "". */
	yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""),
	    text ? len : 0);
	if (!yaml_parser_load(&parser, &doc)) {
		*err = xasprintf("spec: TAO's spec does not parse: %s", parser.problem ? parser.problem : "?");
		yaml_parser_delete(&parser);
		return -1;
	}
	yaml_parser_delete(&parser);
	yaml_emitter_initialize(&emitter);
	yaml_emitter_set_output(&emitter, write_to_buf, out);
	yaml_emitter_set_unicode(&emitter, 1);
	ok = yaml_emitter_open(&emitter) && yaml_emitter_dump(&emitter, &doc) &&
	    yaml_emitter_close(&emitter);
	if (!ok)
		*err = xasprintf("spec: libyaml could not write TAO's spec: %s",
		    emitter.problem ? emitter.problem : "?");
	yaml_emitter_delete(&emitter);	/* dump deleted the document */
	return ok ? 0 : -1;
}

int spec_emit_tao(const struct spec *s, char **yaml, char **err)
{
	struct buf first, again;

	*yaml = NULL;
	if (s->tao_spec == NULL) {
		*yaml = xstrdup("{}\n");
		return 0;
	}
	buf_init(&first);
	buf_init(&again);
	/* The slice is indented as it was inside the bundle; libyaml takes
	 * the first line's indentation as the block's. */
	if (reemit(s->tao_spec, strlen(s->tao_spec), &first, err) != 0) {
		buf_free(&first);
		return -1;
	}
	if (first.len == 0) {
		/* Nothing but blanks or comments: an empty spec. */
		buf_free(&first);
		*yaml = xstrdup("{}\n");
		return 0;
	}
	if (reemit(first.data, first.len, &again, err) != 0) {
		buf_free(&first);
		buf_free(&again);
		return -1;
	}
	if (first.len != again.len || memcmp(first.data, again.data, first.len) != 0) {
		*err = xstrdup("spec: TAO's spec does not read back as it was written");
		buf_free(&first);
		buf_free(&again);
		return -1;
	}
	buf_free(&again);
	*yaml = buf_detach(&first);
	return 0;
}

/* The mapping's value at name (len bytes), or NULL. */
static yaml_node_t *child(yaml_document_t *doc, yaml_node_t *map, const char *name, size_t len)
{
	yaml_node_pair_t *p;

	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = yamldoc_scalar(yaml_document_get_node(doc, p->key));
		if (k != NULL && strlen(k) == len && memcmp(k, name, len) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

char *spec_tao_value(const struct spec *s, const char *dotted, int *list_len)
{
	yaml_document_t doc;
	yaml_node_t *n;
	const char *p = dotted;
	char *err = NULL, *value = NULL;
	int len = -1;

	if (s->tao_spec == NULL)
		goto out;
	if (yamldoc_load("spec", s->tao_spec, strlen(s->tao_spec), &doc, &err) != 0) {
		free(err);	/* the spec's own check names it */
		goto out;
	}
	n = yaml_document_get_root_node(&doc);
	while (n != NULL && *p != '\0') {
		size_t k = strcspn(p, ".");
		n = child(&doc, n, p, k);
		p += k + (p[k] == '.');
	}
	if (n != NULL && n->type == YAML_SCALAR_NODE)
		value = xstrdup(yamldoc_scalar(n));
	else if (n != NULL && n->type == YAML_SEQUENCE_NODE)
		len = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
	yaml_document_delete(&doc);
out:
	if (list_len != NULL)
		*list_len = len;
	return value;
}

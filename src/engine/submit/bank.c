/*
 * The skill bank's spec bundle (tao-skill-bank skills/core/tao-artifacts/
 * references/spec_bundle.schema.json) read into taotop's one form, struct
 * spec, with the schema's own rules enforced as a JSON Schema validator
 * would: each refusal names the field by its JSON path
 * (declared_inputs[1].spec_key), after file:line:column for YAML.
 */
#include "engine/submit/bank.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "engine/submit/command.h"
#include "engine/submit/spec_priv.h"
#include "util/buf.h"
#include "util/xmalloc.h"
#include "util/yamldoc.h"

/* The schema's top-level properties; the first seven only the bank has. */
static const char *const bank_only[] = { "mode", "config_format", "args", "declared_inputs",
	"declared_outputs", "compute_shape", "upload_excludes" };
static const char *const bank_common[] = { "network_arch", "action", "image", "command",
	"spec", "gpu_spec_key", "execution" };
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))
#define FIELDS	"network_arch, action, image, mode, command, config_format, spec, args, " \
	"declared_inputs, declared_outputs, upload_excludes, compute_shape, gpu_spec_key, execution"

static int in_list(const char *const *list, size_t n, const char *key)
{
	size_t i;

	for (i = 0; key != NULL && i < n; i++)
		if (strcmp(list[i], key) == 0)
			return 1;
	return 0;
}

static yaml_node_t *node(struct ctx *c, int id)
{
	return yaml_document_get_node(&c->doc, id);
}

/* "file:L:C: path: message" (JSON: "file: path: message"); -1. */
static int bfail(struct ctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bfail(struct ctx *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int rc;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	rc = spec_fail_at(c, n, "%s: %s", path, msg);
	free(msg);
	return rc;
}

/* ---- scalars as a YAML loader types them ---------------------------------------------------- */

enum kind { K_NULL, K_BOOL, K_INT, K_FLOAT, K_STR };

static int all_digits(const char *s, int (*ok)(int))
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!ok((unsigned char)*s))
			return 0;
	return 1;
}

static int is_octal(int ch)
{
	return ch >= '0' && ch <= '7';
}

static int is_float_text(const char *v)
{
	const char *p = v;
	int digits = 0;

	if (*p == '+' || *p == '-')
		p++;
	if (strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0)
		return 1;
	if (p == v && (strcmp(p, ".nan") == 0 || strcmp(p, ".NaN") == 0 || strcmp(p, ".NAN") == 0))
		return 1;
	while (isdigit((unsigned char)*p))
		p++, digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (digits == 0)
		return 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return *p == '\0';
}

static enum kind scalar_kind_of(const char *v, int plain)
{
	const char *p = v;

	if (!plain)
		return K_STR;
	if (*v == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	    strcmp(v, "NULL") == 0)
		return K_NULL;
	if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0 ||
	    strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "FALSE") == 0)
		return K_BOOL;
	if (*p == '+' || *p == '-')
		p++;
	if (all_digits(p, isdigit) || (strncmp(p, "0x", 2) == 0 && all_digits(p + 2, isxdigit)) ||
	    (strncmp(p, "0o", 2) == 0 && all_digits(p + 2, is_octal)))
		return K_INT;
	if (is_float_text(v))
		return K_FLOAT;
	return K_STR;
}

static enum kind kind(const yaml_node_t *n)
{
	return scalar_kind_of((const char *)n->data.scalar.value,
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE || n->data.scalar.style == YAML_ANY_SCALAR_STYLE);
}

static const char *type_name(const yaml_node_t *n)
{
	static const char *const names[] = { "null", "a boolean", "an integer", "a number", "a text" };

	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (n->type == YAML_SEQUENCE_NODE)
		return "a list";
	return names[kind(n)];
}

/* ---- JSON into the same document ------------------------------------------------------------ */

/* j into doc: its node's id, or 0 when libyaml refuses a text (it
 * takes UTF-8 only; cJSON passes other bytes through). */
static int add_json(yaml_document_t *doc, const cJSON *j)
{
	char *text;
	int id, k, v;
	const cJSON *e;

	if (cJSON_IsObject(j)) {
		id = yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE);
		cJSON_ArrayForEach(e, j) {
			k = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)e->string,
			    (int)strlen(e->string), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
			v = k != 0 ? add_json(doc, e) : 0;
			if (id == 0 || v == 0)
				return 0;
			yaml_document_append_mapping_pair(doc, id, k, v);
		}
		return id;
	}
	if (cJSON_IsArray(j)) {
		id = yaml_document_add_sequence(doc, NULL, YAML_BLOCK_SEQUENCE_STYLE);
		cJSON_ArrayForEach(e, j) {
			v = add_json(doc, e);
			if (id == 0 || v == 0)
				return 0;
			yaml_document_append_sequence_item(doc, id, v);
		}
		return id;
	}
	if (cJSON_IsString(j))
		return yaml_document_add_scalar(doc, NULL, (yaml_char_t *)j->valuestring,
		    (int)strlen(j->valuestring), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	text = cJSON_IsNull(j) ? xstrdup("null") : cJSON_IsTrue(j) ? xstrdup("true")
	    : cJSON_IsFalse(j) ? xstrdup("false") : cJSON_PrintUnformatted(j);
	id = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)text, (int)strlen(text),
	    YAML_PLAIN_SCALAR_STYLE);
	if (cJSON_IsNumber(j))
		cJSON_free(text);
	else
		free(text);
	return id;
}

int bank_json_load(struct ctx *c, const char *text, size_t len)
{
	const char *end = NULL;
	cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	size_t line = 1, col = 1;
	const char *p;

	if (j == NULL) {
		const char *at = cJSON_GetErrorPtr();
		for (p = text; at != NULL && p < at && p < text + len; p++)
			if (*p == '\n')
				line++, col = 1;
			else
				col++;
		*c->err = xasprintf("%s:%zu:%zu: JSON syntax error: this is not valid JSON", c->file,
		    line, col);
		return -1;
	}
	if (!yaml_document_initialize(&c->doc, NULL, NULL, NULL, 1, 1)) {
		cJSON_Delete(j);
		*c->err = xasprintf("%s: out of memory", c->file);
		return -1;
	}
	if (add_json(&c->doc, j) == 0) {
		cJSON_Delete(j);
		yaml_document_delete(&c->doc);
		*c->err = xasprintf("%s: a text in it is not UTF-8", c->file);
		return -1;
	}
	cJSON_Delete(j);
	return 0;
}

/* ---- detection ------------------------------------------------------------------------------ */

const char *bank_field_of(struct ctx *c, const yaml_node_t *root)
{
	yaml_node_pair_t *p;

	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const char *k = yamldoc_scalar(node(c, p->key));
		size_t i;
		for (i = 0; k != NULL && i < NELEM(bank_only); i++)
			if (strcmp(k, bank_only[i]) == 0)
				return bank_only[i];
	}
	return NULL;
}

/* ---- spec pointers: a.b[0].c ---------------------------------------------------------------- */

struct seg {
	char	*name;		/* NULL: an index */
	long	 index;
};

static void segs_free(struct seg *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].name);
	free(s);
}

/* The pointer's parts, or -1 with *why. */
static int parse_pointer(const char *ptr, struct seg **out, size_t *n, char **why)
{
	const char *p = ptr;
	struct seg *s = NULL;
	size_t k = 0;

	*out = NULL, *n = 0;
	while (*p != '\0') {
		s = xreallocarray(s, k + 1, sizeof(*s));
		if (*p == '[') {
			char *end;
			errno = 0;
			s[k].name = NULL;
			s[k].index = isdigit((unsigned char)p[1]) ? strtol(p + 1, &end, 10) : -1;
			if (k == 0 || s[k].index < 0 || *end != ']' || errno != 0) {
				segs_free(s, k);
				*why = xasprintf("'%s' is not a pointer into the spec (names joined by "
				    "dots, list indices as [0]: dataset.train_data_sources[0].image_dir)", ptr);
				return -1;
			}
			k++;
			p = end + 1;
			if (*p == '.')
				p++;
			continue;
		}
		size_t len = strcspn(p, ".[");
		if (len == 0) {
			segs_free(s, k);
			*why = xasprintf("'%s' is not a pointer into the spec (names joined by dots, "
			    "list indices as [0]: dataset.train_data_sources[0].image_dir)", ptr);
			return -1;
		}
		s[k].name = xstrndup(p, len);
		s[k++].index = -1;
		p += len;
		if (*p == '.') {
			p++;
			if (*p == '\0' || *p == '.' || *p == '[') {
				segs_free(s, k);
				*why = xasprintf("'%s' is not a pointer into the spec (an empty name)",
				    ptr);
				return -1;
			}
		}
	}
	if (k == 0) {
		*why = xstrdup("is empty");
		return -1;
	}
	*out = s, *n = k;
	return 0;
}

/* The text of segs[0..upto) again, for messages. */
static char *segs_text(const struct seg *s, size_t upto)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	buf_adds(&b, "");
	for (i = 0; i < upto; i++) {
		if (s[i].name != NULL)
			buf_addf(&b, "%s%s", i ? "." : "", s[i].name);
		else
			buf_addf(&b, "[%ld]", s[i].index);
	}
	return buf_detach(&b);
}

/* Whether v is text libyaml takes (UTF-8, no NUL inside). */
static int utf8_ok(const char *v)
{
	yaml_document_t d;
	int ok;

	if (!yaml_document_initialize(&d, NULL, NULL, NULL, 1, 1))
		return 0;
	ok = yaml_document_add_scalar(&d, NULL, (yaml_char_t *)v, (int)strlen(v),
	    YAML_PLAIN_SCALAR_STYLE) != 0;
	yaml_document_delete(&d);
	return ok;
}

/* Set doc's value at ptr to value (a scalar of the style given), making
 * the maps on the way; value NULL: only look (is the place there to
 * set?). *old: the value there already, a scalar's text (caller frees),
 * or NULL. -1 with *why. */
static int pointer_set(yaml_document_t *doc, const char *ptr, const char *value,
    yaml_scalar_style_t style, char **old, char **why)
{
	struct seg *s;
	size_t n, i;
	int cur = 1, rc = 0;

	if (old != NULL)
		*old = NULL;
	if (parse_pointer(ptr, &s, &n, why) != 0)
		return -1;
	if (value != NULL && !utf8_ok(value)) {
		segs_free(s, n);
		*why = xstrdup("the path is not UTF-8 text");
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		yaml_node_t *at = yaml_document_get_node(doc, cur);
		int last = i + 1 == n, next = 0;
		char *where = segs_text(s, i);

		if (s[i].name != NULL) {
			yaml_node_pair_t *p;
			int found = 0;
			if (at == NULL || at->type != YAML_MAPPING_NODE) {
				*why = xasprintf("'%s' in the spec is not a mapping, so it has no '%s'",
				    where, s[i].name);
				rc = -1;
			}
			for (p = rc == 0 ? at->data.mapping.pairs.start : NULL; p != NULL &&
			    p < at->data.mapping.pairs.top; p++) {
				const char *k = yamldoc_scalar(yaml_document_get_node(doc, p->key));
				if (k != NULL && strcmp(k, s[i].name) == 0) {
					found = 1;
					next = p->value;
					if (last && value != NULL) {
						/* p is in the pairs' own array: it stays. */
						int v = yaml_document_add_scalar(doc, NULL,
						    (yaml_char_t *)value, (int)strlen(value), style);
						p->value = v;
					}
					break;
				}
			}
			if (rc == 0 && !found) {
				if (!last && s[i + 1].name == NULL) {
					char *whole = segs_text(s, i + 1);
					*why = xasprintf("'%s' is not in the spec, so it has no index [%ld]: "
					    "a list is not made up; write the list in the spec", whole,
					    s[i + 1].index);
					free(whole);
					rc = -1;
				} else if (value != NULL) {
					int k = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)s[i].name,
					    (int)strlen(s[i].name), YAML_PLAIN_SCALAR_STYLE);
					next = last ? yaml_document_add_scalar(doc, NULL,
					    (yaml_char_t *)value, (int)strlen(value), style)
					    : yaml_document_add_mapping(doc, NULL, YAML_BLOCK_MAPPING_STYLE);
					yaml_document_append_mapping_pair(doc, cur, k, next);
				} else {
					free(where);
					break;	/* made when set */
				}
			}
		} else {
			long len = at != NULL && at->type == YAML_SEQUENCE_NODE
			    ? (long)(at->data.sequence.items.top - at->data.sequence.items.start) : -1;
			if (len < 0) {
				*why = xasprintf("'%s' in the spec is not a list, so it has no index [%ld]",
				    where, s[i].index);
				rc = -1;
			} else if (s[i].index >= len) {
				*why = xasprintf("index [%ld] of '%s' does not exist: the list in the spec "
				    "has %ld entr%s", s[i].index, where, len, len == 1 ? "y" : "ies");
				rc = -1;
			} else {
				next = at->data.sequence.items.start[s[i].index];
				if (last && value != NULL) {
					/* Adding may move the nodes: at is fetched again. */
					int v = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)value,
					    (int)strlen(value), style);
					yaml_document_get_node(doc, cur)->data.sequence.items.start[
					    s[i].index] = v;
				}
			}
		}
		free(where);
		if (rc == 0 && last && old != NULL && next != 0) {
			yaml_node_t *was = yaml_document_get_node(doc, next);
			if (was->type == YAML_SCALAR_NODE && kind(was) != K_NULL)
				*old = xstrdup(yamldoc_scalar(was));
		}
		cur = next;
	}
	segs_free(s, n);
	return rc;
}

/* ---- documents: copied with canonical styles, emitted ------------------------------------- */

/* A text's style: plain when a loader reads it back as a text (the
 * emitter quotes it anyway when plain cannot hold it), else quoted. The
 * same spec from JSON and from YAML so gives the same bytes. */
static yaml_scalar_style_t text_style(const char *v)
{
	return scalar_kind_of(v, 1) == K_STR ? YAML_PLAIN_SCALAR_STYLE
	    : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}

static int copy_node(yaml_document_t *from, int id, yaml_document_t *to)
{
	yaml_node_t *n = yaml_document_get_node(from, id);
	int out, k, v;
	size_t i, count;

	if (n->type == YAML_SCALAR_NODE) {
		const char *t = (const char *)n->data.scalar.value;
		return yaml_document_add_scalar(to, NULL, n->data.scalar.value,
		    (int)n->data.scalar.length, kind(n) == K_STR ? text_style(t)
		    : YAML_PLAIN_SCALAR_STYLE);
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		out = yaml_document_add_sequence(to, NULL, YAML_BLOCK_SEQUENCE_STYLE);
		count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
		for (i = 0; i < count; i++) {
			n = yaml_document_get_node(from, id);
			v = copy_node(from, n->data.sequence.items.start[i], to);
			yaml_document_append_sequence_item(to, out, v);
		}
		return out;
	}
	out = yaml_document_add_mapping(to, NULL, YAML_BLOCK_MAPPING_STYLE);
	count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	for (i = 0; i < count; i++) {
		n = yaml_document_get_node(from, id);
		yaml_node_pair_t p = n->data.mapping.pairs.start[i];
		k = copy_node(from, p.key, to);
		v = copy_node(from, p.value, to);
		yaml_document_append_mapping_pair(to, out, k, v);
	}
	return out;
}

static int to_buf(void *data, unsigned char *buffer, size_t size)
{
	buf_add(data, buffer, size);
	return 1;
}

/* doc as YAML text (caller frees); doc is deleted. */
static char *emit(yaml_document_t *doc)
{
	yaml_emitter_t e;
	struct buf out;
	int ok;

	buf_init(&out);
	buf_adds(&out, "");
	yaml_emitter_initialize(&e);
	yaml_emitter_set_output(&e, to_buf, &out);
	yaml_emitter_set_unicode(&e, 1);
	ok = yaml_emitter_open(&e) && yaml_emitter_dump(&e, doc) && yaml_emitter_close(&e);
	yaml_emitter_delete(&e);
	if (!ok) {
		buf_free(&out);
		return NULL;
	}
	return buf_detach(&out);
}

/* ---- the bundle's fields -------------------------------------------------------------------- */

static int want_text(struct ctx *c, const yaml_node_t *n, const char *path)
{
	if (n->type != YAML_SCALAR_NODE || kind(n) != K_STR || n->data.scalar.length == 0)
		return bfail(c, n, path, "must be a non-empty text, not %s",
		    n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0 ? "an empty one"
		    : type_name(n));
	return 0;
}

static int want_int(struct ctx *c, const yaml_node_t *n, const char *path, int min, int *out)
{
	long x;

	if (n->type != YAML_SCALAR_NODE || kind(n) != K_INT)
		return bfail(c, n, path, "must be an integer, not %s", type_name(n));
	errno = 0;
	x = strtol((const char *)n->data.scalar.value, NULL, 0);
	if (x < min || errno != 0 || x > 100000)
		return bfail(c, n, path, "must be at least %d (it is %s)", min,
		    (const char *)n->data.scalar.value);
	*out = (int)x;
	return 0;
}

/* A mapping whose keys are each one of `allowed` ("a b c"), none twice. */
static int want_object(struct ctx *c, const yaml_node_t *n, const char *path, const char *allowed)
{
	yaml_node_pair_t *p, *q;
	char pat[80];

	if (n->type != YAML_MAPPING_NODE)
		return bfail(c, n, path, "must be a mapping {%s}, not %s", allowed, type_name(n));
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *k = yamldoc_scalar(node(c, p->key));
		snprintf(pat, sizeof(pat), " %s ", k ? k : "");
		char *with = xasprintf(" %s ", allowed);
		int known = k != NULL && strlen(k) < 60 && strstr(with, pat) != NULL;
		free(with);
		if (!known)
			return bfail(c, node(c, p->key), path, "unknown field '%s' (the schema allows "
			    "%s only)", k ? k : "?", allowed);
		for (q = n->data.mapping.pairs.start; q < p; q++)
			if (strcmp(yamldoc_scalar(node(c, q->key)), k) == 0)
				return bfail(c, node(c, p->key), path, "field '%s' is given twice", k);
	}
	return 0;
}

static const yaml_node_t *member(struct ctx *c, const yaml_node_t *map, const char *name)
{
	yaml_node_pair_t *p;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = yamldoc_scalar(node(c, p->key));
		if (k != NULL && strcmp(k, name) == 0)
			return node(c, p->value);
	}
	return NULL;
}

static int want_texts(struct ctx *c, const yaml_node_t *n, const char *path)
{
	yaml_node_item_t *it;
	char sub[256];

	if (n->type != YAML_SEQUENCE_NODE)
		return bfail(c, n, path, "must be a list of texts, not %s", type_name(n));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = node(c, *it);
		snprintf(sub, sizeof(sub), "%s[%d]", path, (int)(it - n->data.sequence.items.start));
		if (e->type != YAML_SCALAR_NODE || kind(e) != K_STR)
			return bfail(c, e, sub, "must be a text, not %s", type_name(e));
	}
	return 0;
}

/* The spec: nested, never dotted, at every level (lists of mappings too). */
static int nested_only(struct ctx *c, const yaml_node_t *n, const char *path)
{
	char sub[512];

	if (n->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *it;
		for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
			snprintf(sub, sizeof(sub), "%s[%d]", path,
			    (int)(it - n->data.sequence.items.start));
			if (nested_only(c, node(c, *it), sub) != 0)
				return -1;
		}
	} else if (n->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *p;
		for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			const yaml_node_t *k = node(c, p->key);
			const char *key = yamldoc_scalar(k);
			if (key == NULL || key[0] == '\0')
				return bfail(c, k, path, "a key of the spec must be a non-empty text");
			if (strchr(key, '.') != NULL) {
				/* a.b.c: "a: {b: {c: ...}}" */
				struct buf nested;
				const char *d;
				size_t depth = 0;
				buf_init(&nested);
				for (d = key; *d != '\0'; d++)
					if (*d == '.') {
						buf_adds(&nested, ": {");
						depth++;
					} else {
						buf_addc(&nested, *d);
					}
				buf_adds(&nested, ": ...");
				while (depth-- > 0)
					buf_addc(&nested, '}');
				int rc = bfail(c, k, path, "key '%s' is dotted: the spec is nested, never "
				    "dotted (the schema's rule at every level): write it nested, %s",
				    key, nested.data);
				buf_free(&nested);
				return rc;
			}
			snprintf(sub, sizeof(sub), "%s.%s", path, key);
			if (nested_only(c, node(c, p->value), sub) != 0)
				return -1;
		}
	}
	return 0;
}

/* The bank's uri: the path on the cluster, or NULL (*remote) for the
 * storage the job cannot read (s3://, hf://, ngc://); -1 otherwise. */
static int input_path(const char *uri, char **path, int *remote)
{
	*path = NULL, *remote = 0;
	if (strncmp(uri, "lustre:///", 10) == 0) {
		*path = xstrdup(uri + 9);
		return 0;
	}
	if (uri[0] == '/') {
		*path = xstrdup(uri);
		return 0;
	}
	if (strncmp(uri, "s3://", 5) == 0 || strncmp(uri, "hf://", 5) == 0 ||
	    strncmp(uri, "ngc://", 6) == 0) {
		*remote = 1;
		return 0;
	}
	return -1;
}

static int get_inputs(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	yaml_node_item_t *it;
	char path[64], sub[96];

	if (n->type != YAML_SEQUENCE_NODE)
		return bfail(c, n, "declared_inputs", "must be a list of {spec_key, type, uri, "
		    "optional}, not %s", type_name(n));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = node(c, *it), *key, *type, *uri, *opt;
		struct spec_input in = { 0 };
		int remote;

		snprintf(path, sizeof(path), "declared_inputs[%d]",
		    (int)(it - n->data.sequence.items.start));
		if (s->ninputs == 64)
			return bfail(c, e, path, "one input too many: taotop checks at most 64");
		if (want_object(c, e, path, "spec_key type optional uri") != 0)
			return -1;
		key = member(c, e, "spec_key"), type = member(c, e, "type");
		uri = member(c, e, "uri"), opt = member(c, e, "optional");
		if (key == NULL || type == NULL || uri == NULL)
			return bfail(c, e, path, "field '%s' is missing (an input needs spec_key, type "
			    "and uri)", key == NULL ? "spec_key" : type == NULL ? "type" : "uri");
		snprintf(sub, sizeof(sub), "%s.spec_key", path);
		if (want_text(c, key, sub) != 0)
			return -1;
		snprintf(sub, sizeof(sub), "%s.type", path);
		if (type->type != YAML_SCALAR_NODE || kind(type) != K_STR ||
		    (strcmp(yamldoc_scalar(type), "file") != 0 &&
		    strcmp(yamldoc_scalar(type), "folder") != 0))
			return bfail(c, type, sub, "must be file or folder");
		snprintf(sub, sizeof(sub), "%s.optional", path);
		if (opt != NULL && (opt->type != YAML_SCALAR_NODE || kind(opt) != K_BOOL))
			return bfail(c, opt, sub, "must be true or false, not %s", type_name(opt));
		snprintf(sub, sizeof(sub), "%s.uri", path);
		if (want_text(c, uri, sub) != 0)
			return -1;
		in.folder = strcmp(yamldoc_scalar(type), "folder") == 0;
		in.optional = opt != NULL && tolower((unsigned char)yamldoc_scalar(opt)[0]) == 't';
		if (input_path(yamldoc_scalar(uri), &in.path, &remote) != 0)
			return bfail(c, uri, sub, "'%s' is no place the job can read: give "
			    "lustre:///absolute/path or an absolute path on the cluster",
			    yamldoc_scalar(uri));
		if (remote && !in.optional)
			return bfail(c, uri, sub, "'%s' is not on the cluster's shared storage: taotop "
			    "never fetches inside the allocation (its GPUs would idle, billed); stage "
			    "this small auxiliary input onto shared storage before submit (a training "
			    "set never comes this way) and give it as lustre:///path, or mark it "
			    "optional: true to run without it", yamldoc_scalar(uri));
		in.skipped = remote;
		in.spec_key = xstrdup(yamldoc_scalar(key));
		in.uri = xstrdup(yamldoc_scalar(uri));
		s->inputs = xreallocarray(s->inputs, s->ninputs + 1, sizeof(*s->inputs));
		s->inputs[s->ninputs++] = in;
	}
	return 0;
}

static int get_outputs(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	yaml_node_item_t *it;
	char path[64], sub[96];

	if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top ==
	    n->data.sequence.items.start)
		return bfail(c, n, "declared_outputs", "must be a list of at least one {spec_key, "
		    "type}%s", n->type == YAML_SEQUENCE_NODE ? " (it is empty)" : "");
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = node(c, *it), *key, *type;
		struct spec_output out = { 0 };

		snprintf(path, sizeof(path), "declared_outputs[%d]",
		    (int)(it - n->data.sequence.items.start));
		if (want_object(c, e, path, "spec_key type") != 0)
			return -1;
		key = member(c, e, "spec_key"), type = member(c, e, "type");
		if (key == NULL || type == NULL)
			return bfail(c, e, path, "field '%s' is missing (an output needs spec_key and "
			    "type)", key == NULL ? "spec_key" : "type");
		snprintf(sub, sizeof(sub), "%s.spec_key", path);
		if (want_text(c, key, sub) != 0)
			return -1;
		snprintf(sub, sizeof(sub), "%s.type", path);
		if (type->type != YAML_SCALAR_NODE || kind(type) != K_STR ||
		    (strcmp(yamldoc_scalar(type), "file") != 0 &&
		    strcmp(yamldoc_scalar(type), "folder") != 0))
			return bfail(c, type, sub, "must be file or folder");
		out.folder = strcmp(yamldoc_scalar(type), "folder") == 0;
		out.spec_key = xstrdup(yamldoc_scalar(key));
		s->outputs = xreallocarray(s->outputs, s->noutputs + 1, sizeof(*s->outputs));
		s->outputs[s->noutputs++] = out;
	}
	return 0;
}

static int get_shape(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	const yaml_node_t *g, *nd;
	int gpus, nodes;

	if (want_object(c, n, "compute_shape", "gpus nodes") != 0)
		return -1;
	g = member(c, n, "gpus"), nd = member(c, n, "nodes");
	if (g == NULL || nd == NULL)
		return bfail(c, n, "compute_shape", "field '%s' is missing (GPUs per node, and nodes)",
		    g == NULL ? "gpus" : "nodes");
	if (want_int(c, g, "compute_shape.gpus", 0, &gpus) != 0 ||
	    want_int(c, nd, "compute_shape.nodes", 1, &nodes) != 0)
		return -1;
	if (gpus > 64)
		return bfail(c, g, "compute_shape.gpus", "%d GPUs per node: taotop takes at most 64",
		    gpus);
	if (nodes > 1024)
		return bfail(c, nd, "compute_shape.nodes", "%d nodes: taotop takes at most 1024",
		    nodes);
	/* GPUs per node and nodes: taotop's shape said outright; 0 GPUs is
	 * its gpus: 0, a job without GPUs. */
	s->nodes = nodes;
	if (gpus > 0)
		s->gpus_per_node = gpus;
	else
		s->gpus = 0;
	return 0;
}

/* The spec's pointers checked against it now: a list index that is not
 * there, a text where a mapping must be. An output's value already set
 * is the path its job makes. */
static int check_pointers(struct ctx *c, const yaml_node_t *root, struct spec *s)
{
	yaml_document_t scratch;
	char *why = NULL, *old = NULL, where[64];
	size_t i;
	int rc = 0;

	if (s->tao_spec == NULL || yamldoc_load("spec", s->tao_spec, strlen(s->tao_spec),
	    &scratch, &why) != 0) {
		free(why);
		return 0;
	}
	for (i = 0; rc == 0 && i < s->ninputs; i++) {
		snprintf(where, sizeof(where), "declared_inputs[%zu].spec_key", i);
		if (pointer_set(&scratch, s->inputs[i].spec_key, NULL, YAML_PLAIN_SCALAR_STYLE, NULL,
		    &why) != 0)
			rc = bfail(c, root, where, "%s", why);
	}
	for (i = 0; rc == 0 && i < s->noutputs; i++) {
		snprintf(where, sizeof(where), "declared_outputs[%zu].spec_key", i);
		if (pointer_set(&scratch, s->outputs[i].spec_key, NULL, YAML_PLAIN_SCALAR_STYLE, &old,
		    &why) != 0) {
			rc = bfail(c, root, where, "%s", why);
		} else if (old != NULL) {
			if (strncmp(old, "lustre:///", 10) == 0)
				s->outputs[i].path = xstrdup(old + 9);
			else if (old[0] == '/')
				s->outputs[i].path = xstrdup(old);
			else if (strncmp(old, "{results_dir}", 13) == 0 &&
			    (old[13] == '\0' || old[13] == '/') && strstr(old, "..") == NULL)
				/* The bank's placeholder: filled as its platform
				 * fills spec strings, with the job's folder. */
				s->outputs[i].under = xstrdup(old + 13);
			else	/* the spec's own (OmegaConf's ${results_dir}/...) */
				s->outputs[i].left = 1;
			free(old);
		}
	}
	if (rc == 0 && s->gpu_spec_key != NULL && pointer_set(&scratch, s->gpu_spec_key, NULL,
	    YAML_PLAIN_SCALAR_STYLE, NULL, &why) != 0)
		rc = bfail(c, root, "gpu_spec_key", "%s", why);
	yaml_document_delete(&scratch);
	free(why);
	return rc;
}

static int get_spec(struct ctx *c, const yaml_node_t *n, struct spec *s)
{
	yaml_document_t out;
	int id = (int)(n - c->doc.nodes.start) + 1;

	if (n->type != YAML_MAPPING_NODE)
		return bfail(c, n, "spec", "must be a mapping (the container's nested config), not %s",
		    type_name(n));
	if (nested_only(c, n, "spec") != 0)
		return -1;
	yaml_document_initialize(&out, NULL, NULL, NULL, 1, 1);
	copy_node(&c->doc, id, &out);
	free(s->tao_spec);
	s->tao_spec = emit(&out);
	if (s->tao_spec == NULL)
		return bfail(c, n, "spec", "libyaml could not write it");
	free(s->tao_spec_read);
	s->tao_spec_read = xstrdup(s->tao_spec);
	return 0;
}

static int get_args(struct ctx *c, const yaml_node_t *n, struct spec *s, char ***args,
    size_t *nargs)
{
	yaml_node_item_t *it;
	char sub[64], *why = NULL;

	(void)s;
	if (want_texts(c, n, "args") != 0)
		return -1;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const char *v = yamldoc_scalar(node(c, *it));
		snprintf(sub, sizeof(sub), "args[%d]", (int)(it - n->data.sequence.items.start));
		if (command_check_word(v, &why) != 0) {
			int rc = bfail(c, node(c, *it), sub, "%s", why);
			free(why);
			return rc;
		}
		*args = xreallocarray(*args, *nargs + 1, sizeof(**args));
		(*args)[(*nargs)++] = xstrdup(v);
	}
	return 0;
}

/* A supporting file's source or destination: the schema's
 * "^(?!/)(?!.*(?:^|/)\.\.(?:/|$))\S+$", relative, no "..", no blank. */
static const char *relative_problem(const char *v)
{
	const char *p;

	if (v[0] == '\0')
		return "is empty";
	if (v[0] == '/')
		return "is an absolute path: give it relative (to the producing skill's root for "
		    "source, below the staged helper folder for destination)";
	for (p = v; *p != '\0'; p++)
		if (isspace((unsigned char)*p))
			return "holds a blank: the schema allows none";
	for (p = v; p != NULL; p = strchr(p, '/')) {
		if (*p == '/')
			p++;
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return "climbs out with '..': the schema forbids parent traversal";
	}
	return NULL;
}

static int want_texts_nonempty(struct ctx *c, const yaml_node_t *n, const char *path)
{
	yaml_node_item_t *it;
	char sub[96];

	if (want_texts(c, n, path) != 0)
		return -1;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		snprintf(sub, sizeof(sub), "%s[%d]", path, (int)(it - n->data.sequence.items.start));
		if (want_text(c, node(c, *it), sub) != 0)
			return -1;
	}
	return 0;
}

static int exec_files(struct ctx *c, const yaml_node_t *n)
{
	yaml_node_item_t *it;
	char path[64], sub[96];
	static const char *const fields[] = { "source", "destination", "sha256" };
	size_t f;

	if (n->type != YAML_SEQUENCE_NODE)
		return bfail(c, n, "execution.supporting_files", "must be a list of {source, "
		    "destination, sha256}, not %s", type_name(n));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = node(c, *it);
		snprintf(path, sizeof(path), "execution.supporting_files[%d]",
		    (int)(it - n->data.sequence.items.start));
		if (want_object(c, e, path, "source destination sha256") != 0)
			return -1;
		for (f = 0; f < NELEM(fields); f++) {
			const yaml_node_t *v = member(c, e, fields[f]);
			const char *why;
			snprintf(sub, sizeof(sub), "%s.%s", path, fields[f]);
			if (v == NULL)
				return bfail(c, e, path, "field '%s' is missing (a supporting file needs "
				    "source, destination and sha256)", fields[f]);
			if (want_text(c, v, sub) != 0)
				return -1;
			if (f < 2 && (why = relative_problem(yamldoc_scalar(v))) != NULL)
				return bfail(c, v, sub, "'%s' %s", yamldoc_scalar(v), why);
			if (f == 2) {
				const char *h = yamldoc_scalar(v);
				size_t i;
				for (i = 0; i < 64 && ((h[i] >= '0' && h[i] <= '9') ||
				    (h[i] >= 'a' && h[i] <= 'f')); i++)
					;
				if (i != 64 || h[64] != '\0')
					return bfail(c, v, sub, "'%s' is not a sha256 (64 hex digits, lower "
					    "case: sha256sum FILE)", h);
			}
		}
	}
	return 0;
}

static int exec_distributed(struct ctx *c, const yaml_node_t *n)
{
	const yaml_node_t *l, *ppn, *tpn;
	int x;

	if (want_object(c, n, "execution.distributed", "launcher processes_per_node "
	    "tasks_per_node") != 0)
		return -1;
	l = member(c, n, "launcher"), ppn = member(c, n, "processes_per_node");
	tpn = member(c, n, "tasks_per_node");
	if (l == NULL || ppn == NULL)
		return bfail(c, n, "execution.distributed", "field '%s' is missing (it needs launcher "
		    "and processes_per_node)", l == NULL ? "launcher" : "processes_per_node");
	if (l->type != YAML_SCALAR_NODE || kind(l) != K_STR ||
	    (strcmp(yamldoc_scalar(l), "direct") != 0 && strcmp(yamldoc_scalar(l), "torchrun") != 0))
		return bfail(c, l, "execution.distributed.launcher", "must be direct or torchrun");
	if (want_int(c, ppn, "execution.distributed.processes_per_node", 1, &x) != 0)
		return -1;
	if (tpn != NULL && (tpn->type != YAML_SCALAR_NODE || kind(tpn) != K_INT ||
	    strtol(yamldoc_scalar(tpn), NULL, 0) != 1))
		return bfail(c, tpn, "execution.distributed.tasks_per_node", "must be 1 (one platform "
		    "task per node; the launcher starts its processes)");
	return 0;
}

static int exec_completion(struct ctx *c, const yaml_node_t *n)
{
	const yaml_node_t *ex, *ss, *st;
	yaml_node_item_t *it, *jt;

	if (want_object(c, n, "execution.completion", "child_exit_code_path "
	    "structured_status_path success_states") != 0)
		return -1;
	ex = member(c, n, "child_exit_code_path"), ss = member(c, n, "structured_status_path");
	st = member(c, n, "success_states");
	if (ex == NULL)
		return bfail(c, n, "execution.completion", "field 'child_exit_code_path' is missing");
	if (want_text(c, ex, "execution.completion.child_exit_code_path") != 0 ||
	    (ss != NULL && want_text(c, ss, "execution.completion.structured_status_path") != 0))
		return -1;
	if (st == NULL)
		return 0;
	if (want_texts_nonempty(c, st, "execution.completion.success_states") != 0)
		return -1;
	if (st->data.sequence.items.top == st->data.sequence.items.start)
		return bfail(c, st, "execution.completion.success_states", "must list at least one "
		    "state");
	for (it = st->data.sequence.items.start; it < st->data.sequence.items.top; it++)
		for (jt = st->data.sequence.items.start; jt < it; jt++)
			if (strcmp(yamldoc_scalar(node(c, *it)), yamldoc_scalar(node(c, *jt))) == 0)
				return bfail(c, node(c, *it), "execution.completion.success_states",
				    "'%s' is listed twice (the schema wants each once)",
				    yamldoc_scalar(node(c, *it)));
	return 0;
}

/* The execution contract's shape, as the schema's executionContract says
 * it; what it means is the common field handling's. */
static int exec_schema(struct ctx *c, const yaml_node_t *n)
{
	const yaml_node_t *v;
	yaml_node_pair_t *p;

	if (want_object(c, n, "execution", "environment pre_commands post_commands post_scope "
	    "distributed supporting_files completion") != 0)
		return -1;
	if ((v = member(c, n, "environment")) != NULL) {
		if (v->type != YAML_MAPPING_NODE)
			return bfail(c, v, "execution.environment", "must be a mapping of NAME: value, "
			    "not %s", type_name(v));
		for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
			const char *k = yamldoc_scalar(node(c, p->key));
			char sub[160];
			if (k == NULL || !spec_env_name_ok(k))
				return bfail(c, node(c, p->key), "execution.environment", "'%s' is not a "
				    "variable name ([A-Z_][A-Z0-9_]*)", k ? k : "?");
			snprintf(sub, sizeof(sub), "execution.environment.%s", k);
			if (node(c, p->value)->type != YAML_SCALAR_NODE ||
			    kind(node(c, p->value)) != K_STR)
				return bfail(c, node(c, p->value), sub, "must be a text, not %s",
				    type_name(node(c, p->value)));
		}
	}
	if ((v = member(c, n, "pre_commands")) != NULL &&
	    want_texts_nonempty(c, v, "execution.pre_commands") != 0)
		return -1;
	if ((v = member(c, n, "post_commands")) != NULL &&
	    want_texts_nonempty(c, v, "execution.post_commands") != 0)
		return -1;
	if ((v = member(c, n, "post_scope")) != NULL && (v->type != YAML_SCALAR_NODE ||
	    kind(v) != K_STR || (strcmp(yamldoc_scalar(v), "all") != 0 &&
	    strcmp(yamldoc_scalar(v), "leader") != 0)))
		return bfail(c, v, "execution.post_scope", "must be all or leader");
	if ((v = member(c, n, "distributed")) != NULL && exec_distributed(c, v) != 0)
		return -1;
	if ((v = member(c, n, "supporting_files")) != NULL && exec_files(c, v) != 0)
		return -1;
	if ((v = member(c, n, "completion")) != NULL && exec_completion(c, v) != 0)
		return -1;
	return 0;
}

/* image: "^\S+/\S+$", a resolved registry/path:tag (or a path). */
static int image_ok(const char *v)
{
	const char *slash = strchr(v, '/');
	size_t i;

	for (i = 0; v[i] != '\0'; i++)
		if (isspace((unsigned char)v[i]))
			return 0;
	for (; slash != NULL; slash = strchr(slash + 1, '/'))
		if (slash > v && slash[1] != '\0')
			return 1;
	return 0;
}

static int read_field(struct ctx *c, const char *key, const yaml_node_t *v, struct spec *s,
    char ***args, size_t *nargs, int *have_args)
{
	if (strcmp(key, "network_arch") == 0 || strcmp(key, "action") == 0 ||
	    strcmp(key, "image") == 0) {
		if (want_text(c, v, key) != 0)
			return -1;
		if (strcmp(key, "image") == 0 && !image_ok(yamldoc_scalar(v)))
			return bfail(c, v, key, "'%s' is not a resolved container image "
			    "(registry/path:tag, the schema's ^\\S+/\\S+$): resolve a versions.yaml "
			    "key first", yamldoc_scalar(v));
		return spec_get_field(c, key, v, s);
	}
	if (strcmp(key, "command") == 0) {
		if (want_text(c, v, key) != 0)
			return -1;
		return spec_get_field(c, key, v, s);
	}
	if (strcmp(key, "gpu_spec_key") == 0) {
		if (want_text(c, v, key) != 0)
			return -1;
		return spec_get_field(c, key, v, s);
	}
	if (strcmp(key, "mode") == 0 || strcmp(key, "config_format") == 0) {
		const char *a = key[0] == 'm' ? "config" : "yaml", *b = key[0] == 'm' ? "args" : "toml";
		const char *x = key[0] == 'm' ? NULL : "json";
		const char *t = v->type == YAML_SCALAR_NODE && kind(v) == K_STR ? yamldoc_scalar(v)
		    : NULL;
		if (t == NULL || !(strcmp(t, a) == 0 || strcmp(t, b) == 0 ||
		    (x != NULL && strcmp(t, x) == 0)))
			return bfail(c, v, key, "must be %s%s%s or %s", a, x ? ", " : "", x ? x : "", b);
		if (key[0] == 'm')
			s->mode = xstrdup(t);
		else
			s->config_format = xstrdup(t);
		return 0;
	}
	if (strcmp(key, "spec") == 0)
		return get_spec(c, v, s);
	if (strcmp(key, "args") == 0) {
		*have_args = 1;
		return get_args(c, v, s, args, nargs);
	}
	if (strcmp(key, "declared_inputs") == 0)
		return get_inputs(c, v, s);
	if (strcmp(key, "declared_outputs") == 0)
		return get_outputs(c, v, s);
	if (strcmp(key, "compute_shape") == 0)
		return get_shape(c, v, s);
	if (strcmp(key, "upload_excludes") == 0)
		return want_texts(c, v, key);	/* taotop uploads no tree: nothing to leave out */
	/* execution: its shape checked here by the schema; then the
	 * lifecycle read by the field handling taotop's own format has for
	 * it. */
	if (exec_schema(c, v) != 0)
		return -1;
	return spec_get_field(c, key, v, s);
}

/* The schema's if/then: what each mode needs and refuses. */
static int mode_rules(struct ctx *c, const yaml_node_t *root, struct spec *s, int have_args)
{
	const yaml_node_t *cmd = member(c, root, "command");

	if (strcmp(s->mode, "config") == 0) {
		if (s->tao_spec == NULL)
			return bfail(c, root, "spec", "is missing: mode config stages the spec (a nested "
			    "mapping) and passes its path as {config_path}");
		if (s->config_format == NULL)
			return bfail(c, root, "config_format", "is missing: mode config says how the "
			    "spec is written (yaml, json or toml)");
		if (have_args)
			return bfail(c, member(c, root, "args"), "args", "is not allowed in mode config "
			    "(the spec is the input; args belong to mode args)");
		if (strstr(yamldoc_scalar(cmd), "{config_path}") == NULL)
			return bfail(c, cmd, "command", "'%s' has no {config_path}: in mode config the "
			    "command reads the staged spec there (e.g. dino train -e {config_path})",
			    yamldoc_scalar(cmd));
		return 0;
	}
	if (!have_args)
		return bfail(c, root, "args", "is missing: mode args runs the command with its args "
		    "(a list of texts, perhaps empty)");
	if (s->tao_spec != NULL)
		return bfail(c, member(c, root, "spec"), "spec", "is not allowed in mode args (no "
		    "spec is staged; use mode config)");
	if (s->config_format != NULL)
		return bfail(c, member(c, root, "config_format"), "config_format", "is not allowed in "
		    "mode args (no spec is staged)");
	return 0;
}

int bank_read(struct ctx *c, const yaml_node_t *root, struct spec *s)
{
	static const char *const required[] = { "network_arch", "action", "image", "mode",
		"command", "declared_inputs", "declared_outputs", "compute_shape" };
	const char *which = bank_field_of(c, root);
	yaml_node_pair_t *p, *q;
	char **args = NULL;
	size_t nargs = 0, i;
	int have_args = 0, rc = 0;

	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top && rc == 0; p++) {
		const yaml_node_t *k = node(c, p->key);
		const char *key = yamldoc_scalar(k);

		if (key == NULL)
			rc = spec_fail_at(c, k, "a field's name must be a text");
		else if (!in_list(bank_only, NELEM(bank_only), key) &&
		    !in_list(bank_common, NELEM(bank_common), key))
			rc = spec_field_known(key)
			    ? bfail(c, k, key, "is a field of taotop's own bundle, and this one is the "
				"skill bank's spec bundle (it has '%s'): one bundle is one format; in "
				"the bank's, give it on the command line (taotop submit --help) or "
				"write the bundle in taotop's format (templates/example.spec.yaml)",
				which)
			    : bfail(c, k, key, "unknown field (the skill bank's spec bundle has: "
				FIELDS ")");
		for (q = root->data.mapping.pairs.start; rc == 0 && q < p; q++) {
			const char *earlier = yamldoc_scalar(node(c, q->key));
			if (earlier != NULL && strcmp(earlier, key) == 0)
				rc = bfail(c, k, key, "is given twice");
		}
		if (rc == 0)
			rc = read_field(c, key, node(c, p->value), s, &args, &nargs, &have_args);
	}
	for (i = 0; rc == 0 && i < NELEM(required); i++)
		if (member(c, root, required[i]) == NULL)
			rc = bfail(c, root, required[i], "is missing (the skill bank's spec bundle needs "
			    "network_arch, action, image, mode, command, declared_inputs, "
			    "declared_outputs and compute_shape)");
	if (rc == 0)
		rc = mode_rules(c, root, s, have_args);
	for (i = 0; i < nargs; i++) {
		/* args: the job's words after the command's. */
		if (rc == 0) {
			s->argv = xreallocarray(s->argv, s->argc + 1, sizeof(*s->argv));
			s->argv[s->argc++] = args[i];
		} else {
			free(args[i]);
		}
	}
	free(args);
	if (rc == 0 && nargs > 0) {
		free(s->command);
		s->command = spec_join_words(s->argv, s->argc);
	}
	if (rc == 0)
		rc = check_pointers(c, root, s);
	return rc;
}

/* ---- at submit: the spec's values bound, the spec written -------------------------------- */

int bank_bind(struct spec *s, const char *results_dir, int gpus_per_node, char **err)
{
	yaml_document_t doc;
	char *why = NULL, *text, num[16];
	size_t i;
	int rc = 0;

	for (i = 0; i < s->noutputs; i++) {
		/* Bound again (a submit that opens a second record): the
		 * new results folder's. */
		if (s->outputs[i].bound) {
			free(s->outputs[i].path);
			s->outputs[i].path = NULL;
			s->outputs[i].bound = 0;
		}
		if (s->outputs[i].path == NULL && !s->outputs[i].left) {
			const char *key = s->outputs[i].spec_key, *last = strrchr(key, '.');
			last = last ? last + 1 : key;
			/* results_dir: the job's results folder itself; another
			 * key, a path named after it there. */
			s->outputs[i].path = s->outputs[i].under != NULL
			    ? xasprintf("%s%s", results_dir, s->outputs[i].under)
			    : strcmp(last, "results_dir") == 0 || strchr(last, '[')
			    ? xstrdup(results_dir) : xasprintf("%s/%s", results_dir, last);
			s->outputs[i].bound = 1;
		}
	}
	if (s->tao_spec_read == NULL)
		return 0;
	if (yamldoc_load("spec", s->tao_spec_read, strlen(s->tao_spec_read), &doc, err) != 0)
		return -1;
	for (i = 0; rc == 0 && i < s->ninputs; i++)
		if (!s->inputs[i].skipped && s->inputs[i].path != NULL &&
		    pointer_set(&doc, s->inputs[i].spec_key, s->inputs[i].path,
		    text_style(s->inputs[i].path), NULL, &why) != 0) {
			*err = xasprintf("declared_inputs[%zu].spec_key: %s", i, why);
			rc = -1;
		}
	/* Every output's path, taotop's or the spec's own (a lustre:/// one
	 * becomes the path TAO can open). */
	for (i = 0; rc == 0 && i < s->noutputs; i++)
		if (s->outputs[i].path != NULL && pointer_set(&doc, s->outputs[i].spec_key,
		    s->outputs[i].path, text_style(s->outputs[i].path), NULL, &why) != 0) {
			*err = xasprintf("declared_outputs[%zu].spec_key: %s", i, why);
			rc = -1;
		}
	snprintf(num, sizeof(num), "%d", gpus_per_node);
	if (rc == 0 && s->gpu_spec_key != NULL && gpus_per_node > 0 &&
	    pointer_set(&doc, s->gpu_spec_key, num, YAML_PLAIN_SCALAR_STYLE, NULL, &why) != 0) {
		*err = xasprintf("gpu_spec_key: %s", why);
		rc = -1;
	}
	free(why);
	if (rc != 0) {
		yaml_document_delete(&doc);
		return -1;
	}
	text = emit(&doc);
	if (text == NULL) {
		*err = xstrdup("spec: libyaml could not write it");
		return -1;
	}
	free(s->tao_spec);
	s->tao_spec = text;
	return 0;
}

/* ---- the spec in its config_format --------------------------------------------------------- */

/* A YAML integer's value: decimal, 0x hex or 0o octal, signed. */
static long long int_of(const char *v)
{
	const char *d = v + (v[0] == '-' || v[0] == '+');
	long long x = strncmp(d, "0o", 2) == 0 ? strtoll(d + 2, NULL, 8)
	    : strncmp(d, "0x", 2) == 0 ? strtoll(d + 2, NULL, 16) : strtoll(d, NULL, 10);

	return v[0] == '-' ? -x : x;
}

static cJSON *to_json(yaml_document_t *doc, int id, const char *path, char **err)
{
	yaml_node_t *n = yaml_document_get_node(doc, id);
	cJSON *out;
	char sub[512];
	size_t i, count;

	if (n->type == YAML_MAPPING_NODE) {
		out = cJSON_CreateObject();
		count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
		for (i = 0; i < count; i++) {
			yaml_node_pair_t p = yaml_document_get_node(doc, id)->data.mapping.pairs.start[i];
			const char *k = yamldoc_scalar(yaml_document_get_node(doc, p.key));
			snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k ? k : "?");
			cJSON *v = to_json(doc, p.value, sub, err);
			if (v == NULL) {
				cJSON_Delete(out);
				return NULL;
			}
			cJSON_AddItemToObject(out, k ? k : "", v);
		}
		return out;
	}
	if (n->type == YAML_SEQUENCE_NODE) {
		out = cJSON_CreateArray();
		count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
		for (i = 0; i < count; i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			cJSON *v = to_json(doc, yaml_document_get_node(doc, id)->data.sequence.items.start[i],
			    sub, err);
			if (v == NULL) {
				cJSON_Delete(out);
				return NULL;
			}
			cJSON_AddItemToArray(out, v);
		}
		return out;
	}
	const char *v = (const char *)n->data.scalar.value;
	switch (kind(n)) {
	case K_NULL:
		return cJSON_CreateNull();
	case K_BOOL:
		return cJSON_CreateBool(tolower((unsigned char)v[0]) == 't');
	case K_INT: {
		char num[32];
		snprintf(num, sizeof(num), "%lld", int_of(v));
		return cJSON_CreateRaw(num);
	}
	case K_FLOAT: {
		const char *d = v + (v[0] == '-' || v[0] == '+');
		if (d[0] == '.' && !isdigit((unsigned char)d[1])) {
			*err = xasprintf("spec.%s: %s has no place in JSON (no inf or nan there): "
			    "write the spec in yaml, or another number", path, v);
			return NULL;
		}
		return cJSON_CreateNumber(strtod(v, NULL));
	}
	default:
		return cJSON_CreateString(v);
	}
}

static void toml_key(struct buf *b, const char *k)
{
	size_t i;
	int bare = k[0] != '\0';

	for (i = 0; k[i] != '\0'; i++)
		if (!(isalnum((unsigned char)k[i]) || k[i] == '_' || k[i] == '-'))
			bare = 0;
	if (bare) {
		buf_adds(b, k);
		return;
	}
	buf_addc(b, '"');
	for (i = 0; k[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)k[i];
		if (ch == '"' || ch == '\\')
			buf_addf(b, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			buf_addf(b, "\\u%04x", ch);
		else
			buf_addc(b, (char)ch);
	}
	buf_addc(b, '"');
}

static void toml_string(struct buf *b, const char *v)
{
	size_t i;

	buf_addc(b, '"');
	for (i = 0; v[i] != '\0'; i++) {
		unsigned char ch = (unsigned char)v[i];
		if (ch == '"' || ch == '\\')
			buf_addf(b, "\\%c", ch);
		else if (ch == '\n')
			buf_adds(b, "\\n");
		else if (ch == '\t')
			buf_adds(b, "\\t");
		else if (ch == '\r')
			buf_adds(b, "\\r");
		else if (ch < 0x20 || ch == 0x7f)
			buf_addf(b, "\\u%04x", ch);
		else
			buf_addc(b, (char)ch);
	}
	buf_addc(b, '"');
}

static int is_table_list(yaml_document_t *doc, const yaml_node_t *n)
{
	yaml_node_item_t *it;

	if (n->type != YAML_SEQUENCE_NODE || n->data.sequence.items.top == n->data.sequence.items.start)
		return 0;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
		if (yaml_document_get_node(doc, *it)->type != YAML_MAPPING_NODE)
			return 0;
	return 1;
}

/* A value on one line: a scalar, an inline array, an inline table. */
static int toml_inline(yaml_document_t *doc, int id, const char *path, struct buf *b, char **err)
{
	yaml_node_t *n = yaml_document_get_node(doc, id);
	char sub[512];
	size_t i, count;

	if (n->type == YAML_SEQUENCE_NODE) {
		buf_addc(b, '[');
		count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
		for (i = 0; i < count; i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			buf_adds(b, i ? ", " : "");
			if (toml_inline(doc, n->data.sequence.items.start[i], sub, b, err) != 0)
				return -1;
		}
		buf_addc(b, ']');
		return 0;
	}
	if (n->type == YAML_MAPPING_NODE) {
		buf_addc(b, '{');
		count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
		for (i = 0; i < count; i++) {
			yaml_node_pair_t p = n->data.mapping.pairs.start[i];
			const char *k = yamldoc_scalar(yaml_document_get_node(doc, p.key));
			snprintf(sub, sizeof(sub), "%s.%s", path, k);
			buf_adds(b, i ? ", " : "");
			toml_key(b, k);
			buf_adds(b, " = ");
			if (toml_inline(doc, p.value, sub, b, err) != 0)
				return -1;
		}
		buf_addc(b, '}');
		return 0;
	}
	const char *v = (const char *)n->data.scalar.value;
	switch (kind(n)) {
	case K_NULL:
		*err = xasprintf("spec.%s: TOML has no null: give it a value, leave the key out, or "
		    "write the spec in yaml or json", path);
		return -1;
	case K_BOOL:
		buf_adds(b, tolower((unsigned char)v[0]) == 't' ? "true" : "false");
		return 0;
	case K_INT:
		buf_addf(b, "%lld", int_of(v));
		return 0;
	case K_FLOAT: {
		const char *d = v + (v[0] == '-' || v[0] == '+');
		char num[40];
		double x;
		if (d[0] == '.' && !isdigit((unsigned char)d[1])) {
			buf_addf(b, "%s%s", v[0] == '-' ? "-" : v[0] == '+' ? "+" : "",
			    tolower((unsigned char)d[1]) == 'i' ? "inf" : "nan");
			return 0;
		}
		x = strtod(v, NULL);
		snprintf(num, sizeof(num), "%.15g", x);
		if (strtod(num, NULL) != x)
			snprintf(num, sizeof(num), "%.17g", x);
		buf_adds(b, num);
		if (strpbrk(num, ".eEn") == NULL)
			buf_adds(b, ".0");
		return 0;
	}
	default:
		toml_string(b, v);
		return 0;
	}
}

/* A table: its plain keys, then its tables and lists of tables. */
static int toml_table(yaml_document_t *doc, int id, const char *header, struct buf *b,
    char **err)
{
	yaml_node_t *n = yaml_document_get_node(doc, id);
	size_t i, count = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < count; i++) {
			yaml_node_pair_t p = yaml_document_get_node(doc, id)->data.mapping.pairs.start[i];
			yaml_node_t *v = yaml_document_get_node(doc, p.value);
			const char *k = yamldoc_scalar(yaml_document_get_node(doc, p.key));
			int nested = v->type == YAML_MAPPING_NODE || is_table_list(doc, v);
			struct buf h;
			size_t e, items;

			if (nested != pass)
				continue;
			buf_init(&h);
			buf_adds(&h, header);
			if (h.len > 0)
				buf_addc(&h, '.');
			toml_key(&h, k);
			if (!nested) {
				toml_key(b, k);
				buf_adds(b, " = ");
				if (toml_inline(doc, p.value, h.data, b, err) != 0) {
					buf_free(&h);
					return -1;
				}
				buf_addc(b, '\n');
			} else if (v->type == YAML_MAPPING_NODE) {
				buf_addf(b, "%s[%s]\n", b->len ? "\n" : "", h.data);
				if (toml_table(doc, p.value, h.data, b, err) != 0) {
					buf_free(&h);
					return -1;
				}
			} else {
				items = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
				for (e = 0; e < items; e++) {
					int item = yaml_document_get_node(doc, p.value)->data.sequence.items.start[e];
					buf_addf(b, "%s[[%s]]\n", b->len ? "\n" : "", h.data);
					if (toml_table(doc, item, h.data, b, err) != 0) {
						buf_free(&h);
						return -1;
					}
				}
			}
			buf_free(&h);
		}
	return 0;
}

const char *bank_config_name(const struct spec *s)
{
	if (s->config_format != NULL && strcmp(s->config_format, "json") == 0)
		return "spec.json";
	if (s->config_format != NULL && strcmp(s->config_format, "toml") == 0)
		return "spec.toml";
	return "spec.yaml";
}

int bank_config_text(const struct spec *s, char **text, char **err)
{
	yaml_document_t doc;
	int json = s->config_format != NULL && strcmp(s->config_format, "json") == 0;
	int toml = s->config_format != NULL && strcmp(s->config_format, "toml") == 0;
	int rc = 0;

	*text = NULL;
	if (!json && !toml)
		return spec_emit_tao(s, text, err);
	if (s->tao_spec == NULL) {
		*text = xstrdup(json ? "{}\n" : "");
		return 0;
	}
	if (yamldoc_load("spec", s->tao_spec, strlen(s->tao_spec), &doc, err) != 0)
		return -1;
	if (json) {
		cJSON *j = to_json(&doc, 1, "", err);
		if (j == NULL) {
			rc = -1;
		} else {
			char *printed = cJSON_Print(j);
			*text = xasprintf("%s\n", printed);
			cJSON_free(printed);
			cJSON_Delete(j);
		}
	} else {
		struct buf b;
		buf_init(&b);
		buf_adds(&b, "");
		rc = toml_table(&doc, 1, "", &b, err);
		if (rc == 0)
			*text = buf_detach(&b);
		else
			buf_free(&b);
	}
	yaml_document_delete(&doc);
	return rc;
}

void bank_own(struct spec *s)
{
	struct spec_input *in = xcalloc(s->ninputs + 1, sizeof(*in));
	struct spec_output *out = xcalloc(s->noutputs + 1, sizeof(*out));
	size_t i;

	for (i = 0; i < s->ninputs; i++) {
		in[i] = s->inputs[i];
		in[i].spec_key = xstrdup(s->inputs[i].spec_key);
		in[i].uri = xstrdup(s->inputs[i].uri);
		in[i].path = s->inputs[i].path ? xstrdup(s->inputs[i].path) : NULL;
	}
	for (i = 0; i < s->noutputs; i++) {
		out[i] = s->outputs[i];
		out[i].spec_key = xstrdup(s->outputs[i].spec_key);
		out[i].path = s->outputs[i].path ? xstrdup(s->outputs[i].path) : NULL;
		out[i].under = s->outputs[i].under ? xstrdup(s->outputs[i].under) : NULL;
	}
	s->inputs = in, s->outputs = out;
	s->tao_spec = s->tao_spec ? xstrdup(s->tao_spec) : NULL;
	s->tao_spec_read = s->tao_spec_read ? xstrdup(s->tao_spec_read) : NULL;
}

void bank_own_free(struct spec *s)
{
	size_t i;

	for (i = 0; i < s->ninputs; i++)
		free(s->inputs[i].spec_key), free(s->inputs[i].uri), free(s->inputs[i].path);
	for (i = 0; i < s->noutputs; i++)
		free(s->outputs[i].spec_key), free(s->outputs[i].path), free(s->outputs[i].under);
	free(s->inputs), free(s->outputs), free(s->tao_spec), free(s->tao_spec_read);
}

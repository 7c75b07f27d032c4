#include "engine/store/specdiff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"
#include "util/yamldoc.h"

/* A spec nested deeper, or with more scalars, is not TAO's: the rest is
 * left out (an anchor's alias may even loop). */
#define FLAT_DEPTH	32
#define FLAT_MAX	4096

/* s sanitised for one line (caller frees). */
static char *clean(const char *s)
{
	struct buf b;

	buf_init(&b);
	sanitize_append_line(&b, s, strlen(s));
	return b.data != NULL ? buf_detach(&b) : xstrdup("");
}

static void add(struct spec_flat *f, const char *key, const char *val)
{
	if (f->n >= FLAT_MAX)
		return;
	f->key = xreallocarray(f->key, f->n + 1, sizeof(*f->key));
	f->val = xreallocarray(f->val, f->n + 1, sizeof(*f->val));
	f->key[f->n] = clean(key);
	f->val[f->n] = clean(val);
	f->n++;
}

static void walk(yaml_document_t *doc, yaml_node_t *n, const char *prefix, int depth,
    struct spec_flat *f)
{
	char *key;

	if (n == NULL || depth > FLAT_DEPTH)
		return;
	if (n->type == YAML_SCALAR_NODE) {
		if (prefix[0] != '\0')
			add(f, prefix, yamldoc_scalar(n));
	} else if (n->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *p;
		for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
			const char *k = yamldoc_scalar(yaml_document_get_node(doc, p->key));
			if (k == NULL)
				continue;
			key = prefix[0] != '\0' ? xasprintf("%s.%s", prefix, k) : xstrdup(k);
			walk(doc, yaml_document_get_node(doc, p->value), key, depth + 1, f);
			free(key);
		}
	} else if (n->type == YAML_SEQUENCE_NODE) {
		yaml_node_item_t *i;
		for (i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
			key = xasprintf("%s%s%ld", prefix, prefix[0] != '\0' ? "." : "",
			    (long)(i - n->data.sequence.items.start));
			walk(doc, yaml_document_get_node(doc, *i), key, depth + 1, f);
			free(key);
		}
	}
}

int specdiff_flatten(const char *yaml, struct spec_flat *out)
{
	yaml_document_t doc;
	yaml_node_t *root;
	char *err = NULL;

	memset(out, 0, sizeof(*out));
	if (yaml == NULL || yamldoc_load("spec", yaml, strlen(yaml), &doc, &err) != 0) {
		free(err);
		return -1;
	}
	root = yaml_document_get_root_node(&doc);
	if (root == NULL || root->type != YAML_MAPPING_NODE) {
		yaml_document_delete(&doc);
		return -1;
	}
	walk(&doc, root, "", 0, out);
	yaml_document_delete(&doc);
	return 0;
}

void specdiff_flat_free(struct spec_flat *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->key[i]), free(f->val[i]);
	free(f->key), free(f->val);
	memset(f, 0, sizeof(*f));
}

static const char *value_of(const struct spec_flat *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->key[i], key) == 0)
			return f->val[i];
	return NULL;
}

/* The last j dot-separated parts of key (key itself when it has fewer). */
static const char *suffix(const char *key, int j)
{
	const char *p = key + strlen(key);

	while (p > key) {
		if (p[-1] == '.' && --j == 0)
			return p;
		p--;
	}
	return key;
}

static int parts(const char *key)
{
	int n = 1;

	for (; *key != '\0'; key++)
		n += *key == '.';
	return n;
}

/* key's shortest form that no other key of the runs ends with. */
static char *shortest(const char *key, const struct spec_flat *f, size_t n)
{
	int j, m = parts(key);
	size_t r, i;

	for (j = 1; j < m; j++) {
		const char *s = suffix(key, j);
		size_t sl = strlen(s);
		int clash = 0;
		for (r = 0; r < n && !clash; r++)
			for (i = 0; i < f[r].n && !clash; i++) {
				const char *k = f[r].key[i];
				size_t kl = strlen(k);
				if (strcmp(k, key) == 0)
					continue;
				clash = kl >= sl && strcmp(k + kl - sl, s) == 0 &&
				    (kl == sl || k[kl - sl - 1] == '.');
			}
		if (!clash)
			return xstrdup(s);
	}
	return xstrdup(key);
}

/* Whether the runs that have a spec disagree on key. */
static int differs(const struct spec_flat *f, const int *have, size_t n, const char *key)
{
	const char *first = NULL;
	int seen = 0;
	size_t r;

	for (r = 0; r < n; r++) {
		const char *v;
		if (!have[r])
			continue;
		v = value_of(&f[r], key);
		if (!seen) {
			first = v;
			seen = 1;
		} else if ((v == NULL) != (first == NULL) || (v != NULL && strcmp(v, first) != 0)) {
			return 1;
		}
	}
	return 0;
}

static void add_key(struct spec_diff *d, const char *key, const struct spec_flat *f, size_t n)
{
	d->key = xreallocarray(d->key, d->nkeys + 1, sizeof(*d->key));
	d->shown = xreallocarray(d->shown, d->nkeys + 1, sizeof(*d->shown));
	d->key[d->nkeys] = xstrdup(key);
	d->shown[d->nkeys] = shortest(key, f, n);
	d->nkeys++;
}

void specdiff_make(const char *const *specs, const char *const *ids, size_t n,
    struct spec_diff *d)
{
	struct spec_flat *f = xcalloc(n ? n : 1, sizeof(*f));
	int *have = xcalloc(n ? n : 1, sizeof(*have)), *twice;
	size_t r, i, k, nhave = 0;

	memset(d, 0, sizeof(*d));
	for (r = 0; r < n; r++) {
		have[r] = specdiff_flatten(specs[r], &f[r]) == 0;
		nhave += (size_t)have[r];
	}
	/* Every key of every run, once, in the first run's order. */
	for (r = 0; r < n && nhave > 1; r++)
		for (i = 0; i < f[r].n; i++) {
			int known = 0;
			for (k = 0; k < d->nkeys && !known; k++)
				known = strcmp(d->key[k], f[r].key[i]) == 0;
			if (!known && differs(f, have, n, f[r].key[i]))
				add_key(d, f[r].key[i], f, n);
		}
	d->nruns = n;
	d->val = xcalloc(n ? n : 1, sizeof(*d->val));
	d->label = xcalloc(n ? n : 1, sizeof(*d->label));
	for (r = 0; r < n; r++) {
		struct buf b;
		size_t shown = 0;
		d->val[r] = xcalloc(d->nkeys ? d->nkeys : 1, sizeof(*d->val[r]));
		buf_init(&b);
		for (k = 0; k < d->nkeys && have[r]; k++) {
			const char *v = value_of(&f[r], d->key[k]);
			d->val[r][k] = v != NULL ? xstrdup(v) : NULL;
			if (shown < SPECDIFF_SHOWN)
				buf_addf(&b, "%s%s=%s", shown ? ", " : "", d->shown[k], v ? v : "(none)");
			shown++;
		}
		if (shown > SPECDIFF_SHOWN)
			buf_addf(&b, " +%zu more", shown - SPECDIFF_SHOWN);
		d->label[r] = b.len > 0 ? buf_detach(&b) : clean(ids[r]);
		buf_free(&b);
	}
	/* The same name twice: the ids tell them apart. */
	twice = xcalloc(n ? n : 1, sizeof(*twice));
	for (r = 0; r < n; r++)
		for (i = 0; i < n; i++)
			twice[r] |= i != r && have[r] && d->nkeys > 0 &&
			    strcmp(d->label[i], d->label[r]) == 0;
	for (r = 0; r < n; r++) {
		if (twice[r]) {
			char *id = clean(ids[r]), *l = xasprintf("%s (%s)", d->label[r], id);
			free(d->label[r]);
			free(id);
			d->label[r] = l;
		}
	}
	for (r = 0; r < n; r++)
		specdiff_flat_free(&f[r]);
	free(f);
	free(have);
	free(twice);
}

void specdiff_free(struct spec_diff *d)
{
	size_t r, k;

	for (r = 0; r < d->nruns; r++) {
		for (k = 0; k < d->nkeys; k++)
			free(d->val[r][k]);
		free(d->val[r]);
		free(d->label[r]);
	}
	for (k = 0; k < d->nkeys; k++)
		free(d->key[k]), free(d->shown[k]);
	free(d->key), free(d->shown), free(d->val), free(d->label);
	memset(d, 0, sizeof(*d));
}

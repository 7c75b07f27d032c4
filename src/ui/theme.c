#include "ui/theme.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/file.h"
#include "util/share.h"
#include "util/xmalloc.h"
#include "util/yamldoc.h"

static const char *const role_names[ROLE_COUNT] = {
	[ROLE_STATUS_BAR] = "status.bar",
	[ROLE_STATUS_STALE] = "status.stale",
	[ROLE_STATUS_ERROR] = "status.error",
	[ROLE_HEADER] = "header",
	[ROLE_SELECTION] = "selection",
	[ROLE_MARKED] = "marked",
	[ROLE_JOB_PENDING] = "job.pending",
	[ROLE_JOB_RUNNING] = "job.running",
	[ROLE_JOB_DONE] = "job.done",
	[ROLE_JOB_ERROR] = "job.error",
	[ROLE_JOB_CANCELED] = "job.canceled",
	[ROLE_JOB_UNKNOWN] = "job.unknown",
	[ROLE_LOG_STDOUT] = "log.stdout",
	[ROLE_LOG_STDERR] = "log.stderr",
	[ROLE_LOG_MATCH] = "log.match",
	[ROLE_DIALOG] = "dialog",
	[ROLE_DIALOG_WARNING] = "dialog.warning",
};

static const char *const color_names[8] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

static const struct {
	const char	*name;
	unsigned	 bit;
} attr_names[] = {
	{ "bold", THEME_BOLD }, { "dim", THEME_DIM }, { "underline", THEME_UNDERLINE },
	{ "reverse", THEME_REVERSE }, { "italic", THEME_ITALIC }, { "standout", THEME_STANDOUT },
};

const char *theme_role_name(enum role r)
{
	return r < ROLE_COUNT ? role_names[r] : "?";
}

void theme_builtin(struct theme *t)
{
	/* The same as themes/default.yaml. */
	static const struct role_style def[ROLE_COUNT] = {
		[ROLE_STATUS_BAR] = { 0, 6, 0 },
		[ROLE_STATUS_STALE] = { 0, 3, 0 },
		[ROLE_STATUS_ERROR] = { 7, 1, THEME_BOLD },
		[ROLE_HEADER] = { 6, -1, THEME_BOLD },
		[ROLE_SELECTION] = { 0, 7, 0 },
		[ROLE_MARKED] = { 3, -1, THEME_BOLD },
		[ROLE_JOB_PENDING] = { 3, -1, 0 },
		[ROLE_JOB_RUNNING] = { 2, -1, THEME_BOLD },
		[ROLE_JOB_DONE] = { 4, -1, 0 },
		[ROLE_JOB_ERROR] = { 1, -1, THEME_BOLD },
		[ROLE_JOB_CANCELED] = { 5, -1, 0 },
		[ROLE_JOB_UNKNOWN] = { -1, -1, THEME_DIM },
		[ROLE_LOG_STDOUT] = { -1, -1, 0 },
		[ROLE_LOG_STDERR] = { 1, -1, 0 },
		[ROLE_LOG_MATCH] = { 0, 3, 0 },
		[ROLE_DIALOG] = { 7, 4, 0 },
		[ROLE_DIALOG_WARNING] = { 7, 1, THEME_BOLD },
	};

	memset(t, 0, sizeof(*t));
	t->name = xstrdup("built-in");
	memcpy(t->role, def, sizeof(def));
}

void theme_free(struct theme *t)
{
	free(t->name);
	t->name = NULL;
}

struct ctx {
	const char	*file;
	yaml_document_t	 doc;
	char		**err;
};


static int parse_color(struct ctx *c, const yaml_node_t *n, short *out)
{
	const char *s = yamldoc_scalar(n), *name;
	char *end;
	long v;
	int i;

	if (s == NULL)
		return yamldoc_fail(c->err, c->file, n, "a colour is a name or a number 0..255");
	if (strcmp(s, "default") == 0) {
		*out = -1;
		return 0;
	}
	name = strncmp(s, "bright-", 7) == 0 ? s + 7 : s;
	for (i = 0; i < 8; i++) {
		if (strcmp(name, color_names[i]) == 0) {
			*out = (short)(i + (name != s ? 8 : 0));
			return 0;
		}
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == 0 && end != s && *end == '\0' && v >= 0 && v <= 255) {
		*out = (short)v;
		return 0;
	}
	return yamldoc_fail(c->err, c->file, n, "unknown colour '%s' (use black, red, green, yellow, "
	    "blue, magenta, cyan, white, bright-NAME, default or 0..255)", s);
}

static int parse_attrs(struct ctx *c, const yaml_node_t *n, unsigned *out)
{
	yaml_node_item_t *it;
	size_t i;

	if (n->type != YAML_SEQUENCE_NODE)
		return yamldoc_fail(c->err, c->file, n, "attrs is a list, like [bold, underline]");
	*out = 0;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		const yaml_node_t *e = yaml_document_get_node(&c->doc, *it);
		const char *s = yamldoc_scalar(e);
		int found = 0;
		for (i = 0; s != NULL && i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
			if (strcmp(s, attr_names[i].name) == 0) {
				*out |= attr_names[i].bit;
				found = 1;
			}
		}
		if (!found)
			return yamldoc_fail(c->err, c->file, e, "unknown attribute '%s' (use bold, dim, underline, "
			    "reverse, italic or standout)", s ? s : "?");
	}
	return 0;
}

static int parse_role(struct ctx *c, const yaml_node_t *n, struct role_style *st)
{
	yaml_node_pair_t *p;

	if (n->type != YAML_MAPPING_NODE)
		return yamldoc_fail(c->err, c->file, n, "a role is a mapping, like { fg: green, attrs: [bold] }");
	st->fg = st->bg = -1;
	st->attrs = 0;
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&c->doc, p->value);
		const char *key = yamldoc_scalar(k);
		int rc;
		if (key != NULL && strcmp(key, "fg") == 0)
			rc = parse_color(c, v, &st->fg);
		else if (key != NULL && strcmp(key, "bg") == 0)
			rc = parse_color(c, v, &st->bg);
		else if (key != NULL && strcmp(key, "attrs") == 0)
			rc = parse_attrs(c, v, &st->attrs);
		else
			rc = yamldoc_fail(c->err, c->file, k, "unknown field '%s' (a role has fg, bg and attrs)",
			    key ? key : "?");
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int parse_roles(struct ctx *c, const yaml_node_t *n, struct theme *t)
{
	yaml_node_pair_t *p;
	int r;

	if (n->type != YAML_MAPPING_NODE)
		return yamldoc_fail(c->err, c->file, n, "roles is a mapping of role names to styles");
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const char *key = yamldoc_scalar(k);
		for (r = 0; r < ROLE_COUNT; r++)
			if (key != NULL && strcmp(key, role_names[r]) == 0)
				break;
		if (r == ROLE_COUNT)
			return yamldoc_fail(c->err, c->file, k, "unknown role '%s' (see themes/default.yaml for the "
			    "roles)", key ? key : "?");
		if (parse_role(c, yaml_document_get_node(&c->doc, p->value), &t->role[r]) != 0)
			return -1;
	}
	return 0;
}

int theme_parse(const char *file, const char *text, struct theme *t, char **err)
{
	struct ctx c = { .file = file, .err = err };
	yaml_node_t *root;
	yaml_node_pair_t *p;
	int rc = -1;

	theme_builtin(t);
	if (yamldoc_load(file, text, strlen(text), &c.doc, err) != 0) {
		theme_free(t);
		return -1;
	}
	root = yaml_document_get_root_node(&c.doc);
	if (root == NULL || root->type != YAML_MAPPING_NODE) {
		*err = xasprintf("%s:1:1: a theme is a mapping with name and roles", file);
		goto out;
	}
	for (p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(&c.doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(&c.doc, p->value);
		const char *key = yamldoc_scalar(k);
		if (key != NULL && strcmp(key, "name") == 0 && yamldoc_scalar(v) != NULL) {
			free(t->name);
			t->name = xstrdup(yamldoc_scalar(v));
		} else if (key != NULL && strcmp(key, "roles") == 0) {
			if (parse_roles(&c, v, t) != 0)
				goto out;
		} else {
			yamldoc_fail(c.err, c.file, k, "unknown field '%s' (a theme has name and roles)",
			    key ? key : "?");
			goto out;
		}
	}
	rc = 0;
out:
	yaml_document_delete(&c.doc);
	if (rc != 0)
		theme_free(t);
	return rc;
}

int theme_load(const char *name, struct theme *t, char **err)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *paths[3] = { NULL, NULL, NULL }, *text = NULL, *share;
	size_t len, i;
	int rc = -1;

	len = strlen(name);
	if (len > 5 && strcmp(name + len - 5, ".yaml") == 0) {
		paths[0] = xstrdup(name);
	} else {
		if (strchr(name, '/') != NULL || name[0] == '.' || name[0] == '\0') {
			*err = xasprintf("theme '%s': a theme is a name (like \"light\") or a path "
			    "ending in .yaml", name);
			return -1;
		}
		if (xdg != NULL && xdg[0] != '\0')
			paths[0] = xasprintf("%s/taotop/themes/%s.yaml", xdg, name);
		else if (home != NULL)
			paths[0] = xasprintf("%s/.config/taotop/themes/%s.yaml", home, name);
		share = share_dir("themes");
		paths[1] = xasprintf("%s/%s.yaml", share, name);
		free(share);
	}
	for (i = 0; i < 3 && paths[i] != NULL; i++) {
		char *why = NULL;
		if ((text = file_read_all(paths[i], NULL, &why)) != NULL) {
			rc = theme_parse(paths[i], text, t, err);
			free(text);
			break;
		}
		free(why);
	}
	if (i == 3 || paths[i] == NULL)
		*err = xasprintf("theme '%s' not found (looked in %s%s%s)", name, paths[0],
		    paths[1] ? " and " : "", paths[1] ? paths[1] : "");
	for (i = 0; i < 3; i++)
		free(paths[i]);
	return rc;
}

short theme_fit_color(short c, int ncolors)
{
	/* The xterm 256 palette: 16..231 a 6x6x6 cube, 232..255 greys. */
	int r, g, b, v;

	if (c < 0 || c < ncolors)
		return c;
	if (c < 16)
		return (short)(c - 8);
	if (c >= 232) {
		v = c - 232;		/* 0..23, dark to light */
		return v < 6 ? 0 : v < 18 ? (ncolors > 8 ? 8 : 0) : 7;
	}
	v = c - 16;
	r = v / 36 >= 3, g = (v / 6) % 6 >= 3, b = v % 6 >= 3;
	return (short)(r | g << 1 | b << 2);
}

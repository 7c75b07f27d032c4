#include "ui/wizard.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/command.h"
#include "engine/config/config.h"
#include "engine/submit/lint.h"
#include "engine/submit/policy.h"
#include "engine/submit/secrets.h"
#include "engine/submit/spec.h"
#include "engine/config/storage.h"
#include "ui/text.h"
#include "util/buf.h"
#include "util/xmalloc.h"

static const struct {
	const char	*label;
	const char	*hint;
	int		 required;
} fields[WZ_NFIELDS] = {
	[WZ_BUNDLE] = { "Bundle", "a spec bundle (.yaml) to start from: Enter opens the file picker, "
	    "its fields fill the form (empty: start from nothing)", 0 },
	[WZ_CLUSTER] = { "Cluster", "Left/Right: the cluster to submit to", 0 },
	[WZ_IMAGE] = { "Image", "a .sqsh path on the cluster, or a registry image (converted once "
	    "on the CPU partition, never on the GPUs)", 1 },
	[WZ_ARCH] = { "Network arch", "TAO's network arch, e.g. classification_pyt", 0 },
	[WZ_ACTION] = { "Action", "train, evaluate, export, ...", 0 },
	[WZ_COMMAND] = { "Command", "what runs in the container, its words split at spaces; "
	    "{spec} {results_dir} {job_dir} {job_id} are filled in (empty: TAO's own, "
	    "ARCH ACTION -e {spec} results_dir={results_dir})", 0 },
	[WZ_DATASETS] = { "Datasets", "lustre:///path URIs on the shared storage, separated by "
	    "spaces", 0 },
	[WZ_RESULTS] = { "Results dir", "lustre:///path (empty: the job's own folder)", 0 },
	[WZ_GPUS] = { "GPUs", "GPUs in all; at 8 or more, whole nodes (the count is derived)", 0 },
	[WZ_NODES] = { "Nodes", "nodes (more than one: the NCCL probe runs first in the job, once)", 0 },
	[WZ_TIME] = { "Time (h)", "hours of wall time, e.g. 4 or 3.5 (polar, polar3, polar4 and "
	    "grizzly are 4-hour queues); training stops at 0.95 of it and the job requeues "
	    "itself to go on (Preview shows the segments)", 0 },
	[WZ_PARTITION] = { "Partition", "the SLURM partition", 1 },
	[WZ_ACCOUNT] = { "Account", "#SBATCH --account (empty: none)", 0 },
	[WZ_ENV] = { "Extra env", "NAME=value pairs separated by spaces: cluster knobs, never "
	    "secrets", 0 },
	[WZ_SECRETS] = { "Secrets", "names of secrets, separated by spaces: their values go only "
	    "into a mode-600 file on the cluster", 0 },
};

#define SECRET_HINT	"typed value is masked and kept only until the submit; empty: " \
			"from your environment or .env"
#define PREVIEW_HINT	"Enter: render the sbatch and list the remote commands (nothing is " \
			"written or submitted)"
#define SUBMIT_HINT	"Enter: submit; each step is shown as it runs"

static void set_value(struct wizard *w, enum wiz_field f, const char *v)
{
	/* Copied before the old value goes: v may be it (a typed path). */
	char *copy = xstrdup(v != NULL ? v : "");

	free(w->value[f]);
	w->value[f] = copy;
}

static void set_number(struct wizard *w, enum wiz_field f, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%g", v);
	set_value(w, f, buf);
}

static void wipe(char *s)
{
	if (s != NULL)
		buf_mem_wipe(s, strlen(s));
	free(s);
}

/* Words of s, split at spaces and commas. */
static size_t words(const char *s, char ***out)
{
	size_t n = 0;

	*out = NULL;
	while (*s != '\0') {
		size_t len;
		s += strspn(s, " \t,");
		len = strcspn(s, " \t,");
		if (len == 0)
			break;
		*out = xreallocarray(*out, n + 1, sizeof(**out));
		(*out)[n++] = xstrndup(s, len);
		s += len;
	}
	return n;
}

static void words_free(char **v, size_t n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

/* Take name's typed value out of v (its slot left empty), or NULL. */
static char *take_value(struct wiz_secret *v, size_t n, const char *name)
{
	char *value;
	size_t i;

	for (i = 0; i < n; i++) {
		if (v[i].value != NULL && v[i].value[0] != '\0' && strcmp(v[i].name, name) == 0) {
			value = v[i].value;
			v[i].value = NULL;
			return value;
		}
	}
	return NULL;
}

static void secrets_free(struct wiz_secret *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		wipe(v[i].value);
	}
	free(v);
}

/* The secret rows follow the names in the secrets field. A typed value
 * stays with its name, even while the name is being retyped: values of
 * names gone from the field wait in the stash. */
static void sync_secrets(struct wizard *w)
{
	char **names;
	size_t n = words(w->value[WZ_SECRETS], &names), i;
	struct wiz_secret *sec = xcalloc(n ? n : 1, sizeof(*sec));

	for (i = 0; i < n; i++) {
		sec[i].name = names[i];
		sec[i].value = take_value(w->sec, w->nsec, names[i]);
		if (sec[i].value == NULL)
			sec[i].value = take_value(w->stash, w->nstash, names[i]);
		if (sec[i].value == NULL)
			sec[i].value = xstrdup("");
	}
	free(names);
	for (i = 0; i < w->nsec; i++) {
		if (w->sec[i].value != NULL && w->sec[i].value[0] != '\0') {
			w->stash = xreallocarray(w->stash, w->nstash + 1, sizeof(*w->stash));
			w->stash[w->nstash++] = w->sec[i];
		} else {
			free(w->sec[i].name);
			wipe(w->sec[i].value);
		}
	}
	free(w->sec);
	w->sec = sec;
	w->nsec = n;
}

void wizard_init(struct wizard *w, const struct config *cfg, size_t cluster)
{
	const struct cluster_cfg *cl = &cfg->clusters[cluster];
	int i;

	/* It will hold typed secrets: no core dump may carry them away. */
	secrets_hold();
	memset(w, 0, sizeof(*w));
	w->cfg = cfg;
	w->cluster = cluster;
	for (i = 0; i < WZ_NFIELDS; i++)
		w->value[i] = xstrdup("");
	set_value(w, WZ_CLUSTER, cl->name);
	set_number(w, WZ_GPUS, seed_defaults.num_gpus);
	set_number(w, WZ_NODES, seed_defaults.num_nodes);
	set_number(w, WZ_TIME, seed_defaults.time_hours);
	free(w->value[WZ_PARTITION]);
	w->value[WZ_PARTITION] = xstrndup(cl->partitions ? cl->partitions : "",
	    cl->partitions ? strcspn(cl->partitions, ",") : 0);
	set_value(w, WZ_ACCOUNT, cl->account);
	sync_secrets(w);
}

void wizard_free(struct wizard *w)
{
	size_t i;

	for (i = 0; i < WZ_NFIELDS; i++)
		free(w->value[i]);
	secrets_free(w->sec, w->nsec);
	secrets_free(w->stash, w->nstash);
	free(w->loaded);
	free(w->loaded_command);
	free(w->bundle_error);
	memset(w, 0, sizeof(*w));
}

int wizard_load(struct wizard *w, const char *path, char **err)
{
	struct spec s;
	char *list;
	size_t i;

	free(w->bundle_error);
	w->bundle_error = NULL;
	if (spec_load(path, &s, err) != 0) {
		w->bundle_error = xstrdup(*err);
		return -1;
	}
	/* path may be the bundle row's own text, which this replaces: copied
	 * before anything is freed. */
	{
		char *copy = xstrdup(path);
		free(w->loaded);
		w->loaded = copy;
	}
	set_value(w, WZ_BUNDLE, w->loaded);
	set_value(w, WZ_IMAGE, s.image);
	set_value(w, WZ_ARCH, s.network_arch);
	set_value(w, WZ_ACTION, s.action);
	set_value(w, WZ_COMMAND, s.command);
	list = spec_join_words(s.datasets, s.ndatasets);
	set_value(w, WZ_DATASETS, list);
	free(list);
	set_value(w, WZ_RESULTS, s.results_dir);
	/* What the bundle leaves out keeps the form's default. */
	if (s.gpus >= 0)
		set_number(w, WZ_GPUS, s.gpus);
	else if (s.gpus_per_node > 0)	/* the shape said outright (the bank's compute_shape) */
		set_number(w, WZ_GPUS, s.gpus_per_node * (s.nodes > 0 ? s.nodes : 1));
	if (s.nodes > 0)
		set_number(w, WZ_NODES, s.nodes);
	if (s.time_hours > 0)
		set_number(w, WZ_TIME, s.time_hours);
	if (s.partition != NULL)
		set_value(w, WZ_PARTITION, s.partition);
	if (s.account != NULL)
		set_value(w, WZ_ACCOUNT, s.account);
	{
		struct buf b;
		buf_init(&b);
		buf_adds(&b, "");
		for (i = 0; i < s.nextra_env; i++)
			buf_addf(&b, "%s%s=%s", i ? " " : "", s.extra_env[i].key, s.extra_env[i].value);
		free(w->value[WZ_ENV]);
		w->value[WZ_ENV] = buf_detach(&b);
	}
	list = spec_join_words(s.secrets, s.nsecrets);
	set_value(w, WZ_SECRETS, list);
	free(list);
	sync_secrets(w);
	free(w->loaded_command);
	w->loaded_command = xstrdup(w->value[WZ_COMMAND]);
	w->touched = 0;
	spec_free(&s);
	return 0;
}

size_t wizard_rows(const struct wizard *w)
{
	return WZ_NFIELDS + w->nsec + 2;
}

enum wiz_row_kind wizard_row_kind(const struct wizard *w, size_t row)
{
	if (row < WZ_NFIELDS)
		return WR_FIELD;
	if (row < WZ_NFIELDS + w->nsec)
		return WR_SECRET;
	return row == WZ_NFIELDS + w->nsec ? WR_PREVIEW : WR_SUBMIT;
}

enum wiz_field wizard_row_field(size_t row)
{
	return (enum wiz_field)row;
}

/* The text the focused row edits, or NULL. */
static char **focused_text(struct wizard *w)
{
	switch (wizard_row_kind(w, w->row)) {
	case WR_FIELD:
		return w->row == WZ_CLUSTER ? NULL : &w->value[w->row];
	case WR_SECRET:
		return &w->sec[w->row - WZ_NFIELDS].value;
	default:
		return NULL;
	}
}

static void edited(struct wizard *w)
{
	if (w->row < WZ_NFIELDS) {
		w->touched |= 1u << w->row;
		if (w->row == WZ_SECRETS)
			sync_secrets(w);
		if (w->row == WZ_BUNDLE) {
			free(w->bundle_error);
			w->bundle_error = NULL;
		}
	}
}

void wizard_type(struct wizard *w, const char *text)
{
	char **t = focused_text(w), *old;

	if (t == NULL)
		return;
	old = *t;
	*t = xasprintf("%s%s", old, text);
	wipe(old);
	edited(w);
}

void wizard_backspace(struct wizard *w)
{
	char **t = focused_text(w);
	size_t len;

	if (t == NULL || (len = strlen(*t)) == 0)
		return;
	/* A whole UTF-8 character: its continuation bytes, then its lead. */
	while (len > 0 && ((unsigned char)(*t)[len - 1] & 0xc0) == 0x80)
		(*t)[--len] = '\0';
	if (len > 0)
		(*t)[--len] = '\0';
	edited(w);
}

void wizard_clear(struct wizard *w)
{
	char **t = focused_text(w);

	if (t == NULL)
		return;
	buf_mem_wipe(*t, strlen(*t));
	edited(w);
}

void wizard_cycle_cluster(struct wizard *w, int dir)
{
	size_t n = w->cfg->n;

	if (n == 0)
		return;
	w->cluster = (w->cluster + n + (size_t)(dir < 0 ? n - 1 : 1)) % n;
	set_value(w, WZ_CLUSTER, w->cfg->clusters[w->cluster].name);
}

/* ---- checks: the engine's own rules -------------------------------------------------------- */

static int plain_word(const char *s, const char *extra)
{
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr(extra, *s) == NULL)
			return 0;
	return 1;
}

/* A whole number in [lo, hi]; -1 when the text is not one. */
static long whole(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);

	return *s != '\0' && *end == '\0' && v >= lo && v <= hi ? v : -1;
}

/* The policy's verdict on the form's GPUs, nodes and time on its
 * partition; NULL when allowed. */
static char *policy_problem(const struct wizard *w, int with_time)
{
	struct spec s;
	struct resources res;
	char *err = NULL, *end;

	memset(&s, 0, sizeof(s));
	s.gpus = (int)whole(w->value[WZ_GPUS], 0, 4096);
	s.nodes = (int)whole(w->value[WZ_NODES], 1, 1024);
	s.cpus_per_task = -1;
	s.requeue = -1;
	s.time_hours = with_time ? strtod(w->value[WZ_TIME], &end) : -1;
	if (with_time && (*w->value[WZ_TIME] == '\0' || *end != '\0'))
		s.time_hours = -1;
	if (policy_resources(&s, &seed_defaults, w->value[WZ_PARTITION], 1e9, &res, NULL, &err) != 0)
		return err;
	return NULL;
}

static char *uri_problem(const char *field, const char *value)
{
	char **v, *err = NULL, *p;
	size_t n = words(value, &v), i;

	for (i = 0; i < n && err == NULL; i++) {
		p = storage_path(field, v[i], &err);
		free(p);
	}
	words_free(v, n);
	return err;
}

static char *env_problem(const char *value)
{
	char **v, *err = NULL;
	size_t n = words(value, &v), i;

	for (i = 0; i < n && err == NULL; i++) {
		const char *eq = strchr(v[i], '=');
		char *name = xstrndup(v[i], eq ? (size_t)(eq - v[i]) : strlen(v[i]));
		if (eq == NULL || !spec_env_name_ok(name)) {
			err = xasprintf("extra env: %s is not NAME=value (a name is upper case, "
			    "digits and _)", v[i]);
		} else {
			/* The sbatch lint's secret rules, here before anything is
			 * rendered: a secret goes under Secrets, by name. */
			char *line = xasprintf("export %s\n", v[i]), *report = NULL;
			if (lint_script("extra env", line, &report) > 0)
				err = xasprintf("extra env: %s looks like a secret: name it under "
				    "Secrets instead (its value then goes only into the mode-600 "
				    "sidecar)", name);
			free(report);
			free(line);
		}
		free(name);
	}
	words_free(v, n);
	return err;
}

static char *field_problem(const struct wizard *w, enum wiz_field f)
{
	const char *v = w->value[f];
	char *err = NULL, *end;
	struct image_ref ref;

	if (fields[f].required && v[0] == '\0')
		return xasprintf("%s is required", fields[f].label);
	switch (f) {
	case WZ_BUNDLE:
		if (w->bundle_error != NULL)
			return xstrdup(w->bundle_error);
		return v[0] != '\0' && (w->loaded == NULL || strcmp(w->loaded, v) != 0)
		    ? xstrdup("bundle: not read yet: Enter reads it (or opens the picker on a folder)")
		    : NULL;
	case WZ_IMAGE:
		if (image_parse(v, "/images", &ref, &err) != 0)
			return err;
		image_ref_free(&ref);
		return NULL;
	case WZ_ARCH:
	case WZ_ACTION:
		return plain_word(v, "_.-") ? NULL : xasprintf("%s: letters, digits, _ . and - only",
		    fields[f].label);
	case WZ_COMMAND: {
		char **argv;
		size_t n = words(v, &argv), i;
		if (n == 0 && command_default(w->value[WZ_ARCH],
		    w->value[WZ_ACTION], &argv, &n, &err) != 0)
			return err;
		for (i = 0; i < n && err == NULL; i++)
			command_check_word(argv[i], &err);
		words_free(argv, n);
		return err;
	}
	case WZ_DATASETS:
		return uri_problem("datasets", v);
	case WZ_RESULTS:
		return uri_problem("results_dir", v);
	case WZ_GPUS:
		if (v[0] != '\0' && whole(v, 0, 4096) < 0)
			return xstrdup("GPUs: a whole number from 0 to 4096");
		return policy_problem(w, 0);
	case WZ_NODES:
		return v[0] != '\0' && whole(v, 1, 1024) < 0
		    ? xstrdup("Nodes: a whole number from 1 to 1024") : NULL;
	case WZ_TIME:
		if (v[0] == '\0')
			return NULL;
		{
			double h = strtod(v, &end);
			if (*end != '\0' || !(h > 0) || h > 24 * 365)
				return xstrdup("time must be a number of hours above 0 (e.g. 4 or 3.5)");
		}
		/* GPUs' own problem shows at the GPUs; here only what the
		 * time changes. */
		if ((err = policy_problem(w, 0)) != NULL) {
			free(err);
			return NULL;
		}
		return policy_problem(w, 1);
	case WZ_PARTITION:
	case WZ_ACCOUNT:
		return plain_word(v, "_-.") ? NULL : xasprintf("%s: letters, digits, _ . and - only",
		    fields[f].label);
	case WZ_ENV:
		return env_problem(v);
	case WZ_SECRETS: {
		char **names;
		size_t n = words(v, &names), i;
		for (i = 0; i < n && err == NULL; i++)
			if (!spec_env_name_ok(names[i]))
				err = xasprintf("secrets: %s is not a variable name (upper case, digits "
				    "and _)", names[i]);
		words_free(names, n);
		return err;
	}
	default:
		return NULL;
	}
}

char *wizard_problem(const struct wizard *w, size_t row)
{
	return wizard_row_kind(w, row) == WR_FIELD ? field_problem(w, wizard_row_field(row)) : NULL;
}

long wizard_first_problem(const struct wizard *w, char **msg)
{
	size_t r;

	for (r = 0; r < wizard_rows(w); r++)
		if ((*msg = wizard_problem(w, r)) != NULL)
			return (long)r;
	return -1;
}

/* ---- the spec it makes --------------------------------------------------------------------- */

static char *or_null(const char *v)
{
	return v[0] != '\0' ? xstrdup(v) : NULL;
}

int wizard_build(const struct wizard *w, struct spec *s, struct spec_kv **secrets,
    size_t *nsecrets, char **err)
{
	long bad = wizard_first_problem(w, err);
	size_t i, n;
	char **v;

	*secrets = NULL;
	*nsecrets = 0;
	if (bad >= 0)
		return -1;
	if (w->loaded != NULL && strcmp(w->loaded, w->value[WZ_BUNDLE]) == 0) {
		/* What the form does not show (supporting files, TAO's spec:,
		 * CPUs, requeue) comes from the bundle. */
		if (spec_load(w->loaded, s, err) != 0)
			return -1;
	} else {
		memset(s, 0, sizeof(*s));
		s->gpus = s->nodes = s->cpus_per_task = s->requeue = s->gpus_per_node = -1;
		s->time_hours = -1;
	}
	free(s->image), free(s->network_arch), free(s->action), free(s->results_dir);
	free(s->partition), free(s->account);
	s->image = xstrdup(w->value[WZ_IMAGE]);
	s->network_arch = or_null(w->value[WZ_ARCH]);
	s->action = or_null(w->value[WZ_ACTION]);
	s->results_dir = or_null(w->value[WZ_RESULTS]);
	s->partition = or_null(w->value[WZ_PARTITION]);
	s->account = or_null(w->value[WZ_ACCOUNT]);
	if (s->argv == NULL || w->loaded_command == NULL ||
	    strcmp(w->loaded_command, w->value[WZ_COMMAND]) != 0) {
		for (i = 0; i < s->argc; i++)
			free(s->argv[i]);
		free(s->argv);
		free(s->command);
		s->argc = words(w->value[WZ_COMMAND], &s->argv);
		s->command = xstrdup(w->value[WZ_COMMAND]);
		/* Typed: the user's words, which get no GPU overrides (an empty
		 * field is TAO's own again, made by the submit). */
		s->command_is_taos = 0;
	}
	for (i = 0; i < s->ndatasets; i++)
		free(s->datasets[i]);
	free(s->datasets);
	s->ndatasets = words(w->value[WZ_DATASETS], &s->datasets);
	s->gpus = w->value[WZ_GPUS][0] ? (int)whole(w->value[WZ_GPUS], 0, 4096) : -1;
	s->nodes = w->value[WZ_NODES][0] ? (int)whole(w->value[WZ_NODES], 1, 1024) : -1;
	s->time_hours = w->value[WZ_TIME][0] ? strtod(w->value[WZ_TIME], NULL) : -1;
	for (i = 0; i < s->nextra_env; i++)
		free(s->extra_env[i].key), free(s->extra_env[i].value);
	free(s->extra_env);
	n = words(w->value[WZ_ENV], &v);
	s->extra_env = xcalloc(n ? n : 1, sizeof(*s->extra_env));
	for (i = 0; i < n; i++) {
		size_t eq = strcspn(v[i], "=");
		s->extra_env[i].key = xstrndup(v[i], eq);
		s->extra_env[i].value = xstrdup(v[i] + eq + 1);
	}
	s->nextra_env = n;
	words_free(v, n);
	for (i = 0; i < s->nsecrets; i++)
		free(s->secrets[i]);
	free(s->secrets);
	s->nsecrets = words(w->value[WZ_SECRETS], &s->secrets);
	for (i = 0; i < w->nsec; i++) {
		if (w->sec[i].value[0] == '\0')
			continue;
		*secrets = xreallocarray(*secrets, *nsecrets + 1, sizeof(**secrets));
		(*secrets)[*nsecrets].key = xstrdup(w->sec[i].name);
		(*secrets)[*nsecrets].value = xstrdup(w->sec[i].value);
		(*nsecrets)++;
	}
	return 0;
}

/* ---- the lines shown ------------------------------------------------------------------------ */

static char *masked(const char *v)
{
	size_t n = 0;
	const char *p;

	/* One '*' per character, not per byte: the length is all it says. */
	for (p = v; *p != '\0'; p++)
		n += ((unsigned char)*p & 0xc0) != 0x80;
	char *m = xmalloc(n + 1);
	memset(m, '*', n);
	m[n] = '\0';
	return m;
}

size_t wizard_lines(const struct wizard *w, int width, char ***lines, size_t *focus)
{
	size_t n = 0, r, rows = wizard_rows(w);
	char *problem = NULL;

	*lines = NULL;
	*focus = 0;
	for (r = 0; r < rows; r++) {
		enum wiz_row_kind k = wizard_row_kind(w, r);
		char *p = wizard_problem(w, r), *shown = NULL;
		int mark = p != NULL && (w->tried || (r < WZ_NFIELDS && (w->touched >> r) & 1) ||
		    (r == WZ_BUNDLE && w->bundle_error != NULL));
		char cur = r == w->row ? '>' : ' ';

		if (r == w->row) {
			*focus = n;
			problem = p;
			p = NULL;
		}
		free(p);
		if (k == WR_PREVIEW) {
			text_lines_add(lines, &n, xstrdup(""));
			text_lines_add(lines, &n, xasprintf("%c  [ Preview: the sbatch and the commands ]", cur));
			if (r == w->row)
				*focus = n - 1;
			continue;
		}
		if (k == WR_SUBMIT) {
			text_lines_add(lines, &n, xasprintf("%c  [ Submit ]", cur));
			continue;
		}
		if (k == WR_SECRET) {
			const struct wiz_secret *s = &w->sec[r - WZ_NFIELDS];
			const char *env = getenv(s->name);
			shown = s->value[0] != '\0' ? masked(s->value)
			    : xstrdup(env != NULL && env[0] != '\0' ? "(from your environment)"
			    : "(type it here, or export it / put it in .env)");
			text_lines_add(lines, &n, xasprintf("%c   %-12.12s %s", cur, s->name, shown));
			free(shown);
			continue;
		}
		if (r == WZ_CLUSTER)
			shown = xasprintf("< %s >", w->value[r]);
		text_lines_add(lines, &n, xasprintf("%c%c %-12s %s%s", cur, mark ? '!' : ' ',
		    fields[r].label, shown ? shown : w->value[r], r == w->row && !shown ? "_" : ""));
		free(shown);
	}
	/* A blank line as wide as the form: the box keeps its size as
	 * values and messages come and go. */
	text_lines_add(lines, &n, xasprintf("%*s", width > 0 ? width : 0, ""));
	if (problem != NULL) {
		char *msg = xasprintf("! %s", problem);
		text_wrap(lines, &n, msg, "", width);
		free(msg);
		free(problem);
	} else {
		enum wiz_row_kind k = wizard_row_kind(w, w->row);
		text_wrap(lines, &n, k == WR_FIELD ? fields[w->row].hint : k == WR_SECRET
		    ? SECRET_HINT : k == WR_PREVIEW ? PREVIEW_HINT : SUBMIT_HINT, "", width);
	}
	return n;
}

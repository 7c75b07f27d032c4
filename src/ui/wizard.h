/*
 * The submit wizard's form (`s` in the monitor): the fields of a spec
 * bundle, filled from a bundle or from the seed's defaults and the
 * cluster's config, each checked as it is typed with the engine's own rules
 * and words (engine/policy, engine/storage, engine/spec, engine/lint). What
 * it builds is a struct spec for the same submit pipeline as `taotop
 * submit`.
 *
 * Rows: the fields, then one masked row per secret the form names (its
 * value, when the environment does not have it), then the Preview and
 * Submit buttons. Pure: no curses, no network; the monitor feeds it keys
 * and draws wizard_lines().
 */
#ifndef TAOTOP_UI_WIZARD_H
#define TAOTOP_UI_WIZARD_H

#include <stddef.h>

struct config;
struct spec;
struct spec_kv;

enum wiz_field {
	WZ_BUNDLE, WZ_CLUSTER, WZ_IMAGE, WZ_ARCH, WZ_ACTION, WZ_COMMAND, WZ_DATASETS,
	WZ_RESULTS, WZ_GPUS, WZ_NODES, WZ_TIME, WZ_PARTITION, WZ_ACCOUNT, WZ_ENV, WZ_SECRETS,
	WZ_NFIELDS
};

enum wiz_row_kind { WR_FIELD, WR_SECRET, WR_PREVIEW, WR_SUBMIT };

struct wiz_secret {
	char	*name;
	char	*value;		/* typed (never shown), "" when none */
};

struct wizard {
	const struct config	*cfg;
	size_t			 cluster;	/* index in cfg->clusters */
	char			*value[WZ_NFIELDS];
	unsigned		 touched;	/* bit per field: typed into */
	struct wiz_secret	*sec;		/* a row per name in the secrets field */
	size_t			 nsec;
	struct wiz_secret	*stash;		/* typed values of names edited away: */
	size_t			 nstash;	/* back if the name comes back */
	size_t			 row;
	int			 tried;		/* preview or submit asked: show every problem */
	char			*loaded;	/* the bundle the fields came from */
	char			*loaded_command;/* its command as shown: unchanged, the
						 * bundle's own words are kept */
	char			*bundle_error;
};

/* An empty form for cfg's cluster: the seed's GPUs, nodes and hours, the
 * cluster's first partition and its account. */
void wizard_init(struct wizard *w, const struct config *cfg, size_t cluster);
/* Wipes the typed secrets. */
void wizard_free(struct wizard *w);

/* Fill the form from a bundle; -1 with the parser's file:line:col message
 * (also kept as the bundle row's problem), the fields unchanged. */
int wizard_load(struct wizard *w, const char *path, char **err);

size_t wizard_rows(const struct wizard *w);
enum wiz_row_kind wizard_row_kind(const struct wizard *w, size_t row);
/* The field of a WR_FIELD row. */
enum wiz_field wizard_row_field(size_t row);

/* Typing into the focused row (UTF-8 text), Backspace, Ctrl-U. The cluster
 * row takes wizard_cycle_cluster() instead; buttons take nothing. */
void wizard_type(struct wizard *w, const char *text);
void wizard_backspace(struct wizard *w);
void wizard_clear(struct wizard *w);
void wizard_cycle_cluster(struct wizard *w, int dir);

/* What is wrong with a row, in the engine's words, or NULL (caller
 * frees). A required field left empty is a problem. */
char *wizard_problem(const struct wizard *w, size_t row);
/* The first row with a problem: its index and message (caller frees);
 * -1 when there is none. */
long wizard_first_problem(const struct wizard *w, char **msg);

/* The spec the form describes, and the typed secrets (names and values;
 * caller wipes and frees). -1 with *err when the form cannot make one
 * (a problem, or the bundle no longer reads). */
int wizard_build(const struct wizard *w, struct spec *out, struct spec_kv **secrets,
    size_t *nsecrets, char **err);

/* The form as text lines `width` columns wide: a row per field and secret
 * (values masked), the buttons, then the focused row's problem or hint,
 * wrapped. *focus: the focused row's line. Caller frees. */
size_t wizard_lines(const struct wizard *w, int width, char ***lines, size_t *focus);

#endif

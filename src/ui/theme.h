/*
 * Themes map roles (what a thing on screen is: a running job, the status
 * bar, a line of main.err) to colours and attributes, read from
 * themes/NAME.yaml. The user's folder ($XDG_CONFIG_HOME/taotop/themes) is
 * searched before taotop's own. A broken file is an error with
 * file:line:column; the caller then falls back to the built-in default.
 *
 * Colours: black red green yellow blue magenta cyan white, bright-NAME
 * (8..15), default (the terminal's own), or a number 0..255. On a terminal
 * with fewer colours a number is brought down to the nearest of the eight.
 * Attributes: bold dim underline reverse italic standout.
 */
#ifndef TAOTOP_UI_THEME_H
#define TAOTOP_UI_THEME_H

enum role {
	ROLE_STATUS_BAR,
	ROLE_STATUS_STALE,
	ROLE_STATUS_ERROR,
	ROLE_HEADER,
	ROLE_SELECTION,
	ROLE_MARKED,
	ROLE_JOB_PENDING,
	ROLE_JOB_RUNNING,
	ROLE_JOB_DONE,
	ROLE_JOB_ERROR,
	ROLE_JOB_CANCELED,
	ROLE_JOB_UNKNOWN,
	ROLE_LOG_STDOUT,
	ROLE_LOG_STDERR,
	ROLE_LOG_MATCH,
	ROLE_DIALOG,
	ROLE_DIALOG_WARNING,
	ROLE_COUNT
};

enum {
	THEME_BOLD = 1 << 0,
	THEME_DIM = 1 << 1,
	THEME_UNDERLINE = 1 << 2,
	THEME_REVERSE = 1 << 3,
	THEME_ITALIC = 1 << 4,
	THEME_STANDOUT = 1 << 5,
};

struct role_style {
	short		fg, bg;		/* -1: the terminal's default */
	unsigned	attrs;		/* THEME_* */
};

struct theme {
	char			*name;
	struct role_style	 role[ROLE_COUNT];
};

const char *theme_role_name(enum role r);
/* The built-in default (the same as themes/default.yaml), for when no
 * file can be read. */
void theme_builtin(struct theme *t);
/* Parse a theme file's text; roles it does not name keep the built-in
 * default's style. -1 with "file:line:column: what is wrong". */
int theme_parse(const char *file, const char *text, struct theme *t, char **err);
/* Find NAME (a name, or a path ending in .yaml) in the user's folder, then
 * taotop's, and parse it. */
int theme_load(const char *name, struct theme *t, char **err);
void theme_free(struct theme *t);

/* Bring a colour number down to what the terminal has: 256 -> 8 (nearest
 * of the eight) when ncolors < 256, 16 -> 8 when ncolors < 16. */
short theme_fit_color(short c, int ncolors);

#endif

#include "ui/keymap.h"

/* ncurses' wide-character API without asking libc for X/Open. */
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

#define CTRL(c)	((c) & 0x1f)

/* Not const: keymap_bind changes keys (the user's config). */
static struct key_binding bindings[] = {
	{ 'q', KC_ANY, ACT_QUIT, "quit (also Ctrl-C)" },
	{ '?', KC_ANY, ACT_HELP, "this help" },
	{ CTRL('l'), KC_ANY, ACT_REDRAW, "redraw the screen and poll now" },
	{ 'R', KC_ANY, ACT_REDRAW, NULL },
	{ '\t', KC_ANY, ACT_FOCUS_NEXT, "focus: jobs, main.out, main.err" },
	{ KEY_BTAB, KC_ANY, ACT_FOCUS_JOBS, "focus the jobs list" },
	{ 'k', KC_ANY, ACT_UP, "up" },
	{ KEY_UP, KC_ANY, ACT_UP, NULL },
	{ 'j', KC_ANY, ACT_DOWN, "down" },
	{ KEY_DOWN, KC_ANY, ACT_DOWN, NULL },
	{ KEY_PPAGE, KC_ANY, ACT_PAGE_UP, "page up" },
	{ CTRL('b'), KC_ANY, ACT_PAGE_UP, NULL },
	{ KEY_NPAGE, KC_ANY, ACT_PAGE_DOWN, "page down" },
	{ CTRL('f'), KC_ANY, ACT_PAGE_DOWN, NULL },
	{ 'g', KC_ANY, ACT_TOP, "first line (a pane stops following)" },
	{ KEY_HOME, KC_ANY, ACT_TOP, NULL },
	{ 'G', KC_ANY, ACT_BOTTOM, "last line (a pane follows the end again)" },
	{ KEY_END, KC_ANY, ACT_BOTTOM, NULL },
	{ '/', KC_ANY, ACT_SEARCH, "jobs: filter as you type (Esc clears); pane: search" },
	{ 'n', KC_PANE, ACT_NEXT_MATCH, "next match" },
	{ 'N', KC_PANE, ACT_PREV_MATCH, "previous match" },
	{ 'h', KC_PANE, ACT_LEFT, "scroll left (wrap off)" },
	{ KEY_LEFT, KC_PANE, ACT_LEFT, NULL },
	{ 'l', KC_PANE, ACT_RIGHT, "scroll right (wrap off)" },
	{ KEY_RIGHT, KC_PANE, ACT_RIGHT, NULL },
	{ 'o', KC_JOBS, ACT_SORT, "sort by state, age, name, cluster" },
	{ 'C', KC_JOBS, ACT_GROUP, "group by cluster" },
	{ 'O', KC_JOBS, ACT_COLUMNS, "choose and order the columns (saved in config.yaml)" },
	{ 'f', KC_JOBS, ACT_FINISHED, "show or hide finished jobs" },
	{ ' ', KC_JOBS, ACT_MARK, "mark the job" },
	{ '*', KC_JOBS, ACT_MARK_ALL, "mark every job shown (again: unmark)" },
	{ 'c', KC_JOBS, ACT_CANCEL, "cancel the marked jobs, else the selected one" },
	{ 'd', KC_JOBS, ACT_CANCEL_PREFIX, "dd: the same as c" },
	{ '\r', KC_JOBS, ACT_DETAIL, "the job's detail: record, transitions, sbatch, spec" },
	{ KEY_ENTER, KC_JOBS, ACT_DETAIL, NULL },
	{ 'p', KC_JOBS, ACT_PLOT, "the curves of TAO's metrics; of the marked jobs, compared" },
	{ 'e', KC_JOBS, ACT_ARRAY, "expand or fold a job array (its tasks are one line)" },
	{ 'E', KC_JOBS, ACT_REPORT, "where your GPU hours went: the last 7 days, by outcome "
	  "(taotop report)" },
	{ 'r', KC_JOBS, ACT_RETRY, "retry a finished taotop job from what it staged" },
	{ 'a', KC_JOBS, ACT_ACTIONS, "requeue, hold, release, signal, time limit" },
	{ 's', KC_ANY, ACT_SUBMIT, "submit a job: the form (from a bundle or empty), its steps" },
	{ 'P', KC_ANY, ACT_DUMP, "write the screen as text to a file" },
	{ 'v', KC_ANY, ACT_SPLIT, "log panes side by side or stacked" },
	{ 'z', KC_ANY, ACT_MAXIMIZE, "maximise the focused pane (again: restore)" },
	{ 'w', KC_ANY, ACT_WRAP, "wrap long log lines" },
};

#define NBIND	(sizeof(bindings) / sizeof(bindings[0]))
#define UNBOUND	(-1)

static const char *const action_names[] = {
	[ACT_NONE] = "none", [ACT_QUIT] = "quit", [ACT_HELP] = "help", [ACT_REDRAW] = "redraw",
	[ACT_UP] = "up", [ACT_DOWN] = "down", [ACT_PAGE_UP] = "page_up",
	[ACT_PAGE_DOWN] = "page_down", [ACT_TOP] = "top", [ACT_BOTTOM] = "bottom",
	[ACT_FOCUS_NEXT] = "focus_next", [ACT_FOCUS_JOBS] = "focus_jobs", [ACT_SEARCH] = "search",
	[ACT_NEXT_MATCH] = "next_match", [ACT_PREV_MATCH] = "prev_match", [ACT_SORT] = "sort",
	[ACT_GROUP] = "group", [ACT_FINISHED] = "finished", [ACT_MARK] = "mark",
	[ACT_MARK_ALL] = "mark_all", [ACT_CANCEL] = "cancel", [ACT_CANCEL_PREFIX] = "dd",
	[ACT_SPLIT] = "split", [ACT_MAXIMIZE] = "maximize", [ACT_WRAP] = "wrap",
	[ACT_LEFT] = "left", [ACT_RIGHT] = "right", [ACT_DETAIL] = "detail",
	[ACT_RETRY] = "retry", [ACT_DUMP] = "dump", [ACT_ACTIONS] = "actions",
	[ACT_SUBMIT] = "submit", [ACT_COLUMNS] = "columns", [ACT_PLOT] = "plot", [ACT_REPORT] = "report", [ACT_ARRAY] = "array",
};

const char *keymap_action_name(enum action a)
{
	return (unsigned)a < sizeof(action_names) / sizeof(action_names[0]) && action_names[a]
	    ? action_names[a] : "?";
}

static const struct { int key; const char *name; } key_names[] = {
	{ KEY_UP, "Up" }, { KEY_DOWN, "Down" }, { KEY_LEFT, "Left" },
	{ KEY_RIGHT, "Right" }, { KEY_PPAGE, "PgUp" }, { KEY_NPAGE, "PgDn" },
	{ KEY_HOME, "Home" }, { KEY_END, "End" }, { KEY_BTAB, "S-Tab" },
	{ '\t', "Tab" }, { ' ', "Space" }, { '\r', "Enter" }, { KEY_ENTER, "Enter" },
};

/* "x", "^x", "C-x", or a name of key_names. */
static int parse_key(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (strcmp(s, key_names[i].name) == 0)
			return key_names[i].key;
	if (s[0] != '\0' && s[1] == '\0' && s[0] > ' ' && s[0] < 0x7f)
		return (unsigned char)s[0];
	if ((s[0] == '^' && s[1] != '\0' && s[2] == '\0') ||
	    (s[0] == 'C' && s[1] == '-' && s[2] != '\0' && s[3] == '\0')) {
		char c = s[0] == '^' ? s[1] : s[2];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			return CTRL(c);
	}
	return UNBOUND;
}

static int overlaps(enum key_context a, enum key_context b)
{
	return a == b || a == KC_ANY || b == KC_ANY;
}

int keymap_bind(const char *action, const char *key, char **err)
{
	size_t i, first = NBIND;
	int k = parse_key(key);
	enum action act = ACT_NONE;

	for (i = 1; i < sizeof(action_names) / sizeof(action_names[0]); i++)
		if (action_names[i] != NULL && strcmp(action_names[i], action) == 0)
			act = (enum action)i;
	if (act == ACT_NONE || act == ACT_CANCEL_PREFIX) {
		*err = xasprintf("keys: unknown action '%s' (see taotop(1), Keys: quit, help, up, "
		    "down, cancel, retry, detail, ...)", action);
		return -1;
	}
	if (k == UNBOUND) {
		*err = xasprintf("keys: %s: unknown key '%s' (a character, ^X or C-x, or Enter, Tab, "
		    "Space, Up, Down, Left, Right, PgUp, PgDn, Home, End)", action, key);
		return -1;
	}
	for (i = 0; i < NBIND; i++)
		if (bindings[i].action == act && first == NBIND)
			first = i;
	for (i = 0; i < NBIND; i++) {
		if (bindings[i].key == k && bindings[i].action != act &&
		    overlaps(bindings[i].ctx, bindings[first].ctx)) {
			*err = xasprintf("keys: %s: '%s' is already %s's key; give %s another key first",
			    action, key, keymap_action_name(bindings[i].action),
			    keymap_action_name(bindings[i].action));
			return -1;
		}
	}
	/* The action's first row (the one with its help) takes the key; its
	 * other keys go. */
	for (i = 0; i < NBIND; i++)
		if (bindings[i].action == act)
			bindings[i].key = i == first ? k : UNBOUND;
	return 0;
}

enum action keymap_lookup(enum key_context ctx, int key)
{
	enum action any = ACT_NONE;
	size_t i;

	for (i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
		if (bindings[i].key != key)
			continue;
		if (bindings[i].ctx == ctx)
			return bindings[i].action;
		if (bindings[i].ctx == KC_ANY && any == ACT_NONE)
			any = bindings[i].action;
	}
	return any;
}

const char *keymap_key_name(int key, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (key_names[i].key == key)
			return key_names[i].name;
	if (key >= 1 && key < 32)
		snprintf(buf, len, "^%c", key + '@');
	else
		snprintf(buf, len, "%c", key);
	return buf;
}

size_t keymap_help(char ***lines)
{
	static const char *const ctx_title[] = { "Anywhere", "Jobs list", "Log panes" };
	size_t n = 0, i, c, j, prev;
	char **v = NULL;


	for (c = KC_ANY; c <= KC_PANE; c++) {
		v = xreallocarray(v, n + 2, sizeof(*v));
		if (n > 0)
			v[n++] = xstrdup("");
		v[n++] = xstrdup(ctx_title[c]);
		for (i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
			struct buf keys;
			char name[8];
			if (bindings[i].ctx != c || bindings[i].help == NULL)
				continue;
			buf_init(&keys);
			buf_adds(&keys, keymap_key_name(bindings[i].key, name, sizeof(name)));
			prev = i;
			/* The help-less rows after it are its other keys, each
			 * named once (KEY_ENTER and '\r' are both Enter); a rebound
			 * action's other keys are gone (UNBOUND). */
			for (j = i + 1; j < NBIND && bindings[j].help == NULL; j++) {
				char other[8];
				if (bindings[j].key == UNBOUND || strcmp(keymap_key_name(bindings[j].key,
				    other, sizeof(other)), keymap_key_name(bindings[prev].key, name,
				    sizeof(name))) == 0)
					continue;
				buf_adds(&keys, " ");
				buf_adds(&keys, keymap_key_name(bindings[j].key, name, sizeof(name)));
				prev = j;
			}
			v = xreallocarray(v, n + 1, sizeof(*v));
			v[n++] = xasprintf("  %-14s %s", keys.data, bindings[i].help);
			buf_free(&keys);
		}
	}
	*lines = v;
	return n;
}

#include "ui/keymap.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

#define CTRL(c)	((c) & 0x1f)

static const struct key_binding bindings[] = {
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
	{ 'f', KC_JOBS, ACT_FINISHED, "show or hide finished jobs" },
	{ ' ', KC_JOBS, ACT_MARK, "mark the job" },
	{ '*', KC_JOBS, ACT_MARK_ALL, "mark every job shown (again: unmark)" },
	{ 'c', KC_JOBS, ACT_CANCEL, "cancel the marked jobs, else the selected one" },
	{ 'd', KC_JOBS, ACT_CANCEL_PREFIX, "dd: the same as c" },
	{ '\r', KC_JOBS, ACT_DETAIL, "the job's detail: record, transitions, sbatch, spec" },
	{ KEY_ENTER, KC_JOBS, ACT_DETAIL, NULL },
	{ 'r', KC_JOBS, ACT_RETRY, "retry a finished taotop job from what it staged" },
	{ 'a', KC_JOBS, ACT_ACTIONS, "requeue, hold, release, signal, time limit" },
	{ 'P', KC_ANY, ACT_DUMP, "write the screen as text to a file" },
	{ 'v', KC_ANY, ACT_SPLIT, "log panes side by side or stacked" },
	{ 'z', KC_ANY, ACT_MAXIMIZE, "maximise the focused pane (again: restore)" },
	{ 'w', KC_ANY, ACT_WRAP, "wrap long log lines" },
};

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
	static const struct { int key; const char *name; } named[] = {
		{ KEY_UP, "Up" }, { KEY_DOWN, "Down" }, { KEY_LEFT, "Left" },
		{ KEY_RIGHT, "Right" }, { KEY_PPAGE, "PgUp" }, { KEY_NPAGE, "PgDn" },
		{ KEY_HOME, "Home" }, { KEY_END, "End" }, { KEY_BTAB, "S-Tab" },
		{ '\t', "Tab" }, { ' ', "Space" }, { '\r', "Enter" }, { KEY_ENTER, "Enter" },
	};
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].key == key)
			return named[i].name;
	if (key >= 1 && key < 32)
		snprintf(buf, len, "^%c", key + '@');
	else
		snprintf(buf, len, "%c", key);
	return buf;
}

size_t keymap_help(char ***lines)
{
	static const char *const ctx_title[] = { "Anywhere", "Jobs list", "Log panes" };
	size_t n = 0, i, c;
	char **v = NULL;

	for (c = KC_ANY; c <= KC_PANE; c++) {
		v = xreallocarray(v, n + 2, sizeof(*v));
		if (n > 0)
			v[n++] = xstrdup("");
		v[n++] = xstrdup(ctx_title[c]);
		for (i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
			struct buf keys;
			char name[8];
			size_t j;
			if (bindings[i].ctx != c || bindings[i].help == NULL)
				continue;
			/* This binding and the help-less ones after it. */
			buf_init(&keys);
			buf_adds(&keys, keymap_key_name(bindings[i].key, name, sizeof(name)));
			for (j = i + 1; j < sizeof(bindings) / sizeof(bindings[0]) &&
			    bindings[j].help == NULL; j++) {
				const char *kn = keymap_key_name(bindings[j].key, name, sizeof(name));
				if (strstr(keys.data, kn) != NULL)
					continue;	/* two codes, one key (Enter) */
				buf_adds(&keys, " ");
				buf_adds(&keys, kn);
			}
			v = xreallocarray(v, n + 1, sizeof(*v));
			v[n++] = xasprintf("  %-14s %s", keys.data, bindings[i].help);
			buf_free(&keys);
		}
	}
	*lines = v;
	return n;
}

/*
 * One table of keys: it drives dispatch and the help screen (`?`), so the
 * two cannot disagree. Each binding belongs to a context: anywhere, the
 * jobs list, or a log pane.
 */
#ifndef TAOTOP_UI_KEYMAP_H
#define TAOTOP_UI_KEYMAP_H

#include <stddef.h>

enum action {
	ACT_NONE,
	ACT_QUIT, ACT_HELP, ACT_REDRAW,
	ACT_UP, ACT_DOWN, ACT_PAGE_UP, ACT_PAGE_DOWN, ACT_TOP, ACT_BOTTOM,
	ACT_FOCUS_NEXT, ACT_FOCUS_JOBS,
	ACT_SEARCH, ACT_NEXT_MATCH, ACT_PREV_MATCH,
	ACT_SORT, ACT_GROUP, ACT_FINISHED,
	ACT_MARK, ACT_MARK_ALL, ACT_CANCEL, ACT_CANCEL_PREFIX,
	ACT_SPLIT, ACT_MAXIMIZE, ACT_WRAP, ACT_LEFT, ACT_RIGHT,
	ACT_DETAIL, ACT_RETRY, ACT_DUMP, ACT_ACTIONS, ACT_SUBMIT, ACT_COLUMNS,
	ACT_PLOT, ACT_REPORT, ACT_ARRAY,
};

enum key_context { KC_ANY, KC_JOBS, KC_PANE };

struct key_binding {
	int		 key;		/* a curses key code or a character */
	enum key_context ctx;
	enum action	 action;
	const char	*help;		/* NULL: shown with the binding before it */
};

/* The user's binding (config.yaml's keys: { cancel: x }): action takes key
 * in place of its keys. -1 with *err for an unknown action or key, or a key
 * another action has (a conflict). */
int keymap_bind(const char *action, const char *key, char **err);
/* "quit", "cancel", ...: the names keys: takes. */
const char *keymap_action_name(enum action a);

/* What key does in ctx (a context binding wins over an "anywhere" one). */
enum action keymap_lookup(enum key_context ctx, int key);
/* The help screen's lines, generated from the table: caller frees each
 * line and the array. */
size_t keymap_help(char ***lines);
/* A key's name as the help shows it: "q", "Space", "PgDn", "^L". */
const char *keymap_key_name(int key, char *buf, size_t len);

#endif

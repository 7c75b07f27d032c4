/* The help (?): every key, from the key table (ui/keymap.h), and the
 * mouse. Scrolls; Esc, q or ? closes it. */
#include <stdlib.h>

#include "ui/app.h"
#include "ui/dialog.h"
#include "util/xmalloc.h"

struct help {
	char	**lines;
	size_t	  n, top;
};

static struct help *state(struct app *a)
{
	return panel_state(a, MODE_HELP, sizeof(struct help));
}

static void help_free(struct app *a)
{
	struct help *h = state(a);
	size_t i;

	for (i = 0; i < h->n; i++)
		free(h->lines[i]);
	free(h->lines);
	h->lines = NULL;
	h->n = 0;
}

/* The lines are made on opening: the user's keys (config.yaml) are in
 * the table by then. */
static void help_open(struct app *a)
{
	struct help *h = state(a);
	char **keys;
	size_t n = keymap_help(&keys), i;

	help_free(a);
	h->lines = xcalloc(n + 3, sizeof(*h->lines));
	for (i = 0; i < n; i++)
		h->lines[i] = keys[i];
	free(keys);
	h->lines[n++] = xstrdup("");
	h->lines[n++] = xstrdup("Mouse: a click selects a job or focuses a pane; the wheel scrolls");
	h->n = n;
	h->top = 0;
	a->mode = MODE_HELP;
	a->dirty |= DIRTY_DIALOG;
}

static enum panel_next help_key(struct app *a, wint_t ch, int func)
{
	struct help *h = state(a);

	if (!func && (ch == KEY_ESC || ch == 'q' || ch == '?'))
		return PANEL_CLOSE;
	ui_scroll_key(&h->top, h->n, ch, func);
	return PANEL_KEEP;
}

static void help_draw(struct app *a)
{
	struct help *h = state(a);

	dialog_draw(a, "taotop keys", h->lines, h->n, h->top,
	    "j/k, PgUp/PgDn: scroll    Esc/q/?: close", ROLE_DIALOG);
}

const struct panel help_panel = {
	.open = help_open, .key = help_key, .draw = help_draw, .close = help_free,
};

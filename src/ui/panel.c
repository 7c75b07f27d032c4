/* The panels' registry (PANEL_LIST in ui/panel.h) and what the loop does
 * with them: open by key, keys, close, state, the y/n confirmation. */
#include "ui/panel.h"

#include <stdlib.h>

#include "ui/app.h"
#include "util/xmalloc.h"

/* By mode: the panel, and the action that opens it. */
static const struct {
	const struct panel	*panel;
	enum action		 opened_by;
} registry[MODE_COUNT] = {
#define X(m, p, act) [MODE_##m] = { &p, act },
	PANEL_LIST(X)
#undef X
};

const struct panel *panel_of(int mode)
{
	return mode >= 0 && mode < MODE_COUNT ? registry[mode].panel : NULL;
}

int panel_open_by(struct app *a, enum action act)
{
	int m;

	if (act == ACT_NONE)
		return 0;
	for (m = 0; m < MODE_COUNT; m++) {
		if (registry[m].panel != NULL && registry[m].opened_by == act) {
			registry[m].panel->open(a);
			return 1;
		}
	}
	return 0;
}

void panel_close(struct app *a)
{
	const struct panel *p = panel_of(a->mode);

	if (p != NULL && p->close != NULL)
		p->close(a);
	a->mode = MODE_NORMAL;
	a->dirty |= DIRTY_DIALOG;
}

void panel_key(struct app *a, wint_t ch, int func)
{
	const struct panel *p = panel_of(a->mode);

	if (p == NULL)
		return;
	if (p->key(a, ch, func) == PANEL_CLOSE)
		panel_close(a);
	a->dirty |= DIRTY_DIALOG;
}

void *panel_state(struct app *a, int mode, size_t size)
{
	if (a->panel_state[mode] == NULL)
		a->panel_state[mode] = xcalloc(1, size);
	return a->panel_state[mode];
}

void panel_free_all(struct app *a)
{
	const struct panel *done[MODE_COUNT];
	size_t ndone = 0, k;
	int m;

	for (m = 0; m < MODE_COUNT; m++) {
		const struct panel *p = registry[m].panel;
		int seen = 0;
		if (p == NULL)
			continue;
		/* A panel of several modes (the submit view) once. */
		for (k = 0; k < ndone; k++)
			seen |= done[k] == p;
		if (seen)
			continue;
		done[ndone++] = p;
		if (p->close != NULL)
			p->close(a);
		if (p->free != NULL)
			p->free(a);
	}
	for (m = 0; m < MODE_COUNT; m++) {
		free(a->panel_state[m]);
		a->panel_state[m] = NULL;
	}
}

enum panel_next panel_confirm(struct app *a, wint_t ch, int func,
    enum panel_next (*yes)(struct app *a))
{
	if (func)
		return PANEL_KEEP;
	if (ch == 'y' || ch == 'Y' || ch == '\r' || ch == '\n')
		return yes(a);
	if (ch == 'n' || ch == 'N' || ch == 'q' || ch == KEY_ESC)
		return PANEL_CLOSE;
	return PANEL_KEEP;
}

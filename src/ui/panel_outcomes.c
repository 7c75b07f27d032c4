/* What each cancel did: the outcomes dialog, open while the answers come
 * (and after); closed before they all came, the count is told on the
 * message line when the last one comes. */
#include <stdlib.h>
#include <string.h>

#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "ui/text.h"
#include "util/xmalloc.h"

struct outcomes {
	struct watch_outcome	*outs;
	size_t			 n;
	size_t			 wanted;	/* answers still to come */
};

static struct outcomes *state(struct app *a)
{
	return panel_state(a, MODE_OUTCOMES, sizeof(struct outcomes));
}

static void outcomes_free(struct app *a)
{
	struct outcomes *s = state(a);

	watch_outcomes_free(s->outs, s->n);
	s->outs = NULL;
	s->n = 0;
}

void outcomes_panel_expect(struct app *a, size_t n)
{
	outcomes_free(a);
	state(a)->wanted = n;
	a->mode = MODE_OUTCOMES;
	a->dirty |= DIRTY_DIALOG;
}

void outcomes_panel_add(struct app *a, struct watch_outcome *o, size_t n)
{
	struct outcomes *s = state(a);
	size_t i, ok = 0;

	if (n == 0) {
		free(o);
		return;
	}
	s->outs = xreallocarray(s->outs, s->n + n, sizeof(*s->outs));
	memcpy(&s->outs[s->n], o, n * sizeof(*o));
	s->n += n;
	free(o);
	s->wanted = s->wanted > n ? s->wanted - n : 0;
	for (i = 0; i < s->n; i++)
		ok += s->outs[i].ok;
	if (s->wanted == 0 && a->mode != MODE_OUTCOMES)
		ui_message(a, ok < s->n, "cancel: %zu of %zu done", ok, s->n);
	a->dirty |= DIRTY_DIALOG;
}

static enum panel_next outcomes_key(struct app *a, wint_t ch, int func)
{
	(void)a;
	return !func && (ch == KEY_ESC || ch == 'q' || ch == '\n' || ch == '\r') ? PANEL_CLOSE
	    : PANEL_KEEP;
}

static void outcomes_draw(struct app *a)
{
	struct outcomes *s = state(a);
	size_t n = s->n + (s->wanted ? 1 : 0), i;
	char **v = xcalloc(n + 1, sizeof(*v));

	for (i = 0; i < s->n; i++)
		v[i] = xasprintf("%s %s: %s", s->outs[i].ok ? (text_utf8() ? "\xe2\x9c\x93" : "ok")
		    : (text_utf8() ? "\xe2\x9c\x97" : "FAILED"), s->outs[i].job,
		    s->outs[i].message ? s->outs[i].message : "");
	if (s->wanted)
		v[i] = xasprintf("... waiting for %zu answer%s", s->wanted, s->wanted == 1 ? "" : "s");
	dialog_draw(a, "Cancel", v, n, 0, "Enter/Esc: close", ROLE_DIALOG);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Closing keeps the outcomes: answers still to come are added and
 * counted. They go at the next cancel, or the loop's end. */
const struct panel outcomes_panel = {
	.key = outcomes_key, .draw = outcomes_draw, .free = outcomes_free,
};

/* The signal picker (a, then s): engine/track/actions.h's signals; Enter sends
 * the chosen one through the actions panel (which asks first for one that
 * ends or stops the job). */
#include <stdlib.h>

#include "engine/track/actions.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "util/xmalloc.h"

#define SHOWN	16	/* signals listed at most */

struct signals {
	size_t	pick;
};

static struct signals *state(struct app *a)
{
	return panel_state(a, MODE_SIGNALS, sizeof(struct signals));
}

static void signals_open(struct app *a)
{
	state(a)->pick = 0;
	a->mode = MODE_SIGNALS;
	a->dirty |= DIRTY_DIALOG;
}

static enum panel_next signals_key(struct app *a, wint_t ch, int func)
{
	struct signals *s = state(a);
	size_t nsig = 0;

	while (job_signals[nsig] != NULL)
		nsig++;
	if (!func && (ch == KEY_ESC || ch == 'q'))
		return PANEL_CLOSE;
	if ((func && ch == KEY_DOWN) || (!func && ch == 'j')) {
		s->pick += s->pick + 1 < nsig;
	} else if ((func && ch == KEY_UP) || (!func && ch == 'k')) {
		s->pick -= s->pick > 0;
	} else if (!func && (ch == '\r' || ch == '\n')) {
		actions_panel_send(a, ACTION_SIGNAL, job_signals[s->pick]);
		return PANEL_MOVED;
	}
	return PANEL_KEEP;
}

static void signals_draw(struct app *a)
{
	char *v[SHOWN] = { NULL };
	size_t n;

	for (n = 0; job_signals[n] != NULL && n < SHOWN; n++)
		v[n] = xasprintf("%s SIG%s", n == state(a)->pick ? ">" : " ", job_signals[n]);
	dialog_draw(a, "Send a signal (batch shell and every step)", v, n, 0,
	    "j/k: choose    Enter: send    Esc: none", ROLE_DIALOG);
	while (n > 0)
		free(v[--n]);
}

const struct panel signals_panel = {
	.open = signals_open, .key = signals_key, .draw = signals_draw,
};

/* Retry (r): a finished taotop job runs again from what it staged, after
 * a y/n. The engine's answer is told on the message line. */
#include <stdlib.h>

#include "engine/slurm/state.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "util/xmalloc.h"

struct retry {
	char	*job;		/* the job the dialog asks about */
	size_t	 cluster;
	int	 succeeded;	/* it ended Done: the dialog says so */
};

static struct retry *state(struct app *a)
{
	return panel_state(a, MODE_CONFIRM_RETRY, sizeof(struct retry));
}

static void retry_free(struct app *a)
{
	struct retry *s = state(a);

	free(s->job);
	s->job = NULL;
}

static void retry_open(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);
	struct retry *s = state(a);

	if (a->readonly) {
		ui_message(a, 1, "read-only (--readonly): retry is disabled");
		return;
	}
	if (e == NULL || e->row->record_id == NULL) {
		ui_message(a, 1, "only taotop's own jobs can be retried (they have a staged sbatch)");
		return;
	}
	if (!tao_state_final(e->row->state)) {
		ui_message(a, 1, "%s is %s: cancel it first, or wait for it to end", e->row->record_id,
		    tao_state_name(e->row->state));
		return;
	}
	free(s->job);
	s->job = xstrdup(e->row->record_id);
	s->cluster = e->cluster;
	s->succeeded = e->row->state == TAO_DONE;
	a->mode = MODE_CONFIRM_RETRY;
	a->dirty |= DIRTY_DIALOG;
}

static enum panel_next retry_send(struct app *a)
{
	struct retry *s = state(a);

	watch_retry(a->watch, s->cluster, s->job);
	ui_message(a, 0, "retrying %s from what it staged...", s->job);
	return PANEL_CLOSE;
}

static enum panel_next retry_key(struct app *a, wint_t ch, int func)
{
	return panel_confirm(a, ch, func, retry_send);
}

void retry_panel_done(struct app *a, const struct watch_retry *r)
{
	ui_message(a, r->new_id == NULL, "%s", r->message);
}

static void retry_draw(struct app *a)
{
	char *v[2];

	/* A retry has a results folder of its own and resumes from the
	 * newest checkpoint of the run it retries (engine/track/retry.h). */
	v[0] = state(a)->succeeded
	    ? xasprintf("%s succeeded (Done): it runs again as a new record, in a results folder",
	    state(a)->job)
	    : xasprintf("%s runs again as a new record linked to it, in a results folder",
	    state(a)->job);
	v[1] = xstrdup("of its own, from its newest checkpoint; nothing is staged or converted again.");
	dialog_draw(a, "Retry?", v, 2, 0, "y/Enter: retry    n/Esc: keep it", ROLE_DIALOG);
	free(v[0]), free(v[1]);
}

const struct panel retry_panel = {
	.open = retry_open, .key = retry_key, .draw = retry_draw, .close = retry_free,
};

/* Cancel (c, dd): the marked jobs, else the selected one, listed for a
 * y/n; yes sends one request per cluster and opens the outcomes dialog
 * (panel_outcomes.c) for the answers. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/slurm/state.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "util/xmalloc.h"

/* A job the dialog lists. */
struct cancel_item {
	size_t	 cluster;
	char	*job;		/* record id or SLURM id, as the engine takes it */
	char	*label;		/* as shown */
};

struct cancel {
	struct cancel_item	*items;
	size_t			 n;
};

static struct cancel *state(struct app *a)
{
	return panel_state(a, MODE_CONFIRM_CANCEL, sizeof(struct cancel));
}

static void cancel_free(struct app *a)
{
	struct cancel *s = state(a);
	size_t i;

	for (i = 0; i < s->n; i++) {
		free(s->items[i].job);
		free(s->items[i].label);
	}
	free(s->items);
	s->items = NULL;
	s->n = 0;
}

static void cancel_open(struct app *a)
{
	struct cancel *s = state(a);
	const struct jt_entry **v;
	size_t n, i;

	if (a->readonly) {
		ui_message(a, 1, "read-only (--readonly): cancel is disabled");
		return;
	}
	n = jt_targets(&a->jt, &v);
	if (n == 0) {
		free(v);
		ui_message(a, 1, "no job to cancel");
		return;
	}
	cancel_free(a);
	s->items = xcalloc(n, sizeof(*s->items));
	for (i = 0; i < n; i++) {
		const struct job_row *r = v[i]->row;
		s->items[i].cluster = v[i]->cluster;
		s->items[i].job = xstrdup(ui_engine_id(r));
		s->items[i].label = xasprintf("%s  %s  %s  %s", v[i]->cluster_name,
		    r->record_id ? r->record_id : (r->shown_id[0] ? r->shown_id : r->slurm_id),
		    r->name ? r->name : "", tao_state_name(r->state));
	}
	s->n = n;
	free(v);
	a->mode = MODE_CONFIRM_CANCEL;
	a->dirty |= DIRTY_DIALOG;
}

/* Yes: one request per cluster, each cancelling its jobs in turn. */
static enum panel_next cancel_send(struct app *a)
{
	struct cancel *s = state(a);
	size_t c, i, n, sent = s->n;
	char **jobs = xcalloc(s->n + 1, sizeof(*jobs));

	for (c = 0; c < watch_count(a->watch); c++) {
		for (i = n = 0; i < s->n; i++)
			if (s->items[i].cluster == c)
				jobs[n++] = s->items[i].job;
		if (n > 0)
			watch_cancel(a->watch, c, jobs, n);
	}
	free(jobs);
	cancel_free(a);
	jt_clear_marks(&a->jt);
	outcomes_panel_expect(a, sent);
	a->dirty |= DIRTY_JOBS;
	return PANEL_MOVED;	/* to the outcomes */
}

static enum panel_next cancel_key(struct app *a, wint_t ch, int func)
{
	return panel_confirm(a, ch, func, cancel_send);
}

static void cancel_draw(struct app *a)
{
	struct cancel *s = state(a);
	char **v = xcalloc(s->n + 1, sizeof(*v)), title[64];
	size_t i;

	for (i = 0; i < s->n; i++)
		v[i] = s->items[i].label;
	snprintf(title, sizeof(title), "Cancel %zu job%s?", s->n, s->n == 1 ? "" : "s");
	dialog_draw(a, title, v, s->n, 0, "y/Enter: cancel them    n/Esc: keep them",
	    ROLE_DIALOG_WARNING);
	free(v);
}

const struct panel cancel_panel = {
	.open = cancel_open, .key = cancel_key, .draw = cancel_draw, .close = cancel_free,
};

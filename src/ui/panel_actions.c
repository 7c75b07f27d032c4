/*
 * The scheduler's other actions on a job (a): the menu (requeue, hold,
 * release, a signal, the time limit), the time limit's prompt on the
 * message line, and the "are you sure?" before an action that ends or
 * stops the job. The signal picker is panel_signals.c; it sends through
 * actions_panel_send(). The menu's keys and labels are one table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/track/actions.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "util/xmalloc.h"

struct actions {
	char	*job;		/* the job acted on */
	size_t	 cluster;
	int	 kind;		/* enum job_action */
	char	 arg[32];	/* its signal or time limit */
};

/* The menu: a key, and the action it sends or the panel it opens. */
static const struct {
	int		 key;
	int		 kind;		/* enum job_action, or -1: opens `opens` */
	enum mode	 opens;
	const char	*label;
} menu[] = {
	{ 'r', ACTION_REQUEUE, MODE_NORMAL, "requeue (it starts over; asks first)" },
	{ 'h', ACTION_HOLD, MODE_NORMAL, "hold (it stays pending)" },
	{ 'l', ACTION_RELEASE, MODE_NORMAL, "release a held job" },
	{ 's', -1, MODE_SIGNALS, "send a signal..." },
	{ 't', -1, MODE_TIME, "change the time limit..." },
};
#define NMENU	(sizeof(menu) / sizeof(menu[0]))

static struct actions *state(struct app *a)
{
	return panel_state(a, MODE_ACTIONS, sizeof(struct actions));
}

static void actions_free(struct app *a)
{
	free(state(a)->job);
	state(a)->job = NULL;
}

static void actions_open(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);
	struct actions *s = state(a);

	if (a->readonly) {
		ui_message(a, 1, "read-only (--readonly): actions are disabled");
		return;
	}
	if (e == NULL)
		return;
	if (e->row->slurm_id[0] == '\0') {
		ui_message(a, 1, "%s has no SLURM job to act on", ui_engine_id(e->row));
		return;
	}
	free(s->job);
	s->job = xstrdup(ui_engine_id(e->row));
	s->cluster = e->cluster;
	a->mode = MODE_ACTIONS;
	a->dirty |= DIRTY_DIALOG;
}

/* Signals that end or stop the job ask first; the others are sent. */
static int destroys(int kind, const char *arg)
{
	return kind == ACTION_REQUEUE || (kind == ACTION_SIGNAL && (strcmp(arg, "KILL") == 0 ||
	    strcmp(arg, "TERM") == 0 || strcmp(arg, "INT") == 0 || strcmp(arg, "HUP") == 0 ||
	    strcmp(arg, "STOP") == 0));
}

void actions_panel_send(struct app *a, int kind, const char *arg)
{
	struct actions *s = state(a);

	s->kind = kind;
	snprintf(s->arg, sizeof(s->arg), "%s", arg ? arg : "");
	if (destroys(kind, s->arg) && a->mode != MODE_CONFIRM_ACTION) {
		a->mode = MODE_CONFIRM_ACTION;
		a->dirty |= DIRTY_DIALOG;
		return;
	}
	watch_action(a->watch, s->cluster, s->job, kind, arg);
	ui_message(a, 0, "%s: %s%s%s...", s->job, job_action_name(kind), arg ? " " : "",
	    arg ? arg : "");
	a->mode = MODE_NORMAL;
	a->dirty |= DIRTY_DIALOG;
}

static enum panel_next actions_key(struct app *a, wint_t ch, int func)
{
	size_t i;

	if (!func && (ch == KEY_ESC || ch == 'q'))
		return PANEL_CLOSE;
	for (i = 0; i < NMENU; i++) {
		if (ch != (wint_t)menu[i].key)
			continue;
		if (menu[i].kind >= 0)
			actions_panel_send(a, menu[i].kind, NULL);
		else
			panel_of(menu[i].opens)->open(a);
		return PANEL_MOVED;
	}
	return PANEL_KEEP;
}

static void actions_draw(struct app *a)
{
	char *v[NMENU], title[96];
	size_t i;

	for (i = 0; i < NMENU; i++)
		v[i] = xasprintf("%c  %s", menu[i].key, menu[i].label);
	snprintf(title, sizeof(title), "Actions on %s", state(a)->job);
	dialog_draw(a, title, v, NMENU, 0, "a key above    Esc: none", ROLE_DIALOG);
	for (i = 0; i < NMENU; i++)
		free(v[i]);
}

const struct panel actions_panel = {
	.open = actions_open, .key = actions_key, .draw = actions_draw, .free = actions_free,
};

/* ---- the time limit: a prompt on the message line ---- */

static void time_open(struct app *a)
{
	a->input[0] = '\0';
	a->mode = MODE_TIME;
	a->dirty |= DIRTY_DIALOG | DIRTY_MESSAGE;
}

/* Enter checks and sends it. */
static enum panel_next time_key(struct app *a, wint_t ch, int func)
{
	char limit[32], *err = NULL;

	a->dirty |= DIRTY_MESSAGE;
	if (!func && ch == KEY_ESC)
		return PANEL_CLOSE;
	if (func || (ch != '\r' && ch != '\n')) {
		ui_edit_input(a, ch, func);
		return PANEL_KEEP;
	}
	if (job_time_limit_parse(a->input, limit, sizeof(limit), &err) != 0) {
		ui_message(a, 1, "%s", err);
		free(err);
		return PANEL_CLOSE;
	}
	a->mode = MODE_NORMAL;
	actions_panel_send(a, ACTION_TIME_LIMIT, limit);
	return PANEL_MOVED;
}

static void time_prompt(struct app *a, char *buf, size_t len)
{
	snprintf(buf, len, "new time limit for %s (90, 2:00:00, 1-00:00:00): %s_   "
	    "(Enter sets, Esc stops)", state(a)->job, a->input);
}

/* Drawn on the message line (prompt), nothing over the rest. */
static void time_draw(struct app *a)
{
	(void)a;
}

const struct panel time_panel = {
	.open = time_open, .key = time_key, .draw = time_draw, .prompt = time_prompt,
};

/* ---- are you sure? ---- */

static enum panel_next confirm_send(struct app *a)
{
	struct actions *s = state(a);

	actions_panel_send(a, s->kind, s->arg[0] ? s->arg : NULL);
	return PANEL_MOVED;
}

static enum panel_next confirm_key(struct app *a, wint_t ch, int func)
{
	return panel_confirm(a, ch, func, confirm_send);
}

static void confirm_draw(struct app *a)
{
	struct actions *s = state(a);
	char *v[1];

	v[0] = s->kind == ACTION_REQUEUE
	    ? xasprintf("Requeue %s? It stops and starts over from the queue.", s->job)
	    : xasprintf("Send SIG%s to %s? It may end the job.", s->arg, s->job);
	dialog_draw(a, "Are you sure?", v, 1, 0, "y/Enter: yes    n/Esc: no", ROLE_DIALOG_WARNING);
	free(v[0]);
}

const struct panel confirm_action_panel = {
	.key = confirm_key, .draw = confirm_draw,
};

/*
 * A dialog (panel) of the monitor: one file holds its state (private, in
 * panel_state()), its keys and its drawing. The loop knows panels only
 * through this interface: it opens one for a key (its action in the
 * keymap), hands it the keys while it is open, draws it over the rest, and
 * closes it when its key handler says so. What the engine tells a panel
 * (answers to its requests) reaches it through the functions below, which
 * the loop's event handling calls.
 *
 * Adding a dialog: its action in the key table (ui/keymap.[ch]), its file,
 * and one line in PANEL_LIST below (its mode, its struct panel, the action
 * that opens it).
 */
#ifndef TAOTOP_UI_PANEL_H
#define TAOTOP_UI_PANEL_H

#include <stddef.h>
#include <wchar.h>

#include "engine/watch/watch.h"
#include "ui/keymap.h"

struct app;

/*
 * Every panel, one line each: X(its mode, its struct panel, the key action
 * that opens it or ACT_NONE). A panel with several views (the submit view:
 * form, file picker, steps, preview) has one mode per view, the same panel.
 * The order is the modes' order (enum mode, ui/app.h).
 */
#define PANEL_LIST(X) \
	X(HELP, help_panel, ACT_HELP) \
	X(CONFIRM_CANCEL, cancel_panel, ACT_CANCEL) \
	X(OUTCOMES, outcomes_panel, ACT_NONE) \
	X(HOSTKEY, hostkey_panel, ACT_NONE) \
	X(DETAIL, detail_panel, ACT_DETAIL) \
	X(PLOT, plot_panel, ACT_PLOT) \
	X(REPORT, report_panel, ACT_REPORT) \
	X(CONFIRM_RETRY, retry_panel, ACT_RETRY) \
	X(ACTIONS, actions_panel, ACT_ACTIONS) \
	X(SIGNALS, signals_panel, ACT_NONE) \
	X(TIME, time_panel, ACT_NONE) \
	X(CONFIRM_ACTION, confirm_action_panel, ACT_NONE) \
	X(WIZARD, submit_panel, ACT_SUBMIT) \
	X(PICKER, submit_panel, ACT_NONE) \
	X(STEPS, submit_panel, ACT_NONE) \
	X(PREVIEW, submit_panel, ACT_NONE) \
	X(COLUMNS, columns_panel, ACT_COLUMNS) \
	X(ASK, ask_panel, ACT_NONE)

/* What the loop does after a panel's key. */
enum panel_next {
	PANEL_KEEP,	/* the panel stays open (redrawn) */
	PANEL_CLOSE,	/* the loop closes it: back to the jobs and panes */
	PANEL_MOVED,	/* the key set a->mode itself (another panel, or none) */
};

struct panel {
	/* Opened by its key: check, take what it shows, set a->mode (or say
	 * on the message line why not). NULL: opened by the engine's news. */
	void		(*open)(struct app *a);
	enum panel_next	(*key)(struct app *a, wint_t ch, int func);
	/* Over everything else, last in a pass that drew anything. */
	void		(*draw)(struct app *a);
	/* The panel leaves the screen (key, or the loop's end): free what
	 * only the open panel needs. NULL: nothing to free. */
	void		(*close)(struct app *a);
	/* A prompt on the message line instead of a box (NULL: none): its
	 * text into buf. */
	void		(*prompt)(struct app *a, char *buf, size_t len);
	/* The loop's end: free what the panel keeps between openings. */
	void		(*free)(struct app *a);
};

#define X(m, p, act) extern const struct panel p;
PANEL_LIST(X)
#undef X

/* ---- for the loop (panel.c) ---- */

/* The panel of a mode, or NULL (the jobs and panes, or a prompt). */
const struct panel *panel_of(int mode);
/* Open the panel a key action opens: 1 if act is one (done or refused). */
int panel_open_by(struct app *a, enum action act);
/* The open panel's key, and what the loop does with its answer. */
void panel_key(struct app *a, wint_t ch, int func);
/* Close the open panel: back to the jobs and panes. */
void panel_close(struct app *a);
/* The loop's end: every panel's state freed. */
void panel_free_all(struct app *a);

/* ---- for the panels (panel.c) ---- */

/* A panel's private state: zeroed on first use, freed by
 * panel_free_all() after the panel's free(). Keyed by the panel's (first)
 * mode. */
void *panel_state(struct app *a, int mode, size_t size);
/* A yes/no dialog's keys: y/Y/Enter does yes() and returns what it
 * returns; n/N/q/Esc closes; any other key keeps it open. */
enum panel_next panel_confirm(struct app *a, wint_t ch, int func,
    enum panel_next (*yes)(struct app *a));
/* An action on the job the actions menu was opened for (the signal
 * picker's too): sent, or the "are you sure?" first. */
void actions_panel_send(struct app *a, int kind, const char *arg);

/* ---- what the engine tells the panels (called by the event handling) ---- */

/* Cancels' outcomes (n of them, handed over): shown while the outcomes
 * dialog is open, counted on the message line when the last comes
 * otherwise. */
void outcomes_panel_add(struct app *a, struct watch_outcome *o, size_t n);
/* The jobs the cancel dialog sent: the outcomes dialog opens waiting for
 * n answers. */
void outcomes_panel_expect(struct app *a, size_t n);
/* The detail's fetched files (handed over; freed when no detail is open). */
void detail_panel_files(struct app *a, struct watch_file *f, size_t n);
/* Why a pending job waits (the answer to the detail's w): shown at the
 * top of its detail while it is open (its lines taken from ev). */
struct watch_event;
void detail_panel_explain(struct app *a, struct watch_event *ev);
/* One cluster's report (the answer to E), added to the open report. */
void report_panel_add(struct app *a, struct watch_event *ev);
/* A poll (polled: its record is read again) or a GPU sample: an open
 * detail is built again. */
void detail_panel_refresh(struct app *a, int polled);
/* A poll: the open curves of a running job drawn again when its row
 * brought new points, and from its record once it has ended. */
void plot_panel_refresh(struct app *a);
/* Since when the open detail waits for its files (its spinner turns),
 * or 0. */
int64_t detail_panel_fetching(struct app *a);
/* While the detail's files are fetched: its spinner turns. */
void detail_panel_spin(struct app *a);
/* A retry's answer, told on the message line (the event keeps it). */
void retry_panel_done(struct app *a, const struct watch_retry *r);
/* A cluster's link changed: an unknown or changed host key opens the host
 * key dialog over the normal view. */
void hostkey_panel_check(struct app *a);
/* A server's question came or went (and after keys: a dialog closed, a
 * question may wait): open or close the ask dialog. */
void ask_panel_check(struct app *a);

#endif

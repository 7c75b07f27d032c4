/*
 * The monitor's state, shared by its loop (ui.c), its drawing (draw.c) and
 * its panels (the dialogs, ui/panel.h): the only files that include this
 * header. What is here is the app's: the config, the engine, the windows,
 * the jobs list and log panes, the mode, the prompt and message line. A
 * panel's own state is private to its file, in panel_state[].
 */
#ifndef TAOTOP_UI_APP_H
#define TAOTOP_UI_APP_H

/* ncurses' wide-character API without asking libc for X/Open. */
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>
#include <wchar.h>
#include <stddef.h>

#include "engine/config/config.h"
#include "engine/watch/watch.h"
#include "ui/jobtable.h"
#include "ui/layout.h"
#include "ui/logpane.h"
#include "ui/panel.h"
#include "ui/theme.h"

#define KEY_ESC		27	/* curses has no name for it */
#define NOT_ANSWERING_MS	5000	/* a poll out this long: the status bar says so */

enum focus { FOCUS_JOBS, FOCUS_OUT, FOCUS_ERR };

/* What the keys go to: the jobs and panes, a prompt on the message line
 * the app types into, or a panel (ui/panel.h: one mode per panel, per view
 * of a panel of several). */
enum mode {
	MODE_NORMAL,
	MODE_FILTER,		/* typing the jobs filter */
	MODE_SEARCH,		/* typing a pane search */
#define X(m, p, act) MODE_##m,
	PANEL_LIST(X)
#undef X
	MODE_COUNT
};

/* What needs drawing at the end of this pass. */
enum {
	DIRTY_JOBS = 1 << 0,
	DIRTY_PANES = 1 << 1,
	DIRTY_STATUS = 1 << 2,
	DIRTY_MESSAGE = 1 << 3,
	DIRTY_DIALOG = 1 << 4,
	DIRTY_LAYOUT = 1 << 5,	/* windows to be made again (resize, split) */
	DIRTY_ALL = 0x3f,
};


struct app {
	struct config		 cfg;
	struct record_store	*store;
	struct watch		*watch;
	int			 readonly;

	struct theme		 theme;
	attr_t			 attr[ROLE_COUNT];
	int			 sgr;		/* render the logs' colours */

	int			 cols, lines;
	struct layout		 lay;
	WINDOW			*win_jobs, *win_out, *win_err, *win_status, *win_msg;
	WINDOW			*win_input;	/* keys are read here */
	int			 side_by_side;
	enum pane_max		 max;
	enum focus		 focus;

	struct jobtable		 jt;
	struct logpane		 pane[2];
	struct watch_log	*log;		/* the selected job's, or NULL */
	char			*log_key;	/* jt key of the job followed */

	enum mode		 mode;
	char			 input[128];	/* the filter or search being typed */
	char			*message;	/* the message line's text, or NULL */
	int			 message_error;
	int			 pending_d;	/* 'd' typed: a second 'd' cancels */

	void			*panel_state[MODE_COUNT];	/* each panel's own (ui/panel.h) */

	unsigned long		*seen_polls;	/* per cluster: events told of */
	int			 columns[16];	/* the user's columns, in order */
	int			 ncolumns;	/* 0: taotop's choice for the width */

	int			 quit_asked;	/* q while a submit runs: again quits */

	unsigned		 dirty;
	unsigned		 lent_shown;	/* commands borrowing a session, as the
						 * status bar last said */
	int			 quit;
};

/* ui.c */
/* The id the engine takes for a row: the record's, else SLURM's own. */
const char *ui_engine_id(const struct job_row *r);
/* Scrolling a dialog's lines (help, detail, preview) from its first shown
 * line `top` of n: j/k, arrows, PgUp/PgDn/Space, g/G. 1 if ch was one. */
#define SCROLL_PAGE	20
int ui_scroll_key(size_t *top, size_t n, wint_t ch, int func);
/* Typing into the message line's prompt (a->input). */
void ui_edit_input(struct app *a, wint_t ch, int func);

/* dump.c: the screen as plain text in a file (P), beside the records */
void dump_screen(struct app *a);

/* panel_submit.c: the submit view's part outside its panel */
/* A submit's step (WATCH_EV_STEP), its end (WATCH_EV_SUBMITTED). */
void submit_panel_step(struct app *a, const struct watch_event *ev);
void submit_panel_ended(struct app *a, const struct watch_event *ev);
/* The step list shows a running step's seconds: redraw each second. */
int submit_panel_ticking(const struct app *a);
int submit_panel_running(const struct app *a);

/* setup_view.c: the first-run setup form, when no cluster is configured
 * (existing: NULL). Its own loop until the user quits (1; nothing written)
 * or a cluster was written to the config file (0). sig_fd: the signal
 * self-pipe (a quit signal leaves, nothing written). */
int setup_view_run(struct app *a, int sig_fd, const struct config *existing);

/* draw.c */
void draw_make_windows(struct app *a);
void draw_free_windows(struct app *a);
void draw(struct app *a);
/* A column's index from its name in config.yaml's columns:, or -1. */
int draw_column_index(const char *name);
int draw_column_count(void);
/* Its name in config.yaml ("state"), its title in the header ("STATE"). */
const char *draw_column_name(int c);
const char *draw_column_title(int c);
/* Rows of the jobs list below its header. */
int draw_jobs_rows(const struct app *a);
/* Whether what a cluster shows is stale (its server or scheduler does not
 * answer): the status bar says how old, its rows are dimmed. */
int draw_cluster_stale(const struct watched *c, int64_t now_ms);
/* Colours and attributes of the theme, for the terminal we have. */
void draw_apply_theme(struct app *a, int use_color);

#endif

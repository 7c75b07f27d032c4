/*
 * The monitor's state, shared by its loop and key handling (ui.c), what it
 * does to jobs (jobs.c) and its drawing (draw.c): the only files that
 * include this header.
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

#include "engine/config.h"
#include "util/buf.h"
#include "engine/watch.h"
#include "ui/jobtable.h"
#include "ui/layout.h"
#include "ui/logpane.h"
#include "ui/theme.h"

#define KEY_ESC		27	/* curses has no name for it */
#define NOT_ANSWERING_MS	5000	/* a poll out this long: the status bar says so */

enum focus { FOCUS_JOBS, FOCUS_OUT, FOCUS_ERR };

enum mode {
	MODE_NORMAL,
	MODE_FILTER,		/* typing the jobs filter */
	MODE_SEARCH,		/* typing a pane search */
	MODE_HELP,
	MODE_CONFIRM_CANCEL,
	MODE_OUTCOMES,		/* what each cancel did */
	MODE_HOSTKEY,		/* an unknown or changed host key */
	MODE_DETAIL,		/* a job's detail */
	MODE_CONFIRM_RETRY,
	MODE_ACTIONS,		/* the actions menu */
	MODE_SIGNALS,		/* the signal picker */
	MODE_TIME,		/* typing a time limit */
	MODE_CONFIRM_ACTION,	/* an action that destroys something */
	MODE_WIZARD,		/* the submit form */
	MODE_PICKER,		/* its file picker */
	MODE_STEPS,		/* a submit's (or preview's) steps */
	MODE_PREVIEW,		/* the rendered sbatch and remote commands */
	MODE_COLUMNS,		/* the column picker */
	MODE_ASK,		/* a server's question (one-time code) */
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

/* A job the cancel dialog lists. */
struct cancel_item {
	size_t	 cluster;
	char	*job;		/* record id or SLURM id, as the engine takes it */
	char	*label;		/* as shown */
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

	char			**help;
	size_t			 nhelp;
	size_t			 help_top;

	struct cancel_item	*cancel;
	size_t			 ncancel;
	size_t			 outcomes_wanted;	/* answers still to come */
	struct watch_outcome	*outs;
	size_t			 nouts;

	size_t			 hostkey_cluster;

#define ASK_FIELDS	8
	size_t			 ask_cluster;	/* whose question the dialog shows */
	struct buf		 ask_ans[ASK_FIELDS];	/* secret: typed answers */
	size_t			 ask_n, ask_cur;

	char			*detail_key;	/* the job shown in detail (jt key) */
	size_t			 detail_cluster;
	char			**detail;	/* its lines */
	size_t			 ndetail, detail_top;
	struct watch_file	*files;		/* its staged sbatch and spec */
	size_t			 nfiles;
	int			 fetching;
	char			*retry_job;	/* the job the retry dialog asks about */
	size_t			 retry_cluster;

	char			*act_job;	/* the job the actions menu acts on */
	size_t			 act_cluster;
	int			 act_kind;	/* enum job_action */
	char			 act_arg[32];	/* its signal or time limit */
	size_t			 pick;		/* the signal picker's selection */

	unsigned long		*seen_polls;	/* per cluster: events told of */
	int			 columns[16];	/* the user's columns, in order */
	int			 ncolumns;	/* 0: taotop's choice for the width */
	int			 pick_col[16];	/* the column picker's order, */
	int			 pick_on[16];	/* which are shown, */
	int			 npick;		/* and how many (a->pick: its selection) */

	struct submit_view	*sv;		/* the wizard and its submit, once opened */
	int			 quit_asked;	/* q while a submit runs: again quits */

	unsigned		 dirty;
	int			 quit;
};

/* ui.c */
void ui_message(struct app *a, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The id the engine takes for a row: the record's, else SLURM's own. */
const char *ui_engine_id(const struct job_row *r);
/* Scrolling a dialog's lines (help, detail, preview) from its first shown
 * line `top` of n: j/k, arrows, PgUp/PgDn/Space, g/G. 1 if ch was one. */
#define SCROLL_PAGE	20
int ui_scroll_key(size_t *top, size_t n, wint_t ch, int func);
/* Typing into the message line's prompt (a->input). */
void ui_edit_input(struct app *a, wint_t ch, int func);

/* jobs.c: what the monitor does to jobs */
void jobs_cancel_ask(struct app *a);
void jobs_cancel_do(struct app *a);
void jobs_cancel_free(struct app *a);
void jobs_retry_ask(struct app *a);
void jobs_actions_open(struct app *a);
void jobs_actions_key(struct app *a, wint_t ch, int func);
void jobs_time_key(struct app *a, wint_t ch, int func);
void jobs_detail_open(struct app *a);
void jobs_detail_build(struct app *a);
void jobs_detail_close(struct app *a);
void jobs_screen_dump(struct app *a);

/* submit_view.c: the submit wizard */
void submit_view_open(struct app *a);
void submit_view_key(struct app *a, wint_t ch, int func);
/* A submit's step (WATCH_EV_STEP), its end (WATCH_EV_SUBMITTED). */
void submit_view_step(struct app *a, const struct watch_event *ev);
void submit_view_ended(struct app *a, const struct watch_event *ev);
void submit_view_draw(struct app *a);
/* The step list shows a running step's seconds: redraw each second. */
int submit_view_ticking(const struct app *a);
int submit_view_running(const struct app *a);
void submit_view_free(struct app *a);

/* colpick.c: the column picker */
void colpick_open(struct app *a);
void colpick_key(struct app *a, wint_t ch, int func);
void colpick_draw(struct app *a);

/* setup_view.c: the first-run setup form, when no cluster is configured
 * (existing: NULL). Its own loop until the user quits (1; nothing written)
 * or a cluster was written to the config file (0). sig_fd: the signal
 * self-pipe (a quit signal leaves, nothing written). */
int setup_view_run(struct app *a, int sig_fd, const struct config *existing);

/* askview.c: a server's question (a one-time code) */
void ask_open(struct app *a, size_t cluster);
/* Open the dialog for a question waiting, or close it when its question
 * went away. */
void ask_check(struct app *a);
void ask_key(struct app *a, wint_t ch, int func);
void ask_draw(struct app *a);
void ask_free(struct app *a);

/* draw.c */
/* A box in the middle of the screen with a title, lines from `top` on,
 * and a footer; drawn last, over everything. */
void draw_dialog(struct app *a, const char *title, char *const *lines, size_t n, size_t top,
    const char *footer, enum role role);
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

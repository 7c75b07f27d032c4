/* What the monitor does to jobs: cancel, retry, the scheduler's other
 * actions (requeue, hold, release, signal, time limit), the detail view,
 * and the screen dump. Each asks the engine through engine/watch.h and
 * shows the answer; nothing here waits on the network. */
#include "ui/app.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "engine/actions.h"
#include "engine/record.h"
#include "engine/state.h"
#include "engine/tracker.h"
#include "ui/detail.h"
#include "ui/text.h"
#include "util/xmalloc.h"


/* ---- the detail view ------------------------------------------------------------------------ */

static void free_detail_lines(struct app *a)
{
	size_t i;

	for (i = 0; i < a->ndetail; i++)
		free(a->detail[i]);
	free(a->detail);
	a->detail = NULL;
	a->ndetail = 0;
}

void jobs_detail_close(struct app *a)
{
	free_detail_lines(a);
	free(a->detail_key);
	a->detail_key = NULL;
	watch_files_free(a->files, a->nfiles);
	a->files = NULL;
	a->nfiles = 0;
	a->fetching = 0;
}

static const struct jt_entry *entry_by_key(const struct app *a, const char *key)
{
	size_t i;

	for (i = 0; key != NULL && i < a->jt.n; i++)
		if (strcmp(a->jt.entries[i].key, key) == 0)
			return &a->jt.entries[i];
	return NULL;
}

/* (Re)build the detail lines from the record (local), the row (the latest
 * poll) and the fetched files. */
void jobs_detail_build(struct app *a)
{
	const struct jt_entry *e = entry_by_key(a, a->detail_key);
	struct job_record *r = NULL;
	char *err = NULL;

	if (e == NULL)
		return;		/* gone from the list: keep what is shown */
	free_detail_lines(a);
	if (e->row->record_id != NULL && store_load(a->store, e->row->record_id, &r, &err) != 0)
		free(err);
	a->ndetail = detail_lines(r, e->row, e->cluster_name,
	    e->row->state == TAO_RUNNING ? watch_use(a->watch, e->cluster, e->row->slurm_id) : NULL,
	    a->files, a->nfiles, a->fetching ? watch_now_ms() - a->fetch_started_ms : -1,
	    text_utf8(), &a->detail);
	record_free(r);
	a->dirty |= DIRTY_DIALOG;
}

void jobs_detail_open(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);
	struct job_record *r = NULL;
	char *err = NULL, **paths;
	size_t n, i;

	if (e == NULL)
		return;
	jobs_detail_close(a);
	a->detail_key = xstrdup(e->key);
	a->detail_cluster = e->cluster;
	/* Looking at a running job of the user's: its GPUs are sampled too. */
	if (e->row->record_id == NULL && e->row->state == TAO_RUNNING)
		watch_use_request(a->watch, e->cluster, e->row->slurm_id);
	a->detail_top = 0;
	if (e->row->record_id != NULL && store_load(a->store, e->row->record_id, &r, &err) == 0) {
		n = detail_paths(r, &paths);
		if (n > 0) {
			watch_fetch(a->watch, e->cluster, paths, n);
			a->fetching = 1;
			a->fetch_started_ms = watch_now_ms();
		}
		for (i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		record_free(r);
	}
	free(err);
	jobs_detail_build(a);
	a->mode = MODE_DETAIL;
}

/* ---- retry and screen dump ------------------------------------------------------------------- */

void jobs_retry_ask(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);

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
	free(a->retry_job);
	a->retry_job = xstrdup(e->row->record_id);
	a->retry_cluster = e->cluster;
	a->mode = MODE_CONFIRM_RETRY;
	a->dirty |= DIRTY_DIALOG;
}

/* ---- the scheduler's other actions ---------------------------------------------------------- */

void jobs_actions_open(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);

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
	free(a->act_job);
	a->act_job = xstrdup(ui_engine_id(e->row));
	a->act_cluster = e->cluster;
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

static void do_action(struct app *a, int kind, const char *arg)
{
	a->act_kind = kind;
	snprintf(a->act_arg, sizeof(a->act_arg), "%s", arg ? arg : "");
	if (destroys(kind, a->act_arg) && a->mode != MODE_CONFIRM_ACTION) {
		a->mode = MODE_CONFIRM_ACTION;
		a->dirty |= DIRTY_DIALOG;
		return;
	}
	watch_action(a->watch, a->act_cluster, a->act_job, kind, arg);
	ui_message(a, 0, "%s: %s%s%s...", a->act_job, job_action_name(kind), arg ? " " : "",
	    arg ? arg : "");
	a->mode = MODE_NORMAL;
	a->dirty |= DIRTY_DIALOG;
}

void jobs_actions_key(struct app *a, wint_t ch, int func)
{
	size_t nsig = 0;

	while (job_signals[nsig] != NULL)
		nsig++;
	if (!func && (ch == KEY_ESC || ch == 'q')) {
		a->mode = MODE_NORMAL;
		a->dirty |= DIRTY_DIALOG;
		return;
	}
	switch (a->mode) {
	case MODE_ACTIONS:
		if (ch == 'r')
			do_action(a, ACTION_REQUEUE, NULL);
		else if (ch == 'h')
			do_action(a, ACTION_HOLD, NULL);
		else if (ch == 'l')
			do_action(a, ACTION_RELEASE, NULL);
		else if (ch == 's') {
			a->pick = 0;
			a->mode = MODE_SIGNALS;
		} else if (ch == 't') {
			a->input[0] = '\0';
			a->mode = MODE_TIME;
		}
		break;
	case MODE_SIGNALS:
		if ((func && ch == KEY_DOWN) || (!func && ch == 'j'))
			a->pick += a->pick + 1 < nsig;
		else if ((func && ch == KEY_UP) || (!func && ch == 'k'))
			a->pick -= a->pick > 0;
		else if (!func && (ch == '\r' || ch == '\n'))
			do_action(a, ACTION_SIGNAL, job_signals[a->pick]);
		break;
	case MODE_CONFIRM_ACTION:
		if (!func && (ch == 'y' || ch == 'Y' || ch == '\r' || ch == '\n'))
			do_action(a, a->act_kind, a->act_arg[0] ? a->act_arg : NULL);
		else if (!func && (ch == 'n' || ch == 'N'))
			a->mode = MODE_NORMAL;
		break;
	default:
		break;
	}
	a->dirty |= DIRTY_DIALOG | DIRTY_MESSAGE;
}

/* The time limit prompt: Enter checks and sends it. */
void jobs_time_key(struct app *a, wint_t ch, int func)
{
	char limit[32], *err = NULL;

	if (!func && ch == KEY_ESC) {
		a->mode = MODE_NORMAL;
	} else if (!func && (ch == '\r' || ch == '\n')) {
		if (job_time_limit_parse(a->input, limit, sizeof(limit), &err) != 0) {
			ui_message(a, 1, "%s", err);
			free(err);
			a->mode = MODE_NORMAL;
		} else {
			a->mode = MODE_NORMAL;
			do_action(a, ACTION_TIME_LIMIT, limit);
		}
	} else {
		ui_edit_input(a, ch, func);
	}
	a->dirty |= DIRTY_MESSAGE | DIRTY_DIALOG;
}

/* The screen as plain text, in the state folder beside the records. */
void jobs_screen_dump(struct app *a)
{
	const char *dir = store_dir(a->store);
	char stamp[32], *path, *parent;
	const char *slash = strrchr(dir, '/');
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;
	int fd, y;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	parent = slash != NULL ? xstrndup(dir, (size_t)(slash - dir)) : xstrdup(".");
	path = xasprintf("%s/screen-%s.txt", parent, stamp);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		ui_message(a, 1, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path), free(parent);
		return;
	}
	for (y = 0; y < a->lines; y++) {
		wchar_t line[1024];
		char mb[4096];
		int n = mvwinnwstr(curscr, y, 0, line, a->cols < 1023 ? a->cols : 1023);
		size_t len;
		if (n == ERR)
			line[0] = L'\0';
		len = wcstombs(mb, line, sizeof(mb) - 1);
		if (len == (size_t)-1)
			len = 0;
		while (len > 0 && mb[len - 1] == ' ')
			len--;
		mb[len] = '\0';
		fprintf(f, "%s\n", mb);
	}
	if (fclose(f) != 0)
		ui_message(a, 1, "cannot write %s: %s", path, strerror(errno));
	else
		ui_message(a, 0, "screen written to %s", path);
	free(path), free(parent);
}

/* ---- actions ------------------------------------------------------------------------------ */

void jobs_cancel_free(struct app *a)
{
	size_t i;

	for (i = 0; i < a->ncancel; i++) {
		free(a->cancel[i].job);
		free(a->cancel[i].label);
	}
	free(a->cancel);
	a->cancel = NULL;
	a->ncancel = 0;
}

void jobs_cancel_ask(struct app *a)
{
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
	jobs_cancel_free(a);
	a->cancel = xcalloc(n, sizeof(*a->cancel));
	for (i = 0; i < n; i++) {
		const struct job_row *r = v[i]->row;
		a->cancel[i].cluster = v[i]->cluster;
		a->cancel[i].job = xstrdup(ui_engine_id(r));
		a->cancel[i].label = xasprintf("%s  %s  %s  %s", v[i]->cluster_name,
		    r->record_id ? r->record_id : (r->shown_id[0] ? r->shown_id : r->slurm_id),
		    r->name ? r->name : "", tao_state_name(r->state));
	}
	a->ncancel = n;
	free(v);
	a->mode = MODE_CONFIRM_CANCEL;
	a->dirty |= DIRTY_DIALOG;
}

void jobs_cancel_do(struct app *a)
{
	size_t c, i, n;
	char **jobs = xcalloc(a->ncancel + 1, sizeof(*jobs));

	watch_outcomes_free(a->outs, a->nouts);
	a->outs = NULL;
	a->nouts = 0;
	/* One request per cluster, each cancelling its jobs in turn. */
	for (c = 0; c < watch_count(a->watch); c++) {
		for (i = n = 0; i < a->ncancel; i++)
			if (a->cancel[i].cluster == c)
				jobs[n++] = a->cancel[i].job;
		if (n > 0)
			watch_cancel(a->watch, c, jobs, n);
	}
	free(jobs);
	a->outcomes_wanted = a->ncancel;
	jobs_cancel_free(a);
	jt_clear_marks(&a->jt);
	a->mode = MODE_OUTCOMES;
	a->dirty |= DIRTY_DIALOG | DIRTY_JOBS;
}


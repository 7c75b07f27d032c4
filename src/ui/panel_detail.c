/* The job detail (Enter): the record, the latest poll's row, the GPUs in
 * use, and the staged sbatch and spec fetched from the cluster. Built
 * again when a poll, a sample or the files come (the record read again
 * from disk only on a poll; the spinner's turns use what is held); the
 * lines are ui/detail.c's. */
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/state.h"
#include "engine/store/store.h"
#include "ui/app.h"
#include "ui/detail.h"
#include "ui/message.h"
#include "ui/dialog.h"
#include "ui/text.h"
#include "util/xmalloc.h"

struct detail {
	char			*key;		/* the job shown (jt key), NULL: closed */
	struct job_record	*rec;		/* its record, NULL: none (not taotop's) */
	char			**lines;
	size_t			 n, top;
	struct watch_file	*files;		/* its staged sbatch and spec */
	size_t			 nfiles;
	int			 fetching;
	int64_t			 fetch_started_ms;	/* since (monotonic) */
	/* w on a pending job: why it waits (asked once per w, never by a
	 * poll); a finished job of the user's that is not taotop's: its
	 * efficiency card from accounting, asked as the detail opens. Shown
	 * at the top; asking (1 why, 2 the card) while it is awaited. */
	char			**why;
	size_t			 nwhy;
	int			 asking;
};

static struct detail *state(struct app *a)
{
	return panel_state(a, MODE_DETAIL, sizeof(struct detail));
}

static void free_lines(struct detail *s)
{
	text_lines_free(&s->lines, &s->n);
}

static void free_why(struct detail *s)
{
	text_lines_free(&s->why, &s->nwhy);
	s->asking = 0;
}

static void detail_close(struct app *a)
{
	struct detail *s = state(a);

	free_lines(s);
	free(s->key);
	s->key = NULL;
	record_free(s->rec);
	s->rec = NULL;
	watch_files_free(s->files, s->nfiles);
	s->files = NULL;
	s->nfiles = 0;
	s->fetching = 0;
	free_why(s);
}

/* The record read again from disk (a poll may have changed it). */
static void load(struct app *a, const struct jt_entry *e)
{
	struct detail *s = state(a);
	char *err = NULL;

	record_free(s->rec);
	s->rec = NULL;
	if (e->row->record_id != NULL && store_load(a->store, e->row->record_id, &s->rec, &err) != 0)
		free(err);
}

/* (Re)build the lines from the record held, the row (the latest poll)
 * and the fetched files. */
static void build(struct app *a)
{
	struct detail *s = state(a);
	const struct jt_entry *e = jt_by_key(&a->jt, s->key);

	if (e == NULL)
		return;		/* gone from the list: keep what is shown */
	free_lines(s);
	s->n = detail_lines(s->rec, e->row, e->cluster_name,
	    e->row->state == TAO_RUNNING ? watch_use(a->watch, e->cluster, e->row->slurm_id) : NULL,
	    s->files, s->nfiles, s->fetching ? watch_now_ms() - s->fetch_started_ms : -1,
	    text_utf8(), &s->lines);
	if (s->asking || s->nwhy > 0) {
		/* Why it waits, first: what the user asked for is in view. */
		size_t k = s->asking ? 1 : s->nwhy, i;
		s->lines = xreallocarray(s->lines, s->n + k + 1, sizeof(*s->lines));
		memmove(s->lines + k + 1, s->lines, s->n * sizeof(*s->lines));
		for (i = 0; i < k; i++)
			s->lines[i] = xstrdup(s->asking == 1 ? "Why it waits: asking the scheduler "
			    "(its start estimate, the priority factors, your fair-share)..." :
			    s->asking == 2 ? "Efficiency: asking accounting (sacct)..." : s->why[i]);
		s->lines[k] = xstrdup("");
		s->n += k + 1;
	}
	a->dirty |= DIRTY_DIALOG;
}

void detail_panel_explain(struct app *a, struct watch_event *ev)
{
	struct detail *s = state(a);
	const struct jt_entry *e;

	if (a->mode != MODE_DETAIL || !s->asking || (e = jt_by_key(&a->jt, s->key)) == NULL ||
	    strcmp(ui_engine_id(e->row), ev->u.explain.job) != 0)
		return;		/* closed, or another job's detail since: moot */
	free_why(s);
	if (ev->u.explain.lines == NULL && ev->u.explain.err == NULL) {
		load(a, e);	/* the record holds its completed card */
	} else if (ev->u.explain.lines != NULL) {
		s->why = ev->u.explain.lines;
		s->nwhy = ev->u.explain.n;
		ev->u.explain.lines = NULL;
		ev->u.explain.n = 0;
	} else {
		ui_message(a, 1, "why %s waits: %s", ev->u.explain.job, ev->u.explain.err);
	}
	build(a);
}

static void detail_open(struct app *a)
{
	const struct jt_entry *e = jt_selected(&a->jt);
	struct detail *s = state(a);
	char **paths;
	size_t n, i;

	if (e == NULL)
		return;
	detail_close(a);
	s->key = xstrdup(e->key);
	/* Looking at a running job of the user's: its GPUs are sampled too. */
	if (e->row->record_id == NULL && e->row->state == TAO_RUNNING)
		watch_use_request(a->watch, e->cluster, e->row->slurm_id);
	s->top = 0;
	load(a, e);
	/* A finished job that is not taotop's: its card from accounting; a
	 * taotop job's card completed with accounting's facts, once. */
	if (e->row->record_id == NULL && tao_state_final(e->row->state) &&
	    e->row->slurm_id[0] != '\0') {
		s->asking = 2;
		watch_card(a->watch, e->cluster, e->row->slurm_id);
	} else if (s->rec != NULL && tao_state_final(s->rec->state) &&
	    !(s->rec->has_card && s->rec->card.acct) && s->rec->backend_ref != NULL) {
		s->asking = 2;
		watch_card_record(a->watch, e->cluster, s->rec->id);
	}
	if (s->rec != NULL) {
		n = detail_paths(s->rec, &paths);
		if (n > 0) {
			watch_fetch(a->watch, e->cluster, paths, n);
			s->fetching = 1;
			s->fetch_started_ms = watch_now_ms();
		}
		for (i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
	}
	build(a);
	a->mode = MODE_DETAIL;
}

void detail_panel_files(struct app *a, struct watch_file *f, size_t n)
{
	struct detail *s = state(a);

	if (s->key == NULL || !s->fetching) {
		/* Closed since it asked, or another job's detail opened since,
		 * one that asked nothing: not its files. */
		watch_files_free(f, n);
		return;
	}
	watch_files_free(s->files, s->nfiles);
	s->files = f;
	s->nfiles = n;
	s->fetching = 0;
	build(a);
}

void detail_panel_refresh(struct app *a, int polled)
{
	const struct jt_entry *e;

	if (a->mode != MODE_DETAIL)
		return;
	if (polled && (e = jt_by_key(&a->jt, state(a)->key)) != NULL)
		load(a, e);
	build(a);
}

int64_t detail_panel_fetching(struct app *a)
{
	return a->mode == MODE_DETAIL && state(a)->fetching ? state(a)->fetch_started_ms : 0;
}

void detail_panel_spin(struct app *a)
{
	if (detail_panel_fetching(a))
		build(a);
}

static enum panel_next detail_key(struct app *a, wint_t ch, int func)
{
	struct detail *s = state(a);

	if (!func && (ch == KEY_ESC || ch == 'q' || ch == '\r' || ch == '\n'))
		return PANEL_CLOSE;
	if (!func && ch == 'w') {
		const struct jt_entry *e = jt_by_key(&a->jt, s->key);
		if (e == NULL)
			return PANEL_KEEP;
		if (e->row->state != TAO_PENDING) {
			ui_message(a, 1, "%s is not pending: nothing to explain", ui_engine_id(e->row));
			return PANEL_KEEP;
		}
		free_why(s);
		s->asking = 1;
		s->top = 0;
		watch_explain(a->watch, e->cluster, ui_engine_id(e->row));
		build(a);
		return PANEL_KEEP;
	}
	/* The dump's key as the user bound it (config keys:), not 'P'. */
	if (!ui_scroll_key(&s->top, s->n, ch, func) && keymap_lookup(KC_ANY, (int)ch) == ACT_DUMP)
		dump_screen(a);
	return PANEL_KEEP;
}

static void detail_draw(struct app *a)
{
	struct detail *s = state(a);

	const struct jt_entry *e = jt_by_key(&a->jt, s->key);
	int pending = e != NULL && e->row->state == TAO_PENDING;

	dialog_draw(a, "Job detail", s->lines, s->n, s->top, pending ?
	    "j/k, PgUp/PgDn, g/G: scroll    w: why it waits    P: write the screen    "
	    "Esc/Enter: close" :
	    "j/k, PgUp/PgDn, g/G: scroll    P: write the screen    Esc/Enter: close", ROLE_DIALOG);
}

const struct panel detail_panel = {
	.open = detail_open, .key = detail_key, .draw = detail_draw, .close = detail_close,
};

/*
 * The submit wizard in the monitor: the form (ui/wizard), its file picker
 * (ui/picker), the preview (a dry run of the real pipeline) and the live
 * step list of a submit, which runs on the cluster's worker
 * (watch_submit): the keys never wait for it.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "engine/submit/spec.h"
#include "engine/submit/submit.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "ui/picker.h"
#include "ui/text.h"
#include "ui/wizard.h"
#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

#define NSTEPS		(STEP_SUBMIT + 1)
#define CTRL(c)		((c) & 0x1f)

enum { ST_WAITING, ST_RUNNING, ST_DONE, ST_FAILED };

struct submit_view {
	struct wizard	 wiz;
	int		 wiz_open;
	size_t		 cluster;	/* of the submit running or shown */
	struct picker	 picker;
	char		**preview;	/* the dry run's lines, sanitised */
	size_t		 npreview, preview_top;
	struct {
		int	 state;
		char	*detail;
		int64_t	 since_ms;
	} step[NSTEPS];
	int		 dry;		/* the steps are a preview's */
	int		 running;
	int		 ok;		/* once ended */
	char		*outcome;	/* "submitted ...", or the error */
};

/* The view's state (the panel's slot), NULL before its first opening. */
static struct submit_view *sv_of(const struct app *a)
{
	return a->panel_state[MODE_WIZARD];
}

static struct submit_view *view(struct app *a)
{
	return panel_state(a, MODE_WIZARD, sizeof(struct submit_view));
}

static void preview_free(struct submit_view *v)
{
	while (v->npreview > 0)
		free(v->preview[--v->npreview]);
	free(v->preview);
	v->preview = NULL;
	v->preview_top = 0;
}

static void steps_reset(struct submit_view *v)
{
	int i;

	for (i = 0; i < NSTEPS; i++) {
		free(v->step[i].detail);
		v->step[i].detail = NULL;
		v->step[i].state = ST_WAITING;
	}
	free(v->outcome);
	v->outcome = NULL;
	v->ok = 0;
}

static void wizard_close(struct submit_view *v)
{
	if (v->wiz_open)
		wizard_free(&v->wiz);
	v->wiz_open = 0;
	picker_free(&v->picker);
	preview_free(v);
}

static void submit_view_free(struct app *a)
{
	struct submit_view *v = sv_of(a);

	if (v == NULL)
		return;
	wizard_close(v);
	steps_reset(v);
	free(v);
	a->panel_state[MODE_WIZARD] = NULL;
}

/* s: the form (a new one, on the selected job's cluster), or the steps of
 * the submit that runs. */
static void submit_view_open(struct app *a)
{
	struct submit_view *v = view(a);
	const struct jt_entry *e;

	if (a->readonly) {
		ui_message(a, 1, "read-only (--readonly): submit is disabled");
		return;
	}
	if (v->running) {
		a->mode = MODE_STEPS;
	} else {
		if (!v->wiz_open) {
			e = jt_selected(&a->jt);
			wizard_init(&v->wiz, &a->cfg, e != NULL ? e->cluster : 0);
			v->wiz_open = 1;
		}
		a->mode = MODE_WIZARD;
	}
	a->dirty |= DIRTY_DIALOG;
}

/* Run the form through the pipeline: a dry run for the preview, else the
 * submit. Nothing starts while a field has a problem. */
static void start(struct app *a, int dry)
{
	struct submit_view *v = sv_of(a);
	struct spec spec;
	struct spec_kv *secrets;
	size_t nsecrets, i;
	char *err = NULL;
	long bad;

	v->wiz.tried = 1;
	if ((bad = wizard_first_problem(&v->wiz, &err)) >= 0) {
		v->wiz.row = (size_t)bad;
		ui_message(a, 1, "%s: %s", dry ? "preview" : "not submitted", err);
		free(err);
		return;
	}
	if (wizard_build(&v->wiz, &spec, &secrets, &nsecrets, &err) != 0) {
		ui_message(a, 1, "%s: %s", dry ? "preview" : "not submitted", err);
		free(err);
		return;
	}
	if (watch_submit(a->watch, v->wiz.cluster, &spec, v->wiz.loaded, secrets, nsecrets,
	    dry) != 0) {
		spec_free(&spec);
		for (i = 0; i < nsecrets; i++) {
			buf_mem_wipe(secrets[i].value, strlen(secrets[i].value));
			free(secrets[i].key), free(secrets[i].value);
		}
		free(secrets);
		ui_message(a, 1, "a submit is running already: s shows its steps");
		return;
	}
	steps_reset(v);
	preview_free(v);
	v->cluster = v->wiz.cluster;
	v->dry = dry;
	v->running = 1;
	a->mode = MODE_STEPS;
}

/* Leave the bundle row: read what was typed there. */
static void leave_row(struct app *a)
{
	struct wizard *w = &sv_of(a)->wiz;
	const char *b = w->value[WZ_BUNDLE];
	char *err = NULL;

	if (w->row != WZ_BUNDLE || b[0] == '\0' || (w->loaded && strcmp(w->loaded, b) == 0) ||
	    w->bundle_error != NULL)
		return;
	if (wizard_load(w, b, &err) != 0)
		ui_message(a, 1, "%s", err);
	free(err);
}

static void form_enter(struct app *a)
{
	struct submit_view *v = sv_of(a);
	struct wizard *w = &v->wiz;
	char *err = NULL;

	switch (wizard_row_kind(w, w->row)) {
	case WR_PREVIEW:
		start(a, 1);
		return;
	case WR_SUBMIT:
		start(a, 0);
		return;
	default:
		break;
	}
	if (w->row == WZ_BUNDLE) {
		const char *b = w->value[WZ_BUNDLE];
		size_t len = strlen(b);
		if (len > 0 && b[len - 1] != '/' && wizard_load(w, b, &err) == 0) {
			w->row++;
			return;
		}
		free(err);
		/* Empty, a folder, or not a bundle: pick one, from there. */
		picker_open(&v->picker, len == 0 ? "." : b);
		if (v->picker.error != NULL && len > 0) {
			char *slash = strrchr(b, '/');
			char *dir = slash ? xstrndup(b, (size_t)(slash - b) + (slash == b)) : xstrdup(".");
			picker_open(&v->picker, dir);
			free(dir);
		}
		a->mode = MODE_PICKER;
		return;
	}
	if (w->row == WZ_CLUSTER) {
		wizard_cycle_cluster(w, 1);
		return;
	}
	w->row++;
}

static void form_key(struct app *a, wint_t ch, int func)
{
	struct wizard *w = &sv_of(a)->wiz;
	size_t rows = wizard_rows(w);

	if (!func && ch == KEY_ESC) {
		wizard_close(sv_of(a));
		a->mode = MODE_NORMAL;
		ui_message(a, 0, "submit abandoned: nothing was written or submitted");
		return;
	}
	if ((func && (ch == KEY_DOWN)) || (!func && ch == '\t')) {
		leave_row(a);
		w->row = (w->row + 1) % rows;
	} else if ((func && (ch == KEY_UP || ch == KEY_BTAB))) {
		leave_row(a);
		w->row = (w->row + rows - 1) % rows;
	} else if (func && (ch == KEY_LEFT || ch == KEY_RIGHT) && w->row == WZ_CLUSTER) {
		wizard_cycle_cluster(w, ch == KEY_LEFT ? -1 : 1);
	} else if ((func && ch == KEY_ENTER) || (!func && (ch == '\r' || ch == '\n'))) {
		form_enter(a);
	} else if ((func && ch == KEY_BACKSPACE) || (!func && (ch == 127 || ch == 8))) {
		wizard_backspace(w);
	} else if (!func && ch == CTRL('u')) {
		wizard_clear(w);
	} else if (!func && ch >= ' ') {
		char mb[MB_LEN_MAX + 1];
		mbstate_t st;
		size_t n;
		memset(&st, 0, sizeof(st));
		n = wcrtomb(mb, (wchar_t)ch, &st);
		if (n != (size_t)-1) {
			mb[n] = '\0';
			wizard_type(w, mb);
		}
	}
}

static void picker_key(struct app *a, wint_t ch, int func)
{
	struct submit_view *v = sv_of(a);
	struct picker *p = &v->picker;
	char *path, *err = NULL;

	if (!func && (ch == KEY_ESC || ch == 'q')) {
		a->mode = MODE_WIZARD;
	} else if ((func && ch == KEY_DOWN) || (!func && ch == 'j')) {
		p->sel += p->sel + 1 < p->n;
	} else if ((func && ch == KEY_UP) || (!func && ch == 'k')) {
		p->sel -= p->sel > 0;
	} else if ((func && (ch == KEY_BACKSPACE || ch == KEY_LEFT)) || (!func && (ch == 127 ||
	    ch == 8 || ch == 'h'))) {
		picker_up(p);
	} else if ((func && (ch == KEY_ENTER || ch == KEY_RIGHT)) || (!func && (ch == '\r' ||
	    ch == '\n' || ch == 'l'))) {
		if ((path = picker_enter(p)) != NULL) {
			if (wizard_load(&v->wiz, path, &err) == 0) {
				v->wiz.row = WZ_CLUSTER;
				ui_message(a, 0, "read %s", path);
			} else {
				ui_message(a, 1, "%s", err);
				free(err);
			}
			free(path);
			a->mode = MODE_WIZARD;
		}
	}
}

static void steps_key(struct app *a, wint_t ch, int func)
{
	struct submit_view *v = sv_of(a);

	if (func || !(ch == KEY_ESC || ch == 'q' || ch == '\r' || ch == '\n'))
		return;
	if (v->running) {
		/* It goes on; its end is told on the message line. */
		a->mode = MODE_NORMAL;
		ui_message(a, 0, "the submit goes on: s shows its steps");
	} else if (v->ok && !v->dry) {
		wizard_close(v);
		a->mode = MODE_NORMAL;
	} else {
		a->mode = v->wiz_open ? MODE_WIZARD : MODE_NORMAL;
	}
}

static void preview_key(struct app *a, wint_t ch, int func)
{
	struct submit_view *v = sv_of(a);

	if (!func && (ch == KEY_ESC || ch == 'q' || ch == '\r' || ch == '\n')) {
		preview_free(v);
		a->mode = MODE_WIZARD;
	} else {
		ui_scroll_key(&v->preview_top, v->npreview, ch, func);
	}
}

static enum panel_next submit_view_key(struct app *a, wint_t ch, int func)
{
	switch (a->mode) {
	case MODE_WIZARD:
		form_key(a, ch, func);
		break;
	case MODE_PICKER:
		picker_key(a, ch, func);
		break;
	case MODE_STEPS:
		steps_key(a, ch, func);
		break;
	case MODE_PREVIEW:
		preview_key(a, ch, func);
		break;
	default:
		break;
	}
	return PANEL_MOVED;	/* each view sets the mode it leaves for */
}

/* ---- news from the worker ------------------------------------------------------------------ */

static char **add(char **v, size_t *n, char *line)
{
	v = xreallocarray(v, *n + 1, sizeof(*v));
	v[(*n)++] = line;
	return v;
}

/* text sanitised, then wrapped to width columns, added to v. */
static char **add_wrapped(char **v, size_t *n, const char *text, const char *indent, int width)
{
	struct buf b;

	buf_init(&b);
	sanitize_append(&b, text, strlen(text));
	buf_adds(&b, "");
	text_wrap(&v, n, b.data, indent, width);
	buf_free(&b);
	return v;
}

static void take_preview(struct app *a, struct submit_view *v, const char *text)
{
	preview_free(v);
	v->preview = add_wrapped(NULL, &v->npreview, text, "    ", a->cols - 8);
}

void submit_panel_step(struct app *a, const struct watch_event *ev)
{
	struct submit_view *v = view(a);
	const struct watch_step *s = &ev->u.step;
	int k = s->step;

	a->dirty |= DIRTY_DIALOG;
	if (k < 0 || k >= NSTEPS)
		return;
	if (v->step[k].state != ST_RUNNING && s->state == 0)
		v->step[k].since_ms = watch_now_ms();
	v->step[k].state = s->state == 0 ? ST_RUNNING : s->state > 0 ? ST_DONE : ST_FAILED;
	if (s->detail != NULL || s->state != 0) {
		free(v->step[k].detail);
		v->step[k].detail = s->detail ? xstrdup(s->detail) : NULL;
	}
}

void submit_panel_ended(struct app *a, const struct watch_event *ev)
{
	struct submit_view *v = view(a);
	const struct submit_result *res = &ev->u.submitted.res;
	const char *err = ev->u.submitted.err;
	int ok = ev->u.submitted.ok;

	v->running = 0;
	v->ok = ok;
	free(v->outcome);
	if (!ok)
		v->outcome = xstrdup(err ? err : "failed");
	else if (v->dry)
		v->outcome = xstrdup("rendered: nothing was written or submitted");
	else
		v->outcome = xasprintf("submitted %s as SLURM job %s%s%s%s%s", res->record_id,
		    res->slurm_id, res->adopted ? " (found by name after the answer was lost)" : "",
		    res->resubmit_of ? " (the submit of " : "",
		    res->resubmit_of ? res->resubmit_of : "",
		    res->resubmit_of ? " was lost: submitted once more)" : "");
	if (ok && v->dry && res->dry_run != NULL) {
		take_preview(a, v, res->dry_run);
		if (a->mode == MODE_STEPS)
			a->mode = MODE_PREVIEW;
	} else if (a->mode != MODE_STEPS) {
		ui_message(a, !ok, "%s", v->outcome);
	}
	a->dirty |= DIRTY_DIALOG;
}

int submit_panel_ticking(const struct app *a)
{
	return a->mode == MODE_STEPS && sv_of(a) != NULL && sv_of(a)->running;
}

int submit_panel_running(const struct app *a)
{
	return sv_of(a) != NULL && sv_of(a)->running;
}

/* ---- drawing ------------------------------------------------------------------------------- */

/* The submit's steps as they run: done, running (for how long), failed
 * (with the engine's words: what went wrong and what to do), waiting. */
static size_t step_lines(const struct app *a, char ***out)
{
	const struct submit_view *v = sv_of(a);
	int utf8 = text_utf8(), k;
	const char *mark[] = { utf8 ? "\xc2\xb7" : "-", utf8 ? "\xe2\x80\xa6" : ">",
	    utf8 ? "\xe2\x9c\x93" : "+", utf8 ? "\xe2\x9c\x97" : "X" };
	int64_t now = watch_now_ms();
	char **lines = NULL;
	size_t n = 0;

	for (k = 0; k < NSTEPS; k++) {
		const char *detail = v->step[k].detail;
		struct buf b;
		int st = v->step[k].state;
		/* Steps not reported at all (the probe of a one-GPU job) were
		 * not needed. */
		if (st == ST_WAITING && !v->running && v->ok)
			continue;
		buf_init(&b);
		buf_addf(&b, "%s %-10s", mark[st], submit_step_name((enum submit_step)k));
		if (detail != NULL && st != ST_FAILED) {
			buf_adds(&b, " ");
			sanitize_append(&b, detail, strlen(detail));
		}
		if (st == ST_RUNNING)
			buf_addf(&b, "%s %llds", detail ? "" : " ...",
			    (long long)((now - v->step[k].since_ms) / 1000));
		lines = add(lines, &n, buf_detach(&b));
		/* The engine's words: what went wrong, and what to do. */
		if (st == ST_FAILED && detail != NULL) {
			char *msg = xasprintf("    %s", detail);
			lines = add_wrapped(lines, &n, msg, "    ", a->cols - 8);
			free(msg);
		}
	}
	lines = add(lines, &n, xstrdup(""));
	if (v->running)
		lines = add(lines, &n, xstrdup(v->dry ? "rendering the preview..." : "submitting..."));
	else if (v->outcome != NULL)
		lines = add(lines, &n, xasprintf("%s %s", v->ok ? (utf8 ? "\xe2\x86\x92" : "->")
		    : mark[ST_FAILED], v->outcome));
	*out = lines;
	return n;
}

static void lines_free(char **v, size_t n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

static void submit_view_draw(struct app *a)
{
	struct submit_view *v = sv_of(a);
	char **lines = NULL, title[128];
	size_t n = 0, i, focus = 0, top = 0;
	int width = a->cols - 8 > 100 ? 100 : a->cols - 8;

	if (v == NULL)
		return;
	switch (a->mode) {
	case MODE_WIZARD:
		n = wizard_lines(&v->wiz, width, &lines, &focus);
		/* Keep the focused row on screen. */
		if ((int)focus > a->lines - 8)
			top = focus - (size_t)(a->lines - 8);
		dialog_draw(a, "Submit a job", lines, n, top, "Tab/Up/Down: field    Enter: next, "
		    "or the button    Ctrl-U: clear    Esc: leave (nothing is sent)", ROLE_DIALOG);
		break;
	case MODE_PICKER:
		for (i = 0; i < v->picker.n; i++)
			lines = add(lines, &n, xasprintf("%s %s", i == v->picker.sel ? ">" : " ",
			    v->picker.names[i]));
		if (v->picker.error != NULL)
			lines = add(lines, &n, xasprintf("  (%s)", v->picker.error));
		if (v->picker.sel > (size_t)(a->lines - 10) && a->lines > 10)
			top = v->picker.sel - (size_t)(a->lines - 10);
		snprintf(title, sizeof(title), "A spec bundle: %s", v->picker.dir ? v->picker.dir : "");
		dialog_draw(a, title, lines, n, top, "j/k: choose    Enter: open    Backspace: up    "
		    "Esc: back to the form", ROLE_DIALOG);
		break;
	case MODE_STEPS:
		n = step_lines(a, &lines);
		snprintf(title, sizeof(title), "%s on %s", v->dry ? "Preview" : "Submit",
		    a->cfg.clusters[v->cluster].name);
		dialog_draw(a, title, lines, n, 0, v->running ? "Esc: hide (it goes on)"
		    : v->ok && !v->dry ? "Enter/Esc: close" : "Esc: back to the form",
		    v->ok || v->running ? ROLE_DIALOG : ROLE_DIALOG_WARNING);
		break;
	case MODE_PREVIEW:
		dialog_draw(a, "Preview: nothing was written or submitted", v->preview, v->npreview,
		    v->preview_top, "j/k, PgUp/PgDn, g/G: scroll    Esc: back to the form", ROLE_DIALOG);
		break;
	default:
		break;
	}
	lines_free(lines, n);
}

/* One panel, four views (form, file picker, steps, preview): one mode
 * each in PANEL_LIST. Its state lives on between openings, in its panel
 * slot: the form keeps what was typed, a submit runs on. */
const struct panel submit_panel = {
	.open = submit_view_open, .key = submit_view_key, .draw = submit_view_draw,
	.free = submit_view_free,
};

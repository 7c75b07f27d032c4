/* Where the GPU hours went (E): `taotop report`'s summary for the last 7
 * days, every cluster asked at once on its own worker (one remote command
 * each), each cluster's part shown as it comes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/text.h"
#include "util/sanitize.h"
#include "util/buf.h"
#include "util/xmalloc.h"

#define REPORT_SINCE_S	(7 * 86400L)

struct report_view {
	char	**lines;
	size_t	  n, top;
	size_t	  wanted;	/* clusters still to answer */
};

static struct report_view *state(struct app *a)
{
	return panel_state(a, MODE_REPORT, sizeof(struct report_view));
}

static void add(struct report_view *s, char *line)
{
	s->lines = xreallocarray(s->lines, s->n + 1, sizeof(*s->lines));
	s->lines[s->n++] = line;
}

static void report_close(struct app *a)
{
	struct report_view *s = state(a);

	text_lines_free(&s->lines, &s->n);
	s->wanted = 0;
}

static void report_open(struct app *a)
{
	struct report_view *s = state(a);
	size_t i, n = watch_count(a->watch);

	report_close(a);
	s->top = 0;
	s->wanted = n;
	for (i = 0; i < n; i++)
		watch_report(a->watch, i, REPORT_SINCE_S);
	a->mode = MODE_REPORT;
	a->dirty |= DIRTY_DIALOG;
}

void report_panel_add(struct app *a, struct watch_event *ev)
{
	struct report_view *s = state(a);
	const struct watched *w = watch_cluster(a->watch, ev->cluster);
	size_t i;

	if (a->mode != MODE_REPORT || s->wanted == 0)
		return;		/* closed since it asked: moot */
	s->wanted--;
	if (s->n > 0)
		add(s, xstrdup(""));
	add(s, xasprintf("== %s ==", w != NULL ? w->cfg->name : "?"));
	if (ev->u.report.lines != NULL) {
		for (i = 0; i < ev->u.report.n; i++) {
			/* Partition names are the cluster's words: sanitised. */
			struct buf b;
			buf_init(&b);
			sanitize_append_line(&b, ev->u.report.lines[i], strlen(ev->u.report.lines[i]));
			add(s, b.data != NULL ? buf_detach(&b) : xstrdup(""));
			buf_free(&b);
		}
	} else {
		struct buf b;
		buf_init(&b);
		sanitize_append_line(&b, ev->u.report.err, strlen(ev->u.report.err));
		add(s, xasprintf("  not reported: %s", b.data != NULL ? b.data : "?"));
		buf_free(&b);
	}
	a->dirty |= DIRTY_DIALOG;
}

static enum panel_next report_key(struct app *a, wint_t ch, int func)
{
	struct report_view *s = state(a);

	if (!func && (ch == KEY_ESC || ch == 'q' || ch == 'E' || ch == '\r' || ch == '\n'))
		return PANEL_CLOSE;
	ui_scroll_key(&s->top, s->n, ch, func);
	a->dirty |= DIRTY_DIALOG;
	return PANEL_KEEP;
}

static void report_draw(struct app *a)
{
	struct report_view *s = state(a);
	char *wait[1];
	const char *const *v = (const char *const *)s->lines;
	size_t n = s->n;

	if (s->wanted > 0 && s->n == 0) {
		wait[0] = (char *)"asking accounting (sacct) on each cluster...";
		v = (const char *const *)wait;
		n = 1;
	}
	dialog_draw(a, "GPU hours, the last 7 days", (char **)v, n, s->top,
	    "j/k, PgUp/PgDn, g/G: scroll    Esc/E: close    (taotop report --since 7d)", ROLE_DIALOG);
}

const struct panel report_panel = {
	.open = report_open, .key = report_key, .draw = report_draw, .close = report_close,
};

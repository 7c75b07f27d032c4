/*
 * The server's question dialog: a one-time code (keyboard-interactive) or
 * a password a cluster's server asks while the worker connects. It shows
 * the server's name, instruction and prompts (sanitised: the server wrote
 * them), and, after a refused answer, what the server said. Answers are
 * typed into secret buffers, shown as stars where the server says not to
 * echo them, handed to the worker (which wipes them once libssh has them)
 * and wiped here: never logged, kept or drawn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssh/conn.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

#define ANSWER_MAX	512	/* bytes of one answer */
#define ASK_FIELDS	8	/* prompts answered at most */

struct ask {
	size_t		cluster;		/* whose question the dialog shows */
	struct buf	ans[ASK_FIELDS];	/* secret: typed answers */
	size_t		n, cur;
};

static struct ask *state(struct app *a)
{
	return panel_state(a, MODE_ASK, sizeof(struct ask));
}

static void wipe(struct app *a)
{
	struct ask *s = state(a);
	size_t i;

	for (i = 0; i < s->n; i++)
		buf_free(&s->ans[i]);
	s->n = 0;
	s->cur = 0;
}

static void ask_open(struct app *a, size_t cluster)
{
	struct ask *s = state(a);
	const struct watched *c = watch_cluster(a->watch, cluster);
	size_t i;

	wipe(a);
	s->cluster = cluster;
	s->n = c->ask->n < ASK_FIELDS ? c->ask->n : ASK_FIELDS;
	for (i = 0; i < s->n; i++)
		buf_init_secret(&s->ans[i]);
	a->mode = MODE_ASK;
	a->dirty |= DIRTY_DIALOG;
}

/* A new question, or the one shown gone (the worker gave up): open or close
 * the dialog. Only over the normal view: another dialog is finished first. */
void ask_panel_check(struct app *a)
{
	struct ask *s = state(a);
	size_t i;

	if (a->mode == MODE_ASK) {
		const struct watched *c = watch_cluster(a->watch, s->cluster);
		if (c->link != LINK_ASKING || c->ask == NULL) {
			wipe(a);
			a->mode = MODE_NORMAL;
			a->dirty |= DIRTY_DIALOG;
		}
		return;
	}
	if (a->mode != MODE_NORMAL)
		return;
	for (i = 0; i < watch_count(a->watch); i++) {
		const struct watched *c = watch_cluster(a->watch, i);
		if (c->link == LINK_ASKING && c->ask != NULL) {
			ask_open(a, i);
			return;
		}
	}
}

static enum panel_next ask_key(struct app *a, wint_t ch, int func)
{
	struct ask *s = state(a);
	struct buf *b = s->n > 0 ? &s->ans[s->cur] : NULL;

	if (!func && ch == KEY_ESC) {
		watch_answer(a->watch, s->cluster, NULL, 0);
		wipe(a);
		ui_message(a, 1, "%s: not connected (question not answered); R tries again",
		    watch_cluster(a->watch, s->cluster)->cfg->name);
		a->mode = MODE_NORMAL;
	} else if ((!func && (ch == '\n' || ch == '\r')) || (!func && ch == '\t') ||
	    (func && (ch == KEY_DOWN || ch == KEY_UP || ch == KEY_ENTER))) {
		if (func && ch == KEY_UP) {
			s->cur -= s->cur > 0;
		} else if (s->cur + 1 < s->n) {
			s->cur++;
		} else if (!(func && ch == KEY_DOWN) && !(!func && ch == '\t')) {
			watch_answer(a->watch, s->cluster, s->ans, s->n);
			wipe(a);
			ui_message(a, 0, "%s: answer sent; connecting",
			    watch_cluster(a->watch, s->cluster)->cfg->name);
			a->mode = MODE_NORMAL;
		}
	} else if (b != NULL && ((func && ch == KEY_BACKSPACE) || (!func && (ch == 127 || ch == 8)))) {
		/* One character: its UTF-8 continuation bytes with it. */
		while (b->len > 0 && ((unsigned char)b->data[b->len - 1] & 0xc0) == 0x80)
			b->data[--b->len] = '\0';
		if (b->len > 0)
			b->data[--b->len] = '\0';
	} else if (b != NULL && !func && ch == 21) {	/* Ctrl-U */
		buf_reset(b);
	} else if (b != NULL && !func && ch >= 32 && ch != 127) {
		char mb[8];
		int n = wctomb(mb, (wchar_t)ch);
		if (n > 0 && b->len + (size_t)n <= ANSWER_MAX)
			buf_add(b, mb, (size_t)n);
		buf_mem_wipe(mb, sizeof(mb));
	}
	a->dirty |= DIRTY_DIALOG | DIRTY_MESSAGE;
	return PANEL_MOVED;	/* Esc and the answer sent set the mode */
}

static char *clean_line(const char *s)
{
	struct buf b;

	buf_init(&b);
	sanitize_append_line(&b, s, strlen(s));
	return buf_detach(&b);
}

static void ask_draw(struct app *a)
{
	struct ask *s = state(a);
	const struct watched *c = watch_cluster(a->watch, s->cluster);
	const struct conn_challenge *q = c != NULL ? c->ask : NULL;
	char **v, *title, *host, *name;
	size_t n = 0, i, cap;

	if (q == NULL)
		return;
	cap = 8 + s->n;
	for (i = 0; q->instruction[i] != '\0'; i++)
		cap += q->instruction[i] == '\n';
	v = xcalloc(cap, sizeof(*v));
	host = clean_line(q->host != NULL ? q->host : "?");
	name = clean_line(q->name != NULL ? q->name : "");
	v[n++] = xasprintf("Cluster %s: the server %s asks:", c->cfg->name, host);
	if (name[0] != '\0')
		v[n++] = xasprintf("  %s", name);
	/* The instruction, line by line. */
	if (q->instruction[0] != '\0') {
		const char *p = q->instruction;
		while (*p != '\0' && n + s->n + 3 < cap) {
			const char *nl = strchr(p, '\n');
			size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
			struct buf b;
			buf_init(&b);
			buf_adds(&b, "  ");
			sanitize_append_line(&b, p, len);
			if (len > 0)
				v[n++] = buf_detach(&b);
			else
				buf_free(&b);
			p += len + (nl != NULL);
		}
	}
	if (q->said != NULL) {
		char *said = clean_line(q->said);
		v[n++] = xasprintf("Refused (try %d): %s", q->attempt - 1, said);
		free(said);
	}
	v[n++] = xstrdup("");
	for (i = 0; i < s->n; i++) {
		char *prompt = clean_line(q->prompts[i].text != NULL ? q->prompts[i].text : "");
		const struct buf *b = &s->ans[i];
		char *shown;

		if (q->prompts[i].echo) {
			shown = clean_line(b->len ? b->data : "");
		} else {
			/* One star per character typed, never the characters. */
			size_t k, chars = 0;
			for (k = 0; k < b->len; k++)
				chars += ((unsigned char)b->data[k] & 0xc0) != 0x80;
			shown = xcalloc(chars + 1, 1);
			memset(shown, '*', chars);
		}
		v[n++] = xasprintf("%s %s%s%s", i == s->cur ? ">" : " ", prompt, shown,
		    i == s->cur ? "_" : "");
		free(prompt);
		free(shown);
	}
	title = xasprintf("Cluster %s: sign in", c->cfg->name);
	dialog_draw(a, title, v, n, 0, s->n > 1 ? "Enter: next/send    Tab: next field    "
	    "Esc: do not connect" : "Enter: send    Esc: do not connect", ROLE_DIALOG);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	free(title);
	free(host);
	free(name);
}

/* Closed by its keys or its question gone; at the loop's end the typed
 * answers are wiped. */
const struct panel ask_panel = {
	.key = ask_key, .draw = ask_draw, .close = wipe,
};

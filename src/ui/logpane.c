#include "ui/logpane.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/logs/logring.h"
#include "ui/text.h"
#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

void logpane_init(struct logpane *p)
{
	memset(p, 0, sizeof(*p));
	p->follow = 1;
}

/* Line i of the ring (relative), as shown. */
static void line_text(const struct log_ring *r, size_t i, int sgr, struct buf *out)
{
	size_t len;
	const char *s = log_ring_get(r, i, &len);

	if (len > 0 && s[len - 1] == '\n')
		len--;
	buf_reset(out);
	if (len > LOGPANE_LINE_MAX) {
		(sgr ? sanitize_append_sgr : sanitize_append)(out, s, LOGPANE_LINE_MAX);
		buf_addf(out, " [... %zu more bytes]", len - LOGPANE_LINE_MAX);
	} else {
		(sgr ? sanitize_append_sgr : sanitize_append)(out, s, len);
	}
}

/* The rows line i takes: its segments at this width. */
static size_t segments(const struct buf *t, int wrap, size_t width, size_t *off, size_t *len,
    size_t max)
{
	size_t n = 0, pos = 0, col = 0;

	if (!wrap || width == 0 || t->len == 0) {
		off[0] = 0;
		len[0] = t->len;
		return 1;
	}
	while (pos < t->len && n < max) {
		size_t k = text_fit(t->data + pos, t->len - pos, col, width);
		off[n] = pos;
		len[n++] = k;
		col += text_width(t->data + pos, k);
		pos += k;
	}
	return n;
}

static void add_row(struct pane_row *rows, size_t *n, size_t line, const struct buf *t, size_t off,
    size_t len)
{
	rows[*n].line = line;
	rows[*n].text = xmalloc(len + 1);
	memcpy(rows[*n].text, t->data + off, len);
	rows[*n].text[len] = '\0';
	rows[*n].len = len;
	(*n)++;
}

size_t logpane_layout(const struct log_ring *r, struct logpane *p, size_t width, size_t height,
    int sgr, struct pane_row *rows)
{
	size_t *off, *len, nseg, n = 0, i, k, cap;
	struct buf t;

	if (height == 0 || r->n == 0) {
		p->first_shown = r->dropped;
		return 0;
	}
	/* Following shows a tall line's last rows: room for all of them
	 * (a shown line is at most ~3x LOGPANE_LINE_MAX bytes sanitised). */
	cap = p->follow ? 3 * LOGPANE_LINE_MAX + 64 : height;
	off = xcalloc(cap, sizeof(*off));
	len = xcalloc(cap, sizeof(*len));
	buf_init(&t);
	if (p->follow) {
		/* From the last line up, each line's last rows first. */
		size_t used = 0, first = r->n;
		struct pane_row *tmp = xcalloc(height, sizeof(*tmp));
		for (i = r->n; i-- > 0 && used < height;) {
			line_text(r, i, sgr, &t);
			nseg = segments(&t, p->wrap, width, off, len, cap);
			for (k = nseg; k-- > 0 && used < height;)
				add_row(tmp, &used, r->dropped + i, &t, off[k], len[k]);
			first = i;
		}
		for (k = 0; k < used; k++)
			rows[k] = tmp[used - 1 - k];
		n = used;
		free(tmp);
		p->first_shown = r->dropped + first;
	} else {
		size_t start = p->top > r->dropped ? p->top - r->dropped : 0;
		if (start >= r->n)
			start = r->n - 1;
		p->first_shown = r->dropped + start;
		for (i = start; i < r->n && n < height; i++) {
			line_text(r, i, sgr, &t);
			nseg = segments(&t, p->wrap, width, off, len, height - n);
			for (k = 0; k < nseg && n < height; k++)
				add_row(rows, &n, r->dropped + i, &t, off[k], len[k]);
		}
	}
	buf_free(&t);
	free(off);
	free(len);
	return n;
}

void logpane_rows_free(struct pane_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(rows[i].text);
}

void logpane_scroll(struct logpane *p, const struct log_ring *r, long lines)
{
	long top = (long)p->first_shown + lines;
	long lo = (long)r->dropped, hi = (long)(r->dropped + (r->n ? r->n - 1 : 0));

	p->follow = 0;
	p->top = (size_t)(top < lo ? lo : top > hi ? hi : top);
	p->first_shown = p->top;
}

void logpane_top(struct logpane *p, const struct log_ring *r)
{
	p->follow = 0;
	p->top = p->first_shown = r->dropped;
}

void logpane_follow(struct logpane *p)
{
	p->follow = 1;
	p->hscroll = 0;
}

static int holds(const char *s, size_t len, const char *needle)
{
	size_t nl = strlen(needle), i, k;

	for (i = 0; nl > 0 && i + nl <= len; i++) {
		for (k = 0; k < nl; k++)
			if (tolower((unsigned char)s[i + k]) != tolower((unsigned char)needle[k]))
				break;
		if (k == nl)
			return 1;
	}
	return 0;
}

int logpane_find(struct logpane *p, const struct log_ring *r, int dir)
{
	size_t first = p->first_shown > r->dropped ? p->first_shown - r->dropped : 0;
	long n = (long)r->n, start = (long)first, at, i, k;

	if (p->search[0] == '\0' || r->n == 0)
		return -1;
	if (p->follow && dir > 0) {
		/* At the end there is nothing below: the nearest above. */
		dir = -1;
		start = n;
	}
	for (k = 1; k <= n; k++) {
		size_t len;
		const char *s;
		at = start + dir * k;
		i = (at % n + n) % n;
		s = log_ring_get(r, (size_t)i, &len);
		if (holds(s, len, p->search)) {
			p->follow = 0;
			p->top = p->first_shown = r->dropped + (size_t)i;
			return at < 0 || at >= n ? LOGPANE_WRAPPED : LOGPANE_FOUND;
		}
	}
	return -1;
}

const char *logpane_spinner(int64_t ms)
{
	static const char *const frame[] = { "|", "/", "-", "\\" };

	return frame[(ms < 0 ? 0 : ms / 250) % 4];
}

/* "12 s old", "3 min old", "2 h old". */
static void age(char *buf, size_t len, int64_t ms)
{
	long long s = ms < 0 ? 0 : ms / 1000;

	if (s < 120)
		snprintf(buf, len, "%lld s old", s);
	else if (s < 7200)
		snprintf(buf, len, "%lld min old", s / 60);
	else
		snprintf(buf, len, "%lld h old", s / 3600);
}

void logpane_title(char *buf, size_t len, const struct logpane *p, const char *name,
    const char *job, int dropped, const struct pane_fresh *f)
{
	char fresh[64] = "";
	int slow = f->reading_ms != 0 && f->now_ms - f->reading_ms >= LOGPANE_SLOW_MS;

	if ((slow || f->failed) && f->read_ms != 0) {
		age(fresh, sizeof(fresh) - 4, f->now_ms - f->read_ms);
		if (slow) {
			strcat(fresh, " ");
			strcat(fresh, logpane_spinner(f->now_ms - f->reading_ms));
		}
		strcat(fresh, "  ");
	} else if (slow) {
		snprintf(fresh, sizeof(fresh), "%s  ", logpane_spinner(f->now_ms - f->reading_ms));
	}
	snprintf(buf, len, " %s  %s  %s%s%s%s ", name, job, fresh,
	    p->follow ? "following" : "paused (G follows)", p->wrap ? "  wrap" : "",
	    dropped ? "  (older lines dropped)" : "");
}

void logpane_loading(char *buf, size_t len, int64_t now_ms, int64_t reading_ms)
{
	int64_t waited = reading_ms != 0 ? now_ms - reading_ms : 0;

	if (waited < LOGPANE_SLOW_MS)
		snprintf(buf, len, "loading...");
	else
		snprintf(buf, len, "loading %s %lld s", logpane_spinner(waited),
		    (long long)(waited / 1000));
}

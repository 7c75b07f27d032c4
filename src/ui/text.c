#include "util/compat.h"
#include "ui/text.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

#define TAB	8

static int utf8_term;
static int sgr_pair_base = 64;
static int sgr_pairs_used;

void text_init(int utf8)
{
	utf8_term = utf8;
}

int text_utf8(void)
{
	return utf8_term;
}

void text_set_sgr_pair_base(int first_free_pair)
{
	sgr_pair_base = first_free_pair;
	sgr_pairs_used = 0;
}

/* Decode one character of valid UTF-8 (as sanitize leaves it). */
static size_t decode(const unsigned char *p, size_t len, wchar_t *wc)
{
	size_t n, i;
	unsigned cp;

	if (p[0] < 0x80) {
		*wc = p[0];
		return 1;
	}
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (n > len) {
		*wc = L'?';
		return len;
	}
	cp = p[0] & (0xff >> (n + 1));
	for (i = 1; i < n; i++)
		cp = (cp << 6) | (p[i] & 0x3f);
	*wc = (wchar_t)cp;
	return n;
}

/* Length of an SGR sequence at p, or 0. */
static size_t sgr_len(const char *p, size_t len)
{
	size_t i;

	if (len < 3 || p[0] != 0x1b || p[1] != '[')
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] == 'm')
			return i + 1;
	return len;
}

/* The width of one character as shown: '?' in ASCII locales and for
 * what the terminal cannot print. */
static int char_cols(wchar_t *wc)
{
	int w;

	if (!utf8_term && *wc >= 0x80)
		*wc = L'?';
	w = compat_wcwidth(*wc);
	if (w < 0) {
		*wc = L'?';
		w = 1;
	}
	return w;
}

size_t text_fit(const char *s, size_t len, size_t col, size_t width)
{
	size_t i = 0, used = 0;

	while (i < len) {
		size_t n = sgr_len(s + i, len - i), w;
		wchar_t wc;
		if (n > 0) {
			i += n;
			continue;
		}
		if (s[i] == '\t') {
			w = TAB - (col + used) % TAB;
			n = 1;
		} else {
			n = decode((const unsigned char *)s + i, len - i, &wc);
			w = (size_t)char_cols(&wc);
		}
		if (used + w > width && i > 0)
			break;
		used += w;
		i += n;
		if (used >= width)
			break;
	}
	/* Keep the colour sequences that end this part with it. */
	while (i < len && sgr_len(s + i, len - i) > 0)
		i += sgr_len(s + i, len - i);
	return i;
}

static size_t width_of(const char *s, size_t len)
{
	size_t i = 0, col = 0;

	while (i < len) {
		size_t n = sgr_len(s + i, len - i);
		wchar_t wc;
		if (n > 0) {
			i += n;
		} else if (s[i] == '\t') {
			col += TAB - col % TAB;
			i++;
		} else {
			i += decode((const unsigned char *)s + i, len - i, &wc);
			col += (size_t)char_cols(&wc);
		}
	}
	return col;
}

size_t text_width(const char *s, size_t len)
{
	struct buf clean;
	size_t cols;

	if (!sanitize_needed(s, len))
		return width_of(s, len);
	buf_init(&clean);
	sanitize_append_sgr(&clean, s, len);
	cols = width_of(clean.data ? clean.data : "", clean.len);
	buf_free(&clean);
	return cols;
}

/* A colour pair for fg/bg from SGR, allocated as first seen. */
static int sgr_pair(short fg, short bg)
{
	static short pf[256], pb[256];
	int i;

	for (i = 0; i < sgr_pairs_used; i++)
		if (pf[i] == fg && pb[i] == bg)
			return sgr_pair_base + i;
	if (sgr_pairs_used >= 256 || sgr_pair_base + sgr_pairs_used >= COLOR_PAIRS)
		return 0;
	pf[sgr_pairs_used] = fg;
	pb[sgr_pairs_used] = bg;
	init_pair((short)(sgr_pair_base + sgr_pairs_used), fg, bg);
	return sgr_pair_base + sgr_pairs_used++;
}

struct sgr_state {
	attr_t	base;
	attr_t	attrs;
	short	fg, bg;		/* -2: the base's own */
};

static short fit(long c)
{
	if (c >= COLORS)
		c = c < 16 ? c - 8 : c % 8;
	return (short)c;
}

static attr_t sgr_apply(struct sgr_state *st, const char *p, size_t n)
{
	const char *q = p + 2, *end = p + n - 1;
	long v[16];
	size_t nv = 0, i;

	while (q <= end && nv < 16) {
		char *e;
		v[nv++] = q < end && *q != ';' ? strtol(q, &e, 10) : 0;
		if (q < end && *q != ';')
			q = e;
		q++;
	}
	for (i = 0; i < nv; i++) {
		long c = v[i];
		if (c == 0) {
			st->attrs = 0;
			st->fg = st->bg = -2;
		} else if (c == 1) {
			st->attrs |= A_BOLD;
		} else if (c == 2) {
			st->attrs |= A_DIM;
		} else if (c == 3) {
			st->attrs |= A_ITALIC;
		} else if (c == 4) {
			st->attrs |= A_UNDERLINE;
		} else if (c == 7) {
			st->attrs |= A_REVERSE;
		} else if (c == 22) {
			st->attrs &= ~(attr_t)(A_BOLD | A_DIM);
		} else if (c == 23) {
			st->attrs &= ~(attr_t)A_ITALIC;
		} else if (c == 24) {
			st->attrs &= ~(attr_t)A_UNDERLINE;
		} else if (c == 27) {
			st->attrs &= ~(attr_t)A_REVERSE;
		} else if (c >= 30 && c <= 37) {
			st->fg = (short)(c - 30);
		} else if (c >= 90 && c <= 97) {
			st->fg = fit(c - 90 + 8);
		} else if (c == 39) {
			st->fg = -2;
		} else if (c >= 40 && c <= 47) {
			st->bg = (short)(c - 40);
		} else if (c >= 100 && c <= 107) {
			st->bg = fit(c - 100 + 8);
		} else if (c == 49) {
			st->bg = -2;
		} else if ((c == 38 || c == 48) && i + 2 < nv && v[i + 1] == 5) {
			short col = v[i + 2] >= 0 && v[i + 2] <= 255 ? fit(v[i + 2]) : -1;
			if (c == 38)
				st->fg = col;
			else
				st->bg = col;
			i += 2;
		}
	}
	if (!has_colors() || (st->fg == -2 && st->bg == -2))
		return st->base | st->attrs;
	return (st->base & ~(attr_t)A_COLOR) | st->attrs |
	    COLOR_PAIR(sgr_pair(st->fg == -2 ? -1 : st->fg, st->bg == -2 ? -1 : st->bg));
}

static int draw(WINDOW *w, const char *s, size_t len, size_t skip, int width, attr_t attr,
    int sgr);

/* Everything reaches the screen through here, sanitised: text others
 * control (names, messages, log lines) can neither act on the terminal
 * nor pass a bidi control or zero-width character off as nothing. */
int text_draw(WINDOW *w, const char *s, size_t len, size_t skip, int width, attr_t attr,
    int sgr)
{
	struct buf clean;
	int drawn;

	if (!sanitize_needed(s, len))
		return draw(w, s, len, skip, width, attr, sgr);
	buf_init(&clean);
	sanitize_append_sgr(&clean, s, len);
	drawn = draw(w, clean.data ? clean.data : "", clean.len, skip, width, attr, sgr);
	buf_free(&clean);
	return drawn;
}

static int draw(WINDOW *w, const char *s, size_t len, size_t skip, int width, attr_t attr,
    int sgr)
{
	struct sgr_state st = { attr, 0, -2, -2 };
	size_t i = 0, col = 0;
	int drawn = 0;

	wattrset(w, attr);
	while (i < len && drawn < width) {
		size_t n = sgr_len(s + i, len - i);
		wchar_t wc;
		int cw;
		if (n > 0) {
			if (sgr)
				wattrset(w, sgr_apply(&st, s + i, n));
			i += n;
			continue;
		}
		if (s[i] == '\t') {
			size_t k, stop = col + TAB - col % TAB;
			for (k = col; k < stop && drawn < width; k++)
				if (k >= skip) {
					waddch(w, ' ');
					drawn++;
				}
			col = stop;
			i++;
			continue;
		}
		i += decode((const unsigned char *)s + i, len - i, &wc);
		cw = char_cols(&wc);
		if (col >= skip) {
			if (drawn + cw > width)
				break;
			if (cw > 0 || drawn > 0)
				waddnwstr(w, &wc, 1);
			drawn += cw;
		}
		col += (size_t)cw;
	}
	wattrset(w, attr);
	return drawn;
}

void text_draw_fixed(WINDOW *w, const char *s, int width, attr_t attr)
{
	int drawn = text_draw(w, s, strlen(s), 0, width, attr, 0);

	while (drawn++ < width)
		waddch(w, ' ');
}

void text_lines_add(char ***lines, size_t *n, char *line)
{
	*lines = xreallocarray(*lines, *n + 1, sizeof(**lines));
	(*lines)[(*n)++] = line;
}

void text_lines_free(char ***lines, size_t *n)
{
	size_t i;

	for (i = 0; i < *n; i++)
		free((*lines)[i]);
	free(*lines);
	*lines = NULL;
	*n = 0;
}

void text_wrap(char ***lines, size_t *n, const char *text, const char *indent, int width)
{
	size_t ilen = strlen(indent);
	const char *p;
	struct buf clean;

	buf_init(&clean);
	sanitize_append_sgr(&clean, text, strlen(text));
	p = clean.data;

	if (width < (int)ilen + 10)
		width = (int)ilen + 10;
	while (p != NULL && *p != '\0') {
		const char *nl = strchr(p, '\n'), *q = p;
		size_t left = nl ? (size_t)(nl - p) : strlen(p);
		do {
			size_t room = (size_t)width - (q == p ? 0 : ilen);
			size_t cut = text_fit(q, left, 0, room), at = cut;
			while (cut < left && at > 0 && q[at] != ' ')
				at--;
			if (cut < left && at > 0)
				cut = at + 1;
			text_lines_add(lines, n, xasprintf("%s%.*s", q == p ? "" : indent, (int)cut, q));
			q += cut;
			left -= cut;
		} while (left > 0);
		p = nl ? nl + 1 : NULL;
	}
	buf_free(&clean);
}

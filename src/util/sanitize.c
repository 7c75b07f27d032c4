#include "util/sanitize.h"

#include "util/buf.h"

#define REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

/* Length of the escape sequence at p (p[0] == ESC), up to its end or the
 * end of input: CSI ends at a final byte 0x40-0x7e; OSC, DCS, SOS, PM and
 * APC strings end at BEL or ESC '\'; others are two bytes. */
static size_t escape_len(const unsigned char *p, size_t len)
{
	size_t i;

	if (len < 2)
		return len;
	switch (p[1]) {
	case '[':
		for (i = 2; i < len; i++)
			if (p[i] >= 0x40 && p[i] <= 0x7e)
				return i + 1;
		return len;
	case ']': case 'P': case 'X': case '^': case '_':
		for (i = 2; i < len; i++) {
			if (p[i] == 0x07)
				return i + 1;
			if (p[i] == 0x1b && i + 1 < len && p[i + 1] == '\\')
				return i + 2;
		}
		return len;
	default:
		return 2;
	}
}

/* Length of a valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, size_t len)
{
	size_t n, i;
	unsigned cp;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (len < n)
		return 0;
	cp = p[0] & (0xff >> (n + 1));
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;	/* C1 controls: CSI and friends in 8-bit form */
	return n;
}

/* The code point of a valid sequence of n bytes at p. */
static unsigned utf8_cp(const unsigned char *p, size_t n)
{
	unsigned cp = p[0] & (0xff >> (n + 1));
	size_t i;

	if (n == 1)
		return p[0];
	for (i = 1; i < n; i++)
		cp = (cp << 6) | (p[i] & 0x3f);
	return cp;
}

/* Characters that change how the text around them reads without being
 * seen: bidirectional controls (a name can display reversed), zero-width
 * and invisible characters (two names that look alike differ), the
 * Unicode line separators, the tag characters. */
static int is_hidden(unsigned cp)
{
	return cp == 0x00ad ||				/* soft hyphen */
	    cp == 0x061c ||				/* Arabic letter mark */
	    cp == 0x180e ||				/* Mongolian vowel separator */
	    (cp >= 0x200b && cp <= 0x200f) ||		/* ZWSP, ZWNJ, ZWJ, LRM, RLM */
	    (cp >= 0x2028 && cp <= 0x202e) ||		/* LS, PS, LRE, RLE, PDF, LRO, RLO */
	    (cp >= 0x2060 && cp <= 0x206f) ||		/* WJ, invisible operators, LRI..PDI */
	    cp == 0xfeff ||				/* zero-width no-break space */
	    (cp >= 0xfff9 && cp <= 0xfffb) ||		/* interlinear annotation */
	    (cp >= 0xe0000 && cp <= 0xe007f);		/* tags */
}

/* An SGR sequence (ESC [ digits and semicolons m), short enough to be a
 * colour and nothing else. */
static int is_sgr(const unsigned char *p, size_t n)
{
	size_t i;

	if (n < 3 || n > 48 || p[1] != '[' || p[n - 1] != 'm')
		return 0;
	for (i = 2; i < n - 1; i++)
		if (!(p[i] >= '0' && p[i] <= '9') && p[i] != ';')
			return 0;
	return 1;
}

enum mode { PLAIN, SGR, LINE };

static void sanitize(struct buf *out, const char *in, size_t len, enum mode mode);

void sanitize_append(struct buf *out, const char *in, size_t len)
{
	sanitize(out, in, len, PLAIN);
}

void sanitize_append_sgr(struct buf *out, const char *in, size_t len)
{
	sanitize(out, in, len, SGR);
}

void sanitize_append_line(struct buf *out, const char *in, size_t len)
{
	sanitize(out, in, len, LINE);
}

int sanitize_needed(const char *in, size_t len)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0, n;

	while (i < len) {
		if (p[i] == '\n' || p[i] == '\t' || (p[i] >= 0x20 && p[i] < 0x7f)) {
			i++;
			continue;
		}
		if (p[i] < 0x80 || (n = utf8_len(p + i, len - i)) == 0 || is_hidden(utf8_cp(p + i, n)))
			return 1;
		i += n;
	}
	return 0;
}

static void sanitize(struct buf *out, const char *in, size_t len, enum mode mode)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0;

	while (i < len) {
		unsigned char c = p[i];
		size_t n;

		if ((mode != LINE && (c == '\n' || c == '\t')) || (c >= 0x20 && c < 0x7f)) {
			buf_addc(out, (char)c);
			i++;
		} else if (c == 0x1b) {
			n = escape_len(p + i, len - i);
			if (mode == SGR && is_sgr(p + i, n))
				buf_add(out, in + i, n);
			i += n;
		} else if (c < 0x20 || c == 0x7f) {
			buf_addc(out, '^');
			buf_addc(out, c == 0x7f ? '?' : (char)(c + 0x40));
			i++;
		} else if ((n = utf8_len(p + i, len - i)) > 0) {
			unsigned cp = utf8_cp(p + i, n);
			if (is_hidden(cp))
				buf_addf(out, "<U+%04X>", cp);
			else
				buf_add(out, in + i, n);
			i += n;
		} else {
			buf_adds(out, REPLACEMENT);
			i++;
		}
	}
}

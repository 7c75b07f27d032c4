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
 * seen, so that one name can be made to look like another: Unicode's
 * format characters (general category Cf: bidirectional controls, zero
 * widths, the Arabic and Egyptian format marks, shorthand and musical
 * formatting, tags), its other default-ignorable code points (the
 * combining grapheme joiner, the Hangul and Khmer fillers, variation
 * selectors) and the line and paragraph separators. Unicode 15.1's
 * DerivedCoreProperties.txt (Default_Ignorable_Code_Point) and
 * DerivedGeneralCategory.txt (Cf). */
static int is_hidden(unsigned cp)
{
	static const unsigned ranges[][2] = {
		{ 0x00ad, 0x00ad },	/* soft hyphen */
		{ 0x034f, 0x034f },	/* combining grapheme joiner */
		{ 0x0600, 0x0605 },	/* Arabic number signs */
		{ 0x061c, 0x061c },	/* Arabic letter mark */
		{ 0x06dd, 0x06dd },	/* Arabic end of ayah */
		{ 0x070f, 0x070f },	/* Syriac abbreviation mark */
		{ 0x0890, 0x0891 },	/* Arabic pound and piastre marks above */
		{ 0x08e2, 0x08e2 },	/* Arabic disputed end of ayah */
		{ 0x115f, 0x1160 },	/* Hangul fillers */
		{ 0x17b4, 0x17b5 },	/* Khmer inherent vowels */
		{ 0x180b, 0x180f },	/* Mongolian variation selectors, vowel separator */
		{ 0x200b, 0x200f },	/* ZWSP, ZWNJ, ZWJ, LRM, RLM */
		{ 0x2028, 0x202e },	/* LS, PS, LRE, RLE, PDF, LRO, RLO */
		{ 0x2060, 0x206f },	/* WJ, invisible operators, LRI..PDI */
		{ 0x3164, 0x3164 },	/* Hangul filler */
		{ 0xfe00, 0xfe0f },	/* variation selectors */
		{ 0xfeff, 0xfeff },	/* zero-width no-break space */
		{ 0xffa0, 0xffa0 },	/* halfwidth Hangul filler */
		{ 0xfff0, 0xfffb },	/* unassigned ignorables, interlinear annotation */
		{ 0x110bd, 0x110bd },	/* Kaithi number sign */
		{ 0x110cd, 0x110cd },	/* Kaithi number sign above */
		{ 0x13430, 0x1343f },	/* Egyptian hieroglyph format controls */
		{ 0x1bca0, 0x1bca3 },	/* shorthand format controls */
		{ 0x1d173, 0x1d17a },	/* musical symbol formatting */
		{ 0xe0000, 0xe0fff },	/* tags, variation selectors supplement */
	};
	size_t i;

	if (cp < 0xad)
		return 0;
	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]) && ranges[i][0] <= cp; i++)
		if (cp <= ranges[i][1])
			return 1;
	return 0;
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

/* One code point as JSON writes it escaped: \uXXXX, a surrogate pair
 * above the Basic Multilingual Plane. */
static void json_escape_cp(struct buf *out, unsigned cp)
{
	if (cp >= 0x10000) {
		cp -= 0x10000;
		buf_addf(out, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
	} else {
		buf_addf(out, "\\u%04x", cp);
	}
}

void sanitize_append_json(struct buf *out, const char *json, size_t len)
{
	const unsigned char *p = (const unsigned char *)json;
	size_t i = 0, n;

	while (i < len) {
		if (p[i] < 0x80) {
			/* cJSON escapes the C0 controls in strings itself;
			 * outside them JSON has only white space. */
			buf_addc(out, (char)p[i]);
			i++;
		} else if (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
			json_escape_cp(out, p[i + 1]);	/* C1: U+0080..U+009F */
			i += 2;
		} else if ((n = utf8_len(p + i, len - i)) == 0) {
			json_escape_cp(out, 0xfffd);
			i++;
		} else {
			unsigned cp = utf8_cp(p + i, n);
			if (is_hidden(cp))
				json_escape_cp(out, cp);
			else
				buf_add(out, json + i, n);
			i += n;
		}
	}
}

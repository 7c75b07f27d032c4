/* Nothing from a job's log may act on the terminal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/sanitize.h"

static char *clean(const char *in, size_t len)
{
	struct buf b;
	buf_init(&b);
	sanitize_append(&b, in, len);
	return buf_detach(&b);
}

#define CLEAN(s) clean(s, sizeof(s) - 1)

Test(sanitize, escapes_are_removed_whole)
{
#define CASE(in, want) { in, sizeof(in) - 1, want }
	struct { const char *in; size_t len; const char *want; } cases[] = {
		CASE("a\x1b[2J\x1b[Hb", "ab"),			/* clear screen, home */
		CASE("x\x1b[31mred\x1b[0m", "xred"),		/* colours (stripped) */
		CASE("\x1b]0;pwned title\x07ok", "ok"),		/* OSC 0 title */
		CASE("\x1b]52;c;ZXZpbA==\x1b\\ok", "ok"),		/* OSC 52 clipboard */
		CASE("\x1bP+q544e\x1b\\ok", "ok"),			/* DCS */
		CASE("\x1b[?2004hpaste", "paste"),			/* bracketed paste on */
		CASE("\x1b[", ""),					/* cut short */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = clean(cases[i].in, cases[i].len);
		cr_expect_str_eq(got, cases[i].want, "case %zu", i);
		free(got);
	}
}

Test(sanitize, controls_become_visible_and_bad_utf8_a_replacement)
{
	char *got = CLEAN("bell\x07nul\x00" "del\x7f");
	cr_expect_str_eq(got, "bell^Gnul^@del^?");
	free(got);
	got = CLEAN("tab\tnl\n");
	cr_expect_str_eq(got, "tab\tnl\n");
	free(got);
	got = CLEAN("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80");	/* é ✓ 🚀 */
	cr_expect_str_eq(got, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x9a\x80");
	free(got);
	got = CLEAN("bad\xff\xc3(");
	cr_expect_str_eq(got, "bad\xef\xbf\xbd\xef\xbf\xbd(");
	free(got);
	got = CLEAN("c1\xc2\x9b" "2J");	/* 8-bit CSI as UTF-8 */
	cr_expect_str_eq(got, "c1\xef\xbf\xbd\xef\xbf\xbd" "2J");
	free(got);
	got = CLEAN("raw\x9b" "2J");	/* 8-bit CSI raw */
	cr_expect_str_eq(got, "raw\xef\xbf\xbd" "2J");
	free(got);
}

Test(sanitize, colour_mode_keeps_sgr_and_nothing_else)
{
	static const char in[] = "\x1b[1;31mred\x1b[0m \x1b[2J\x1b]0;t\x07\x1b[38;5;208mo\x1b[?25l\x1b[5;5H!";
	struct buf b;
	buf_init(&b);
	sanitize_append_sgr(&b, in, sizeof(in) - 1);
	cr_assert_str_eq(b.data, "\x1b[1;31mred\x1b[0m \x1b[38;5;208mo!");
	buf_free(&b);
}

Test(sanitize, bidi_and_zero_width_are_shown_never_applied)
{
#define CASE(in, want) { in, sizeof(in) - 1, want }
	struct { const char *in; size_t len; const char *want; } cases[] = {
		CASE("job\xe2\x80\xaetxt.exe", "job<U+202E>txt.exe"),	/* RLO */
		CASE("a\xe2\x80\xaa" "b\xe2\x80\xac", "a<U+202A>b<U+202C>"),	/* LRE, PDF */
		CASE("\xe2\x81\xa6x\xe2\x81\xa9", "<U+2066>x<U+2069>"),	/* LRI, PDI */
		CASE("\xe2\x80\x8f\xd8\x9c", "<U+200F><U+061C>"),		/* RLM, ALM */
		CASE("ad\xe2\x80\x8bmin", "ad<U+200B>min"),			/* ZWSP */
		CASE("\xe2\x80\x8c\xe2\x80\x8d\xe2\x81\xa0", "<U+200C><U+200D><U+2060>"),
		CASE("\xef\xbb\xbfstart", "<U+FEFF>start"),			/* BOM */
		CASE("soft\xc2\xadhyphen", "soft<U+00AD>hyphen"),
		CASE("line\xe2\x80\xa8sep", "line<U+2028>sep"),
		CASE("tag\xf3\xa0\x80\x81", "tag<U+E0001>"),			/* tag char */
		CASE("caf\xc3\xa9 \xe6\x97\xa5", "caf\xc3\xa9 \xe6\x97\xa5"),	/* visible: kept */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = clean(cases[i].in, cases[i].len);
		cr_expect_str_eq(got, cases[i].want, "case %zu", i);
		cr_expect(sanitize_needed(cases[i].in, cases[i].len) == (strcmp(got, cases[i].in) != 0),
		    "sanitize_needed agrees, case %zu", i);
		/* Sanitised text is left as it is. */
		char *again = clean(got, strlen(got));
		cr_expect_str_eq(again, got, "idempotent, case %zu", i);
		free(again);
		free(got);
	}
#undef CASE
}

/* A code point as UTF-8, for the tables below. */
static size_t utf8_of(unsigned cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Those a reviewer made two job names look alike with: Unicode's format
 * characters, fillers and variation selectors; each shown, never drawn.
 * Their visible neighbours stay as they are. */
Test(sanitize, fillers_format_characters_and_variation_selectors_are_shown)
{
	static const unsigned hidden[] = {
		0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x3164, 0xffa0, 0xfe00, 0xfe0f,
		0x180b, 0xe0100, 0xe01ef, 0x0600, 0x0605, 0x06dd, 0x070f, 0x08e2,
		0x1bca0, 0x1bca3, 0x1d173, 0x1d17a, 0x13430, 0x110bd, 0xfff0,
	};
	static const unsigned visible[] = {
		0x034e, 0x0606, 0x1161, 0x17b6, 0x3165, 0xfe10, 0xffa1, 0x1bca4,
		0x1d17b, 0x00e9, 0x4e2d, 0x1f600,
	};
	char in[32], want[32];
	size_t i, n;

	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
		n = utf8_of(hidden[i], in + 4);
		memcpy(in, "name", 4);
		in[4 + n] = '\0';
		snprintf(want, sizeof(want), "name<U+%04X>", hidden[i]);
		char *got = clean(in, 4 + n);
		cr_expect_str_eq(got, want, "U+%04X", hidden[i]);
		cr_expect(sanitize_needed(in, 4 + n), "U+%04X needs the sanitiser", hidden[i]);
		free(got);
	}
	for (i = 0; i < sizeof(visible) / sizeof(visible[0]); i++) {
		n = utf8_of(visible[i], in);
		in[n] = '\0';
		char *got = clean(in, n);
		cr_expect_str_eq(got, in, "U+%04X kept", visible[i]);
		cr_expect(!sanitize_needed(in, n), "U+%04X needs nothing", visible[i]);
		free(got);
	}
}

static char *json_clean(const char *in, size_t len)
{
	struct buf b;
	buf_init(&b);
	sanitize_append_json(&b, in, len);
	return buf_detach(&b);
}

/* --json's text through the sanitiser: a C1 CSI, an OSC 52 clipboard
 * write in 8-bit form, a bidi override, invalid UTF-8 and a variation
 * selector above the BMP become escapes a JSON reader decodes to the
 * same code points; visible text and the JSON around it stay. */
Test(sanitize, json_text_keeps_its_meaning_and_loses_its_controls)
{
#define CASE(in, want) { in, sizeof(in) - 1, want }
	struct { const char *in; size_t len; const char *want; } cases[] = {
		CASE("{\"m\": \"a\xc2\x9b" "2Jb\"}", "{\"m\": \"a\\u009b2Jb\"}"),
		CASE("\"\xc2\x9d" "52;c;ZXZpbA==\xc2\x9c\"", "\"\\u009d52;c;ZXZpbA==\\u009c\""),
		CASE("\"job\xe2\x80\xaetxt.exe\"", "\"job\\u202etxt.exe\""),
		CASE("\"bad\xff\xc3\"", "\"bad\\ufffd\\ufffd\""),
		CASE("\"vs\xf3\xa0\x84\x80\"", "\"vs\\udb40\\udd00\""),
		CASE("\"caf\xc3\xa9 \\n\"", "\"caf\xc3\xa9 \\n\""),
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_clean(cases[i].in, cases[i].len);
		cr_expect_str_eq(got, cases[i].want, "case %zu", i);
		for (const char *c = got; *c; c++)
			cr_expect((unsigned char)*c != 0xc2 || ((unsigned char)c[1] & 0xe0) != 0x80,
			    "no C1 left, case %zu", i);
		free(got);
	}
#undef CASE
}

Test(sanitize, one_line_mode_shows_newlines_and_tabs)
{
	struct buf b;
	buf_init(&b);
	static const char in[] = "name\nforged\trow\x1b]0;t\x07";
	sanitize_append_line(&b, in, sizeof(in) - 1);
	cr_expect_str_eq(b.data, "name^Jforged^Irow");
	buf_free(&b);
}

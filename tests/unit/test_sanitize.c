/* Nothing from a job's log may act on the terminal. */
#include <criterion/criterion.h>
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

Test(sanitize, one_line_mode_shows_newlines_and_tabs)
{
	struct buf b;
	buf_init(&b);
	static const char in[] = "name\nforged\trow\x1b]0;t\x07";
	sanitize_append_line(&b, in, sizeof(in) - 1);
	cr_expect_str_eq(b.data, "name^Jforged^Irow");
	buf_free(&b);
}

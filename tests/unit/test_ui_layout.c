/* Layout as strings, log panes as data, the keymap's help, themes. */
#include <criterion/criterion.h>
#include <locale.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/logs/logring.h"
#include "engine/store/record.h"
#include "engine/track/tracker.h"
#include "engine/watch/watch.h"
#include "ui/detail.h"
#include "ui/keymap.h"
#include "ui/layout.h"
#include "ui/logpane.h"
#include "ui/text.h"
#include "ui/theme.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char *describe(int cols, int lines, int side, enum pane_max max)
{
	static char buf[256];
	struct layout l;

	layout_compute(cols, lines, side, max, &l);
	layout_describe(&l, buf, sizeof(buf));
	return buf;
}

Test(layout, golden_sizes)
{
	cr_assert_str_eq(describe(120, 40, 0, MAX_NONE),
	    "jobs 0,0 120x15 | out 15,0 120x12 | err 27,0 120x11 | status 38 | message 39");
	cr_assert_str_eq(describe(160, 50, 1, MAX_NONE),
	    "jobs 0,0 160x19 | out 19,0 80x29 | err 19,80 80x29 | status 48 | message 49");
	cr_assert_str_eq(describe(60, 15, 0, MAX_NONE),
	    "jobs 0,0 60x5 | out 5,0 60x4 | err 9,0 60x4 | status 13 | message 14");
	cr_assert_str_eq(describe(120, 40, 0, MAX_ERR),
	    "jobs 0,0 120x15 | out 0,0 0x0 | err 15,0 120x23 | status 38 | message 39");
	cr_assert_str_eq(describe(59, 40, 0, MAX_NONE), "too small");
	cr_assert_str_eq(describe(120, 14, 0, MAX_NONE), "too small");
}

Test(layout, every_size_fills_the_screen_without_overlap)
{
	for (int c = 60; c <= 300; c += 7) {
		for (int l = 15; l <= 120; l += 5) {
			struct layout y;
			layout_compute(c, l, (c + l) % 2, MAX_NONE, &y);
			cr_assert_eq(y.jobs.h + y.out.h + (y.out.x == y.err.x ? y.err.h : 0) + 2, l,
			    "%dx%d", c, l);
			cr_assert_geq(y.out.h, 3, "%dx%d: a pane shows its title and two lines", c, l);
			cr_assert_geq(y.err.h, 3);
			cr_assert_leq(y.err.x + y.err.w, c);
		}
	}
}

static struct log_ring ring_of(const char *text)
{
	struct log_ring r;

	log_ring_init(&r, 100);
	log_ring_push_lines(&r, text, strlen(text));
	return r;
}

static size_t lay(struct log_ring *r, struct logpane *p, size_t w, size_t h, char *out, size_t len)
{
	struct pane_row rows[64];
	size_t n = logpane_layout(r, p, w, h, 0, rows);

	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strncat(out, rows[i].text, len - strlen(out) - 2);
		strncat(out, "|", len - strlen(out) - 1);
	}
	logpane_rows_free(rows, n);
	return n;
}

Test(logpane, follows_the_end_scrolls_and_resumes)
{
	struct log_ring r = ring_of("one\ntwo\nthree\nfour\nfive\n");
	struct logpane p;
	char o[512];

	text_init(1);
	logpane_init(&p);
	lay(&r, &p, 20, 3, o, sizeof(o));
	cr_assert_str_eq(o, "three|four|five|");
	logpane_scroll(&p, &r, -1);
	cr_assert_not(p.follow, "a scroll stops following");
	lay(&r, &p, 20, 3, o, sizeof(o));
	cr_assert_str_eq(o, "two|three|four|");
	log_ring_push_lines(&r, "six\n", 4);
	lay(&r, &p, 20, 3, o, sizeof(o));
	cr_assert_str_eq(o, "two|three|four|", "paused: new lines do not move the view");
	logpane_follow(&p);
	lay(&r, &p, 20, 3, o, sizeof(o));
	cr_assert_str_eq(o, "four|five|six|");
	logpane_top(&p, &r);
	lay(&r, &p, 20, 2, o, sizeof(o));
	cr_assert_str_eq(o, "one|two|");
	log_ring_free(&r);
}

Test(logpane, wraps_by_columns_and_searches)
{
	struct log_ring r = ring_of("abcdefghij\nshort\nx\xe4\xb8\xad\xe6\x96\x87y\nlast\n");
	struct logpane p;
	char o[512];

	setlocale(LC_ALL, "C.UTF-8");
	text_init(1);
	logpane_init(&p);
	p.wrap = 1;
	lay(&r, &p, 4, 8, o, sizeof(o));
	/* Two wide characters take two columns each. */
	cr_assert_str_eq(o, "abcd|efgh|ij|shor|t|x\xe4\xb8\xad|\xe6\x96\x87y|last|");
	snprintf(p.search, sizeof(p.search), "SHORT");
	logpane_top(&p, &r);
	cr_assert_eq(logpane_find(&p, &r, 1), 0);
	cr_assert_eq(p.top, 1);
	cr_assert_eq(logpane_find(&p, &r, 1), LOGPANE_WRAPPED, "no second match: from the top "
	    "again, the same one");
	cr_assert_eq(p.top, 1);
	snprintf(p.search, sizeof(p.search), "nowhere");
	cr_assert_eq(logpane_find(&p, &r, 1), -1);
	log_ring_free(&r);
}

/* A pane that follows shows the end: a search finds the nearest line
 * above (the newest match), not "nothing below"; n then goes down from
 * there and wraps to the top, saying so. */
Test(logpane, a_search_in_a_following_pane_finds_the_nearest_match_above)
{
	struct log_ring r = ring_of("Epoch 7/10\nloss 1\nEpoch 8/10\nloss 2\nEpoch 9/10\nloss 3\n");
	struct logpane p;
	char o[512];

	logpane_init(&p);
	cr_assert(p.follow);
	lay(&r, &p, 20, 2, o, sizeof(o));
	cr_assert_str_eq(o, "Epoch 9/10|loss 3|");
	snprintf(p.search, sizeof(p.search), "epoch 8/");
	cr_assert_eq(logpane_find(&p, &r, 1), LOGPANE_FOUND);
	cr_assert_eq(p.top, 2);
	cr_assert_not(p.follow);
	snprintf(p.search, sizeof(p.search), "Epoch");
	cr_assert_eq(logpane_find(&p, &r, 1), LOGPANE_FOUND);
	cr_assert_eq(p.top, 4, "Epoch 9 below Epoch 8");
	cr_assert_eq(logpane_find(&p, &r, 1), LOGPANE_WRAPPED);
	cr_assert_eq(p.top, 0, "from the top again: Epoch 7");
	cr_assert_eq(logpane_find(&p, &r, -1), LOGPANE_WRAPPED);
	cr_assert_eq(p.top, 4, "and above the first, from the end");
	log_ring_free(&r);
}

Test(logpane, a_huge_line_is_cut_and_says_so)
{
	size_t big = 10u << 20;
	char *line = malloc(big + 2);
	struct log_ring r;
	struct logpane p;
	struct pane_row rows[4];
	size_t n;

	memset(line, 'x', big);
	line[big] = '\n';
	log_ring_init(&r, 4);
	log_ring_push_lines(&r, line, big + 1);
	free(line);
	logpane_init(&p);
	n = logpane_layout(&r, &p, 80, 3, 0, rows);
	cr_assert_eq(n, 1);
	cr_assert_lt(rows[0].len, (size_t)LOGPANE_LINE_MAX + 64);
	cr_assert_not_null(strstr(rows[0].text, "[... 10469376 more bytes]"));
	logpane_rows_free(rows, n);
	log_ring_free(&r);
}

Test(keymap, help_comes_from_the_table)
{
	char **lines;
	size_t n = keymap_help(&lines), i;
	int quit = 0, cancel = 0, pgdn = 0, enter = 0;

	for (i = 0; i < n; i++) {
		quit += strstr(lines[i], "q ") && strstr(lines[i], "quit") != NULL;
		cancel += strstr(lines[i], "cancel the marked jobs") != NULL;
		pgdn += strstr(lines[i], "PgDn ^F") != NULL;
		enter += strncmp(lines[i], "  Enter          ", 17) == 0;
		free(lines[i]);
	}
	free(lines);
	cr_assert_eq(quit, 1);
	cr_assert_eq(cancel, 1);
	cr_assert_eq(pgdn, 1, "a binding's other keys are listed with it");
	cr_assert_eq(enter, 1, "two codes of one key (Enter) are named once");
	cr_assert_eq(keymap_lookup(KC_JOBS, 'c'), ACT_CANCEL);
	cr_assert_eq(keymap_lookup(KC_PANE, 'c'), ACT_NONE, "cancel is the jobs list's");
	cr_assert_eq(keymap_lookup(KC_PANE, 'j'), ACT_DOWN, "anywhere keys work in panes");
	cr_assert_eq(keymap_lookup(KC_PANE, 'n'), ACT_NEXT_MATCH);
}

Test(theme, every_shipped_theme_parses)
{
	const char *names[] = { "default", "light", "high-contrast", "monochrome", "ocean256" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct theme t;
		char *err = NULL;
		cr_assert_eq(theme_load(names[i], &t, &err), 0, "%s: %s", names[i], err);
		cr_assert_str_eq(t.name, names[i]);
		theme_free(&t);
	}
}

Test(theme, errors_name_the_file_line_and_column)
{
	struct theme t;
	char *err = NULL;

	cr_assert_neq(theme_parse("my.yaml", "name: x\nroles:\n  job.runing: { fg: green }\n", &t,
	    &err), 0);
	cr_assert_not_null(strstr(err, "my.yaml:3:3: unknown role 'job.runing'"), "%s", err);
	free(err);
	err = NULL;
	cr_assert_neq(theme_parse("my.yaml", "roles:\n  header: { fg: purple }\n", &t, &err), 0);
	cr_assert_not_null(strstr(err, "my.yaml:2:17: unknown colour 'purple'"), "%s", err);
	free(err);
	err = NULL;
	cr_assert_neq(theme_parse("my.yaml", "roles:\n  header: { attrs: [blinky] }\n", &t, &err), 0);
	cr_assert_not_null(strstr(err, "my.yaml:2:21: unknown attribute 'blinky'"), "%s", err);
	free(err);
	err = NULL;
	cr_assert_neq(theme_parse("my.yaml", "roles: [\n", &t, &err), 0);
	cr_assert_not_null(strstr(err, "my.yaml:"), "%s", err);
	free(err);
}

Test(theme, a_theme_names_only_what_it_changes)
{
	struct theme t, def;
	char *err = NULL;

	theme_builtin(&def);
	cr_assert_eq(theme_parse("t.yaml", "roles:\n  job.running: { fg: 208, attrs: [underline] }\n",
	    &t, &err), 0, "%s", err);
	cr_assert_eq(t.role[ROLE_JOB_RUNNING].fg, 208);
	cr_assert_eq(t.role[ROLE_JOB_RUNNING].attrs, THEME_UNDERLINE);
	cr_assert_eq(memcmp(&t.role[ROLE_JOB_ERROR], &def.role[ROLE_JOB_ERROR], sizeof(struct role_style)), 0);
	theme_free(&t);
	theme_free(&def);
}

Test(theme, colours_come_down_to_what_the_terminal_has)
{
	cr_assert_eq(theme_fit_color(208, 256), 208);
	cr_assert_eq(theme_fit_color(196, 8), 1, "bright red cube entry -> red");
	cr_assert_eq(theme_fit_color(46, 8), 2, "green");
	cr_assert_eq(theme_fit_color(21, 8), 4, "blue");
	cr_assert_eq(theme_fit_color(12, 8), 4, "bright blue -> blue");
	cr_assert_eq(theme_fit_color(255, 8), 7, "light grey -> white");
	cr_assert_eq(theme_fit_color(-1, 8), -1);
}

Test(keymap, the_man_page_lists_every_key_the_help_does)
{
	const char *share = getenv("TAOTOP_SHARE");
	char path[4096], *man, *err = NULL, **lines;
	size_t n, i;

	snprintf(path, sizeof(path), "%s/man/taotop.1", share ? share : ".");
	man = file_read_all(path, NULL, &err);
	cr_assert_not_null(man, "%s", err);
	n = keymap_help(&lines);
	for (i = 0; i < n; i++) {
		/* "  KEYS           what it does" */
		if (strlen(lines[i]) > 17 && lines[i][0] == ' ')
			cr_expect_not_null(strstr(man, lines[i] + 17), "taotop.1 does not say: %s",
			    lines[i] + 17);
		free(lines[i]);
	}
	free(lines);
	free(man);
}

Test(detail, the_sparkline_scales_between_the_lowest_and_highest)
{
	double v[] = { 0.9, 0.7, 0.5, 0.3, 0.1 };
	char *s = detail_sparkline(v, 5, 60, 0);
	cr_assert_str_eq(s, "#+=:_");
	free(s);
	s = detail_sparkline(v, 5, 2, 1);	/* the last two, in blocks */
	cr_assert_str_eq(s, "\xe2\x96\x88\xe2\x96\x81");
	free(s);
}

/* The view's lines as one text (frees them). */
static char *joined(char **lines, size_t n)
{
	size_t i, len = 0;
	char *all;

	for (i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	all = calloc(1, len + 1);
	for (i = 0; i < n; i++) {
		strcat(all, lines[i]);
		strcat(all, "\n");
		free(lines[i]);
	}
	free(lines);
	return all;
}

Test(logpane, a_slow_read_keeps_the_lines_and_says_how_old_they_are)
{
	struct logpane p;
	char t[256];
	struct pane_fresh fresh = { .now_ms = 100000, .read_ms = 99000, .reading_ms = 99800 };

	logpane_init(&p);
	/* A read in flight for less than LOGPANE_SLOW_MS: the title as always. */
	logpane_title(t, sizeof(t), &p, "main.out", "tao-1", 0, &fresh);
	cr_assert_str_eq(t, " main.out  tao-1  following ");
	/* Past it: the lines' age and a spinner that turns. */
	fresh.now_ms = 140000;
	fresh.reading_ms = 139500;
	logpane_title(t, sizeof(t), &p, "main.out", "tao-1", 0, &fresh);
	cr_assert_str_eq(t, " main.out  tao-1  41 s old -  following ");
	fresh.now_ms += 250;
	logpane_title(t, sizeof(t), &p, "main.out", "tao-1", 0, &fresh);
	cr_assert_str_eq(t, " main.out  tao-1  41 s old \\  following ");
	/* The last read failed, none in flight: the age alone. */
	fresh.reading_ms = 0;
	fresh.failed = 1;
	fresh.now_ms = 99000 + 300000;
	p.follow = 0;
	logpane_title(t, sizeof(t), &p, "main.err", "77", 1, &fresh);
	cr_assert_str_eq(t, " main.err  77  5 min old  paused (G follows)  (older lines dropped) ");
	/* Nothing read yet: loading, then a spinner with the seconds waited. */
	logpane_loading(t, sizeof(t), 1000, 900);
	cr_assert_str_eq(t, "loading...");
	logpane_loading(t, sizeof(t), 13350, 1000);
	cr_assert_str_eq(t, "loading / 12 s");
	cr_assert_str_eq(logpane_spinner(0), "|");
	cr_assert_str_eq(logpane_spinner(1000), "|", "four frames a second");
}

Test(detail, a_slow_fetch_shows_a_spinner_and_the_seconds)
{
	struct job_record *r = record_new("tao-20261129-bbbbbb");
	struct job_row row;
	char **lines, *all;
	size_t n;

	memset(&row, 0, sizeof(row));
	snprintf(row.slurm_id, sizeof(row.slurm_id), "77");
	row.state = TAO_RUNNING;
	n = detail_lines(r, &row, "rig", NULL, NULL, 0, 100, 0, &lines);
	all = joined(lines, n);
	cr_expect_not_null(strstr(all, "(reading the staged sbatch and spec from the cluster...)"),
	    "%s", all);
	free(all);
	n = detail_lines(r, &row, "rig", NULL, NULL, 0, 3300, 0, &lines);
	all = joined(lines, n);
	cr_expect_not_null(strstr(all, "(reading the staged sbatch and spec from the cluster / 3 s)"),
	    "%s", all);
	free(all);
	n = detail_lines(r, &row, "rig", NULL, NULL, 0, -1, 0, &lines);
	all = joined(lines, n);
	cr_expect_null(strstr(all, "reading the staged"), "%s", all);
	free(all);
	record_free(r);
}

Test(detail, a_records_view_has_its_history_chain_verdict_and_files)
{
	struct job_record *r = record_new("tao-20261129-aaaaaa");
	struct job_row row;
	struct watch_file f = { (char *)"/x/job.sbatch", (char *)"#!/bin/bash\n\n\x1b]0;t\x07" "echo hi\n", NULL };
	char **lines, **paths, *all;
	size_t n;

	memset(&row, 0, sizeof(row));
	snprintf(row.slurm_id, sizeof(row.slurm_id), "77");
	row.state = TAO_ERROR;
	row.epoch = 3, row.max_epoch = 10;
	double series[] = { 1, 2, 3 };
	row.series = series, row.nseries = 3;
	snprintf(row.metric, sizeof(row.metric), "loss");
	record_set(&r->log_dir, "/lustre/root/tao-20261129-first/slurm-logs");
	record_set(&r->retry_of, "tao-20261129-first");
	record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler", 1000);
	record_transition(r, TAO_ERROR, "FAILED", "FAILED, exit code 1:0", "scheduler", 2000);
	record_event(r, "failure: the infrastructure's (nccl-timeout): NCCL watchdog", "taotop", 2001);
	n = detail_paths(r, &paths);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(paths[0], "/lustre/root/tao-20261129-first/sbatch/job_tao-20261129-first.sbatch",
	    "a retry shows the sbatch its chain's first job staged");
	cr_assert_str_eq(paths[1], "/lustre/root/tao-20261129-first/specs/spec.yaml");
	free(paths[0]), free(paths[1]), free(paths);
	n = detail_lines(r, &row, "rig", NULL, &f, 1, -1, 0, &lines);
	all = joined(lines, n);
	cr_expect_not_null(strstr(all, "retry chain: tao-20261129-first -> tao-20261129-aaaaaa"), "%s", all);
	cr_expect_not_null(strstr(all, "failure: the infrastructure's (nccl-timeout)"), "%s", all);
	cr_expect_not_null(strstr(all, "Running -> Error (FAILED)  FAILED, exit code 1:0"), "%s", all);
	cr_expect_not_null(strstr(all, "progress: epoch 3 of 10"), "%s", all);
	cr_expect_not_null(strstr(all, "loss per epoch: "), "%s", all);
	cr_expect_not_null(strstr(all, "    echo hi"), "%s", all);
	cr_expect_null(strstr(all, "\x1b"), "a fetched file is sanitised");
	cr_expect_not_null(strstr(all, "    #!/bin/bash\n    \n"), "blank lines kept: %s", all);
	free(all);
	record_free(r);
}

Test(keymap, a_rebound_key_works_shows_in_help_and_conflicts_are_refused)
{
	char *err = NULL, **lines;
	size_t n, i;
	int shown = 0;

	cr_assert_eq(keymap_bind("cancel", "x", &err), 0, "%s", err);
	cr_expect_eq(keymap_lookup(KC_JOBS, 'x'), ACT_CANCEL);
	cr_expect_eq(keymap_lookup(KC_JOBS, 'c'), ACT_NONE, "the old key is gone");
	n = keymap_help(&lines);
	for (i = 0; i < n; i++) {
		shown += strncmp(lines[i], "  x ", 4) == 0 && strstr(lines[i], "cancel the marked") != NULL;
		free(lines[i]);
	}
	free(lines);
	cr_expect_eq(shown, 1, "the help shows the new key");
	cr_assert_eq(keymap_bind("down", "^N", &err), 0, "%s", err);
	cr_expect_eq(keymap_lookup(KC_PANE, 0x0e), ACT_DOWN);

	cr_expect_neq(keymap_bind("retry", "q", &err), 0);
	cr_expect_not_null(strstr(err, "'q' is already quit's key"), "%s", err);
	free(err);
	err = NULL;
	cr_expect_neq(keymap_bind("launch", "L", &err), 0);
	cr_expect_not_null(strstr(err, "unknown action 'launch'"), "%s", err);
	free(err);
	err = NULL;
	cr_expect_neq(keymap_bind("retry", "F13", &err), 0);
	cr_expect_not_null(strstr(err, "unknown key 'F13'"), "%s", err);
	free(err);
	err = NULL;
	/* next_match lives in panes and sort in the jobs list: no conflict. */
	cr_expect_eq(keymap_bind("next_match", "o", &err), 0, "%s", err);
}

Test(text, wrap_keeps_words_whole_and_indents_continuations)
{
	char **lines = NULL;
	size_t n = 0, i;

	text_init(1);
	text_wrap(&lines, &n, "one two three four\nfive", "  ", 12);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(lines[0], "one two ");
	cr_expect_str_eq(lines[1], "  three four");
	cr_expect_str_eq(lines[2], "five");
	for (i = 0; i < n; i++)
		cr_expect_leq(text_width(lines[i], strlen(lines[i])), 12, "%s", lines[i]);
	/* A word longer than the width is cut, not lost. */
	text_wrap(&lines, &n, "abcdefghijklmnopqrstuvwxyz", "", 10);
	cr_expect_eq(n, 6);
	cr_expect_str_eq(lines[3], "abcdefghij");
	cr_expect_str_eq(lines[5], "uvwxyz");
	for (i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}

/* The jobs list's widths as data: title, longest cell, cap, rank, always. */
Test(layout, columns_follow_their_content)
{
	enum { NAME, STATE, TIME, PROGRESS, REASON, N };
	struct layout_col c[N] = {
		[NAME] = { 4, 24, 0, 0, 1 },	/* "classification_pyt train" */
		[STATE] = { 5, 8, 8, 1, 1 },
		[TIME] = { 10, 21, 24, 3, 1 },	/* "00:02:00/1-00:00:00" and more */
		[PROGRESS] = { 8, 0, 18, 8, 0 },	/* nothing to show */
		[REASON] = { 6, 0, 0, 4, 0 },	/* nothing to show */
	};
	int w[N], order[N], n;

	n = layout_columns(c, N, 100, NULL, 0, w, order);
	cr_expect_eq(n, 3, "the empty columns are not shown");
	cr_expect_eq(w[PROGRESS], 0);
	cr_expect_eq(w[REASON], 0);
	cr_expect_eq(w[NAME], 24, "the name whole: the empty columns gave it their room");
	cr_expect_eq(w[TIME], 21 + (100 - (24 + 1) - (8 + 1) - (21 + 1)), "the rest to the last column");
	cr_expect_eq(order[0], NAME);
	cr_expect_eq(order[n - 1], TIME);

	/* The time column fits its longest value: a day's limit is not cut. */
	c[TIME].want = 21;
	c[REASON].want = 40;
	n = layout_columns(c, N, 70, NULL, 0, w, order);
	cr_expect_eq(w[TIME], 21);
	cr_expect_eq(w[STATE], 8);
	cr_expect(w[NAME] >= 12 && w[NAME] <= 24, "NAME %d", w[NAME]);
	cr_expect_leq(w[NAME] + w[STATE] + w[TIME] + w[REASON] + n, 70, "within the width");
	cr_expect_eq(w[NAME] + w[STATE] + w[TIME] + w[REASON] + n, 70, "and all of it");

	/* Narrow: columns by rank, the first kept. */
	n = layout_columns(c, N, 30, NULL, 0, w, order);
	cr_expect_gt(w[NAME], 0);
	cr_expect_gt(w[STATE], 0);
	cr_expect_eq(w[TIME], 0, "no room left for it");

	/* The user's columns: in their order, shown even when empty. */
	{
		int pick[] = { PROGRESS, STATE };
		n = layout_columns(c, N, 100, pick, 2, w, order);
		cr_expect_eq(n, 2);
		cr_expect_eq(order[0], PROGRESS);
		cr_expect_eq(w[PROGRESS], 8 + 0, "its title at least");
		cr_expect_eq(w[NAME], 0);
	}
}

Test(detail, a_running_jobs_gpu_use_has_a_bar_per_gpu_and_the_rounds_sparkline)
{
	struct job_row row;
	struct job_use u;
	char **lines, *all;
	size_t n;
	unsigned char hist[] = { 0, 50, 100 };

	memset(&row, 0, sizeof(row));
	snprintf(row.slurm_id, sizeof(row.slurm_id), "77");
	row.state = TAO_RUNNING;
	row.epoch = row.max_epoch = -1;
	memset(&u, 0, sizeof(u));
	u.ok = 1;
	u.ngpu = 2;
	u.gpu[0] = (struct gpu_reading){ "node01", 0, 100, 40960, 81920 };
	u.gpu[1] = (struct gpu_reading){ "node\x1b]0;x\x07" "02", 1, 0, 0, 81920 };
	memcpy(u.hist, hist, sizeof(hist));
	u.nhist = 3;
	u.idle = 1;
	u.load = 1.5;
	u.rss_kib = 1048576;
	n = detail_lines(NULL, &row, "rig", &u, NULL, 0, -1, 0, &lines);
	all = joined(lines, n);
	cr_expect_not_null(strstr(all, "GPU use: 50 % mean over 2 GPUs, memory 40.0/80.0G"), "%s", all);
	cr_expect_not_null(strstr(all, "IDLE"), "%s", all);
	cr_expect_not_null(strstr(all, "[####################] 100 %  40.0/80.0 GiB"), "%s", all);
	cr_expect_not_null(strstr(all, "[....................]   0 %"), "%s", all);
	/* On the fixed 0..100 scale, ASCII without UTF-8. */
	cr_expect_not_null(strstr(all, "GPU % per round: _=#  (last 100 %)"), "%s", all);
	cr_expect_not_null(strstr(all, "CPU: load 1.50, 1.0 GiB resident"), "%s", all);
	cr_expect_null(strchr(all, '\x1b'), "a node's name reached the view raw: %s", all);
	free(all);
}

/* A retry's view names the nodes its sbatch excluded, each with the line
 * that tied its chain's failure to it. */
Test(detail, a_retrys_view_names_its_excluded_nodes_and_why)
{
	struct job_record *r = record_new("tao-20261129-cccccc");
	struct job_row row;
	char **lines, *all;
	size_t n;

	memset(&row, 0, sizeof(row));
	snprintf(row.slurm_id, sizeof(row.slurm_id), "78");
	row.state = TAO_RUNNING;
	record_set(&r->retry_of, "tao-20261129-aaaaaa");
	record_exclude(r, "node02", "main.err: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
	    "tao-20261129-aaaaaa");
	n = detail_lines(r, &row, "rig", NULL, NULL, 0, -1, 0, &lines);
	all = joined(lines, n);
	cr_expect_not_null(strstr(all, "excluded node node02: tao-20261129-aaaaaa failed there: main.err: "
	    "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."), "%s", all);
	free(all);
	record_free(r);
}

/* Whether s matches the extended regular expression re. */
static int like(const char *s, const char *re)
{
	regex_t rx;
	int ok;

	cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
	ok = regexec(&rx, s, 0, NULL, 0) == 0;
	regfree(&rx);
	return ok;
}

/* A Cosmos-RL job's detail: its status file, and each role's state (from
 * the exit code it left beside its log, fetched with the staged files)
 * and log; the exit-code files are not shown as files. */
Test(detail, a_cosmos_rl_jobs_view_shows_each_roles_state_and_log)
{
	struct job_record *r = record_new("tao-20261205-cccccc");
	struct job_row row;
	const char *dir = "/lustre/root/tao-20261205-cccccc/slurm-logs/tao-20261205-cccccc-42";
	char **lines, **paths, *all, *want;
	size_t n, i;

	memset(&row, 0, sizeof(row));
	snprintf(row.slurm_id, sizeof(row.slurm_id), "42");
	row.state = TAO_ERROR;
	record_set(&r->log_dir, "/lustre/root/tao-20261205-cccccc/slurm-logs");
	record_set(&r->backend_ref, "42");
	record_set(&r->results_dir, "/lustre/root/tao-20261205-cccccc/results");
	record_set(&r->tao_results_dir, "/lustre/root/tao-20261205-cccccc/results/tao-20261205-cccccc");
	record_set(&r->cosmos, "rl");
	record_set(&r->roles, "controller policy-0 policy-1");
	record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler", 1000);
	record_transition(r, TAO_ERROR, "FAILED", "FAILED, exit code 7:0", "scheduler", 2000);
	n = detail_paths(r, &paths);
	cr_assert_eq(n, 5, "the sbatch, the spec and the three roles' exit codes");
	want = xasprintf("%s/policy-1.rc", dir);
	cr_expect_str_eq(paths[4], want);
	free(want);
	struct watch_file f[3] = {
		{ paths[2], (char *)"0\n", NULL },
		{ paths[3], NULL, (char *)"no such file" },
		{ paths[4], (char *)"7\n", NULL },
	};
	n = detail_lines(r, &row, "rig", NULL, f, 3, -1, 0, &lines);
	all = joined(lines, n);
	cr_expect_not_null(strstr(all, "cosmos: Cosmos-RL (a controller and replicas); its status: "
	    "tao-20261205-cccccc/status.json in the results folder"), "%s", all);
	cr_expect(like(all, "role controller +done +controller.out\n"), "%s", all);
	cr_expect(like(all, "role policy-0 +stopped +policy-0.out\n"), "%s", all);
	cr_expect(like(all, "role policy-1 +failed, exit code 7 +policy-1.out\n"),
	    "%s", all);
	cr_expect_null(strstr(all, "--- /lustre/root/tao-20261205-cccccc/slurm-logs"),
	    "an exit-code file shown as a file: %s", all);
	free(all);
	for (i = 0; i < 5; i++)
		free(paths[i]);
	free(paths);
	record_free(r);
}

/* Durations in one format whatever SLURM printed, and the --since spans. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "engine/slurm/duration.h"

static long secs_of(const char *s)
{
	long v = -2;
	cr_assert_eq(duration_parse(s, &v), 0, "'%s' parses", s);
	return v;
}

Test(duration, squeue_and_sacct_spellings_are_the_same_time)
{
	cr_expect_eq(secs_of("0:02"), 2, "squeue's %%M for two seconds");
	cr_expect_eq(secs_of("2:00"), 120);
	cr_expect_eq(secs_of("00:02:00"), 120, "sacct's Elapsed");
	cr_expect_eq(secs_of("1:00:00"), 3600, "squeue's %%l");
	cr_expect_eq(secs_of("01:00:00"), 3600, "sacct's Timelimit");
	cr_expect_eq(secs_of("1-00:00:00"), 86400);
	cr_expect_eq(secs_of("2-03:04:05"), 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
	cr_expect_eq(secs_of("60"), 3600, "sbatch's bare minutes");
	cr_expect_eq(secs_of("1-12"), 86400 + 12 * 3600, "sbatch's D-HH");
	cr_expect_eq(secs_of("1-12:30"), 86400 + 12 * 3600 + 30 * 60, "sbatch's D-HH:MM");
}

Test(duration, words_and_garbage_are_no_duration)
{
	const char *bad[] = { "", "UNLIMITED", "Partition_Limit", "INVALID", "NOT_SET", "1:2:3:4",
		"-1", "1-", "1--2", ":30", "12:", "1:x0", "00:00:00.5", "9999999999:00",
		"1-2-3" };
	long v;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(duration_parse(bad[i], &v), -1, "'%s' is no duration", bad[i]);
	cr_expect_eq(duration_parse(NULL, &v), -1);
}

Test(duration, one_format_out)
{
	char b[32];
	duration_format(0, b, sizeof(b));
	cr_expect_str_eq(b, "00:00:00");
	duration_format(120, b, sizeof(b));
	cr_expect_str_eq(b, "00:02:00");
	duration_format(4 * 3600, b, sizeof(b));
	cr_expect_str_eq(b, "04:00:00");
	duration_format(86400, b, sizeof(b));
	cr_expect_str_eq(b, "1-00:00:00", "a day is never cut to hours");
	duration_format(12 * 86400 + 59, b, sizeof(b));
	cr_expect_str_eq(b, "12-00:00:59");
	duration_format(-1, b, sizeof(b));
	cr_expect_str_eq(b, "");
}

Test(duration, normalise_keeps_words_as_printed)
{
	char b[24];
	long s;
	duration_normalise("2:00", b, sizeof(b), &s);
	cr_expect_str_eq(b, "00:02:00");
	cr_expect_eq(s, 120);
	duration_normalise("UNLIMITED", b, sizeof(b), &s);
	cr_expect_str_eq(b, "UNLIMITED");
	cr_expect_eq(s, -1);
}

Test(duration, since_spans)
{
	struct { const char *in; long want; } ok[] = {
		{ "7d", 7 * 86400 }, { "1d", 86400 }, { "12h", 12 * 3600 }, { "90m", 5400 },
		{ "30s", 30 }, { "2w", 14 * 86400 }, { "366d", 366L * 86400 },
	};
	const char *bad[] = { "", "7", "d", "7x", "7dd", "-1d", "0d", "367d", "1.5h", " 7d", "7d ",
		"53w", "99999999999d" };
	long v;
	char *err = NULL;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_expect_eq(duration_since_parse(ok[i].in, &v, &err), 0, "'%s'", ok[i].in);
		cr_expect_eq(v, ok[i].want, "'%s' is %ld s", ok[i].in, ok[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(duration_since_parse(bad[i], &v, &err), -1, "'%s' refused", bad[i]);
		cr_expect(err != NULL && strstr(err, bad[i]) != NULL, "the message names '%s': %s",
		    bad[i], err ? err : "(none)");
		free(err);
		err = NULL;
	}
}

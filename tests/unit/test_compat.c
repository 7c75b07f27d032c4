/* util/compat: the same answers from glibc's calls (the plain build) and
 * from the POSIX fallbacks (make portable-check builds this file with
 * TAOTOP_COMPAT_POSIX=1 and runs it). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/compat.h"

Test(compat, memrchr_finds_the_last_byte_within_the_length)
{
	const char s[] = "a\nb\nc\rd";

	cr_expect_eq(compat_memrchr(s, '\n', strlen(s)), s + 3);
	cr_expect_eq(compat_memrchr(s, '\n', 3), s + 1);	/* not past len */
	cr_expect_eq(compat_memrchr(s, 'a', strlen(s)), s);	/* the first byte */
	cr_expect_null(compat_memrchr(s, 'x', strlen(s)));
	cr_expect_null(compat_memrchr(s, 'a', 0));
	cr_expect_not_null(compat_memrchr("\xff", 0xff, 1));	/* c as unsigned char */
}

Test(compat, timegm_matches_known_instants)
{
	struct { int y, mo, d, h, mi, s; time_t want; } rows[] = {
		{ 1970, 1, 1, 0, 0, 0, 0 },
		{ 2000, 2, 29, 12, 0, 0, 951825600 },	/* a leap day of a /400 year */
		{ 2026, 12, 1, 0, 38, 52, 1796085532 },
		{ 2100, 3, 1, 0, 0, 0, 4107542400 },	/* 2100 is not a leap year */
		{ 1969, 12, 31, 23, 59, 59, -1 },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tm tm = { .tm_year = rows[i].y - 1900, .tm_mon = rows[i].mo - 1,
		    .tm_mday = rows[i].d, .tm_hour = rows[i].h, .tm_min = rows[i].mi,
		    .tm_sec = rows[i].s };
		cr_expect_eq(compat_timegm(&tm), rows[i].want, "%04d-%02d-%02d: %lld", rows[i].y,
		    rows[i].mo, rows[i].d, (long long)compat_timegm(&tm));
	}
}

Test(compat, parse_utc_takes_exactly_the_records_form)
{
	time_t t = 1;

	cr_assert_eq(compat_parse_utc("2026-12-01T00:38:52Z", &t), 0);
	cr_expect_eq(t, 1796085532);
	const char *bad[] = { "2026-12-01T00:38:52", "2026-12-01 00:38:52Z", "2026-13-01T00:00:00Z",
	    "2026-02-30T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T00:38:52Z ", "", "x",
	    "+026-12-01T00:38:52Z", "2026-12-01T00:38:5Z" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(compat_parse_utc(bad[i], &t), -1, "accepted '%s'", bad[i]);
	cr_expect_eq(compat_parse_utc(NULL, &t), -1);
}

Test(compat, the_pipe_is_nonblocking_and_closed_on_exec)
{
	int fds[2];
	char c;

	cr_assert_eq(compat_pipe_nb_cloexec(fds), 0, "%s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		cr_expect(fcntl(fds[i], F_GETFL) & O_NONBLOCK, "end %d blocks", i);
		cr_expect(fcntl(fds[i], F_GETFD) & FD_CLOEXEC, "end %d survives exec", i);
	}
	errno = 0;
	cr_expect_eq(read(fds[0], &c, 1), -1);
	cr_expect(errno == EAGAIN || errno == EWOULDBLOCK);
	close(fds[0]);
	close(fds[1]);
}

Test(compat, random_bytes_fill_the_buffer_and_differ)
{
	unsigned char a[32], b[32], zero[32] = { 0 };

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	cr_assert_eq(compat_random_bytes(a, sizeof(a)), 0);
	cr_assert_eq(compat_random_bytes(b, sizeof(b)), 0);
	cr_expect_neq(memcmp(a, zero, sizeof(a)), 0);
	cr_expect_neq(memcmp(a, b, sizeof(a)), 0);
}

Test(compat, wipe_zeroes_every_byte)
{
	char s[] = "secret-value";

	compat_wipe(s, sizeof(s) - 1);
	for (size_t i = 0; i < sizeof(s) - 1; i++)
		cr_expect_eq(s[i], 0, "byte %zu", i);
	cr_expect_eq(s[sizeof(s) - 1], 0);
}

Test(compat, paths_and_the_executable)
{
	char *p = compat_realpath("/tmp/../tmp/.");
	char *exe = compat_exe_path();

	cr_expect_str_eq(p, "/tmp");
	free(p);
	errno = 0;
	cr_expect_null(compat_realpath("/no/such/taotop/path"));
	cr_expect_eq(errno, ENOENT);
	/* Linux and macOS say where the program is; this runs on Linux. */
	cr_assert_not_null(exe);
	cr_expect_str_eq(strrchr(exe, '/') + 1, "test_compat", "%s", exe);
	free(exe);
}

Test(compat, wcwidth_and_sleep)
{
	struct timespec a, b;

	cr_expect_eq(compat_wcwidth(L'a'), 1);
	cr_expect_eq(compat_wcwidth(L'\x7f'), -1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	compat_sleep_ms(30);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_expect_geq((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000, 30);
}

Test(compat, a_monotonic_timed_wait_ends_at_its_instant)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c;
	struct timespec a, until, b;
	int rc;

	compat_cond_init_monotonic(&c);
	clock_gettime(CLOCK_MONOTONIC, &a);
	until = a;
	until.tv_nsec += 50 * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&m);
	do
		rc = compat_cond_timedwait_monotonic(&c, &m, &until);
	while (rc == 0);	/* a spurious wake-up: wait on */
	pthread_mutex_unlock(&m);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_expect_eq(rc, ETIMEDOUT);
	long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	cr_expect(ms >= 49 && ms < 5000, "waited %ld ms for 50", ms);
	pthread_cond_destroy(&c);
}

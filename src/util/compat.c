/* The platform's own calls where it has them, POSIX fallbacks where not.
 * This is the one file that asks for more than POSIX.1-2008: the feature
 * macros below must come before the first system header. */
#if defined(__linux__) && !defined(TAOTOP_COMPAT_POSIX)
#define _GNU_SOURCE		/* pipe2, getrandom, memrchr, explicit_bzero */
#define COMPAT_LINUX 1
#elif defined(__APPLE__)
#define _DARWIN_C_SOURCE	/* arc4random_buf, _NSGetExecutablePath */
#define COMPAT_LINUX 0
#else
#define _XOPEN_SOURCE 700	/* realpath, wcwidth: XSI, which every target has */
#define COMPAT_LINUX 0
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wchar.h>

#if COMPAT_LINUX
#include <sys/random.h>
#endif
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

#include "util/compat.h"
#include "util/xmalloc.h"

int compat_pipe_nb_cloexec(int fds[2])
{
#if COMPAT_LINUX
	return pipe2(fds, O_NONBLOCK | O_CLOEXEC);
#else
	int i;

	if (pipe(fds) != 0)
		return -1;
	for (i = 0; i < 2; i++) {
		int fl = fcntl(fds[i], F_GETFL);
		if (fl < 0 || fcntl(fds[i], F_SETFL, fl | O_NONBLOCK) != 0 ||
		    fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0) {
			int saved = errno;
			close(fds[0]);
			close(fds[1]);
			errno = saved;
			return -1;
		}
	}
	return 0;
#endif
}

#if !COMPAT_LINUX && !defined(__APPLE__)
static int urandom(void *p, size_t len)
{
	unsigned char *u = p;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len > 0) {
		ssize_t n = read(fd, u, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		u += n;
		len -= (size_t)n;
	}
	close(fd);
	return 0;
}
#endif

int compat_random_bytes(void *p, size_t len)
{
#if COMPAT_LINUX
	unsigned char *u = p;

	while (len > 0) {
		ssize_t n = getrandom(u, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		u += n;
		len -= (size_t)n;
	}
	return 0;
#elif defined(__APPLE__)
	arc4random_buf(p, len);
	return 0;
#else
	return urandom(p, len);
#endif
}

void *compat_memrchr(const void *s, int c, size_t len)
{
#if COMPAT_LINUX
	return memrchr(s, c, len);
#else
	const unsigned char *u = s;

	while (len > 0)
		if (u[--len] == (unsigned char)c)
			return (void *)(u + len);
	return NULL;
#endif
}

void compat_wipe(void *p, size_t len)
{
#if COMPAT_LINUX
	explicit_bzero(p, len);
#else
	/* A store through a volatile pointer is an observable side effect:
	 * the compiler has to keep every one. */
	volatile unsigned char *v = p;

	while (len-- > 0)
		*v++ = 0;
#endif
}

time_t compat_timegm(const struct tm *tm)
{
	/* Days from 1970-01-01 to a civil date (Howard Hinnant's
	 * days_from_civil), so no TZ trick and no timegm is needed. */
	long long y = (long long)tm->tm_year + 1900;
	long long m = tm->tm_mon + 1;
	long long era, yoe, doy, doe, days;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + tm->tm_mday - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	days = era * 146097 + doe - 719468;
	return (time_t)(days * 86400 + tm->tm_hour * 3600LL + tm->tm_min * 60LL + tm->tm_sec);
}

static int digits(const char *s, int n, int *out)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int compat_parse_local(const char *s, time_t *t)
{
	int y, mo, d, h, mi, se;
	struct tm tm;

	if (s == NULL || strlen(s) != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    s[13] != ':' || s[16] != ':' ||
	    digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
	    digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &se))
		return -1;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	tm.tm_isdst = -1;
	if ((*t = mktime(&tm)) == (time_t)-1)
		return -1;
	return 0;
}

int compat_parse_utc(const char *s, time_t *t)
{
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, se;
	struct tm tm;

	if (s == NULL || strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
	    s[13] != ':' || s[16] != ':' || s[19] != 'Z' ||
	    digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
	    digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &se))
		return -1;
	/* Before the epoch is no time taotop wrote (and strftime's %Y prints
	 * such a year with fewer than four digits, which would not read back). */
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 ||
	    se > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	*t = compat_timegm(&tm);
	return 0;
}

char *compat_exe_path(void)
{
#if defined(__linux__)
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	return xstrdup(exe);
#elif defined(__APPLE__)
	char exe[PATH_MAX];
	uint32_t size = sizeof(exe);

	if (_NSGetExecutablePath(exe, &size) != 0)
		return NULL;
	return compat_realpath(exe);
#else
	return NULL;
#endif
}

char *compat_realpath(const char *path)
{
	return realpath(path, NULL);
}

int compat_wcwidth(wchar_t wc)
{
	return wcwidth(wc);
}

void compat_cond_init_monotonic(pthread_cond_t *c)
{
#if defined(__APPLE__)
	pthread_cond_init(c, NULL);
#else
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
#endif
}

int compat_cond_timedwait_monotonic(pthread_cond_t *c, pthread_mutex_t *m,
    const struct timespec *until)
{
#if defined(__APPLE__)
	struct timespec now, rel;

	clock_gettime(CLOCK_MONOTONIC, &now);
	rel.tv_sec = until->tv_sec - now.tv_sec;
	rel.tv_nsec = until->tv_nsec - now.tv_nsec;
	if (rel.tv_nsec < 0) {
		rel.tv_sec--;
		rel.tv_nsec += 1000000000L;
	}
	if (rel.tv_sec < 0)
		return ETIMEDOUT;
	return pthread_cond_timedwait_relative_np(c, m, &rel);
#else
	return pthread_cond_timedwait(c, m, until);
#endif
}

void compat_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void compat_no_dumps(void)
{
	struct rlimit none = { 0, 0 };

	setrlimit(RLIMIT_CORE, &none);
#if defined(__linux__)
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif
}

int compat_peer_uid(int fd, uid_t *uid)
{
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
	/* First: OpenBSD has an SO_PEERCRED of another layout. */
	gid_t gid;

	return getpeereid(fd, uid, &gid) == 0 ? 0 : -1;
#elif defined(SO_PEERCRED)
	/* struct ucred's layout, spelled out: the portable build does not
	 * see glibc's (it is _GNU_SOURCE's). */
	struct {
		pid_t	pid;
		uid_t	uid;
		gid_t	gid;
	} cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof(cr))
		return -1;
	*uid = cr.uid;
	return 0;
#else
	(void)fd;
	(void)uid;
	return -1;
#endif
}

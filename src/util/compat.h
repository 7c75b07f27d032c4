/* The few things taotop needs that POSIX.1-2008 does not give everywhere.
 *
 * Every other file is built with -D_POSIX_C_SOURCE=200809L and nothing
 * else; compat.c alone asks its platform for more (glibc's pipe2,
 * getrandom and memrchr, macOS's arc4random_buf, the BSDs'
 * flock), and has a POSIX fallback for each. `make portable-check` builds
 * everything with TAOTOP_COMPAT_POSIX=1, which makes compat.c take the
 * fallbacks on Linux too, so they are compiled and unit-tested there. */
#ifndef TAOTOP_UTIL_COMPAT_H
#define TAOTOP_UTIL_COMPAT_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* A pipe with both ends non-blocking and close-on-exec. 0 or -1 (errno). */
int compat_pipe_nb_cloexec(int fds[2]);

/* len unpredictable bytes (for temporary names and tokens, not keys).
 * 0, or -1 when the system gave none. */
int compat_random_bytes(void *p, size_t len);

/* The last c in the first len bytes of s, or NULL. */
void *compat_memrchr(const void *s, int c, size_t len);

/* Zero len bytes in a way the compiler may not drop. */
void compat_wipe(void *p, size_t len);

/* Seconds since the epoch of a broken-down UTC time (timegm). */
time_t compat_timegm(const struct tm *tm);

/* "YYYY-MM-DDTHH:MM:SSZ" to the epoch, exactly that form. 0 or -1. */
int compat_parse_utc(const char *s, time_t *t);
/* "2026-12-05T07:25:46" in the machine's local time (as SLURM prints its
 * times) into *t; -1 when s is not that (strptime is not POSIX's base:
 * the portable build has none). */
int compat_parse_local(const char *s, time_t *t);

/* The running executable's absolute path, or NULL when the system cannot
 * say (then the installed data folder is used). The caller frees it. */
char *compat_exe_path(void);

/* realpath(path, NULL): the canonical absolute path, or NULL (errno). */
char *compat_realpath(const char *path);

/* Columns a wide character takes (wcwidth), -1 for a non-printable one. */
int compat_wcwidth(wchar_t wc);

/* A condition variable whose timed waits count on CLOCK_MONOTONIC (a
 * clock step must not stretch or cut a wait), and such a wait until the
 * monotonic instant `until`: 0, ETIMEDOUT, or an error. macOS has no
 * pthread_condattr_setclock: there the wait is made relative. */
void compat_cond_init_monotonic(pthread_cond_t *c);
int compat_cond_timedwait_monotonic(pthread_cond_t *c, pthread_mutex_t *m,
    const struct timespec *until);

/* Sleep ms milliseconds, through signals. */
void compat_sleep_ms(unsigned ms);

/* The uid of the process at the other end of a connected Unix socket
 * (Linux's SO_PEERCRED, the BSDs' and macOS's getpeereid): 0, or -1 when
 * the system cannot say (then nobody is trusted). */
int compat_peer_uid(int fd, uid_t *uid);

/* Keep this process out of core files and, where the system can, from
 * other processes of the same user reading its memory (Linux's
 * PR_SET_DUMPABLE). */
void compat_no_dumps(void);

#endif

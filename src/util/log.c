#include "util/log.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *log_file;
static enum log_level log_level = LOG_INFO;

int log_open(const char *path, enum log_level level)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	FILE *f;

	if (fd < 0)
		return -1;
	f = fdopen(fd, "a");
	if (f == NULL) {
		close(fd);
		return -1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	pthread_mutex_lock(&log_lock);
	if (log_file != NULL)
		fclose(log_file);
	log_file = f;
	log_level = level;
	pthread_mutex_unlock(&log_lock);
	return 0;
}

void log_close(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_file != NULL)
		fclose(log_file);
	log_file = NULL;
	pthread_mutex_unlock(&log_lock);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *names[] = { "error", "warn", "info", "debug" };
	struct timeval tv;
	struct tm tm;
	char stamp[32], *text;
	struct buf clean;
	va_list ap;

	pthread_mutex_lock(&log_lock);
	if (log_file == NULL || level > log_level) {
		pthread_mutex_unlock(&log_lock);
		return;
	}
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(log_file, "%s.%03ld %s ", stamp, (long)(tv.tv_usec / 1000), names[level]);
	/* Through the sanitiser, one line: what is logged holds bytes from
	 * the cluster (a server's banner, a job's name, a command's error),
	 * and a user reads the log with cat or less -R in a terminal. */
	va_start(ap, fmt);
	text = xvasprintf(fmt, ap);
	va_end(ap);
	buf_init(&clean);
	sanitize_append_line(&clean, text, strlen(text));
	fputs(clean.data != NULL ? clean.data : "", log_file);
	buf_free(&clean);
	free(text);
	fputc('\n', log_file);
	pthread_mutex_unlock(&log_lock);
}

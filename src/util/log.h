/* taotop's own log: a file, never the terminal (a stray line would corrupt
 * the full-screen UI). Without log_open, messages are dropped. Thread-safe. */
#ifndef TAOTOP_UTIL_LOG_H
#define TAOTOP_UTIL_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Append to path (created 0600). Returns 0, or -1 with errno set. */
int log_open(const char *path, enum log_level level);
void log_close(void);
void log_msg(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif

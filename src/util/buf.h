/* A growable byte buffer, always NUL-terminated after its data so it can be
 * read as a string when it holds text. */
#ifndef TAOTOP_UTIL_BUF_H
#define TAOTOP_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
void buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_addc(struct buf *b, char c);
void buf_adds(struct buf *b, const char *s);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand the data to the caller (to free) and leave b empty. */
char *buf_detach(struct buf *b);

#endif

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
	int	 secret;	/* wipe every copy: when grown, reset and freed */
};

void buf_init(struct buf *b);
/* A buffer for secrets: its old memory is wiped before it is grown
 * (realloc would free the old copy as it is), reset or freed. */
void buf_init_secret(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
void buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_addc(struct buf *b, char c);
void buf_adds(struct buf *b, const char *s);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Zero len bytes at p, in a way the compiler cannot drop. */
void buf_mem_wipe(void *p, size_t len);
/* Hand the data to the caller (to free) and leave b empty. */
char *buf_detach(struct buf *b);

#endif

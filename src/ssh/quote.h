/* The one POSIX shell quoting function. Every remote command built from user
 * data quotes each such argument with it, so the remote shell sees exactly
 * one word with exactly these bytes, whatever they are. */
#ifndef TAOTOP_SSH_QUOTE_H
#define TAOTOP_SSH_QUOTE_H

#include <stddef.h>

struct buf;

/* Append s (len bytes, any bytes but NUL) to b as one sh word. */
void sh_quote_buf(struct buf *b, const char *s, size_t len);
/* s as one sh word; the caller frees it. */
char *sh_quote(const char *s);

#endif

#include "util/compat.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->secret = 0;
}

void buf_init_secret(struct buf *b)
{
	buf_init(b);
	b->secret = 1;
}

void buf_mem_wipe(void *p, size_t len)
{
	if (p != NULL && len > 0)
		compat_wipe(p, len);
}

void buf_free(struct buf *b)
{
	int secret = b->secret;

	if (secret)
		buf_mem_wipe(b->data, b->cap);
	free(b->data);
	buf_init(b);
	b->secret = secret;
}

void buf_reset(struct buf *b)
{
	if (b->secret)
		buf_mem_wipe(b->data, b->cap);
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	if (b->secret) {
		/* Never let realloc free a copy unwiped. */
		char *p = xmalloc(cap);
		if (b->data != NULL) {
			memcpy(p, b->data, b->len + 1);
			buf_mem_wipe(b->data, b->cap);
			free(b->data);
		}
		b->data = p;
	} else {
		b->data = xrealloc(b->data, cap);
	}
	b->cap = cap;
}

void buf_add(struct buf *b, const void *data, size_t len)
{
	buf_reserve(b, len);
	if (len > 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *buf_detach(struct buf *b)
{
	char *p = b->data ? b->data : xstrdup("");
	buf_init(b);
	return p;
}

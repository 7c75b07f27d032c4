#include "util/xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t size)
{
	fprintf(stderr, "taotop: out of memory (%zu bytes)\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (p == NULL)
		oom(size);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		oom(n * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (p == NULL)
		oom(size);
	return p;
}

void *xreallocarray(void *ptr, size_t n, size_t size)
{
	if (size != 0 && n > (size_t)-1 / size)
		oom((size_t)-1);
	return xrealloc(ptr, n * size);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xmemdup(const void *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* vsnprintf twice (vasprintf is not POSIX): measure, then print. */
char *xvasprintf(const char *fmt, va_list ap)
{
	va_list again;
	char *p;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0)
		oom(0);
	p = xmalloc((size_t)n + 1);
	if (vsnprintf(p, (size_t)n + 1, fmt, ap) != n)
		oom(0);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void xpushf(char ***v, size_t *n, const char *fmt, ...)
{
	va_list ap;

	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	va_start(ap, fmt);
	(*v)[(*n)++] = xvasprintf(fmt, ap);
	va_end(ap);
}

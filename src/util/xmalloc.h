/* Allocation wrappers that never return NULL: running out of memory is a
 * broken invariant for taotop, so they abort with a message instead. */
#ifndef TAOTOP_UTIL_XMALLOC_H
#define TAOTOP_UTIL_XMALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
/* Grow an array of n elements of size bytes; overflow-checked. */
void *xreallocarray(void *ptr, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* n bytes, NULs included, and a NUL after them: for binary text. */
char *xmemdup(const void *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* A formatted line appended to the list *v of *n (both grown). */
void xpushf(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

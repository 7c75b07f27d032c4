#include "util/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

char *file_read_all(const char *path, size_t *len, char **err)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	char chunk[8192];
	size_t n;
	int saved;

	if (f == NULL) {
		saved = errno;
		*err = xasprintf("%s: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f)) {
		saved = errno;
		fclose(f);
		buf_free(&b);
		*err = xasprintf("%s: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	fclose(f);
	if (len != NULL)
		*len = b.len;
	return buf_detach(&b);
}

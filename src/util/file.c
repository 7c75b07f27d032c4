#include "util/file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"
#include "util/xmalloc.h"

char *file_read_all(const char *path, size_t *len, char **err)
{
	FILE *f = fopen(path, "rb");
	struct buf b;
	struct stat st;
	size_t n;
	int saved;

	if (f == NULL) {
		saved = errno;
		if (err != NULL)
			*err = xasprintf("%s: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	buf_init(&b);
	/* Read straight into a buffer of the file's size: a 15 MiB file
	 * (the records' index) read by 8 KiB chunks was copied as it grew. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		buf_reserve(&b, (size_t)st.st_size);
	for (;;) {
		buf_reserve(&b, 8192);
		n = fread(b.data + b.len, 1, b.cap - b.len - 1, f);
		b.len += n;
		b.data[b.len] = '\0';
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		saved = errno;
		fclose(f);
		buf_free(&b);
		if (err != NULL)
			*err = xasprintf("%s: %s", path, strerror(saved));
		errno = saved;
		return NULL;
	}
	fclose(f);
	if (len != NULL)
		*len = b.len;
	return buf_detach(&b);
}

#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int file_write_atomic(const char *path, const char *tmpl, const void *data, size_t len,
    unsigned flags)
{
	char *tmp = tmpl != NULL ? xstrdup(tmpl) : xasprintf("%s.tmp.XXXXXX", path), *dir, *slash;
	const char *p = data;
	size_t off = 0;
	int fd = mkstemp(tmp), dfd, rc = FILE_FAILED_WRITE, saved;

	if (fd < 0) {
		saved = errno;
		free(tmp);
		errno = saved;
		return FILE_FAILED_CREATE;
	}
	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	rc = FILE_FAILED_RENAME;
	if (flags & FILE_FAIL_BEFORE_RENAME) {
		errno = EIO;
		goto fail;
	}
	if (rename(tmp, path) != 0)
		goto fail;
	if (flags & FILE_SYNC_DIR) {
		/* The rename itself must reach the disk too. */
		dir = xstrdup(path);
		slash = strrchr(dir, '/');
		if (slash != NULL)
			*slash = '\0';
		dfd = open(slash != NULL ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		free(dir);
	}
	free(tmp);
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	errno = saved;
	return rc;
}

int file_mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path), *s;
	int saved;

	for (s = p + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST) {
			saved = errno;
			free(p);
			errno = saved;
			return -1;
		}
		*s = '/';
	}
	free(p);
	return mkdir(path, mode) != 0 && errno != EEXIST ? -1 : 0;
}

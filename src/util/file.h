/* Local files: reading one whole (spec bundles, templates, configs,
 * patterns), writing one atomically (config, records, the records' index),
 * making a folder and its parents. */
#ifndef TAOTOP_UTIL_FILE_H
#define TAOTOP_UTIL_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* The file's bytes, NUL-terminated (the caller frees them); *len, when not
 * NULL, gets their count. NULL with *err (when err is not NULL) as "PATH:
 * reason", errno kept. */
char *file_read_all(const char *path, size_t *len, char **err);

/* file_write_atomic's flags. */
#define FILE_SYNC_DIR		1	/* fsync the folder after the rename too */
#define FILE_FAIL_BEFORE_RENAME	2	/* tests: fail with EIO just before the rename */

/* What file_write_atomic could not do: make the temp file, write it
 * (fsync and close included), or rename it over path. */
enum file_failed { FILE_FAILED_CREATE = -1, FILE_FAILED_WRITE = -2, FILE_FAILED_RENAME = -3 };

/* Write len bytes to path atomically (htop's Settings_write): a temp file
 * beside it made 0600 by mkstemp from tmpl (a template ending in XXXXXX;
 * NULL: "PATH.tmp.XXXXXX"), written, fsync'ed, closed and renamed over
 * path. 0, or an enum file_failed with errno kept and the temp file gone. */
int file_write_atomic(const char *path, const char *tmpl, const void *data, size_t len,
    unsigned flags);

/* mkdir -p: path and every missing folder above it, each with mode. 0, or
 * -1 with errno when one could not be made (one that exists is fine). */
int file_mkdir_p(const char *path, mode_t mode);

#endif

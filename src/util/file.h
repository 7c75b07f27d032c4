/* Reading a whole local file (spec bundles, templates, configs, patterns). */
#ifndef TAOTOP_UTIL_FILE_H
#define TAOTOP_UTIL_FILE_H

#include <stddef.h>

/* The file's bytes, NUL-terminated (the caller frees them); *len, when not
 * NULL, gets their count. NULL with *err (when err is not NULL) as "PATH:
 * reason", errno kept. */
char *file_read_all(const char *path, size_t *len, char **err);

#endif

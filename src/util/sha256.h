/*
 * SHA-256 (FIPS 180-4) of bytes in memory: a supporting file is hashed
 * from the very bytes that are then uploaded, read once (no second read
 * that could see another file).
 */
#ifndef TAOTOP_UTIL_SHA256_H
#define TAOTOP_UTIL_SHA256_H

#include <stddef.h>

/* The digest of len bytes at data as 64 lower-case hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif

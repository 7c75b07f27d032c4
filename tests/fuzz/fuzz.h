/*
 * What every fuzz target shares: libFuzzer's entry point, and the input as
 * a NUL-terminated copy (the parsers take C strings; a NUL inside the
 * input ends what they see, as it would for text read from the cluster).
 */
#ifndef TAOTOP_FUZZ_H
#define TAOTOP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A property the target checks: a crash (abort) when it does not hold. */
#define FUZZ_ASSERT(cond) do { if (!(cond)) abort(); } while (0)

#endif

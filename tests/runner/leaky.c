/*
 * Built only for tests/runner/test_runner, never run by the suite itself:
 * a test that passes and leaks 77 bytes three calls deep, the last call in
 * the library (xmemdup). Under ASan the runner must count it as a failure;
 * it proves a leak made under a Criterion test is not suppressed.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "util/xmalloc.h"

/* Not static and not inlined, so each is a frame of the leak's stack. */
__attribute__((noinline)) char *leaky_label(const char *name);
__attribute__((noinline)) char *leaky_copy(const char *s, size_t n);

__attribute__((noinline)) char *leaky_copy(const char *s, size_t n)
{
	return xmemdup(s, n);
}

__attribute__((noinline)) char *leaky_label(const char *name)
{
	char pad[77];

	memset(pad, '.', sizeof pad - 1);
	memcpy(pad, name, strnlen(name, sizeof pad - 1));
	pad[sizeof pad - 1] = '\0';
	/* xmemdup adds the NUL back: 77 bytes. */
	return leaky_copy(pad, sizeof pad - 1);
}

Test(leaky, passes_and_leaks_77_bytes_three_calls_deep)
{
	char *label = leaky_label("leaky");

	cr_assert_eq(strncmp(label, "leaky", 5), 0);
	/* label is dropped here, on purpose. */
}

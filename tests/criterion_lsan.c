/*
 * Linked into every Criterion test binary: LeakSanitizer checks the test
 * workers and not Criterion's runner process.
 *
 * Criterion runs each test in a worker process of its own (BoxFort re-runs
 * the binary with BXFI_MAP in its environment; Criterion itself tests that
 * variable to refuse re-entering its runner), and each worker gets
 * LeakSanitizer's check at its exit. The runner never runs a test (we have
 * no ReportHook), but it leaks at exit: BoxFort's timeout requests (48
 * bytes, calloc'd by bxfi_push_timeout for a test with .timeout, freed by a
 * detached thread that may not run before exit). Those functions are not
 * exported by libcriterion.so, and its code keeps no frame pointers, so a
 * suppression cannot name them; and "leak:libcriterion.so" matched every
 * worker's leak too (LeakSanitizer matches any frame, and every test is
 * called from libcriterion), which hid all of ours.
 */
#include <stdlib.h>

int __lsan_is_turned_off(void);

/* LeakSanitizer's hook, asked at exit: 1 skips the leak check. */
int __lsan_is_turned_off(void)
{
	return getenv("BXFI_MAP") == NULL;
}

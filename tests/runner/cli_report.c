/*
 * For the runner's own test (tests/runner/test_runner): a test that runs
 * taotop (here a stand-in printing AddressSanitizer's report and exiting
 * with the sanitizers' code, as the sanitizer build's taotop does on a
 * memory error) and expects that run to fail. The run failing is what the
 * test wanted; the report must still fail it, through the rig helpers'
 * check (rig_check_sanitizer, which rig_taotop calls on every run).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "integration/helper_rig.h"

Test(cli_report, a_failing_run_with_a_sanitizer_report_fails_the_test)
{
	char *out = NULL, script[256];
	int rc;

	snprintf(script, sizeof(script), "echo 'taotop: could not cancel 4242'; "
	    "echo '==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010' >&2; "
	    "exit %d", RIG_SANITIZER_EXIT);
	{
		const char *const argv[] = { "sh", "-c", script, NULL };
		rc = rig_run(argv, &out);
	}
	rig_check_sanitizer(rc, out, "cancel 4242");
	cr_expect_neq(rc, 0, "the run failed, as this test expects of it");
	free(out);
}

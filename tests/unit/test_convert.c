/* A conversion's looks read as squeue and the .rc file print them, and
 * what each decides (engine/submit/convert.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/convert.h"

Test(convert, a_pending_look_reads_its_reason_and_request)
{
	struct convert_look l;

	cr_assert_eq(convert_read_look("PENDING|QOSGrpMemLimit|4|7200M\n@@rc\n", &l), 0);
	cr_expect_str_eq(l.state, "PENDING");
	cr_expect_str_eq(l.reason, "QOSGrpMemLimit");
	cr_expect_str_eq(l.req_cpus, "4");
	cr_expect_str_eq(l.req_mem, "7200M");
	cr_expect_eq(l.ended, 0);
}

Test(convert, an_ended_srun_is_done_whatever_the_queue_says)
{
	struct convert_look l;

	cr_assert_eq(convert_read_look("@@rc 0\n@@whole\n", &l), 0);
	cr_expect(l.ended);
	cr_expect_eq(l.rc, 0);
	cr_expect_eq(convert_judge(&l, 1), CONVERT_DONE);
	cr_assert_eq(convert_read_look("COMPLETING|None|4|7200M\n@@rc 1\n@@log enroot: 401 Unauthorized\n",
	    &l), 0);
	cr_expect_eq(l.rc, 1);
	cr_expect_eq(convert_judge(&l, 0), CONVERT_DONE);
}

Test(convert, qos_grp_mem_limit_twice_in_a_row_is_a_retry)
{
	struct convert_look l;

	convert_read_look("PENDING|QOSGrpMemLimit|16|115200M\n@@rc\n", &l);
	cr_expect_eq(convert_judge(&l, 0), CONVERT_WAIT, "one look may catch the scheduler mid-pass");
	cr_expect_eq(convert_judge(&l, 1), CONVERT_RETRY_EXPLICIT);
}

Test(convert, other_reasons_are_waited_for)
{
	const char *reasons[] = { "Resources", "Priority", "QOSGrpCpuLimit", "ReqNodeNotAvail,_UnavailableNodes:node01",
	    "AssocGrpMemLimit" };
	struct convert_look l;

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		char out[128];
		snprintf(out, sizeof(out), "PENDING|%s|4|7200M\n@@rc\n", reasons[i]);
		convert_read_look(out, &l);
		cr_expect_eq(convert_judge(&l, 1), CONVERT_WAIT, "%s", reasons[i]);
	}
	convert_read_look("RUNNING|None|4|7200M\n@@rc\n", &l);
	cr_expect_eq(convert_judge(&l, 1), CONVERT_WAIT);
}

Test(convert, an_answer_without_its_marker_is_not_a_look)
{
	struct convert_look l;

	cr_expect_eq(convert_read_look("PENDING|Resources|4|7200M\n", &l), -1);
	cr_expect_eq(convert_read_look("", &l), -1);
	cr_expect_eq(convert_read_look(NULL, &l), -1);
}

Test(convert, the_srun_line_carries_the_profile_account_and_name)
{
	struct convert_opts o = { .sqsh = "/c/x.sqsh", .docker_uri = "docker://nvcr.io#a/b:1",
	    .cache = "/c", .partition = "cpu_long", .account = "vision" };
	char *line = convert_srun_line(&o, "taotop-convert-abc123");

	cr_expect(strncmp(line, "srun --chdir=/tmp -n1 -c4 --mem=7200M -p cpu_long -A vision -t 120 "
	    "-J taotop-convert-abc123 bash -c ", 95) == 0, "%s", line);
	free(line);
	o.account = "it's";
	line = convert_srun_line(&o, "n");
	cr_expect(strstr(line, "-A 'it'\\''s'") != NULL, "quoted: %s", line);
	free(line);
}

/* The decision table of an unclear submit (engine/submit/settle.h): what
 * the lookups' answers decide, read as squeue and sacct print them. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/settle.h"
#include "util/xmalloc.h"

/* squeue --me -h -t all -o '%A %r', its exit status, sacct's ids, its
 * exit status: as settle_command's one command prints them. */
static const char *answer(const char *squeue, int sq_rc, const char *sacct)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s@@squeue %d\n%s@@sacct 0\n", squeue, sq_rc, sacct);
	return buf;
}

Test(settle, one_job_found_by_squeue_is_adopted)
{
	struct settle_state st;

	settle_init(&st);
	cr_expect_eq(settle_read(&st, "login1", 1, answer("4242 None\n", 0, ""), NULL), 1);
	cr_expect_eq(settle_decide(&st, 1, 0), SETTLE_ADOPT);
	cr_expect_str_eq(st.found[0].id, "4242");
	cr_expect_eq(st.found[0].held, 0);
	cr_expect_str_eq(st.found[0].by, "squeue on login1");
	settle_free(&st);
}

Test(settle, a_held_job_is_known_held)
{
	struct settle_state st;

	settle_init(&st);
	settle_read(&st, "login1", 1, answer("77 JobHeldUser\n", 0, "77\n"), NULL);
	cr_expect_eq(st.nfound, 1, "squeue and sacct naming one job are one match");
	cr_expect_eq(st.found[0].held, 1);
	cr_expect_eq(settle_decide(&st, 1, 0), SETTLE_ADOPT);
	settle_free(&st);
}

Test(settle, sacct_alone_finds_it_while_squeue_errs)
{
	struct settle_state st;

	settle_init(&st);
	cr_expect_eq(settle_read(&st, "login2", 1, answer("", 1, "900\n"), NULL), 0,
	    "a lookup whose squeue failed did not work");
	cr_expect_eq(settle_decide(&st, 0, 0), SETTLE_ADOPT, "but its sacct's match counts");
	cr_expect_str_eq(st.found[0].by, "sacct on login2");
	settle_free(&st);
}

Test(settle, two_jobs_are_duplicates_lowest_first)
{
	struct settle_state st;

	settle_init(&st);
	settle_read(&st, "login1", 1, answer("1000 None\n", 0, ""), NULL);
	settle_read(&st, "login2", 1, answer("999 Priority\n", 0, "1000\n999\n"), NULL);
	cr_expect_eq(st.nfound, 2);
	cr_expect_eq(settle_decide(&st, 1, 0), SETTLE_DUPLICATES);
	cr_expect_str_eq(st.found[0].id, "999", "the lowest (first submitted) is kept");
	cr_expect_str_eq(st.found[1].id, "1000");
	settle_free(&st);
}

Test(settle, ids_compare_as_numbers)
{
	struct settle_state st;

	settle_init(&st);
	settle_read(&st, "h", 1, answer("10000 None\n9999 None\n", 0, ""), NULL);
	cr_expect_str_eq(st.found[0].id, "9999");
	settle_free(&st);
}

Test(settle, none_waits_inside_the_window)
{
	struct settle_state st;

	settle_init(&st);
	cr_expect_eq(settle_read(&st, "login1", 1, answer("", 0, ""), NULL), 1);
	cr_expect_eq(settle_decide(&st, 1, 0), SETTLE_WAIT);
	cr_expect_eq(settle_decide(&st, 1, 1), SETTLE_NONE, "a working lookup said none: none");
	settle_free(&st);
}

Test(settle, failed_lookups_never_say_none)
{
	struct settle_state st;

	settle_init(&st);
	cr_expect_eq(settle_read(&st, "login1", 0, NULL, "connection cut"), 0);
	cr_expect_eq(settle_read(&st, "login1", 1, "", NULL), 0, "no answer at all");
	cr_expect_eq(settle_read(&st, "login1", 1, answer("", 1, ""), NULL), 0, "squeue failed");
	cr_expect_eq(st.failed, 3);
	cr_expect_eq(settle_decide(&st, 0, 0), SETTLE_WAIT);
	cr_expect_eq(settle_decide(&st, 0, 1), SETTLE_UNKNOWN, "no lookup worked: unknown");
	cr_expect(strstr(st.first_error, "connection cut") != NULL, "%s", st.first_error);
	settle_free(&st);
}

Test(settle, noise_and_other_lines_are_not_ids)
{
	struct settle_state st;

	settle_init(&st);
	settle_read(&st, "h", 1, "squeue: error: x\n$(rm -rf) y\n@@squeue 0\n"
	    "JobIDRaw\n12a\n@@sacct 0\n", NULL);
	cr_expect_eq(st.nfound, 0);
	settle_free(&st);
}

Test(settle, the_evidence_names_hosts_lookups_and_jobs)
{
	struct settle_result r;

	memset(&r, 0, sizeof(r));
	settle_init(&r.st);
	r.hosts = xstrdup("login1, login2");
	r.waited_ms = 4100;
	r.worked = 1;
	settle_read(&r.st, "login1", 0, NULL, "connection dropped");
	settle_read(&r.st, "login2", 1, answer("5 JobHeldUser\n", 0, ""), NULL);
	char *ev = settle_evidence(&r, "tao-abc");
	cr_expect_str_eq(ev, "looked for jobs named tao-abc (squeue and sacct, by user and exact name) "
	    "on login1, login2: 2 lookups in 4 s, 1 failed (first: login1: connection dropped); "
	    "found SLURM job 5 (squeue on login2, held)");
	free(ev);
	settle_result_free(&r);
}

Test(settle, the_command_quotes_the_name)
{
	char *cmd = settle_command("a'b");

	cr_expect(strstr(cmd, "--name='a'\\''b'") != NULL, "%s", cmd);
	cr_expect(strstr(cmd, "squeue --me -h -t all") != NULL, "%s", cmd);
	free(cmd);
}

/* Why a pending job waits: the command, SLURM's answers as 22.05 prints
 * them (taken from the rig), the reasons in words, and that the poll never
 * asks any of it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/slurm/pending.h"
#include "engine/slurm/slurm.h"
#include "util/xmalloc.h"

#define NONCE	"0123456789abcdef"
#define M	"taotop-why-" NONCE

static char *joined(char **v, size_t n)
{
	size_t i, len = 1;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	s = xcalloc(1, len);
	for (i = 0; i < n; i++) {
		strcat(s, v[i]);
		strcat(s, "\n");
		free(v[i]);
	}
	free(v);
	return s;
}

/* What the rig printed for a job behind a blocker on its node, once the
 * backfill pass had planned it. */
static const char planned[] =
    M " queue\n"
    "PENDING|Resources|polar|30:00|1|1|gres:gpu:2|2026-12-05T07:25:46|rig\n"
    M " start\n"
    "2026-12-05T07:35:46|node01\n"
    M " sprio\n"
    "        69|69|0|0|0|0|0\n"
    M " sshare\n"
    "root|0.250000|0.000000|1.000000\n"
    "rig|0.500000|0.100000|0.875000\n"
    M " end\n";

Test(pending, a_planned_job_reads_whole_with_its_accounts_fair_share)
{
	struct pending_why w;

	cr_assert_eq(pending_parse(planned, NONCE, &w), 0);
	cr_expect_str_eq(w.state, "PENDING");
	cr_expect_str_eq(w.reason, "Resources");
	cr_expect_str_eq(w.time_limit, "30:00");
	cr_expect_str_eq(w.tres, "gres:gpu:2");
	cr_expect_str_eq(w.start, "2026-12-05T07:35:46");
	cr_expect_str_eq(w.sched_nodes, "node01");
	cr_expect_str_eq(w.priority, "        69", "sprio's padding kept as printed");
	cr_expect_str_eq(w.age, "69");
	cr_expect_str_eq(w.account, "rig", "the job's account's line, not the first");
	cr_expect_str_eq(w.fs_factor, "0.875000");
	cr_expect_str_eq(w.priority_error, "");

	struct tm tm = { .tm_year = 126, .tm_mon = 11, .tm_mday = 5, .tm_hour = 7, .tm_min = 0,
	    .tm_isdst = -1 };
	char **lines, *text;
	size_t n = pending_lines(&w, (long)mktime(&tm), &lines);
	text = joined(lines, n);
	cr_expect(strstr(text, "Why it waits: it is next in line and waits for enough free GPUs, "
	    "CPUs or nodes (SLURM: Resources)") != NULL, "%s", text);
	cr_expect(strstr(text, "estimated start: 2026-12-05T07:35:46 (in 36 min), on node01")
	    != NULL, "%s", text);
	cr_expect(strstr(text, "priority         69 = age 69 + fair-share 0") != NULL, "%s", text);
	cr_expect(strstr(text, "your fair-share: 0.875000 (account rig") != NULL, "%s", text);
	cr_expect(strstr(text, "you could: a shorter time limit") != NULL, "%s", text);
	free(text);
	pending_free(&w);
}

/* No plan yet, priority/basic (sprio's two-line complaint), and a job
 * that has started since: each said for what it is. */
Test(pending, no_plan_basic_priority_and_a_job_that_started)
{
	static const char basic[] =
	    M " queue\n"
	    "PENDING|Priority|polar,grizzly|4:00:00|2|32|gres:gpu:8|2026-12-05T07:25:46|rig\n"
	    M " start\n"
	    "N/A|(null)\n"
	    M " sprio\n"
	    "You are not running a supported priority plugin\n(priority/basic).\n"
	    "Only 'priority/multifactor' is supported.\n"
	    M " sshare\n"
	    "sshare: error: Problem talking to the database: Connection refused\n"
	    M " end\n";
	static const char started[] =
	    M " queue\n"
	    "RUNNING|None|polar|30:00|1|1|gres:gpu:2|2026-12-05T07:25:46|rig\n"
	    M " start\n" M " sprio\n" M " sshare\n" M " end\n";
	static const char gone[] =
	    M " queue\n"
	    "slurm_load_jobs error: Invalid job id specified\n"
	    M " start\n" M " sprio\n" M " sshare\n" M " end\n";
	struct pending_why w;
	char **lines, *text;
	size_t n;

	cr_assert_eq(pending_parse(basic, NONCE, &w), 0);
	cr_expect_str_eq(w.start, "");
	cr_expect_str_eq(w.priority, "");
	n = pending_lines(&w, 0, &lines);
	text = joined(lines, n);
	cr_expect(strstr(text, "jobs of higher priority are ahead of it") != NULL, "%s", text);
	cr_expect(strstr(text, "asked: 2 nodes, 32 CPUs, gres:gpu:8, time limit 4:00:00, "
	    "partitions polar,grizzly") != NULL, "%s", text);
	cr_expect(strstr(text, "estimated start: none yet") != NULL, "%s", text);
	cr_expect(strstr(text, "first come, first served (priority/basic)") != NULL, "%s", text);
	cr_expect(strstr(text, "sshare gave none: sshare: error: Problem talking") != NULL, "%s",
	    text);
	free(text);
	pending_free(&w);

	cr_assert_eq(pending_parse(started, NONCE, &w), 0);
	n = pending_lines(&w, 0, &lines);
	text = joined(lines, n);
	cr_expect_str_eq(text, "Why it waits: it does not: SLURM says RUNNING\n");
	free(text);
	pending_free(&w);

	cr_assert_eq(pending_parse(gone, NONCE, &w), 0);
	n = pending_lines(&w, 0, &lines);
	text = joined(lines, n);
	cr_expect(strstr(text, "no longer lists it") != NULL, "%s", text);
	free(text);
	pending_free(&w);

	cr_expect_eq(pending_parse("PENDING|Resources\n", NONCE, &w), -1, "no marks: not ours");
	cr_expect_eq(pending_parse(planned, "fedcba9876543210", &w), -1, "another nonce's");
}

Test(pending, the_reasons_in_words)
{
	static const struct { const char *reason, *words; int advice; } cases[] = {
		{ "Priority", "higher priority", 1 },
		{ "Resources", "next in line", 1 },
		{ "Dependency", "depends on", 0 },
		{ "DependencyNeverSatisfied", "never start", 1 },
		{ "BeginTime", "--begin", 0 },
		{ "JobHeldUser", "held by you", 1 },
		{ "JobHeldAdmin", "administrator", 1 },
		{ "ReqNodeNotAvail, UnavailableNodes:node03", "down, drained or reserved", 1 },
		{ "PartitionTimeLimit", "MaxTime", 1 },
		{ "QOSMaxJobsPerUserLimit", "as many jobs as its QOS", 1 },
		{ "QOSGrpGRES", "QOS's group limit", 1 },
		{ "QOSMaxWallDurationPerJobLimit", "above its QOS's maximum", 1 },
		{ "QOSGrpMemLimit", "QOS's group limit", 1 },
		{ "AssocGrpGRES", "account's group limit", 1 },
		{ "AssocGrpBillingMinutes", "budget", 1 },
		{ "AssocMaxJobsLimit", "as many jobs as your account", 1 },
		{ "launch failed requeued held", "could not launch", 1 },
		{ "None", "not looked at it yet", 0 },
		{ "SomethingNew", "does not know", 0 },
		{ "", "no reason", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *advice = "unset";
		const char *w = pending_reason_words(cases[i].reason, &advice);
		cr_expect(strstr(w, cases[i].words) != NULL, "%s: %s", cases[i].reason, w);
		cr_expect_eq(advice != NULL, cases[i].advice, "%s: advice %s", cases[i].reason,
		    advice ? advice : "none");
	}
}

/* The explanation is asked on demand only: `squeue --start` makes the
 * controller simulate the job's start, sprio and sshare read the
 * priority state; a poll every few seconds asks none of them. */
Test(pending, the_poll_never_asks_why)
{
	const char *ids[] = { "41", "42_3" };
	struct slurm_history h = { 0 };
	char *cmd = slurm_poll_command(ids, 2, &h, NONCE);

	cr_expect(strstr(cmd, "--start") == NULL, "%s", cmd);
	cr_expect(strstr(cmd, "sprio") == NULL, "%s", cmd);
	cr_expect(strstr(cmd, "sshare") == NULL, "%s", cmd);
	free(cmd);
	cmd = pending_command("41", NONCE);
	cr_expect(strstr(cmd, "squeue --start -h -j 41 ") != NULL, "%s", cmd);
	cr_expect(strstr(cmd, "sprio -h -j 41 ") != NULL, "%s", cmd);
	free(cmd);
}

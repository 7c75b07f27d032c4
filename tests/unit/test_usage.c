/* Live GPU use: the sampling command's answer read back, and the flags
 * worked out across rounds (engine/usage.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/track/usage.h"
#include "util/xmalloc.h"

#define NONCE "0123456789abcdef"

static const struct use_job two[] = {
	{ "101", "tao-a", 1, 3 },
	{ "102", NULL, 2, -1 },
};

Test(usage, the_command_asks_each_plain_job_once_in_one_command)
{
	const struct use_job jobs[] = { { "7", NULL, 1, -1 }, { "8_1", NULL, 1, -1 },
	    { "9;reboot", NULL, 1, -1 }, { "10", NULL, 2, -1 } };
	char *cmd = use_command(jobs, 4, NONCE);

	cr_expect_not_null(strstr(cmd, "s 7 1 &\n"), "%s", cmd);
	cr_expect_not_null(strstr(cmd, "s 10 2 &\n"), "%s", cmd);
	cr_expect_null(strstr(cmd, "8_1"), "an array task's id is not a --jobid: %s", cmd);
	cr_expect_null(strstr(cmd, "reboot"), "a word that is not an id reached the command: %s", cmd);
	cr_expect_not_null(strstr(cmd, "srun --overlap --jobid="), "%s", cmd);
	cr_expect_not_null(strstr(cmd, "--query-gpu=index,utilization.gpu,memory.used,memory.total"),
	    "%s", cmd);
	free(cmd);
}

Test(usage, an_answer_is_read_per_job_and_per_gpu_others_lines_ignored)
{
	const char *out =
	    NONCE " 101 G node01 0, 97, 61440, 81559\n"
	    NONCE " 101 G node01 1, 95, 61447, 81559\n"
	    NONCE " 101 C node01 1.50 2048 1764547200\n"
	    NONCE " 101 R 0\n"
	    "ffffffffffffffff 101 G node01 2, 0, 0, 81559\n"	/* another nonce: forged */
	    NONCE " 999 G node09 0, 50, 1, 2\n"			/* a job not asked about */
	    NONCE " 102 srun: error: Unable to create step for job 102: Job/step already completing\n"
	    NONCE " 102 R 1\n";
	struct use_round r;

	use_parse(out, NONCE, two, 2, &r);
	cr_assert_eq(r.n, 2);
	cr_expect_null(r.unavailable);
	cr_expect(r.jobs[0].ok);
	cr_assert_eq(r.jobs[0].ngpu, 2);
	cr_expect_str_eq(r.jobs[0].gpu[0].node, "node01");
	cr_expect_eq(r.jobs[0].gpu[0].util, 97);
	cr_expect_eq(r.jobs[0].gpu[1].mem_used, 61447);
	cr_expect_eq(r.jobs[0].gpu[1].mem_total, 81559);
	cr_expect_float_eq(r.jobs[0].load, 1.5, 1e-9);
	cr_expect_eq(r.jobs[0].rss_kib, 2048);
	cr_expect_eq(r.jobs[0].at, 1764547200, "the time on the node, not when it was read");
	cr_expect_eq(use_mean_util(&r.jobs[0]), 96);
	{
		char mem[32];
		use_mem_text(&r.jobs[0], mem, sizeof(mem));
		cr_expect_str_eq(mem, "60.0/79.6G");
	}
	cr_expect_not(r.jobs[1].ok);
	cr_expect_eq(r.jobs[1].ngpu, 0);
	cr_expect(strstr(r.jobs[1].error, "Unable to create step") != NULL, "%s", r.jobs[1].error);
	use_round_free(&r);
}

/* What nvidia-smi prints where a device cannot say: a MIG-enabled GPU's
 * utilization is "[N/A]" (its table shows "N/A" under GPU-Util), a vGPU's
 * or an old board's field "[Not Supported]". A reading, not an error: the
 * rest of the line is kept, the mean is of what could be read, and a job
 * none of whose GPUs can say is "n/a", never 0 % (which would call it
 * idle). */
Test(usage, n_a_and_not_supported_fields_are_unknown_readings_not_errors)
{
	const char *out =
	    NONCE " 101 G node01 0, [N/A], 61440, 81559\n"
	    NONCE " 101 G node01 1, 90, [Not Supported], 81559\n"
	    NONCE " 101 C node01 1.50 2048 1764547200\n"
	    NONCE " 101 R 0\n"
	    NONCE " 102 G node02 0, [N/A], 100, 81559\n"
	    NONCE " 102 G node02 1, [N/A], [N/A], [N/A]\n"
	    NONCE " 102 G node02 2, [Bogus], 1, 2\n"
	    NONCE " 102 R 0\n";
	struct use_round r;
	char mem[32];

	use_parse(out, NONCE, two, 2, &r);
	cr_assert_eq(r.n, 2);
	cr_expect(r.jobs[0].ok, "%s", r.jobs[0].error);
	cr_assert_eq(r.jobs[0].ngpu, 2);
	cr_expect_eq(r.jobs[0].gpu[0].util, USE_UNKNOWN);
	cr_expect_eq(r.jobs[0].gpu[0].mem_used, 61440);
	cr_expect_eq(r.jobs[0].gpu[1].util, 90);
	cr_expect_eq(r.jobs[0].gpu[1].mem_used, USE_UNKNOWN);
	cr_expect_eq(use_mean_util(&r.jobs[0]), 90, "the mean of what could be read");
	use_mem_text(&r.jobs[0], mem, sizeof(mem));
	cr_expect_str_eq(mem, "60.0/79.6G");
	cr_assert_eq(r.jobs[1].ngpu, 2, "the [Bogus] line is not a reading");
	cr_expect_eq(use_mean_util(&r.jobs[1]), USE_UNKNOWN);
	cr_expect(strstr(r.jobs[1].error, "[Bogus]") != NULL, "%s", r.jobs[1].error);
	use_round_free(&r);
}

/* Rounds in which no GPU's use can be read never make a job idle. */
Test(usage, a_job_whose_use_cannot_be_read_is_never_called_idle)
{
	struct use_tracker *t = use_tracker_new();
	const struct use_limits lim = { 5, 600, 1800 };
	struct use_job j = { "101", "tao-a", 1, -1 };
	int64_t now = 1000000;
	int k;

	for (k = 0; k < 40; k++, now += 60000) {
		struct use_round r;
		struct job_use *o;
		struct use_event *ev;
		size_t n, nev;
		memset(&r, 0, sizeof(r));
		r.jobs = xcalloc(1, sizeof(*r.jobs));
		r.n = 1;
		snprintf(r.jobs[0].slurm_id, sizeof(r.jobs[0].slurm_id), "101");
		r.jobs[0].ok = 1;
		r.jobs[0].ngpu = 1;
		r.jobs[0].gpu[0].util = USE_UNKNOWN;
		use_tracker_fold(t, &r, &j, 1, &lim, now, &o, &n, &ev, &nev);
		cr_assert_eq(n, 1);
		cr_expect_not(o[0].idle, "round %d: called idle", k);
		cr_expect_eq(o[0].nhist, 0, "an unknown round in the history");
		cr_expect_eq(nev, 0);
		free(o);
		use_events_free(ev, nev);
		use_round_free(&r);
	}
	use_tracker_free(t);
}

Test(usage, no_nvidia_smi_on_every_node_or_no_overlap_makes_the_cluster_unavailable)
{
	struct use_round r;

	use_parse(NONCE " 101 X node01\n" NONCE " 101 C node01 0.1 10\n" NONCE " 101 R 0\n"
	    NONCE " 102 X node02\x1b]0;x\x07\n" NONCE " 102 R 0\n", NONCE, two, 2, &r);
	cr_assert_not_null(r.unavailable);
	cr_expect_str_eq(r.unavailable, "nvidia-smi is not on the nodes' PATH (node01)");
	use_round_free(&r);

	use_parse(NONCE " 101 srun: unrecognized option '--overlap'\n" NONCE " 101 R 1\n",
	    NONCE, two, 1, &r);
	cr_assert_not_null(r.unavailable);
	cr_expect(strstr(r.unavailable, "--overlap") != NULL, "%s", r.unavailable);
	use_round_free(&r);

	/* One job without an answer (it timed out) is that job's trouble only. */
	use_parse(NONCE " 101 G node01 0, 97, 1, 2\n" NONCE " 101 R 0\n" NONCE " 102 R 124\n",
	    NONCE, two, 2, &r);
	cr_expect_null(r.unavailable);
	cr_expect(r.jobs[0].ok);
	cr_expect(strstr(r.jobs[1].error, "no answer from its nodes") != NULL, "%s", r.jobs[1].error);
	use_round_free(&r);
}

/* A round where job 101's GPUs are all at util %, at epoch `epoch`. */
static void round_at(struct use_round *r, int util)
{
	memset(r, 0, sizeof(*r));
	r->jobs = xcalloc(1, sizeof(*r->jobs));
	r->n = 1;
	snprintf(r->jobs[0].slurm_id, sizeof(r->jobs[0].slurm_id), "101");
	r->jobs[0].ok = 1;
	r->jobs[0].ngpu = 2;
	r->jobs[0].gpu[0].util = util;
	r->jobs[0].gpu[1].util = util;
}

static size_t fold(struct use_tracker *t, int util, int epoch, int64_t now_ms, struct job_use *u,
    char **text)
{
	const struct use_limits lim = { 5, 600, 1800 };
	struct use_job j = { "101", "tao-a", 1, epoch };
	struct use_round r;
	struct job_use *out;
	struct use_event *ev;
	size_t n, nev;

	round_at(&r, util);
	use_tracker_fold(t, &r, &j, 1, &lim, now_ms, &out, &n, &ev, &nev);
	cr_assert_eq(n, 1);
	*u = out[0];
	*text = nev > 0 ? xstrdup(ev[0].text) : NULL;
	if (nev > 0)
		cr_expect_str_eq(ev[0].record_id, "tao-a");
	free(out);
	use_events_free(ev, nev);
	use_round_free(&r);
	return nev;
}

Test(usage, idle_gpus_are_flagged_once_after_the_time_and_cleared_by_work)
{
	struct use_tracker *t = use_tracker_new();
	struct job_use u;
	char *text = NULL;
	int64_t m = 60000;

	cr_expect_eq(fold(t, 97, 1, 1 * m, &u, &text), 0);
	cr_expect_eq(fold(t, 3, 2, 2 * m, &u, &text), 0, "idle for no time yet");
	cr_expect_eq(fold(t, 0, 3, 11 * m, &u, &text), 0, "9 minutes is not 10");
	cr_expect_not(u.idle);
	cr_expect_eq(fold(t, 0, 4, 12 * m, &u, &text), 1);
	cr_expect(u.idle);
	cr_expect_str_eq(text, "GPUs idle: every GPU below 5 % for 10 min");
	free(text);
	cr_expect_eq(fold(t, 0, 5, 13 * m, &u, &text), 0, "flagged once, not every round");
	cr_expect(u.idle);
	cr_expect_eq(fold(t, 50, 6, 14 * m, &u, &text), 0);
	cr_expect_not(u.idle, "work clears the flag");
	cr_expect_eq(u.nhist, 6);
	cr_expect_eq(u.hist[0], 97);
	cr_expect_eq(u.hist[5], 50);
	use_tracker_free(t);
}

Test(usage, progress_that_stops_moving_is_flagged_the_same_way)
{
	struct use_tracker *t = use_tracker_new();
	struct job_use u;
	char *text = NULL;
	int64_t m = 60000;

	cr_expect_eq(fold(t, 97, -1, 0, &u, &text), 0, "no epoch yet: nothing to judge");
	cr_expect_eq(fold(t, 97, 7, 1 * m, &u, &text), 0);
	cr_expect_eq(fold(t, 97, 7, 30 * m, &u, &text), 0, "29 minutes is not 30");
	cr_expect_eq(fold(t, 97, 7, 31 * m, &u, &text), 1);
	cr_expect(u.stalled);
	cr_expect_not(u.idle, "busy GPUs, stopped progress: only the one flag");
	cr_expect_str_eq(text, "progress stopped: epoch 7 for 30 min");
	free(text);
	cr_expect_eq(fold(t, 97, 8, 32 * m, &u, &text), 0);
	cr_expect_not(u.stalled);
	use_tracker_free(t);
}

Test(usage, a_job_that_stops_being_watched_is_forgotten)
{
	struct use_tracker *t = use_tracker_new();
	const struct use_limits lim = { 5, 600, 1800 };
	struct use_round r;
	struct job_use *out, u;
	struct use_event *ev;
	size_t n, nev;
	char *text = NULL;

	fold(t, 0, -1, 1000, &u, &text);
	memset(&r, 0, sizeof(r));
	use_tracker_fold(t, &r, NULL, 0, &lim, 2000, &out, &n, &ev, &nev);
	cr_expect_eq(n, 0);
	free(out);
	use_events_free(ev, nev);
	/* Back: a fresh history. */
	fold(t, 0, -1, 3000, &u, &text);
	cr_expect_eq(u.nhist, 1);
	use_tracker_free(t);
}

Test(usage, the_monitors_round_reads_the_last_answer_and_starts_the_next_behind)
{
	char *cmd = use_command_behind(two, 2, NONCE, "feedfacefeedface");

	/* In the user's own folder, not a shared /tmp. */
	cr_expect_not_null(strstr(cmd, "umask 077; d0=\"$HOME/.cache/taotop\""), "%s", cmd);
	cr_expect_not_null(strstr(cmd, "f=\"$d0/gpu-feedfacefeedface\""), "%s", cmd);
	cr_expect(strstr(cmd, "cat \"$f.out\"") < strstr(cmd, "sh -c \"$r\""),
	    "the last answer is read before the next round starts: %s", cmd);
	/* Detached: no descriptor of the channel stays with it. */
	cr_expect_not_null(strstr(cmd, "</dev/null >/dev/null 2>&1 &"), "%s", cmd);
	cr_expect_not_null(strstr(cmd, "flock -n 9"), "%s", cmd);
	cr_expect_not_null(strstr(cmd, "echo \"@@taotop-gpu-started " NONCE "\""), "%s", cmd);
	free(cmd);
}

Test(usage, a_round_starts_ten_jobs_steps_at_a_time)
{
	struct use_job jobs[11];
	char ids[11][16], *cmd;
	int i;

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < 11; i++) {
		snprintf(ids[i], sizeof(ids[i]), "%d", i + 1);
		jobs[i].slurm_id = ids[i];
		jobs[i].nodes = 1;
	}
	cmd = use_command(jobs, 11, NONCE);
	cr_expect_not_null(strstr(cmd, "s 9 1 &\ns 10 1 &\nwait\ns 11 1 &\nwait\n"), "%s", cmd);
	cr_expect_null(strstr(cmd, "wait\ns 2 1"), "%s", cmd);
	free(cmd);
}

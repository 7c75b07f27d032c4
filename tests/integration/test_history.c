/*
 * Rows that keep what they were, and history from accounting, from the
 * user's side on the local cluster: a finished taotop job keeps its
 * partition, GPUs and times, in one format, in `taotop jobs`, `--json`,
 * `status` and the monitor (with its TAO progress in the detail view); jobs
 * that ended while nothing watched are listed by the monitor at its start
 * and by `taotop jobs --since`; a cancelled pending job never shows
 * Running; a day's time limit is never cut.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "integration/helper_user.h"
#include "util/xmalloc.h"

static void cleanup(void)
{
	screen_kill_all();
}

TestSuite(history, .fini = cleanup);

/* A user's job of its own (not taotop's), ended as `want` says, and in
 * accounting's window as sacct -S lists it: on SLURM 22.05 a job that just
 * ended is there a few seconds after `sacct -j` gives its final state. */
static char *ended_job(const char *name, const char *script, const char *want)
{
	char *opts = xasprintf("-J %s -t 5 -o /dev/null", name);
	char *id = rig_sbatch(opts, script), *cmd, *out = NULL;
	time_t end = time(NULL) + 60;

	free(rig_wait_state(id, want, 60));
	cmd = xasprintf("sacct -X -n -P -S now-1days -o JobIDRaw | grep -qx %s", id);
	while (rig_ssh(cmd, &out) != 0 && time(NULL) < end) {
		free(out);
		out = NULL;
		sleep(1);
	}
	free(out), free(cmd), free(opts);
	return id;
}

#define TIME_RE	"[0-9]{2}:[0-5][0-9]:[0-5][0-9]"

Test(history, a_finished_jobs_row_keeps_partition_gpus_and_times_everywhere, .timeout = 300)
{
	struct user u;
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 40 };
	char *b, *id, *out = NULL, *row, *args;
	cJSON *st, *arr, *o;

	user_open(&u, "rowkeep", NULL);
	b = user_bundle(&u, "rowkeep", NULL, NULL);	/* half an hour: "00:30:00" */
	id = user_submit(&u, b, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	cr_assert_str_eq(json_str(st, "state"), "Done", "%s", json_str(st, "message"));
	cJSON_Delete(st);

	/* taotop jobs: the row as it ran, time and limit in one format. */
	cr_assert_eq(rig_taotop(u.env, "jobs", &out), 0, "%s", out);
	row = text_line_with(out, id);
	cr_assert_not_null(row, "%s is not listed:\n%s", id, out);
	cr_expect(rig_matches(row, " polar +1x1 +Done +COMPLETED +" TIME_RE "/00:30:00 "),
	    "partition, NxG, state and TIME/LIMIT (one format) lost: %s", row);
	free(row), free(out);

	/* --json: the same in the one format, and seconds as numbers. */
	arr = user_json_array(&u, "jobs --json", &out);
	o = json_find(arr, "id", id);
	cr_assert_not_null(o, "%s", out);
	cr_expect_str_eq(json_str(o, "partition"), "polar");
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "nodes")), 1);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "gpus")), 1);
	cr_expect_str_eq(json_str(o, "time_limit"), "00:30:00");
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "time_limit_s")), 1800);
	cr_expect(rig_matches(json_str(o, "elapsed"), "^" TIME_RE "$"), "elapsed '%s'",
	    json_str(o, "elapsed"));
	{
		double s_ = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "elapsed_s"));
		char want[16];
		snprintf(want, sizeof(want), "%02d:%02d:%02d", (int)s_ / 3600, (int)s_ / 60 % 60,
		    (int)s_ % 60);
		cr_expect(s_ >= 0 && s_ < 600, "elapsed_s %g", s_);
		cr_expect_str_eq(json_str(o, "elapsed"), want, "the string and the seconds agree");
	}
	cr_expect_str_eq(json_str(o, "exit_code"), "0:0");
	cJSON_Delete(arr);
	free(out);

	/* status: the same line of resources. */
	args = xasprintf("status %s", id);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect(rig_matches(out, "partition polar, nodes x GPUs 1x1, time " TIME_RE "/00:30:00"),
	    "%s", out);
	free(out), free(args);

	/* The monitor: the same row; its detail keeps TAO's progress. */
	so.env = u.env;
	screen_open(&s, "rowkeep", &so);
	screen_filter(&s, id);
	screen_wait_line(&s, 20, id, "polar", "1x1", "/00:30:00", "Done", NULL);
	row = screen_line_with(&s, id);
	cr_expect(rig_matches(row, " " TIME_RE "/00:30:00( |$)"), "the monitor's time: %s", row);
	free(row);
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "progress: epoch 1 of 1", "loss per epoch", NULL);
	screen_wait(&s, 5, "resources: polar, 1 node x 1 GPU, used ", NULL);
	screen_keys(&s, "Escape");
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(b), free(id);
	user_close(&u);
}

Test(history, jobs_since_lists_a_job_that_ended_before_the_command_ran, .timeout = 180)
{
	struct user u;
	char name[64], fname[64], *done, *failed, *out = NULL, *row;
	cJSON *arr, *o;

	snprintf(name, sizeof(name), "since%d", rig_uniq());
	snprintf(fname, sizeof(fname), "sincef%d", rig_uniq());
	user_open(&u, "since", NULL);
	done = ended_job(name, "true", "COMPLETED");
	failed = ended_job(fname, "'exit 3'", "FAILED");

	/* Without --since, the queue only: neither was ever seen there. */
	cr_assert_eq(rig_taotop(u.env, "jobs", &out), 0, "%s", out);
	cr_expect_null(strstr(out, name), "listed without --since:\n%s", out);
	free(out);

	cr_assert_eq(rig_taotop(u.env, "jobs --since 1d", &out), 0, "%s", out);
	row = text_line_with(out, name);
	cr_assert_not_null(row, "jobs --since 1d does not list %s:\n%s", name, out);
	cr_expect(strstr(row, done) != NULL && rig_matches(row, " Done +COMPLETED +" TIME_RE
	    "/00:05:00"), "%s", row);
	free(row);
	row = text_line_with(out, fname);
	cr_assert_not_null(row, "%s", out);
	cr_expect(rig_matches(row, " Error +FAILED +" TIME_RE "/00:05:00 +exit code 3:0"), "%s", row);
	free(row), free(out);

	/* status finds what jobs --since lists, from accounting. */
	{
		char *args = xasprintf("status %s", done), *want;
		cr_expect_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
		want = xasprintf("Done  (SLURM %s, COMPLETED)", done);
		cr_expect_not_null(strstr(out, want), "taotop status %s: %s", done, out);
		free(want), free(out), free(args);
		args = xasprintf("status %s", failed);
		cr_expect_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
		cr_expect(rig_matches(out, "Error  \\(SLURM [0-9]+, FAILED\\)"), "%s", out);
		free(out), free(args);
	}

	arr = user_json_array(&u, "jobs --since 12h --json", &out);
	o = json_find(arr, "slurm_id", failed);
	cr_assert_not_null(o, "%s", out);
	cr_expect_str_eq(json_str(o, "state"), "Error");
	cr_expect_str_eq(json_str(o, "exit_code"), "3:0");
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "time_limit_s")), 300);
	cJSON_Delete(arr);
	free(out);

	/* A span that is none is refused, naming it. */
	cr_expect_eq(rig_taotop(u.env, "jobs --since 7x", &out), 2, "%s", out);
	cr_expect_not_null(strstr(out, "'7x'"), "%s", out);
	free(out);
	free(done), free(failed);
	user_close(&u);
}

Test(history, a_job_that_ended_while_the_monitor_was_closed_appears_at_its_start, .timeout = 180)
{
	struct screen s;
	struct screen_opts so = { .cols = 140, .lines = 40 };
	char name[64], *ok, *bad, *line;

	snprintf(name, sizeof(name), "closed%d", rig_uniq());
	/* Both start and end before the monitor ever polls. */
	{
		char n1[80], n2[80];
		snprintf(n1, sizeof(n1), "%s-ok", name);
		snprintf(n2, sizeof(n2), "%s-bad", name);
		ok = ended_job(n1, "true", "COMPLETED");
		bad = ended_job(n2, "'exit 3'", "FAILED");
	}
	screen_open(&s, "closed", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 20, ok, "-ok", "Done", "COMPLETED", NULL);
	screen_wait_line(&s, 20, bad, "-bad", "Error", "FAILED", "exit code 3:0", NULL);
	line = screen_line_with(&s, bad);
	cr_expect(rig_matches(line, " " TIME_RE "/00:05:00( |$)"), "%s", line);
	free(line);
	/* f hides the finished ones, and shows them again. */
	screen_keys(&s, "f");
	screen_wait(&s, 5, "finished hidden", NULL);
	/* Said, with how many: not "no jobs yet". */
	screen_wait(&s, 5, "no live job matches the filter: 2 finished hidden (f shows them)",
	    NULL);
	screen_wait(&s, 5, "2 finished hidden", NULL);
	cr_expect_eq(screen_row_of(&s, "no jobs yet"), -1);
	line = screen_line_with(&s, bad);
	cr_expect_null(line, "a finished job shown with finished jobs hidden: %s", line);
	free(line);
	screen_keys(&s, "f");
	screen_wait_line(&s, 5, bad, "Error", NULL);
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(ok), free(bad);
}

Test(history, a_cancelled_pending_job_never_shows_running, .timeout = 120)
{
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	char name[64], opts[128], *id, *line;
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	int samples = 0, seen_row = 0;

	snprintf(name, sizeof(name), "pendcan%d", rig_uniq());
	snprintf(opts, sizeof(opts), "--hold -J %s -t 5 -o /dev/null", name);
	id = rig_sbatch(opts, "'sleep 60'");
	screen_open(&s, "pendcan", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 20, id, "Pending", NULL);
	screen_keys(&s, "c");
	screen_wait(&s, 5, "Cancel 1 job?", NULL);
	screen_keys(&s, "y");
	/* Every frame from the cancel until it is final, and a few polls after
	 * (TAOTOP_POLL_S=1): never Running, under the outcome dialog and after
	 * it closes. */
	for (samples = 0; samples < 80; samples++) {
		if (samples == 40) {
			screen_wait_line(&s, 20, id, "cancelled", NULL);
			screen_keys(&s, "Enter");
		}
		line = screen_line_with(&s, id);
		if (line != NULL) {
			seen_row++;
			cr_assert_null(strstr(line, "Running"), "a cancelled pending job shown Running: %s",
			    line);
		}
		free(line);
		nanosleep(&pause, NULL);
	}
	cr_expect_gt(seen_row, 0);
	screen_wait_line(&s, 20, id, "Canceled", NULL);
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(id);
}

Test(history, a_day_long_limit_is_shown_whole, .timeout = 120)
{
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	char name[64], opts[128], *id, *line, *out = NULL, *cmd;

	snprintf(name, sizeof(name), "dayl%d", rig_uniq());
	/* cpu_long allows 7 days; polar's 4 hours would refuse it. */
	snprintf(opts, sizeof(opts), "-p cpu_long -J %s -t 1-00:00:00 -o /dev/null", name);
	id = rig_sbatch(opts, "'sleep 120'");
	screen_open(&s, "daylimit", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 30, id, "/1-00:00:00", NULL);
	line = screen_line_with(&s, id);
	cr_expect(rig_matches(line, " " TIME_RE "/1-00:00:00( |$)"), "the limit cut: %s", line);
	free(line);
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	cr_assert_eq(rig_taotop(NULL, "jobs", &out), 0, "%s", out);
	line = text_line_with(out, name);
	cr_assert_not_null(line, "%s", out);
	cr_expect(rig_matches(line, " " TIME_RE "/1-00:00:00( |$)"), "%s", line);
	free(line), free(out);
	cmd = xasprintf("scancel %s", id);
	free(rig_ssh_ok(cmd));
	free(cmd), free(id);
}

/* Accounting's final State word and Elapsed of SLURM job id, once it has
 * them ("CANCELLED", "00:00:07"). */
static void acct_final(const char *id, char *state, size_t ssz, char *elapsed, size_t esz)
{
	char *cmd = xasprintf("sacct -X -n -P -j %s -o State,Elapsed", id), *out = NULL;
	time_t end = time(NULL) + 60;

	state[0] = elapsed[0] = '\0';
	while (time(NULL) < end) {
		if (rig_ssh(cmd, &out) == 0 && out[0] != '\0' && strncmp(out, "RUNNING", 7) != 0 &&
		    strncmp(out, "PENDING", 7) != 0 && strchr(out, '|') != NULL) {
			snprintf(state, ssz, "%.*s", (int)strcspn(out, " |+\n"), out);
			snprintf(elapsed, esz, "%.*s", (int)strcspn(strchr(out, '|') + 1, "\n"),
			    strchr(out, '|') + 1);
			break;
		}
		free(out);
		out = NULL;
		sleep(1);
	}
	free(out), free(cmd);
	cr_assert(state[0] != '\0', "accounting never gave job %s a final state", id);
}

/*
 * A job cancelled through taotop ends as accounting says, like any other
 * job: not SLURM's RUNNING and the time it had at the cancel, for good.
 * The monitor's next poll shows it (and a filter on Running no longer
 * lists it); after the monitor is closed, `jobs`, `jobs --since`, `status`
 * and the monitor opened again say the same.
 */
Test(history, a_job_cancelled_through_taotop_ends_as_accounting_says, .timeout = 300)
{
	struct user u;
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 40 };
	char *b, *id, *out = NULL, *line, *args, state[32], elapsed[32], re[96];
	const char *slurm;
	cJSON *arr, *o;

	user_open(&u, "cancelrow", NULL);
	b = user_bundle(&u, "cancelrow", "command: [sleep, '300']\n", NULL);
	id = user_submit(&u, b, &out);
	free(out);
	so.env = u.env;
	screen_open(&s, "cancelrow", &so);
	screen_filter(&s, id);
	screen_wait_line(&s, 120, id, "Running", "RUNNING", NULL);
	arr = user_json_array(&u, "jobs --json", &out);
	o = json_find(arr, "id", id);
	cr_assert_not_null(o, "%s", out);
	slurm = json_str(o, "slurm_id");
	cr_assert(slurm[0] != '\0', "%s", out);
	free(out);
	sleep(5);	/* so that its time at the cancel is not its end's */
	screen_keys(&s, "c");
	screen_wait(&s, 5, "Cancel 1 job?", NULL);
	screen_keys(&s, "y");
	screen_wait_line(&s, 20, "cancelled", NULL);
	screen_keys(&s, "Enter");
	acct_final(slurm, state, sizeof(state), elapsed, sizeof(elapsed));
	cr_assert_str_eq(state, "CANCELLED");

	/* The monitor's next poll: accounting's word and time. */
	screen_wait_line(&s, 30, id, "Canceled", "CANCELLED", elapsed, NULL);
	line = screen_line_with(&s, id);
	cr_expect_null(strstr(line, "RUNNING"), "%s", line);
	free(line);
	/* A filter on Running lists it no more. */
	screen_filter(&s, "Running");
	line = screen_line_with(&s, id);
	cr_expect_null(line, "a cancelled job listed under /Running: %s", line);
	free(line);
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	/* Every verb after the monitor is gone, each a new process. */
	{
		cJSON *now = user_json_array(&u, "jobs --json", &out), *r = json_find(now, "id", id);
		cr_assert_not_null(r, "%s", out);
		cr_expect_str_eq(json_str(r, "native_state"), "CANCELLED", "%s", out);
		cr_expect_str_eq(json_str(r, "elapsed"), elapsed, "%s", out);
		cr_expect_str_eq(json_str(r, "state"), "Canceled", "%s", out);
		cJSON_Delete(now);
		free(out);
	}
	snprintf(re, sizeof(re), " Canceled +CANCELLED +%s/00:30:00 ", elapsed);
	cr_assert_eq(rig_taotop(u.env, "jobs", &out), 0, "%s", out);
	line = text_line_with(out, id);
	cr_assert_not_null(line, "%s", out);
	cr_expect(rig_matches(line, re), "taotop jobs: %s (accounting: %s %s)", line, state, elapsed);
	free(line), free(out);
	cr_assert_eq(rig_taotop(u.env, "jobs --since 1d", &out), 0, "%s", out);
	line = text_line_with(out, id);
	cr_assert_not_null(line, "%s", out);
	cr_expect(rig_matches(line, re), "taotop jobs --since 1d: %s", line);
	free(line), free(out);
	args = xasprintf("status %s", id);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	line = xasprintf("Canceled  (SLURM %s, CANCELLED)", slurm);
	cr_expect_not_null(strstr(out, line), "taotop status: %s", out);
	free(line);
	line = xasprintf("time %s/00:30:00", elapsed);
	cr_expect_not_null(strstr(out, line), "taotop status: %s", out);
	free(line), free(out), free(args);

	/* The monitor opened again. */
	screen_open(&s, "cancelrow2", &so);
	screen_filter(&s, id);
	screen_wait_line(&s, 20, id, "Canceled", "CANCELLED", elapsed, NULL);
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	cJSON_Delete(arr);
	free(b), free(id);
	user_close(&u);
}

/*
 * Two runs of a sweep, named by the bundle's name: and by --name over it:
 * told apart in `taotop jobs` (and --json, status) and in the monitor; SLURM
 * gets the name as the job's comment, its job name stays taotop's id. A
 * name that is none is refused naming the field, before anything is sent.
 */
Test(history, two_named_runs_of_a_sweep_are_told_apart_in_jobs_and_the_monitor, .timeout = 300)
{
	struct user u;
	struct screen s;
	struct screen_opts so = { .cols = 140, .lines = 40 };
	char *b, *bad, *one, *two, *out = NULL, *args, *row, *cmd;
	cJSON *arr, *o;

	user_open(&u, "names", NULL);
	b = user_bundle(&u, "sweep", "command: [sleep, '120']\n", "name: lr-0.01\n");
	one = user_submit(&u, b, &out);
	free(out);
	args = xasprintf("%s --name lr-0.1", b);
	two = user_submit(&u, args, &out);
	free(out), free(args);

	cr_assert_eq(rig_taotop(u.env, "jobs", &out), 0, "%s", out);
	row = text_line_with(out, one);
	cr_assert_not_null(row, "%s", out);
	cr_expect(rig_matches(row, " lr-0\\.01 "), "the first run's row: %s", row);
	free(row);
	row = text_line_with(out, two);
	cr_assert_not_null(row, "%s", out);
	cr_expect(rig_matches(row, " lr-0\\.1 ") && strstr(row, "classification_pyt") == NULL,
	    "the second run's row: %s", row);
	free(row), free(out);

	arr = user_json_array(&u, "jobs --json", &out);
	o = json_find(arr, "id", two);
	cr_assert_not_null(o, "%s", out);
	cr_expect_str_eq(json_str(o, "name"), "lr-0.1");
	/* SLURM's view: the comment is the name, the job name the id. */
	cmd = xasprintf("squeue -h -j %s -o '%%j|%%k'", json_str(o, "slurm_id"));
	free(out);
	out = rig_ssh_ok(cmd);
	row = xasprintf("%s|lr-0.1", two);
	cr_expect_not_null(strstr(out, row), "squeue's name|comment: %s", out);
	free(row), free(out), free(cmd);
	cJSON_Delete(arr);

	args = xasprintf("status %s", one);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "  name lr-0.01 (classification_pyt train)"), "%s", out);
	free(out), free(args);

	/* The monitor: both, each under its own name. */
	so.env = u.env;
	screen_open(&s, "names", &so);
	screen_filter(&s, "lr-0.");
	screen_wait_line(&s, 30, one, "lr-0.01", NULL);
	screen_wait_line(&s, 30, two, "lr-0.1", NULL);
	row = screen_line_with(&s, two);
	cr_expect_null(strstr(row, "lr-0.01"), "%s", row);
	free(row);
	/* Its detail: the name and what it runs. */
	screen_filter(&s, two);
	screen_wait_line(&s, 10, two, "lr-0.1", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "name: lr-0.1   what: classification_pyt train", NULL);
	screen_keys(&s, "Escape");
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	/* Names that are none: refused, naming the field and what to write. */
	bad = user_bundle(&u, "badname", "command: [sleep, '120']\n", "name: 'lr 0.01'\n");
	args = xasprintf("submit %s --dry-run", bad);
	cr_expect_eq(rig_taotop(u.env, args, &out), 1, "a submit step failed: 1\n%s", out);
	cr_expect(strstr(out, "field 'name' has a space at character 3") != NULL, "%s", out);
	free(out), free(args);
	args = xasprintf("submit %s --dry-run --name 'a;b'", b);
	cr_expect_eq(rig_taotop(u.env, args, &out), 2, "a bad option value: 2\n%s", out);
	cr_expect(strstr(out, "--name has ';' at character 2: use letters, digits and") != NULL,
	    "%s", out);
	free(out), free(args);

	for (int k = 0; k < 2; k++) {
		args = xasprintf("cancel %s", k == 0 ? one : two);
		rig_taotop(u.env, args, &out);
		free(out), free(args);
	}
	free(b), free(bad), free(one), free(two);
	user_close(&u);
}

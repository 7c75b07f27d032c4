/*
 * A TAO job as its user writes it, from the user's side: the example bundle
 * that templates/example.spec.yaml and the README show, with its paths
 * pointed at the local cluster and nothing else changed, submitted with
 * `taotop submit` and followed with `taotop status --json`, trains through
 * the TAO stand-in (tests/cluster/) to Done; a spec that makes TAO fail ends
 * in Error with TAO's words; a command that names the staged files through
 * placeholders; every image form; the NCCL probe in the job's shape.
 */
#include <cJSON.h>
#include <math.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "bank_record_schema.h"
#include "engine/slurm/duration.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

/* A cached NCCL answer for the example's 8-GPU node: the probe has its own
 * test below. */
static const char *probed_config =
	"clusters:\n"
	"  rig:\n"
	"    nccl_env: \"NCCL_P2P_DISABLE=1\"\n"
	"    nccl_env_shape: \"1x8\"\n";

/* What `taotop status ID --json` said while the job ran: each ETA (in
 * seconds) with its epoch, and whether the STATE cell said Ending. */
struct watched {
	long	 eta[512];
	int	 epoch[512];
	size_t	 n;
	int	 ending;
};

/* What one answer says of the run (user_wait_final_each's hook). */
static void watch_one(const cJSON *o, void *arg)
{
	struct watched *w = arg;
	const cJSON *prog = cJSON_GetObjectItem(o, "progress");
	long eta;

	if (strcmp(json_str(o, "shown_state"), "Ending") == 0)
		w->ending = 1;
	if (strcmp(json_str(o, "state"), "Running") == 0 && prog != NULL &&
	    duration_parse(json_str(prog, "eta"), &eta) == 0 && w->n < 512) {
		w->eta[w->n] = eta;
		w->epoch[w->n++] = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "epoch"));
	}
}

/* user_wait_final, noting what each answer says of the run on the way. */
static cJSON *wait_final_watching(struct user *u, const char *id, int timeout_s, struct watched *w)
{
	memset(w, 0, sizeof(*w));
	return user_wait_final_each(u, id, timeout_s, watch_one, w);
}

/* The example bundle as shipped, paths pointed at the rig; the one edit is
 * the stand-in's own switch for a diverging loss at epoch 5 (a bare NaN in
 * TAO's kpi), which a real TAO run gives when it diverges. The stand-in
 * plays TAO 7.0.1: status.json in results_dir/train/, Lightning's 0-based
 * epochs, the success line "Train finished successfully.", never SUCCESS. */
Test(tao, the_example_bundle_trains_to_done_with_taos_own_command, .timeout = 420)
{
	static const char *const edits[][2] = {
		{ "  train:\n", "  stand_in:\n    nan_at_epoch: 5\n  train:\n" },
	};
	struct user u;
	struct watched w;
	char *out = NULL, *id, *bundle, *printed;
	cJSON *st, *prog, *series;
	size_t i, down = 0;

	user_open(&u, "example", probed_config);
	bundle = user_example_bundle(&u, edits, 1);
	/* The example bundle gives no command: TAO's own is what runs. */
	id = user_submit(&u, bundle, &out);
	free(out);
	st = wait_final_watching(&u, id, 360, &w);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	cr_expect_str_eq(json_str(st, "message"), "status.json: Train finished successfully.", "%s",
	    printed);
	prog = cJSON_GetObjectItem(st, "progress");
	cr_assert_not_null(prog, "no progress for a finished TAO job:\n%s", printed);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "max_epoch")), 80, "%s", printed);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "epoch")), 80,
	    "80 of 80, as the user counts:\n%s", printed);
	cr_expect_str_eq(json_str(prog, "metric"), "train_loss", "%s", printed);
	series = cJSON_GetObjectItem(prog, "series");
	cr_assert_eq(cJSON_GetArraySize(series), 80, "%s", printed);
	for (i = 0; i < 80; i++) {
		const cJSON *v = cJSON_GetArrayItem(series, (int)i);
		if (i == 4)
			cr_expect(cJSON_IsNull(v), "epoch 5's NaN is a gap (null):\n%s", printed);
		else
			cr_expect(cJSON_IsNumber(v), "epoch %zu is a number:\n%s", i + 1, printed);
	}
	/* While it ran: the ETA went down as the epochs went up, never 0 of 79. */
	cr_expect_geq(w.n, 3, "only %zu answers while it ran", w.n);
	for (i = 1; i < w.n; i++) {
		cr_expect(w.epoch[i] >= w.epoch[i - 1], "epoch went back: %d then %d", w.epoch[i - 1],
		    w.epoch[i]);
		cr_expect(w.epoch[i] >= 1 && w.epoch[i] <= 80, "epoch %d", w.epoch[i]);
		if (w.epoch[i] > w.epoch[i - 1]) {
			cr_expect_leq(w.eta[i], w.eta[i - 1], "the ETA went up: %ld s at epoch %d, "
			    "%ld s at %d", w.eta[i - 1], w.epoch[i - 1], w.eta[i], w.epoch[i]);
			down += w.eta[i] < w.eta[i - 1];
		}
	}
	cr_expect_geq(down, 1, "the ETA never went down");
	/* TAO read the spec taotop staged and wrote where TAO writes. */
	{
		char *cmd = xasprintf("cat %s/results/classification-run1/train/status.json | head -n 1",
		    u.remote);
		char *first = rig_ssh_ok(cmd);
		cr_expect(strstr(first, "\"STARTED\"") != NULL, "%s", first);
		free(first), free(cmd);
		cmd = xasprintf("grep -c . %s/jobs/%s/slurm-logs/*/main.out", u.remote, id);
		first = rig_ssh_ok(cmd);
		cr_expect(atoi(first) >= 80, "main.out has %s lines", first);
		free(first), free(cmd);
	}
	cr_expect(strstr(printed, "results/classification-run1/train/status.json") != NULL,
	    "the record keeps where the status file was found:\n%s", printed);
	free(printed);
	cJSON_Delete(st);
	free(id), free(bundle);
	user_close(&u);
}

/* The example with a few epochs and the stand-in's switches (YAML lines
 * under the spec's stand_in:), run to its end: the last status (caller
 * deletes); *idp the record id (caller frees). */
static cJSON *run_example(struct user *u, const char *stand_in, const char *train_extra,
    struct watched *w, char **idp)
{
	char *edits[2][2], *out = NULL, *bundle;
	cJSON *st;

	edits[0][0] = xstrdup("  train:\n");
	edits[0][1] = xasprintf("  stand_in:\n%s  train:\n", stand_in);
	edits[1][0] = xstrdup("    num_epochs: 80\n");
	edits[1][1] = xasprintf("    num_epochs: 4\n%s", train_extra ? train_extra : "");
	bundle = user_example_bundle(u, (const char *const (*)[2])edits, 2);
	*idp = user_submit(u, bundle, &out);
	free(out);
	st = wait_final_watching(u, *idp, 240, w);
	for (int i = 0; i < 2; i++)
		free(edits[i][0]), free(edits[i][1]);
	free(bundle);
	return st;
}

/* A TF-era container: SUCCESS in <results_dir>/status.json itself. */
Test(tao, the_tf_era_shape_trains_to_done_from_results_dir_status_json, .timeout = 300)
{
	struct user u;
	struct watched w;
	char *id, *printed;
	cJSON *st, *prog;

	user_open(&u, "tfera", probed_config);
	st = run_example(&u, "    shape: tf1\n", NULL, &w, &id);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	cr_expect_str_eq(json_str(st, "message"),
	    "status.json: SUCCESS: Training finished successfully.", "%s", printed);
	prog = cJSON_GetObjectItem(st, "progress");
	cr_assert_not_null(prog, "%s", printed);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "epoch")), 4, "%s", printed);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "max_epoch")), 4, "%s", printed);
	cr_expect(strstr(printed, "results/classification-run1/status.json") != NULL, "%s", printed);
	free(printed);
	cJSON_Delete(st);
	free(id);
	user_close(&u);
}

/* A RuntimeError (CUDA illegal memory access) writes no final line: Error,
 * saying where no final status was written. */
Test(tao, a_runtime_error_with_no_final_line_ends_in_error_saying_so, .timeout = 300)
{
	struct user u;
	struct watched w;
	char *id, *printed, *want;
	cJSON *st;

	user_open(&u, "runtime", probed_config);
	st = run_example(&u, "    fail_at_epoch: 2\n    fail_with: runtime\n", NULL, &w, &id);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Error", "%s", printed);
	want = xasprintf("no final status was written to %s/results/classification-run1/train/"
	    "status.json", u.remote);
	cr_expect(strstr(json_str(st, "message"), want) != NULL, "wanted '%s':\n%s", want, printed);
	free(want);
	free(printed);
	cJSON_Delete(st);
	free(id);
	user_close(&u);
}

/* Ctrl-C: TAO writes FAILURE "User/System interruption" and exits 0, so
 * SLURM says COMPLETED: Error, not Done. */
Test(tao, an_interrupted_run_exiting_0_ends_in_error_not_done, .timeout = 300)
{
	struct user u;
	struct watched w;
	char *id, *printed;
	cJSON *st;

	user_open(&u, "interrupt", probed_config);
	st = run_example(&u, "    interrupt_at_epoch: 2\n", NULL, &w, &id);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Error", "%s", printed);
	cr_expect_str_eq(json_str(st, "native_state"), "COMPLETED", "%s", printed);
	cr_expect_str_eq(json_str(st, "message"),
	    "status.json: FAILURE: User/System interruption: Train was interrupted", "%s", printed);
	free(printed);
	cJSON_Delete(st);
	free(id);
	user_close(&u);
}

/* The spec's train.results_dir moves TAO's status file: followed there.
 * The folder is inside the results folder (the container mounts that),
 * deeper than the bounded search looks, so the spec's rule found it. */
Test(tao, a_spec_setting_train_results_dir_is_followed_there, .timeout = 300)
{
	struct user u;
	struct watched w;
	char *id, *printed, *extra, *want;
	cJSON *st, *prog;

	user_open(&u, "taskdir", probed_config);
	/* 4 epochs of 5 s: long enough for an answer while it trains on a
	 * loaded machine (at the stand-in's 1 s one came only after the end). */
	extra = xasprintf("    results_dir: %s/results/classification-run1/custom/a/b/run1\n"
	    "    seconds_per_epoch: 5\n", u.remote);
	st = run_example(&u, "    numbering: from1\n", extra, &w, &id);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	cr_expect_str_eq(json_str(st, "message"), "status.json: Train finished successfully.", "%s",
	    printed);
	prog = cJSON_GetObjectItem(st, "progress");
	cr_assert_not_null(prog, "%s", printed);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "epoch")), 4, "%s", printed);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "max_epoch")), 4, "%s", printed);
	cr_expect_geq(w.n, 1, "no progress while it ran");
	want = xasprintf("\"status_path\":\t\"%s/results/classification-run1/custom/a/b/run1/"
	    "status.json\"", u.remote);
	cr_expect(strstr(printed, want) != NULL, "wanted %s:\n%s", want, printed);
	free(want), free(extra);
	free(printed);
	cJSON_Delete(st);
	free(id);
	user_close(&u);
}

/* TAO's success line, then a shutdown that never returns: Ending, then
 * cancelled after the cluster's grace so its GPUs are freed, recorded
 * Done with TAO's words, and the queue no longer holds it. */
Test(tao, a_run_that_hangs_after_its_success_line_is_cancelled_and_done, .timeout = 300)
{
	struct user u;
	struct watched w;
	char *id, *printed, *cmd, *q;
	const char *slurm_id;
	cJSON *st;

	user_open(&u, "hang", "clusters:\n  rig:\n    nccl_env: \"NCCL_P2P_DISABLE=1\"\n"
	    "    nccl_env_shape: \"1x8\"\n    ending_grace_seconds: 10\n");
	st = run_example(&u, "    hang_after_success: 1\n", NULL, &w, &id);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	cr_expect(strstr(json_str(st, "message"), "Train finished successfully.") != NULL &&
	    strstr(json_str(st, "message"), "cancelled by taotop to free its GPUs") != NULL,
	    "%s", printed);
	cr_expect(w.ending, "the row never said Ending");
	cr_expect(user_history_says(st, "while SLURM still runs the job: Ending"), "%s", printed);
	slurm_id = json_str(st, "slurm_id");
	cr_assert(slurm_id[0] != '\0', "%s", printed);
	q = xasprintf("squeue -h -j %s -o %%T", slurm_id);
	for (int i = 0; i < 15; i++) {
		cmd = rig_ssh_ok(q);
		if (cmd[0] == '\0' || strstr(cmd, "COMPLETING") == NULL)
			break;
		free(cmd);
		cmd = NULL;
		sleep(1);
	}
	cr_expect(cmd != NULL && cmd[0] == '\0', "squeue still lists it: %s", cmd ? cmd : "");
	free(cmd), free(q);
	free(printed);
	cJSON_Delete(st);
	free(id);
	user_close(&u);
}

Test(tao, a_spec_that_makes_tao_fail_ends_in_error_with_taos_words_not_retried, .timeout = 300)
{
	static const char *const edits[][2] = {
		{ "    num_epochs: 80\n", "    num_epochs: 80\n    fail_at_epoch: 3\n" },
	};
	struct user u;
	char *out = NULL, *id, *bundle, *printed;
	cJSON *st;

	user_open(&u, "fails", probed_config);
	bundle = user_example_bundle(&u, edits, 1);
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Error", "%s", printed);
	cr_expect(strstr(json_str(st, "message"), "status.json: FAILURE: File system error: ") != NULL,
	    "TAO's words, with its prefix: %s", printed);
	cr_expect(user_history_says(st, "the program's"), "classified as the program's:\n%s", printed);
	cr_expect(!user_history_says(st, "retry 1 of"), "retried:\n%s", printed);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "record"), "retried_as")),
	    "%s", printed);
	/* The same job as the skill bank's tools read a job record: valid
	 * against its schema, ERROR for good, the program's fault. */
	{
		char *args = xasprintf("status %s --bank-record", id), *bout = NULL;
		cJSON *bank, *tr;
		cr_assert_eq(rig_taotop(u.env, args, &bout), 0, "taotop %s:\n%s", args, bout);
		bank = cJSON_Parse(bout);
		cr_assert_not_null(bank, "not JSON:\n%s", bout);
		validate(bank);
		cr_expect_str_eq(json_str(bank, "id"), id, "%s", bout);
		cr_expect_str_eq(json_str(bank, "terminal_state"), "ERROR", "%s", bout);
		cr_expect_str_eq(json_str(bank, "err_class"), "ERR_PROGRAM", "%s", bout);
		cr_expect_str_eq(json_str(bank, "backend_ref"),
		    json_str(cJSON_GetObjectItem(st, "record"), "backend_ref"), "%s", bout);
		tr = cJSON_GetObjectItem(bank, "transitions");
		cr_expect_str_eq(json_str(cJSON_GetArrayItem(tr, 0), "state"), "PENDING", "%s", bout);
		cr_expect_str_eq(json_str(cJSON_GetArrayItem(tr, cJSON_GetArraySize(tr) - 1), "state"),
		    "ERROR", "the terminal move is the last:\n%s", bout);
		cJSON_Delete(bank);
		free(args), free(bout);
	}
	free(printed);
	cJSON_Delete(st);
	free(id), free(bundle);
	user_close(&u);
}

/* The bundle's command names the staged spec and results through
 * placeholders, and a script reads the same from the environment. */
Test(tao, a_command_reaches_what_taotop_staged_through_placeholders, .timeout = 300)
{
	static const char *const edits[][2] = {
		{ "action: train\n", "action: train\ncommand:\n  - sh\n  - -c\n"
		  "  - 'echo \"job $TAOTOP_JOB_ID spec $TAOTOP_SPEC\"; exec \"$@\"'\n  - taotop-test\n"
		  "  - classification_pyt\n  - train\n  - -e\n  - '{spec}'\n"
		  "  - 'results_dir={results_dir}'\n  - 'train.note={job_id} in {job_dir}'\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
		{ "    num_epochs: 80\n", "    num_epochs: 4\n" },
	};
	struct user u;
	char *out = NULL, *id, *bundle, *printed, *cmd, *text;
	cJSON *st;

	user_open(&u, "placeholders", probed_config);
	bundle = user_example_bundle(&u, edits, sizeof(edits) / sizeof(edits[0]));
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	printed = cJSON_Print(st);
	/* No results_dir: the job's own <job_dir>/results, where TAO wrote. */
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	cr_expect_str_eq(json_str(st, "message"), "status.json: Train finished successfully.", "%s",
	    printed);
	text = user_job_file(&u, id, "slurm-logs/*/main.out");
	{
		char *want = xasprintf("job %s spec %s/jobs/%s/specs/spec.yaml", id, u.remote, id);
		cr_expect(strstr(text, want) != NULL, "wanted '%s' in main.out:\n%s", want, text);
		free(want);
	}
	free(text);
	/* The word with a space stayed one word: TAO saw one override. */
	cmd = xasprintf("grep -c 'train.note=%s in %s/jobs/%s' %s/jobs/%s/sbatch/job_%s.sbatch",
	    id, u.remote, id, u.remote, id, id);
	text = rig_ssh_ok(cmd);
	cr_expect_eq(atoi(text), 1, "%s", text);
	free(text), free(cmd);
	free(printed);
	cJSON_Delete(st);
	free(id), free(bundle);
	user_close(&u);
}

/* The seed's "NCCL probe first" never costs the user their place: with
 * the partition busy (a blocker holding every GPU of both nodes far
 * longer than the old separate probe's give-up would allow: it gave up
 * after 15 minutes pending, which this test's scaled clock makes 30 s),
 * the submit queues the job itself at once, which waits PENDING, runs
 * after the blocker, and probes as its first step on one node with its
 * GPUs (the P2P hang is inside a node): the rig's torchrun hangs without
 * NCCL_P2P_DISABLE=1, so the first rung hangs and the second passes, then
 * the training runs with it. The poll caches the answer with its shape;
 * the next submit's dry run says cached, and a one-GPU job never probes. */
Test(tao, a_probe_behind_a_busy_partition_keeps_the_job_queued_and_probes_in_it, .timeout = 480)
{
	/* Each run a folder of its own (the job's): no results_dir. */
	static const char *const four[][2] = {
		{ "gpus: 8 ", "gpus: 4 " }, { "    num_epochs: 80\n", "    num_epochs: 2\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	static const char *const one[][2] = {
		{ "gpus: 8 ", "gpus: 1 " }, { "    num_epochs: 80\n", "    num_epochs: 2\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	const int scaled_give_up_s = 30;	/* the old 15 minutes, on this test's clock */
	struct user u;
	char *out = NULL, *id, *bundle, *cmd, *text, *cfg, *err = NULL, *blocker, *sid, *args;
	cJSON *o, *st;
	time_t t0;

	user_open(&u, "busy", "clusters:\n  rig:\n    nccl_probe_timeout_s: 60\n");
	/* First a one-GPU job, run for real: no collective to hang, so no
	 * probe; it converts the image, which the conversion would otherwise
	 * do behind the blocker below (the CPU partition is on the same
	 * nodes), and the submit would wait for that, not for the probe. */
	bundle = user_example_bundle(&u, one, 3);
	id = user_submit(&u, bundle, &out);
	free(out);
	text = user_job_file(&u, id, "sbatch/*.sbatch");
	cr_expect_not_null(strstr(text, "\nTAOTOP_PROBE=0\n"), "a one-GPU job probes:\n%s", text);
	free(text);
	st = user_wait_final(&u, id, 240);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", json_str(st, "message"));
	cJSON_Delete(st);
	free(id), free(bundle);
	/* Every GPU of both nodes, for longer than the scaled give-up after
	 * the submit has returned, however long a loaded machine takes to
	 * convert the image and submit. */
	blocker = rig_sbatch("-N 2 --gres=gpu:8 -t 5 -J taotop-test-blocker", "'sleep 150'");
	free(rig_wait_state(blocker, "RUNNING", 200));
	bundle = user_example_bundle(&u, four, 3);
	id = user_submit(&u, bundle, &out);
	t0 = time(NULL);
	o = cJSON_Parse(strchr(out, '{'));
	sid = xstrdup(json_str(o, "slurm_id"));
	cJSON_Delete(o);
	free(out);
	cr_assert(atoi(sid) > 0, "the job itself was not submitted: '%s'", sid);
	/* The submit came back while the partition was still full: it did
	 * not wait for it (the old probe waited, then gave up). */
	cmd = xasprintf("squeue -h -j %s -o '%%T'", blocker);
	text = rig_ssh_ok(cmd);
	cr_expect_str_eq(text, "RUNNING", "the submit waited for the partition");
	free(text), free(cmd);
	/* Its script probes first, in the job's shape. */
	text = user_job_file(&u, id, "sbatch/*.sbatch");
	cr_expect_not_null(strstr(text, "\nTAOTOP_PROBE=1\nTAOTOP_PROBE_SHAPE=1x4\n"), "%s", text);
	free(text);
	/* Past the scaled give-up: still queued, behind the blocker. */
	while (time(NULL) - t0 < scaled_give_up_s + 5)
		sleep(1);
	cmd = xasprintf("squeue -h -j %s,%s -o '%%i %%T'", blocker, sid);
	text = rig_ssh_ok(cmd);
	{
		char *want_b = xasprintf("%s RUNNING", blocker);
		char *want_j = xasprintf("%s PENDING", sid);
		cr_expect_not_null(strstr(text, want_b), "the blocker ended early:\n%s", text);
		cr_expect_not_null(strstr(text, want_j), "the job is not queued:\n%s", text);
		free(want_b), free(want_j);
	}
	free(text), free(cmd);
	/* It runs after the blocker, and ends Done. */
	st = user_wait_final(&u, id, 360);
	cr_assert_str_eq(json_str(st, "state"), "Done", "%s", json_str(st, "message"));
	cJSON_Delete(st);
	cmd = xasprintf("sacct -n -X -P -j %s,%s -o JobID,Start,End", blocker, sid);
	text = rig_ssh_ok(cmd);
	{
		char bid[32] = "", bs[32] = "", be[32] = "", jid[32] = "", js[32] = "", je[32] = "";
		cr_assert_eq(sscanf(text, "%31[^|]|%31[^|]|%31[^\n]\n%31[^|]|%31[^|]|%31[^\n]", bid,
		    bs, be, jid, js, je), 6, "%s", text);
		cr_expect_str_eq(bid, blocker, "%s", text);
		cr_expect_geq(strcmp(js, be), 0, "the job started before the blocker ended:\n%s",
		    text);
	}
	free(text), free(cmd);
	/* Its log: the probe first, on its own node, then the training. */
	text = user_job_file(&u, id, "slurm-logs/*/main.out");
	cr_expect_not_null(strstr(text, "taotop: the NCCL probe on 1x4, rung 1: none (up to 60s)\n"),
	    "%s", text);
	cr_expect_not_null(strstr(text, "taotop: the NCCL probe hung with none"), "%s", text);
	cr_expect_not_null(strstr(text, "NCCL_PROBE_OK world=4\n"), "%s", text);
	cr_expect_not_null(strstr(text, "taotop: the NCCL probe passed on 1x4 with NCCL_P2P_DISABLE=1\n"),
	    "%s", text);
	cr_expect(strstr(text, "NCCL_PROBE_OK") != NULL && strstr(text, "taotop: segment 1 of") != NULL &&
	    strstr(text, "NCCL_PROBE_OK") < strstr(text, "taotop: segment 1 of"),
	    "the probe did not run before the training:\n%s", text);
	free(text);
	/* Cached, with the shape that passed. */
	cfg = xasprintf("%s/config.yaml", u.local);
	text = file_read_all(cfg, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	cr_expect(strstr(text, "nccl_env: \"NCCL_P2P_DISABLE=1\"") != NULL, "%s", text);
	cr_expect(strstr(text, "nccl_env_shape: \"1x4\"") != NULL, "the cache says the shape:\n%s",
	    text);
	free(text), free(cfg);
	/* The next submit of that shape skips it. */
	args = xasprintf("submit %s --dry-run", bundle);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "probe: cached from a probe on 1x4: NCCL_P2P_DISABLE=1\n"),
	    "%s", out);
	cr_expect_not_null(strstr(out, "\nTAOTOP_PROBE=0\n"), "%s", out);
	cr_expect_not_null(strstr(out, "\nexport NCCL_P2P_DISABLE=1\n"), "%s", out);
	free(out), free(args), free(bundle), free(id);
	/* One GPU: no collective to hang, no probe. */
	bundle = user_example_bundle(&u, one, 3);
	args = xasprintf("submit %s --dry-run", bundle);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect_null(strstr(out, "\xe2\x9c\x93 probe"), "a one-GPU job probes:\n%s", out);
	cr_expect_not_null(strstr(out, "\nTAOTOP_PROBE=0\n"), "%s", out);
	free(out), free(args), free(bundle), free(blocker), free(sid);
	user_close(&u);
}

/* ---- every image form, end to end ---------------------------------------------------- */

/* Submit the example's job (one GPU, one epoch) with `image` as written,
 * and see it run from the squashfs it names: the stand-in images carry
 * their reference in /.taotop-image, which the job prints. `sqsh`: make a
 * squashfs on the user's shared folder first; %R in image stands for that
 * folder. */
static void image_form(const char *name, const char *image, const char *want, int sqsh)
{
	struct user u;
	char *out = NULL, *bundle, *id, *text, *cmd, *img;
	cJSON *st, *o;

	user_open(&u, name, probed_config);
	img = xstrdup(image);
	if (strstr(img, "%R") != NULL) {
		char *at = strstr(img, "%R"), *full = xasprintf("%.*s%s%s", (int)(at - img), img,
		    u.remote, at + 2);
		free(img);
		img = full;
	}
	if (sqsh) {
		/* A squashfs already on shared storage, as the procedure prefers. */
		cmd = xasprintf("mkdir -p %s/images && enroot import -o %s/images/mine.sqsh "
		    "'docker://nvcr.io#nvidia/pytorch:24.01-py3' >/dev/null 2>&1", u.remote, u.remote);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	{
		const char *const edits[][2] = {
			{ "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt", NULL },
			{ "action: train\n", "action: train\ncommand:\n  - sh\n  - -c\n"
			  "  - 'echo \"image $(cat /.taotop-image)\"; exec \"$@\"'\n  - taotop-test\n"
			  "  - classification_pyt\n  - train\n  - -e\n  - '{spec}'\n"
			  "  - 'results_dir={results_dir}'\n" },
			{ "gpus: 8 ", "gpus: 1 " }, { "    num_epochs: 80\n", "    num_epochs: 1\n" },
		};
		char *line = xasprintf("image: '%s'", img);
		const char *const use[][2] = { { edits[0][0], line }, { edits[1][0], edits[1][1] },
		    { edits[2][0], edits[2][1] }, { edits[3][0], edits[3][1] } };
		bundle = user_example_bundle(&u, use, 4);
		free(line);
	}
	id = user_submit(&u, bundle, &out);
	o = cJSON_Parse(strchr(out, '{'));
	cr_expect_eq(cJSON_IsTrue(cJSON_GetObjectItem(o, "image_converted")), !sqsh,
	    "%s: converted or not:\n%s", image, out);
	cJSON_Delete(o);
	free(out);
	st = user_wait_final(&u, id, 240);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s: %s", image, json_str(st, "message"));
	cr_expect(user_history_says(st, sqsh ? "image: reused" : "image: converted"),
	    "%s: the record does not say how the image was had", image);
	text = user_job_file(&u, id, "slurm-logs/*/main.out");
	{
		char *line = xasprintf("image %s\n", want);
		cr_expect(strstr(text, line) != NULL, "%s: wanted '%s' in main.out:\n%s", image, want,
		    text);
		free(line);
	}
	free(text);
	/* Never a registry URI on the GPU job's sruns (the training's, and
	 * the NCCL probe's rungs): every --container-image is a path. */
	cmd = xasprintf("f=%s/jobs/%s/sbatch/job_%s.sbatch; echo \"$(grep -c -e '--container-image=/' "
	    "\"$f\") $(grep -e '--container-image=' \"$f\" | grep -c -v -e '--container-image=/')\"",
	    u.remote, id, id);
	text = rig_ssh_ok(cmd);
	cr_expect(text[0] >= '1' && text[0] <= '9' && strcmp(strchr(text, ' ') ? strchr(text, ' ') : "",
	    " 0") == 0, "%s: the job's image is not a path (paths, others: %s)", image, text);
	free(text), free(cmd);
	cJSON_Delete(st);
	free(id), free(bundle), free(img);
	user_close(&u);
}

Test(image, a_sqsh_path_on_shared_storage_is_reused, .timeout = 300)
{
	image_form("img-path", "%R/images/mine.sqsh", "nvcr.io#nvidia/pytorch:24.01-py3", 1);
}

Test(image, a_lustre_uri_of_a_sqsh_is_reused, .timeout = 300)
{
	image_form("img-lustre", "lustre://%R/images/mine.sqsh", "nvcr.io#nvidia/pytorch:24.01-py3", 1);
}

Test(image, pyxis_form_registry_hash_image, .timeout = 300)
{
	image_form("img-hash", "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
	    "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt", 0);
}

Test(image, docker_uri_form, .timeout = 300)
{
	image_form("img-docker", "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
	    "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt", 0);
}

Test(image, registry_slash_image_form, .timeout = 300)
{
	image_form("img-slash", "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt",
	    "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt", 0);
}

Test(image, docker_hub_image_without_a_registry, .timeout = 300)
{
	image_form("img-hub", "ubuntu:22.04", "registry-1.docker.io#library/ubuntu:22.04", 0);
}

/* The forms the example bundle shows in its comments, switched on as a user
 * would (uncommented, gpus taken out for gpus_per_node): the dry run takes
 * them, with the command's own words and the shape it says. */
Test(tao, the_examples_commented_forms_work_as_written, .timeout = 120)
{
	static const char *const edits[][2] = {
		{ "# command: [classification_pyt", "command: [classification_pyt" },
		{ "gpus: 8 ", "# gpus: 8 " },
		{ "# gpus_per_node: 4", "gpus_per_node: 4" },
		{ "# name: lr-0.01-run1", "name: lr-0.01-run1" },
	};
	struct user u;
	char *out = NULL, *bundle, *args, *want;

	user_open(&u, "commented", probed_config);
	bundle = user_example_bundle(&u, edits, sizeof(edits) / sizeof(edits[0]));
	args = xasprintf("submit %s --dry-run", bundle);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "shape       1 node x 4 GPUs (gpus_per_node: 4 in the bundle, nodes "
	    "from the bundle)") != NULL, "%s", out);
	cr_expect(strstr(out, "  command     classification_pyt train -e {spec} results_dir={results_dir} "
	    "train.num_gpus={num_gpus} (the bundle)\n") != NULL,
	    "the bundle's command was not taken:\n%s", out);
	/* Each word quoted in the sbatch, its placeholders filled. */
	want = xasprintf("classification_pyt train -e %s/jobs/tao-DRYRUN/specs/spec.yaml "
	    "'results_dir=%s/results/classification-run1' 'train.num_gpus=4'", u.remote, u.remote);
	cr_expect(strstr(out, want) != NULL, "wanted '%s' in the sbatch:\n%s", want, out);
	/* The run's name, and SLURM's comment (its job name stays the id). */
	cr_expect(strstr(out, "name        lr-0.01-run1             (the bundle)") != NULL, "%s",
	    out);
	cr_expect(strstr(out, "#SBATCH --comment=lr-0.01-run1\n") != NULL, "%s", out);
	cr_expect(strstr(out, "--job-name=tao-DRYRUN ") != NULL, "%s", out);
	free(want), free(out), free(args), free(bundle);
	user_close(&u);
}

/* The example's commented execution block, switched on whole as a user
 * would (every line from "# execution:" to the cosmos: line with its "# "
 * deleted,
 * its helper written beside the bundle with the content its sha256 names):
 * the dry run takes it, says what it does, and fills the post-command's
 * placeholder. */
Test(tao, the_examples_execution_block_works_as_written, .timeout = 120)
{
	static const char *const edits[][2] = { { "# name: lr-0.01-run1", "name: lr-0.01-run1" } };
	struct user u;
	char *out = NULL, *bundle, *args, *text, *err = NULL, *helper, *want;
	struct buf b;
	const char *p;
	int on = 0;

	user_open(&u, "example-exec", probed_config);
	bundle = user_example_bundle(&u, edits, 1);
	text = file_read_all(bundle, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	buf_init(&b);
	for (p = text; *p != '\0';) {
		size_t len = strcspn(p, "\n");
		if (strncmp(p, "# execution:", 12) == 0)
			on = 1;
		else if (strncmp(p, "# cosmos:", 9) == 0)
			on = 0;
		if (on && strncmp(p, "# ", 2) == 0) {
			buf_add(&b, p + 2, len - 2);	/* "# " deleted, as a user does */
		} else {
			buf_add(&b, p, len);
		}
		buf_addc(&b, '\n');
		p += len + (p[len] == '\n');
	}
	cr_assert_eq(file_write_atomic(bundle, NULL, b.data, b.len, 0), 0, "%s", bundle);
	buf_free(&b);
	free(text);
	/* tools/check.py beside the bundle: "foo", whose sha256 the example
	 * names (2c26b46b...). */
	helper = xasprintf("mkdir -p %s/tools && printf foo > %s/tools/check.py", u.local, u.local);
	cr_assert_eq(rig_local("%s", helper), 0);
	free(helper);
	args = xasprintf("submit %s --dry-run", bundle);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "execution") != NULL, "%s", out);
	cr_expect(strstr(out, "torchrun") != NULL && strstr(out, "TAOTOP_PRE_1=") != NULL,
	    "the pre-command and torchrun in the staged script:\n%s", out);
	want = xasprintf("python3 %s/jobs/tao-DRYRUN/inputs/action-helpers/tools/check.py",
	    u.remote);
	cr_expect(strstr(out, want) != NULL, "the post-command's {job_dir} filled:\n%s", out);
	free(want), free(out), free(args), free(bundle);
	user_close(&u);
}

/* The stand-in's values (tests/cluster/tao.in): at the user's epoch n,
 * f = 0.7^n, train_loss 2.3 f, val_loss 2.5 f, val_acc_1 1 - 0.9 f, each
 * written by Python's repr of a %.6g. */
static double stand_in_value(const char *metric, int n)
{
	double f = pow(0.7, n);

	return strcmp(metric, "train_loss") == 0 ? 2.3 * f : strcmp(metric, "val_loss") == 0
	    ? 2.5 * f : 1 - 0.9 * f;
}

/* A finished run's curves from its record alone: after the job ended, with
 * the cluster unreachable (a port where nothing answers) and no config,
 * `taotop plot` (a new process: taotop restarted) prints every kpi key the
 * stand-in wrote, per epoch, epoch 2's NaN as a gap, the values as written. */
/*
 * Two runs of a sweep compared from their records alone (the cluster
 * unreachable): `taotop plot A B --metric val_loss` draws one plot, each
 * run with its mark, its legend naming each by the spec value that
 * differs (lr, the shortest form of train.optim.lr); JSON carries each
 * run's differing values, CSV each run's name.
 */
Test(tao, plot_compares_two_runs_named_by_their_differing_learning_rate, .timeout = 420)
{
	struct user u;
	struct watched w;
	char *id[2], *out = NULL, *args, *env, *o_line, *x_line;
	const char *lr[2] = { "0.001", "0.01" };
	cJSON *st, *arr, *job, *diff;
	int rc, k;

	user_open(&u, "compare", probed_config);
	for (k = 0; k < 2; k++) {
		/* Each run its own results folder, as a sweep's runs have. */
		char *edits[2][2], *bundle, *sub = NULL;
		edits[0][0] = xstrdup("classification-run1");
		edits[0][1] = xasprintf("classification-lr%d", k);
		edits[1][0] = xstrdup("    num_epochs: 80\n");
		edits[1][1] = xasprintf("    num_epochs: 4\n    optim:\n      lr: %s\n", lr[k]);
		bundle = user_example_bundle(&u, (const char *const (*)[2])edits, 2);
		id[k] = user_submit(&u, bundle, &sub);
		free(sub);
		st = wait_final_watching(&u, id[k], 240, &w);
		cr_assert_str_eq(json_str(st, "state"), "Done");
		cJSON_Delete(st);
		for (int i = 0; i < 2; i++)
			free(edits[i][0]), free(edits[i][1]);
		free(bundle);
	}
	env = xasprintf("%s SLURM_HOSTNAME=127.0.0.1:1 TAOTOP_SSH_CONFIG=/nonexistent", u.env);
	args = xasprintf("plot %s %s --metric val_loss --json", id[0], id[1]);
	rc = rig_taotop(env, args, &out);
	cr_assert_eq(rc, 0, "%s", out);
	arr = cJSON_Parse(out);
	cr_assert(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 2, "%s", out);
	for (k = 0; k < 2; k++) {
		char *label = xasprintf("lr=%s", lr[k]);
		job = cJSON_GetArrayItem(arr, k);
		cr_expect_str_eq(json_str(job, "job"), id[k]);
		cr_expect_str_eq(json_str(job, "label"), label, "%s", out);
		diff = cJSON_GetObjectItem(job, "differs");
		cr_expect(cJSON_IsObject(diff) && cJSON_GetArraySize(diff) == 1, "%s", out);
		cr_expect_str_eq(json_str(diff, "train.optim.lr"), lr[k], "%s", out);
		cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(job, "series")), 1, "%s", out);
		free(label);
	}
	cJSON_Delete(arr);
	free(out), free(args);
	/* The text plot: one, both runs' marks in it, the legend. */
	args = xasprintf("plot %s %s --metric val_loss --text", id[0], id[1]);
	rc = rig_taotop(env, args, &out);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "val_loss: 2 runs compared") != NULL, "%s", out);
	o_line = strstr(out, "  o lr=0.001  ");
	x_line = strstr(out, "  x lr=0.01  ");
	cr_expect(o_line != NULL && x_line != NULL, "the legend:\n%s", out);
	cr_expect(o_line != NULL && strstr(o_line, id[0]) != NULL && strstr(o_line, "at epoch 4") != NULL,
	    "%s", out);
	{
		/* Below the legend: the plot, both marks drawn (lr 0.01's curve
		 * falls to 0.3 of lr 0.001's by epoch 4: they draw apart). */
		const char *line = x_line != NULL ? strchr(x_line, '\n') : NULL;
		int seen_o = 0, seen_x = 0;
		for (; line != NULL && line[1] != '\0'; line = strchr(line + 1, '\n')) {
			size_t len = strcspn(line + 1, "\n");
			char *row = xstrndup(line + 1, len);
			if (strstr(row, "epoch") == NULL) {	/* the x axis's name */
				seen_o |= strchr(row, 'o') != NULL;
				seen_x |= strchr(row, 'x') != NULL;
			}
			free(row);
		}
		cr_expect(seen_o && seen_x, "both runs drawn:\n%s", out);
	}
	free(out), free(args);
	/* CSV: each row with its run's name. */
	args = xasprintf("plot %s %s --metric val_loss --csv", id[0], id[1]);
	rc = rig_taotop(env, args, &out);
	cr_assert_eq(rc, 0, "%s", out);
	{
		char *row = xasprintf("\n%s,lr=0.01,val_loss,4,", id[1]);
		cr_expect(strncmp(out, "job,label,metric,epoch,value\n", 29) == 0, "%s", out);
		cr_expect(strstr(out, row) != NULL, "%s", out);
		free(row);
	}
	free(out), free(args), free(env);
	free(id[0]), free(id[1]);
	user_close(&u);
}

Test(tao, plot_shows_a_finished_runs_curves_from_its_record_alone, .timeout = 300)
{
	static const char *const metrics[] = { "train_loss", "val_loss", "val_acc_1" };
	struct user u;
	struct watched w;
	char *id, *out = NULL, *args, *env;
	cJSON *st, *arr, *job, *s;
	size_t m;
	int rc, e;

	user_open(&u, "plot", probed_config);
	st = run_example(&u, "    nan_at_epoch: 2\n", NULL, &w, &id);
	cr_assert_str_eq(json_str(st, "state"), "Done");
	cJSON_Delete(st);
	env = xasprintf("%s SLURM_HOSTNAME=127.0.0.1:1 TAOTOP_SSH_CONFIG=/nonexistent", u.env);
	args = xasprintf("plot %s --json", id);
	rc = rig_taotop(env, args, &out);
	cr_assert_eq(rc, 0, "%s", out);
	arr = cJSON_Parse(out);
	cr_assert(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 1, "%s", out);
	job = cJSON_GetArrayItem(arr, 0);
	cr_expect_str_eq(json_str(job, "job"), id);
	cr_expect_str_eq(json_str(job, "state"), "Done");
	for (m = 0; m < 3; m++) {
		cJSON *epochs, *values;
		s = NULL;
		cJSON_ArrayForEach(s, cJSON_GetObjectItem(job, "series"))
			if (strcmp(json_str(s, "name"), metrics[m]) == 0)
				break;
		cr_assert_not_null(s, "no %s series:\n%s", metrics[m], out);
		epochs = cJSON_GetObjectItem(s, "epochs");
		values = cJSON_GetObjectItem(s, "values");
		cr_assert_eq(cJSON_GetArraySize(epochs), 4, "%s: 4 epochs:\n%s", metrics[m], out);
		for (e = 1; e <= 4; e++) {
			const cJSON *v = cJSON_GetArrayItem(values, e - 1);
			cr_expect_eq(cJSON_GetNumberValue(cJSON_GetArrayItem(epochs, e - 1)), e);
			if (m == 0 && e == 2) {
				cr_expect(cJSON_IsNull(v), "train_loss at epoch 2 was NaN:\n%s", out);
				continue;
			}
			cr_expect(cJSON_IsNumber(v) && fabs(v->valuedouble - stand_in_value(metrics[m], e))
			    <= 1e-5 * stand_in_value(metrics[m], e), "%s at epoch %d: %g, the stand-in "
			    "wrote %.6g", metrics[m], e, cJSON_GetNumberValue(v),
			    stand_in_value(metrics[m], e));
		}
		cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "last"),
		    "epoch")), 4, "%s", out);
	}
	cJSON_Delete(arr);
	free(out), free(args);
	/* The text plot: its title with the last and best values, its axes. */
	args = xasprintf("plot %s --metric val_loss --text", id);
	rc = rig_taotop(env, args, &out);
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "val_loss  last 0.60025 at epoch 4, best 0.60025 at epoch 4") != NULL,
	    "%s", out);
	cr_expect(strstr(out, "epoch") != NULL && (strstr(out, "+---") != NULL ||
	    strstr(out, "\xe2\x94\x94") != NULL), "axes drawn:\n%s", out);
	free(out), free(args);
	/* A metric it does not have: said, with those it has. */
	args = xasprintf("plot %s --metric mAP", id);
	rc = rig_taotop(env, args, &out);
	cr_expect_eq(rc, 1, "%s", out);
	cr_expect(strstr(out, "has no metric 'mAP'; it has: ") != NULL &&
	    strstr(out, "train_loss") != NULL, "%s", out);
	free(out), free(args), free(env);
	free(id);
	user_close(&u);
}

/* The efficiency card, from taotop's own samples of the jobs' GPUs (the
 * rig's slurmdbd records no GPU use: its GPUs are not NVML's, so the
 * gres/gpuutil TRES stays empty; tests/unit/test_card reads a site's):
 * status reads the GPUs at each call (the monitor at each of its rounds),
 * and each reading is kept in the record. A 4-GPU run TAO was told of
 * keeps them busy; an 8-GPU one whose spec gives TAO no count trains on
 * one GPU (TAO's default) and leaves seven idle. Both asked for an hour
 * and needed a minute or so. The card is the record's: every later
 * taotop process reads it, and `jobs --json` rows carry its figure. */
Test(tao, the_efficiency_card_says_what_the_gpus_and_the_hour_were_worth, .timeout = 420)
{
	static const char *const busy[][2] = {
		{ "gpus: 8 ", "gpus: 4 " }, { "time_hours: 4 ", "time_hours: 1 " },
		{ "    num_epochs: 80\n", "    num_epochs: 5\n    seconds_per_epoch: 4\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	static const char *const idle[][2] = {
		{ "time_hours: 4 ", "time_hours: 1 " },
		{ "# gpu_spec_key: train.num_gpus ", "gpu_spec_key: null " },
		{ "    num_epochs: 80\n", "    num_epochs: 5\n    seconds_per_epoch: 4\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	struct user u;
	char *out = NULL, *ids[2], *bundle, *args, *printed;
	cJSON *st, *card, *notes, *arr, *row;
	int k;

	user_open(&u, "card", probed_config);
	/* One after the other: each is sampled by the status calls that wait
	 * for it (a job nobody looks at while it runs has no samples, and its
	 * card says so). */
	for (k = 0; k < 2; k++) {
		bundle = user_example_bundle(&u, k == 0 ? busy : idle, 4);
		ids[k] = user_submit(&u, bundle, &out);
		free(out), free(bundle);
		out = NULL;
		st = user_wait_final(&u, ids[k], 300);
		cr_expect_str_eq(json_str(st, "state"), "Done", "%s", ids[k]);
		cJSON_Delete(st);
	}
	for (k = 0; k < 2; k++) {
		/* A new process: the card as the record keeps it. */
		args = xasprintf("status %s --json", ids[k]);
		cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
		st = cJSON_Parse(strchr(out, '{'));
		cr_assert_not_null(st, "%s", out);
		printed = cJSON_Print(st);
		card = cJSON_GetObjectItem(cJSON_GetObjectItem(st, "record"), "efficiency");
		cr_assert_not_null(card, "no card:\n%s", printed);
		notes = cJSON_GetObjectItem(card, "notes");
		cr_expect_str_eq(json_str(card, "gpu_source"), "taotop", "%s", printed);
		cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(card, "accounting")),
		    "accounting's facts added once a user looked:\n%s", printed);
		cr_expect_geq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "queue_wait_s")), 0,
		    "%s", printed);
		cr_expect_gt(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "samples")), 0, "%s",
		    printed);
		cr_expect(strstr(printed, "asked for 1 h, needed ") != NULL, "the time note:\n%s",
		    printed);
		if (k == 0) {
			cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "gpus")), 4, "%s",
			    printed);
			cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "gpus_used")), 4,
			    "%s", printed);
			cr_expect_geq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "util_median")), 80,
			    "%s", printed);
			cr_expect(strstr(printed, "used 1") == NULL, "%s", printed);
		} else {
			cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "gpus")), 8, "%s",
			    printed);
			cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "gpus_used")), 1,
			    "%s", printed);
			cr_expect_leq(cJSON_GetNumberValue(cJSON_GetObjectItem(card, "util_mean")), 15,
			    "%s", printed);
			cr_expect_str_eq(cJSON_GetArrayItem(notes, 0)->valuestring,
			    "asked for 8 GPUs, used 1", "%s", printed);
		}
		free(printed), free(args), free(out);
		out = NULL;
		cJSON_Delete(st);
		/* The text form says the same. */
		args = xasprintf("status %s", ids[k]);
		cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
		cr_expect(strstr(out, "efficiency:") != NULL && strstr(out, "GPU hours: ") != NULL &&
		    strstr(out, "from taotop's ") != NULL, "%s", out);
		if (k == 1)
			cr_expect(strstr(out, "note: asked for 8 GPUs, used 1") != NULL, "%s", out);
		free(args), free(out);
		out = NULL;
	}
	arr = user_json_array(&u, "jobs --json", &out);
	row = json_find(arr, "id", ids[1]);
	cr_assert_not_null(row, "%s", out);
	cr_expect(strncmp(json_str(row, "efficiency"), "avg ", 4) == 0 &&
	    strstr(json_str(row, "efficiency"), "!") != NULL, "the row's figure:\n%s", out);
	cJSON_Delete(arr);
	free(out);
	free(ids[0]), free(ids[1]);
	user_close(&u);
}

/* The job's GPU hours as its record keeps them (accounting's allocation). */
static double record_hours(struct user *u, const char *id)
{
	char *args = xasprintf("status %s --json", id), *out = NULL;
	cJSON *st, *al;
	double h;

	cr_assert_eq(rig_taotop(u->env, args, &out), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cr_assert_not_null(st, "%s", out);
	al = cJSON_GetObjectItem(cJSON_GetObjectItem(st, "record"), "allocation");
	cr_assert_not_null(al, "no allocation kept:\n%s", out);
	h = cJSON_GetNumberValue(cJSON_GetObjectItem(al, "gpus")) *
	    cJSON_GetNumberValue(cJSON_GetObjectItem(al, "elapsed_s")) / 3600.0;
	cJSON_Delete(st);
	free(args), free(out);
	return h;
}

/* `taotop report` over a day of a user's runs through the stand-ins: one
 * Done, one the program failed (TAO's FAILURE), one the infrastructure
 * failed (NCCL's watchdog; no retry budget, so it stays failed), one
 * cancelled while it ran, one that left 7 of its 8 GPUs idle. Each line's
 * GPU hours are what the records say, the idle hours come from the cards,
 * the worst waster is named, and the cluster took one remote command. The
 * rig's other tests share the user's accounting: taotop's part is checked
 * exactly, the whole only for holding it. */
Test(tao, the_report_adds_up_gpu_hours_by_outcome_from_one_command, .timeout = 600)
{
	static const char *const done[][2] = {
		{ "gpus: 8 ", "gpus: 2 " },
		{ "    num_epochs: 80\n", "    num_epochs: 3\n    seconds_per_epoch: 3\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	static const char *const prog[][2] = {
		{ "gpus: 8 ", "gpus: 2 " },
		{ "    num_epochs: 80\n", "    num_epochs: 3\n    seconds_per_epoch: 3\n"
		  "    fail_at_epoch: 2\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	static const char *const infra[][2] = {
		{ "gpus: 8 ", "gpus: 2 " },
		{ "    num_epochs: 80\n", "    num_epochs: 3\n    seconds_per_epoch: 3\n"
		  "    nccl_timeout_at_epoch: 1\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	static const char *const slow[][2] = {
		{ "gpus: 8 ", "gpus: 2 " },
		{ "    num_epochs: 80\n", "    num_epochs: 3\n    seconds_per_epoch: 120\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	static const char *const idle[][2] = {
		{ "# gpu_spec_key: train.num_gpus ", "gpu_spec_key: null " },
		{ "    num_epochs: 80\n", "    num_epochs: 4\n    seconds_per_epoch: 4\n" },
		{ "results_dir: lustre://", "# results_dir: lustre://" },
	};
	const char *const (*bundles[5])[2] = { done, prog, infra, slow, idle };
	static const char *const ends[5] = { "Done", "Error", "Error", "Canceled", "Done" };
	struct user u;
	char *out = NULL, *ids[5], *bundle, *args;
	double h[5], sum;
	cJSON *st, *rep, *th, *all, *top;
	int k;

	user_open(&u, "report", "clusters:\n  rig:\n    retry_budget: 0\n"
	    "    nccl_env: \"NCCL_P2P_DISABLE=1\"\n    nccl_env_shape: \"1x8\"\n");
	for (k = 0; k < 5; k++) {
		bundle = user_example_bundle(&u, bundles[k], 3);
		ids[k] = user_submit(&u, bundle, &out);
		free(out), free(bundle);
		out = NULL;
		if (k == 3) {
			/* Cancelled once it runs. */
			time_t end = time(NULL) + 120;
			for (;;) {
				st = user_wait_final(&u, ids[k], 1);
				int running = strcmp(json_str(st, "state"), "Running") == 0;
				cJSON_Delete(st);
				if (running || time(NULL) > end)
					break;
				sleep(2);
			}
			args = xasprintf("cancel %s", ids[k]);
			cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
			free(args), free(out);
			out = NULL;
		}
		st = user_wait_final(&u, ids[k], 300);
		cr_assert_str_eq(json_str(st, "state"), ends[k], "%s", ids[k]);
		cJSON_Delete(st);
	}
	/* Accounting's end for the cancelled one, then every record's hours. */
	sleep(3);
	for (k = 0; k < 5; k++)
		h[k] = record_hours(&u, ids[k]);

	cr_assert_eq(rig_taotop(u.env, "report --since 1d --json", &out), 0, "%s", out);
	rep = cJSON_Parse(strchr(out, '{'));
	cr_assert_not_null(rep, "%s", out);
	th = cJSON_GetObjectItem(rep, "taotop_gpu_hours");
	all = cJSON_GetObjectItem(rep, "gpu_hours");
#define NEAR(name, want) cr_expect(fabs(cJSON_GetNumberValue(cJSON_GetObjectItem(th, name)) - \
	(want)) < 0.002, "%s: %g, the records say %g\n%s", name, \
	cJSON_GetNumberValue(cJSON_GetObjectItem(th, name)), (double)(want), out)
	NEAR("done", h[0] + h[4]);
	NEAR("error_program", h[1]);
	NEAR("error_infrastructure", h[2]);
	NEAR("canceled", h[3]);
	NEAR("error_unjudged", 0);
#undef NEAR
	cr_expect_geq(cJSON_GetNumberValue(cJSON_GetObjectItem(all, "done")) + 0.002,
	    h[0] + h[4], "the whole holds taotop's part:\n%s", out);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(rep, "jobs"),
	    "taotops")), 5, "%s", out);
	/* The idle one: its card says one GPU of 8 worked, so most of its
	 * hours were idle; those that worked had a card too. */
	sum = cJSON_GetNumberValue(cJSON_GetObjectItem(all, "idle"));
	cr_expect(sum >= h[4] * 0.8 && sum <= h[0] + h[1] + h[2] + h[3] + h[4] + 0.002,
	    "idle %g of the idle run's %g:\n%s", sum, h[4], out);
	top = cJSON_GetArrayItem(cJSON_GetObjectItem(rep, "wasted_most"), 0);
	cr_expect_not_null(top, "%s", out);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(rep, "remote_commands")), 1,
	    "one remote command for the cluster:\n%s", out);
	cJSON_Delete(rep);
	free(out);
	out = NULL;
	/* The text form. */
	cr_assert_eq(rig_taotop(u.env, "report --since 1d", &out), 0, "%s", out);
	cr_expect(strstr(out, "GPU hours over the last 1d: ") != NULL &&
	    strstr(out, "Error, the program's") != NULL &&
	    strstr(out, "Error, the infrastructure's") != NULL && strstr(out, "Canceled") != NULL &&
	    strstr(out, "Wasted the most") != NULL && strstr(out, "Median queue wait:") != NULL,
	    "%s", out);
	free(out);
	for (k = 0; k < 5; k++)
		free(ids[k]);
	user_close(&u);
}

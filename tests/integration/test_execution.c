/*
 * A bundle's execution block on the test cluster, as a user writes one
 * (taotop's own bundle format): pre-commands before the command in its
 * container, post-commands after it only when it succeeded and only on
 * task 0, a supporting file staged with its manifest, the step's exit code
 * kept where the bundle asked, and the bundle's own status file judging
 * the end in place of TAO's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "engine/store/store.h"
#include "engine/submit/submit.h"
#include "integration/helper_rig.h"
#include "integration/helper_submit.h"
#include "util/buf.h"
#include "util/xmalloc.h"

/* Each task notes what ran, in order, in a file of its own (order-RANK). */
#define NOTE(what) "echo \"" what "\" >> \"$MARK_DIR/order-$SLURM_PROCID\""

/* What the command ends with when it succeeds: TAO's final line. */
#define STATUS_OK "echo {\\\"status\\\": \\\"SUCCESS\\\"} > {results_dir}/status.json"

static const char *lifecycle_bundle =
	"image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	"network_arch: classification_pyt\n"
	"action: train\n"
	"command:\n"
	"  - sh\n"
	"  - -c\n"
	"  - 'echo primary >> {results_dir}/order-$SLURM_PROCID; "
	"cat {job_dir}/inputs/action-helpers/tools/check.sh >> {results_dir}/helper-$SLURM_PROCID; "
	"%TAIL%'\n"
	"datasets: [lustre://%B/data/train]\n"
	"nodes: %NODES%\n"
	"gpus: %GPUS%\n"
	"cpus_per_task: 2\n"
	"time_hours: 0.5\n"
	"execution:\n"
	"  environment:\n"
	"    MARK_DIR: '{results_dir}'\n"
	"    RUN_ID: '{job_id}'\n"
	"  pre_commands:\n"
	"    - '" NOTE("pre one") "'\n"
	"    - '" NOTE("pre two") "'\n"
	"  post_commands:\n"
	"    - '" NOTE("post $RUN_ID") "'\n"
	"  supporting_files:\n"
	"    - {source: helpers/check.sh, destination: tools/check.sh, sha256: %SUM%}\n"
	"  completion:\n"
	"    child_exit_code_path: child_exit_code\n";

/* The bundle text with its %NAME% words filled. */
static char *fill(const char *text, const char *const *pairs, size_t n)
{
	struct buf b;
	const char *p = text;

	buf_init(&b);
	buf_adds(&b, "");
	while (*p != '\0') {
		size_t i, done = 0;
		for (i = 0; i + 1 < n && !done; i += 2)
			if (strncmp(p, pairs[i], strlen(pairs[i])) == 0) {
				buf_adds(&b, pairs[i + 1]);
				p += strlen(pairs[i]);
				done = 1;
			}
		if (!done)
			buf_addc(&b, *p++);
	}
	return buf_detach(&b);
}

/* The helper file beside the bundle, and its sha256 by the system's tool. */
static char *write_helper(struct sub_env *e)
{
	char *dir = xasprintf("%s/helpers", e->local), *path = xasprintf("%s/check.sh", dir);
	char *cmd = xasprintf("mkdir -p %s && printf 'echo helper here\\n' > %s && "
	    "sha256sum %s | cut -c1-64", dir, path, path), *sum = NULL;
	const char *const argv[] = { "sh", "-c", cmd, NULL };

	cr_assert_eq(rig_run(argv, &sum), 0);
	sum[64] = '\0';
	free(dir), free(path), free(cmd);
	return sum;
}

static struct job_record *load(struct sub_env *e, const char *id)
{
	struct job_record *r;
	char *err = NULL;

	cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
	return r;
}

static char *results_file(const struct job_record *r, const char *name)
{
	char *path = xasprintf("%s/%s", r->results_dir, name), *text = sub_slurp(path);

	free(path);
	return text;
}

/* The record's history, a message a line. */
static char *history(const struct job_record *r)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "");
	for (size_t i = 0; i < r->nhist; i++)
		buf_addf(&b, "%s\n", r->hist[i].message ? r->hist[i].message : "");
	return buf_detach(&b);
}

Test(execution, pre_then_the_command_then_post_on_task_0_only_and_the_exit_code_kept,
    .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "lifecycle", NULL);
	char *sum = write_helper(&e);
	const char *const pairs[] = { "%TAIL%", STATUS_OK, "%NODES%", "2", "%GPUS%", "4",
	    "%SUM%", sum };
	char *text = fill(lifecycle_bundle, pairs, 8);
	char *spec = sub_bundle(&e, "lifecycle", text);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 180), TAO_DONE);

	struct job_record *r = load(&e, res.record_id);
	char *o0 = results_file(r, "order-0"), *o1 = results_file(r, "order-1");
	char *want0 = xasprintf("pre one\npre two\nprimary\npost %s\n", r->id);
	cr_expect(o0 && strcmp(o0, want0) == 0, "task 0 ran, in order:\n%s", o0);
	cr_expect(o1 && strcmp(o1, "pre one\npre two\nprimary\n") == 0,
	    "task 1 ran (post-commands are task 0's):\n%s", o1);
	char *code = results_file(r, "child_exit_code");
	cr_expect(code && strcmp(code, "0\n") == 0, "the exit-code file: %s", code);
	char *h0 = results_file(r, "helper-0"), *h1 = results_file(r, "helper-1");
	cr_expect(h0 && strcmp(h0, "echo helper here\n") == 0, "task 0 saw the helper: %s", h0);
	cr_expect(h1 && strcmp(h1, "echo helper here\n") == 0, "task 1 saw the helper: %s", h1);

	/* The manifest beside the helpers' folder. */
	char *mpath = xasprintf("%s/../inputs/action-helpers.manifest.json", r->results_dir);
	char *mtext = sub_slurp(mpath);
	cr_assert_not_null(mtext, "%s", mpath);
	cJSON *m = cJSON_Parse(mtext), *f = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "files"), 0);
	cr_assert_not_null(f, "%s", mtext);
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(f, "source")), "helpers/check.sh");
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(f, "destination")),
	    "tools/check.sh");
	cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(f, "sha256")), sum);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(f, "size")),
	    (double)strlen("echo helper here\n"));
	cJSON_Delete(m);

	free(mpath), free(mtext), free(h0), free(h1), free(code), free(want0), free(o0), free(o1);
	record_free(r);
	submit_result_free(&res);
	free(spec), free(text), free(sum);
	sub_close(&e);
}

Test(execution, a_failing_command_runs_no_post_and_its_own_code_is_kept, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "lifecycle-fail", NULL);
	char *sum = write_helper(&e);
	const char *const pairs[] = { "%TAIL%", "exit 3", "%NODES%", "1", "%GPUS%", "2",
	    "%SUM%", sum };
	char *text = fill(lifecycle_bundle, pairs, 8);
	char *spec = sub_bundle(&e, "lifecycle", text);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 180), TAO_ERROR);

	struct job_record *r = load(&e, res.record_id);
	char *o0 = results_file(r, "order-0");
	cr_expect(o0 && strcmp(o0, "pre one\npre two\nprimary\n") == 0,
	    "post ran after a failed command:\n%s", o0);
	char *code = results_file(r, "child_exit_code");
	cr_expect(code && strcmp(code, "3\n") == 0, "the exit-code file: %s", code);
	free(code), free(o0);
	record_free(r);
	submit_result_free(&res);
	free(spec), free(text), free(sum);
	sub_close(&e);
}

Test(execution, the_bundles_own_status_judges_a_completed_job, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "structured", NULL);
	/* TAO's status file says SUCCESS, SLURM says COMPLETED; the bundle's
	 * own status ends on FAILED, which is not one of its success states. */
	char *spec = sub_bundle(&e, "structured",
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command:\n"
	    "  - sh\n"
	    "  - -c\n"
	    "  - 'echo {\\\"status\\\": \\\"SUCCESS\\\"} > {results_dir}/status.json; "
	    "printf \"%s\\n\" \"{\\\"status\\\": \\\"RUNNING\\\"}\" \"{\\\"status\\\": \\\"failed\\\"}\" "
	    "> {results_dir}/run/status.jsonl'\n"
	    "results_dir: lustre://%B/results\n"
	    "gpus: 1\n"
	    "time_hours: 0.2\n"
	    "execution:\n"
	    "  pre_commands: ['mkdir -p \"$RUN_DIR\"']\n"
	    "  environment: {RUN_DIR: '{results_dir}/run'}\n"
	    "  completion:\n"
	    "    child_exit_code_path: '{results_dir}/run/exit_code'\n"
	    "    structured_status_path: run/status.jsonl\n"
	    "    success_states: [SUCCEEDED, SUCCESS]\n");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 180), TAO_ERROR);

	struct job_record *r = load(&e, res.record_id);
	char *msg = history(r);
	cr_expect_str_eq(r->native, "COMPLETED");
	cr_expect(strstr(msg, "FAILED") != NULL && strstr(msg, "not a success state") != NULL,
	    "the record says: %s", msg);
	char *code = results_file(r, "run/exit_code");
	cr_expect(code && strcmp(code, "0\n") == 0, "the exit-code file: %s", code);
	free(code), free(msg);
	record_free(r);
	submit_result_free(&res);
	free(spec);
	sub_close(&e);
}

Test(execution, a_helper_whose_checksum_differs_is_refused_before_any_write, .timeout = 120)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "lifecycle-sum", NULL);
	char *sum = write_helper(&e);
	const char *wrong = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	const char *const pairs[] = { "%TAIL%", STATUS_OK, "%NODES%", "1", "%GPUS%", "1",
	    "%SUM%", wrong };
	char *text = fill(lifecycle_bundle, pairs, 8);
	char *spec = sub_bundle(&e, "lifecycle", text);
	cr_expect_eq(sub_submit(&e, spec, &res, &err), -1);
	char *want = xasprintf("helpers/check.sh has sha256 %s, not the %s the bundle states",
	    sum, wrong);
	cr_expect(err && strstr(err, want) != NULL, "want: %s\ngot:  %s", want, err);
	cr_expect_null(res.record_id, "a record was opened for a refused bundle");
	char *listing = xasprintf("%s/root", e.base);
	char *cmd = xasprintf("test -z \"$(ls -A %s)\"", listing);
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	cr_expect_eq(rig_run(argv, NULL), 0, "something was written under %s", listing);
	free(cmd), free(listing), free(want), free(err);
	submit_result_free(&res);
	free(spec), free(text), free(sum);
	sub_close(&e);
}

/* Each process torchrun starts notes what it is, in a file of its own. */
static const char *ranks_py =
	"import os, sys\n"
	"e = os.environ\n"
	"with open(os.path.join(sys.argv[1], 'rank-' + e['RANK']), 'w') as f:\n"
	"    f.write('world=%s local=%s group=%s\\n' % (e['WORLD_SIZE'], e['LOCAL_RANK'], e['GROUP_RANK']))\n"
	"if e['RANK'] == '0':\n"
	"    with open(os.path.join(sys.argv[1], 'status.json'), 'w') as f:\n"
	"        f.write('{\"status\": \"SUCCESS\"}\\n')\n";

Test(execution, torchrun_starts_the_processes_of_each_node, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL, *sum = NULL;

	sub_open(&e, "torchrun", NULL);
	char *path = xasprintf("%s/ranks.py", e.local);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(ranks_py, f);
	fclose(f);
	char *cmd = xasprintf("sha256sum %s | cut -c1-64", path);
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	cr_assert_eq(rig_run(argv, &sum), 0);
	sum[64] = '\0';
	char *text = xasprintf(
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: ['{job_dir}/inputs/action-helpers/ranks.py', '{results_dir}']\n"
	    "datasets: [lustre://%%B/data/train]\n"
	    "nodes: 2\n"
	    "gpus: 4\n"
	    "cpus_per_task: 2\n"
	    "time_hours: 0.5\n"
	    "execution:\n"
	    "  distributed: {launcher: torchrun, processes_per_node: 2}\n"
	    "  supporting_files: [{source: ranks.py, destination: ranks.py, sha256: %s}]\n"
	    "  completion: {child_exit_code_path: child_exit_code}\n", sum);
	char *spec = sub_bundle(&e, "torchrun", text);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 180), TAO_DONE);

	struct job_record *r = load(&e, res.record_id);
	const char *want[] = { "world=4 local=0 group=0\n", "world=4 local=1 group=0\n",
	    "world=4 local=0 group=1\n", "world=4 local=1 group=1\n" };
	for (int i = 0; i < 4; i++) {
		char name[32];
		snprintf(name, sizeof(name), "rank-%d", i);
		char *got = results_file(r, name);
		cr_expect(got && strcmp(got, want[i]) == 0, "%s: %s", name, got);
		free(got);
	}
	char *code = results_file(r, "child_exit_code");
	cr_expect(code && strcmp(code, "0\n") == 0, "the exit-code file: %s", code);
	free(code);
	record_free(r);
	submit_result_free(&res);
	free(spec), free(text), free(sum), free(cmd), free(path);
	sub_close(&e);
}

Test(execution, a_missing_bundle_status_ends_a_completed_job_in_error_saying_so, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "structured-missing", NULL);
	char *spec = sub_bundle(&e, "structured",
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: ['sh', '-c', 'echo {\\\"status\\\": \\\"SUCCESS\\\"} > {results_dir}/status.json']\n"
	    "gpus: 1\n"
	    "time_hours: 0.2\n"
	    "execution:\n"
	    "  completion:\n"
	    "    child_exit_code_path: child_exit_code\n"
	    "    structured_status_path: never/written.json\n"
	    "    success_states: [SUCCESS]\n");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 180), TAO_ERROR);

	struct job_record *r = load(&e, res.record_id);
	char *msg = history(r), *want = xasprintf("COMPLETED, but the bundle's structured status "
	    "file %s/never/written.json is missing", r->results_dir);
	cr_expect(strstr(msg, want) != NULL, "want: %s\nthe record says: %s", want, msg);
	free(want), free(msg);
	record_free(r);
	submit_result_free(&res);
	free(spec);
	sub_close(&e);
}

Test(execution, a_secret_in_the_environment_is_refused_by_the_lint, .timeout = 120)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "lifecycle-secret", NULL);
	char *spec = sub_bundle(&e, "secret",
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: [true]\n"
	    "gpus: 1\n"
	    "execution:\n"
	    "  environment: {HUB_TOKEN: " SUB_TOKEN "}\n");
	cr_expect_eq(sub_submit(&e, spec, &res, &err), -1);
	cr_expect(err && strstr(err, "fails the lint") != NULL &&
	    strstr(err, "secret: a Hugging Face token") != NULL, "%s", err);
	cr_expect(err && strstr(err, SUB_TOKEN) == NULL, "the refusal repeats the secret: %s", err);
	cr_expect_null(res.slurm_id, "submitted");
	free(err);
	submit_result_free(&res);
	free(spec);
	sub_close(&e);
}

Test(execution, the_dry_run_says_what_the_execution_block_does, .timeout = 120)
{
	struct sub_env e;
	const struct rig *g = rig_get();

	sub_open(&e, "lifecycle-dry", NULL);
	char *sum = write_helper(&e);
	const char *const pairs[] = { "%TAIL%", STATUS_OK, "%NODES%", "2", "%GPUS%", "4",
	    "%SUM%", sum };
	char *text = fill(lifecycle_bundle, pairs, 8);
	char *spec = sub_bundle(&e, "lifecycle", text);
	char *cmd = xasprintf("SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s "
	    "TAOTOP_KNOWN_HOSTS=%s XDG_STATE_HOME=%s TAOTOP_CONFIG=/nonexistent/config.yaml "
	    "SLURM_BASE_RESULTS_DIR=lustre://%s/root LANG=C %s submit --dry-run %s",
	    g->user, g->host, g->port, g->key, g->known_hosts, e.local, e.base,
	    getenv("TAOTOP_BIN"), spec);
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	char *out = NULL;
	cr_assert_eq(rig_run(argv, &out), 0, "%s", out);
	cr_expect(strstr(out, "  execution   2 pre-commands, 1 post-command (task 0), direct, "
	    "2 variables, 1 helper file; exit code to child_exit_code; the end judged by TAO's "
	    "status file (the bundle)\n") != NULL, "%s", out);
	/* The helper and its manifest are staged, the bundle's commands quoted as one word each. */
	cr_expect(strstr(out, "/inputs/action-helpers/tools/check.sh (17 bytes)") != NULL, "%s", out);
	cr_expect(strstr(out, "/inputs/action-helpers.manifest.json (") != NULL, "%s", out);
	cr_expect(strstr(out, "export TAOTOP_PRE_1='echo \"pre one\" >> \"$MARK_DIR/order-$SLURM_PROCID\"'\n")
	    != NULL, "%s", out);
	cr_expect(strstr(out, "export TAOTOP_PRE_COUNT=2 TAOTOP_POST_COUNT=1 TAOTOP_POST_SCOPE=leader\n")
	    != NULL, "%s", out);
	free(out), free(cmd), free(spec), free(text), free(sum);
	sub_close(&e);
}

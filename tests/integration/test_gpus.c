/*
 * What TAO is given, from the user's side: the job's GPUs reach TAO's spec
 * (the dry run's command and the TAO stand-in's own log say num_gpus 8,
 * and num_nodes 2 on two nodes), a spec that says another count is
 * refused naming both; one results folder per run (the example bundle
 * submitted twice: the second refused naming the first, resume: true
 * continuing it from its checkpoint; without a results_dir, a folder each;
 * a folder holding a run's files but no record of it refused too); and the
 * container's environment as NVIDIA's launchers set it, the job's values
 * winning over the image's.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "util/xmalloc.h"

/* A cached NCCL answer for up to two nodes of 8 GPUs: no probe here. */
static const char *probed_config =
	"clusters:\n"
	"  rig:\n"
	"    nccl_env: \"NCCL_P2P_DISABLE=1\"\n"
	"    nccl_env_shape: \"2x8\"\n";

/* A few epochs instead of the example's 80 (a second each). */
static const char *const few_epochs[][2] = {
	{ "    num_epochs: 80\n", "    num_epochs: 3\n" },
};

/* `taotop ARGS` as u, its exit status; *out its output (caller frees). */
static int run(struct user *u, char **out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int run(struct user *u, char **out, const char *fmt, ...)
{
	va_list ap;
	char *args;
	int rc;

	va_start(ap, fmt);
	args = xvasprintf(fmt, ap);
	va_end(ap);
	rc = rig_taotop(u->env, args, out);
	free(args);
	return rc;
}

/* The number of entries of u's remote jobs/ folder (the job folders). A
 * folder that is not there fails the test (rig_ssh_ok): a count of 0 from
 * a wrong path would pass every "nothing was written" check. */
static int job_folders(struct user *u)
{
	char *cmd = xasprintf("cd %s/jobs && { ls -A | grep -cv '^images$'; [ $? -le 1 ]; }",
	    u->remote);
	char *n = rig_ssh_ok(cmd);
	int count = atoi(n);

	free(cmd), free(n);
	return count;
}

/* `taotop status ID --json`'s record member `name` (caller frees). */
static char *record_field(struct user *u, const char *id, const char *name)
{
	char *out = NULL, *v;
	cJSON *st;

	cr_assert_eq(run(u, &out, "status %s --json", id), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cr_assert_not_null(st, "%s", out);
	v = xstrdup(json_str(cJSON_GetObjectItem(st, "record"), name));
	cJSON_Delete(st);
	free(out);
	return v;
}

Test(gpus, an_8_gpu_submit_gives_tao_8_gpus_in_the_dry_run_and_in_taos_log, .timeout = 240)
{
	struct user u;
	char *out = NULL, *bundle, *id, *log;
	cJSON *st;

	user_open(&u, "gpus8", probed_config);
	bundle = user_example_bundle(&u, few_epochs, 1);
	cr_assert_eq(run(&u, &out, "submit %s --dry-run", bundle), 0, "%s", out);
	cr_expect(strstr(out, "results_dir=") != NULL &&
	    strstr(out, "train.num_gpus=8 train.num_nodes=1 (TAO's own") != NULL,
	    "the command does not give TAO the count:\n%s", out);
	cr_expect(strstr(out, "'train.num_gpus=8' 'train.num_nodes=1'") != NULL,
	    "the sbatch's command does not:\n%s", out);
	free(out);

	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 180);
	cJSON_Delete(st);
	log = user_job_file(&u, id, "slurm-logs/*/main.out");
	cr_expect(strstr(log, "tao stand-in: num_gpus 8, num_nodes 1") != NULL &&
	    strstr(log, "num_gpus from overrides") != NULL, "TAO's log:\n%s", log);
	free(log), free(id), free(bundle);
	user_close(&u);
}

Test(gpus, a_spec_saying_2_with_gpus_8_is_refused_naming_both_and_nothing_is_written,
    .timeout = 120)
{
	static const char *const edits[][2] = {
		{ "    num_epochs: 80\n", "    num_epochs: 80\n    num_gpus: 2\n" },
	};
	struct user u;
	char *out = NULL, *bundle;

	user_open(&u, "gpus2", probed_config);
	bundle = user_example_bundle(&u, edits, 1);
	cr_expect_neq(run(&u, &out, "submit %s", bundle), 0, "submitted:\n%s", out);
	cr_expect(strstr(out, "spec train.num_gpus is 2 but the bundle asks gpus: 8 (8 per node x "
	    "1 node)") != NULL, "%s", out);
	free(out);
	cr_expect_eq(job_folders(&u), 0, "a job folder was written");
	{
		/* The jobs of the cluster, none of them taotop's (another's are). */
		cJSON *jobs = user_json_array(&u, "jobs --json", &out), *o;
		cJSON_ArrayForEach(o, jobs)
			cr_expect(!cJSON_IsString(cJSON_GetObjectItem(o, "id")), "a record was opened:\n%s",
			    out);
		cJSON_Delete(jobs);
	}
	free(out), free(bundle);
	user_close(&u);
}

Test(gpus, two_nodes_of_8_give_tao_num_nodes_2, .timeout = 240)
{
	struct user u;
	char *out = NULL, *bundle, *id, *log;
	cJSON *st;

	user_open(&u, "gpus2x8", probed_config);
	bundle = user_example_bundle(&u, few_epochs, 1);
	cr_assert_eq(run(&u, &out, "submit %s --nodes 2 --gpus 16 --dry-run", bundle), 0, "%s", out);
	cr_expect(strstr(out, "'train.num_gpus=8' 'train.num_nodes=2'") != NULL, "%s", out);
	free(out);
	cr_assert_eq(run(&u, &out, "submit %s --nodes 2 --gpus 16 --json", bundle), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cr_assert_not_null(st, "%s", out);
	id = xstrdup(json_str(st, "id"));
	cJSON_Delete(st);
	free(out);
	cJSON_Delete(user_wait_final(&u, id, 180));
	log = user_job_file(&u, id, "slurm-logs/*/main.out");
	cr_expect(strstr(log, "tao stand-in: num_gpus 8, num_nodes 2") != NULL, "TAO's log:\n%s", log);
	free(log), free(id), free(bundle);
	user_close(&u);
}

/* The example as it ships (paths pointed at the cluster) twice: the second
 * is refused naming the first; the first stopped after a few checkpoints,
 * the bundle with resume: true continues it from its newest one. */
Test(runs, the_example_twice_is_refused_naming_the_first_and_resume_continues_it,
    .timeout = 420)
{
	static const char *const resume[][2] = {
		{ "# resume: true ", "resume: true " },
	};
	struct user u;
	char *out = NULL, *bundle, *id, *ref, *want, *log, *cmd, *text;
	cJSON *st;

	user_open(&u, "twice", probed_config);
	bundle = user_example_bundle(&u, NULL, 0);
	id = user_submit(&u, bundle, &out);
	free(out);
	ref = record_field(&u, id, "backend_ref");
	cr_expect_neq(run(&u, &out, "submit %s", bundle), 0, "submitted twice:\n%s", out);
	want = xasprintf("results_dir %s/results/classification-run1 already holds run %s (SLURM "
	    "job %s)", u.remote, id, ref);
	cr_expect(strstr(out, want) != NULL, "wanted '%s':\n%s", want, out);
	free(want), free(out);

	/* A few epochs' checkpoints, then stopped. */
	cmd = xasprintf("for i in $(seq 60); do [ -e %s/results/classification-run1/train/"
	    "model_epoch_004.pth ] && break; sleep 1; done; ls %s/results/classification-run1/train/",
	    u.remote, u.remote);
	text = rig_ssh_ok(cmd);
	cr_assert(strstr(text, "model_epoch_004.pth") != NULL, "no checkpoints: %s", text);
	free(text), free(cmd);
	cr_assert_eq(run(&u, &out, "cancel %s", id), 0, "%s", out);
	free(out);
	cJSON_Delete(user_wait_final(&u, id, 60));
	free(id), free(bundle);

	bundle = user_example_bundle(&u, resume, 1);
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	cJSON_Delete(st);
	log = user_job_file(&u, id, "slurm-logs/*/main.out");
	/* taotop picked the first run's newest checkpoint; TAO restored it. */
	want = xasprintf("taotop: resuming from %s/results/classification-run1/train/model_epoch_00",
	    u.remote);
	cr_expect(strstr(log, want) != NULL, "wanted '%s' in main.out:\n%s", want, log);
	cr_expect(strstr(log, "Restoring states from the checkpoint path at ") != NULL, "main.out:\n%s",
	    log);
	free(log), free(want);
	/* And went on to the last epoch (0-based names: 079 of 80), beside the first run's. */
	cmd = xasprintf("ls %s/results/classification-run1/train/", u.remote);
	text = rig_ssh_ok(cmd);
	cr_expect(strstr(text, "model_epoch_000.pth") != NULL &&
	    strstr(text, "model_epoch_079.pth") != NULL, "%s", text);
	free(text), free(cmd), free(ref), free(id), free(bundle);
	user_close(&u);
}

Test(runs, without_a_results_dir_two_submits_get_two_folders, .timeout = 240)
{
	static const char *const edits[][2] = {
		{ "results_dir: lustre://", "# results_dir: lustre://" },
		{ "    num_epochs: 80\n", "    num_epochs: 2\n" },
	};
	struct user u;
	char *out = NULL, *bundle, *a, *b, *ra, *rb;

	user_open(&u, "folders", probed_config);
	bundle = user_example_bundle(&u, edits, 2);
	a = user_submit(&u, bundle, &out);
	free(out);
	b = user_submit(&u, bundle, &out);
	free(out);
	ra = record_field(&u, a, "results_dir");
	rb = record_field(&u, b, "results_dir");
	cr_expect_neq(strcmp(ra, rb), 0, "one folder: %s", ra);
	cr_expect(strstr(ra, a) != NULL && strstr(rb, b) != NULL, "%s, %s", ra, rb);
	cJSON_Delete(user_wait_final(&u, a, 120));
	cJSON_Delete(user_wait_final(&u, b, 120));
	free(a), free(b), free(ra), free(rb), free(bundle);
	user_close(&u);
}

/* No record points there, but the folder holds another run's files (a run
 * of another machine, or records deleted): the checks that run first in
 * the submit's one command find them, and nothing is written. */
Test(runs, a_folder_holding_a_runs_files_without_a_record_is_refused_naming_them,
    .timeout = 120)
{
	struct user u;
	char *out = NULL, *bundle, *cmd, *want;

	user_open(&u, "found", probed_config);
	bundle = user_example_bundle(&u, few_epochs, 1);
	cmd = xasprintf("mkdir -p %s/results/classification-run1/train && : > "
	    "%s/results/classification-run1/train/status.json", u.remote, u.remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	cr_expect_neq(run(&u, &out, "submit %s", bundle), 0, "submitted:\n%s", out);
	want = xasprintf("already holds another run: %s/results/classification-run1/train/"
	    "status.json is there", u.remote);
	cr_expect(strstr(out, want) != NULL, "wanted '%s':\n%s", want, out);
	free(want), free(out);
	cr_expect_eq(job_folders(&u), 0, "a job folder was written");
	free(bundle);
	user_close(&u);
}

/* Python and Hugging Face as NVIDIA's launchers set them, and the job's
 * variables named to Pyxis with --container-env: the bundle's value of a
 * variable the image sets (the stand-in image's TAO_IMAGE_VARIANT) wins,
 * and the cluster's NCCL knob is there. */
Test(env, the_jobs_variables_win_over_the_images_inside_the_container, .timeout = 240)
{
	static const char *const edits[][2] = {
		{ "action: train\n", "action: train\ncommand: [sh, -c, 'env > {results_dir}/env.txt']\n" },
		{ "  NCCL_DEBUG: WARN\n", "  NCCL_DEBUG: WARN\n  TAO_IMAGE_VARIANT: the-bundles\n" },
	};
	struct user u;
	char *out = NULL, *bundle, *id, *cmd, *env, *raw, *want, *sbatch;

	user_open(&u, "env", probed_config);
	bundle = user_example_bundle(&u, edits, 2);
	id = user_submit(&u, bundle, &out);
	free(out);
	cJSON_Delete(user_wait_final(&u, id, 180));
	cmd = xasprintf("cat %s/results/classification-run1/env.txt", u.remote);
	raw = rig_ssh_ok(cmd);
	env = xasprintf("\n%s", raw);
	free(raw);
	want = xasprintf("HF_HOME=%s/jobs/%s/.cache/huggingface\n", u.remote, id);
	cr_expect(strstr(env, "\nPYTHONNOUSERSITE=1\n") != NULL, "%s", env);
	cr_expect(strstr(env, "\nPYTHONDONTWRITEBYTECODE=1\n") != NULL, "%s", env);
	cr_expect(strstr(env, want) != NULL, "wanted %s in:\n%s", want, env);
	cr_expect(strstr(env, "\nTAO_IMAGE_VARIANT=the-bundles\n") != NULL, "%s", env);
	cr_expect(strstr(env, "\nNCCL_P2P_DISABLE=1\n") != NULL, "%s", env);
	sbatch = user_job_file(&u, id, "sbatch/*.sbatch");
	cr_expect(strstr(sbatch, "--container-env=PYTHONNOUSERSITE,PYTHONDONTWRITEBYTECODE,HF_HOME,"
	    "TAOTOP_JOB_ID,") != NULL, "%s", sbatch);
	free(sbatch), free(want), free(env), free(cmd), free(id), free(bundle);
	user_close(&u);
}

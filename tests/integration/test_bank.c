/*
 * A spec bundle of NVIDIA's skill bank (spec_bundle.schema.json), written
 * by hand as a user writes one, run as it is: `taotop submit` reads it
 * beside taotop's own format, checks its declared inputs on the cluster
 * before anything is written, mounts them, writes their paths and the
 * job's GPUs into the spec it stages, and the TAO stand-in (dino) trains
 * on that spec to Done. A missing input stops the submit naming its
 * spec_key and path; the same bundle in JSON dry-runs as the YAML one.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "util/xmalloc.h"

/* A cached NCCL answer that covers 1 node x 4 GPUs: no probe here. */
static const char *probed_config =
	"clusters:\n"
	"  rig:\n"
	"    nccl_env: \"NCCL_P2P_DISABLE=1\"\n"
	"    nccl_env_shape: \"1x8\"\n";

/* The bundle: mode config, two declared inputs by spec key (the training
 * images, a folder; its annotations, a file), 1 node x 4 GPUs told to TAO
 * at train.num_gpus. %R: the user's folder on the cluster; the second
 * input's file is `json`. */
static char *bank_yaml(const struct user *u, const char *json)
{
	return xasprintf(
	    "network_arch: dino\n"
	    "action: train\n"
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "mode: config\n"
	    "command: dino train -e {config_path}\n"
	    "config_format: yaml\n"
	    "spec:\n"
	    "  dataset:\n"
	    "    train_data_sources:\n"
	    "      - image_dir: /placeholder/images\n"
	    "        json_file: /placeholder/train.json\n"
	    "    batch_size: 4\n"
	    "  train:\n"
	    "    num_epochs: 2\n"
	    "declared_inputs:\n"
	    "  - spec_key: dataset.train_data_sources[0].image_dir\n"
	    "    type: folder\n"
	    "    uri: lustre://%s/datasets/imagenet/train\n"
	    "  - spec_key: dataset.train_data_sources[0].json_file\n"
	    "    type: file\n"
	    "    uri: %s/datasets/%s\n"
	    "declared_outputs:\n"
	    "  - spec_key: results_dir\n"
	    "    type: folder\n"
	    "upload_excludes: [inputs/]\n"
	    "compute_shape:\n"
	    "  gpus: 4\n"
	    "  nodes: 1\n"
	    "gpu_spec_key: train.num_gpus\n", u->remote, u->remote, json);
}

static char *write_local(const struct user *u, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", u->local, name);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

Test(bank, a_bank_bundle_written_by_hand_trains_to_done_with_its_inputs_in_the_spec,
    .timeout = 300)
{
	struct user u;
	char *cmd, *text, *bundle, *path, *out = NULL, *id, *printed, *want;
	cJSON *st;

	user_open(&u, "bank", probed_config);
	cmd = xasprintf("echo '{}' > %s/datasets/train.json", u.remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	text = bank_yaml(&u, "train.json");
	bundle = write_local(&u, "dino.spec.yaml", text);
	free(text);
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	/* The staged spec holds the inputs' paths, TAO's GPUs and the
	 * results folder the output's key was bound to. */
	text = user_job_file(&u, id, "specs/spec.yaml");
	want = xasprintf("image_dir: %s/datasets/imagenet/train\n", u.remote);
	cr_expect(strstr(text, want) != NULL, "wanted '%s' in the staged spec:\n%s", want, text);
	free(want);
	want = xasprintf("json_file: %s/datasets/train.json\n", u.remote);
	cr_expect(strstr(text, want) != NULL, "wanted '%s' in the staged spec:\n%s", want, text);
	free(want);
	cr_expect(strstr(text, "  num_gpus: 4\n") != NULL, "%s", text);
	want = xasprintf("results_dir: %s/jobs/%s/results", u.remote, id);
	cr_expect(strstr(text, want) != NULL, "wanted '%s' in the staged spec:\n%s", want, text);
	free(want), free(text);
	/* TAO (the stand-in) read its count from that spec, and wrote where
	 * the spec said. */
	text = user_job_file(&u, id, "slurm-logs/*/main.out");
	cr_expect(strstr(text, "num_gpus 4, num_nodes 1") != NULL, "%s", text);
	cr_expect(strstr(text, "num_gpus from spec") != NULL, "%s", text);
	free(text);
	text = user_job_file(&u, id, "results/train/status.json");
	cr_expect(strstr(text, "\"STARTED\"") != NULL, "TAO wrote no status there:\n%s", text);
	free(text);
	/* Both inputs mounted into the container, as the datasets are. */
	path = xasprintf("sbatch/job_%s.sbatch", id);
	text = user_job_file(&u, id, path);
	want = xasprintf("%s/datasets/imagenet/train:%s/datasets/imagenet/train,%s/datasets/"
	    "train.json:%s/datasets/train.json,", u.remote, u.remote, u.remote, u.remote);
	cr_expect(strstr(text, want) != NULL, "wanted the mounts '%s' in the sbatch:\n%s", want,
	    text);
	free(want), free(text), free(path);
	free(printed);
	cJSON_Delete(st);
	free(id), free(bundle);
	user_close(&u);
}

Test(bank, a_missing_input_stops_the_submit_before_anything_is_written, .timeout = 120)
{
	struct user u;
	char *text, *bundle, *args, *out = NULL, *cmd, *listing;
	int rc;

	user_open(&u, "bank-missing", probed_config);
	text = bank_yaml(&u, "no-such.json");
	bundle = write_local(&u, "dino.spec.yaml", text);
	free(text);
	args = xasprintf("submit %s", bundle);
	rc = rig_taotop(u.env, args, &out);
	rig_check_sanitizer(rc, out, "submit");
	cr_expect_neq(rc, 0, "a submit with a missing input went through:\n%s", out);
	{
		char *want = xasprintf("declared_inputs[1] (spec_key dataset.train_data_sources[0]."
		    "json_file): %s/datasets/no-such.json does not exist", u.remote);
		cr_expect(strstr(out, want) != NULL, "wanted '%s' in:\n%s", want, out);
		free(want);
	}
	/* Nothing written: no job folder, no record. */
	cmd = xasprintf("ls -A %s/jobs", u.remote);
	listing = rig_ssh_ok(cmd);
	cr_expect_str_eq(listing, "", "the jobs folder holds: %s", listing);
	free(listing), free(cmd), free(out), free(args);
	rc = rig_taotop(u.env, "jobs --json", &out);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "\"tao-") == NULL, "a record was opened:\n%s", out);
	free(out), free(bundle);
	user_close(&u);
}

/* The bank's tools write JSON; the same bundle in JSON is the same job. */
Test(bank, the_same_bundle_in_json_and_in_yaml_dry_runs_the_same, .timeout = 120)
{
	struct user u;
	char *cmd, *text, *yaml, *json, *args, *out_y = NULL, *out_j = NULL;
	int rc;

	user_open(&u, "bank-json", probed_config);
	cmd = xasprintf("echo '{}' > %s/datasets/train.json", u.remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	text = bank_yaml(&u, "train.json");
	yaml = write_local(&u, "dino.spec.yaml", text);
	free(text);
	text = xasprintf(
	    "{\"network_arch\": \"dino\", \"action\": \"train\",\n"
	    " \"image\": \"nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\",\n"
	    " \"mode\": \"config\", \"command\": \"dino train -e {config_path}\",\n"
	    " \"config_format\": \"yaml\",\n"
	    " \"spec\": {\"dataset\": {\"train_data_sources\": [{\"image_dir\": \"/placeholder/images\",\n"
	    "     \"json_file\": \"/placeholder/train.json\"}], \"batch_size\": 4},\n"
	    "   \"train\": {\"num_epochs\": 2}},\n"
	    " \"declared_inputs\": [\n"
	    "   {\"spec_key\": \"dataset.train_data_sources[0].image_dir\", \"type\": \"folder\",\n"
	    "    \"uri\": \"lustre://%s/datasets/imagenet/train\"},\n"
	    "   {\"spec_key\": \"dataset.train_data_sources[0].json_file\", \"type\": \"file\",\n"
	    "    \"uri\": \"%s/datasets/train.json\"}],\n"
	    " \"declared_outputs\": [{\"spec_key\": \"results_dir\", \"type\": \"folder\"}],\n"
	    " \"upload_excludes\": [\"inputs/\"],\n"
	    " \"compute_shape\": {\"gpus\": 4, \"nodes\": 1},\n"
	    " \"gpu_spec_key\": \"train.num_gpus\"}\n", u.remote, u.remote);
	json = write_local(&u, "dino.spec.json", text);
	free(text);
	args = xasprintf("submit --dry-run %s", yaml);
	rc = rig_taotop(u.env, args, &out_y);
	rig_check_sanitizer(rc, out_y, "dry run");
	cr_assert_eq(rc, 0, "%s", out_y);
	free(args);
	args = xasprintf("submit --dry-run %s", json);
	rc = rig_taotop(u.env, args, &out_j);
	rig_check_sanitizer(rc, out_j, "dry run");
	cr_assert_eq(rc, 0, "%s", out_j);
	cr_expect(strstr(out_y, "bundle      the skill bank's spec bundle (spec_bundle.schema.json), "
	    "mode config, spec staged as yaml") != NULL, "the dry run names the format:\n%s", out_y);
	cr_expect_str_eq(out_j, out_y, "the JSON bundle's dry run differs from the YAML one's");
	free(args), free(out_y), free(out_j), free(yaml), free(json);
	user_close(&u);
}

/* The bank's args mode, its data-services case: no spec, the command and
 * its args as the job's words, 0 GPUs a job without any (SLURM takes
 * --gres=gpu:0), no NCCL probe. */
Test(bank, mode_args_dry_runs_its_command_and_args_as_words_on_no_gpus, .timeout = 120)
{
	struct user u;
	char *text, *bundle, *args, *out = NULL;
	int rc;

	user_open(&u, "bank-args", NULL);
	text = xasprintf(
	    "network_arch: data_services\n"
	    "action: gap_analysis\n"
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "mode: args\n"
	    "command: gap_analysis vcn_aoi\n"
	    "args: [--results-parquet, '%s/datasets/imagenet/train', --title, 'a b $(id)']\n"
	    "declared_inputs:\n"
	    "  - {spec_key: results_parquet, type: folder, uri: 'lustre://%s/datasets/imagenet/train'}\n"
	    "  - {spec_key: model, type: file, optional: true, uri: 'ngc://nvidia/tao/model:v1'}\n"
	    "declared_outputs: [{spec_key: results_dir, type: folder}]\n"
	    "compute_shape: {gpus: 0, nodes: 1}\n", u.remote, u.remote);
	bundle = write_local(&u, "args.spec.yaml", text);
	free(text);
	args = xasprintf("submit --dry-run %s", bundle);
	rc = rig_taotop(u.env, args, &out);
	rig_check_sanitizer(rc, out, "dry run");
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "bundle      the skill bank's spec bundle (spec_bundle.schema.json), "
	    "mode args\n") != NULL, "%s", out);
	cr_expect(strstr(out, "#SBATCH --gres=gpu:0\n") != NULL, "%s", out);
	text = xasprintf("gap_analysis vcn_aoi --results-parquet %s/datasets/imagenet/train --title "
	    "'a b $(id)'", u.remote);
	cr_expect(strstr(out, text) != NULL, "wanted the words '%s' in:\n%s", text, out);
	free(text);
	cr_expect(strstr(out, "the NCCL probe runs as the job's first step") == NULL,
	    "no GPUs, no probe:\n%s", out);
	cr_expect(strstr(out, "declared_inputs[1] (model) ngc://nvidia/tao/model:v1 is not on "
	    "shared storage: optional, so left out") != NULL, "%s", out);
	free(args), free(out), free(bundle);
	user_close(&u);
}

/* An optional input that is missing is left out: the submit goes on (the
 * launch's gate closes on it, and the long way judges it), the spec keeps
 * its own value there, nothing mounts it, and the record says why. */
Test(bank, a_missing_optional_input_is_left_out_and_the_job_runs, .timeout = 300)
{
	struct user u;
	char *text, *bundle, *out = NULL, *id, *printed, *want;
	cJSON *st;

	user_open(&u, "bank-optional", probed_config);
	text = bank_yaml(&u, "no-such.json");
	{
		char *at = strstr(text, "    type: file\n");
		char *with = xasprintf("%.*s    type: file\n    optional: true\n%s", (int)(at - text),
		    text, at + strlen("    type: file\n"));
		free(text);
		text = with;
	}
	bundle = write_local(&u, "dino.spec.yaml", text);
	free(text);
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	want = xasprintf("declared_inputs[1] (dataset.train_data_sources[0].json_file) "
	    "%s/datasets/no-such.json does not exist: optional, so left out", u.remote);
	cr_expect(user_history_says(st, want), "the record does not say '%s':\n%s", want, printed);
	free(want);
	text = user_job_file(&u, id, "specs/spec.yaml");
	cr_expect(strstr(text, "json_file: /placeholder/train.json") != NULL, "%s", text);
	want = xasprintf("image_dir: %s/datasets/imagenet/train", u.remote);
	cr_expect(strstr(text, want) != NULL, "%s", text);
	free(want), free(text);
	want = xasprintf("sbatch/job_%s.sbatch", id);
	text = user_job_file(&u, id, want);
	cr_expect(strstr(text, "no-such.json") == NULL, "it is mounted:\n%s", text);
	free(want), free(text);
	free(printed);
	cJSON_Delete(st);
	free(id), free(bundle);
	user_close(&u);
}

/* The bundle above with the bank's execution block as its model skill
 * writes one: an environment bound once the record is open, a
 * pre-command and a post-command (the leader's) that note what ran, a
 * helper staged beside the inputs with its checksum, and the child's exit
 * code kept. train_extra: more of TAO's train keys (a failure). */
static char *bank_with_execution(const struct user *u, const char *sum, const char *train_extra)
{
	char *base = bank_yaml(u, "train.json"), *s;
	const char *at = strstr(base, "    num_epochs: 2\n");

	cr_assert_not_null(at);
	s = xasprintf("%.*s    num_epochs: 2\n%s%s"
	    "execution:\n"
	    "  environment:\n"
	    "    MARK_DIR: '{results_dir}'\n"
	    "    RUN_ID: '{job_id}'\n"
	    "  pre_commands:\n"
	    "    - 'echo \"pre $RUN_ID\" >> \"$MARK_DIR/order-$SLURM_PROCID\"'\n"
	    "    - 'cat \"$MARK_DIR/../inputs/action-helpers/tools/check.sh\" >> "
	    "\"$MARK_DIR/order-$SLURM_PROCID\"'\n"
	    "  post_commands:\n"
	    "    - 'echo post >> \"$MARK_DIR/order-$SLURM_PROCID\"'\n"
	    "  post_scope: leader\n"
	    "  supporting_files:\n"
	    "    - {source: helpers/check.sh, destination: tools/check.sh, sha256: %s}\n"
	    "  completion:\n"
	    "    child_exit_code_path: child_exit_code\n",
	    (int)(at - base), base, train_extra, at + strlen("    num_epochs: 2\n"), sum);
	free(base);
	return s;
}

static char *bank_helper(const struct user *u)
{
	char *cmd = xasprintf("mkdir -p %s/helpers && printf 'echo helper here\\n' > "
	    "%s/helpers/check.sh && sha256sum %s/helpers/check.sh | cut -c1-64", u->local, u->local,
	    u->local), *sum = NULL;
	const char *const argv[] = { "sh", "-c", cmd, NULL };

	cr_assert_eq(rig_run(argv, &sum), 0);
	sum[64] = '\0';
	free(cmd);
	return sum;
}

/* The acceptance, as a user: a bank bundle with its execution
 * block trains to Done through the stand-ins (the inputs checked, mounted
 * and in the spec; the pre-commands ran before TAO and the post-command
 * after it, the leader's; the exit-code file holds 0); the same bundle
 * whose training fails (TAO's FAILURE, exit 1): no post-command, the
 * exit-code file holds TAO's 1, the job is Error. */
Test(bank, a_bank_bundle_with_its_execution_block_runs_its_lifecycle_around_tao,
    .timeout = 420)
{
	struct user u;
	char *cmd, *sum, *text, *bundle, *out = NULL, *id, *printed, *want, *order;
	cJSON *st;

	user_open(&u, "bankexec", probed_config);
	cmd = xasprintf("echo '{}' > %s/datasets/train.json", u.remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	sum = bank_helper(&u);

	text = bank_with_execution(&u, sum, "");
	bundle = write_local(&u, "dino.spec.yaml", text);
	free(text);
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	text = user_job_file(&u, id, "specs/spec.yaml");
	want = xasprintf("image_dir: %s/datasets/imagenet/train\n", u.remote);
	cr_expect(strstr(text, want) != NULL && strstr(text, "  num_gpus: 4\n") != NULL,
	    "the inputs and TAO's GPUs in the staged spec:\n%s", text);
	free(want), free(text);
	order = user_job_file(&u, id, "results/order-0");
	want = xasprintf("pre %s\necho helper here\npost", id);	/* (read without its last newline) */
	cr_expect_str_eq(order, want, "pre, the helper, then post (after TAO) on task 0");
	free(want), free(order);
	text = user_job_file(&u, id, "results/child_exit_code");
	cr_expect_str_eq(text, "0");
	free(text);
	text = user_job_file(&u, id, "slurm-logs/*/main.out");
	cr_expect(strstr(text, "num_gpus 4, num_nodes 1") != NULL, "TAO ran between:\n%s", text);
	free(text);
	text = user_job_file(&u, id, "inputs/action-helpers.manifest.json");
	cr_expect(strstr(text, sum) != NULL && strstr(text, "tools/check.sh") != NULL, "%s", text);
	free(text);
	free(printed), free(id), free(bundle);
	cJSON_Delete(st);

	/* TAO fails at its first epoch (File system error: exit 1). */
	text = bank_with_execution(&u, sum, "    fail_at_epoch: 1\n");
	bundle = write_local(&u, "dino-fails.spec.yaml", text);
	free(text);
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 240);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Error", "%s", printed);
	order = user_job_file(&u, id, "results/order-0");
	want = xasprintf("pre %s\necho helper here", id);
	cr_expect_str_eq(order, want, "no post-command after a failed training");
	free(want), free(order);
	text = user_job_file(&u, id, "results/child_exit_code");
	cr_expect_str_eq(text, "1", "TAO's own exit code, kept through cleanup");
	free(text);
	free(printed), free(id), free(bundle), free(sum);
	cJSON_Delete(st);
	user_close(&u);
}

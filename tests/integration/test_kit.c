/*
 * The rig's stand-ins (tests/cluster/README.md), checked through real sbatch
 * and srun on the test cluster: the TAO entry points inside the image, the
 * Pyxis stand-in's container (only the mounts, the image's environment and
 * working directory), the Enroot stand-in's refusals, and the real NCCL
 * probe under the torchrun and torch stand-ins.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/track/taostatus.h"
#include "engine/submit/template.h"
#include "integration/helper_rig.h"
#include "util/file.h"
#include "util/xmalloc.h"

#define IMAGE_URI "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt"

/* A folder on the shared storage private to this test, the test user's. */
static char *scratch(const char *name)
{
	const struct rig *r = rig_get();
	char *dir = xasprintf("%s/kit-tests/%s-%d", r->shared, name, rig_uniq());
	char *cmd = xasprintf("rm -rf %s && mkdir -p %s", dir, dir);

	free(rig_ssh_ok(cmd));
	free(cmd);
	return dir;
}

/* Write a file on the shared storage (this machine's) as the test user's. */
static void put_file(const char *path, const char *text)
{
	const struct rig *r = rig_get();
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rig_local("chown %s: %s", r->user, path), 0);
}

/* `enroot import -o DIR/FILE URI` as the test user; its output and rc. */
static int import(const char *dir, const char *file, const char *uri, const char *env,
    char **out)
{
	char *cmd = xasprintf("cd %s && %s enroot import -o %s/%s '%s'", dir, env ? env : "",
	    dir, file, uri);
	int rc = rig_ssh(cmd, out);

	free(cmd);
	return rc;
}

static char *image(const char *dir)
{
	char *out = NULL;
	int rc = import(dir, "tao.sqsh", IMAGE_URI, NULL, &out);

	cr_assert_eq(rc, 0, "enroot import failed: %s", out);
	free(out);
	return xasprintf("%s/tao.sqsh", dir);
}

/* srun (one task) in the image with extra options, as the test user, from
 * dir; its output (stdout and stderr) and exit status. */
static int srun_in(const char *dir, const char *sqsh, const char *opts, const char *cmd,
    char **out)
{
	char *line = xasprintf("cd %s && srun -N1 -n1 -t 5 --container-image=%s %s %s", dir, sqsh,
	    opts, cmd);
	int rc = rig_ssh(line, out);

	free(line);
	return rc;
}

static char *read_remote(const char *path)
{
	char *cmd = xasprintf("cat %s", path), *out = NULL;

	rig_ssh(cmd, &out);
	free(cmd);
	return out;
}

/* Render a template of templates/ (TAOTOP_SHARE) into dir/name.sbatch. */
static char *render(const char *dir, const char *tmpl, const char *name,
    const struct tmpl_value *v, size_t n)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *path = xasprintf("%s/templates/%s", share ? share : ".", tmpl);
	char *err = NULL, *text = file_read_all(path, NULL, &err), *out = NULL;
	char *dest = xasprintf("%s/%s.sbatch", dir, name);

	cr_assert_not_null(text, "%s", err);
	cr_assert_eq(template_render(tmpl, text, v, n, &out, &err), 0, "%s", err);
	put_file(dest, out);
	free(text), free(out), free(path);
	return dest;
}

/* sbatch held, make the %x-%j/ log folder SLURM does not make, release, and
 * wait for the end; the job id. */
static char *run_batch(const char *dir, const char *name, const char *sbatch, char **state)
{
	char *cmd = xasprintf("cd %s && sbatch --hold --parsable %s", dir, sbatch);
	char *id = rig_ssh_ok(cmd);

	free(cmd);
	cr_assert(atoi(id) > 0, "sbatch said '%s'", id);
	cmd = xasprintf("mkdir -p %s/%s-%s && scontrol release %s", dir, name, id, id);
	free(rig_ssh_ok(cmd));
	free(cmd);
	*state = rig_wait_state(id, "COMPLETED FAILED CANCELLED TIMEOUT NODE_FAIL", 120);
	return id;
}

/* A TAO training job through taotop's single-node template. */
static char *tao_job(const char *dir, const char *name, const char *spec, char **state)
{
	char *sqsh = image(dir), *spec_path = xasprintf("%s/spec.yaml", dir);
	char *mounts = xasprintf("%s:%s", dir, dir);
	char *command = xasprintf("classification_pyt train -e %s results_dir=%s/results",
	    spec_path, dir);
	/* As taotop's submit writes it: the template's HF_HOME is under it. */
	char *jobenv = xasprintf("export TAOTOP_JOB_DIR=%s", dir);
	/* One segment: the kit's jobs never reach their child timeout. */
	char *segments = xasprintf("TAOTOP_REQUEUE=0\nTAOTOP_CHILD_TIMEOUT_S=300\n"
	    "TAOTOP_MAX_SEGMENTS=1\nTAOTOP_CKPT_ROOT=%s/results\nTAOTOP_RESUME_KEY=''\n"
	    "TAOTOP_RESUME_FIRST=0\nTAOTOP_SEGMENTS_FILE=%s/segments.jsonl", dir, dir);
	const struct tmpl_value v[] = {
		{ "JOB_NAME", name }, { "NUM_GPUS", "1" }, { "CPUS_PER_TASK", "1" },
		{ "TIME", "00:05:00" }, { "LOG_DIR", dir },
		{ "SBATCH_EXTRA", "#SBATCH --nodes=1\n#SBATCH --partition=polar" },
		{ "ENV_FILE", "" }, { "EXTRA_ENV", ": none" }, { "IMAGE", sqsh },
		{ "CONTAINER_MOUNTS", mounts },
		{ "COMMAND", command }, { "JOB_ENV", jobenv },
		/* What the template itself sets, as taotop's submit names them. */
		{ "CONTAINER_ENV", "PYTHONNOUSERSITE,PYTHONDONTWRITEBYTECODE,HF_HOME" },
		{ "SEGMENTS", segments }, { "NCCL_PROBE", "TAOTOP_PROBE=0" },
		{ "EXECUTION", "TAOTOP_EXIT_FILE=\nTAOTOP_LIFECYCLE=\nTAOTOP_EXEC_ENV=" },
	};
	char *sbatch, *id;

	put_file(spec_path, spec);
	sbatch = render(dir, "singlenode.sbatch.tmpl", name, v, sizeof(v) / sizeof(v[0]));
	id = run_batch(dir, name, sbatch, state);
	free(sqsh), free(spec_path), free(mounts), free(command), free(sbatch), free(jobenv);
	free(segments);
	return id;
}

static void job_logs(const char *dir, const char *name, const char *id, char **out, char **err)
{
	char *p = xasprintf("%s/%s-%s/main.out", dir, name, id);
	*out = read_remote(p);
	free(p);
	p = xasprintf("%s/%s-%s/main.err", dir, name, id);
	*err = read_remote(p);
	free(p);
}

/* status.json read with taotop's own parser, from the train task folder
 * (TAO PyTorch: <results_dir>/train/, core/utilities.py). */
static void status_of(const char *dir, struct tao_status *ts)
{
	char *path = xasprintf("%s/results/train/status.json", dir), *text = read_remote(path);

	tao_status_init(ts);
	tao_status_set_task(ts, "train");
	tao_status_feed(ts, text, strlen(text));
	free(path), free(text);
}

Test(kit, tao_train_succeeds_with_status_lines, .timeout = 180)
{
	char *dir = scratch("tao-ok"), *state, *out, *err, *msg = NULL;
	struct tao_status ts;
	enum tao_state to;
	char *id = tao_job(dir, "taook", "train:\n  num_epochs: 3\n  seconds_per_epoch: 0\n", &state);

	job_logs(dir, "taook", id, &out, &err);
	cr_expect(strncmp(state, "COMPLETED", 9) == 0, "state %s\n%s\n%s", state, out, err);
	cr_expect_not_null(strstr(out, "Epoch 2: 100%"), "Lightning's last bar: %s", out);
	cr_expect_not_null(strstr(err, "Execution status: PASS"), "%s", err);
	status_of(dir, &ts);
	cr_expect_geq(ts.lines, 5, "%zu lines", ts.lines);
	cr_expect_eq(ts.bad_lines, 0);
	cr_expect_str_eq(ts.status, "RUNNING", "TAO PyTorch never writes SUCCESS");
	cr_assert_eq(tao_status_judge(&ts, &to, &msg), 1, "no final line");
	cr_expect_eq(to, TAO_DONE);
	cr_expect_str_eq(msg, "status.json: Train finished successfully.");
	cr_expect_eq(ts.epoch, 3, "3 of 3 as the user counts");
	cr_expect_eq(ts.max_epoch, 3);
	cr_expect_str_eq(ts.metric, "train_loss");
	cr_expect_eq(ts.nseries, 3, "one loss per epoch");
	cr_expect(ts.nseries == 3 && ts.series[2] < ts.series[0], "the loss falls");
	tao_status_free(&ts);
	free(msg);
	free(dir), free(state), free(out), free(err), free(id);
}

Test(kit, tao_nan_loss_is_kept_and_a_listed_failure_writes_failure, .timeout = 180)
{
	char *dir = scratch("tao-nan"), *state, *out, *err, *msg = NULL;
	struct tao_status ts;
	enum tao_state to;
	char *id = tao_job(dir, "taonan",
	    "stand_in:\n  nan_at_epoch: 2\ntrain:\n  num_epochs: 4\n  seconds_per_epoch: 0\n"
	    "  fail_at_epoch: 3\n", &state);

	job_logs(dir, "taonan", id, &out, &err);
	cr_expect(strncmp(state, "FAILED", 6) == 0, "state %s", state);
	cr_expect_not_null(strstr(err, "Execution status: FAIL"), "%s", err);
	status_of(dir, &ts);
	cr_expect_eq(ts.bad_lines, 0, "a bare NaN loses no line");
	cr_expect_str_eq(ts.status, "FAILURE");
	cr_assert_eq(tao_status_judge(&ts, &to, &msg), 1);
	cr_expect_eq(to, TAO_ERROR);
	cr_expect(strncmp(msg, "status.json: FAILURE: File system error: ", 41) == 0, "%s", msg);
	cr_expect_geq(ts.nseries, 2);
	cr_expect(ts.nseries >= 2 && isnan(ts.series[1]), "epoch 2's loss is NaN");
	tao_status_free(&ts);
	free(msg);
	free(dir), free(state), free(out), free(err), free(id);
}

Test(kit, tao_nccl_timeout_aborts_without_a_failure_line, .timeout = 180)
{
	char *dir = scratch("tao-nccl"), *state, *out, *err, *msg = NULL;
	struct tao_status ts;
	enum tao_state to;
	char *id = tao_job(dir, "taonccl",
	    "train:\n  num_epochs: 4\n  seconds_per_epoch: 0\n  nccl_timeout_at_epoch: 2\n", &state);

	job_logs(dir, "taonccl", id, &out, &err);
	cr_expect(strncmp(state, "FAILED", 6) == 0, "state %s", state);
	/* The task's output is merged into the launcher's stdout. */
	cr_expect_not_null(strstr(out, "[Rank 0] Watchdog caught collective operation timeout: "
	    "WorkNCCL(SeqNum="), "%s", out);
	cr_expect_not_null(strstr(out, "ran for 1800000 milliseconds before timing out."), "%s", out);
	status_of(dir, &ts);
	cr_expect_eq(tao_status_judge(&ts, &to, &msg), 0, "an abort writes no final line: %s",
	    msg ? msg : "");
	cr_expect_eq(ts.epoch, 1);
	tao_status_free(&ts);
	free(msg);
	free(dir), free(state), free(out), free(err), free(id);
}

Test(kit, tao_refuses_unknown_actions_and_missing_specs, .timeout = 120)
{
	char *dir = scratch("tao-refuse"), *sqsh = image(dir), *out = NULL, *opts;

	opts = xasprintf("--container-mounts=%s:%s", dir, dir);
	cr_expect_eq(srun_in(dir, sqsh, opts, "dino frobnicate -e x.yaml", &out), 2, "%s", out);
	cr_expect_not_null(strstr(out, "invalid choice: 'frobnicate'"), "%s", out);
	free(out);
	char *cmd = xasprintf("dino train -e %s/none.yaml results_dir=%s/r", dir, dir);
	cr_expect_eq(srun_in(dir, sqsh, opts, cmd, &out), 1, "%s", out);
	/* entrypoint.py's own words for a missing spec (TAO 7.0.1). */
	cr_expect_not_null(strstr(out, "ERROR: The indicated experiment spec file `"), "%s", out);
	cr_expect_not_null(strstr(out, "/none.yaml` doesn't exist!"), "%s", out);
	free(out), free(cmd), free(opts), free(sqsh), free(dir);
}

Test(kit, the_container_sees_its_mounts_and_nothing_else, .timeout = 120)
{
	char *dir = scratch("mounts"), *sqsh = image(dir), *out = NULL, *opts, *cmd;
	char *secret = xasprintf("%s/secret.txt", dir);

	put_file(secret, "host only\n");
	free(secret);
	cmd = xasprintf("mkdir -p %s/data && echo in-data > %s/data/f.txt", dir, dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
	/* The data folder at /workspace/data: a relative path from the image's
	 * WORKDIR reaches it; the host's copy of the scratch folder does not. */
	opts = xasprintf("--container-mounts=%s/data:/workspace/data", dir);
	cmd = xasprintf("sh -c 'pwd; cat data/f.txt; cat %s/secret.txt; ls -d %s; "
	    "ls /var/tmp | wc -l; touch /x'", dir, dir);
	srun_in(dir, sqsh, opts, cmd, &out);
	/* slurmstepd's note that it cannot chdir to the unmounted folder may
	 * come between the two lines (stderr and stdout share the output). */
	cr_expect(strncmp(out, "/workspace\n", 11) == 0 || strstr(out, "\n/workspace\n") != NULL,
	    "%s", out);
	cr_expect(strstr(out, "\nin-data\n") != NULL, "%s", out);
	cr_expect_not_null(strstr(out, "secret.txt': No such file or directory"), "%s", out);
	cr_expect_null(strstr(out, "host only"), "%s", out);
	cr_expect_not_null(strstr(out, "\n0\n"), "the host's /var/tmp shows: %s", out);
	cr_expect_not_null(strstr(out, "touch: /x: Permission denied"), "%s", out);
	free(out), free(cmd);
	/* A job reading a host path it did not mount fails. */
	cmd = xasprintf("cat %s/secret.txt", dir);
	cr_expect_neq(srun_in(dir, sqsh, opts, cmd, &out), 0, "%s", out);
	free(out), free(cmd), free(opts), free(sqsh), free(dir);
}

Test(kit, the_image_env_wins_unless_container_env_names_it, .timeout = 120)
{
	char *dir = scratch("env"), *sqsh = image(dir), *out = NULL;
	const char *cmd = "sh -c 'echo V=$TAO_IMAGE_VARIANT J=$KIT_JOB_ONLY P=$PATH'";
	char *line = xasprintf("cd %s && export TAO_IMAGE_VARIANT=from-job KIT_JOB_ONLY=yes && "
	    "srun -N1 -n1 -t 5 --container-image=%s %s", dir, sqsh, cmd);

	cr_expect_eq(rig_ssh(line, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "V=tao-stand-in J=yes P=/usr/local/sbin:/usr/local/bin:"),
	    "the image's value wins, the job's own variables pass: %s", out);
	free(out), free(line);
	line = xasprintf("cd %s && export TAO_IMAGE_VARIANT=from-job && "
	    "srun -N1 -n1 -t 5 --container-image=%s --container-env=PATH,TAO_IMAGE_VARIANT %s",
	    dir, sqsh, cmd);
	cr_expect_eq(rig_ssh(line, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "V=from-job"), "--container-env keeps the job's: %s", out);
	cr_expect_null(strstr(out, "P=/usr/local/sbin"), "--container-env=PATH keeps the job's: %s",
	    out);
	free(out), free(line), free(sqsh), free(dir);
}

Test(kit, the_workdir_is_the_images_or_the_asked_one, .timeout = 120)
{
	char *dir = scratch("workdir"), *sqsh = image(dir), *out = NULL, *opts;

	cr_expect_eq(srun_in(dir, sqsh, "", "pwd", &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "/workspace\n"), "%s", out);
	free(out);
	opts = xasprintf("--container-mounts=%s:/data --container-workdir=/data", dir);
	cr_expect_eq(srun_in(dir, sqsh, opts, "sh -c 'pwd; ls'", &out), 0, "%s", out);
	/* slurmstepd's note that it cannot chdir to the folder the container
	 * does not have may come between the two lines (as in the mounts test). */
	cr_expect(strncmp(out, "/data\n", 6) == 0 || strstr(out, "\n/data\n") != NULL, "%s", out);
	cr_expect(strstr(out, "\ntao.sqsh\n") != NULL, "%s", out);
	free(out), free(opts);
	cr_expect_neq(srun_in(dir, sqsh, "--container-workdir=/no/such", "pwd", &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "container-workdir /no/such"), "%s", out);
	free(out), free(sqsh), free(dir);
}

Test(kit, a_private_image_needs_credentials, .timeout = 120)
{
	char *dir = scratch("private"), *out = NULL, *env, *creds, *cmd;
	const char *uri = "docker://nvcr.io#ea-tao/tao/tao-toolkit:6.1.0-ea";

	/* Enroot's config folder from ENROOT_CONFIG_PATH: the user's home is
	 * shared with other tests (test_preflight installs credentials). */
	env = xasprintf("ENROOT_CONFIG_PATH=%s/enroot", dir);
	cmd = xasprintf("mkdir -p %s/enroot", dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
	cr_expect_eq(import(dir, "ea.sqsh", uri, env, &out), 1, "%s", out);
	cr_expect_not_null(strstr(out, "[ERROR] URL https://nvcr.io/proxy_auth?scope=repository%3A"
	    "ea-tao%2Ftao%2Ftao-toolkit%3Apull returned error code: 401 Unauthorized"), "%s", out);
	free(out);
	cmd = xasprintf("ls %s", dir);
	out = rig_ssh_ok(cmd);
	cr_expect_null(strstr(out, "ea.sqsh"), "a failed import leaves a file: %s", out);
	free(out), free(cmd);

	/* What taotop preflight --install-ngc-credentials writes. */
	creds = xasprintf("%s/enroot/.credentials", dir);
	put_file(creds, "machine nvcr.io login $oauthtoken password nvapi-kit-test\n"
	    "machine authn.nvidia.com login $oauthtoken password nvapi-kit-test\n");
	cr_assert_eq(rig_local("chmod 600 %s", creds), 0);
	cr_expect_eq(import(dir, "ea.sqsh", uri, env, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "Using credentials from file"), "%s", out);
	free(out);
	cmd = xasprintf("head -c 4 %s/ea.sqsh", dir);
	out = rig_ssh_ok(cmd);
	cr_expect_str_eq(out, "hsqs");
	free(out), free(cmd), free(creds), free(env), free(dir);
}

Test(kit, docker_hub_names_get_library_and_upper_case_is_refused, .timeout = 120)
{
	char *dir = scratch("names"), *out = NULL, *sqsh;

	cr_assert_eq(import(dir, "u.sqsh", "docker://ubuntu:22.04", NULL, &out), 0, "%s", out);
	free(out);
	sqsh = xasprintf("%s/u.sqsh", dir);
	cr_expect_eq(srun_in(dir, sqsh, "", "cat /etc/taotop-stand-in-image", &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "registry-1.docker.io#library/ubuntu:22.04"), "%s", out);
	free(out);
	cr_expect_eq(import(dir, "up.sqsh", "docker://nvcr.io#NVIDIA/tao/tao-toolkit:5.5.0-pyt",
	    NULL, &out), 1, "%s", out);
	cr_expect_not_null(strstr(out, "[ERROR] Invalid image reference: "
	    "docker://nvcr.io#NVIDIA/tao/tao-toolkit:5.5.0-pyt"), "%s", out);
	free(out);
	cr_expect_eq(import(dir, "nf.sqsh", "docker://nvcr.io#nvidia/tao/no-such:1", NULL, &out), 1,
	    "%s", out);
	cr_expect_not_null(strstr(out, "URL https://nvcr.io/v2/nvidia/tao/no-such/manifests/1 "
	    "returned error code: 404 Not Found"), "%s", out);
	free(out), free(sqsh), free(dir);
}

/* The real probe program under the torchrun stand-in, with knobs, on two
 * nodes of two GPUs, launched as the templates' probe block launches it
 * (srun into the image, one torchrun a node, the rendezvous and the knobs
 * named in --container-env); scale shortens the probe's 100 s collective
 * timeout (the stand-in's too: the ranks of both nodes must meet within
 * it). */
static char *probe(const char *dir, const char *name, const char *knobs, const char *scale,
    char **state)
{
	char *sqsh = image(dir), *script = xasprintf("%s/nccl_probe.py", dir), *text;
	char *sbatch = xasprintf("%s/%s.sbatch", dir, name), *id, *cmd;
	const char *share = getenv("TAOTOP_SHARE");

	text = xasprintf("#!/bin/bash\n"
	    "#SBATCH --job-name=%s\n#SBATCH --nodes=2\n#SBATCH --wait-all-nodes=1\n"
	    "#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:2\n#SBATCH --cpus-per-task=4\n"
	    "#SBATCH --time=00:10:00\n#SBATCH --output=%s/%%x-%%j.out\n"
	    "#SBATCH --error=%s/%%x-%%j.out\n#SBATCH --partition=polar\n"
	    "set -Eeuo pipefail\n"
	    "export TAOTOP_STANDIN_TIMEOUT_SCALE=%s\n%s\n"
	    "export WORLD_SIZE=2 NUM_GPU_PER_NODE=2 MASTER_PORT=29501\n"
	    "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
	    "export MASTER_ADDR\n"
	    "srun --container-image=%s --container-mounts=%s:%s \\\n"
	    "\t--container-env=WORLD_SIZE,NUM_GPU_PER_NODE,MASTER_ADDR,MASTER_PORT,"
	    "TAOTOP_STANDIN_TIMEOUT_SCALE,NCCL_P2P_DISABLE,NCCL_IB_DISABLE,NCCL_DEBUG \\\n"
	    "\tsh -c 'exec torchrun --nnodes=\"$WORLD_SIZE\" "
	    "--nproc-per-node=\"$NUM_GPU_PER_NODE\" --node-rank=\"$SLURM_PROCID\" "
	    "--master-addr=\"$MASTER_ADDR\" "
	    "--master-port=\"$MASTER_PORT\" \"$1\"' taotop-probe %s\n",
	    name, dir, dir, scale, knobs, sqsh, dir, dir, script);
	put_file(sbatch, text);
	cmd = xasprintf("cp %s/templates/nccl_probe.py %s && chown %s: %s", share ? share : ".",
	    script, rig_get()->user, script);
	cr_assert_eq(rig_local("%s", cmd), 0);
	id = run_batch(dir, name, sbatch, state);
	free(sqsh), free(script), free(text), free(sbatch), free(cmd);
	return id;
}

Test(kit, the_probe_hangs_without_the_knob_and_fails_with_the_watchdog_text, .timeout = 180)
{
	char *dir = scratch("probe-hang"), *state, *path, *out, *ls;
	char *id = probe(dir, "probehang", ": none", "0.05", &state);	/* waited 5 s */

	path = xasprintf("%s/probehang-%s.out", dir, id);
	out = read_remote(path);
	cr_expect(strncmp(state, "FAILED", 6) == 0, "state %s\n%s", state, out);
	cr_expect_null(strstr(out, "NCCL_PROBE_OK"), "%s", out);
	/* Whichever rank's watchdog fires first says so (as with real PyTorch,
	 * on a loaded machine not always rank 0); torchrun then stops the rest. */
	int ranks = 0;
	for (int rank = 0; rank < 4; rank++) {
		char *said = xasprintf("[Rank %d] Watchdog caught collective operation timeout: "
		    "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
		    "Timeout(ms)=100000) ran for ", rank);
		ranks += strstr(out, said) != NULL;
		free(said);
	}
	cr_expect(ranks > 0, "no rank of the 4 said its collective timed out: %s", out);
	cr_expect_not_null(strstr(out, "milliseconds before timing out."), "%s", out);
	cr_expect_not_null(strstr(out, "torch.distributed.elastic.multiprocessing.errors."
	    "ChildFailedError"), "%s", out);
	free(path);
	path = xasprintf("ls -a %s", dir);
	ls = rig_ssh_ok(path);
	cr_expect_null(strstr(ls, ".torchrun-rdzv"), "the rendezvous folder stays: %s", ls);
	free(ls), free(path), free(out), free(state), free(id), free(dir);
}

Test(kit, the_probe_passes_with_p2p_disabled, .timeout = 180)
{
	char *dir = scratch("probe-ok"), *state, *path, *out;
	char *id = probe(dir, "probeok", "export NCCL_P2P_DISABLE=1", "0.5", &state);

	path = xasprintf("%s/probeok-%s.out", dir, id);
	out = read_remote(path);
	cr_expect(strncmp(state, "COMPLETED", 9) == 0, "state %s\n%s", state, out);
	cr_expect_not_null(strstr(out, "NCCL_PROBE_OK world=4\n"), "%s", out);
	cr_expect_null(strstr(out, "Watchdog"), "%s", out);
	free(path), free(out), free(state), free(id), free(dir);
}

/*
 * The test cluster is real: these drive it over ssh as the test user with the
 * system's OpenSSH client, exactly as the seed's procedure does by hand, and
 * check what SLURM, the Pyxis stand-in and the Enroot stand-in answer.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "util/xmalloc.h"

/* A folder on the shared storage private to this test process. */
static char *scratch(const char *name)
{
	const struct rig *r = rig_get();
	char *dir = xasprintf("%s/rig-tests/%s-%d", r->shared, name, rig_uniq());
	char *cmd = xasprintf("rm -rf %s && mkdir -p %s", dir, dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
	return dir;
}

/* Convert a stand-in registry image to a squashfs file on the CPU partition,
 * as the seed does before any GPU job. */
static char *convert_image(const char *dir)
{
	char *sqsh = xasprintf("%s/tao.sqsh", dir);
	char *cmd = xasprintf("srun -p cpu_long -n1 -c4 --mem=7200M -t 10 "
	    "enroot import -o %s 'docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt'", sqsh);
	free(rig_ssh_ok(cmd));
	free(cmd);
	cmd = xasprintf("head -c 4 %s", sqsh);
	char *magic = rig_ssh_ok(cmd);
	cr_assert_str_eq(magic, "hsqs", "enroot stand-in wrote no squashfs: '%s'", magic);
	free(magic);
	free(cmd);
	return sqsh;
}

Test(rig, gpu_container_job_completes_with_its_log, .timeout = 240)
{
	const struct rig *r = rig_get();
	char *dir = scratch("container");
	char *sqsh = convert_image(dir);

	/* SLURM does not create %x-%j/: submit held, make the folder, release. */
	char *cmd = xasprintf(
	    "cd %s && sbatch --hold --parsable -J rigjob --gres=gpu:4 -t 5 "
	    "--output=%s/%%x-%%j/main.out --error=%s/%%x-%%j/main.err "
	    "--wrap 'srun --container-image=%s --container-mounts=%s:%s "
	    "sh -c \"echo GPUS=\\$CUDA_VISIBLE_DEVICES IMAGE=\\$PYXIS_STUB_IMAGE; echo oops >&2\"'",
	    dir, dir, dir, sqsh, r->shared, r->shared);
	char *id = rig_ssh_ok(cmd);
	free(cmd);
	cr_assert(atoi(id) > 0, "sbatch --parsable said '%s'", id);
	cmd = xasprintf("mkdir %s/rigjob-%s && scontrol release %s", dir, id, id);
	free(rig_ssh_ok(cmd));
	free(cmd);

	free(rig_wait_state(id, "COMPLETED FAILED CANCELLED TIMEOUT", 180));
	cmd = xasprintf("sacct -j %s -X -n -o State%%30", id);
	char *state = rig_ssh_ok(cmd);
	cr_expect(strstr(state, "COMPLETED") != NULL, "state: '%s'", state);
	free(cmd);

	cmd = xasprintf("cat %s/rigjob-%s/main.out", dir, id);
	char *log = rig_ssh_ok(cmd);
	char *want = xasprintf("GPUS=0,1,2,3 IMAGE=%s", sqsh);
	cr_expect_str_eq(log, want);
	free(cmd);
	cmd = xasprintf("cat %s/rigjob-%s/main.err", dir, id);
	char *err = rig_ssh_ok(cmd);
	cr_expect_str_eq(err, "oops");
	free(err), free(cmd), free(want), free(log), free(state), free(id), free(sqsh), free(dir);
}

Test(rig, pyxis_stand_in_refuses_bad_images, .timeout = 60)
{
	char *dir = scratch("badimage");
	char *out = NULL;

	/* Pyxis fails them on the node, making the container, with its
	 * words and enroot's log lines (pyxis_slurmstepd.c, runtime.sh). */
	char *cmd = xasprintf("printf 'not squashfs' > %s/fake.sqsh && "
	    "srun -t 1 --container-image=%s/fake.sqsh echo RAN", dir, dir);
	int rc = rig_ssh(cmd, &out);
	cr_expect_neq(rc, 0, "srun ran a non-squashfs image");
	cr_expect(strstr(out, "pyxis: failed to create container filesystem for image: ") != NULL,
	    "%s", out);
	cr_expect(strstr(out, "[ERROR] Invalid image format: ") != NULL, "%s", out);
	cr_expect(strstr(out, "RAN") == NULL, "%s", out);
	free(out), free(cmd);

	cmd = xasprintf("srun -t 1 --container-image=%s/missing.sqsh true", dir);
	rc = rig_ssh(cmd, &out);
	cr_expect_neq(rc, 0, "srun ran a missing image");
	cr_expect(strstr(out, "[ERROR] No such file or directory: ") != NULL, "%s", out);
	free(out), free(cmd);

	rc = rig_ssh("srun -t 1 --container-image='nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt' true", &out);
	cr_expect_neq(rc, 0, "the stand-in pulled a registry image inside the allocation");
	cr_expect(strstr(out, "pyxis: failed to import docker image: nvcr.io#") != NULL, "%s", out);
	free(out), free(dir);
}

/* --container-mounts as Pyxis parses it where it is given (args.c): its
 * error lines, and srun refuses the option; "+" joins flags. */
Test(rig, pyxis_stand_in_parses_mounts_as_pyxis_does, .timeout = 120)
{
	char *dir = scratch("mountparse");
	char *sqsh = convert_image(dir), *out = NULL, *cmd;
	int rc;

	cmd = xasprintf("srun -t 1 --container-image=%s --container-mounts=data:/data true", sqsh);
	rc = rig_ssh(cmd, &out);
	cr_expect_neq(rc, 0, "%s", out);
	cr_expect(strstr(out, "pyxis: mount source must be a relative path, an absolute path, "
	    "\"tmpfs\" or \"umount\"") != NULL, "%s", out);
	cr_expect(strstr(out, "pyxis: could not add mount entry: data:/data") != NULL, "%s", out);
	free(out), free(cmd);

	cmd = xasprintf("srun -t 1 --container-image=%s --container-mounts=%s:data true", sqsh, dir);
	rc = rig_ssh(cmd, &out);
	cr_expect_neq(rc, 0, "%s", out);
	cr_expect(strstr(out, "pyxis: mount target must be a relative path or an absolute path")
	    != NULL, "%s", out);
	free(out), free(cmd);

	cmd = xasprintf("srun -t 1 --container-image=%s --container-mounts=%s::ro true", sqsh, dir);
	rc = rig_ssh(cmd, &out);
	cr_expect_neq(rc, 0, "%s", out);
	cr_expect(strstr(out, "pyxis: --container-mounts: invalid format: ") != NULL, "%s", out);
	free(out), free(cmd);

	/* An empty entry of the list is one, and invalid (args.c splits with
	 * strsep): never skipped. */
	cmd = xasprintf("srun -t 1 --container-image=%s --container-mounts=%s:/a,,%s:/b true", sqsh,
	    dir, dir);
	rc = rig_ssh(cmd, &out);
	cr_expect_neq(rc, 0, "%s", out);
	cr_expect(strstr(out, "pyxis: --container-mounts: invalid format: ") != NULL, "%s", out);
	free(out), free(cmd);

	/* "ro+rprivate": read-only, the other flag passed on. */
	cmd = xasprintf("srun -t 1 --container-image=%s --container-mounts=%s:/m:ro+rprivate "
	    "sh -c 'touch /m/x 2>&1; echo rc=$?'", sqsh, dir);
	rc = rig_ssh(cmd, &out);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "Read-only file system") != NULL && strstr(out, "rc=1") != NULL,
	    "%s", out);
	free(out), free(cmd);

	/* A missing absolute source: Pyxis's own line, on the node. */
	cmd = xasprintf("srun -t 1 --container-image=%s --container-mounts=%s/nope:/data true",
	    sqsh, dir);
	rc = rig_ssh(cmd, &out);
	cr_expect_neq(rc, 0, "%s", out);
	cr_expect(strstr(out, "pyxis: --container-mounts: source path does not exist: ") != NULL,
	    "%s", out);
	free(out), free(cmd), free(sqsh), free(dir);
}

Test(rig, missing_mount_source_fails_the_job, .timeout = 120)
{
	char *dir = scratch("mounts");
	char *sqsh = convert_image(dir);
	char *cmd = xasprintf("sbatch --parsable -t 2 -o /dev/null "
	    "--wrap 'srun --container-image=%s --container-mounts=%s/nope:/data true'", sqsh, dir);
	char *id = rig_ssh_ok(cmd);
	char *state = rig_wait_state(id, "COMPLETED FAILED", 90);
	cr_expect_str_eq(state, "FAILED", "Pyxis fails the task when a mount source is missing");
	free(state), free(id), free(cmd), free(sqsh), free(dir);
}

Test(rig, enroot_stand_in_fails_cleanly, .timeout = 60)
{
	char *dir = scratch("enroot");
	char *out = NULL;

	char *cmd = xasprintf("enroot import -o %s/a.sqsh 'notaregistry/uri'; echo rc=$?; "
	    "test -e %s/a.sqsh && echo LEFT-BEHIND", dir, dir);
	rig_ssh(cmd, &out);
	cr_expect(strstr(out, "Invalid image reference") != NULL, "%s", out);
	cr_expect(strstr(out, "rc=1") != NULL, "%s", out);
	cr_expect(strstr(out, "LEFT-BEHIND") == NULL, "a failed import left its output");
	free(out), free(cmd);

	cmd = xasprintf("enroot import -o %s/b.sqsh 'docker://nvcr.io#nvidia/no-such-image:1'; "
	    "echo rc=$?; test -e %s/b.sqsh && echo LEFT-BEHIND", dir, dir);
	rig_ssh(cmd, &out);
	cr_expect(strstr(out, "404 Not Found") != NULL, "%s", out);
	cr_expect(strstr(out, "rc=1") != NULL, "%s", out);
	cr_expect(strstr(out, "LEFT-BEHIND") == NULL, "a failed import left its output");
	free(out), free(cmd), free(dir);
}

Test(rig, two_node_job_runs_a_task_on_each_node, .timeout = 120)
{
	char *dir = scratch("twonode");
	char *cmd = xasprintf("sbatch --parsable -N2 -t 2 -o %s/out "
	    "--wrap 'srun -N2 -n2 sh -c \"echo task-on-\\$SLURMD_NODENAME\"'", dir);
	char *id = rig_ssh_ok(cmd);
	char *state = rig_wait_state(id, "COMPLETED FAILED CANCELLED", 90);
	cr_expect_str_eq(state, "COMPLETED");
	free(cmd);
	cmd = xasprintf("sort %s/out", dir);
	char *out = rig_ssh_ok(cmd);
	cr_expect_str_eq(out, "task-on-node01\ntask-on-node02");
	free(out), free(state), free(id), free(cmd), free(dir);
}

Test(rig, scancel_reads_cancelled_by_uid_in_wide_sacct, .timeout = 120)
{
	const struct rig *r = rig_get();
	char *id = rig_ssh_ok("sbatch --parsable -t 5 -o /dev/null --wrap 'sleep 300'");
	free(rig_wait_state(id, "RUNNING", 60));
	char *cmd = xasprintf("scancel %s", id);
	free(rig_ssh_ok(cmd));
	free(cmd);
	free(rig_wait_state(id, "CANCELLED", 60));

	cmd = xasprintf("sacct -j %s -X -n -o State%%30", id);
	char *state = rig_ssh_ok(cmd);
	char *want = xasprintf("CANCELLED by %d", r->uid);
	cr_expect(strstr(state, want) != NULL, "wide state '%s' lacks '%s'", state, want);
	free(cmd), free(state);

	/* The default width truncates it: the trap the seed warns about. */
	cmd = xasprintf("sacct -j %s -X -n -o State", id);
	state = rig_ssh_ok(cmd);
	cr_expect(strstr(state, "CANCELLED+") != NULL, "narrow state '%s'", state);
	free(cmd), free(state), free(want), free(id);
}

Test(rig, job_over_its_time_reads_timeout, .timeout = 240)
{
	char *id = rig_ssh_ok("sbatch --parsable --time=1 -o /dev/null --wrap 'sleep 600'");
	/* slurmctld's time-limit sweep is coarse: 60 s plus up to ~30 s. */
	char *state = rig_wait_state(id, "TIMEOUT COMPLETED FAILED CANCELLED", 200);
	cr_expect_str_eq(state, "TIMEOUT");
	free(state), free(id);
}

Test(rig, gpus_beyond_capacity_pend_or_are_refused, .timeout = 200)
{
	char *out = NULL;

	/* More GPUs on one node than any node has: refused at submit. */
	int rc = rig_ssh("sbatch --gres=gpu:9 -t 1 --wrap true", &out);
	cr_expect_eq(rc, 1);
	cr_expect(strstr(out, "Requested node configuration is not available") != NULL, "%s", out);
	free(out);

	/* All 16 GPUs taken: a job asking for 4 more stays PENDING with a reason.
	 * The hog is cancelled whatever happens: left behind, it would starve
	 * every later test of GPUs. */
	char *hog = rig_ssh_ok("sbatch --parsable -N2 --gres=gpu:8 -t 5 -o /dev/null --wrap 'sleep 300'");
	char *cancel_hog = xasprintf("scancel %s", hog), *state = NULL;
	for (int i = 0; i < 240; i++) {
		char *q = xasprintf("sacct -j %s -X -n -P -o State", hog);
		free(state);
		state = NULL;
		rig_ssh(q, &state);
		free(q);
		if (state != NULL && strncmp(state, "RUNNING", 7) == 0)
			break;
		usleep(500 * 1000);
	}
	if (state == NULL || strncmp(state, "RUNNING", 7) != 0) {
		rig_ssh(cancel_hog, NULL);
		cr_assert_fail("the 16-GPU job never ran (%s): is another job holding GPUs?", state);
	}
	free(state);
	char *id = rig_ssh_ok("sbatch --parsable --gres=gpu:4 -t 5 -o /dev/null --wrap true");
	char *cmd = xasprintf("squeue -h -j %s -o '%%T %%r'", id);
	char *line = NULL;
	for (int i = 0; i < 40; i++) {
		free(line);
		line = rig_ssh_ok(cmd);
		if (strcmp(line, "PENDING Resources") == 0 || strcmp(line, "PENDING Priority") == 0)
			break;
		usleep(250 * 1000);
	}
	cr_expect(strcmp(line, "PENDING Resources") == 0 || strcmp(line, "PENDING Priority") == 0,
	    "squeue says '%s'", line);
	free(cmd);
	cmd = xasprintf("scancel %s %s", hog, id);
	free(rig_ssh_ok(cmd));
	free(cmd), free(line), free(id), free(hog), free(cancel_hog);
}

Test(rig, partitions_and_limits_are_the_seeds, .timeout = 60)
{
	char *out = rig_ssh_ok("sinfo -h -o '%P %l' | sort");
	cr_expect_str_eq(out, "cpu_long 7-00:00:00\ngrizzly 4:00:00\npolar* 4:00:00\n"
	    "polar3 4:00:00\npolar4 4:00:00");
	free(out);

	int rc = rig_ssh("sbatch -p polar --time=5:00:00 --wrap true", &out);
	cr_expect_eq(rc, 1, "a 5 h job on a 4 h partition was accepted");
	cr_expect(strstr(out, "Requested time limit is invalid") != NULL, "%s", out);
	free(out);
}

Test(rig, sshd_takes_keys_only_for_the_test_user, .timeout = 60)
{
	const struct rig *r = rig_get();
	char port[16], kh[4096], login[128], *out = NULL;

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(login, sizeof(login), "%s@127.0.0.1", r->user);
	snprintf(kh, sizeof(kh), "UserKnownHostsFile=%s", r->known_hosts);
	const char *const as_root[] = { "ssh", "-o", "BatchMode=yes", "-o", kh, "-i", r->key,
	    "-p", port, "root@127.0.0.1", "true", NULL };
	cr_expect_eq(rig_run(as_root, &out), 255, "root logged in: %s", out);
	cr_expect(strstr(out, "Permission denied") != NULL, "%s", out);
	free(out);

	const char *const by_password[] = { "ssh", "-o", "BatchMode=yes", "-o", kh,
	    "-o", "PubkeyAuthentication=no", "-p", port, login, "true", NULL };
	cr_expect_eq(rig_run(by_password, &out), 255, "logged in without a key: %s", out);
	free(out);

	out = rig_ssh_ok("printf '%s %s' \"$(id -u)\" \"$SLURM_CONF\"");
	char *want = xasprintf("%d %s", r->uid, r->slurm_conf);
	cr_expect_str_eq(out, want);
	free(want), free(out);
}

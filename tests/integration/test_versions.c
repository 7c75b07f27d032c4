/*
 * Where SLURM versions print things differently, from the user's side. The
 * same tests run against the Debian 12 cluster (SLURM 22.05) and the Debian
 * 13 one (24.11, `make check-slurm-24.11`); each names the version whose
 * output it is about, and shows that version's raw text when it fails.
 *  - squeue %b: "gres:gpu:2" in 22.05, "gres/gpu:2" in 24.11;
 *  - squeue -O STDERR of a job without --error: its stdout path in 22.05,
 *    "(null)" in 24.11.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "util/xmalloc.h"

/* The user's environment for the CLI: the rig by the environment, records
 * in a folder of this test's own (so only the queue's jobs show). */
static char *cli_env(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/taotop-versions-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	return xasprintf("XDG_STATE_HOME=%s", dir);
}

static void cleanup(const char *dir, const char *id)
{
	char *cmd = xasprintf("scancel %s", id);
	rig_ssh(cmd, NULL);
	free(cmd);
	rig_local("rm -rf %s", dir);
}

Test(versions, another_jobs_gpus_count_as_either_version_prints_them, .timeout = 120)
{
	char dir[64], *env = cli_env(dir, sizeof(dir)), *out = NULL, *gres, *cmd, *version;
	char *id = rig_sbatch("-H -N 1 --gres=gpu:2 -J versions-gpus -o /dev/null", "'sleep 1'");
	cJSON *a, *o, *mine = NULL;

	version = rig_ssh_ok("squeue --version");
	cmd = xasprintf("squeue -h -j %s -o %%b", id);
	gres = rig_ssh_ok(cmd);
	cr_assert_eq(rig_taotop(env, "jobs --json", &out), 0, "%s", out);
	a = cJSON_Parse(strchr(out, '[') ? strchr(out, '[') : out);
	cr_assert_not_null(a, "%s", out);
	cJSON_ArrayForEach(o, a) {
		const cJSON *sid = cJSON_GetObjectItemCaseSensitive(o, "slurm_id");
		if (cJSON_IsString(sid) && strcmp(sid->valuestring, id) == 0)
			mine = o;
	}
	cr_assert_not_null(mine, "job %s is not in taotop jobs:\n%s", id, out);
	cr_expect_eq(cJSON_GetObjectItemCaseSensitive(mine, "gpus")->valueint, 2,
	    "%s prints %%b as '%s': taotop counted %d GPUs", version, gres,
	    cJSON_GetObjectItemCaseSensitive(mine, "gpus")->valueint);
	cJSON_Delete(a);
	cleanup(dir, id);
	free(out), free(gres), free(cmd), free(version), free(env), free(id);
}

Test(versions, logs_err_of_a_job_without_error_file_reads_its_stdout_file, .timeout = 120)
{
	const struct rig *r = rig_get();
	char dir[64], *env = cli_env(dir, sizeof(dir)), *out = NULL, *opts, *args, *cmd, *raw;
	char *version = rig_ssh_ok("squeue --version"), *id, *state;

	opts = xasprintf("-J versions-err -o %s/versions-err-%d-%%j.out", r->shared, rig_uniq());
	id = rig_sbatch(opts, "'echo to-stdout; echo to-stderr >&2'");
	state = rig_wait_state(id, "COMPLETED FAILED", 90);
	cr_assert(strncmp(state, "COMPLETED", 9) == 0, "%s", state);
	cmd = xasprintf("squeue -h -t all -j %s -O STDERR", id);
	raw = rig_ssh_ok(cmd);

	/* SLURM wrote both streams into the -o file: --err shows it. */
	args = xasprintf("logs %s --err", id);
	cr_expect_eq(rig_taotop(env, args, &out), 0, "%s prints STDERR as '%s': %s", version, raw,
	    out);
	cr_expect(strstr(out, "to-stderr") != NULL, "%s prints STDERR as '%s': %s", version, raw,
	    out);
	free(out);
	free(args);
	args = xasprintf("logs %s", id);
	cr_expect_eq(rig_taotop(env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "to-stdout") != NULL, "%s", out);
	rig_local("rm -f %s/versions-err-%d-%s.out", r->shared, rig_uniq(), id);
	cleanup(dir, id);
	free(out), free(args), free(cmd), free(raw), free(opts), free(state), free(version);
	free(env), free(id);
}

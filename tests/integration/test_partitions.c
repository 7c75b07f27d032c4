/*
 * SLURM_PARTITION as NVIDIA's references pass it: a list that goes whole
 * into --partition, so SLURM starts the job on whichever partition can run
 * it first. Two partitions made for the test, one a node each; the first
 * held full by a blocker job: the job starts on the second, and the dry
 * run, the record and `taotop status` say so. A partition of the list that
 * cannot run the job (here: one that does not exist) is left out, and the
 * record says why.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "util/xmalloc.h"

static const char *probed_config =
	"clusters:\n"
	"  rig:\n"
	"    nccl_env: \"NCCL_P2P_DISABLE=1\"\n"
	"    nccl_env_shape: \"1x8\"\n";

/* Make partition name of one node (as root, on the rig's controller). */
static void make_partition(const char *name, const char *node)
{
	cr_assert_eq(rig_local("scontrol create PartitionName=%s Nodes=%s MaxTime=4:00:00 State=UP",
	    name, node), 0, "scontrol create %s", name);
}

/* Delete it once no job of it is left in the queue. */
static void delete_partition(const char *name)
{
	for (int i = 0; i < 60; i++) {
		if (rig_local("scontrol delete PartitionName=%s 2>/dev/null", name) == 0)
			return;
		sleep(1);
	}
	cr_expect_fail("partition %s could not be deleted", name);
}

Test(partitions, a_list_goes_whole_and_the_job_starts_on_the_second_when_the_first_is_full,
    .timeout = 300)
{
	struct user u;
	int uniq = rig_uniq();
	char *full = xasprintf("tfull%d", uniq), *free_p = xasprintf("tfree%d", uniq);
	char *gone = xasprintf("tgone%d", uniq), *env, *bundle, *out = NULL, *id, *blocker, *args;
	char *list, *cmd, *line;
	cJSON *st, *rec, *alloc;

	rig_get();	/* and SLURM_CONF for the local scontrol */
	make_partition(full, "node01");
	make_partition(free_p, "node02");
	cmd = xasprintf("-p %s --gres=gpu:8 --exclusive -t 10 -J taotop-test-blocker", full);
	blocker = rig_sbatch(cmd, "'sleep 600'");
	free(cmd);
	free(rig_wait_state(blocker, "RUNNING", 120));

	user_open(&u, "partitions", probed_config);
	list = xasprintf("%s,%s,%s", full, gone, free_p);
	env = xasprintf("%s SLURM_PARTITION=%s", u.env, list);
	bundle = user_bundle(&u, "parts", "command: [sh, -c, 'echo on $SLURM_JOB_PARTITION; sleep 8; "
	    "echo {\\\"status\\\": \\\"SUCCESS\\\"} > {results_dir}/status.json']\n", NULL);

	/* The dry run: the list whole, what was left out and why. */
	args = xasprintf("submit %s --dry-run", bundle);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	line = xasprintf("  partition   %s,%s (SLURM_PARTITION)", full, free_p);
	cr_expect(strstr(out, line) != NULL, "the list as it goes to sbatch, and from where:\n%s",
	    out);
	free(line);
	line = xasprintf("#SBATCH --partition=%s,%s\n", full, free_p);
	cr_expect(strstr(out, line) != NULL, "the list whole but for the missing one:\n%s", out);
	free(line);
	line = xasprintf("partition %s (from SLURM_PARTITION) does not exist on the cluster; its "
	    "partitions are ", gone);
	cr_expect(strstr(out, line) != NULL, "why it was left out:\n%s", out);
	free(line);
	cr_expect(strstr(out, "SLURM starts the job on the first of them that can run it") != NULL,
	    "%s", out);
	free(out), free(args);

	/* The submit: SLURM starts it on the free partition. */
	u.env = (free(u.env), env);
	id = user_submit(&u, bundle, &out);
	free(out);
	st = user_wait_final(&u, id, 200);
	cr_assert_not_null(st);
	cr_expect_str_eq(json_str(st, "state"), "Done");
	rec = cJSON_GetObjectItemCaseSensitive(st, "record");
	alloc = cJSON_GetObjectItemCaseSensitive(rec, "allocation");
	cr_expect_str_eq(json_str(alloc, "partition"), free_p, "the record names the one SLURM chose");
	line = xasprintf("partitions %s,%s: SLURM starts the job on the first that can run it",
	    full, free_p);
	cr_expect(user_history_says(st, line), "the record says the list");
	free(line);
	line = xasprintf("partition %s (from SLURM_PARTITION) does not exist", gone);
	cr_expect(user_history_says(st, line), "and what was left out");
	free(line);
	cJSON_Delete(st);
	out = user_job_file(&u, id, "slurm-logs/*/main.out");
	line = xasprintf("on %s", free_p);
	cr_expect(strstr(out, line) != NULL, "the job's own word for its partition: %s", out);
	free(line), free(out);
	args = xasprintf("status %s", id);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	line = xasprintf("partition %s,", free_p);
	cr_expect(strstr(out, line) != NULL, "taotop status names it:\n%s", out);
	free(line), free(out), free(args);

	cmd = xasprintf("scancel %s", blocker);
	free(rig_ssh_ok(cmd));
	free(cmd);
	free(rig_wait_state(blocker, "CANCELLED COMPLETED", 60));
	delete_partition(full);
	delete_partition(free_p);
	free(id), free(bundle), free(list), free(blocker), free(full), free(free_p), free(gone);
	user_close(&u);
}

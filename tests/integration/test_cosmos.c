/*
 * Cosmos-RL on the two-node test cluster, by its launch contract
 * (engine/submit/cosmos.h): the controller on node 0 listening on 8082, a
 * policy replica on each node connecting to it, one srun step per role
 * with its own log, --no-requeue; a failing role stops the others and its
 * exit code is the job's; SLURM's COMPLETED is Done only once Cosmos's own
 * status says SUCCESS. The roles are the rig's Cosmos stand-in
 * (tests/cluster/cosmos.in), which plays them without training.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/store/record.h"
#include "engine/store/store.h"
#include "engine/submit/submit.h"
#include "integration/helper_rig.h"
#include "integration/helper_submit.h"
#include "util/xmalloc.h"

/* A Cosmos-RL bundle on 2 nodes x 2 GPUs; extra: more lines (extra_env). */
static char *bundle(struct sub_env *e, const char *name, const char *extra)
{
	char *out = NULL, *cmd, *text, *path;
	int rc;

	/* The .sqsh made before the job, as the guardrails ask. */
	cmd = xasprintf("cd %s && enroot import -o %s/cosmos.sqsh "
	    "docker://nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt", e->base, e->base);
	rc = rig_ssh(cmd, &out);
	cr_assert_eq(rc, 0, "enroot import: %s", out);
	free(out), free(cmd);
	text = xasprintf("image: %%B/cosmos.sqsh\n"
	    "network_arch: cosmos-reason\n"
	    "action: train\n"
	    "cosmos: {backend: rl}\n"
	    "command: [cosmos-stand-in]\n"
	    "nodes: 2\n"
	    "gpus: 4\n"
	    "cpus_per_task: 2\n"
	    "time_hours: 0.5\n%s", extra ? extra : "");
	path = sub_bundle(e, name, text);
	free(text);
	return path;
}

static struct job_record *load(struct sub_env *e, const char *id)
{
	struct job_record *r;
	char *err = NULL;

	cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
	return r;
}

/* The file NAME of the job's log folder (a role's log, main.err). */
static char *role_log(const struct job_record *r, const char *name)
{
	char *path = xasprintf("%s/%s-%s/%s", r->log_dir, r->id, r->backend_ref, name);
	char *text = sub_slurp(path);

	cr_assert_not_null(text, "%s is missing", path);
	free(path);
	return text;
}

/* <results_dir>/<job id>/NAME: Cosmos's status.json, the child's exit code. */
static char *cosmos_file(const struct job_record *r, const char *name)
{
	char *path = xasprintf("%s/%s/%s", r->results_dir, r->id, name);
	char *text = sub_slurp(path);

	cr_assert_not_null(text, "%s is missing", path);
	free(path);
	return text;
}

Test(cosmos, a_two_node_rl_job_runs_the_controller_on_node0_and_a_policy_on_each, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec, *sbatch, *ctl, *p0, *p1, *code, *status, *staged;

	sub_open(&e, "cosmosrl", NULL);
	spec = bundle(&e, "cosmosrl", NULL);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(sub_wait_final(&e, res.record_id, 180), TAO_DONE);
	r = load(&e, res.record_id);
	cr_expect_str_eq(r->cosmos, "rl");
	cr_expect_str_eq(r->roles, "controller policy-0 policy-1");
	staged = submit_staged_sbatch(r);
	sbatch = sub_slurp(staged);
	cr_assert_not_null(sbatch, "%s", staged);
	free(staged);
	cr_expect_not_null(strstr(sbatch, "\n#SBATCH --no-requeue\n"), "%s", sbatch);
	cr_expect_null(strstr(sbatch, "\n#SBATCH --requeue"), "%s", sbatch);
	cr_expect_not_null(strstr(sbatch, "\n#SBATCH --mem=0\n"));
	/* The controller on node 0, listening on 8082; a policy on each node,
	 * each connected to it there. */
	ctl = role_log(r, "controller.out");
	p0 = role_log(r, "policy-0.out");
	p1 = role_log(r, "policy-1.out");
	cr_expect_not_null(strstr(ctl, "[controller@node01]: controller listening on node01:8082"),
	    "%s", ctl);
	cr_expect_not_null(strstr(ctl, "replica connected: policy-0 node01"), "%s", ctl);
	cr_expect_not_null(strstr(ctl, "replica connected: policy-1 node02"), "%s", ctl);
	cr_expect_not_null(strstr(p0, "role policy-0 (policy) on node node01"), "%s", p0);
	cr_expect_not_null(strstr(p1, "role policy-1 (policy) on node node02"), "%s", p1);
	cr_expect_not_null(strstr(p0, "connected to the controller at node01:8082"), "%s", p0);
	cr_expect_not_null(strstr(p1, "connected to the controller at node01:8082"), "%s", p1);
	code = cosmos_file(r, "child_exit_code");
	cr_expect_str_eq(code, "0\n");
	status = cosmos_file(r, "status.json");
	cr_expect_not_null(strstr(status, "\"status\": \"SUCCESS\""), "%s", status);
	free(sbatch), free(ctl), free(p0), free(p1), free(code), free(status), free(spec);
	record_free(r);
	submit_result_free(&res);
	sub_close(&e);
}

Test(cosmos, a_failing_role_stops_the_others_and_its_exit_code_is_the_jobs, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec, *mainerr, *code, *ctl;
	time_t t0;

	sub_open(&e, "cosmosfail", NULL);
	/* policy-1 fails after its first step; the others would go on 60 s. */
	spec = bundle(&e, "cosmosfail", "extra_env:\n  COSMOS_STANDIN_FAIL: policy-1=7\n"
	    "  COSMOS_STANDIN_SECONDS: \"60\"\n");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	t0 = time(NULL);
	cr_assert_eq(sub_wait_final(&e, res.record_id, 180), TAO_ERROR);
	/* Stopped, not waited for: well before the others' 60 s. */
	cr_expect_lt(time(NULL) - t0, 55);
	r = load(&e, res.record_id);
	cr_expect_str_eq(r->native, "FAILED");
	cr_expect_str_eq(r->alloc.exit_code, "7:0");
	cr_expect_not_null(strstr(r->hist[r->nhist - 1].message, "exit code 7"), "%s",
	    r->hist[r->nhist - 1].message);
	code = cosmos_file(r, "child_exit_code");
	cr_expect_str_eq(code, "7\n");
	mainerr = role_log(r, "main.err");
	cr_expect_not_null(strstr(mainerr, "Cosmos role policy-1 failed with exit code 7: the other "
	    "roles were stopped"), "%s", mainerr);
	ctl = role_log(r, "controller.out");
	cr_expect_null(strstr(ctl, "SUCCESS"), "%s", ctl);
	free(mainerr), free(code), free(ctl), free(spec);
	record_free(r);
	submit_result_free(&res);
	sub_close(&e);
}

Test(cosmos, completed_without_cosmos_success_is_not_done, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec, *code;

	sub_open(&e, "cosmosnosuccess", NULL);
	spec = bundle(&e, "cosmosnosuccess", "extra_env:\n  COSMOS_STANDIN_NO_SUCCESS: \"1\"\n");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(sub_wait_final(&e, res.record_id, 240), TAO_ERROR);
	r = load(&e, res.record_id);
	cr_expect_str_eq(r->native, "COMPLETED");
	cr_expect_not_null(strstr(r->hist[r->nhist - 1].message, "COMPLETED, but no final status"),
	    "%s", r->hist[r->nhist - 1].message);
	code = cosmos_file(r, "child_exit_code");
	cr_expect_str_eq(code, "0\n");
	free(code), free(spec);
	record_free(r);
	submit_result_free(&res);
	sub_close(&e);
}

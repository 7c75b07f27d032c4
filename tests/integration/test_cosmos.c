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
#include "integration/helper_screen.h"
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

/* `taotop VERB ARGS` as a user runs it against the rig, its records a copy
 * of the test's own (the engine's store, e->local/jobs; taotop refuses a
 * records folder that is a link): output and exit status. */
static int cli(const struct sub_env *e, const char *verb_args, char **out)
{
	const struct rig *r = rig_get();
	char *cmd = xasprintf("mkdir -p %s/state/taotop && mkdir -p -m 700 %s/state/taotop/jobs && "
	    "cp -R %s/jobs/. %s/state/taotop/jobs/ && "
	    "SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s "
	    "TAOTOP_KNOWN_HOSTS=%s XDG_STATE_HOME=%s/state TAOTOP_CONFIG=/nonexistent/config.yaml "
	    "TAOTOP_CLUSTER=rig "
	    "SLURM_BASE_RESULTS_DIR=lustre://%s/root LANG=C %s %s 2>&1",
	    e->local, e->local, e->local, e->local,
	    r->user, r->host, r->port, r->key, r->known_hosts, e->local, e->base,
	    getenv("TAOTOP_BIN"), verb_args);
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	int rc = rig_run(argv, out);

	free(cmd);
	return rc;
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
	{
		/* As the user sees them: each role's state and log, and a
		 * role's log by its name. */
		char *out = NULL, *args = xasprintf("status %s", r->id);
		cr_assert_eq(cli(&e, args, &out), 0, "%s", out);
		cr_expect(rig_matches(out, "role controller +done  [^ ]*/controller.out"), "%s", out);
		cr_expect(rig_matches(out, "role policy-0 +done  [^ ]*/policy-0.out"), "%s", out);
		cr_expect(rig_matches(out, "role policy-1 +done  [^ ]*/policy-1.out"), "%s", out);
		free(out), free(args);
		args = xasprintf("logs --role policy-1 %s", r->id);
		cr_assert_eq(cli(&e, args, &out), 0, "%s", out);
		cr_expect_not_null(strstr(out, "role policy-1 (policy) on node node02"), "%s", out);
		free(out), free(args);
		args = xasprintf("logs --role rollout-0 %s", r->id);
		cr_expect_neq(cli(&e, args, &out), 0, "%s", out);
		cr_expect_not_null(strstr(out, "has no role 'rollout-0': its roles are controller "
		    "policy-0 policy-1"), "%s", out);
		free(out), free(args);

		/* A retry runs the staged script again, its results in a folder
		 * of its own, where its Cosmos status is read: Done again. */
		args = xasprintf("retry --force %s", r->id);
		cr_assert_eq(cli(&e, args, &out), 0, "%s", out);
		const char *as = strstr(out, " as ");
		cr_assert_not_null(as, "%s", out);
		char *nid = xstrndup(as + 4, strcspn(as + 4, ","));
		free(out), free(args);
		args = xasprintf("status --watch %s >/dev/null; echo rc=$?; "
		    "cat %s/state/taotop/jobs/%s.json", nid, e.local, nid);
		cr_assert_eq(cli(&e, args, &out), 0, "%s", out);
		cr_expect_not_null(strstr(out, "rc=0"), "the retry is not Done: %s", out);
		/* Its status file: <its results folder>/<the staged id>/. */
		char *want = xasprintf("/%s\",", r->id);
		const char *t = strstr(out, "\"tao_results_dir\"");
		cr_expect(t != NULL && strstr(t, want) != NULL && strstr(t, want) < strchr(t, '\n'),
		    "%s", out);
		free(want), free(out), free(args), free(nid);
	}
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

/* SUCCESS in Cosmos's status is not enough: a replica failing after it
 * (its teardown) makes the job Error, as the model skill's
 * finalize_metadata judges it (child exit 0, COMPLETED and SUCCESS, all
 * three). */
Test(cosmos, a_role_failing_after_cosmos_success_is_still_error, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec, *status, *code;

	sub_open(&e, "cosmosafter", NULL);
	spec = bundle(&e, "cosmosafter", "extra_env:\n  COSMOS_STANDIN_FAIL_AT_END: policy-0=9\n");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(sub_wait_final(&e, res.record_id, 180), TAO_ERROR);
	r = load(&e, res.record_id);
	status = cosmos_file(r, "status.json");
	cr_expect_not_null(strstr(status, "\"status\": \"SUCCESS\""), "the test's premise: %s",
	    status);
	code = cosmos_file(r, "child_exit_code");
	cr_expect_str_eq(code, "9\n");
	cr_expect_str_eq(r->alloc.exit_code, "9:0");
	free(status), free(code), free(spec);
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

/* A Cosmos Framework bundle on 2 nodes x 2 GPUs (after bundle()'s import). */
static char *framework_bundle(struct sub_env *e, const char *name, const char *extra)
{
	char *rl = bundle(e, name, NULL), *text, *path;

	free(rl);
	text = xasprintf("image: %%B/cosmos.sqsh\n"
	    "network_arch: cosmos-reason\n"
	    "action: train\n"
	    "cosmos: {backend: framework}\n"
	    "command: [/usr/local/bin/cosmos-stand-in]\n"
	    "nodes: 2\n"
	    "gpus: 4\n"
	    "cpus_per_task: 2\n"
	    "time_hours: 0.5\n%s", extra ? extra : "");
	path = sub_bundle(e, name, text);
	free(text);
	return path;
}

/* The line of main.out of node rank NR ("NODE_RANK=0"). */
static char *rank_line(const char *text, const char *nr)
{
	const char *p;

	for (p = strstr(text, "cosmos-stand-in[framework]"); p != NULL;
	    p = strstr(p + 1, "cosmos-stand-in[framework]")) {
		char *l = xstrndup(p, strcspn(p, "\n"));
		if (strstr(l, nr) != NULL)
			return l;
		free(l);
	}
	cr_assert_fail("no line with %s in:\n%s", nr, text);
	return NULL;
}

Test(cosmos, a_framework_job_runs_one_torchrun_per_node_with_its_node_rank, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec, *out, *l0, *l1, *staged, *sbatch;

	sub_open(&e, "cosmosfw", NULL);
	spec = framework_bundle(&e, "cosmosfw", NULL);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(sub_wait_final(&e, res.record_id, 180), TAO_DONE);
	r = load(&e, res.record_id);
	cr_expect_str_eq(r->cosmos, "framework");
	cr_expect_null(r->roles);
	staged = submit_staged_sbatch(r);
	sbatch = sub_slurp(staged);
	cr_assert_not_null(sbatch, "%s", staged);
	cr_expect_not_null(strstr(sbatch, "\n#SBATCH --no-requeue\n"), "%s", sbatch);
	cr_expect_not_null(strstr(sbatch, "--no-container-mount-home"), "%s", sbatch);
	out = role_log(r, "main.out");
	l0 = rank_line(out, "NODE_RANK=0 ");
	l1 = rank_line(out, "NODE_RANK=1 ");
	/* One torchrun per node: 2 processes each, the world 4, the master
	 * the first node; the open-files limit raised (to 65536, or as far as
	 * the node's hard limit allows). */
	cr_expect_not_null(strstr(l0, " on node node01 "), "%s", l0);
	cr_expect_not_null(strstr(l1, " on node node02 "), "%s", l1);
	cr_expect_not_null(strstr(l0, " of 4 "), "%s", l0);
	cr_expect_not_null(strstr(l1, "master node01:29500"), "%s", l1);
	{
		const char *n = strstr(l1, "nofile=");
		cr_assert_not_null(n, "%s", l1);
		char *soft = xstrndup(n + 7, strcspn(n + 7, "/")), *hard = xstrdup(n + 8 + strlen(soft));
		cr_expect(strcmp(soft, "65536") == 0 || strcmp(soft, hard) == 0,
		    "ulimit -n 65536 (or the hard limit): %s", l1);
		free(soft), free(hard);
	}
	free(l0), free(l1), free(out), free(staged), free(sbatch), free(spec);
	record_free(r);
	submit_result_free(&res);
	sub_close(&e);
}

Test(cosmos, the_dry_run_shows_the_cosmos_rl_script, .timeout = 120)
{
	struct sub_env e;
	char *spec, *out = NULL, *args;

	sub_open(&e, "cosmosdry", NULL);
	spec = bundle(&e, "cosmosdry", NULL);
	args = xasprintf("submit --dry-run %s", spec);
	cr_assert_eq(cli(&e, args, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "requeue     no "), "%s", out);
	cr_expect_not_null(strstr(out, "(a Cosmos job: never requeued)"), "%s", out);
	cr_expect_not_null(strstr(out, "#SBATCH --no-requeue\n"), "%s", out);
	cr_expect_not_null(strstr(out, "TAOTOP_COSMOS_PORT=8082\n"), "%s", out);
	cr_expect_not_null(strstr(out, "COSMOS_NODE_ROLE"), "%s", out);
	cr_expect_not_null(strstr(out, "--mem=0"), "%s", out);
	free(out), free(args), free(spec);
	sub_close(&e);
}

/* A registry image and a requeue are refused as the user submits, with
 * the reason, and nothing is written on the cluster. */
Test(cosmos, a_registry_image_or_a_requeue_is_refused_and_nothing_is_written, .timeout = 120)
{
	struct sub_env e;
	char *spec, *out = NULL, *args, *cmd, *left;

	sub_open(&e, "cosmosrefused", NULL);
	spec = sub_bundle(&e, "registry", "image: nvcr.io/nvidia/cosmos/cosmos-rl:1.0\n"
	    "network_arch: cosmos-reason\naction: train\ncosmos: {backend: rl}\n"
	    "command: [cosmos-stand-in]\nnodes: 2\ngpus: 4\n");
	args = xasprintf("submit %s", spec);
	cr_expect_neq(cli(&e, args, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "prebuilt .sqsh only"), "%s", out);
	free(out), free(args), free(spec);
	spec = sub_bundle(&e, "requeue", "image: %B/none.sqsh\n"
	    "network_arch: cosmos-reason\naction: train\ncosmos: {backend: rl}\n"
	    "command: [cosmos-stand-in]\nnodes: 2\ngpus: 4\n");
	args = xasprintf("submit --requeue %s", spec);
	cr_expect_neq(cli(&e, args, &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, "requeue is asked for (--requeue)"), "%s", out);
	free(out), free(args), free(spec);
	cmd = xasprintf("ls -A %s/root", e.base);
	left = rig_ssh_ok(cmd);
	cr_expect_str_eq(left, "", "written on the cluster: %s", left);
	free(left), free(cmd);
	sub_close(&e);
}

/* In the monitor, as a user drives it by keys: Enter on a Cosmos-RL job
 * shows its backend, its status file and each role's state and log. */
Test(cosmos, the_monitors_detail_shows_each_roles_state_and_log, .timeout = 240)
{
	char *dir = screen_shared_dir("cosmos"), *cmd, *out = NULL, *bundle, *env, *args, *p, *id;
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 50 };
	FILE *f;

	screen_open(&s, "cosmos", &so);
	cmd = xasprintf("cd %s && enroot import -o %s/cosmos.sqsh "
	    "docker://nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt", dir, dir);
	cr_assert_eq(rig_ssh(cmd, &out), 0, "enroot import: %s", out);
	free(out), free(cmd);
	bundle = xasprintf("%s/cosmos.yaml", s.dir);
	f = fopen(bundle, "w");
	cr_assert_not_null(f);
	fprintf(f, "image: %s/cosmos.sqsh\nnetwork_arch: cosmos-reason\naction: train\n"
	    "cosmos: {backend: rl}\ncommand: [cosmos-stand-in]\nnodes: 2\ngpus: 4\n"
	    "cpus_per_task: 2\ntime_hours: 0.5\n"
	    "extra_env: {COSMOS_STANDIN_FAIL: policy-1=7, COSMOS_STANDIN_SECONDS: \"30\"}\n", dir);
	fclose(f);
	env = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=/nonexistent/config.yaml "
	    "SLURM_BASE_RESULTS_DIR=lustre://%s/root", s.dir, dir);
	args = xasprintf("submit %s", bundle);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	p = strstr(out, "submitted tao-");
	cr_assert_not_null(p, "%s", out);
	id = xstrndup(p + 10, strcspn(p + 10, " "));
	free(out), free(args), free(env), free(bundle);

	screen_filter(&s, id);
	screen_wait_line(&s, 120, id, "Error", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 20, "Job detail", "cosmos: Cosmos-RL (a controller and replicas)",
	    "/status.json in the results folder", NULL);
	/* The failed replica, and the others stopped (they left no exit code). */
	screen_wait_line(&s, 20, "role controller", "stopped", "controller.out", NULL);
	screen_wait_line(&s, 20, "role policy-1", "failed, exit code 7", "policy-1.out", NULL);
	screen_wait_line(&s, 20, "role policy-0", "stopped", "policy-0.out", NULL);
	screen_wait(&s, 5, "taotop logs --role NAME JOB", NULL);
	screen_wait(&s, 5, "logs: ", "slurm-logs/", NULL);
	free(id), free(dir);
	screen_close(&s);
}

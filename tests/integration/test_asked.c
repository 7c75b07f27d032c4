/*
 * Submit and cancel do exactly what the user asked, from the user's side
 * (`taotop submit`, `taotop cancel`, `taotop status` against the local
 * cluster, which enforces accounts as sites that bill by them do): the
 * bundle's account is the one charged, values that are not one SLURM name
 * are refused before anything is written, impossible shapes are refused
 * naming the ones that work, and the secrets' sidecar lives exactly as long
 * as its job (a failed lint, a refused sbatch, a cancel while pending, a
 * requeue while running).
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "util/file.h"
#include "util/xmalloc.h"

/* How many sidecars (job_*.env) exist under the user's job folders. */
static int sidecars(struct user *u)
{
	char *cmd = xasprintf("ls %s/jobs/*/job_*.env 2>/dev/null | wc -l", u->remote);
	char *out = rig_ssh_ok(cmd);
	int n = atoi(out);

	free(out), free(cmd);
	return n;
}

/* `taotop ARGS` as u, which must fail: its output (caller frees). */
static char *refused(struct user *u, const char *args)
{
	char *out = NULL;

	cr_expect_neq(rig_taotop(u->env, args, &out), 0, "taotop %s was accepted:\n%s", args, out);
	return out;
}

static char *slurm_id_of(const cJSON *st)
{
	return xstrdup(json_str(st, "slurm_id"));
}

Test(asked, the_bundles_account_is_the_one_charged, .timeout = 240)
{
	struct user u;
	char *out = NULL, *b, *id, *cmd, *text, *sid;
	cJSON *st;

	user_open(&u, "account", NULL);
	/* vision is the test user's second project, not its default. */
	b = user_bundle(&u, "account", NULL, "account: vision\n");
	id = user_submit(&u, b, &out);
	free(out);
	st = user_wait_final(&u, id, 180);
	cr_expect_str_eq(json_str(st, "state"), "Done");
	sid = slurm_id_of(st);
	cmd = xasprintf("sacct -n -X -P -j %s -o Account", sid);
	text = rig_ssh_ok(cmd);
	cr_expect_str_eq(text, "vision", "SLURM charged %s", text);
	free(text), free(cmd);
	text = user_job_file(&u, id, "sbatch/job_*.sbatch");
	cr_expect(strstr(text, "#SBATCH --account=vision\n") != NULL, "%s", text);
	free(text);
	cJSON_Delete(st);
	free(sid), free(id), free(b);
	user_close(&u);
}

/* An account the cluster does not know: SLURM's own words, no job, and no
 * secret left behind by the refused sbatch. */
Test(asked, an_account_the_cluster_refuses_says_so_and_leaves_no_secret, .timeout = 120)
{
	struct user u;
	char *out = NULL, *b, *args;

	user_open(&u, "badaccount", NULL);
	b = user_bundle(&u, "badaccount", NULL, "account: nosuchproject\n");
	args = xasprintf("submit %s", b);
	out = refused(&u, args);
	cr_expect(strstr(out, "Invalid account") != NULL, "SLURM's words:\n%s", out);
	cr_expect(strstr(out, USER_TOKEN) == NULL, "the secret was printed:\n%s", out);
	cr_expect_eq(sidecars(&u), 0, "a sidecar outlived the refused sbatch");
	free(out), free(args), free(b);
	user_close(&u);
}

/* A partition (or an entry of a partition list: test_partitions) or an
 * account that is not one SLURM name, from the bundle or a flag: refused,
 * naming field, value and origin, before anything is written on the
 * cluster. */
Test(asked, a_value_that_is_not_one_slurm_name_is_refused_before_anything_is_written, .timeout = 120)
{
	static const char *const bad[] = { "polar;cpu_long", "polar,\\n#SBATCH --x", "polar#x" };
	struct user u;
	char *out = NULL, *b, *args, *cmd, *text;

	user_open(&u, "words", NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *extra = xasprintf("partition: \"%s\"\n", bad[i]);
		b = user_bundle(&u, "words", NULL, extra);
		args = xasprintf("submit %s", b);
		out = refused(&u, args);
		cr_expect(strstr(out, "partition") != NULL && strstr(out, "from the bundle") != NULL &&
		    strstr(out, "not one SLURM name") != NULL, "%s", out);
		free(out), free(args), free(extra), free(b);
	}
	b = user_bundle(&u, "words", NULL, NULL);
	args = xasprintf("submit %s --partition 'polar,cpu long'", b);
	out = refused(&u, args);
	cr_expect(strstr(out, "from --partition") != NULL, "%s", out);
	free(out), free(args);
	args = xasprintf("submit %s --account 'vision\n#SBATCH --uid=0'", b);
	out = refused(&u, args);
	cr_expect(strstr(out, "account") != NULL && strstr(out, "from --account") != NULL, "%s", out);
	free(out), free(args), free(b);
	/* Nothing reached the cluster: no job folder at all. */
	cmd = xasprintf("ls -A %s/jobs | wc -l", u.remote);
	text = rig_ssh_ok(cmd);
	cr_expect_str_eq(text, "0", "something was written under jobs/");
	free(text), free(cmd);
	user_close(&u);
}

Test(asked, an_impossible_shape_is_refused_naming_the_shapes_that_work, .timeout = 120)
{
	struct user u;
	char *out = NULL, *b, *args;

	user_open(&u, "shapes", NULL);
	b = user_bundle(&u, "shapes", NULL, NULL);
	args = xasprintf("submit %s --gpus 11", b);
	out = refused(&u, args);
	cr_expect(strstr(out, "11 GPUs") != NULL && strstr(out, "8 or 16") != NULL, "%s", out);
	free(out), free(args);
	/* 24 is a shape (3 x 8), but the cluster has 2 nodes. */
	args = xasprintf("submit %s --gpus 24", b);
	out = refused(&u, args);
	cr_expect(strstr(out, "has 2 nodes") != NULL && strstr(out, "at most 16 GPUs") != NULL,
	    "%s", out);
	free(out), free(args), free(b);
	user_close(&u);
}

/* A rendered script the lint refuses (a token-looking value in extra_env):
 * the sidecar is never written, so nothing is left to leak. */
Test(asked, a_failed_lint_leaves_no_sidecar, .timeout = 120)
{
	struct user u;
	char *out = NULL, *b, *args;

	user_open(&u, "lint", NULL);
	b = user_bundle(&u, "lint", NULL,
	    "extra_env: {RUN_NOTE: hf_abcdefghijklmnopqrstuvwxyzABCDEFGH}\n");
	args = xasprintf("submit %s", b);
	out = refused(&u, args);
	cr_expect(strstr(out, "lint") != NULL, "%s", out);
	cr_expect_eq(sidecars(&u), 0, "a sidecar outlived the failed lint");
	free(out), free(args), free(b);
	user_close(&u);
}

/* A job cancelled while pending never runs its cleanup: taotop's cancel
 * removes its secrets. */
Test(asked, a_job_cancelled_while_pending_leaves_no_sidecar, .timeout = 360)
{
	struct user u;
	char *out = NULL, *b, *args, *id, *blocker, *cmd;

	user_open(&u, "pending", NULL);
	/* Every GPU of both nodes, but not their CPUs: the image conversion
	 * (CPU only) still runs, other tests' jobs wait only while this one does. */
	blocker = rig_sbatch("-N 2 --gres=gpu:8 -t 5 -J taotop-test-blocker", "'sleep 120'");
	/* Running before the job comes: a blocker still pending (another
	 * test's job on a GPU) would let the job start ahead of it (backfill). */
	free(rig_wait_state(blocker, "RUNNING", 200));
	b = user_bundle(&u, "pending", NULL, NULL);
	id = user_submit(&u, b, &out);
	free(out);
	cr_expect_eq(sidecars(&u), 1, "the pending job's sidecar is there");
	args = xasprintf("cancel %s", id);
	cr_expect_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect_eq(sidecars(&u), 0, "the cancelled job's sidecar is left");
	free(out), free(args);
	{
		/* It never ran: no moment of its history says Running. */
		cJSON *st = user_wait_final(&u, id, 60), *t;
		cr_expect_str_eq(json_str(st, "state"), "Canceled");
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(cJSON_GetObjectItem(st, "record"),
		    "transitions"))
			cr_expect_str_neq(json_str(t, "to"), "Running", "a pending job shown Running");
		cJSON_Delete(st);
	}
	cmd = xasprintf("scancel %s", blocker);
	free(rig_ssh_ok(cmd));
	free(cmd), free(blocker), free(id), free(b);
	user_close(&u);
}

/* A running job requeued (as SLURM does on a node failure) runs again and
 * has its secret again; once it ends its sidecar is gone. */
Test(asked, a_requeued_job_runs_again_with_its_secret, .timeout = 420)
{
	static const char command[] = "command:\n  - sh\n  - -c\n"
	    "  - 'echo \"run ${SLURM_RESTART_COUNT:-0} token ${#HF_TOKEN}\"; sleep 8; exec \"$@\"'\n"
	    "  - taotop-test\n  - classification_pyt\n  - train\n  - -e\n  - '{spec}'\n"
	    "  - 'results_dir={results_dir}'\n";
	struct user u;
	char *out = NULL, *b, *id, *cmd, *text = NULL, *want;
	cJSON *st;

	user_open(&u, "requeue", NULL);
	b = user_bundle(&u, "requeue", command, NULL);
	id = user_submit(&u, b, &out);
	free(out);
	want = xasprintf("run 0 token %zu", strlen(USER_TOKEN));
	for (int i = 0; i < 200; i++) {
		free(text);
		text = user_job_file(&u, id, "slurm-logs/*/main.out");
		if (strstr(text, want) != NULL)
			break;
		sleep(1);
	}
	cr_assert(strstr(text, want) != NULL, "the first run: %s", text);
	free(text), free(want);
	text = NULL;
	{
		/* Its SLURM id from the record, as a user would read it. */
		char *args = xasprintf("status %s --json", id);
		cJSON *o;
		cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
		o = cJSON_Parse(strchr(out, '{'));
		cmd = xasprintf("scontrol requeue %s", json_str(o, "slurm_id"));
		cJSON_Delete(o);
		free(out), free(args);
	}
	free(rig_ssh_ok(cmd));
	free(cmd);
	st = user_wait_final(&u, id, 360);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", json_str(st, "message"));
	text = user_job_file(&u, id, "slurm-logs/*/main.out");
	want = xasprintf("run 1 token %zu", strlen(USER_TOKEN));
	cr_expect(strstr(text, want) != NULL, "the requeued run had no secret:\n%s", text);
	cr_expect_eq(sidecars(&u), 0, "the sidecar outlived the job");
	free(want), free(text);
	cJSON_Delete(st);
	free(id), free(b);
	user_close(&u);
}

/* Two clusters configured; the default one (alpha) cannot be reached at
 * all. A job submitted to beta is cancelled by its taotop id from a
 * session that would otherwise go to alpha: on beta, where it runs. */
Test(asked, cancel_by_taotop_id_goes_to_the_records_cluster, .timeout = 180)
{
	struct user u;
	char *out = NULL, *b, *id, *args, *env, *cmd, *text;
	cJSON *st;

	user_open(&u, "twoclusters", NULL);
	env = user_two_clusters(&u, 0);
	b = user_bundle(&u, "twoclusters", "command: [sleep, '300']\n", NULL);
	args = xasprintf("submit %s --cluster beta --json", b);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	{
		cJSON *o = cJSON_Parse(strchr(out, '{'));
		id = xstrdup(json_str(o, "id"));
		cJSON_Delete(o);
	}
	free(out), free(args);
	/* --cluster that is not the record's: refused, nothing cancelled. */
	args = xasprintf("cancel %s --cluster alpha", id);
	cr_expect_neq(rig_taotop(env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "cluster 'beta'") != NULL, "%s", out);
	free(out), free(args);
	args = xasprintf("cancel %s", id);
	cr_expect_eq(rig_taotop(env, args, &out), 0, "cancel went elsewhere:\n%s", out);
	cr_expect(strstr(out, "cancelled") != NULL, "%s", out);
	free(out), free(args);
	args = xasprintf("status %s --cluster beta --json", id);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cmd = xasprintf("sacct -n -X -P -j %s -o State | cut -d' ' -f1", json_str(st, "slurm_id"));
	for (int i = 0; i < 30; i++) {
		text = rig_ssh_ok(cmd);
		if (strcmp(text, "CANCELLED") == 0)
			break;
		free(text);
		text = NULL;
		sleep(1);
	}
	cr_expect(text != NULL, "the job on beta was not cancelled");
	free(text), free(cmd), free(out), free(args);
	cJSON_Delete(st);
	free(env), free(id), free(b);
	user_close(&u);
}

/* `taotop status --watch` rides out the login node going away: the failed
 * polls are said, the watch goes on, and it ends with the job's final
 * state once the server is back. A private sshd, so the rig's own is not
 * disturbed for the other tests. */
Test(asked, status_watch_keeps_going_across_an_sshd_restart, .timeout = 300)
{
	const struct rig *r = rig_get();
	struct rig_sshd d;
	struct user u;
	char *out = NULL, *b, *id, *env, *args, *log, *rcfile, *text, *err = NULL;
	int rc = -1;

	rig_sshd_start(&d, 2239, 0);
	user_open(&u, "watch", NULL);
	env = xasprintf("%s SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s TAOTOP_POLL_S=2", u.env, d.hosts,
	    d.known_hosts);
	b = user_bundle(&u, "watch", NULL, NULL);
	{
		/* Fifteen epochs of a second: long enough to stop the server. */
		char *cmd = xasprintf("sed -i 's/num_epochs: 1/num_epochs: 15/' %s", b);
		cr_assert_eq(rig_local("%s", cmd), 0);
		free(cmd);
	}
	args = xasprintf("submit %s --json", b);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	{
		cJSON *o = cJSON_Parse(strchr(out, '{'));
		id = xstrdup(json_str(o, "id"));
		cJSON_Delete(o);
	}
	free(out), free(args);
	log = xasprintf("%s/watch.log", u.local);
	rcfile = xasprintf("%s/watch.rc", u.local);
	cr_assert_eq(rig_local("(SLURM_USER=%s SSH_KEY_PATH=%s TAOTOP_CLUSTER=rig %s %s status %s "
	    "--watch > %s 2>&1; echo $? > %s) &", r->user, r->key, env, getenv("TAOTOP_BIN"), id,
	    log, rcfile), 0);
	/* Watching (its first line out), then the server goes. */
	free(rig_wait_file(log, "\n", 30));
	rig_sshd_stop(&d);
	rig_sshd_signal_sessions(&d, SIGKILL);
	sleep(8);
	rig_sshd_restart(&d);
	for (int i = 0; i < 120 && rc < 0; i++) {
		sleep(2);
		text = file_read_all(rcfile, NULL, &err);
		free(err);
		err = NULL;
		if (text != NULL)
			rc = atoi(text);
		free(text);
	}
	text = file_read_all(log, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	cr_expect_eq(rc, 0, "the watch ended with %d:\n%s", rc, text);
	cr_expect(strstr(text, "the poll failed at") != NULL, "the failures were not said:\n%s", text);
	cr_expect(strstr(text, "Done") != NULL, "it did not end with the job's final state:\n%s", text);
	free(text), free(log), free(rcfile), free(env), free(id), free(b);
	rig_sshd_free(&d);
	user_close(&u);
}

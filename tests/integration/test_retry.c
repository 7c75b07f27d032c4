/*
 * Retries on the real cluster: a job that ends FAILED with an NCCL timeout
 * in its log gets exactly one linked retry, run from what was staged (no
 * image converted again, no file staged again); a Python traceback gets
 * none; a job that fails that way every time stops at the budget; and the
 * operator's `taotop retry` does the same on demand.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/store.h"
#include "engine/track/retry.h"
#include "engine/submit/submit.h"
#include "engine/track/tracker.h"
#include "integration/helper_rig.h"
#include "integration/helper_submit.h"
#include "util/xmalloc.h"

#define NCCL_TIMEOUT "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation " \
	"timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, Timeout(ms)=1800000) ran for " \
	"1800046 milliseconds before timing out."

/* A bundle whose command is `script` (sh -c), one GPU (no probe). */
static char *bundle_running(struct sub_env *e, const char *name, const char *script)
{
	char *text = xasprintf(
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "network_arch: classification_pyt\n"
	    "action: train\n"
	    "command: [sh, -c, '%s']\n"
	    "datasets: [lustre://%%B/data/train]\n"
	    "results_dir: lustre://%%B/results\n"
	    "gpus: 1\n"
	    "cpus_per_task: 1\n"
	    "time_hours: 0.5\n", script);
	char *path = sub_bundle(e, name, text);
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

static int history_says(const struct job_record *r, const char *text)
{
	for (size_t i = 0; i < r->nhist; i++)
		if (r->hist[i].message != NULL && strstr(r->hist[i].message, text) != NULL)
			return 1;
	return 0;
}

/* Records whose retry_of is id. */
static size_t retries_of(struct sub_env *e, const char *id, char **first)
{
	struct job_record **v;
	size_t n, i, k = 0;

	cr_assert_eq(store_list(e->store, &v, &n, NULL), 0);
	for (i = 0; i < n; i++) {
		if (v[i]->retry_of != NULL && strcmp(v[i]->retry_of, id) == 0) {
			if (k++ == 0 && first != NULL)
				*first = xstrdup(v[i]->id);
		}
	}
	store_list_free(v, n);
	return k;
}

/* Poll (the engine retries from its polls) until every record is final
 * and no retry is due; the number of records. */
static size_t settle(struct sub_env *e, int timeout_s)
{
	struct tracker *t = tracker_new(&e->cl);
	time_t end = time(NULL) + timeout_s;
	size_t n = 0;

	while (time(NULL) < end) {
		struct poll_result res;
		struct job_record **v;
		char *err = NULL;
		size_t live = 0, i;
		cr_assert_eq(tracker_poll(t, e->conn, e->store, &res, &err), 0, "%s", err);
		poll_result_free(&res);
		cr_assert_eq(store_list(e->store, &v, &n, NULL), 0);
		for (i = 0; i < n; i++)
			live += !tao_state_final(v[i]->state);
		store_list_free(v, n);
		if (live == 0 && n > 0)
			break;
		sleep(1);
	}
	tracker_free(t);
	return n;
}

static long mtime_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_mtim.tv_sec * 1000000000L + st.st_mtim.tv_nsec : -1;
}

Test(retry, an_nccl_timeout_gets_exactly_one_retry_from_what_was_staged, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *first, *second;
	char *err = NULL, *spec, *retry_id = NULL, *sqsh, *sbatch, *specyaml, *root;
	long t_sqsh, t_sbatch, t_spec;

	sub_open(&e, "retry-once", NULL);
	e.cl.retry_budget = 2;
	/* Fails with an NCCL timeout the first time, succeeds after. Its mark
	 * is in the job folder (the retry's results folder is its own): the
	 * job runs in the image and sees only its mounts. */
	spec = bundle_running(&e, "once",
	    "if [ -e {job_dir}/ran-once ]; then echo recovered; echo {\\\"status\\\": \\\"SUCCESS\\\"} > "
	    "%B/results/status.json; exit 0; fi; touch {job_dir}/ran-once; echo epoch 1; "
	    "echo \"" NCCL_TIMEOUT "\" >&2; exit 1");
	{
		/* A named run: its retry keeps the name. */
		FILE *f = fopen(spec, "a");
		cr_assert_not_null(f);
		fputs("name: sweep-a\n", f);
		fclose(f);
	}
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	first = load(&e, res.record_id);
	root = xstrndup(first->log_dir, strlen(first->log_dir) - strlen("/slurm-logs"));
	sqsh = xstrdup(first->image);
	sbatch = xasprintf("%s/sbatch/job_%s.sbatch", root, first->id);
	specyaml = xasprintf("%s/specs/spec.yaml", root);
	t_sqsh = mtime_of(sqsh), t_sbatch = mtime_of(sbatch), t_spec = mtime_of(specyaml);
	cr_assert(t_sqsh > 0 && t_sbatch > 0 && t_spec > 0, "%s %s %s", sqsh, sbatch, specyaml);
	record_free(first);

	cr_assert_eq(settle(&e, 200), 2, "the job and one retry");
	cr_assert_eq(retries_of(&e, res.record_id, &retry_id), 1);
	first = load(&e, res.record_id);
	second = load(&e, retry_id);
	cr_expect_eq(first->state, TAO_ERROR);
	cr_expect_str_eq(first->retried_as, retry_id);
	cr_expect(history_says(first, "failure: the infrastructure's (nccl-timeout)"),
	    "the verdict is in the history");
	cr_expect(history_says(first, "retried as"), "the retry is in the history");
	cr_expect_str_eq(second->retry_of, res.record_id);
	cr_expect_eq(second->state, TAO_DONE, "the retry ran to Done: %s",
	    tao_state_name(second->state));
	cr_expect(history_says(second, "a retry of"), "linked both ways");
	cr_expect_str_eq(second->name ? second->name : "(none)", "sweep-a");
	/* Its shape is its job's (the same sbatch), never 1x?. */
	cr_expect(second->has_alloc && second->alloc.nodes == 1 && second->alloc.gpus == 1,
	    "the retry's shape: %d x %d", second->alloc.nodes, second->alloc.gpus);
	cr_expect_neq(strcmp(first->backend_ref, second->backend_ref), 0, "a new SLURM job");
	/* Nothing staged again: the same image, sbatch and spec files. */
	cr_expect_eq(mtime_of(sqsh), t_sqsh, "the image was converted again");
	cr_expect_eq(mtime_of(sbatch), t_sbatch, "the sbatch was staged again");
	cr_expect_eq(mtime_of(specyaml), t_spec, "the spec was staged again");
	{
		/* The retry's own log folder, under its own name. */
		char *path = xasprintf("%s/%s-%s/main.out", second->log_dir, second->id,
		    second->backend_ref), *text = sub_slurp(path);
		cr_expect(text != NULL && strstr(text, "recovered") != NULL, "%s: %s", path, text);
		free(text), free(path);
	}
	record_free(first), record_free(second);
	free(retry_id), free(sqsh), free(sbatch), free(specyaml), free(root), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* A TAO training (the stand-in) whose first `fails` runs die of an NCCL
 * timeout at epoch `fail_at` (the watchdog's words, an infrastructure
 * failure) and whose next runs on: its command passes the resume key it
 * is given ("$@") as taotop's own command does. */
static char *tao_bundle(struct sub_env *e, const char *name, int fail_at, int fails)
{
	char *text = xasprintf(
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "network_arch: classification_pyt\n"
	    "action: train\n"
	    "command: [sh, -c, 'n=$(cat {job_dir}/runs 2>/dev/null || echo 0); echo $((n + 1)) > "
	    "{job_dir}/runs; f=; [ $n -ge %d ] || f=train.nccl_timeout_at_epoch=%d; exec "
	    "classification_pyt train -e {spec} results_dir={results_dir} $f \"$@\"', tao]\n"
	    "datasets: [lustre://%%B/data/train]\n"
	    "gpus: 1\ncpus_per_task: 1\ntime_hours: 0.5\n"
	    "spec:\n  train:\n    num_epochs: 6\n    seconds_per_epoch: 1\n", fails, fail_at);
	char *path = sub_bundle(e, name, text);
	free(text);
	return path;
}

/* The files below dir (the rig's shared storage is this machine's), each
 * with its size and time, sorted: what "untouched" is compared by. */
static char *listing(const char *dir)
{
	char *cmd = xasprintf("find '%s' -printf '%%P %%s %%T@ %%l\\n' 2>&1 | sort", dir), buf[8192];
	FILE *p = popen(cmd, "r");
	size_t n;

	cr_assert_not_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	pclose(p);
	free(cmd);
	return xstrdup(buf);
}

/* Poll until id has a retry (the engine retries from its polls). */
static char *wait_retry(struct sub_env *e, const char *id, int timeout_s)
{
	struct tracker *t = tracker_new(&e->cl);
	time_t end = time(NULL) + timeout_s;
	char *rid = NULL, *err = NULL;

	while (retries_of(e, id, &rid) == 0) {
		struct poll_result pr;
		cr_assert(time(NULL) < end, "no retry of %s", id);
		cr_assert_eq(tracker_poll(t, e->conn, e->store, &pr, &err), 0, "%s", err);
		poll_result_free(&pr);
		sleep(1);
	}
	tracker_free(t);
	return rid;
}

/* The reference's rule (tao-skill-bank, failure-analysis-retry.md): a
 * retry gets fresh paths. A training that saved epochs 1 to 3 and then
 * lost its NCCL peer is retried into a results folder of its own (the
 * first run's files stay as they were), and TAO resumes from the first
 * run's newest checkpoint there: its epochs go on from 4, nothing is
 * trained twice. */
Test(retry, a_retry_has_a_results_folder_of_its_own_and_resumes_from_the_checkpoint, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *first, *second;
	char *err = NULL, *spec, *retry_id, *before, *after, *path, *out, *want, *ckpt;

	sub_open(&e, "retry-fresh", NULL);
	e.cl.retry_budget = 2;
	spec = tao_bundle(&e, "fresh", 4, 1);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	retry_id = wait_retry(&e, res.record_id, 200);
	first = load(&e, res.record_id);
	/* The first run's folder as the retry found it. */
	before = listing(first->results_dir);
	ckpt = xasprintf("%s/train/model_epoch_002.pth", first->results_dir);
	cr_assert(strstr(before, "train/model_epoch_002.pth") != NULL &&
	    strstr(before, "train/model_epoch_003.pth") == NULL,
	    "the first run saved epochs 1 to 3 (0-based 000..002):\n%s", before);
	cr_assert_eq(settle(&e, 200), 2, "the job and one retry");
	record_free(first);
	first = load(&e, res.record_id);
	second = load(&e, retry_id);
	cr_expect_eq(first->state, TAO_ERROR);
	cr_expect(history_says(first, "failure: the infrastructure's (nccl-timeout)"),
	    "an infrastructure failure");
	cr_expect_eq(second->state, TAO_DONE, "the retry ran to Done: %s",
	    tao_state_name(second->state));
	/* Fresh paths: its own results folder, named as a new submit's. */
	cr_assert_not_null(second->results_dir);
	cr_expect_neq(strcmp(second->results_dir, first->results_dir), 0, "the same folder: %s",
	    second->results_dir);
	want = xasprintf("/%s/results", second->id);
	cr_expect(strlen(second->results_dir) > strlen(want) && strcmp(second->results_dir +
	    strlen(second->results_dir) - strlen(want), want) == 0, "%s", second->results_dir);
	free(want);
	/* The first run's files untouched. */
	after = listing(first->results_dir);
	cr_expect_str_eq(after, before, "the first run's folder changed");
	free(after);
	/* The record says where it resumes from, and which checkpoint. */
	cr_expect_str_eq(second->resume_dir ? second->resume_dir : "(none)", first->results_dir);
	cr_expect_str_eq(second->resume_checkpoint ? second->resume_checkpoint : "(none)", ckpt);
	want = xasprintf("resumes from %s", ckpt);
	cr_expect(history_says(second, want), "the history says '%s'", want);
	free(want);
	/* TAO took it: its own line names the first run's checkpoint, the
	 * segment records it, and its epochs went on from there. */
	path = xasprintf("%s/%s-%s/main.out", second->log_dir, second->id, second->backend_ref);
	out = sub_slurp(path);
	cr_assert_not_null(out, "%s", path);
	want = xasprintf("Setting resume checkpoint to %s", ckpt);
	cr_expect(strstr(out, want) != NULL, "TAO did not say '%s':\n%s", want, out);
	free(want);
	cr_expect(strstr(out, "taotop: a retry: resuming from") != NULL, "%s", out);
	cr_expect(second->nseg >= 1 && second->seg[0].resumed_from != NULL &&
	    strcmp(second->seg[0].resumed_from, ckpt) == 0, "the segment: %s",
	    second->nseg ? second->seg[0].resumed_from : "none");
	after = listing(second->results_dir);
	cr_expect(strstr(after, "train/model_epoch_003.pth") != NULL &&
	    strstr(after, "train/model_epoch_005.pth") != NULL &&
	    strstr(after, "train/model_epoch_000.pth") == NULL,
	    "the retry trained epochs 4 to 6 only:\n%s", after);
	free(after), free(out), free(path);
	record_free(first), record_free(second);
	free(retry_id), free(spec), free(before), free(ckpt);
	submit_result_free(&res);
	sub_close(&e);
}

/* A run that died before its first checkpoint: its retry starts from the
 * start, in its own folder, and says so (the record and the job's log);
 * TAO is given no checkpoint. */
Test(retry, a_retry_of_a_run_with_no_checkpoint_starts_from_the_start_and_says_so, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *first, *second;
	char *err = NULL, *spec, *retry_id = NULL, *path, *out, *want, *files;

	sub_open(&e, "retry-fromstart", NULL);
	e.cl.retry_budget = 2;
	spec = tao_bundle(&e, "fromstart", 1, 1);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(settle(&e, 250), 2, "the job and one retry");
	cr_assert_eq(retries_of(&e, res.record_id, &retry_id), 1);
	first = load(&e, res.record_id);
	second = load(&e, retry_id);
	cr_expect_eq(second->state, TAO_DONE, "%s", tao_state_name(second->state));
	cr_expect_neq(strcmp(second->results_dir, first->results_dir), 0);
	cr_expect_null(second->resume_checkpoint, "%s", second->resume_checkpoint);
	want = xasprintf("starts from the start: no checkpoint in %s", first->results_dir);
	cr_expect(history_says(second, want), "the history says '%s'", want);
	free(want);
	path = xasprintf("%s/%s-%s/main.out", second->log_dir, second->id, second->backend_ref);
	out = sub_slurp(path);
	cr_assert_not_null(out, "%s", path);
	want = xasprintf("taotop: a retry: starting from the start (no checkpoint in %s",
	    first->results_dir);
	cr_expect(strstr(out, want) != NULL, "the job did not say '%s':\n%s", want, out);
	cr_expect(strstr(out, "Setting resume checkpoint") == NULL, "TAO resumed:\n%s", out);
	free(want);
	files = listing(second->results_dir);
	cr_expect(strstr(files, "train/model_epoch_000.pth") != NULL &&
	    strstr(files, "train/model_epoch_005.pth") != NULL, "all six epochs:\n%s", files);
	free(files), free(out), free(path);
	record_free(first), record_free(second);
	free(retry_id), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* Down the chain: the first run saves epochs 1 to 3 and fails; its retry
 * resumes from there and fails at once, before a checkpoint of its own;
 * the retry of that one resumes from the first run's newest checkpoint
 * (the newest of the chain), and says whose. */
Test(retry, a_retry_of_a_retry_without_checkpoints_resumes_from_the_run_before, .timeout = 400)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *first, *second, *third;
	char *err = NULL, *spec, *id2 = NULL, *id3 = NULL, *ckpt, *want, *path, *out;

	sub_open(&e, "retry-chain", NULL);
	e.cl.retry_budget = 2;
	spec = tao_bundle(&e, "chain", 4, 2);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(settle(&e, 330), 3, "the job and two retries");
	cr_assert_eq(retries_of(&e, res.record_id, &id2), 1);
	cr_assert_eq(retries_of(&e, id2, &id3), 1);
	first = load(&e, res.record_id);
	second = load(&e, id2);
	third = load(&e, id3);
	ckpt = xasprintf("%s/train/model_epoch_002.pth", first->results_dir);
	cr_expect_eq(second->state, TAO_ERROR);
	cr_expect_eq(third->state, TAO_DONE, "%s", tao_state_name(third->state));
	cr_expect(strcmp(third->results_dir, second->results_dir) != 0 &&
	    strcmp(third->results_dir, first->results_dir) != 0, "a folder of its own");
	cr_expect_str_eq(third->resume_dir ? third->resume_dir : "(none)", first->results_dir);
	cr_expect_str_eq(third->resume_checkpoint ? third->resume_checkpoint : "(none)", ckpt);
	path = xasprintf("%s/%s-%s/main.out", third->log_dir, third->id, third->backend_ref);
	out = sub_slurp(path);
	cr_assert_not_null(out, "%s", path);
	want = xasprintf("Setting resume checkpoint to %s", ckpt);
	cr_expect(strstr(out, want) != NULL, "TAO did not say '%s':\n%s", want, out);
	free(want), free(out), free(path);
	record_free(first), record_free(second), record_free(third);
	free(id2), free(id3), free(spec), free(ckpt);
	submit_result_free(&res);
	sub_close(&e);
}

Test(retry, a_python_traceback_is_the_programs_and_never_retried, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec;

	sub_open(&e, "retry-traceback", NULL);
	e.cl.retry_budget = 2;
	spec = bundle_running(&e, "tb",
	    "echo \"Traceback (most recent call last):\" >&2; "
	    "echo \"  File \\\"/opt/tao/train.py\\\", line 12, in <module>\" >&2; "
	    "echo \"ValueError: num_epochs must be positive\" >&2; exit 1");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(settle(&e, 150), 1, "no retry record");
	r = load(&e, res.record_id);
	cr_expect_eq(r->state, TAO_ERROR);
	cr_expect_null(r->retried_as);
	cr_expect(history_says(r, "failure: the program's (python-traceback)"), "the verdict");
	cr_expect(history_says(r, "not retried"), "and why");
	record_free(r);
	free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

Test(retry, a_job_failing_every_time_stops_at_the_budget_and_the_operator_can_retry, .timeout = 400)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec, *at, *last = NULL, *nid = NULL, *sid = NULL;
	int hops = 0;

	sub_open(&e, "retry-budget", NULL);
	e.cl.retry_budget = 2;
	spec = bundle_running(&e, "always", "echo \"" NCCL_TIMEOUT "\" >&2; exit 1");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(settle(&e, 300), 3, "the job and two retries: the budget");
	/* Follow the chain: first -> retry 1 -> retry 2, which stops. */
	at = xstrdup(res.record_id);
	for (;;) {
		r = load(&e, at);
		cr_expect_eq(r->state, TAO_ERROR);
		if (r->retried_as == NULL) {
			cr_expect(history_says(r, "the retry budget (2) is used up"), "%s says why it "
			    "stops", r->id);
			last = xstrdup(r->id);
			record_free(r);
			break;
		}
		free(at);
		at = xstrdup(r->retried_as);
		record_free(r);
		hops++;
	}
	cr_expect_eq(hops, 2);

	/* The operator may still retry it, on demand. */
	cr_assert_eq(retry_job(e.conn, e.store, &e.cl, last, "asked by the operator", 0, &nid, &sid,
	    &err), 0, "%s", err);
	r = load(&e, nid);
	cr_expect_str_eq(r->retry_of, last);
	cr_expect_not_null(r->backend_ref);
	record_free(r);
	/* And not twice from the same record. */
	free(nid), free(sid);
	nid = sid = NULL;
	cr_expect_neq(retry_job(e.conn, e.store, &e.cl, last, "again", 0, &nid, &sid, &err), 0);
	cr_expect_not_null(strstr(err ? err : "", "already retried"), "%s", err);
	free(err);
	settle(&e, 120);
	free(at), free(last), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* An automatic retry takes its secrets from the same sources as the first
 * submit: here only the .env beside the bundle has it (not the process's
 * environment), and the retried run sees it; once it ends, no sidecar. */
Test(retry, a_retry_takes_its_secret_from_the_bundles_env_file, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *second;
	char *err = NULL, *spec, *retry_id = NULL, *text, *envfile, *path;
	FILE *f;

	sub_open(&e, "retry-secret", NULL);
	e.cl.retry_budget = 1;
	unsetenv("RETRY_TOKEN");
	envfile = xasprintf("%s/.env", e.local);
	f = fopen(envfile, "w");
	cr_assert_not_null(f);
	fputs("export RETRY_TOKEN='tok-0123456789'\n", f);
	fclose(f);
	cr_assert_eq(chmod(envfile, 0600), 0);
	text = xasprintf(
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\ncommand: [sh, -c, 'if [ -e {job_dir}/ran-once ]; then echo \"recovered "
	    "token ${#RETRY_TOKEN}\"; echo {\\\"status\\\": \\\"SUCCESS\\\"} > %%B/results/status.json; "
	    "exit 0; fi; touch {job_dir}/ran-once; echo \"%s\" >&2; exit 1']\n"
	    "datasets: [lustre://%%B/data/train]\nresults_dir: lustre://%%B/results\ngpus: 1\n"
	    "cpus_per_task: 1\ntime_hours: 0.5\nsecrets: [RETRY_TOKEN]\n", NCCL_TIMEOUT);
	spec = sub_bundle(&e, "secret", text);
	free(text);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(settle(&e, 200), 2, "the job and one retry");
	cr_assert_eq(retries_of(&e, res.record_id, &retry_id), 1);
	second = load(&e, retry_id);
	cr_expect_eq(second->state, TAO_DONE, "%s", tao_state_name(second->state));
	path = xasprintf("%s/%s-%s/main.out", second->log_dir, second->id, second->backend_ref);
	text = sub_slurp(path);
	cr_expect(text != NULL && strstr(text, "recovered token 14") != NULL, "%s: %s", path, text);
	free(text), free(path);
	path = xasprintf("%s/root/%s/job_%s.env", e.base, res.record_id, res.record_id);
	cr_expect(access(path, F_OK) != 0, "the sidecar %s outlived the retry", path);
	free(path);
	record_free(second);
	free(retry_id), free(spec), free(envfile);
	submit_result_free(&res);
	sub_close(&e);
}

/* An Xid line, in the shape the kernel logs it (NVIDIA's Xid catalog:
 * "NVRM: Xid (PCI:<bus>): <code>, pid=..., name=..., <text>", here with
 * syslog's date and host before it), on the node the job ran on, then the
 * traceback it causes. */
#define XID_LINE "Dec  4 10:11:12 $SLURMD_NODENAME kernel: NVRM: Xid (PCI:0000:3b:00): 79, " \
	"pid=4242, name=python, GPU has fallen off the bus."

/* Run `what arg` on the rig, its output (trimmed); accounting lags a
 * job's submit: asked again until it answers, 60 s at most. */
static char *on_rig(const char *what, const char *arg)
{
	char *cmd = xasprintf("%s %s", what, arg), *out = NULL;
	for (int i = 0; i < 60; i++) {
		free(out);
		out = rig_ssh_ok(cmd);
		if (out[0] != '\0' || strncmp(what, "sacct", 5) != 0)
			break;
		sleep(1);
	}
	free(cmd);
	return out;
}

/* A job failing with an Xid on node02 is the node's: retried with
 * --exclude=node02 (accounting's SubmitLine shows it; it runs on node01),
 * the Xid line its evidence in the retry's record. node01 is held by a
 * blocker while the first run starts, so that run lands on node02. */
Test(retry, an_xid_on_node02_is_retried_away_from_node02, .timeout = 400)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *first, *second;
	char *err = NULL, *spec, *retry_id = NULL, *blocker, *out;
	time_t end;

	sub_open(&e, "retry-xid", NULL);
	e.cl.retry_budget = 2;
	blocker = rig_sbatch("-p polar -w node01 --gres=gpu:8 --exclusive -t 10 -J taotop-test-blocker",
	    "'sleep 600'");
	free(rig_wait_state(blocker, "RUNNING", 120));
	spec = bundle_running(&e, "xid",
	    "if [ -e {job_dir}/ran-once ]; then echo recovered on $SLURMD_NODENAME; "
	    "echo {\\\"status\\\": \\\"SUCCESS\\\"} > %B/results/status.json; exit 0; fi; "
	    "touch {job_dir}/ran-once; echo epoch 1; echo \"" XID_LINE "\" >&2; "
	    "echo \"Traceback (most recent call last):\" >&2; "
	    "echo \"RuntimeError: CUDA error: unknown error\" >&2; exit 1");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	/* Poll until the retry exists; then free node01 for it. */
	{
		struct tracker *t = tracker_new(&e.cl);
		end = time(NULL) + 200;
		while (retries_of(&e, res.record_id, NULL) == 0) {
			struct poll_result pr;
			cr_assert(time(NULL) < end, "no retry of %s", res.record_id);
			cr_assert_eq(tracker_poll(t, e.conn, e.store, &pr, &err), 0, "%s", err);
			poll_result_free(&pr);
			sleep(1);
		}
		tracker_free(t);
	}
	free(on_rig("scancel", blocker));
	cr_assert_eq(settle(&e, 200), 2, "the job and one retry");
	cr_assert_eq(retries_of(&e, res.record_id, &retry_id), 1);
	first = load(&e, res.record_id);
	second = load(&e, retry_id);
	out = on_rig("sacct -X -n -P -o NodeList -j", first->backend_ref);
	cr_assert_str_eq(out, "node02", "the first run was on node02");
	free(out);
	cr_expect(history_says(first, "failure: the infrastructure's (gpu-lost): main.err: "),
	    "the verdict names its log");
	cr_expect(history_says(first, "node02 kernel: NVRM: Xid (PCI:0000:3b:00): 79"),
	    "and its line");
	cr_assert_eq(second->nexclude, 1);
	cr_expect_str_eq(second->exclude[0].node, "node02");
	cr_expect_str_eq(second->exclude[0].from, res.record_id);
	cr_expect(second->exclude[0].evidence != NULL &&
	    strstr(second->exclude[0].evidence, "main.err: Dec  4 10:11:12 node02 kernel: NVRM: Xid")
	    != NULL, "%s", second->exclude[0].evidence);
	cr_expect(history_says(second, "submitted with --exclude=node02"), "the record says so");
	/* Accounting may list the job before its submit line is stored
	 * (seen: "|node01" for a few seconds): asked again for 30 s at most. */
	out = on_rig("sacct -X -n -P -o SubmitLine,NodeList -j", second->backend_ref);
	for (int i = 0; i < 15 && out[0] == '|'; i++) {
		free(out);
		sleep(2);
		out = on_rig("sacct -X -n -P -o SubmitLine,NodeList -j", second->backend_ref);
	}
	cr_expect(strstr(out, "--exclude=node02") != NULL && strstr(out, "|node01") != NULL,
	    "accounting: %s", out);
	free(out);
	cr_expect_eq(second->state, TAO_DONE, "%s", tao_state_name(second->state));
	record_free(first), record_free(second);
	free(retry_id), free(spec), free(blocker);
	submit_result_free(&res);
	sub_close(&e);
}

static int carry_exclusions(struct job_record *r, void *arg, char **err)
{
	(void)arg, (void)err;
	record_exclude(r, "node09", "main.err: NVRM: Xid (PCI:0000:86:00): 48", "tao-old");
	record_exclude(r, "node01", "main.err: mlx5_core ib0: Link is down", "tao-old");
	return 1;
}

/* Exclusions carried from a failed run are checked against the live
 * cluster first: one naming a node that no longer exists is dropped with a
 * note (sbatch would refuse the job for it), a live one is kept. */
Test(retry, an_excluded_node_that_is_gone_is_dropped_with_a_note, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL, *spec, *nid = NULL, *sid = NULL, *out;

	sub_open(&e, "retry-gone", NULL);
	spec = bundle_running(&e, "gone", "echo \"" NCCL_TIMEOUT "\" >&2; exit 1");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(settle(&e, 150), 1, "budget 0: no retry of its own");
	/* As a chain's earlier failures would have left it: node09 (since
	 * removed from the cluster) and node01. */
	cr_assert_eq(store_update(e.store, res.record_id, carry_exclusions, NULL, &err), 0, "%s", err);
	cr_assert_eq(retry_job(e.conn, e.store, &e.cl, res.record_id, "asked by the operator", 0, &nid,
	    &sid, &err), 0, "%s", err);
	r = load(&e, nid);
	cr_assert_eq(r->nexclude, 1, "node09 dropped, node01 kept");
	cr_expect_str_eq(r->exclude[0].node, "node01");
	cr_expect(history_says(r, "node node09 is no longer on the cluster (scontrol show node: not "
	    "found): dropped from the excluded nodes"), "the note");
	cr_expect(history_says(r, "submitted with --exclude=node01"), "the rest passed on");
	out = on_rig("sacct -X -n -P -o SubmitLine -j", sid);
	cr_expect(strstr(out, "--exclude=node01") != NULL && strstr(out, "node09") == NULL,
	    "accounting: %s", out);
	free(out);
	record_free(r);
	settle(&e, 120);
	{
		/* `taotop status` shows them, as a user reads it (the records
		 * where taotop keeps them: $XDG_STATE_HOME/taotop/jobs). */
		char *env = xasprintf("XDG_STATE_HOME=%s", e.local), *args = xasprintf("status %s", nid);
		cr_assert_eq(rig_local("mkdir -p %s/taotop && cp -a %s/jobs %s/taotop/", e.local, e.local,
		    e.local), 0);
		out = NULL;
		cr_expect_eq(rig_taotop(env, args, &out), 0, "%s", out);
		cr_expect(strstr(out, "  excluded node node01: tao-old failed there: main.err: mlx5_core "
		    "ib0: Link is down\n") != NULL, "%s", out);
		cr_expect(strstr(out, "node node09 is no longer on the cluster") != NULL, "%s", out);
		free(out), free(env), free(args);
	}
	free(nid), free(sid), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* The program's faults are never retried, whatever follows them: an OOM
 * kill (slurmstepd's words), a device-side assert followed by NCCL's
 * errors, and a traceback after NCCL's INFO echo of an environment
 * variable whose name says TIMEOUT. Each verdict names its rule. */
Test(retry, the_programs_faults_are_never_retried, .timeout = 300)
{
	static const struct { const char *name, *script, *verdict; } jobs[] = {
		{ "oom", "echo \"slurmstepd: error: Detected 1 oom_kill event in StepId=$SLURM_JOB_ID.0. "
		  "Some of the step tasks have been OOM Killed.\" >&2; "
		  "echo \"srun: error: $SLURMD_NODENAME: task 0: Out Of Memory\" >&2; exit 137",
		  "failure: the program's (host-oom): main.err: slurmstepd: error: Detected 1 oom_kill" },
		{ "assert", "echo \"../aten/src/ATen/native/cuda/Loss.cu:240: nll_loss_forward_reduce_cuda_"
		  "kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion t >= 0 && t < n_classes failed.\" >&2; "
		  "echo \"RuntimeError: CUDA error: device-side assert triggered\" >&2; "
		  "echo \"[rank0]:[E ProcessGroupNCCL.cpp:1316] NCCL error: unhandled cuda error\" >&2; "
		  "echo \"ncclUnhandledCudaError: Call to CUDA function failed.\" >&2; exit 1",
		  "failure: the program's (device-assert)" },
		{ "ibtimeout", "echo \"$SLURMD_NODENAME:2201:2201 [0] NCCL INFO NCCL_IB_TIMEOUT set by "
		  "environment to 22\"; echo \"Traceback (most recent call last):\" >&2; "
		  "echo \"KeyError: labels\" >&2; exit 1",
		  "failure: the program's (python-traceback): main.err: Traceback" },
	};
	struct sub_env e;
	struct submit_result res[3];
	char *err = NULL;
	size_t i;

	sub_open(&e, "retry-faults", NULL);
	e.cl.retry_budget = 10;
	for (i = 0; i < 3; i++) {
		/* Each its own results folder. */
		char *text = xasprintf(
		    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
		    "action: train\ncommand: [sh, -c, '%s']\ndatasets: [lustre://%%B/data/train]\n"
		    "results_dir: lustre://%%B/results-%s\ngpus: 1\ncpus_per_task: 1\ntime_hours: 0.5\n",
		    jobs[i].script, jobs[i].name);
		char *spec = sub_bundle(&e, jobs[i].name, text);
		free(text);
		cr_assert_eq(sub_submit(&e, spec, &res[i], &err), 0, "%s: %s", jobs[i].name, err);
		free(spec);
	}
	cr_assert_eq(settle(&e, 200), 3, "no retry record");
	for (i = 0; i < 3; i++) {
		struct job_record *r = load(&e, res[i].record_id);
		cr_expect_eq(r->state, TAO_ERROR, "%s", jobs[i].name);
		cr_expect_null(r->retried_as, "%s", jobs[i].name);
		cr_expect(history_says(r, jobs[i].verdict), "%s: the verdict", jobs[i].name);
		cr_expect(history_says(r, "not retried"), "%s", jobs[i].name);
		record_free(r);
		submit_result_free(&res[i]);
	}
	sub_close(&e);
}

/* A command that does not name its results folder (TAO told where to
 * write by other means): a fresh folder would not be where it writes, so
 * the retry runs in the same one and says why. */
Test(retry, a_command_that_does_not_name_its_results_folder_is_retried_in_it, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *first, *second;
	char *err = NULL, *spec, *retry_id = NULL;

	sub_open(&e, "retry-unnamed", NULL);
	e.cl.retry_budget = 2;
	spec = bundle_running(&e, "unnamed",
	    "if [ -e {job_dir}/ran-once ]; then echo recovered; exit 0; fi; touch {job_dir}/ran-once; "
	    "echo \"" NCCL_TIMEOUT "\" >&2; exit 1");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_eq(settle(&e, 200), 2, "the job and one retry");
	cr_assert_eq(retries_of(&e, res.record_id, &retry_id), 1);
	first = load(&e, res.record_id);
	second = load(&e, retry_id);
	cr_expect(history_says(second, "its command does not name its results folder"),
	    "the retry does not say why it stays");
	cr_expect_str_eq(second->results_dir, first->results_dir);
	record_free(first), record_free(second);
	free(retry_id), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

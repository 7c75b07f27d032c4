/*
 * The engine against the real cluster: jobs driven through every state the
 * rig can produce, each record ending in the seed's mapped state with the
 * native state in its history; one remote command per poll for 200 held
 * jobs, and what a poll of running jobs costs (SFTP requests too); cancel
 * of live and of finished jobs.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/track/tracker.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

struct env {
	struct conn		*conn;
	struct record_store	*store;
	struct cluster_cfg	 cl;
	struct tracker		*tracker;
	char			*dir;	/* this test's folder on the shared storage */
};

static void env_open(struct env *e, const char *name)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char tmpl[] = "/tmp/taotop-engine-XXXXXX", *err = NULL;

	rig_target(&t);
	e->conn = conn_new(&t);
	cr_assert_not_null(mkdtemp(tmpl));
	e->store = store_open(tmpl, &err);
	cr_assert_not_null(e->store, "%s", err);
	memset(&e->cl, 0, sizeof(e->cl));
	e->cl.name = (char *)"rig";
	e->tracker = tracker_new(&e->cl);
	e->dir = xasprintf("%s/engine-tests/%s-%d", r->shared, name, rig_uniq());
	char *cmd = xasprintf("rm -rf %s && mkdir -p %s", e->dir, e->dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
}

static void env_close(struct env *e)
{
	tracker_free(e->tracker);
	conn_free(e->conn);
	store_close(e->store);
	free(e->dir);
}

/* sbatch a job as the test user, its output dropped; returns its id. */
static char *submit(const char *opts, const char *script)
{
	char *all = xasprintf("-o /dev/null %s", opts), *id = rig_sbatch(all, script);

	free(all);
	return id;
}

/* A record for a launched job, as the submit pipeline leaves it. */
static char *track(struct env *e, const char *slurm_id, const char *results_dir)
{
	char *id = store_mint_id(e->store), *err = NULL;
	struct job_record *r = record_new(id);

	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, slurm_id);
	record_set(&r->results_dir, results_dir);
	cr_assert_eq(store_create(e->store, r, &err), 0, "%s", err);
	record_free(r);
	return id;
}

static struct job_record *load(struct env *e, const char *id)
{
	struct job_record *r;
	char *err = NULL;
	cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
	return r;
}

/* Poll until every given record reaches its wanted state, or fail. */
static void poll_until(struct env *e, const char **ids, const enum tao_state *want, size_t n,
    int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	for (;;) {
		struct poll_result res;
		char *err = NULL;
		size_t ok = 0, i;
		cr_assert_eq(tracker_poll(e->tracker, e->conn, e->store, &res, &err), 0, "%s", err);
		poll_result_free(&res);
		for (i = 0; i < n; i++) {
			struct job_record *r = load(e, ids[i]);
			ok += r->state == want[i];
			if (time(NULL) >= end)
				cr_assert_eq(r->state, want[i], "%s is %s (native %s), not %s", ids[i],
				    tao_state_name(r->state), r->native ? r->native : "-",
				    tao_state_name(want[i]));
			record_free(r);
		}
		if (ok == n)
			return;
		usleep(700 * 1000);
	}
}

static int history_has(const struct job_record *r, const char *native, enum tao_state to)
{
	for (size_t i = 0; i < r->nhist; i++)
		if (r->hist[i].native && strcmp(r->hist[i].native, native) == 0 && r->hist[i].to == to)
			return 1;
	return 0;
}

Test(engine, every_state_the_rig_produces_maps_as_the_seed_says, .timeout = 240)
{
	struct env e;
	env_open(&e, "states");
	char *ok_dir = xasprintf("%s/ok", e.dir), *bad_dir = xasprintf("%s/bad", e.dir);
	char *none_dir = xasprintf("%s/none", e.dir), *cmd;
	/* The jobs that write no status file get a results folder of their
	 * own: the one above ok/ and bad/ holds those runs' files, which the
	 * tracker's bounded search for TAO's file would find. */
	char *other_dir = xasprintf("%s/other", e.dir);

	/* COMPLETED, with status.json SUCCESS / FAILURE / none at all. */
	cmd = xasprintf("'mkdir -p %s && echo {\\\"status\\\": \\\"STARTED\\\"} >> %s/status.json && "
	    "echo {\\\"status\\\": \\\"SUCCESS\\\", \\\"message\\\": \\\"done\\\"} >> %s/status.json'",
	    ok_dir, ok_dir, ok_dir);
	char *j_ok = submit("-t 2", cmd);
	free(cmd);
	cmd = xasprintf("'mkdir -p %s && echo {\\\"status\\\": \\\"FAILURE\\\", \\\"message\\\": \\\"loss is NaN\\\"} > %s/status.json'",
	    bad_dir, bad_dir);
	char *j_bad = submit("-t 2", cmd);
	free(cmd);
	char *j_none = submit("-t 2", "true");
	char *j_fail = submit("-t 2", "'exit 3'");
	char *j_held = submit("-t 2 --hold", "true");
	char *j_run = submit("-t 5", "'sleep 120'");
	char *j_timeout = submit("--time=1", "'sleep 300'");

	const char *ids[] = {
		track(&e, j_ok, ok_dir), track(&e, j_bad, bad_dir), track(&e, j_none, none_dir),
		track(&e, j_fail, other_dir), track(&e, j_held, other_dir),
		track(&e, j_run, other_dir), track(&e, j_timeout, other_dir),
	};
	const enum tao_state want[] = { TAO_DONE, TAO_ERROR, TAO_ERROR, TAO_ERROR, TAO_PENDING,
	    TAO_RUNNING, TAO_RUNNING };
	poll_until(&e, ids, want, 6, 90);

	struct job_record *r = load(&e, ids[0]);
	cr_expect(history_has(r, "COMPLETED", TAO_DONE), "Done by status.json SUCCESS");
	cr_expect_str_eq(r->hist[r->nhist - 1].message, "status.json: SUCCESS: done");
	record_free(r);
	r = load(&e, ids[1]);
	cr_expect(history_has(r, "COMPLETED", TAO_ERROR));
	/* The transition, then the verdict: a FAILURE TAO wrote is the program's. */
	cr_assert_geq(r->nhist, 2);
	cr_expect_str_eq(r->hist[r->nhist - 2].message, "status.json: FAILURE: loss is NaN");
	cr_expect_str_eq(r->hist[r->nhist - 1].message,
	    "failure: the program's, as TAO's status file says: not retried");
	record_free(r);
	r = load(&e, ids[2]);
	cr_expect(strstr(r->hist[r->nhist - 1].message, "COMPLETED, but no final status was written "
	    "to ") != NULL, "%s",
	    r->hist[r->nhist - 1].message);
	record_free(r);
	r = load(&e, ids[3]);
	cr_expect(history_has(r, "FAILED", TAO_ERROR));
	/* The transition, then the failure's verdict (engine/retry.h): a plain
	 * non-zero exit is the program's, never retried. */
	cr_assert_geq(r->nhist, 2);
	cr_expect(strncmp(r->hist[r->nhist - 2].message, "FAILED, exit code 3:0; no final status "
	    "was written to ", 54) == 0, "%s", r->hist[r->nhist - 2].message);
	cr_expect_str_eq(r->hist[r->nhist - 1].message, "failure: the program's (FAILED, exit 3:0): "
	    "not retried");
	record_free(r);
	r = load(&e, ids[4]);
	cr_expect(history_has(r, "PENDING", TAO_PENDING));
	cr_expect_str_eq(r->hist[r->nhist - 1].message, "JobHeldUser", "the pending reason rides along");
	record_free(r);

	/* Cancel the running one through the engine: Canceled, by the user. */
	char *msg = NULL, *err = NULL;
	cr_assert_eq(tracker_cancel(e.conn, e.store, &e.cl, ids[5], &msg, &err), 0, "%s", err);
	free(msg);
	r = load(&e, ids[5]);
	cr_expect_eq(r->state, TAO_CANCELED);
	cr_expect_str_eq(r->hist[r->nhist - 1].source, "user");
	record_free(r);

	/* TIMEOUT is an Error; slurmctld's sweep takes 60-90 s. */
	const enum tao_state want_timeout[] = { TAO_ERROR };
	poll_until(&e, &ids[6], want_timeout, 1, 180);
	r = load(&e, ids[6]);
	cr_expect(history_has(r, "RUNNING", TAO_RUNNING), "seen running first");
	cr_expect(history_has(r, "TIMEOUT", TAO_ERROR));
	record_free(r);

	/* The cancelled job stays Canceled when SLURM reports CANCELLED. */
	r = load(&e, ids[5]);
	cr_expect_eq(r->state, TAO_CANCELED);
	record_free(r);

	cmd = xasprintf("scancel %s", j_held);
	free(rig_ssh_ok(cmd));
	free(cmd);
	for (size_t i = 0; i < 7; i++)
		free((char *)ids[i]);
	free(j_ok), free(j_bad), free(j_none), free(j_fail), free(j_held), free(j_run), free(j_timeout);
	free(ok_dir), free(bad_dir), free(none_dir), free(other_dir);
	env_close(&e);
}

Test(engine, a_requeued_job_goes_back_to_pending, .timeout = 120)
{
	struct env e;
	env_open(&e, "requeue");
	char *j = submit("-t 5 --requeue", "'sleep 120'");
	const char *id = track(&e, j, e.dir);
	const enum tao_state running[] = { TAO_RUNNING }, pending[] = { TAO_PENDING };

	poll_until(&e, &id, running, 1, 60);
	char *cmd = xasprintf("scontrol requeue %s", j);
	free(rig_ssh_ok(cmd));
	free(cmd);
	poll_until(&e, &id, pending, 1, 60);
	struct job_record *r = load(&e, id);
	cr_expect(history_has(r, "RUNNING", TAO_RUNNING));
	cr_expect(r->native && (strcmp(r->native, "PENDING") == 0 || strcmp(r->native, "REQUEUED") == 0),
	    "native %s", r->native);
	record_free(r);
	cmd = xasprintf("scancel %s", j);
	free(rig_ssh_ok(cmd));
	free(cmd), free(j), free((char *)id);
	env_close(&e);
}

Test(engine, two_hundred_jobs_one_remote_command_per_poll, .timeout = 240)
{
	enum { N = 200 };
	struct env e;
	env_open(&e, "many");
	char *ids_text = rig_ssh_ok("for i in $(seq 200); do sbatch --parsable --hold -J many -t 2 "
	    "-o /dev/null --wrap true; done");
	const char *ids[N];
	enum tao_state want[N];
	char *save = NULL, *tok = strtok_r(ids_text, "\n", &save);
	size_t n = 0;

	for (; tok != NULL && n < N; tok = strtok_r(NULL, "\n", &save)) {
		ids[n] = track(&e, tok, e.dir);
		want[n++] = TAO_PENDING;
	}
	cr_assert_eq(n, N);

	unsigned long before = conn_counters(e.conn)->execs;
	unsigned long sftp_before = conn_counters(e.conn)->sftp_requests;
	struct poll_result res;
	char *err = NULL;
	cr_assert_eq(tracker_poll(e.tracker, e.conn, e.store, &res, &err), 0, "%s", err);
	cr_expect_eq(conn_counters(e.conn)->execs - before, 1, "one poll, one remote command");
	cr_expect_eq(conn_counters(e.conn)->sftp_requests - sftp_before, 0,
	    "held jobs, yet %lu SFTP requests", conn_counters(e.conn)->sftp_requests - sftp_before);
	cr_expect(res.scheduler_ok);
	cr_expect_eq(res.changes, N, "every record saw its first native state");
	for (size_t i = 0; i < res.changes; i++) {
		cr_expect_eq(res.events[i].to, TAO_PENDING);
		cr_expect_str_eq(res.events[i].native, "PENDING");
	}
	poll_result_free(&res);
	poll_until(&e, ids, want, N, 30);

	/* Cancelled behind taotop's back: they leave the queue, sacct says
	 * CANCELLED, and every record follows, still one command per poll. */
	free(rig_ssh_ok("scancel --name=many"));
	for (size_t i = 0; i < N; i++)
		want[i] = TAO_CANCELED;
	before = conn_counters(e.conn)->execs;
	unsigned long polls = 0;
	time_t end = time(NULL) + 60;
	size_t done = 0;
	while (done < N && time(NULL) < end) {
		cr_assert_eq(tracker_poll(e.tracker, e.conn, e.store, &res, &err), 0, "%s", err);
		polls++;
		poll_result_free(&res);
		done = 0;
		for (size_t i = 0; i < N; i++) {
			struct job_record *r = load(&e, ids[i]);
			done += r->state == TAO_CANCELED;
			record_free(r);
		}
		if (done < N)
			sleep(1);
	}
	cr_expect_eq(done, N, "%zu of %d cancelled", done, N);
	cr_expect_eq(conn_counters(e.conn)->execs - before, polls, "%lu commands for %lu polls",
	    conn_counters(e.conn)->execs - before, polls);
	for (size_t i = 0; i < N; i++)
		free((char *)ids[i]);
	free(ids_text);
	env_close(&e);
}

/*
 * "One remote command per poll" holds for held jobs; a running job's
 * status.json is followed too, by SFTP: a stat each poll, and an open, a
 * read and a close when it grew. Measured with jobs that append a line to
 * it every second; the numbers are logged.
 */
Test(engine, a_poll_of_running_jobs_is_one_command_that_reads_their_progress_too, .timeout = 240)
{
	enum { N = 8, POLLS = 5 };
	struct env e;
	const char *ids[N];
	char *jobs[N];
	enum tao_state want[N];
	int first[N], last[N];
	size_t i;

	env_open(&e, "runcost");
	for (i = 0; i < N; i++) {
		char *dir = xasprintf("%s/r%zu", e.dir, i);
		char *script = xasprintf("'mkdir -p %s && i=0 && while :; do i=$((i+1)); "
		    "echo \"{\\\"epoch\\\": $i, \\\"status\\\": \\\"RUNNING\\\"}\" >> %s/status.json; "
		    "sleep 1; done'", dir, dir);
		jobs[i] = submit("-t 5 -c 1 -J runcost", script);
		ids[i] = track(&e, jobs[i], dir);
		want[i] = TAO_RUNNING;
		first[i] = last[i] = -1;
		free(script), free(dir);
	}
	/* All running, and a first poll (+sacct) behind us. */
	poll_until(&e, ids, want, N, 90);
	for (int k = 0; k < POLLS; k++) {
		const struct conn_counters *cc = conn_counters(e.conn);
		unsigned long x0 = cc->execs, r0 = cc->sftp_requests;
		struct poll_result res;
		char *err = NULL;

		sleep(2);
		cr_assert_eq(tracker_poll(e.tracker, e.conn, e.store, &res, &err), 0, "%s", err);
		/* The queue and every job's status.json: one round trip. */
		cr_expect_eq(cc->execs - x0, 1, "poll %d: %lu remote commands", k, cc->execs - x0);
		cr_expect_eq(cc->sftp_requests - r0, 0, "poll %d: %lu SFTP requests", k,
		    cc->sftp_requests - r0);
		/* And each job's epoch moves on from poll to poll. */
		for (i = 0; i < N; i++) {
			for (size_t r = 0; r < res.n; r++) {
				if (res.rows[r].record_id == NULL || strcmp(res.rows[r].record_id, ids[i]) != 0)
					continue;
				/* Never back; forward over the run (below): a loaded
				 * machine may hold a job's loop past one poll's 2 s. */
				if (k > 0)
					cr_expect_geq(res.rows[r].epoch, last[i], "poll %d: job %zu went "
					    "back to epoch %d", k, i, res.rows[r].epoch);
				else
					first[i] = res.rows[r].epoch;
				last[i] = res.rows[r].epoch;
			}
		}
		poll_result_free(&res);
	}
	for (i = 0; i < N; i++)
		cr_expect_gt(last[i], first[i] + 2, "job %zu's progress was not read (epoch %d, then "
		    "%d over %d polls)", i, first[i], last[i], POLLS);
	free(rig_ssh_ok("scancel --name=runcost"));
	for (i = 0; i < N; i++)
		free((char *)ids[i]), free(jobs[i]);
	env_close(&e);
}

Test(engine, cancel_of_an_ended_job_is_a_success_and_a_bad_id_is_refused, .timeout = 60)
{
	struct env e;
	env_open(&e, "cancel");
	char *j = submit("-t 1", "true");
	const char *id = track(&e, j, e.dir);
	char *msg = NULL, *err = NULL;
	const enum tao_state done[] = { TAO_ERROR };	/* COMPLETED, no status.json */

	poll_until(&e, &id, done, 1, 60);
	cr_expect_eq(tracker_cancel(e.conn, e.store, &e.cl, j, &msg, &err), 0, "%s", err);
	cr_expect(strstr(msg, "already ended") != NULL, "%s", msg);
	struct job_record *r = load(&e, id);
	cr_expect_eq(r->state, TAO_ERROR, "an ended job keeps its real state");
	record_free(r);
	free(msg), msg = NULL;

	cr_expect_eq(tracker_cancel(e.conn, e.store, &e.cl, "$(touch /tmp/pwned)", &msg, &err), -1);
	cr_expect(strstr(err, "neither a taotop job id nor a SLURM job id") != NULL, "%s", err);
	free(err), free(j), free((char *)id);
	env_close(&e);
}

Test(engine, tao_progress_is_read_by_offset_while_the_job_runs, .timeout = 120)
{
	struct env e;
	env_open(&e, "progress");
	char *res_dir = xasprintf("%s/results", e.dir);
	/* TAO appends a line per epoch; we poll while it does. */
	char *cmd = xasprintf("'mkdir -p %s && for ep in 1 2 3 4; do "
	    "echo \"{\\\"status\\\": \\\"RUNNING\\\", \\\"epoch\\\": $ep, \\\"max_epoch\\\": 4, "
	    "\\\"kpi\\\": {\\\"loss\\\": 0.$((9 - ep))}}\" >> %s/status.json; sleep 3; done; "
	    "echo {\\\"status\\\": \\\"SUCCESS\\\"} >> %s/status.json'", res_dir, res_dir, res_dir);
	char *j = submit("-t 2", cmd);
	free(cmd);
	const char *id = track(&e, j, res_dir);
	int best_epoch = -1;
	size_t best_series = 0;
	time_t end = time(NULL) + 60;
	struct job_record *r = NULL;

	while (time(NULL) < end) {
		struct poll_result res;
		char *err = NULL;
		cr_assert_eq(tracker_poll(e.tracker, e.conn, e.store, &res, &err), 0, "%s", err);
		for (size_t i = 0; i < res.n; i++) {
			if (res.rows[i].record_id == NULL || strcmp(res.rows[i].record_id, id) != 0)
				continue;
			if (res.rows[i].epoch > best_epoch) {
				best_epoch = res.rows[i].epoch;
				cr_expect_eq(res.rows[i].max_epoch, 4);
				cr_expect_str_eq(res.rows[i].metric, "loss");
				best_series = res.rows[i].nseries;
				if (best_series > 0)
					cr_expect_float_eq(res.rows[i].series[0], 0.8, 1e-9);
			}
		}
		poll_result_free(&res);
		r = load(&e, id);
		int done = tao_state_final(r->state);
		if (!done)
			record_free(r);
		if (done)
			break;
		usleep(500 * 1000);
	}
	cr_assert_not_null(r);
	cr_expect_eq(r->state, TAO_DONE, "%s", r->native);
	cr_expect_geq(best_epoch, 3, "progress seen while running: up to epoch %d", best_epoch);
	cr_expect_geq(best_series, 3, "a metric point per epoch: %zu", best_series);
	record_free(r);
	free(j), free((char *)id), free(res_dir);
	env_close(&e);
}

Test(engine, cancelling_another_users_job_reports_the_schedulers_refusal, .timeout = 60)
{
	struct env e;
	env_open(&e, "perm");
	/* root submits on the rig itself; the test user may not cancel it. */
	const char *const argv[] = { "sbatch", "--parsable", "-t", "2", "-o", "/dev/null",
	    "--wrap", "sleep 60", NULL };
	char *id = NULL, *msg = NULL, *err = NULL;
	cr_assert_eq(rig_run(argv, &id), 0, "%s", id);
	id[strcspn(id, "\n")] = '\0';

	cr_expect_eq(tracker_cancel(e.conn, e.store, &e.cl, id, &msg, &err), -1);
	cr_expect(err != NULL && strstr(err, "Access/permission denied") != NULL,
	    "the scheduler's own words: %s", err);
	const char *const kill[] = { "scancel", id, NULL };
	char *out = NULL;
	rig_run(kill, &out);
	free(out), free(err), free(msg), free(id);
	env_close(&e);
}

/* The row of slurm_id in a poll, or NULL. */
static const struct job_row *row_for(const struct poll_result *res, const char *slurm_id)
{
	for (size_t i = 0; i < res->n; i++)
		if (strcmp(res->rows[i].slurm_id, slurm_id) == 0)
			return &res->rows[i];
	return NULL;
}

Test(engine, another_job_seen_in_the_queue_stays_as_history_with_its_final_state, .timeout = 90)
{
	struct env e;
	env_open(&e, "history");
	char *ok = submit("-J hist-ok -t 1", "'sleep 3'");
	char *bad = submit("-J hist-bad -t 1", "'sleep 3; exit 4'");
	int seen = 0, done = 0;
	time_t end = time(NULL) + 60;

	while (time(NULL) < end && done < 2) {
		struct poll_result res;
		char *err = NULL;
		cr_assert_eq(tracker_poll(e.tracker, e.conn, e.store, &res, &err), 0, "%s", err);
		const struct job_row *a = row_for(&res, ok), *b = row_for(&res, bad);
		if (a != NULL && b != NULL) {
			seen = 1;
			cr_assert_null(a->record_id, "not taotop's job, no record");
			done = (a->state == TAO_DONE) + (b->state == TAO_ERROR);
			if (done == 2) {
				cr_assert_str_eq(a->native, "COMPLETED");
				cr_assert_str_eq(b->native, "FAILED");
			}
		} else {
			cr_assert_not(seen, "a job seen once vanished from the rows");
		}
		poll_result_free(&res);
		usleep(700 * 1000);
	}
	cr_assert_eq(done, 2, "both jobs reach their final state (Done, Error) after leaving the queue");
	free(ok), free(bad);
	env_close(&e);
}

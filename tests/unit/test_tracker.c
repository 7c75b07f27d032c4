/* The tracker's rows from the records on disk (engine/tracker.h's
 * tracker_rows_from_disk): what the monitor shows before its link is up,
 * from the records' index alone, and the page of finished rows that polls
 * share, made again only when one of them changed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/slurm/slurm.h"
#include "engine/store/store.h"
#include "engine/track/tracker.h"
#include "engine/track/tracker_priv.h"
#include "util/xmalloc.h"

static struct record_store *fresh_store(void)
{
	char home[] = "/tmp/taotop-tracker-XXXXXX", *jobs, *why = NULL;
	struct record_store *st;

	cr_assert_not_null(mkdtemp(home));
	jobs = xasprintf("%s/jobs", home);
	st = store_open(jobs, &why);
	cr_assert_not_null(st, "store_open %s: %s", jobs, why);
	free(jobs);
	return st;
}

/* A record of cluster "rig", created at `created`, SLURM job ref. */
static void put(struct record_store *s, const char *id, const char *ref, enum tao_state st,
    time_t created, const char *message)
{
	struct job_record *r = record_new(id);
	char *err = NULL;

	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, ref);
	record_set(&r->network_arch, "classification_pyt");
	record_set(&r->action, "train");
	r->created = r->updated = created;
	if (st != TAO_PENDING)
		record_transition(r, st, tao_state_final(st) ? "COMPLETED" : "RUNNING", message,
		    "scheduler", created + 60);
	r->has_alloc = 1;
	snprintf(r->alloc.partition, sizeof(r->alloc.partition), "gpu");
	r->alloc.nodes = 1;
	r->alloc.gpus = 2;
	r->alloc.elapsed_s = 125;
	r->alloc.limit_s = 3600;
	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	record_free(r);
}

static const struct job_row *row_of(const struct poll_result *res, const char *id)
{
	size_t i;

	for (i = 0; i < res->n; i++)
		if (res->rows[i].record_id != NULL && strcmp(res->rows[i].record_id, id) == 0)
			return &res->rows[i];
	return NULL;
}

/* Past the file system clock's tick: a change made now is not in the
 * same tick as the last listing. */
static void tick(void)
{
	nanosleep(&(struct timespec){ .tv_nsec = 150 * 1000 * 1000 }, NULL);
}

Test(tracker, rows_from_disk_are_the_live_records_and_the_newest_page)
{
	struct cluster_cfg cl = { .name = (char *)"rig" };
	struct record_store *st = fresh_store();
	struct tracker *t = tracker_new(&cl);
	struct poll_result res;
	const struct job_row *r;
	char id[32];
	int i;

	/* Five finished (the oldest first), one live among them, and one
	 * live older than any. */
	put(st, "tao-20261201-live01", "100", TAO_PENDING, 500, NULL);
	for (i = 0; i < 5; i++) {
		snprintf(id, sizeof(id), "tao-20261201-done%02d", i);
		put(st, id, "200", TAO_DONE, 1000 + i * 100, "status.json: SUCCESS");
	}
	put(st, "tao-20261201-live02", "101", TAO_RUNNING, 1250, NULL);
	tracker_set_page(t, 3);
	tracker_rows_from_disk(t, st, &res);
	cr_expect_eq(res.n, 5, "2 live and the 3 newest finished: %zu rows", res.n);
	cr_expect_null(row_of(&res, "tao-20261201-done00"));
	cr_expect_null(row_of(&res, "tao-20261201-done01"));
	cr_expect_not_null(row_of(&res, "tao-20261201-done02"));
	cr_expect_not_null(row_of(&res, "tao-20261201-live01"), "live rows are always shown");
	for (i = 1; i < (int)res.n; i++)
		cr_expect_leq(res.rows[i - 1].created, res.rows[i].created, "oldest first");
	r = row_of(&res, "tao-20261201-done04");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->name, "classification_pyt train");
	cr_expect_eq(r->state, TAO_DONE);
	cr_expect_str_eq(r->native, "COMPLETED");
	cr_expect_str_eq(r->message, "status.json: SUCCESS");
	cr_expect_str_eq(r->slurm_id, "200");
	cr_expect_str_eq(r->partition, "gpu");
	cr_expect_eq(r->gpus, 2);
	cr_expect_str_eq(r->elapsed, "00:02:05");
	cr_expect_str_eq(r->limit, "01:00:00");
	r = row_of(&res, "tao-20261201-live02");
	cr_assert_not_null(r);
	cr_expect_eq(r->state, TAO_RUNNING);
	cr_expect_not(res.scheduler_ok, "nothing asked yet");
	cr_expect_eq(res.finished_left, 2, "two older finished ones not shown");
	poll_result_free(&res);
	/* A page more (the user scrolled past the end): every one. */
	tracker_set_page(t, 6);
	tracker_rows_from_disk(t, st, &res);
	cr_expect_eq(res.n, 7);
	cr_expect_not_null(row_of(&res, "tao-20261201-done00"));
	cr_expect_eq(res.finished_left, 0);
	poll_result_free(&res);
	tracker_free(t);
	store_close(st);
}

Test(tracker, the_page_is_kept_while_nothing_changes_and_follows_a_change)
{
	struct cluster_cfg cl = { .name = (char *)"rig" };
	struct record_store *st = fresh_store();
	struct tracker *t = tracker_new(&cl);
	struct poll_result a, b, c;
	const struct job_row *r;
	char *json, *path, *cmd;
	struct job_record *rec;
	char *err = NULL;

	put(st, "tao-20261201-done10", "300", TAO_DONE, 1000, NULL);
	put(st, "tao-20261201-done11", "301", TAO_DONE, 1100, NULL);
	put(st, "tao-20261201-done12", "302", TAO_DONE, 1200, "first word");
	put(st, "tao-20261201-live10", "303", TAO_PENDING, 1300, NULL);
	tracker_set_page(t, 3);
	tick();
	tracker_rows_from_disk(t, st, &a);
	tracker_rows_from_disk(t, st, &b);
	cr_expect(a.page != NULL && a.page == b.page, "nothing changed: the same page, not rebuilt");
	cr_expect_eq(a.n, 4);
	r = row_of(&b, "tao-20261201-done12");
	cr_assert_not_null(r);
	cr_expect(r->shared, "a finished row borrows its page");
	/* Another process changes a finished record (a whole file renamed
	 * in) and adds a newer finished one: the page is made again. */
	cr_assert_eq(store_load(st, "tao-20261201-done12", &rec, &err), 0, "%s", err);
	/* (A final record keeps its state: accounting's word after taotop
	 * cancelled a job TAO had ended, as ending_grace does.) */
	cr_assert_eq(record_transition(rec, TAO_DONE, "CANCELLED", "second word", "scheduler", 2000),
	    1);
	json = record_to_json(rec);
	record_free(rec);
	path = xasprintf("%s/../changed.json", store_dir(st));
	{
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fputs(json, f);
		fclose(f);
	}
	cmd = xasprintf("mv '%s' '%s/tao-20261201-done12.json'", path, store_dir(st));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	put(st, "tao-20261201-done13", "304", TAO_DONE, 1400, NULL);
	tick();
	tracker_rows_from_disk(t, st, &c);
	cr_expect_neq(c.page, b.page, "a finished record changed: a new page");
	cr_expect_eq(c.n, 4, "still 3 finished and the live one: %zu", c.n);
	cr_expect_null(row_of(&c, "tao-20261201-done10"), "the oldest left the page");
	cr_expect_not_null(row_of(&c, "tao-20261201-done11"));
	cr_expect_not_null(row_of(&c, "tao-20261201-done13"));
	r = row_of(&c, "tao-20261201-done12");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->message, "second word", "the change is in the page");
	cr_expect_str_eq(r->native, "CANCELLED");
	/* The older results still read their own page (freed in any order). */
	r = row_of(&a, "tao-20261201-done12");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->message, "first word");
	poll_result_free(&b);
	poll_result_free(&c);
	tracker_free(t);
	cr_expect_str_eq(row_of(&a, "tao-20261201-done10")->name, "classification_pyt train",
	    "a result outlives its tracker");
	poll_result_free(&a);
	free(cmd), free(path), free(json);
	store_close(st);
}

static int cancel_it(struct job_record *r, void *arg, char **err)
{
	(void)arg, (void)err;
	return record_transition(r, TAO_CANCELED, "RUNNING", "cancelled by the user", "user", 700);
}

static int settle_it(struct job_record *r, void *arg, char **err)
{
	(void)arg, (void)err;
	record_set(&r->native, "CANCELLED");
	return 1;
}

static int set_extra(struct job_record *r, void *arg, char **err)
{
	const struct record_progress p = { .epoch = 2, .max_epoch = 10, .eta = "0:00:09",
		.metric = "loss" };

	(void)err;
	if (arg != NULL)
		record_set(&r->name, arg);
	record_set_progress(r, &p);
	return 1;
}

/*
 * A record taotop made Canceled while SLURM said RUNNING waits for
 * accounting's word: it is one of the live ones (asked about at every
 * poll), never left out with the older finished page; once SLURM's word
 * is final it is a finished one again. A failed job's row has no ETA; a
 * named run's row is called by its name.
 */
Test(tracker, a_cancelled_record_awaits_accounting_a_failed_one_has_no_eta_a_name_shows)
{
	struct cluster_cfg cl = { .name = (char *)"rig" };
	struct record_store *st = fresh_store();
	struct tracker *t = tracker_new(&cl);
	struct poll_result res;
	const struct job_row *r;
	char *err = NULL;

	put(st, "tao-20261201-canc01", "300", TAO_RUNNING, 500, NULL);
	cr_assert_eq(store_update(st, "tao-20261201-canc01", cancel_it, NULL, &err), 0, "%s", err);
	put(st, "tao-20261201-fail01", "301", TAO_ERROR, 1000, "FAILED");
	cr_assert_eq(store_update(st, "tao-20261201-fail01", set_extra, (void *)"lr-0.01", &err), 0,
	    "%s", err);
	put(st, "tao-20261201-done01", "302", TAO_DONE, 1100, NULL);
	tracker_set_page(t, 1);	/* only the newest finished one */
	tracker_rows_from_disk(t, st, &res);
	cr_expect_not_null(row_of(&res, "tao-20261201-canc01"),
	    "a cancel that awaits accounting is shown (and asked about) as a live one");
	cr_expect_null(row_of(&res, "tao-20261201-fail01"), "past the page");
	poll_result_free(&res);
	tracker_set_page(t, 0);
	tracker_rows_from_disk(t, st, &res);
	r = row_of(&res, "tao-20261201-fail01");
	cr_assert_not_null(r);
	cr_expect_str_eq(r->name, "lr-0.01");
	cr_expect_eq(r->epoch, 2);
	cr_expect_str_eq(r->eta, "", "a failed job has no time left: '%s'", r->eta);
	poll_result_free(&res);

	tick();
	cr_assert_eq(store_update(st, "tao-20261201-canc01", settle_it, NULL, &err), 0, "%s", err);
	tracker_set_page(t, 1);
	tracker_rows_from_disk(t, st, &res);
	cr_expect_null(row_of(&res, "tao-20261201-canc01"), "settled: finished, past the page");
	poll_result_free(&res);
	tracker_free(t);
	store_close(st);
}

/* A segments line the poll read is kept on disk first: when the record
 * cannot be written, the one in memory is left as the file is (and the
 * next write that works brings both). */
Test(tracker, segments_not_written_leave_the_record_in_memory_as_on_disk)
{
	struct record_store *st = fresh_store();
	const char *id = "tao-20261201-segs01";
	const char *line = "{\"event\":\"start\",\"segment\":1,\"at\":1764590000}\n";
	struct job_record *r, *disk;
	char *err = NULL;

	put(st, id, "4242", TAO_RUNNING, time(NULL) - 600, "running");
	cr_assert_eq(store_load(st, id, &r, &err), 0, "%s", err);
	store_test_fail_before_rename(st, 1);
	cr_expect_eq(tracker_keep_segments(st, r, line, strlen(line), -1), -1);
	store_test_fail_before_rename(st, 0);
	cr_expect_eq(r->nseg, 0, "the record in memory went ahead of its file");
	cr_assert_eq(store_load(st, id, &disk, &err), 0, "%s", err);
	cr_expect_eq(disk->nseg, 0);
	record_free(disk);

	cr_expect_eq(tracker_keep_segments(st, r, line, strlen(line), -1), 0);
	cr_expect_eq(r->nseg, 1);
	cr_assert_eq(store_load(st, id, &disk, &err), 0, "%s", err);
	cr_expect_eq(disk->nseg, 1, "written");
	cr_expect_eq(disk->seg[0].start, 1764590000);
	record_free(disk);
	record_free(r);
	store_close(st);
}

/* A job taotop cancelled that accounting still calls RUNNING long after
 * (a runaway in slurmdbd): past the give-up the record keeps no word, one
 * note says why, and it no longer awaits accounting, so the next polls do
 * not ask again nor note it again. */
Test(tracker, accounting_that_keeps_saying_running_is_given_up_once)
{
	struct record_store *st = fresh_store();
	struct poll_result res;
	struct slurm_job j;
	struct job_record *r = NULL;
	char *err = NULL;
	size_t notes = 0, i;

	put(st, "tao-20261201-runa01", "400", TAO_RUNNING, 500, NULL);
	cr_assert_eq(store_update(st, "tao-20261201-runa01", cancel_it, NULL, &err), 0, "%s", err);
	cr_assert_eq(store_load(st, "tao-20261201-runa01", &r, &err), 0, "%s", err);
	cr_assert(awaits_accounting(r->state, r->native, r->backend_ref));
	memset(&res, 0, sizeof(res));
	res.scheduler_ok = res.accounting_ok = 1;
	memset(&j, 0, sizeof(j));
	snprintf(j.id, sizeof(j.id), "400");
	j.state = (char *)"RUNNING";
	j.from_sacct = 1;
	/* Cancelled at 700, long past the give-up. */
	cr_expect_eq(tracker_settle(st, r, &j, &res), 1);
	cr_expect_null(r->native, "still '%s'", r->native ? r->native : "");
	cr_expect_not(awaits_accounting(r->state, r->native, r->backend_ref),
	    "asked about again on every poll");
	record_free(r);
	cr_assert_eq(store_load(st, "tao-20261201-runa01", &r, &err), 0, "%s", err);
	cr_expect_null(r->native, "on disk: '%s'", r->native ? r->native : "");
	for (i = 0; i < r->nhist; i++)
		notes += r->hist[i].message != NULL &&
		    strstr(r->hist[i].message, "accounting (sacct) still says RUNNING") != NULL;
	cr_expect_eq(notes, 1);
	record_free(r);
	store_close(st);
}

/* Accounting's first final word on a job can lack where it ran (22.05:
 * COMPLETED with an empty Partition for a poll or two). A record knowing
 * only the list it asked for waits WHERE_LAG_S for the partition, then
 * takes the word without it; a record that knows where it ran, a job
 * cancelled before it started and an answer with the partition never
 * wait. */
Test(tracker, a_final_word_without_where_the_job_ran_waits_a_little_not_for_good)
{
	struct cluster_cfg cl = { .name = (char *)"rig" };
	struct tracker *t = tracker_new(&cl);
	struct job_record *r = record_new("tao-20261205-where1");
	struct slurm_job j;
	const time_t now = 1000000;

	record_set(&r->backend_ref, "500");
	r->has_alloc = 1;
	snprintf(r->alloc.partition, sizeof(r->alloc.partition), "polar,polar3,grizzly");
	memset(&j, 0, sizeof(j));
	snprintf(j.id, sizeof(j.id), "500");
	j.state = (char *)"COMPLETED";
	j.partition = (char *)"";
	j.elapsed_s = 1;
	j.from_sacct = 1;
	cr_expect(tracker_where_awaited(t, r, &j, now), "the first answer without a partition");
	cr_expect(tracker_where_awaited(t, r, &j, now + WHERE_LAG_S - 1), "still within the lag");
	cr_expect_not(tracker_where_awaited(t, r, &j, now + WHERE_LAG_S), "waited for good");
	cr_expect_eq(t->nww, 0, "the wait is forgotten once over");
	/* The answer that names it: taken at once. */
	j.partition = (char *)"polar";
	cr_expect_not(tracker_where_awaited(t, r, &j, now));
	/* Still running as accounting says: the usual path, not this wait. */
	j.partition = (char *)"";
	j.state = (char *)"RUNNING";
	cr_expect_not(tracker_where_awaited(t, r, &j, now));
	/* Cancelled while pending: it never had a partition of its own. */
	j.state = (char *)"CANCELLED by 1001";
	j.elapsed_s = 0;
	cr_expect_not(tracker_where_awaited(t, r, &j, now));
	/* The record knows the one partition it ran in (the queue said). */
	j.state = (char *)"FAILED";
	snprintf(r->alloc.partition, sizeof(r->alloc.partition), "polar");
	cr_expect_not(tracker_where_awaited(t, r, &j, now));
	/* Never told anything, and the queue's answer: no wait either. */
	r->has_alloc = 0;
	cr_expect(tracker_where_awaited(t, r, &j, now));
	j.from_sacct = 0;
	cr_expect_not(tracker_where_awaited(t, r, &j, now + 1));
	cr_expect_eq(t->nww, 0);
	record_free(r);
	tracker_free(t);
}

/* A running job's curves ride on its row by reference: a copy of the row
 * holds them, assigning another row's drops the old and holds the new,
 * and clearing every row frees them (ASan and LSan say if not). */
Test(tracker, a_rows_curves_are_held_by_each_copy_and_freed_with_the_last)
{
	struct series_set set;
	struct series_shared *one, *two;
	struct job_row a, b, c;

	series_set_init(&set);
	series_set_add(&set, "val_loss", 1, 0.9, 1);
	one = series_shared_new(&set);
	series_set_add(&set, "val_loss", 2, 0.8, 1);
	two = series_shared_new(&set);
	memset(&a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	a.curves = one;			/* a holds one's first reference */
	tracker_row_copy(&b, &a);
	cr_assert_eq(b.curves, one);
	c.curves = series_shared_ref(two);
	tracker_row_assign(&b, &c);	/* b drops one, holds two */
	cr_assert_eq(b.curves, two);
	tracker_row_clear(&a);		/* one's last reference */
	cr_expect_null(a.curves);
	cr_expect_eq(series_shared_set(b.curves)->s[0].n, 2);
	tracker_row_clear(&c);
	tracker_row_clear(&b);
	series_shared_unref(two);	/* the tracker's own */
	series_set_free(&set);
}

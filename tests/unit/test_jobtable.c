/* The jobs list as data: filter, sort, groups, selection and marks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/track/tracker.h"
#include "ui/jobtable.h"
#include "util/xmalloc.h"

static struct job_row rows[8];

static void row(int i, const char *id, const char *name, enum tao_state st, const char *reason)
{
	memset(&rows[i], 0, sizeof(rows[i]));
	snprintf(rows[i].slurm_id, sizeof(rows[i].slurm_id), "%s", id);
	rows[i].name = (char *)name;
	rows[i].state = st;
	rows[i].message = (char *)reason;
	rows[i].epoch = rows[i].max_epoch = -1;
}

/* Six jobs on two clusters. */
static void fill(struct jobtable *t)
{
	row(0, "101", "train-a", TAO_DONE, NULL);
	row(1, "102", "train-b", TAO_RUNNING, NULL);
	row(2, "103", "eval", TAO_PENDING, "Priority");
	row(3, "104", "export", TAO_ERROR, NULL);
	row(4, "201", "other", TAO_RUNNING, NULL);
	row(5, "202", "zeta", TAO_PENDING, "JobHeldUser");
	jt_begin(t);
	for (int i = 0; i < 6; i++)
		jt_add(t, i < 4 ? 0 : 1, i < 4 ? "ord" : "lab", &rows[i]);
	jt_rebuild(t);
}

/* The shown jobs' SLURM ids, in order, "-" for headers. */
static void order(const struct jobtable *t, char *out, size_t len)
{
	out[0] = '\0';
	for (size_t i = 0; i < t->nlines; i++) {
		const char *s = t->lines[i].header ? "-" : t->entries[t->lines[i].entry].row->slurm_id;
		strncat(out, s, len - strlen(out) - 2);
		strncat(out, " ", len - strlen(out) - 1);
	}
}

Test(jobtable, sorted_by_state_running_first_then_newest)
{
	struct jobtable t;
	char o[256];

	jt_init(&t);
	fill(&t);
	order(&t, o, sizeof(o));
	cr_assert_str_eq(o, "201 102 202 103 104 101 ");
	t.sort = JT_SORT_AGE;
	jt_rebuild(&t);
	order(&t, o, sizeof(o));
	cr_assert_str_eq(o, "202 201 104 103 102 101 ");
	t.sort = JT_SORT_NAME;
	jt_rebuild(&t);
	order(&t, o, sizeof(o));
	cr_assert_str_eq(o, "103 104 201 101 102 202 ");
	jt_free(&t);
}

Test(jobtable, grouped_by_cluster_with_headers_the_selection_skips)
{
	struct jobtable t;
	char o[256];

	jt_init(&t);
	fill(&t);
	t.group = 1;
	jt_rebuild(&t);
	order(&t, o, sizeof(o));
	cr_assert_str_eq(o, "- 201 202 - 102 103 104 101 ");
	cr_assert_str_eq(jt_selected(&t)->row->slurm_id, "201", "never on a header");
	jt_move(&t, 2);
	cr_assert_str_eq(jt_selected(&t)->row->slurm_id, "102", "over the header");
	jt_move(&t, -1);
	cr_assert_str_eq(jt_selected(&t)->row->slurm_id, "202");
	jt_free(&t);
}

Test(jobtable, the_filter_matches_any_column_and_the_selection_follows_its_job)
{
	struct jobtable t;
	char o[256];

	jt_init(&t);
	fill(&t);
	jt_move(&t, 3);	/* 103 */
	cr_assert_str_eq(jt_selected(&t)->row->slurm_id, "103");
	snprintf(t.filter, sizeof(t.filter), "PRIOR");	/* the reason column, any case */
	jt_rebuild(&t);
	order(&t, o, sizeof(o));
	cr_assert_str_eq(o, "103 ");
	snprintf(t.filter, sizeof(t.filter), "lab");		/* the cluster */
	jt_rebuild(&t);
	order(&t, o, sizeof(o));
	cr_assert_str_eq(o, "201 202 ");
	t.filter[0] = '\0';
	jt_rebuild(&t);
	cr_assert_str_eq(jt_selected(&t)->row->slurm_id, "201", "the job selected while filtered stays selected");
	snprintf(t.filter, sizeof(t.filter), "nothing-like-this");
	jt_rebuild(&t);
	cr_assert_eq(t.nlines, 0);
	cr_assert_null(jt_selected(&t));
	jt_free(&t);
}

Test(jobtable, finished_jobs_hide_and_come_back)
{
	struct jobtable t;
	char o[256];

	jt_init(&t);
	fill(&t);
	t.hide_finished = 1;
	jt_rebuild(&t);
	order(&t, o, sizeof(o));
	cr_assert_str_eq(o, "201 102 202 103 ");
	t.hide_finished = 0;
	jt_rebuild(&t);
	cr_assert_eq(t.nlines, 6);
	jt_free(&t);
}

Test(jobtable, marks_follow_jobs_across_polls_and_are_the_targets)
{
	struct jobtable t;
	const struct jt_entry **v;
	size_t n;

	jt_init(&t);
	fill(&t);
	n = jt_targets(&t, &v);
	cr_assert_eq(n, 1, "nothing marked: the selected job");
	cr_assert_str_eq(v[0]->row->slurm_id, "201");
	free(v);
	jt_toggle_mark(&t);		/* 201 */
	jt_move(&t, 2);
	jt_toggle_mark(&t);		/* 202 */
	fill(&t);			/* a new poll: same jobs, new rows */
	n = jt_targets(&t, &v);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(v[0]->row->slurm_id, "201");
	cr_assert_str_eq(v[1]->row->slurm_id, "202");
	free(v);
	jt_mark_all_shown(&t);
	n = jt_targets(&t, &v);
	cr_assert_eq(n, 6);
	free(v);
	jt_mark_all_shown(&t);		/* all marked: unmarks */
	cr_assert_eq(t.nmarks, 0);
	jt_free(&t);
}

Test(jobtable, selection_scrolls_within_the_window)
{
	struct jobtable t;

	jt_init(&t);
	fill(&t);
	jt_move(&t, 100);
	jt_scroll_to_selection(&t, 3);
	cr_assert_eq(t.sel, 5);
	cr_assert_eq(t.top, 3);
	jt_move(&t, -100);
	jt_scroll_to_selection(&t, 3);
	cr_assert_eq(t.top, 0);
	jt_free(&t);
}

/* With finished jobs hidden, how many the filter would show is counted:
 * the list says "N finished hidden", not "no jobs yet". */
Test(jobtable, finished_jobs_hidden_are_counted)
{
	struct jobtable t;

	jt_init(&t);
	fill(&t);
	cr_expect_eq(t.nhidden, 0, "none hidden yet");
	t.hide_finished = 1;
	jt_rebuild(&t);
	cr_expect_eq(t.nhidden, 2, "101 (Done) and 104 (Error)");
	snprintf(t.filter, sizeof(t.filter), "train");
	jt_rebuild(&t);
	cr_expect_eq(t.nhidden, 1, "train-a only: the filter counts too");
	cr_expect_eq(t.nlines, 1, "train-b alone is shown: %zu lines", t.nlines);
	jt_free(&t);
}

/* A panel that keeps a job's key (the detail view, the curves) finds its
 * row again after the next poll's rebuild, and nothing once it is gone. */
Test(jobtable, a_job_is_found_again_by_its_key)
{
	struct jobtable t;
	const struct jt_entry *e;
	char *key;

	jt_init(&t);
	fill(&t);
	jt_move(&t, 3);
	key = xstrdup(jt_selected(&t)->key);
	fill(&t);	/* the next poll */
	e = jt_by_key(&t, key);
	cr_assert_not_null(e);
	cr_expect_str_eq(e->row->slurm_id, "103");
	cr_expect_null(jt_by_key(&t, NULL));
	jt_begin(&t);
	jt_rebuild(&t);
	cr_expect_null(jt_by_key(&t, key), "gone from the rows");
	free(key);
	jt_free(&t);
}

/* A job array of the user's: its five tasks (three running, "120_[3-4]"
 * the pending rest as squeue shows them, a task shown alone) are one line
 * with their counts, its SLURM id the array's; e expands it (the tasks
 * under it, indented) and folds it again from a task; a filter, a
 * re-sort and a new poll keep it so. A taotop record is never taken for a
 * task, and an array listed with one task is that task's line. */
Test(jobtable, a_job_arrays_tasks_are_one_line_expanded_on_x)
{
	static struct job_row r[7];
	static const char *const shown[] = { "120_0", "120_1", "120_2", "120_[3-4]", "130",
		"140_7", "150_1" };
	static const enum tao_state st[] = { TAO_RUNNING, TAO_RUNNING, TAO_ERROR, TAO_PENDING,
		TAO_PENDING, TAO_RUNNING, TAO_DONE };
	struct jobtable t;
	char o[256];
	const struct jt_entry *e;

	for (int i = 0; i < 7; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		snprintf(r[i].shown_id, sizeof(r[i].shown_id), "%s", shown[i]);
		snprintf(r[i].slurm_id, sizeof(r[i].slurm_id), "%d", i == 5 ? 100 : 120 + i);
		r[i].name = (char *)(i < 4 ? "sweep" : "other");
		r[i].state = st[i];
		r[i].epoch = r[i].max_epoch = -1;
		r[i].gpus = 2;
	}
	r[6].record_id = (char *)"tao-20261205-aaaaaa";	/* taotop's: not a task */
	jt_init(&t);
	for (int poll = 0; poll < 2; poll++) {
		jt_begin(&t);
		for (int i = 0; i < 7; i++)
			jt_add(&t, 0, "rig", &r[i]);
		jt_rebuild(&t);
		order(&t, o, sizeof(o));
		if (poll == 0)
			cr_expect_str_eq(o, "120 100 124 126 ", "the array first (its newest "
			    "task runs), one line: %s", o);
		e = &t.entries[t.lines[0].entry];
		cr_expect_str_eq(e->row->shown_id, "120_[*]");
		cr_expect_str_eq(e->row->message,
		    "5 tasks: 2 Running 2 Pending 1 Error (e: expand)", "its tasks by state");
		cr_expect_eq(e->row->state, TAO_RUNNING);
		cr_expect_eq(e->row->gpus, 8);
	}
	jt_select_line(&t, 0);
	cr_assert(jt_toggle_array(&t));
	order(&t, o, sizeof(o));
	cr_expect_str_eq(o, "120 121 120 123 122 100 124 126 ", "its tasks under it: %s", o);
	cr_expect(t.lines[1].task && !t.lines[0].task);
	cr_expect_str_eq(jt_selected(&t)->row->shown_id, "120_[*]", "the selection stays on it");
	/* Expanded across a poll and a filter. */
	jt_begin(&t);
	for (int i = 0; i < 7; i++)
		jt_add(&t, 0, "rig", &r[i]);
	snprintf(t.filter, sizeof(t.filter), "sweep");
	jt_rebuild(&t);
	order(&t, o, sizeof(o));
	cr_expect_str_eq(o, "120 121 120 123 122 ", "%s", o);
	/* e on a task folds its array. */
	jt_move(&t, 2);
	cr_assert(jt_toggle_array(&t));
	order(&t, o, sizeof(o));
	cr_expect_str_eq(o, "120 ");
	t.filter[0] = '\0';
	jt_rebuild(&t);
	jt_select_line(&t, 1);	/* 100 (140_7): an array listed with one task */
	cr_expect(!jt_toggle_array(&t), "not an array");
	jt_free(&t);
}

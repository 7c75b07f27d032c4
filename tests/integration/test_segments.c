/*
 * A training longer than its wall, from the user's side: a bundle with a
 * short wall and a child timeout below it, submitted with `taotop submit`
 * and followed with `taotop status --json`, runs through the TAO stand-in
 * in several segments (the job requeues itself at its child timeout, TAO
 * resumes from its newest checkpoint) to Done, shown as one run.
 *
 * SLURM holds a requeued job back about two minutes (BeginTime, seen on
 * 22.05's rig); the test moves that start to now as the job's owner may
 * (scontrol update StartTime=now), so a run of three segments takes one
 * minute, not seven.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "integration/helper_user.h"
#include "util/file.h"
#include "util/xmalloc.h"

struct seen {
	int	 epoch[1024];
	size_t	 n;
	int	 requeued;	/* answers whose STATE said Requeued */
	int	 max_segments;	/* the most the row said */
	int	 refuse;	/* make the job's requeue refused once it runs */
	int	 cancel_in;	/* cancel the run once this segment runs (0: never) */
	int	 acted;
	int	 more;		/* the most segments still needed an answer said */
};

/* Each answer: the epochs TAO reported, the row's state and segments;
 * a requeued job's held start moved to now. */
static void each(const cJSON *o, void *arg)
{
	struct seen *s = arg;
	const cJSON *prog = cJSON_GetObjectItem(o, "progress");
	int segs = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "segments"));

	if (segs > s->max_segments)
		s->max_segments = segs;
	if (cJSON_GetObjectItem(o, "segments_more") != NULL &&
	    (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "segments_more")) > s->more)
		s->more = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "segments_more"));
	if (prog != NULL && strcmp(json_str(o, "state"), "Running") == 0 && s->n < 1024)
		s->epoch[s->n++] = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(prog, "epoch"));
	if (s->refuse && !s->acted && strcmp(json_str(o, "state"), "Running") == 0) {
		/* What a site that forbids requeues does: SLURM refuses it. */
		char *cmd = xasprintf("scontrol update JobId=%s Requeue=0", json_str(o, "slurm_id"));
		free(rig_ssh_ok(cmd));
		free(cmd);
		s->acted = 1;
	}
	if (s->cancel_in > 0 && !s->acted && strcmp(json_str(o, "state"), "Running") == 0 &&
	    segs >= s->cancel_in) {
		char *cmd = xasprintf("scancel %s", json_str(o, "slurm_id"));
		free(rig_ssh_ok(cmd));
		free(cmd);
		s->acted = 1;
	}
	if (strcmp(json_str(o, "shown_state"), "Requeued") == 0) {
		/* SLURM holds a requeued job ~2 min (BeginTime); the test
		 * brings its start to 5 s away, once (while it is further):
		 * started the very second the last run ended, SLURM 24.11
		 * failed the new batch step at once (exit 1, nothing run). */
		char *cmd = xasprintf("t=$(squeue -h -j %s -o %%S); s=$(date -d \"$t\" +%%s 2>/dev/null) && "
		    "[ $((s - $(date +%%s))) -gt 10 ] && scontrol update JobId=%s StartTime=now+5 2>&1; true",
		    json_str(o, "slurm_id"), json_str(o, "slurm_id"));
		s->requeued++;
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
}

/* A one-GPU TAO training of `epochs` epochs of 4 s, a wall of SLURM's
 * shortest and a child timeout of 18 s; its command counts the secret's
 * length into the job folder at each segment, then runs TAO as taotop
 * would (the resume key, when passed, as its last word). */
static char *bundle(struct user *u, int epochs, const char *extra)
{
	char *path = xasprintf("%s/segments.yaml", u->local);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fprintf(f, "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\ncommand: [sh, -c, 'printf %%s \"$HF_TOKEN\" | wc -c >> {job_dir}/seen-len; "
	    "exec classification_pyt train -e {spec} results_dir={results_dir} \"$@\"', tao]\n"
	    "datasets: [lustre://%s/datasets/imagenet/train]\ngpus: 1\ncpus_per_task: 1\n"
	    "time_hours: 0.0166\nchild_timeout_hours: 0.005\nsecrets: [HF_TOKEN]\n%s"
	    "spec:\n  train:\n    num_epochs: %d\n    seconds_per_epoch: 4\n", u->remote,
	    extra ? extra : "", epochs);
	fclose(f);
	return path;
}

Test(segments, a_long_training_runs_through_three_segments_to_done_as_one_run, .timeout = 420)
{
	struct user u;
	struct seen s;
	char *path, *id, *out = NULL, *printed, *lens, *envs, *cmd, *line, *save = NULL;
	char *listed = NULL, *tao_out = NULL;
	cJSON *st, *rec, *segs, *e, *jobs;
	int n = 0, k;

	memset(&s, 0, sizeof(s));
	user_open(&u, "segments", NULL);
	path = bundle(&u, 9, NULL);
	id = user_submit(&u, path, &out);
	st = user_wait_final_each(&u, id, 360, each, &s);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Done", "%s", printed);
	rec = cJSON_GetObjectItem(st, "record");
	segs = rec != NULL ? cJSON_GetObjectItem(rec, "segments") : NULL;
	cr_assert(cJSON_GetArraySize(segs) >= 3, "fewer than three segments:\n%s", printed);
	cr_expect_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItem(st, "segments")),
	    cJSON_GetArraySize(segs), "the row's count is the record's");
	tao_out = user_job_file(&u, id, "slurm-logs/*/main.out");
	cJSON_ArrayForEach(e, segs) {
		int last = n == cJSON_GetArraySize(segs) - 1;
		n++;
		cr_expect_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "segment")), n);
		cr_expect_str_eq(json_str(e, "outcome"), last ? "done" : "requeued", "segment %d:\n%s",
		    n, printed);
		cr_expect(n == 1 || strstr(json_str(e, "resumed_from"), "/model_epoch_") != NULL,
		    "segment %d resumed from no checkpoint:\n%s", n, printed);
		/* And TAO took it: its own line names the checkpoint the
		 * script chose (without the key TAO would resume from its
		 * *_latest.pth on its own, and the run would look the same). */
		if (n > 1) {
			char *want = xasprintf("Setting resume checkpoint to %s", json_str(e, "resumed_from"));
			cr_expect(strstr(tao_out, want) != NULL, "segment %d: TAO did not say '%s':\n%s",
			    n, want, tao_out);
			free(want);
		}
	}
	/* TAO's epochs never went back beyond the last checkpoint: what it
	 * reported only grew, across the segments. */
	for (k = 1; k < (int)s.n; k++)
		cr_expect(s.epoch[k] >= s.epoch[k - 1], "epoch %d after %d", s.epoch[k], s.epoch[k - 1]);
	cr_expect(s.requeued > 0, "the row never said Requeued between segments");
	/* 9 epochs of 4 s under an 18 s child timeout: while the first
	 * segment trained, more were said to be needed. */
	cr_expect(s.more >= 1, "no estimate of the segments still needed");
	cr_expect(user_history_says(st, "requeued"), "the history names no requeue:\n%s", printed);
	/* One run in the list, with its segments. */
	jobs = user_json_array(&u, "jobs --json", &listed);
	k = 0;
	cJSON_ArrayForEach(e, jobs)
		k += strcmp(json_str(e, "id"), id) == 0;
	cr_expect_eq(k, 1, "the run shows in %d rows", k);
	e = json_find(jobs, "id", id);
	cr_assert_not_null(e, "the run is not in the list");
	cr_expect_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "segments")), n);
	cJSON_Delete(jobs);
	free(listed);
	/* The monitor: one row for the run, Done, its segments counted. */
	{
		struct screen sc;
		struct screen_opts so = { .cols = 200, .lines = 30, .env = u.env };
		char *row, *seg = xasprintf("seg%d", n);
		screen_open(&sc, "segments", &so);
		screen_wait_line(&sc, 30, id, "Done", seg, NULL);
		row = screen_line_with(&sc, id);
		cr_expect(row != NULL && strstr(row, seg) != NULL, "the row: %s", row ? row : "none");
		free(row), free(seg);
		screen_close(&sc);
	}
	/* Every segment's job saw the secret, and its sidecar is gone. */
	lens = user_job_file(&u, id, "seen-len");
	k = 0;
	for (line = strtok_r(lens, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		cr_expect_eq(atoi(line), (int)strlen(USER_TOKEN), "a segment saw '%s'", line);
		k++;
	}
	cr_expect_eq(k, n, "%d segments, %d saw the secret", n, k);
	/* The job's folder must be there (rig_ssh_ok fails otherwise): an
	 * empty answer from a wrong path would pass. */
	cmd = xasprintf("cd %s/jobs/%s && find . -name '*.env'", u.remote, id);
	envs = rig_ssh_ok(cmd);
	cr_expect_str_eq(envs, "", "the sidecar is left: %s", envs);
	free(cmd), free(envs), free(lens);
	free(printed), free(out), free(id), free(path), free(tao_out);
	cJSON_Delete(st);
	user_close(&u);
}

/* A resume that makes no progress (TAO stuck at its third epoch each time):
 * the second segment ends with no new checkpoint, and the run stops there
 * with that said, not retried. */
Test(segments, a_resume_that_makes_no_progress_stops_at_the_second_segment, .timeout = 300)
{
	struct user u;
	struct seen s;
	char *path, *id, *out = NULL, *printed;
	cJSON *st, *rec, *segs;

	memset(&s, 0, sizeof(s));
	user_open(&u, "noprogress", NULL);
	path = bundle(&u, 9, NULL);
	/* The stand-in's stuck_at_epoch: a data loader that never returns. */
	{
		char *err = NULL, *text = file_read_all(path, NULL, &err), *at;
		cr_assert_not_null(text, "%s", err);
		at = strstr(text, "    seconds_per_epoch");
		FILE *f = fopen(path, "w");
		fprintf(f, "%.*s    stuck_at_epoch: 3\n%s", (int)(at - text), text, at);
		fclose(f);
		free(text);
	}
	id = user_submit(&u, path, &out);
	st = user_wait_final_each(&u, id, 240, each, &s);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Error", "%s", printed);
	cr_expect(strstr(json_str(st, "message"), "segment 2 made no progress") != NULL, "%s", printed);
	rec = cJSON_GetObjectItem(st, "record");
	segs = rec != NULL ? cJSON_GetObjectItem(rec, "segments") : NULL;
	cr_expect_eq(cJSON_GetArraySize(segs), 2, "%s", printed);
	cr_expect(!user_history_says(st, "retried as"), "a stopped run was retried:\n%s", printed);
	free(printed), free(out), free(id), free(path);
	cJSON_Delete(st);
	user_close(&u);
}

/* --no-requeue: at its child timeout the job ends Error, the timeout named. */
Test(segments, a_no_requeue_run_at_its_child_timeout_ends_in_error_saying_so, .timeout = 300)
{
	struct user u;
	struct seen s;
	char *path, *id, *out = NULL, *printed;
	cJSON *st;

	memset(&s, 0, sizeof(s));
	user_open(&u, "norequeue", NULL);
	path = bundle(&u, 9, "requeue: false\n");
	id = user_submit(&u, path, &out);
	st = user_wait_final_each(&u, id, 240, each, &s);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Error", "%s", printed);
	cr_expect(strstr(json_str(st, "message"), "child timeout (18s)") != NULL, "%s", printed);
	cr_expect_eq(s.requeued, 0, "a --no-requeue job was requeued");
	free(printed), free(out), free(id), free(path);
	cJSON_Delete(st);
	user_close(&u);
}

/* The same run cancelled in its second segment stays cancelled: its
 * script does not requeue a job SLURM signalled. */
Test(segments, a_run_cancelled_in_its_second_segment_stays_cancelled, .timeout = 300)
{
	struct user u;
	struct seen s;
	char *path, *id, *out = NULL, *printed, *cmd, *after;
	cJSON *st;

	memset(&s, 0, sizeof(s));
	s.cancel_in = 2;
	user_open(&u, "cancelled", NULL);
	path = bundle(&u, 30, NULL);
	id = user_submit(&u, path, &out);
	st = user_wait_final_each(&u, id, 240, each, &s);
	printed = cJSON_Print(st);
	cr_expect_eq(s.acted, 1, "the second segment never ran:\n%s", printed);
	cr_expect_str_eq(json_str(st, "state"), "Canceled", "%s", printed);
	/* Still so a while later: nothing requeued it. The queue query must
	 * answer (rig_ssh_ok), and the id be one. */
	cr_assert(json_str(st, "slurm_id")[0] != '\0', "%s", printed);
	cmd = xasprintf("sleep 25; squeue -h --me -t PD,R,CG,S,CF -o %%i | grep -cx %s; [ $? -le 1 ]",
	    json_str(st, "slurm_id"));
	after = rig_ssh_ok(cmd);
	cr_expect_str_eq(after, "0", "the cancelled job is back in the queue: %s", after);
	free(cmd), free(after);
	free(printed), free(out), free(id), free(path);
	cJSON_Delete(st);
	user_close(&u);
}

/* SLURM refuses the requeue (the job made non-requeueable, as a site that
 * forbids requeues makes it): the run goes on as a linked record from what
 * was staged, resuming from its checkpoint, to Done. */
Test(segments, a_refused_requeue_continues_as_a_linked_record, .timeout = 420)
{
	struct user u;
	struct seen s;
	char *path, *id, *out = NULL, *printed, *next, *printed2;
	cJSON *st, *st2, *rec, *segs, *first;

	memset(&s, 0, sizeof(s));
	s.refuse = 1;
	user_open(&u, "refused", NULL);
	path = bundle(&u, 9, NULL);
	id = user_submit(&u, path, &out);
	st = user_wait_final_each(&u, id, 240, each, &s);
	printed = cJSON_Print(st);
	cr_expect_str_eq(json_str(st, "state"), "Error", "%s", printed);
	cr_expect(strstr(json_str(st, "message"), "SLURM refused the requeue") != NULL, "%s", printed);
	rec = cJSON_GetObjectItem(st, "record");
	/* The poll that saw it end continued it. */
	if (strcmp(json_str(rec, "retried_as"), "") == 0) {
		cJSON_Delete(st);
		st = user_wait_final(&u, id, 30);
		rec = cJSON_GetObjectItem(st, "record");
	}
	next = xstrdup(json_str(rec, "retried_as"));
	cr_assert_neq(next[0], '\0', "not continued:\n%s", printed);
	memset(&s, 0, sizeof(s));
	st2 = user_wait_final_each(&u, next, 300, each, &s);
	printed2 = cJSON_Print(st2);
	cr_expect_str_eq(json_str(st2, "state"), "Done", "%s", printed2);
	cr_expect_str_eq(json_str(cJSON_GetObjectItem(st2, "record"), "retry_of"), id);
	segs = cJSON_GetObjectItem(cJSON_GetObjectItem(st2, "record"), "segments");
	first = cJSON_GetArrayItem(segs, 0);
	cr_assert_not_null(first, "%s", printed2);
	cr_expect_eq((int)cJSON_GetNumberValue(cJSON_GetObjectItem(first, "segment")), 2,
	    "the continuation counts on:\n%s", printed2);
	cr_expect(strstr(json_str(first, "resumed_from"), "/model_epoch_") != NULL,
	    "the continuation did not resume:\n%s", printed2);
	free(printed), free(printed2), free(next), free(out), free(id), free(path);
	cJSON_Delete(st);
	cJSON_Delete(st2);
	user_close(&u);
}

/* --dry-run shows the plan: the wall, the child timeout, the epochs TAO
 * must run and how the segments needed are estimated. */
Test(segments, the_dry_run_shows_the_wall_and_its_segments, .timeout = 120)
{
	struct user u;
	char *path, *args, *out = NULL;

	user_open(&u, "segplan", NULL);
	path = bundle(&u, 9, "max_segments: 7\n");
	args = xasprintf("submit %s --dry-run", path);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "# the wall and its segments\n  wall 0:01:00; the training step runs "
	    "under a child timeout of 18s") != NULL, "%s", out);
	cr_expect(strstr(out, "train.resume_training_checkpoint_path), up to 7 segments") != NULL,
	    "%s", out);
	cr_expect(strstr(out, "epochs TAO must run: 9") != NULL, "%s", out);
	cr_expect(strstr(out, "TAOTOP_CHILD_TIMEOUT_S=18\n") != NULL, "the script's setting:\n%s", out);
	free(args), free(out), free(path);
	user_close(&u);
}

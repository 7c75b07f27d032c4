/* The segments' shell text as the templates carry it (between their
 * "taotop-segments begin/end" lines), run as it is under bash and dash on
 * folders shaped like TAO's: which checkpoint a segment resumes from, and
 * what a segment's end does (requeue, or stop and say why). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/xmalloc.h"

#include "unit/shells.h"

static char *lib_of(const char *name)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *path = xasprintf("%s/templates/%s", share ? share : ".", name), *err = NULL;
	char *text = file_read_all(path, NULL, &err), *b, *e, *out;

	cr_assert_not_null(text, "%s", err);
	b = strstr(text, "# taotop-segments begin");
	e = strstr(text, "# taotop-segments end");
	cr_assert(b != NULL && e != NULL && e > b, "%s has no segments block", path);
	out = xstrndup(b, (size_t)(e - b));
	free(text), free(path);
	return out;
}

static char dir[64];
static char libpath[96];

static void setup(void)
{
	char *lib = lib_of("singlenode.sbatch.tmpl");
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/taotop-seg.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(libpath, sizeof(libpath), "%s/lib.sh", dir);
	f = fopen(libpath, "w");
	cr_assert_not_null(f);
	fputs(lib, f);
	fclose(f);
	free(lib);
}

static void teardown(void)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
	free(cmd);
}

/* Run body after the lib under shell, in dir; its stdout (trimmed), and
 * its exit code in *rc. */
static char *run(const char *shell, const char *body, int *rc)
{
	char *script = xasprintf("%s/t.sh", dir), *cmd, buf[4096];
	FILE *f = fopen(script, "w"), *p;
	size_t n;

	cr_assert_not_null(f);
	fprintf(f, "cd '%s' || exit 99\nPATH='%s/bin':$PATH\n. '%s'\n%s\n", dir, dir, libpath, body);
	fclose(f);
	cmd = xasprintf("%s '%s' 2>/dev/null", shell, script);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	*rc = WEXITSTATUS(pclose(p));
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	free(script), free(cmd);
	return xstrdup(buf);
}

/* Shell lines, each run in dir (files made, times set). */
static void sh(const char *lines)
{
	char *cmd = xasprintf("cd '%s' && %s", dir, lines);
	cr_assert_eq(system(cmd), 0, "%s", lines);
	free(cmd);
}


/* What body prints under each shell: want, or a failure naming what. */
static void expect_each_shell(const char *body, const char *want, const char *what)
{
	size_t i;
	for (i = 0; i < 2; i++) {
		char *got;
		int rc;
		if (!have(shells[i]))
			continue;
		got = run(shells[i], body, &rc);
		cr_expect_str_eq(got, want, "%s: %s gave '%s', want '%s'", shells[i], what, got, want);
		free(got);
	}
}

/* The checkpoint each shell picks below root (its path, relative to dir). */
static void expect_pick(const char *root, const char *want)
{
	char *body = xasprintf("p=$(taotop_ckpt_newest '%s'); printf '%%s' \"${p#* }\"", root);
	char *what = xasprintf("the pick below %s", root);

	expect_each_shell(body, want, what);
	free(body), free(what);
}

TestSuite(segments, .init = setup, .fini = teardown);

Test(segments, both_templates_carry_the_same_text)
{
	char *a = lib_of("singlenode.sbatch.tmpl"), *b = lib_of("multinode.sbatch.tmpl");
	cr_expect_str_eq(a, b, "the multi-node template's segments differ from the single-node one's");
	free(a), free(b);
}

/* classification_pyt's names, Lightning's *_latest.pth link to the newest. */
Test(segments, the_newest_epoch_wins_over_the_latest_link)
{
	sh("mkdir -p r/train && cd r/train && for e in 000 001 002; do echo x > model_epoch_$e.pth; done && "
	    "touch -d '2026-01-01 10:00' model_epoch_000.pth && touch -d '2026-01-01 10:01' model_epoch_001.pth && "
	    "touch -d '2026-01-01 10:02' model_epoch_002.pth && ln -s model_epoch_002.pth model_latest.pth && "
	    "echo x > status.json");
	expect_pick("r", "r/train/model_epoch_002.pth");
}

/* dino's and segformer's names carry the step; .ckpt (for a bundle's
 * own key) and .tlt count, other weights (.pt, .onnx) do not. */
Test(segments, two_networks_names_and_the_three_kinds)
{
	sh("mkdir -p r/train && cd r/train && echo x > model_epoch_003_step_00400.pth && "
	    "echo x > model_epoch_004_step_00500.pth && echo x > later.onnx && echo x > later.pt && "
	    "touch -d '2026-01-01 10:00' model_epoch_003_step_00400.pth && "
	    "touch -d '2026-01-01 10:01' model_epoch_004_step_00500.pth && "
	    "touch -d '2026-01-01 11:00' later.onnx later.pt");
	expect_pick("r", "r/train/model_epoch_004_step_00500.pth");
	sh("echo x > r/train/tf.tlt && touch -d '2026-01-01 10:05' r/train/tf.tlt");
	expect_pick("r", "r/train/tf.tlt");
	sh("echo x > r/train/l.ckpt && touch -d '2026-01-01 10:06' r/train/l.ckpt");
	expect_pick("r", "r/train/l.ckpt");
	/* For TAO's own key a .ckpt is never picked: TAO refuses it there
	 * ("Resume checkpoint has an invalid file format; it must be either
	 * a .tlt or a .pth"). */
	for (size_t i = 0; i < 2; i++) {
		char *got;
		int rc;
		if (!have(shells[i]))
			continue;
		got = run(shells[i], "TAOTOP_RESUME_KEY=train.resume_training_checkpoint_path; "
		    "p=$(taotop_ckpt_newest r); printf '%s' \"${p#* }\"", &rc);
		cr_expect_str_eq(got, "r/train/tf.tlt", "%s, TAO's key", shells[i]);
		free(got);
	}
}

/* An empty file (a write cut short) is no checkpoint; nor is a link to
 * nothing. */
Test(segments, empty_files_and_dangling_links_are_skipped)
{
	sh("mkdir -p r/train && cd r/train && echo x > model_epoch_000.pth && : > model_epoch_001.pth && "
	    "ln -s gone.pth model_epoch_002.pth && touch -d '2026-01-01 10:00' model_epoch_000.pth");
	expect_pick("r", "r/train/model_epoch_000.pth");
}

/* Pretrained weights and staged inputs are never training state, however
 * new. */
Test(segments, pretrained_weights_and_inputs_are_never_picked)
{
	sh("mkdir -p r/ptm r/inputs/x r/train && echo x > r/ptm/resnet50.pth && echo x > r/inputs/x/w.tlt");
	expect_pick("r", "");
	sh("echo x > r/train/model_epoch_000.pth && touch -d '2026-01-01 10:00' r/train/model_epoch_000.pth");
	expect_pick("r", "r/train/model_epoch_000.pth");
}

/* best and latest names only when nothing else is there. */
Test(segments, best_and_latest_only_when_nothing_else)
{
	sh("mkdir -p r/train && echo x > r/train/best_model.pth");
	expect_pick("r", "r/train/best_model.pth");
	sh("echo x > r/train/classification_model_latest.pth && "
	    "touch -d '2026-01-01 10:00' r/train/best_model.pth");
	expect_pick("r", "r/train/classification_model_latest.pth");
	sh("echo x > r/train/model_epoch_000.pth && touch -d '2025-01-01 10:00' r/train/model_epoch_000.pth");
	expect_pick("r", "r/train/model_epoch_000.pth");
}

/* ---- a segment's start and end ------------------------------------------------------------ */

#define VARS "TAOTOP_REQUEUE=%d TAOTOP_CHILD_TIMEOUT_S=30 TAOTOP_MAX_SEGMENTS=%d " \
	"TAOTOP_CKPT_ROOT=r TAOTOP_RESUME_KEY=train.resume_training_checkpoint_path " \
	"TAOTOP_RESUME_FIRST=0 TAOTOP_SEGMENTS_FILE=seg.jsonl SLURM_JOB_ID=7 " \
	"taotop_signalled=%s taotop_again=\n"

/* A retry's segment: its own folder "own", resuming from FROM's. */
#define VARS_RETRY(from) "TAOTOP_REQUEUE=1 TAOTOP_CHILD_TIMEOUT_S=60 TAOTOP_MAX_SEGMENTS=9 " \
	"TAOTOP_CKPT_ROOT=own TAOTOP_RESUME_KEY=train.resume_training_checkpoint_path " \
	"TAOTOP_RESUME_FIRST=0 TAOTOP_SEGMENTS_FILE=seg.jsonl SLURM_JOB_ID=7 " \
	"TAOTOP_RESUME_FROM=" from "\n"

/* A fake scontrol: logs its words, refuses when ./refuse exists. */
static void fake_scontrol(void)
{
	sh("mkdir -p bin r/train && printf '#!/bin/sh\\necho \"$@\" >> scontrol.log\\n"
	    "[ -e refuse ] && { echo \"Requeue of JobId=7 denied: MaxBatchRequeue\" >&2; exit 1; }\\n"
	    "exit 0\\n' > bin/scontrol && chmod +x bin/scontrol");
}

/* Start segment (SLURM_RESTART_COUNT restarts), the step "writes" a
 * checkpoint when new is set, then ends with rc; prints what the end
 * returned, whether the sidecar stays, and the resume picked. */
static char *segment(const char *shell, int requeue, int max, const char *signalled,
    int restarts, int new_ckpt, int rc_step, int *rc)
{
	char *body = xasprintf(VARS "SLURM_RESTART_COUNT=%d\ntaotop_segment_start >/dev/null\n"
	    "%s\ntaotop_rc=%d\ntaotop_segment_end $taotop_rc >/dev/null; r=$?\n"
	    "printf '%%s again=%%s resume=%%s' $r \"$taotop_again\" \"$TAOTOP_RESUME\"",
	    requeue, max, signalled, restarts,
	    new_ckpt ? "sleep 1; echo y > r/train/model_epoch_009.pth" : ":", rc_step);
	char *out = run(shell, body, rc);
	free(body);
	return out;
}

static char *last_line(const char *file)
{
	char *path = xasprintf("%s/%s", dir, file), *err = NULL;
	char *t = file_read_all(path, NULL, &err), *l;
	size_t n;

	free(path);
	if (t == NULL) {
		free(err);
		return xstrdup("");
	}
	n = strlen(t);
	while (n > 0 && t[n - 1] == '\n')
		t[--n] = '\0';
	l = strrchr(t, '\n');
	l = xstrdup(l ? l + 1 : t);
	free(t);
	return l;
}

Test(segments, the_timeout_requeues_a_segment_that_made_progress)
{
	size_t i;
	for (i = 0; i < 2; i++) {
		char *out, *line;
		int rc;
		if (!have(shells[i]))
			continue;
		sh("rm -rf r bin seg.jsonl scontrol.log refuse");
		fake_scontrol();
		sh("echo x > r/train/model_epoch_004.pth && touch -d '2026-01-01 10:00' r/train/model_epoch_004.pth");
		out = segment(shells[i], 1, 20, "", 1, 1, 124, &rc);
		cr_expect_str_eq(out, "0 again=1 resume=r/train/model_epoch_004.pth",
		    "%s: segment 2 resumes from epoch 4, exits 0 after its requeue, keeps the sidecar",
		    shells[i]);
		line = last_line("scontrol.log");
		cr_expect_str_eq(line, "requeue 7", "%s", shells[i]);
		free(line);
		line = last_line("seg.jsonl");
		cr_expect(strstr(line, "\"event\":\"end\",\"segment\":2,") != NULL &&
		    strstr(line, "\"outcome\":\"requeued\"") != NULL &&
		    strstr(line, "\"checkpoint\":\"r/train/model_epoch_009.pth\"") != NULL, "%s: %s",
		    shells[i], line);
		free(line), free(out);
	}
}

Test(segments, no_new_checkpoint_stops_the_run)
{
	char *out, *line;
	int rc;

	fake_scontrol();
	sh("echo x > r/train/model_epoch_004.pth");
	out = segment("sh", 1, 20, "", 1, 0, 124, &rc);
	cr_expect_str_eq(out, "124 again= resume=r/train/model_epoch_004.pth");
	line = last_line("seg.jsonl");
	cr_expect(strstr(line, "\"outcome\":\"no_progress\"") != NULL &&
	    strstr(line, "segment 2 made no progress") != NULL, "%s", line);
	cr_expect_eq(access("scontrol.log", F_OK), -1, "no requeue was asked");
	free(line), free(out);
}

/* A resume that did not take (TAO started over from epoch 0) writes its
 * checkpoints again under names that were there: newer files, no progress.
 * Before, the newest file's time made it progress, and the run looped to
 * its segment limit. Under both shells. */
Test(segments, a_resume_that_started_over_is_no_progress)
{
	size_t i;
	for (i = 0; i < 2; i++) {
		char *out, *line, *body;
		int rc;
		if (!have(shells[i]))
			continue;
		sh("rm -rf r bin seg.jsonl scontrol.log refuse");
		fake_scontrol();
		sh("for e in 000 001 002 003 004; do echo x > r/train/model_epoch_$e.pth; "
		    "touch -d \"2026-01-01 10:0${e#00}\" r/train/model_epoch_$e.pth; done");
		body = xasprintf(VARS "SLURM_RESTART_COUNT=1\ntaotop_segment_start >/dev/null\n"
		    "sleep 1; echo y > r/train/model_epoch_000.pth; echo y > r/train/model_epoch_001.pth\n"
		    "taotop_segment_end 124 >/dev/null; r=$?\nprintf '%%s again=%%s' $r \"$taotop_again\"",
		    1, 20, "");
		out = run(shells[i], body, &rc);
		free(body);
		cr_expect_str_eq(out, "124 again=", "%s: not requeued", shells[i]);
		line = last_line("seg.jsonl");
		cr_expect(strstr(line, "\"outcome\":\"no_progress\"") != NULL, "%s: %s", shells[i], line);
		cr_expect_eq(access("scontrol.log", F_OK), -1, "%s: no requeue was asked", shells[i]);
		free(line), free(out);
	}
}

Test(segments, the_segment_limit_stops_the_run)
{
	char *out, *line;
	int rc;

	fake_scontrol();
	out = segment("sh", 1, 3, "", 2, 1, 124, &rc);
	cr_expect_str_eq(out, "124 again= resume=");
	line = last_line("seg.jsonl");
	cr_expect(strstr(line, "\"outcome\":\"limit\"") != NULL &&
	    strstr(line, "segment limit (3)") != NULL, "%s", line);
	free(line), free(out);
}

Test(segments, a_no_requeue_job_ends_at_its_timeout)
{
	char *out, *line;
	int rc;

	fake_scontrol();
	out = segment("sh", 0, 20, "", 0, 1, 124, &rc);
	cr_expect_str_eq(out, "124 again= resume=", "the first segment resumes from nothing");
	line = last_line("seg.jsonl");
	cr_expect(strstr(line, "\"outcome\":\"timeout\"") != NULL &&
	    strstr(line, "child timeout (30s)") != NULL, "%s", line);
	free(line), free(out);
}

Test(segments, failures_and_signals_never_requeue)
{
	char *out;
	int rc;

	fake_scontrol();
	out = segment("sh", 1, 20, "", 0, 1, 1, &rc);
	cr_expect_str_eq(out, "1 again= resume=", "a failure keeps its exit code");
	free(out);
	out = segment("sh", 1, 20, "1", 0, 1, 124, &rc);
	cr_expect_str_eq(out, "124 again= resume=", "a signalled job (scancel) is not requeued");
	free(out);
	out = segment("sh", 1, 20, "", 0, 1, 0, &rc);
	cr_expect_str_eq(out, "0 again= resume=", "done");
	free(out);
	cr_expect_eq(access("scontrol.log", F_OK), -1, "no requeue was asked");
}

Test(segments, a_refused_requeue_is_said)
{
	char *out, *line;
	int rc;

	fake_scontrol();
	sh("touch refuse");
	out = segment("sh", 1, 20, "", 0, 1, 124, &rc);
	cr_expect_str_eq(out, "124 again= resume=", "the sidecar goes, the job ends 124");
	line = last_line("seg.jsonl");
	cr_expect(strstr(line, "\"outcome\":\"refused\"") != NULL &&
	    strstr(line, "MaxBatchRequeue") != NULL, "%s", line);
	free(line), free(out);
}

Test(segments, tao_auto_resume_0_turns_the_resume_off)
{
	char *out;
	int rc;

	fake_scontrol();
	sh("echo x > r/train/model_epoch_004.pth");
	out = run("sh", "TAO_AUTO_RESUME=0 TAOTOP_CKPT_ROOT=r TAOTOP_RESUME_KEY=k TAOTOP_RESUME_FIRST=0 "
	    "TAOTOP_MAX_SEGMENTS=9 TAOTOP_SEGMENTS_FILE=seg.jsonl SLURM_RESTART_COUNT=3\n"
	    "taotop_segment_start >/dev/null; printf '%s' \"[$TAOTOP_RESUME]\"", &rc);
	cr_expect_str_eq(out, "[]");
	free(out);
}

/* ---- a retry's own results folder ------------------------------------------------------- */

/* What taotop_moved makes of word, the staged folder /x/r moved to /y/n/results. */
static void expect_moved(const char *word, const char *want)
{
	char *body = xasprintf("TAOTOP_RESULTS_WAS=/x/r TAOTOP_RESULTS_DIR=/y/n/results\n"
	    "printf '[%%s]' \"$(taotop_moved '%s')\"", word);
	char *w = xasprintf("[%s]", want), *what = xasprintf("moving '%s'", word);

	expect_each_shell(body, w, what);
	free(body), free(w), free(what);
}

Test(segments, a_retry_names_its_own_folder_where_the_staged_one_stood)
{
	expect_moved("results_dir=/x/r", "results_dir=/y/n/results");
	expect_moved("/x/r", "/y/n/results");
	expect_moved("/x/r/train/model_epoch_004.pth", "/y/n/results/train/model_epoch_004.pth");
	expect_moved("if [ -e /x/r/m ]; then echo \"/x/r\"; fi",
	    "if [ -e /y/n/results/m ]; then echo \"/y/n/results\"; fi");
	/* Not the folder: another whose name starts or ends the same. */
	expect_moved("/x/r1/train", "/x/r1/train");
	expect_moved("/a/x/r", "/a/x/r");
	expect_moved("-e", "-e");
	expect_moved("/x/job/specs/spec.yaml", "/x/job/specs/spec.yaml");
}

/* The retry's paths file beside the job: its results folder replaces the
 * staged one (the checkpoint root with it), is made, and mounted with
 * the folder it resumes from when the staged mounts hold neither. */
Test(segments, a_retry_reads_its_paths_file_and_a_first_run_has_none)
{
	size_t i;

	sh("mkdir -p job/retries && printf 'results_dir=%s/new\\nresume_from=%s/prev\\n' \"$PWD\" "
	    "\"$PWD\" > job/retries/tao-2.paths");
	for (i = 0; i < 2; i++) {
		char *body, *out, *want;
		int rc;
		if (!have(shells[i]))
			continue;
		sh("rm -rf new");
		body = xasprintf("TAOTOP_JOB_DIR=%s/job TAOTOP_RESULTS_DIR=%s/old "
		    "TAOTOP_CKPT_ROOT=%s/old/train SLURM_JOB_NAME=tao-2\ntaotop_retry_setup >/dev/null\n"
		    "[ -d new ] && printf '%%s|%%s|%%s|%%s|%%s' \"$TAOTOP_RESULTS_DIR\" "
		    "\"$TAOTOP_CKPT_ROOT\" \"$TAOTOP_RESULTS_WAS\" \"$TAOTOP_RESUME_FROM\" "
		    "\"$TAOTOP_MOUNTS_MORE\"", dir, dir, dir);
		out = run(shells[i], body, &rc);
		want = xasprintf("%s/new|%s/new/train|%s/old|%s/prev|,%s/new:%s/new,%s/prev:%s/prev",
		    dir, dir, dir, dir, dir, dir, dir, dir);
		cr_expect_str_eq(out, want, "%s", shells[i]);
		free(body), free(out), free(want);
		/* The first run (its own name has no file): nothing changes. */
		body = xasprintf("TAOTOP_JOB_DIR=%s/job TAOTOP_RESULTS_DIR=%s/old "
		    "TAOTOP_CKPT_ROOT=%s/old SLURM_JOB_NAME=tao-1\ntaotop_retry_setup\n"
		    "printf '%%s|%%s|%%s|%%s' \"$TAOTOP_RESULTS_DIR\" \"$TAOTOP_RESULTS_WAS\" "
		    "\"$TAOTOP_RESUME_FROM\" \"$TAOTOP_MOUNTS_MORE\"", dir, dir, dir);
		out = run(shells[i], body, &rc);
		want = xasprintf("%s/old|||", dir);
		cr_expect_str_eq(out, want, "%s", shells[i]);
		free(body), free(out), free(want);
	}
}

/* A retry's first segment: its own folder holds nothing yet, so the
 * newest checkpoint of the run it retries (by the same rule); none there:
 * from the start, said. Once its own folder has one, that one. */
Test(segments, a_retry_resumes_from_the_run_it_retries_or_says_it_starts_over)
{
	size_t i;

	fake_scontrol();
	sh("mkdir -p prev/train own empty && echo x > prev/train/model_epoch_003.pth && "
	    "echo x > prev/train/model_epoch_004.pth && touch -d '1 min ago' prev/train/model_epoch_003.pth && "
	    "ln -s model_epoch_003.pth prev/train/classifier_model_latest.pth");
	for (i = 0; i < 2; i++) {
		char *out;
		int rc;
		if (!have(shells[i]))
			continue;
		out = run(shells[i], VARS_RETRY("prev") "taotop_segment_start\n"
		    "printf '[%s]' \"$TAOTOP_RESUME\"", &rc);
		cr_expect(strstr(out, "taotop: a retry: resuming from prev/train/model_epoch_004.pth "
		    "(the newest checkpoint of the run it retries, in prev)") != NULL, "%s: %s",
		    shells[i], out);
		cr_expect(strstr(out, "[prev/train/model_epoch_004.pth]") != NULL, "%s: %s", shells[i],
		    out);
		free(out);
		out = run(shells[i], VARS_RETRY("empty") "taotop_segment_start\n"
		    "printf '[%s]' \"$TAOTOP_RESUME\"", &rc);
		cr_expect(strstr(out, "taotop: a retry: starting from the start (no checkpoint in "
		    "empty, the run it retries, nor in own)") != NULL, "%s: %s", shells[i], out);
		cr_expect(strstr(out, "[]") != NULL, "%s: %s", shells[i], out);
		free(out);
		sh("mkdir -p own/train && echo z > own/train/model_epoch_006.pth");
		out = run(shells[i], VARS_RETRY("prev") "SLURM_RESTART_COUNT=1\ntaotop_segment_start "
		    ">/dev/null\nprintf '[%s]' \"$TAOTOP_RESUME\"", &rc);
		cr_expect_str_eq(out, "[own/train/model_epoch_006.pth]", "%s", shells[i]);
		free(out);
		sh("rm -rf own/train");
	}
}

/* ---- the segments file as taotop reads it ------------------------------------------------- */

#include "engine/store/record.h"
#include "engine/track/segments.h"

Test(segfile, lines_become_segments_and_a_requeue_is_told)
{
	struct job_record *r = record_new("tao-1");
	const char *text =
	    "{\"event\":\"start\",\"segment\":1,\"at\":100,\"outcome\":\"\",\"rc\":0,\"checkpoint\":\"\",\"message\":\"\"}\n"
	    "{\"event\":\"end\",\"segment\":1,\"at\":200,\"outcome\":\"requeued\",\"rc\":124,"
	    "\"checkpoint\":\"/r/train/model_epoch_004.pth\",\"message\":\"\"}\n"
	    "{\"event\":\"start\",\"segment\":2,\"at\":330,\"outcome\":\"\",\"rc\":0,"
	    "\"checkpoint\":\"/r/train/model_epoch_004.pth\",\"message\":\"\"}\n"
	    "{\"event\":\"end\",\"segment\":2,\"at\":4"; /* being written */
	char *told = NULL, *json;

	cr_assert_eq(segments_merge(r, text, strlen(text), 4, &told), 1);
	cr_assert_eq(r->nseg, 2);
	cr_expect_str_eq(r->seg[0].outcome, "requeued");
	cr_expect_eq(r->seg[0].epoch_end, 4);
	cr_expect_eq(r->seg[1].epoch_start, 4);
	cr_expect_str_eq(r->seg[1].resumed_from, "/r/train/model_epoch_004.pth");
	cr_expect_str_eq(r->seg[1].outcome, "", "its end line is not whole yet");
	cr_expect(strstr(told, "segment 1 reached its child timeout") != NULL &&
	    strstr(told, "segment 2 started, resuming from /r/train/model_epoch_004.pth") != NULL,
	    "%s", told);
	free(told);
	cr_expect_eq(segments_merge(r, text, strlen(text), 4, &told), 0, "read again: nothing new");
	cr_expect_null(told);
	cr_expect(record_requeued(r) == 0, "segment 2 runs");
	/* Kept in the record's JSON and read back. */
	json = record_to_json(r);
	record_free(r);
	r = record_from_json(json, &told);
	cr_assert_not_null(r, "%s", told);
	cr_expect_eq(r->nseg, 2);
	cr_expect_eq(r->seg[1].start, 330);
	free(json);
	record_free(r);
}

Test(segfile, what_the_job_wrote_is_sanitised_and_odd_lines_are_skipped)
{
	struct job_record *r = record_new("tao-1");
	const char *text =
	    "not json\n"
	    "{\"event\":\"end\",\"segment\":-3,\"at\":1,\"outcome\":\"done\"}\n"
	    "{\"event\":\"end\",\"segment\":1,\"at\":1,\"outcome\":\"rm -rf\"}\n"
	    "{\"event\":\"end\",\"segment\":9,\"at\":1,\"outcome\":\"rm -rf\"}\n"
	    "{\"event\":\"end\",\"segment\":1,\"at\":200,\"outcome\":\"no_progress\",\"rc\":124,"
	    "\"checkpoint\":\"\",\"message\":\"segment 1 \\u001b]0;owned\\u0007made no progress\"}\n";
	char *told = NULL;

	cr_assert_eq(segments_merge(r, text, strlen(text), -1, &told), 1);
	cr_assert_eq(r->nseg, 1);
	cr_expect_str_eq(r->seg[0].outcome, "no_progress");
	cr_expect(strchr(r->seg[0].message, '\x1b') == NULL && strchr(r->seg[0].message, '\a') == NULL,
	    "a control byte kept: %s", r->seg[0].message);
	cr_expect_str_eq(segments_stopped(r), r->seg[0].message);
	free(told);
	record_free(r);
}

#include "engine/store/recindex.h"

/* "Requeued" is decided in one place: the last segment ended requeued;
 * the index (and so a row) says Requeued only while the record is Pending. */
Test(segments, requeued_is_the_last_segments_outcome_and_pending_in_the_index)
{
	struct job_record *r = record_new("tao-20261201-rq0001");
	const char *text = "{\"event\":\"start\",\"segment\":1,\"at\":100}\n"
	    "{\"event\":\"end\",\"segment\":1,\"at\":200,\"outcome\":\"requeued\"}\n";
	struct rec_meta m;
	char *told = NULL;

	cr_expect(record_requeued(r) == 0, "no segment");
	cr_assert_eq(segments_merge(r, text, strlen(text), -1, &told), 1);
	free(told);
	cr_expect(record_requeued(r) == 1);
	r->state = TAO_PENDING;
	recindex_meta_of(r, &m);
	cr_expect_eq(m.requeued, 1, "waiting for its next segment");
	r->state = TAO_RUNNING;
	recindex_meta_of(r, &m);
	cr_expect_eq(m.requeued, 0, "its next segment runs");
	record_free(r);
}

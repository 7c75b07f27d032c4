/*
 * Text others control on its way to the user's terminal: a failure's
 * evidence copied from a log, a job's name. The real binary in tmux against
 * the test cluster: the pane's title and the clipboard stay as they were,
 * the screen is not cleared, and what the text holds is shown harmless.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/store.h"
#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/xmalloc.h"

static void cleanup(void)
{
	screen_kill_all();
}

TestSuite(hostile, .fini = cleanup);

/* The line a failing job's log could carry, as classify copies it. */
static const char evidence[] =
	"\x1b]52;c;UFdORUQtQ0xJUA==\x07"	/* OSC 52: write the clipboard */
	"\x1b]0;PWNED-TITLE\x07"		/* OSC 0: the window title */
	"\x1b[2J\x1b[H"				/* clear the screen, home */
	"RuntimeError: CUDA error: an illegal memory access";

/* A records folder of our own holding one record for job slurm_id, its
 * history ending with message; returns the folder (the XDG_STATE_HOME to
 * give taotop) and the record's id. */
static char *state_with_message(const char *slurm_id, const char *message, char **id_out)
{
	char tmpl[] = "/tmp/taotop-hostile-XXXXXX", *dir, *jobs, *err = NULL;
	struct record_store *st;
	struct job_record *r;

	cr_assert_not_null(mkdtemp(tmpl));
	dir = xstrdup(tmpl);
	jobs = xasprintf("%s/taotop/jobs", dir);
	st = store_open(jobs, &err);
	cr_assert_not_null(st, "%s", err);
	*id_out = store_mint_id(st);
	r = record_new(*id_out);
	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, slurm_id);
	record_set(&r->log_dir, "/tmp/slurm-logs");
	record_event(r, message, "taotop", time(NULL));
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	record_free(r);
	store_close(st);
	free(jobs);
	return dir;
}

/* The same, its history ending with the hostile evidence as classify
 * copies it. */
static char *state_with_record(const char *slurm_id, char **id_out)
{
	char *msg = xasprintf("failure: the program's (a CUDA error): %s: not retried", evidence);
	char *dir = state_with_message(slurm_id, msg, id_out);

	free(msg);
	return dir;
}

/* What the text shown did not do to the terminal: its title (as it was
 * before, title0) and the clipboard (OSC 52) are untouched. */
static void expect_terminal_untouched(struct screen *s, const char *title0)
{
	char *title1 = screen_tmux(s, "display -p -t 0 '#{pane_title}'");
	char *buffers = screen_tmux(s, "list-buffers");

	cr_expect_str_eq(title1, title0, "the title changed");
	cr_expect_str_eq(buffers, "", "an OSC 52 write reached the clipboard: %s", buffers);
	free(title1), free(buffers);
}

/* The job's scancel, by its SLURM id. */
static void cancel_job(const char *slurm_id)
{
	char *cmd = xasprintf("scancel %s", slurm_id);

	free(rig_ssh_ok(cmd));
	free(cmd);
}

Test(hostile, status_shows_a_hostile_evidence_line_harmless, .timeout = 120)
{
	char opts[256], env[256], args[128], name[64], *id, *rec = NULL, *state, *title0, *text;
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 30, .env = env, .args = args };

	snprintf(name, sizeof(name), "hostile%d-status", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o /dev/null", name);
	id = rig_sbatch(opts, "'sleep 120'");
	state = state_with_record(id, &rec);
	snprintf(env, sizeof(env), "XDG_STATE_HOME=%s", state);
	snprintf(args, sizeof(args), "status %s", rec);

	screen_open(&s, "hostile-status", &so);
	title0 = screen_tmux(&s, "display -p -t 0 '#{pane_title}'");
	cr_assert_eq(screen_wait_exit(&s, 60), 0);
	/* The text the escapes wrapped is shown; the escapes acted on nothing. */
	screen_wait(&s, 5, rec, "RuntimeError: CUDA error: an illegal memory access", NULL);
	text = screen_text(&s);
	cr_expect_eq(screen_row_of(&s, rec), 0, "the screen was cleared or moved:\n%s", text);
	cr_expect_null(strstr(text, "PWNED"), "%s", text);
	cr_expect_null(strstr(text, "UFdORUQ"), "%s", text);
	expect_terminal_untouched(&s, title0);
	screen_close(&s);

	cancel_job(id);
	free(text), free(title0), free(state), free(rec), free(id);
}

/* "rlo<pid>-" U+202E "txt.exe": shown reversed by a terminal that applied
 * the override ("rlo…exe.txt"). */
#define RLO "\xe2\x80\xae"

Test(hostile, a_bidi_override_in_a_name_is_shown_not_applied, .timeout = 180)
{
	char opts[256], name[64], *id, *line;
	struct screen s;
	struct screen_opts so = { .cols = 200, .lines = 30, .args = "jobs" };
	struct screen_opts mon = { .cols = 160, .lines = 40 };

	/* Five digits: the NAME column shows the whole name, override and all. */
	snprintf(name, sizeof(name), "rlo%05d-", rig_uniq() % 100000);
	snprintf(opts, sizeof(opts), "-J '%s" RLO "txt.exe' -t 5 -o /dev/null", name);
	id = rig_sbatch(opts, "'sleep 120'");

	/* taotop jobs, to a terminal. */
	screen_open(&s, "hostile-jobs", &so);
	cr_assert_eq(screen_wait_exit(&s, 60), 0);
	line = screen_line_with(&s, name);
	cr_assert_not_null(line, "%s is not listed", name);
	cr_expect_not_null(strstr(line, "<U+202E>txt.exe"), "%s", line);
	cr_expect_null(strstr(line, RLO), "the override reached the terminal: %s", line);
	free(line);
	screen_close(&s);

	/* The monitor's job list. */
	screen_open(&s, "hostile-monitor", &mon);
	screen_filter(&s, name);
	screen_wait(&s, 30, "<U+202E>txt.exe", NULL);
	line = screen_line_with(&s, name);
	cr_expect(line != NULL && strstr(line, RLO) == NULL, "%s", line ? line : "");
	free(line);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	cancel_job(id);
	free(id);
}

/* A job named with words for a shell, an array range or nothing SLURM
 * knows is refused by the one resolver (engine/jobref.h) with one
 * sentence, before taotop connects anywhere: here the login host does
 * not even answer, and nothing reached a shell. */
Test(hostile, a_job_name_that_is_no_jobs_is_refused_before_connecting, .timeout = 60)
{
	char *out = NULL, *args, *marker = xasprintf("/tmp/taotop-pwned-%d", rig_uniq());

	args = xasprintf("cancel '$(touch %s)' '4242;id' 4242_[1-3]", marker);
	cr_expect_eq(rig_taotop("SLURM_HOSTNAME=127.0.0.1:1", args, &out), 1, "%s", out);
	free(args);
	args = xasprintf("$(touch %s) is neither a taotop job id nor a SLURM job id: nothing was "
	    "cancelled", marker);
	cr_expect(strstr(out, args) != NULL, "%s", out);
	cr_expect(strstr(out, "4242;id is neither a taotop job id nor a SLURM job id") != NULL &&
	    strstr(out, "4242_[1-3] is neither") != NULL, "%s", out);
	cr_expect(strstr(out, "could not be reached") == NULL && strstr(out, "127.0.0.1:1") == NULL,
	    "it tried to connect:\n%s", out);
	free(args), free(out);
	cr_expect_neq(access(marker, F_OK), 0, "a job's name ran in a shell");
	free(marker);
}

/* A message another user's job put in a record (a status.json line, a
 * log line) holding a C1 CSI, an OSC 52 clipboard write in its 8-bit
 * form, a right-to-left override and invalid UTF-8: `status --json` on a
 * terminal prints them as JSON escapes (what a JSON reader decodes is the
 * same text; invalid UTF-8, which JSON cannot hold, is U+FFFD), and the
 * terminal's clipboard, title and screen are untouched. */
Test(hostile, json_on_a_terminal_shows_c1_osc_and_bidi_as_escapes, .timeout = 120)
{
	static const char c1[] =
		"\xc2\x9d" "52;c;UFdORUQtSlNPTg==" "\xc2\x9c"	/* OSC 52, 8-bit */
		"\xc2\x9b" "2J"					/* CSI 2J, 8-bit */
		"job\xe2\x80\xaetxt.exe \xff end";		/* RLO, invalid */
	char opts[256], env[256], args[160], name[64], *id, *rec = NULL, *state, *title0, *text;
	struct screen s;
	/* Tall enough for the whole JSON of a running job (its GPU use adds
	 * lines): with 60 the history's message had scrolled off the top. */
	struct screen_opts so = { .cols = 200, .lines = 200, .env = env, .args = args };

	snprintf(name, sizeof(name), "hostile%d-json", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o /dev/null", name);
	id = rig_sbatch(opts, "'sleep 120'");
	state = state_with_message(id, c1, &rec);
	snprintf(env, sizeof(env), "XDG_STATE_HOME=%s", state);
	snprintf(args, sizeof(args), "status %s --json", rec);

	screen_open(&s, "hostile-json", &so);
	title0 = screen_tmux(&s, "display -p -t 0 '#{pane_title}'");
	cr_assert_eq(screen_wait_exit(&s, 60), 0);
	screen_wait(&s, 5, "52;c;UFdORUQtSlNPTg==", NULL);
	text = screen_text(&s);
	cr_expect_not_null(strstr(text, "\\u009d52;c;UFdORUQtSlNPTg==\\u009c\\u009b2Jjob\\u202etxt.exe "
	    "\\ufffd end"), "the escapes as JSON escapes:\n%s", text);
	cr_expect_null(strstr(text, "\xe2\x80\xae"), "the override reached the terminal:\n%s", text);
	cr_expect_not_null(strstr(text, "\"record\""), "the record is printed:\n%s", text);
	expect_terminal_untouched(&s, title0);
	screen_close(&s);

	cancel_job(id);
	free(text), free(title0), free(state), free(rec), free(id);
}

/* A status file that is a FIFO (or a link to one, or to /dev/zero), put
 * where a job's status.json was followed by someone who can write to the
 * shared results folder, would hold the poll's one command until its
 * time-out, and every job of the cluster would go stale with it: it is
 * not read, and the other job's progress arrives in the same poll. */
Test(hostile, a_fifo_status_file_leaves_the_other_jobs_fresh, .timeout = 120)
{
	const struct rig *rg = rig_get();
	char opts[256], env[256], name[64], *id1, *id2, *id3, *dir, *jobs, *err = NULL;
	char *root, *cmd, *rec1 = NULL, *rec2 = NULL, *rec3 = NULL, *fifo, *zero, *line, *text;
	struct record_store *st;
	struct job_record *r;
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 30, .env = env };

	snprintf(name, sizeof(name), "hostile%d-fifo", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o /dev/null", name);
	id1 = rig_sbatch(opts, "'sleep 120'");
	id2 = rig_sbatch(opts, "'sleep 120'");
	id3 = rig_sbatch(opts, "'sleep 120'");
	free(rig_wait_state(id1, "RUNNING", 60));
	free(rig_wait_state(id2, "RUNNING", 60));
	free(rig_wait_state(id3, "RUNNING", 60));
	root = xasprintf("%s/%s-tests", rg->shared, name);
	fifo = xasprintf("%s/a/train/status.json", root);
	zero = xasprintf("%s/c/train/status.json", root);
	cmd = xasprintf("mkdir -p %s/a/train %s/b/train %s/c/train && mkfifo %s && "
	    "ln -s /dev/zero %s && printf '%%s\\n' "
	    "'{\"date\": \"12/4/2026\", \"time\": \"9:6:10\", \"status\": \"RUNNING\", "
	    "\"verbosity\": \"INFO\", \"message\": \"Training loop in progress\", \"epoch\": 3, "
	    "\"max_epoch\": 10, \"time_per_epoch\": \"0:01:01\", \"eta\": \"0:07:07\", "
	    "\"kpi\": {\"loss\": 0.5}}' > %s/b/train/status.json", root, root, root, fifo, zero,
	    root);
	free(rig_ssh_ok(cmd));
	free(cmd);
	{
		char tmpl[] = "/tmp/taotop-hostile-XXXXXX";
		cr_assert_not_null(mkdtemp(tmpl));
		dir = xstrdup(tmpl);
	}
	jobs = xasprintf("%s/taotop/jobs", dir);
	st = store_open(jobs, &err);
	cr_assert_not_null(st, "%s", err);
	for (int k = 0; k < 3; k++) {
		char *rd = xasprintf("%s/%c", root, "abc"[k]);
		char **rec = k == 0 ? &rec1 : k == 1 ? &rec2 : &rec3;
		*rec = store_mint_id(st);
		r = record_new(*rec);
		record_set(&r->cluster, "rig");
		record_set(&r->backend_ref, k == 0 ? id1 : k == 1 ? id2 : id3);
		record_set(&r->action, "train");
		record_set(&r->results_dir, rd);
		/* Found there before, as a regular file then: now a FIFO, and
		 * a link to /dev/zero (endless). */
		if (k != 1)
			record_set(&r->status_path, k == 0 ? fifo : zero);
		r->state = TAO_RUNNING;
		cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
		record_free(r);
		free(rd);
	}
	store_close(st);
	snprintf(env, sizeof(env), "XDG_STATE_HOME=%s", dir);

	/* The monitor: every record's progress in the poll's one command. */
	screen_open(&s, "hostile-fifo", &so);
	screen_filter(&s, rec2);
	screen_wait(&s, 20, "3/10", NULL);
	line = screen_line_with(&s, "3/10");
	cr_expect(line != NULL && strstr(line, id2) != NULL &&
	    rig_matches(line, "(^|[^0-9])3/10([^0-9]|$)"),
	    "the other job's progress, fresh: %s", line ? line : "(not listed)");
	free(line);
	text = screen_text(&s);
	cr_expect_null(strstr(text, "stale"), "%s", text);
	free(text);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	cmd = xasprintf("scancel %s %s %s; rm -rf %s", id1, id2, id3, root);
	free(rig_ssh_ok(cmd));
	free(cmd);
	free(root), free(fifo), free(zero), free(jobs), free(dir), free(rec1), free(rec2), free(rec3);
	free(id1), free(id2), free(id3);
}

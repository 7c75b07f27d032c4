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
 * history ending with the hostile evidence; returns the folder (the
 * XDG_STATE_HOME to give taotop) and the record's id. */
static char *state_with_record(const char *slurm_id, char **id_out)
{
	char tmpl[] = "/tmp/taotop-hostile-XXXXXX", *dir, *jobs, *err = NULL, *msg;
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
	msg = xasprintf("failure: the program's (a CUDA error): %s: not retried", evidence);
	record_event(r, msg, "taotop", time(NULL));
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	record_free(r);
	store_close(st);
	free(msg), free(jobs);
	return dir;
}

Test(hostile, status_shows_a_hostile_evidence_line_harmless, .timeout = 120)
{
	char opts[256], env[256], args[128], name[64], *id, *rec = NULL, *state, *title0, *title1;
	char *buffers, *text;
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
	title1 = screen_tmux(&s, "display -p -t 0 '#{pane_title}'");
	cr_expect_str_eq(title1, title0, "the title changed");
	buffers = screen_tmux(&s, "list-buffers");
	cr_expect_str_eq(buffers, "", "an OSC 52 write reached the clipboard: %s", buffers);
	screen_close(&s);

	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	free(text), free(title0), free(title1), free(buffers), free(state), free(rec), free(id);
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

	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
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

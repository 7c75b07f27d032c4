/*
 * taotop in a script, from the user's side: `taotop status --watch` read
 * through a pipe shows each change while the job runs (not only when it
 * exits), and its exit status tells how the job ended (0 Done, 4 Error,
 * 5 Canceled, as taotop(1) says); `taotop logs --until-end` follows the log
 * and exits when the job ends, the same way. Each verb runs as a user runs
 * it, in the background with its output through `| cat` into a file.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "util/file.h"
#include "util/xmalloc.h"

#define POLL_S	2	/* TAOTOP_POLL_S: the base poll interval */

/* A watcher started in the background: its output through a pipe into
 * log, its exit status into rc once it ends. */
struct bg {
	char	*log, *rc;
};

/* `taotop ARGS | cat > log` in the background as u runs it. */
static void bg_start(struct bg *b, struct user *u, const char *name, const char *args)
{
	const struct rig *r = rig_get();

	b->log = xasprintf("%s/%s.log", u->local, name);
	b->rc = xasprintf("%s/%s.rc", u->local, name);
	cr_assert_eq(rig_local("( { SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s "
	    "TAOTOP_KNOWN_HOSTS=%s TAOTOP_CLUSTER=rig TAOTOP_POLL_S=%d %s %s %s; echo $? > %s; } "
	    "2>&1 | cat > %s ) </dev/null >/dev/null 2>&1 &", r->user, r->host, r->port, r->key,
	    r->known_hosts, POLL_S, u->env, getenv("TAOTOP_BIN"), args, b->rc, b->log), 0);
}

/* The output so far ("" before any). */
static char *bg_text(const struct bg *b)
{
	char *err = NULL, *t = file_read_all(b->log, NULL, &err);

	free(err);
	return t != NULL ? t : xstrdup("");
}

/* Its exit status, or -1 while it runs. */
static int bg_rc(const struct bg *b)
{
	char *err = NULL, *t = file_read_all(b->rc, NULL, &err);
	int rc = -1;

	free(err);
	if (t != NULL && t[0] != '\0')
		rc = atoi(t);
	free(t);
	return rc;
}

/* Wait up to timeout_s for the output to hold what (1), or not (0). */
static int bg_wait_text(const struct bg *b, const char *what, int timeout_s)
{
	for (int i = 0; i < timeout_s * 4; i++) {
		char *t = bg_text(b);
		int got = strstr(t, what) != NULL;
		free(t);
		if (got)
			return 1;
		usleep(250 * 1000);
	}
	return 0;
}

/* Wait up to timeout_s for it to exit: its status, or -1. */
static int bg_wait_rc(const struct bg *b, int timeout_s)
{
	int rc = -1;

	for (int i = 0; i < timeout_s * 4 && (rc = bg_rc(b)) < 0; i++)
		usleep(250 * 1000);
	return rc;
}

/* Whether text shows an epoch of max_epoch not yet the last ("epoch 3/30"). */
static int shows_epoch_below(const char *text, int max_epoch)
{
	const char *p;
	int n, m;

	for (p = strstr(text, "epoch "); p != NULL; p = strstr(p + 1, "epoch "))
		if (sscanf(p, "epoch %d/%d", &n, &m) == 2 && m == max_epoch && n < max_epoch)
			return 1;
	return 0;
}

static void bg_free(struct bg *b)
{
	free(b->log), free(b->rc);
}

/* What SLURM says of the job of record id now ("" before it is there). */
static char *slurm_state(struct user *u, const char *id)
{
	char *args = xasprintf("status %s --json", id), *out = NULL, *st;
	cJSON *o;

	rig_taotop(u->env, args, &out);
	o = strchr(out, '{') ? cJSON_Parse(strchr(out, '{')) : NULL;
	st = xstrdup(o ? json_str(o, "native_state") : "");
	cJSON_Delete(o);
	free(out), free(args);
	return st;
}

/* Wait until SLURM runs the job (a job of one GPU on an idle cluster). */
static void wait_running(struct user *u, const char *id)
{
	char *st = NULL;

	for (int i = 0; i < 60; i++) {
		free(st);
		st = slurm_state(u, id);
		if (strcmp(st, "RUNNING") == 0)
			break;
		sleep(1);
	}
	cr_assert_str_eq(st, "RUNNING", "%s never ran", id);
	free(st);
}

/* Through a pipe, each poll's block comes as it is printed: the job seen
 * Running and its epochs counted while the watch is still on, then Done,
 * and the watch exits 0. */
Test(scripts, status_watch_through_a_pipe_shows_each_change_and_exits_0_when_done,
    .timeout = 300)
{
	struct user u;
	struct bg w;
	char *out = NULL, *b, *id, *args, *text;

	user_open(&u, "watchpipe", NULL);
	b = user_bundle(&u, "pipe", NULL, NULL);
	cr_assert_eq(rig_local("sed -i 's/num_epochs: 1/num_epochs: 30/' %s", b), 0);
	id = user_submit(&u, b, &out);
	free(out);
	args = xasprintf("status %s --watch", id);
	bg_start(&w, &u, "watch", args);
	/* The first block comes at once, through the pipe, while the watch
	 * goes on (a block-buffered stdout would show it only at the exit). */
	cr_assert(bg_wait_text(&w, id, 20), "nothing came through the pipe in 20 s");
	cr_assert_eq(bg_rc(&w), -1, "the first block came only when the watch ended");
	wait_running(&u, id);
	/* Running within a poll (and the backed-off one after it) of SLURM's. */
	cr_expect(bg_wait_text(&w, "Running", 3 * POLL_S + 10), "Running did not come through");
	/* TAO's progress as it trains: an epoch before the last, seen while
	 * the watch is still on (the polls back off while the state stays). */
	text = NULL;
	for (int i = 0; i < 240; i++) {
		free(text);
		text = bg_text(&w);
		if (shows_epoch_below(text, 30) || bg_rc(&w) >= 0)
			break;
		usleep(250 * 1000);
	}
	cr_expect(shows_epoch_below(text, 30), "no epoch came while it trained:\n%s", text);
	cr_expect_eq(bg_rc(&w), -1, "the watch ended while the job ran:\n%s", text);
	free(text);
	cr_expect_eq(bg_wait_rc(&w, 180), 0, "status --watch of a job ending Done");
	text = bg_text(&w);
	cr_expect(strstr(text, "Done  (SLURM") != NULL, "the end was not shown:\n%s", text);
	free(text);
	bg_free(&w);
	free(args), free(id), free(b);
	user_close(&u);
}

/* A job whose program fails ends in Error: the watch exits 4. */
Test(scripts, status_watch_exits_4_when_the_job_ends_in_error, .timeout = 240)
{
	struct user u;
	struct bg w;
	char *out = NULL, *b, *id, *args, *text;

	user_open(&u, "watcherr", NULL);
	b = user_bundle(&u, "fails", "command: [sh, -c, 'sleep 3; echo no such data >&2; exit 3']\n",
	    NULL);
	id = user_submit(&u, b, &out);
	free(out);
	args = xasprintf("status %s --watch", id);
	bg_start(&w, &u, "watch", args);
	cr_expect_eq(bg_wait_rc(&w, 180), 4, "status --watch of a job ending in Error");
	text = bg_text(&w);
	cr_expect(strstr(text, "Error  (SLURM") != NULL, "the end was not shown:\n%s", text);
	free(text);
	bg_free(&w);
	free(args), free(id), free(b);
	user_close(&u);
}

/* A job cancelled while it runs: the watch exits 5; `logs --until-end`
 * following it ends with it, and exits 5 too. */
Test(scripts, a_cancelled_job_ends_the_watch_with_5_and_logs_until_end_with_it,
    .timeout = 240)
{
	struct user u;
	struct bg w, l;
	char *out = NULL, *b, *id, *args, *text;

	user_open(&u, "watchcancel", NULL);
	b = user_bundle(&u, "long", "command: [sh, -c, 'echo started; sleep 300']\n", NULL);
	id = user_submit(&u, b, &out);
	free(out);
	args = xasprintf("status %s --watch", id);
	bg_start(&w, &u, "watch", args);
	free(args);
	args = xasprintf("logs %s --until-end", id);
	bg_start(&l, &u, "logs", args);
	free(args);
	wait_running(&u, id);
	cr_assert(bg_wait_text(&l, "started", 60), "logs --until-end showed no line");
	cr_expect_eq(bg_rc(&l), -1, "logs --until-end ended while the job ran");
	args = xasprintf("cancel %s", id);
	cr_assert_eq(rig_taotop(u.env, args, &out), 0, "%s", out);
	free(out), free(args);
	cr_expect_eq(bg_wait_rc(&w, 120), 5, "status --watch of a cancelled job");
	cr_expect_eq(bg_wait_rc(&l, 120), 5, "logs --until-end of a cancelled job");
	text = bg_text(&w);
	cr_expect(strstr(text, "Canceled  (SLURM") != NULL, "the end was not shown:\n%s", text);
	free(text);
	bg_free(&w), bg_free(&l);
	free(id), free(b);
	user_close(&u);
}

/* `logs --until-end` of a job that trains: every line up to TAO's last,
 * then it exits 0 by itself once the job is Done; of a job already Done,
 * the last lines and an exit at once. */
Test(scripts, logs_until_end_exits_when_the_job_ends, .timeout = 300)
{
	struct user u;
	struct bg l;
	char *out = NULL, *b, *id, *args, *text, *tail, *file;
	time_t t0;

	user_open(&u, "logsend", NULL);
	b = user_bundle(&u, "logs", "command:\n  - sh\n  - -c\n"
	    "  - 'for i in 1 2 3 4 5 6; do echo line $i; sleep 1; done; exec \"$@\"'\n"
	    "  - taotop-test\n  - classification_pyt\n  - train\n  - -e\n  - '{spec}'\n"
	    "  - 'results_dir={results_dir}'\n", NULL);
	id = user_submit(&u, b, &out);
	free(out);
	args = xasprintf("logs %s --until-end", id);
	bg_start(&l, &u, "logs", args);
	cr_expect(bg_wait_text(&l, "line 2", 90), "no line while the job ran");
	cr_expect_eq(bg_wait_rc(&l, 120), 0, "logs --until-end of a job ending Done");
	/* Every line of main.out, its last too: what the job wrote before it
	 * ended was read before the exit. */
	text = bg_text(&l);
	file = user_job_file(&u, id, "slurm-logs/*/main.out");
	cr_assert(strstr(file, "line 6\n") != NULL, "main.out:\n%s", file);
	cr_expect(strstr(text, file) != NULL, "main.out is not whole in what logs printed:\n%s\n"
	    "main.out:\n%s", text, file);
	free(text);
	/* Again, the job long over: the tail and the end at once. */
	t0 = time(NULL);
	cr_expect_eq(rig_taotop(u.env, args, &tail), 0, "%s", tail);
	cr_expect(strstr(tail, file) != NULL, "%s", tail);
	cr_expect_leq(time(NULL) - t0, 30, "logs --until-end of a finished job took %lld s",
	    (long long)(time(NULL) - t0));
	free(tail), free(file);
	bg_free(&l);
	free(args), free(id), free(b);
	user_close(&u);
}

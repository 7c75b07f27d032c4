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

/* A field of `status ID --json` now ("" before the job is there; caller
 * frees). */
static char *status_field(struct user *u, const char *id, const char *field)
{
	char *args = xasprintf("status %s --json", id), *out = NULL, *v;
	cJSON *o;

	rig_taotop(u->env, args, &out);
	o = strchr(out, '{') ? cJSON_Parse(strchr(out, '{')) : NULL;
	v = xstrdup(o ? json_str(o, field) : "");
	cJSON_Delete(o);
	free(out), free(args);
	return v;
}

/* What SLURM says of the job of record id now. */
static char *slurm_state(struct user *u, const char *id)
{
	return status_field(u, id, "native_state");
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
	struct bg w, l;
	char *out = NULL, *b, *id, *args, *largs, *text;

	user_open(&u, "watcherr", NULL);
	b = user_bundle(&u, "fails", "command: [sh, -c, 'sleep 3; echo no such data >&2; exit 3']\n",
	    NULL);
	id = user_submit(&u, b, &out);
	free(out);
	args = xasprintf("status %s --watch", id);
	bg_start(&w, &u, "watch", args);
	/* logs --until-end of main.err beside it: the same end, the same 4. */
	largs = xasprintf("logs %s --err --until-end", id);
	bg_start(&l, &u, "logs", largs);
	cr_expect_eq(bg_wait_rc(&w, 180), 4, "status --watch of a job ending in Error");
	text = bg_text(&w);
	cr_expect(strstr(text, "Error  (SLURM") != NULL, "the end was not shown:\n%s", text);
	free(text);
	cr_expect_eq(bg_wait_rc(&l, 120), 4, "logs --until-end of a job ending in Error");
	text = bg_text(&l);
	cr_expect(strstr(text, "no such data") != NULL, "main.err's line:\n%s", text);
	free(text);
	bg_free(&w), bg_free(&l);
	free(args), free(largs), free(id), free(b);
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
	/* Its last words have no newline (as a crash's or a progress bar's). */
	b = user_bundle(&u, "logs", "command:\n  - sh\n  - -c\n"
	    "  - 'for i in 1 2 3 4 5 6; do echo line $i; sleep 1; done; \"$@\"; r=$?; "
	    "printf \"the last words\"; exit $r'\n"
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
	cr_assert(strstr(file, "the last words") != NULL, "main.out:\n%s", file);
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

/* The SLURM job id of record id ("" before it has one; caller frees). */
static char *slurm_id_of(struct user *u, const char *id)
{
	return status_field(u, id, "slurm_id");
}

/* Whether SLURM job sid is in the user's queue, as taotop's poll asks it
 * (`squeue --me`). */
static int in_queue(const char *sid)
{
	char *out = NULL;
	int in = 1;

	if (rig_ssh("squeue --me -h -o '%i'", &out) == 0) {
		in = 0;
		for (char *l = out; *l; l += strcspn(l, "\n"), l += *l == '\n')
			if (strncmp(l, sid, strlen(sid)) == 0 &&
			    (l[strlen(sid)] == '\n' || l[strlen(sid)] == '\0'))
				in = 1;
	}
	free(out);
	return in;
}

/* The rig's fault injection (tests/cluster/README.md): accounting held
 * back for the jobs listed in $RIG_STATE/fault/sacct-lag. */
static char *lag_file(void)
{
	return xasprintf("%s/fault/sacct-lag", rig_get()->state);
}

/* The fault turned off, whatever the test's end (an id held back is a
 * dead job's, but the file is the test's to remove). */
static void lag_off(void)
{
	char *lag = lag_file();

	rig_local("rm -f %s", lag);
	free(lag);
}

/* A job that has left the queue while accounting does not list it yet
 * (slurmdbd behind slurmctld, held so by the rig's sacct-lag fault): `status`
 * and `status --watch` through a pipe show it Ending, "SLURM has ended the
 * job: its end awaits accounting", with no time of its own (`-/limit`, not
 * the time it had when last seen) and no attempt to sample its GPUs (srun
 * on an expired job); once accounting has it, the watch ends with the
 * job's real end, Done, and exits 0. */
Test(scripts, a_job_ended_before_accounting_knows_it_shows_ending_then_its_end,
    .timeout = 300, .fini = lag_off)
{
	struct user u;
	struct bg w;
	char *out = NULL, *b, *id, *sid, *args, *text, *lag = lag_file(), *line;
	int gone = 0;

	user_open(&u, "acctlag", NULL);
	b = user_bundle(&u, "lag", NULL, NULL);
	cr_assert_eq(rig_local("sed -i 's/num_epochs: 1/num_epochs: 12/' %s", b), 0);
	id = user_submit(&u, b, &out);
	free(out);
	wait_running(&u, id);
	sid = slurm_id_of(&u, id);
	cr_assert(sid[0] != '\0', "%s has no SLURM job id", id);
	/* From here accounting says nothing of the job, until the file goes. */
	cr_assert_eq(rig_local("printf '%%s\\n' %s > %s && chmod 644 %s", sid, lag, lag), 0);
	args = xasprintf("status %s --watch", id);
	bg_start(&w, &u, "watch", args);
	free(args);
	cr_expect(bg_wait_text(&w, "Running", 30), "the watch never showed it Running");
	for (int i = 0; i < 120 && !gone; i++) {
		gone = !in_queue(sid);
		if (!gone)
			sleep(1);
	}
	cr_expect(gone, "SLURM job %s never left the queue", sid);
	/* Accounting still does not list it (the fault holds). */
	args = xasprintf("sacct -j %s -X -n -P -o JobIDRaw,State", sid);
	out = NULL;
	rig_ssh(args, &out);
	cr_expect_str_eq(out != NULL ? out : "", "", "sacct lists the held job: %s", out);
	free(out), free(args);

	/* The watch, still on, says the job is ending. */
	cr_expect(bg_wait_text(&w, "its end awaits accounting", 3 * POLL_S + 15),
	    "the watch never said the end awaits accounting");
	cr_expect_eq(bg_rc(&w), -1, "the watch ended before accounting had the job");
	/* status, once: the same, in its own words. */
	args = xasprintf("status %s", id);
	out = NULL;
	cr_expect_eq(rig_taotop(u.env, args, &out), 0, "status of an ending job: %s", out);
	free(args);
	line = text_line_with(out, id);
	cr_expect(line != NULL && strstr(line, "Ending") != NULL &&
	    strstr(line, "SLURM has ended the job: its end awaits accounting") != NULL,
	    "status of a job out of the queue and not in accounting:\n%s", out);
	cr_expect(strstr(out, "time -/0") != NULL, "a time shown for it (not -/limit):\n%s", out);
	cr_expect(strstr(out, "GPU use not read") == NULL && strstr(out, "srun") == NULL,
	    "status sampled the ended job's GPUs:\n%s", out);
	free(line), free(out);

	/* Accounting catches up: the watch shows the real end and exits 0. */
	rig_local("rm -f %s", lag);
	cr_expect_eq(bg_wait_rc(&w, 120), 0, "status --watch of a job ending Done");
	text = bg_text(&w);
	cr_expect(strstr(text, "Done  (SLURM") != NULL, "the end was not shown:\n%s", text);
	cr_expect(strstr(text, "GPU use not read") == NULL && strstr(text, "expired") == NULL,
	    "the watch sampled the ended job's GPUs:\n%s", text);
	line = text_line_with(text, "awaits accounting");
	cr_expect(line != NULL && strstr(line, "Ending") != NULL, "the watch's line: %s", line);
	free(line), free(text);
	bg_free(&w);
	free(sid), free(id), free(b), free(lag);
	user_close(&u);
}

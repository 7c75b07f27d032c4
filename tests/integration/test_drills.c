/*
 * Fault drills against the real test cluster: the scheduler, accounting
 * and the login server go away while taotop works; the login host list
 * starts with a dead host; the disk under the records fills up; two taotops
 * work on the same records; 500 jobs arrive at once. taotop must keep
 * working, say what is wrong, and lose nothing.
 *
 * These stop the rig's own daemons, so tests/run runs this binary one test
 * at a time, and the suite brings whatever a failed test left stopped back
 * up (tests/cluster/up starts only what is not running).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/store.h"
#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/file.h"
#include "util/xmalloc.h"

static void rig_back_up(void)
{
	rig_local("%s/tests/cluster/up >/dev/null 2>&1", getenv("TAOTOP_SHARE"));
}

static void fini(void)
{
	screen_kill_all();
	rig_back_up();
	/* A failed disk-full drill leaves its small tmpfs mounted. */
	rig_local("for m in $(awk '$3 == \"tmpfs\" && $2 ~ /taotop-drill-/ {print $2}' "
	    "/proc/mounts); do umount $m; done");
}

TestSuite(drills, .fini = fini);

/* Stop one of the rig's daemons (slurmctld, slurmdbd) as a crash would
 * leave it: gone, its clients refused. */
static void daemon_stop(const char *name)
{
	const struct rig *r = rig_get();

	cr_assert_eq(rig_local("p=$(cat %s/run/%s.pid) && kill $p && "
	    "while kill -0 $p 2>/dev/null; do sleep 0.1; done", r->state, name), 0,
	    "%s did not stop", name);
}

static void daemons_start(void)
{
	cr_assert_eq(rig_local("%s/tests/cluster/up >/dev/null", getenv("TAOTOP_SHARE")), 0,
	    "tests/cluster/up failed");
}

/* `taotop submit` with env; the record id (caller frees). */
static char *submit(const char *env, const char *bundle)
{
	char *args = xasprintf("submit %s", bundle), *out = NULL, *p, *id;

	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	p = strstr(out, "submitted tao-");
	cr_assert_not_null(p, "%s", out);
	id = xstrndup(p + 10, strcspn(p + 10, " \n"));
	free(out), free(args);
	return id;
}

/* The state a record has on disk, or "" (caller frees). */
static char *record_state(const char *jobs_dir, const char *id)
{
	struct record_store *st;
	struct job_record *r = NULL;
	char *err = NULL, *state;

	st = store_open(jobs_dir, &err);
	cr_assert_not_null(st, "%s", err);
	cr_assert_eq(store_load(st, id, &r, &err), 0, "%s", err);
	state = xstrdup(tao_state_name(r->state));
	record_free(r);
	store_close(st);
	return state;
}

Test(drills, slurmctld_stopped_states_stay_stale_and_it_recovers, .timeout = 300)
{
	char *dir = screen_shared_dir("drill-ctld"), name[64], opts[256], *id, *tid, *env, *bundle;
	char *jobs, *state;
	struct screen s;
	struct screen_opts so = { .cols = 130, .lines = 30 };

	snprintf(name, sizeof(name), "drill%d-ctld", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 10 -o %s/ctld.out", name, dir);
	id = rig_sbatch(opts, "'sleep 600'");
	screen_open(&s, "drill-ctld", &so);
	/* A taotop job too: its record must not be marked failed. */
	env = xasprintf("XDG_STATE_HOME=%s/state SLURM_BASE_RESULTS_DIR=lustre://%s/root", s.dir, dir);
	bundle = rig_bundle(s.dir, dir, "drillctld_pyt", "[sleep, '600']", NULL);
	tid = submit(env, bundle);
	screen_filter(&s, "drill");
	screen_wait_line(&s, 60, name, "Running", NULL);
	screen_wait_line(&s, 60, tid, "Running", NULL);

	daemon_stop("slurmctld");
	screen_wait(&s, 60, "rig: scheduler not answering (last good poll", NULL);
	/* Several polls later: the last known states, nothing guessed. */
	sleep(5);
	screen_wait_line(&s, 5, name, "Running", NULL);
	screen_wait_line(&s, 5, tid, "Running", NULL);
	jobs = xasprintf("%s/state/taotop/jobs", s.dir);
	state = record_state(jobs, tid);
	cr_expect_str_eq(state, "Running", "the record was changed while the scheduler was away");
	free(state);

	/* Back: the status bar and the rows recover by themselves. */
	daemons_start();
	screen_wait(&s, 90, "rig: 127.0.0.1:", ", polled ", NULL);
	screen_wait_line(&s, 30, name, "Running", NULL);
	screen_wait_line(&s, 30, tid, "Running", NULL);
	state = record_state(jobs, tid);
	cr_expect_str_eq(state, "Running");
	free(state);
	{
		char *cmd = xasprintf("scancel %s", id), *args = xasprintf("cancel %s", tid), *out;
		free(rig_ssh_ok(cmd));
		cr_expect_eq(rig_taotop(env, args, &out), 0, "%s", out);
		free(out), free(cmd), free(args);
	}
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(jobs), free(bundle), free(env), free(tid), free(id), free(dir);
}

Test(drills, slurmdbd_stopped_finished_jobs_wait_for_accounting, .timeout = 300)
{
	char *dir = screen_shared_dir("drill-dbd"), *tid, *env, *bundle, *jobs, *state, *cmd, *out;
	struct screen s;
	struct screen_opts so = { .cols = 130, .lines = 30 };
	int i, rc;

	screen_open(&s, "drill-dbd", &so);
	env = xasprintf("XDG_STATE_HOME=%s/state SLURM_BASE_RESULTS_DIR=lustre://%s/root", s.dir, dir);
	cmd = xstrdup("[sh, -c, 'sleep 15; echo {\\\"status\\\": \\\"SUCCESS\\\"} > "
	    "{results_dir}/status.json']");
	bundle = rig_bundle(s.dir, dir, "drilldbd_pyt", cmd, NULL);
	free(cmd);
	tid = submit(env, bundle);
	screen_filter(&s, tid);
	screen_wait_line(&s, 60, tid, "Running", NULL);

	daemon_stop("slurmdbd");
	/* sacct fails, squeue still answers. */
	rc = rig_ssh("sacct -n -X -S now-1hour -o JobID", &out);
	cr_expect_neq(rc, 0, "sacct answered without slurmdbd: %s", out);
	free(out);
	free(rig_ssh_ok("squeue -h --me"));
	/* The job ends while accounting is away. */
	cmd = xasprintf("squeue -h --me -n %s", tid);
	for (i = 0; i < 60; i++) {
		out = rig_ssh_ok(cmd);
		rc = out[0] == '\0';
		free(out);
		if (rc)
			break;
		sleep(1);
	}
	free(cmd);
	cr_assert(rc, "the job did not leave the queue");
	sleep(5);
	/* Not guessed: the last known state, waiting for accounting. The
	 * monitor sees the job leave the queue at its next poll, which, with
	 * no key pressed while the job ran, may be the idle backoff's (up to
	 * POLL_MAX_S, 60 s) away. */
	screen_wait(&s, 70, "rig: accounting not answering", NULL);
	/* The row says what is known (SLURM ended it, its end awaits
	 * accounting: Ending), the record keeps Running. */
	screen_wait_line(&s, 5, tid, "Ending", NULL);
	jobs = xasprintf("%s/state/taotop/jobs", s.dir);
	state = record_state(jobs, tid);
	cr_expect_str_eq(state, "Running", "a final state was guessed without accounting");
	free(state);

	/* Accounting back: the real end, Done. */
	daemons_start();
	screen_wait_line(&s, 120, tid, "Done", NULL);
	state = record_state(jobs, tid);
	cr_expect_str_eq(state, "Done");
	free(state);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(jobs), free(bundle), free(env), free(tid), free(dir);
}

Test(drills, sshd_killed_and_restarted_during_a_follow_loses_no_line, .timeout = 180)
{
	char *dir = screen_shared_dir("drill-follow"), name[64], opts[256], *id, *env, *args, *out;
	char tmpl[] = "/tmp/taotop-drill-XXXXXX", *text, *p;
	struct rig_sshd d;
	int i, next = 1, lines = 0;

	rig_sshd_start(&d, 2238, 0);
	cr_assert_not_null(mkdtemp(tmpl));
	snprintf(name, sizeof(name), "drill%d-follow", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o %s/follow.out", name, dir);
	id = rig_sbatch(opts, "'echo line-0; for i in $(seq 1 200); do echo line-$i; sleep 0.1; done'");
	free(rig_wait_state(id, "RUNNING COMPLETED", 60));
	/* Follow through the private sshd, from the start of the log. */
	env = xasprintf("SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s", d.hosts, d.known_hosts);
	args = xasprintf("logs -f -n 100000 %s >%s/out 2>%s/err & echo $! >%s/pid", id, tmpl, tmpl,
	    tmpl);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	free(out);
	/* Following (its first lines out), then the server goes away,
	 * sessions and all, and comes back. */
	{
		char *path = xasprintf("%s/out", tmpl);
		free(rig_wait_file(path, "line-5\n", 30));
		free(path);
	}
	rig_sshd_stop(&d);
	sleep(3);
	rig_sshd_restart(&d);
	free(rig_wait_state(id, "COMPLETED", 60));
	for (i = 0; i < 30; i++) {
		char *path = xasprintf("%s/out", tmpl);
		text = file_read_all(path, NULL, NULL);
		free(path);
		if (text != NULL && strstr(text, "line-200\n") != NULL)
			break;
		free(text);
		text = NULL;
		sleep(1);
	}
	rig_local("kill $(cat %s/pid) 2>/dev/null; pkill -f 'logs -f -n 100000 %s$'", tmpl, id);
	cr_assert_not_null(text, "the follow did not reach the log's end after the restart");
	/* Every line once, in order. */
	for (p = text; *p != '\0'; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		int n;
		if (sscanf(p, "line-%d", &n) != 1)
			continue;
		if (n == 0)
			continue;
		cr_expect_eq(n, next, "line-%d where line-%d was due (lost or doubled)", n, next);
		next = n + 1;
		lines++;
	}
	cr_expect_eq(lines, 200, "%d lines of 200", lines);
	{
		char *path = xasprintf("%s/err", tmpl), *err = file_read_all(path, NULL, NULL);
		cr_expect(err != NULL && strstr(err, "(retrying)") != NULL,
		    "the follow never saw the server go: %s", err ? err : "");
		free(err), free(path);
	}
	free(text);
	rig_local("rm -rf %s", tmpl);
	rig_sshd_free(&d);
	free(args), free(env), free(id), free(dir);
}

Test(drills, a_dead_first_login_host_every_verb_goes_through_the_second, .timeout = 180)
{
	const struct rig *r = rig_get();
	char *dir = screen_shared_dir("drill-hosts"), tmpl[] = "/tmp/taotop-drill-XXXXXX";
	char *env, *bundle, *id, *out, *args;
	int i;

	cr_assert_not_null(mkdtemp(tmpl));
	/* Port 1 on this machine: nothing listens, the connection is refused. */
	env = xasprintf("SLURM_HOSTNAME=127.0.0.1:1,%s:%d XDG_STATE_HOME=%s/state "
	    "SLURM_BASE_RESULTS_DIR=lustre://%s/root", r->host, r->port, tmpl, dir);
	cr_assert_eq(rig_taotop(env, "preflight", &out), 0, "%s", out);
	free(out);
	bundle = rig_bundle(tmpl, dir, "drillhosts_pyt", "[sh, -c, 'echo drill-hello; sleep 60']",
	    NULL);
	id = submit(env, bundle);
	args = xasprintf("status %s", id);
	for (i = 0; i < 60; i++) {
		cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
		if (strstr(out, "Running") != NULL)
			break;
		free(out);
		out = NULL;
		sleep(1);
	}
	cr_assert_not_null(out, "never Running");
	free(out), free(args);
	cr_assert_eq(rig_taotop(env, "jobs", &out), 0, "%s", out);
	cr_expect_not_null(strstr(out, id), "%s", out);
	free(out);
	args = xasprintf("logs %s", id);
	for (i = 0; i < 20; i++) {
		cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
		if (strstr(out, "drill-hello") != NULL)
			break;
		free(out);
		out = NULL;
		sleep(1);
	}
	cr_expect_not_null(out, "the log never showed");
	free(out), free(args);
	args = xasprintf("cancel %s", id);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	free(out), free(args);
	rig_local("rm -rf %s", tmpl);
	free(id), free(bundle), free(env), free(dir);
}

static int set_running(struct job_record *r, void *arg, char **err)
{
	(void)err;
	/* 1: changed, to be written. */
	return record_transition(r, TAO_RUNNING, "RUNNING", arg, "drill", time(NULL));
}

Test(drills, a_full_disk_fails_a_record_update_and_keeps_the_old_record)
{
	char tmpl[] = "/tmp/taotop-drill-XXXXXX", *jobs, *path, *before, *after, *err = NULL;
	char *message = xmalloc(64 << 10);
	struct record_store *st;
	struct job_record *r, *back = NULL;

	cr_assert_not_null(mkdtemp(tmpl));
	cr_assert_eq(mount("tmpfs", tmpl, "tmpfs", 0, "size=256k"), 0, "mount a small tmpfs: %m");
	jobs = xasprintf("%s/jobs", tmpl);
	st = store_open(jobs, &err);
	cr_assert_not_null(st, "%s", err);
	{
		char *id = store_mint_id(st);
		r = record_new(id);
		free(id);
	}
	record_set(&r->cluster, "rig");
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	path = xasprintf("%s/%s.json", jobs, r->id);
	before = file_read_all(path, NULL, &err);
	cr_assert_not_null(before, "%s", err);

	/* The disk fills up; then an update that needs room. */
	rig_local("dd if=/dev/zero of=%s/filler bs=4k 2>/dev/null; true", tmpl);
	memset(message, 'x', (64 << 10) - 1);
	message[(64 << 10) - 1] = '\0';
	cr_expect_neq(store_update(st, r->id, set_running, message, &err), 0,
	    "an update succeeded on a full disk");
	cr_assert_not_null(err);
	cr_expect_not_null(strstr(err, "No space left on device"), "%s", err);
	cr_expect_not_null(strstr(err, r->id), "the message names the record: %s", err);
	free(err);
	err = NULL;
	after = file_read_all(path, NULL, &err);
	cr_assert_not_null(after, "%s", err);
	cr_expect_str_eq(after, before, "the old record was changed");
	cr_assert_eq(store_load(st, r->id, &back, &err), 0, "%s", err);
	cr_expect_eq(back->state, r->state);
	/* Nothing half-written left beside it. */
	cr_expect_eq(rig_local("test \"$(ls -A %s | grep -v '^\\.lock$' | grep -v '^\\.index$' | "
	    "grep -v '\\.json$')\" = ''", jobs), 0, "a temporary file was left in %s", jobs);
	/* Nor beside the records' index (engine/recindex.h): its one file. */
	cr_expect_eq(rig_local("test -z \"$(ls -A %s/.index 2>/dev/null | grep -v '^records$')\"",
	    jobs), 0, "a temporary file was left in %s/.index", jobs);
	record_free(back);
	record_free(r);
	store_close(st);
	umount(tmpl);
	rmdir(tmpl);
	free(message), free(before), free(after), free(path), free(jobs);
}

Test(drills, two_taotops_submitting_and_cancelling_at_once_lose_no_record, .timeout = 300)
{
	const struct rig *r = rig_get();
	char *dir = screen_shared_dir("drill-two"), tmpl[] = "/tmp/taotop-drill-XXXXXX";
	char *bundle, *script, *jobs, *warnings = NULL, *err = NULL, *out;
	struct record_store *st;
	struct job_record **list;
	size_t n, i, k;
	FILE *f;

	cr_assert_not_null(mkdtemp(tmpl));
	bundle = rig_bundle(tmpl, dir, "drilltwo_pyt", "[sleep, '120']", NULL);
	/* One shell per taotop: submit, cancel, list, three times over, both
	 * at once on the same records. */
	script = xasprintf("%s/two.sh", tmpl);
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "export SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s TAOTOP_KNOWN_HOSTS=%s\n"
	    "export TAOTOP_CLUSTER=rig TAOTOP_CONFIG=/nonexistent XDG_STATE_HOME=%s/state\n"
	    "export SLURM_BASE_RESULTS_DIR=lustre://%s/root\n"
	    "one() {\n"
	    "  for i in 1 2 3; do\n"
	    "    id=$(\"$TAOTOP_BIN\" submit %s | sed -n 's/.*submitted \\(tao-[^ ]*\\).*/\\1/p')\n"
	    "    [ -n \"$id\" ] || { echo \"submit failed in $1\"; exit 1; }\n"
	    "    \"$TAOTOP_BIN\" cancel \"$id\" >/dev/null || { echo \"cancel $id failed\"; exit 1; }\n"
	    "    \"$TAOTOP_BIN\" jobs >/dev/null || exit 1\n"
	    "  done\n"
	    "}\n"
	    "one a & a=$!\none b & b=$!\n"
	    "wait $a || exit 1\nwait $b || exit 1\n"
	    "\"$TAOTOP_BIN\" jobs >/dev/null\n",
	    r->user, r->host, r->port, r->key, r->known_hosts, tmpl, dir, bundle);
	fclose(f);
	{
		const char *const argv[] = { "sh", script, NULL };
		cr_assert_eq(rig_run(argv, &out), 0, "%s", out);
		free(out);
	}
	/* Six records, each whole and parsed, each with its own id, all
	 * cancelled; nothing half-written beside them. */
	jobs = xasprintf("%s/state/taotop/jobs", tmpl);
	st = store_open(jobs, &err);
	cr_assert_not_null(st, "%s", err);
	cr_assert_eq(store_list(st, &list, &n, &warnings), 0);
	cr_expect_null(warnings, "damaged records: %s", warnings);
	cr_expect_eq(n, 6, "%zu records of 6", n);
	for (i = 0; i < n; i++) {
		cr_expect_eq(list[i]->state, TAO_CANCELED, "%s is %s", list[i]->id,
		    tao_state_name(list[i]->state));
		cr_expect_not_null(list[i]->backend_ref, "%s was never submitted", list[i]->id);
		for (k = 0; k < i; k++)
			cr_expect_str_neq(list[i]->id, list[k]->id);
	}
	cr_expect_eq(rig_local("test \"$(ls -A %s | grep -v '^\\.lock$' | grep -v '^\\.index$' | "
	    "grep -v '\\.json$')\" = ''", jobs), 0, "a temporary file was left in %s", jobs);
	/* Nor beside the records' index (engine/recindex.h): its one file. */
	cr_expect_eq(rig_local("test -z \"$(ls -A %s/.index 2>/dev/null | grep -v '^records$')\"",
	    jobs), 0, "a temporary file was left in %s/.index", jobs);
	store_list_free(list, n);
	store_close(st);
	free(warnings);
	rig_local("rm -rf %s", tmpl);
	free(jobs), free(script), free(bundle), free(dir);
}

/* The job rows on the screen holding name (the list's own lines, not the
 * filter's or the header's), joined: to tell when a page has been drawn. */
static char *rows_with(struct screen *s, const char *name)
{
	char *text = screen_text(s), *line, *save = NULL, *rows;
	size_t len = 0;

	rows = xstrdup("");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, name) || strstr(line, "matching /") || strstr(line, "filter: "))
			continue;
		rows = xrealloc(rows, len + strlen(line) + 2);
		len += (size_t)sprintf(rows + len, "%s\n", line);
	}
	free(text);
	return rows;
}

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && strcmp(s + n - m, end) == 0;
}

/* The first word of a row made of digits only: its SLURM id, or 0. */
static unsigned long row_id(const char *row)
{
	const char *p = row;

	while (*p != '\0' && *p != '\n') {
		size_t n = strspn(p, "0123456789");
		if (n > 0 && (p == row || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n'))
			return strtoul(p, NULL, 10);
		p += n ? n : 1;
	}
	return 0;
}

/* The rows holding name, once they differ from `before` (NULL: at once);
 * NULL if they stay the same for timeout_ms. */
static char *rows_changed(struct screen *s, const char *name, const char *before, int timeout_ms)
{
	char *rows;
	int waited;

	for (waited = 0;; waited += 100) {
		rows = rows_with(s, name);
		if (before == NULL || strcmp(rows, before) != 0)
			return rows;
		free(rows);
		if (waited >= timeout_ms)
			return NULL;
		usleep(100 * 1000);
	}
}

/* The id of the last row of rows, or 0. */
static unsigned long last_row_id(const char *rows)
{
	const char *p = rows, *nl, *last = NULL;

	for (; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
		if (row_id(p) != 0)
			last = p;
	return last ? row_id(last) : 0;
}

/*
 * Count the list's rows holding name, page by page from the top: the
 * distinct jobs shown Done, and the rows shown in any other state (the
 * first of them into *other_row, caller frees). The last row's id, read
 * after G, ends the walk. A page down may not scroll (the first one moves
 * the selection to the page's last row), so one that changes nothing in
 * 1 s is pressed again, up to 5 times in a row.
 */
static size_t count_done_rows(struct screen *s, const char *name, size_t *nother,
    char **other_row)
{
	unsigned long ids[600], end_id;
	size_t ndone = 0, k, page;
	char *rows, *last;
	int stalls = 0;

	*nother = 0;
	*other_row = NULL;
	screen_keys(s, "G");
	usleep(500 * 1000);
	rows = rows_changed(s, name, NULL, 0);
	end_id = last_row_id(rows);
	free(rows);
	screen_keys(s, "g");
	usleep(500 * 1000);
	rows = rows_changed(s, name, NULL, 0);
	for (page = 0; page < 200 && rows != NULL; page++) {
		char *row, *save = NULL;
		int at_end = 0;

		last = xstrdup(rows);
		for (row = strtok_r(rows, "\n", &save); row; row = strtok_r(NULL, "\n", &save)) {
			unsigned long id = row_id(row);
			if (id == 0)
				continue;
			at_end |= id == end_id;
			if (!strstr(row, " Done ") && !ends_with(row, " Done")) {
				if ((*nother)++ == 0)
					*other_row = xstrdup(row);
				continue;
			}
			for (k = 0; k < ndone && ids[k] != id; k++)
				;
			if (k == ndone && ndone < sizeof(ids) / sizeof(ids[0]))
				ids[ndone++] = id;
		}
		free(rows);
		rows = NULL;
		while (!at_end && rows == NULL && stalls < 5) {
			screen_keys(s, "NPage");
			rows = rows_changed(s, name, last, 1000);
			stalls = rows == NULL ? stalls + 1 : 0;
		}
		free(last);
	}
	free(rows);
	return ndone;
}

Test(drills, a_500_job_storm_keeps_the_ui_responsive_and_ends_right, .timeout = 900)
{
	char name[64], *cmd, *out, *log, *text, *p;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40, .env = "TAOTOP_DEBUG=1" };
	int i, done = 0;
	long worst_us = 0;

	snprintf(name, sizeof(name), "storm%d", rig_uniq());
	screen_open(&s, "drill-storm", &so);
	screen_wait(&s, 30, "polled", NULL);
	screen_filter(&s, name);
	/* 500 sbatch from a script on the login node, while taotop watches.
	 * Each job lives 5 s: the user's other jobs are seen through squeue,
	 * and one that came and went between two polls would never be (a
	 * taotop job is tracked by its record, never missed). */
	cmd = xasprintf("nohup sh -c 'for i in $(seq 1 500); do sbatch -J %s -t 2 -c 1 -o /dev/null "
	    "--wrap \"sleep 5\" >/dev/null; done' >/dev/null 2>&1 &", name);
	free(rig_ssh_ok(cmd));
	free(cmd);
	/* Keys are answered at once all along: help opens and closes. */
	for (i = 0; i < 15; i++) {
		screen_keys(&s, "?");
		screen_wait(&s, 5, "taotop keys", NULL);
		screen_keys(&s, "Escape");
		screen_keys(&s, "j");
		sleep(1);
	}
	/* All 500 end, and accounting says how. */
	cmd = xasprintf("sacct -n -X -P -S now-1hour --name=%s -o State | grep -c '^COMPLETED$' "
	    "|| true", name);
	for (i = 0; i < 600 && !done; i += 5) {
		out = rig_ssh_ok(cmd);
		done = atoi(out) == 500;
		free(out);
		if (!done)
			sleep(5);
	}
	free(cmd);
	cr_assert(done, "not all 500 jobs COMPLETED in 10 minutes");
	{
		char *all = xasprintf("filter: %s   500 of ", name);
		screen_wait(&s, 60, all, NULL);
		free(all);
	}
	/* The monitor agrees, counted from its list: page by page, 500
	 * distinct jobs shown Done and no row in another state. (Sorted by
	 * state, the default, so a straggler would be on the first page.)
	 * Wide enough for the header to say its sort beside the titles. */
	screen_resize(&s, 200, 40);
	for (i = 0; i < 4; i++) {
		char *by = screen_line_with(&s, ", by state");
		int sorted = by != NULL;
		free(by);
		if (sorted)
			break;
		screen_keys(&s, "o");
		usleep(300 * 1000);
	}
	if (i >= 4) {
		char *shown = screen_text(&s);
		cr_expect_lt(i, 4, "the list is never sorted by state:\n%s", shown);
		free(shown);
	}
	{
		size_t ndone = 0, nother = 0;
		char *other = NULL;

		for (i = 0; i < 6; i++) {
			free(other);
			ndone = count_done_rows(&s, name, &nother, &other);
			if (ndone == 500 && nother == 0)
				break;
			sleep(5);
		}
		cr_expect_eq(ndone, 500, "%zu of 500 jobs shown Done in the monitor's list", ndone);
		cr_expect_eq(nother, 0, "%zu rows not Done in the monitor's list, as: %s", nother,
		    other ? other : "");
		free(other);
	}
	/* How long keys waited, from taotop's own log: told, not judged (a
	 * speed is a benchmark's business, not a test's). */
	log = xasprintf("%s/taotop.log", s.dir);
	text = file_read_all(log, NULL, NULL);
	for (p = text; p != NULL && (p = strstr(p, "answered in ")) != NULL; p++) {
		long us = atol(p + 12);
		if (us > worst_us)
			worst_us = us;
	}
	cr_log_info("storm: slowest key answered in %ld us", worst_us);
	cr_expect_gt(worst_us, 0, "no key was answered during the storm, by taotop's log");
	free(text), free(log);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
}

/* The last "L<n>." line a log file holds on the shared storage, or 0. */
static int last_numbered(const char *path)
{
	char *text = file_read_all(path, NULL, NULL), *p;
	int n = 0;

	for (p = text; p != NULL && (p = strstr(p, "\nL")) != NULL; p++)
		if (p[2] >= '0' && p[2] <= '9')
			n = atoi(p + 2);
	free(text);
	return n;
}

/* Seconds on the monotonic clock. */
static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The link dies without a word (a VPN that drops, a NAT that forgets: no
 * FIN, no RST, nothing comes back) under a monitor following a job's log,
 * through the slowlink relay; then traffic goes through again. The status
 * bar says "not answering" within the worker's keepalive time (30 s), the
 * rows and the log's lines stay (the pane says how old), keys work; once
 * the relay passes traffic again taotop is back by itself, and nothing is
 * lost: the job's end is in its record and on screen, and the lines written
 * while the link was dead are in the pane, every one, in order.
 */
Test(drills, a_silent_drop_says_not_answering_reconnects_and_loses_nothing, .timeout = 400)
{
	char *dir = screen_shared_dir("drill-drop"), *env, *bundle, *tid, *jobs, *state, *log = NULL;
	char find[64], *text, *p;
	struct screen s;
	struct screen_opts so = { .cols = 130, .lines = 40 };
	struct rig_relay l;
	int n_drop, n_pass, mid, prev = 0, seen = 0;
	double t0, waited;

	rig_relay_start(&l, 2297, 5);
	so.hosts = l.hosts;
	so.known_hosts = l.known_hosts;
	so.env = "TAOTOP_DEBUG=1";	/* its log says what each poll did, if this fails */
	screen_open(&s, "drill-drop", &so);
	env = xasprintf("XDG_STATE_HOME=%s/state SLURM_BASE_RESULTS_DIR=lustre://%s/root", s.dir, dir);
	bundle = rig_bundle(s.dir, dir, "drilldrop_pyt",
	    "[sh, -c, 'for i in $(seq 1000 1700); do echo L$i.; sleep 0.1; done']", NULL);
	tid = submit(env, bundle);
	screen_filter(&s, tid);
	screen_wait_line(&s, 60, tid, "Running", NULL);
	screen_wait(&s, 30, "L10", NULL);
	rig_local("find %s/root -name main.out | head -1 > %s/logpath", dir, s.dir);
	{
		char *path = xasprintf("%s/logpath", s.dir);
		log = file_read_all(path, NULL, NULL);
		free(path);
		cr_assert(log != NULL && log[0] == '/', "main.out not found under %s/root", dir);
		log[strcspn(log, "\n")] = '\0';
	}

	rig_relay_set(&l, "drop");
	n_drop = last_numbered(log);
	t0 = mono_s();
	screen_wait(&s, 30, "rig: not answering for", NULL);
	waited = mono_s() - t0;
	cr_log_info("drill: 'not answering' %.1f s after the drop", waited);
	/* The last known rows and lines stay, the pane says how old. */
	screen_wait_line(&s, 5, tid, "Running", NULL);
	screen_wait(&s, 30, " s old", NULL);
	{
		char *shown = screen_line_with(&s, "L1");
		cr_assert_not_null(shown, "the pane went blank");
		free(shown);
	}
	screen_keys(&s, "?");
	screen_wait(&s, 5, "taotop keys", NULL);
	screen_keys(&s, "Escape");
	sleep(8);
	rig_relay_set(&l, "pass");
	n_pass = last_numbered(log);
	cr_assert_gt(n_pass, n_drop + 20, "the job wrote nothing while the link was dead (%d, %d)",
	    n_drop, n_pass);

	/* Back by itself, and the job runs to its end, seen. */
	t0 = mono_s();
	screen_wait(&s, 120, "rig: 127.0.0.1:", ", polled ", NULL);
	cr_log_info("drill: back %.1f s after the relay passed traffic again", mono_s() - t0);
	screen_wait(&s, 120, "L1700.", NULL);
	/* A user looking (Ctrl-L): the quiet cluster's polls, backed off to a
	 * minute meanwhile, come at their base rate again. */
	screen_keys(&s, "C-l");
	/* Ended as the scheduler says, and as taotop judges any job whose
	 * TAO wrote no final status (this one is a shell loop): the record
	 * followed it through the outage to its end. Ending first, while
	 * taotop gives shared storage its 30 s to show a final line late
	 * (engine/track/tracker_reconcile.c's STATUS_LAG_S), then Error. */
	screen_wait_line(&s, 120, tid, "Error", "COMPLETED", NULL);
	jobs = xasprintf("%s/state/taotop/jobs", s.dir);
	state = record_state(jobs, tid);
	cr_expect_str_eq(state, "Error", "the record after the drop");
	free(state);

	/* The lines of the outage: found in the pane, consecutive. */
	mid = (n_drop + n_pass) / 2;
	snprintf(find, sizeof(find), "L%d.", mid);
	screen_keys(&s, "Tab");
	screen_keys(&s, "z");
	screen_keys(&s, "/");
	screen_type(&s, find);
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, find, NULL);
	text = screen_text(&s);
	/* Zoomed, the pane's rows start each screen line. */
	for (p = text; *p != '\0'; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		int n;
		if (sscanf(p, "L%d.", &n) != 1)
			continue;
		if (prev != 0)
			cr_expect_eq(n, prev + 1, "L%d. after L%d. (lost or doubled):\n%s", n, prev, text);
		prev = n;
		seen++;
	}
	cr_expect_gt(seen, 10, "%d numbered lines shown:\n%s", seen, text);
	free(text);

	screen_keys(&s, "Escape");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 15), 0);
	screen_close(&s);
	rig_relay_stop(&l);
	free(log), free(jobs), free(bundle), free(env), free(tid), free(dir);
}

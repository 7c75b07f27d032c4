/*
 * Logs over SFTP against the real server: tails that read little of a large
 * file, following by offset with every line exactly once, '\r' rewrites,
 * files that shrink or do not exist yet, both panes followed together, and
 * `taotop logs --follow` itself (the long forms; the drills use -f -n)
 * on a file growing at 1 MiB/s.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/logs/logtail.h"
#include "engine/store/store.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char *scratch(const char *name)
{
	const struct rig *r = rig_get();
	char *dir = xasprintf("%s/log-tests/%s-%d", r->shared, name, rig_uniq());
	char *cmd = xasprintf("rm -rf %s && mkdir -p %s", dir, dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
	return dir;
}

static struct conn *rig_conn(void)
{
	struct conn_target t;
	rig_target(&t);
	return conn_new(&t);
}

Test(logs, tail_reads_the_end_of_a_large_file_only, .timeout = 60)
{
	struct conn *c = rig_conn();
	char *dir = scratch("tail"), *err = NULL;
	char *path = xasprintf("%s/main.out", dir);
	char *cmd = xasprintf("seq -f 'line %%07g of a log that is long enough' 1 400000 > %s", path);
	struct buf out;
	uint64_t end;
	int missing;

	free(rig_ssh_ok(cmd));
	buf_init(&out);
	const struct conn_counters *k = conn_counters(c);
	uint64_t before = k->sftp_bytes_read + k->exec_bytes_read;
	unsigned long execs = k->execs;
	cr_assert_eq(log_tail(c, path, 3, 0, &out, &end, &missing, &err), 0, "%s", err);
	cr_expect_str_eq(out.data, "line 0399998 of a log that is long enough\n"
	    "line 0399999 of a log that is long enough\nline 0400000 of a log that is long enough\n");
	/* Only the lines come back, in one command. */
	uint64_t read = k->sftp_bytes_read + k->exec_bytes_read - before;
	cr_expect(read <= 1024, "%lu bytes came back from a %lu-byte file for 3 lines",
	    (unsigned long)read, (unsigned long)end);
	cr_expect_eq(k->execs - execs, 1, "one round trip");

	/* More lines than one block holds: it reads back as far as needed. */
	buf_reset(&out);
	cr_assert_eq(log_tail(c, path, 5000, 0, &out, &end, &missing, &err), 0, "%s", err);
	size_t lines = 0;
	for (size_t i = 0; i < out.len; i++)
		lines += out.data[i] == '\n';
	cr_expect_eq(lines, 5000);
	cr_expect(strncmp(out.data, "line 0395001 ", 13) == 0, "%.20s", out.data);

	/* NULs, escapes and a line of megabytes: the lines before it still
	 * come back, whole, and the end offset is the file's. */
	{
		char *bin = xasprintf("%s/hostile.out", dir);
		char *mk = xasprintf("{ printf 'first\\nnul:\\000\\000:end\\n'; head -c 3000000 /dev/zero "
		    "| tr '\\0' x; printf '\\nlast\\n'; } > %s", bin);
		free(rig_ssh_ok(mk));
		buf_reset(&out);
		cr_assert_eq(log_tail(c, bin, 10, 0, &out, &end, &missing, &err), 0, "%s", err);
		cr_expect_eq(end, 6 + 11 + 3000000 + 1 + 5);
		cr_expect(out.len == 6 + 11 + 3000001 + 5 && memcmp(out.data, "first\nnul:\0\0:end\nxxx", 20)
		    == 0 && memcmp(out.data + out.len - 7, "x\nlast\n", 7) == 0, "%zu bytes: %.30s",
		    out.len, out.data);
		free(mk), free(bin);
	}

	char *nope = xasprintf("%s/none.out", dir);
	cr_expect_eq(log_tail(c, nope, 3, 0, &out, &end, &missing, &err), -1);
	cr_expect(missing, "a log not there yet is told apart from an error");
	free(nope), free(err), free(cmd), free(path), free(dir);
	buf_free(&out);
	conn_free(c);
}

Test(logs, follow_sees_each_line_once_collapses_cr_and_restarts_on_shrink, .timeout = 60)
{
	struct conn *c = rig_conn();
	char *dir = scratch("follow"), *err = NULL;
	char *path = xasprintf("%s/main.out", dir);
	struct log_follow f;
	struct buf lines;

	log_follow_init(&f, path, 0);
	buf_init(&lines);
	cr_expect_eq(log_follow_tick(&f, c, &lines, &err), 0, "a missing file is waited for: %s", err);
	cr_expect_null(err, "waiting is not an error");
	cr_expect_eq(lines.len, 0);

	/* A writer appends 2000 lines in small bursts while we follow. */
	char *cmd = xasprintf("nohup sh -c 'for i in $(seq 1 2000); do echo w$i; "
	    "[ $((i %% 100)) = 0 ] && sleep 0.05; done >> %s; "
	    "printf \"epoch 1: 10%%%%\\r epoch 1: 50%%%%\\r epoch 1: 100%%%%\\n\" >> %s' >/dev/null 2>&1 &",
	    path, path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	time_t end = time(NULL) + 30;
	while (time(NULL) < end && (lines.len == 0 || strstr(lines.data, "100%") == NULL)) {
		cr_assert_eq(log_follow_tick(&f, c, &lines, &err), 0, "%s", err);
		usleep(20 * 1000);
	}
	char *p = lines.data;
	for (int i = 1; i <= 2000; i++) {
		char want[16];
		snprintf(want, sizeof(want), "w%d\n", i);
		cr_assert(strncmp(p, want, strlen(want)) == 0, "line %d: '%.10s'", i, p);
		p += strlen(want);
	}
	cr_expect_str_eq(p, " epoch 1: 100%\n", "the progress bar's last state only");

	/* Truncated and written anew: read from the start again. */
	cmd = xasprintf("echo fresh > %s", path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	buf_reset(&lines);
	cr_assert_eq(log_follow_tick(&f, c, &lines, &err), 0, "%s", err);
	cr_expect(f.restarted);
	cr_expect_str_eq(lines.data, "fresh\n");
	buf_free(&lines);
	log_follow_free(&f);
	free(path), free(dir);
	conn_free(c);
}

/* The monitor's two panes followed together (their reads in one round
 * trip, files kept open between ticks): a log that appears late, empty at
 * first, one truncated in place, and a connection dropped between ticks,
 * each line once. */
/* Follow until lines holds want (or 40 s pass); whether a restart was seen. */
static int follow_until(struct log_follow *f, struct conn *c, struct buf *lines, const char *want)
{
	int restarted = 0;
	char *err = NULL;

	for (int i = 0; i < 160 && (lines->len == 0 || strstr(lines->data, want) == NULL); i++) {
		cr_assert_eq(log_follow_tick(f, c, lines, &err), 0, "%s", err);
		restarted |= f->restarted;
		if (lines->len == 0 || strstr(lines->data, want) == NULL)
			usleep(250 * 1000);
	}
	cr_assert(lines->len > 0 && strstr(lines->data, want) != NULL, "'%s' never came: '%s'",
	    want, lines->data ? lines->data : "");
	return restarted;
}

/* A log replaced under its name (written anew and renamed over it, as a
 * user's rotation does; not truncated in place, as SLURM does): the follow
 * notices by the name, longer or shorter, and goes on in the new file. */
Test(logs, follow_notices_a_file_replaced_under_its_name, .timeout = 120)
{
	struct conn *c = rig_conn();
	char *dir = scratch("replaced");
	char *path = xasprintf("%s/main.out", dir), *cmd;
	struct log_follow f;
	struct buf lines;

	cmd = xasprintf("printf 'old-1\\nold-2\\n' > %s", path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	log_follow_init(&f, path, 0);
	buf_init(&lines);
	follow_until(&f, c, &lines, "old-2\n");
	cr_expect_str_eq(lines.data, "old-1\nold-2\n");

	/* A longer file in its place. */
	cmd = xasprintf("printf 'a longer new file, line 1\\n' > %s.new && mv %s.new %s", path, path,
	    path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	buf_reset(&lines);
	cr_expect(follow_until(&f, c, &lines, "line 1\n"), "read from its start as a new file");
	cr_expect_str_eq(lines.data, "a longer new file, line 1\n", "nothing of the old one");
	/* And followed: what comes to the new file shows. */
	cmd = xasprintf("echo 'line 2' >> %s", path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	buf_reset(&lines);
	cr_expect(!follow_until(&f, c, &lines, "line 2\n"), "the same file now");
	cr_expect_str_eq(lines.data, "line 2\n");

	/* A shorter one, removed and made again. */
	cmd = xasprintf("rm %s && echo short > %s", path, path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	buf_reset(&lines);
	cr_expect(follow_until(&f, c, &lines, "short\n"), "read from its start as a new file");
	cr_expect_str_eq(lines.data, "short\n");
	buf_free(&lines);
	log_follow_free(&f);
	free(path), free(dir);
	conn_free(c);
}

Test(logs, both_panes_follow_together_through_a_late_file_a_shrink_and_a_reconnect,
    .timeout = 60)
{
	struct conn *c = rig_conn();
	char *dir = scratch("panes"), *err = NULL;
	char *out = xasprintf("%s/main.out", dir), *errf = xasprintf("%s/main.err", dir);
	struct log_follow f[2];
	struct buf lines[2];
	char *cmd;

	cmd = xasprintf("printf 'o1\\no2\\n' > %s", out);
	free(rig_ssh_ok(cmd));
	free(cmd);
	log_follow_init(&f[0], out, 0);
	log_follow_init(&f[1], errf, 0);
	buf_init(&lines[0]), buf_init(&lines[1]);
	cr_assert_eq(log_follow_ticks(f, 2, c, lines, &err), 0, "%s", err);
	cr_expect_str_eq(lines[0].data, "o1\no2\n");
	cr_expect_eq(lines[1].len, 0, "main.err is not there yet: waited for");
	cr_expect_null(err);

	/* main.err created empty (a job starting): nothing to read, no wait. */
	cmd = xasprintf(": > %s", errf);
	free(rig_ssh_ok(cmd));
	free(cmd);
	cr_assert_eq(log_follow_ticks(f, 2, c, lines, &err), 0, "%s", err);
	cr_expect_eq(lines[1].len, 0);
	cr_expect_eq(f[1].offset, 0);

	cmd = xasprintf("printf 'o3\\n' >> %s; printf 'e1\\ne2\\n' > %s", out, errf);
	free(rig_ssh_ok(cmd));
	free(cmd);
	buf_reset(&lines[0]), buf_reset(&lines[1]);
	cr_assert_eq(log_follow_ticks(f, 2, c, lines, &err), 0, "%s", err);
	cr_expect_str_eq(lines[0].data, "o3\n", "only what was appended");
	cr_expect_str_eq(lines[1].data, "e1\ne2\n", "the late file from its start");

	/* Nothing new: nothing read, nothing restarted. */
	buf_reset(&lines[0]), buf_reset(&lines[1]);
	cr_assert_eq(log_follow_ticks(f, 2, c, lines, &err), 0, "%s", err);
	cr_expect_eq(lines[0].len + lines[1].len, 0);
	cr_expect(!f[0].restarted && !f[1].restarted);

	/* main.err truncated in place (a requeued job), main.out grows. */
	cmd = xasprintf("printf 'o4\\n' >> %s; echo new > %s", out, errf);
	free(rig_ssh_ok(cmd));
	free(cmd);
	cr_assert_eq(log_follow_ticks(f, 2, c, lines, &err), 0, "%s", err);
	cr_expect_str_eq(lines[0].data, "o4\n");
	cr_expect(!f[0].restarted);
	cr_expect(f[1].restarted, "the shrink is noticed without a stat");
	cr_expect_str_eq(lines[1].data, "new\n");

	/* The connection drops between ticks: the kept files go with it,
	 * and the next tick opens them again where it stopped. */
	conn_disconnect(c);
	cmd = xasprintf("printf 'o5\\n' >> %s; printf 'e3\\n' >> %s", out, errf);
	free(rig_ssh_ok(cmd));
	free(cmd);
	buf_reset(&lines[0]), buf_reset(&lines[1]);
	cr_assert_eq(log_follow_ticks(f, 2, c, lines, &err), 0, "%s", err);
	cr_expect_str_eq(lines[0].data, "o5\n");
	cr_expect_str_eq(lines[1].data, "e3\n");

	for (int i = 0; i < 2; i++) {
		buf_free(&lines[i]);
		log_follow_free(&f[i]);
	}
	free(out), free(errf), free(dir);
	conn_free(c);
}

Test(logs, cli_follow_of_a_file_growing_1_mib_per_second_for_20_s, .timeout = 240)
{
	const struct rig *r = rig_get();
	char state[] = "/tmp/taotop-logs-XXXXXX", *err = NULL;
	char *dir = scratch("cli");

	cr_assert_not_null(mkdtemp(state));
	char *jobs = xasprintf("%s/taotop/jobs", state);
	struct record_store *st = store_open(jobs, &err);
	cr_assert_not_null(st, "%s", err);
	char *id = store_mint_id(st);
	struct job_record *rec = record_new(id);
	record_set(&rec->cluster, "default");
	record_set(&rec->backend_ref, "1");
	record_set(&rec->log_dir, dir);
	cr_assert_eq(store_create(st, rec, &err), 0, "%s", err);
	char *logdir = xasprintf("%s/%s-1", dir, id);
	char *path = xasprintf("%s/main.out", logdir);

	/* taotop logs -f starts before the file exists, as for a pending job. */
	char *cmd = xasprintf("SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s "
	    "TAOTOP_KNOWN_HOSTS=%s XDG_STATE_HOME=%s timeout 180 %s logs %s --lines 0 --follow > %s/out 2>%s/err",
	    r->user, r->host, r->port, r->key, r->known_hosts, state, getenv("TAOTOP_BIN"), id,
	    state, state);
	FILE *bg = popen(cmd, "r");
	cr_assert_not_null(bg);
	/* Connected and looking (--lines 0 from a file that is there would
	 * start at its end): then the writer starts. */
	char *err_path = xasprintf("%s/err", state);
	char *said = rig_wait_file(err_path, "taotop: waiting for", 60);
	cr_assert(said != NULL && strstr(said, "taotop: waiting for") != NULL,
	    "taotop logs -f did not say it waits for the file: %s", said);
	free(said), free(err_path);
	/* 20 s, each second 10000 numbered lines of 100 bytes: 1 MiB/s. */
	char *writer = xasprintf("mkdir -p %s && for s in $(seq 1 20); do "
	    "seq -f \"s$s-%%06g-%s\" 1 10000 >> %s; sleep 1; done; echo END >> %s", logdir,
	    "................................................................................", path, path);
	free(rig_ssh_ok(writer));
	/* The follow ends when END has come through (a loaded machine, a
	 * sanitizer build: it may trail the writer by some seconds). */
	char *out_path = xasprintf("%s/out", state);
	free(rig_wait_file(out_path, "\nEND\n", 90));
	rig_local("pkill -f -- 'logs %s --lines 0 --follow'", id);
	pclose(bg);

	FILE *f = fopen(out_path, "r");
	cr_assert_not_null(f);
	char line[256];
	long want_s = 1, want_i = 1, got = 0;
	int ended = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		long s, i;
		if (strcmp(line, "END\n") == 0) {
			ended = 1;
			break;
		}
		cr_assert_eq(sscanf(line, "s%ld-%ld-", &s, &i), 2, "garbled line %ld: %s", got, line);
		cr_assert(s == want_s && i == want_i, "line %ld: s%ld-%ld, wanted s%ld-%ld "
		    "(lost or doubled)", got, s, i, want_s, want_i);
		got++;
		if (++want_i > 10000) {
			want_i = 1;
			want_s++;
		}
	}
	fclose(f);
	cr_expect_eq(got, 200000, "saw %ld of 200000 lines", got);
	cr_expect(ended, "END was not seen");
	free(out_path), free(writer), free(cmd), free(path), free(logdir), free(jobs), free(id);
	record_free(rec);
	store_close(st);
	free(dir);
}

Test(logs, each_task_of_a_job_array_has_its_own_log, .timeout = 90)
{
	const struct rig *r = rig_get();
	char *dir = scratch("array");
	char state[] = "/tmp/taotop-arr-XXXXXX";
	cr_assert_not_null(mkdtemp(state));
	/* %% in the pattern: scontrol leaves it doubled, the file has one. */
	char *cmd = xasprintf("cd %s && sbatch --parsable -a 1-4 -J arr -t 2 -o 'arr-%%A_%%a-%%x-%%%%.out' "
	    "--wrap 'echo task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID; sleep 30'", dir);
	char *array = rig_ssh_ok(cmd);
	free(cmd);
	/* Until every task has started and written its line (a fixed wait
	 * was too short under ASan on 24.11 once). */
	cmd = xasprintf("cd %s && grep -h '^task ' arr-* 2>/dev/null | wc -l", dir);
	for (int i = 0; i < 60; i++) {
		char *n = rig_ssh_ok(cmd);
		int started = atoi(n);
		free(n);
		if (started >= 4)
			break;
		sleep(1);
	}
	free(cmd);
	for (int t = 1; t <= 4; t++) {
		char *out = NULL;
		char *job = xasprintf("%s_%d", array, t);
		cmd = xasprintf("SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s TAOTOP_KNOWN_HOSTS=%s "
		    "XDG_STATE_HOME=%s %s logs %s -n 5", r->user, r->host, r->port, r->key,
		    r->known_hosts, state, getenv("TAOTOP_BIN"), job);
		const char *const argv[] = { "sh", "-c", cmd, NULL };
		int rc = rig_run(argv, &out);
		char *want = xasprintf("task %d of %s\n", t, array);
		cr_expect_eq(rc, 0, "%s: %s", job, out);
		cr_expect_str_eq(out, want, "task %d's log", t);
		free(want), free(out), free(cmd), free(job);
	}
	cmd = xasprintf("scancel %s", array);
	free(rig_ssh_ok(cmd));
	free(cmd), free(array), free(dir);
}

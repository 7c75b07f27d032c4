/*
 * src/ssh against the real OpenSSH server of the test cluster: exec, host
 * keys, failover, reconnects, a frozen server, quoting and SFTP. Tests that
 * kill, restart or freeze the server use a private sshd on a port of their
 * own, so parallel tests keep the rig's.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "ssh/worker.h"
#include "util/file.h"
#include "util/xmalloc.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct conn *rig_conn(void)
{
	struct conn_target t;
	rig_target(&t);
	return conn_new(&t);
}

/* Run cmd; fail the test unless it ran. */
static void run(struct conn *c, struct conn_exec *x, const char *cmd)
{
	char *err = NULL;
	conn_exec_init(x, cmd);
	enum conn_status st = conn_exec(c, x, &err);
	cr_assert_eq(st, CONN_OK, "%s: %s", cmd, err);
	free(err);
}

/* sha256 of bytes, by the system's sha256sum. */
static char *sha256(const void *data, size_t len)
{
	char path[] = "/tmp/taotop-sha-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_neq(fd, -1);
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	const char *const argv[] = { "sha256sum", path, NULL };
	char *out = NULL;
	cr_assert_eq(rig_run(argv, &out), 0);
	unlink(path);
	out[64] = '\0';
	return out;
}

Test(ssh, exec_keeps_stdout_stderr_and_exit_codes_apart, .timeout = 60)
{
	struct conn *c = rig_conn();
	struct conn_exec x;

	run(c, &x, "echo out; echo err >&2; exit 3");
	cr_expect_str_eq(x.out.data, "out\n");
	cr_expect_str_eq(x.err.data, "err\n");
	cr_expect_eq(x.exit_status, 3);
	cr_expect_str_eq(x.exit_signal, "");
	conn_exec_free(&x);

	run(c, &x, "true");
	cr_expect_eq(x.exit_status, 0);
	conn_exec_free(&x);

	run(c, &x, "exit 255");
	cr_expect_eq(x.exit_status, 255);
	conn_exec_free(&x);

	run(c, &x, "kill -KILL $$");
	cr_expect_eq(x.exit_status, -1);
	cr_expect_str_eq(x.exit_signal, "KILL", "killed by '%s'", x.exit_signal);
	conn_exec_free(&x);

	/* The login shell runs it, as OpenSSH does: the user's PATH and env. */
	run(c, &x, "echo $SLURM_CONF; command -v sbatch");
	cr_expect(strstr(x.out.data, "slurm.conf\n") != NULL, "%s", x.out.data);
	cr_expect(strstr(x.out.data, "/sbatch") != NULL, "%s", x.out.data);
	conn_exec_free(&x);

	cr_expect_eq(conn_counters(c)->connects, 1, "one connection for all commands");
	cr_expect_eq(conn_counters(c)->execs, 5);
	conn_free(c);
}

Test(ssh, ten_mib_each_way_intact, .timeout = 120)
{
	struct conn *c = rig_conn();
	struct conn_exec x;
	size_t n = 10u << 20;
	char *data = xmalloc(n), *want;

	cr_assert_eq(getrandom(data, n, 0), (ssize_t)n);
	want = sha256(data, n);

	/* stdin in, checksum out */
	conn_exec_init(&x, "sha256sum | cut -c1-64");
	x.in = data;
	x.in_len = n;
	cr_assert_eq(conn_exec(c, &x, NULL), CONN_OK);
	cr_expect_eq(x.exit_status, 0);
	x.out.data[strcspn(x.out.data, "\n")] = '\0';
	cr_expect_str_eq(x.out.data, want, "stdin arrived damaged");
	conn_exec_free(&x);

	/* 10 MiB in and the same 10 MiB out at once: cat echoes while we write,
	 * which deadlocks a client that writes all before reading. */
	conn_exec_init(&x, "cat");
	x.in = data;
	x.in_len = n;
	cr_assert_eq(conn_exec(c, &x, NULL), CONN_OK);
	cr_expect_eq(x.out.len, n);
	cr_expect(x.out.len == n && memcmp(x.out.data, data, n) == 0, "echo differs");
	cr_expect_eq(x.out_cut, 0);
	conn_exec_free(&x);

	/* 10 MiB generated remotely, with its checksum on stderr. */
	run(c, &x, "f=$(mktemp) && head -c 10485760 /dev/urandom > $f && "
	    "sha256sum < $f | cut -c1-64 >&2 && cat $f && rm -f $f");
	cr_expect_eq(x.out.len, n);
	char *got = sha256(x.out.data, x.out.len);
	x.err.data[strcspn(x.err.data, "\n")] = '\0';
	cr_expect_str_eq(got, x.err.data, "stdout arrived damaged");
	conn_exec_free(&x);

	/* A cap keeps memory bounded and says so. */
	conn_exec_init(&x, "head -c 1000000 /dev/zero");
	x.out_cap = 1000;
	cr_assert_eq(conn_exec(c, &x, NULL), CONN_OK);
	cr_expect_eq(x.out.len, 1000);
	cr_expect_eq(x.out_cut, 1);
	cr_expect_eq(x.exit_status, 0, "the command still ran to its end");
	conn_exec_free(&x);

	free(got), free(want), free(data);
	conn_free(c);
}

Test(ssh, command_over_its_timeout_is_killed, .timeout = 60)
{
	struct conn *c = rig_conn();
	struct conn_exec x;
	char *err = NULL;

	/* Connected first: the limit counts from the command's start. */
	run(c, &x, "true");
	conn_exec_free(&x);
	conn_exec_init(&x, "sleep 31.25");
	x.timeout_ms = 1000;
	double t0 = now_s();
	cr_expect_eq(conn_exec(c, &x, &err), CONN_TIMEOUT);
	double took = now_s() - t0;
	cr_expect(took < 8, "took %.1f s (the command runs 31)", took);
	cr_expect(strstr(err, "over its 1 s limit and was killed") != NULL, "%s", err);
	conn_exec_free(&x);
	free(err);

	/* The remote process is gone (soon: the kill is asynchronous), and
	 * the connection still works. [.] keeps pgrep from matching its own
	 * shell's command line. */
	for (int i = 0; i < 100; i++) {
		run(c, &x, "pgrep -u $(id -u) -f 'sleep 31[.]25' || echo none");
		if (strcmp(x.out.data, "none\n") == 0)
			break;
		conn_exec_free(&x);
		usleep(100 * 1000);
	}
	cr_expect_str_eq(x.out.data, "none\n");
	conn_exec_free(&x);
	conn_free(c);
}

Test(ssh, fails_over_to_the_next_host, .timeout = 60)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char hosts[128], *err = NULL;

	rig_target(&t);
	snprintf(hosts, sizeof(hosts), "127.0.0.1:1,%s:%d", r->host, r->port);
	t.hosts = hosts;
	struct conn *c = conn_new(&t);
	cr_assert_eq(conn_connect(c, &err), CONN_OK, "%s", err);
	char want[64];
	snprintf(want, sizeof(want), "%s:%d", r->host, r->port);
	cr_expect_str_eq(conn_host(c), want);
	cr_expect(strncmp(conn_banner(c), "SSH-2.0-OpenSSH", 15) == 0, "%s", conn_banner(c));
	conn_free(c);
}

Test(ssh, all_hosts_down_is_a_clear_error_without_hanging, .timeout = 60)
{
	struct conn_target t;
	char *err = NULL;

	rig_target(&t);
	t.hosts = "127.0.0.1:1,127.0.0.1:3";
	struct conn *c = conn_new(&t);
	double t0 = now_s();
	cr_expect_eq(conn_connect(c, &err), CONN_UNREACHABLE);
	cr_expect(now_s() - t0 < t.connect_timeout_s, "took %.1f s", now_s() - t0);
	cr_expect(strstr(err, "no login host answered") != NULL, "%s", err);
	cr_expect(strstr(err, "127.0.0.1:1:") != NULL, "names the first host: %s", err);
	cr_expect(strstr(err, "127.0.0.1:3:") != NULL, "names the second host: %s", err);
	free(err);
	conn_free(c);
}

Test(ssh, unknown_host_key_refused_then_trusted_on_first_use, .timeout = 60)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char kh[] = "/tmp/taotop-kh-XXXXXX", *err = NULL, *fp_want;
	int fd = mkstemp(kh);

	close(fd);
	rig_target(&t);
	t.known_hosts = kh;
	struct conn *c = conn_new(&t);
	cr_assert_eq(conn_connect(c, &err), CONN_HOSTKEY_UNKNOWN, "%s", err);

	char *cmd = xasprintf("ssh-keygen -l -E sha256 -f %s/ssh/host_ed25519.pub | cut -d' ' -f2",
	    r->state);
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	cr_assert_eq(rig_run(argv, &fp_want), 0);
	fp_want[strcspn(fp_want, "\n")] = '\0';
	cr_expect_str_eq(conn_refused_fingerprint(c), fp_want);
	cr_expect(strstr(err, fp_want) != NULL, "the error shows the fingerprint: %s", err);
	cr_expect(strstr(err, "host key not in") != NULL, "%s", err);
	cr_expect(strstr(err, "accept it") != NULL, "the error says how to accept: %s", err);
	free(err), err = NULL;

	/* Accepting a different fingerprint than the server's is refused. */
	cr_expect_neq(conn_trust_host(c, t.hosts, "SHA256:not-the-real-one", &err), CONN_OK);
	free(err), err = NULL;

	cr_assert_eq(conn_trust_host(c, t.hosts, fp_want, &err), CONN_OK, "%s", err);
	cr_assert_eq(conn_connect(c, &err), CONN_OK, "%s", err);
	struct stat st;
	cr_expect(stat(kh, &st) == 0 && st.st_size > 0, "known_hosts was written");
	conn_free(c);
	unlink(kh);
	free(cmd), free(fp_want);
}

Test(ssh, changed_host_key_refused_and_never_trusted, .timeout = 60)
{
	struct rig_sshd d;
	struct conn_target t;
	char *err = NULL;

	rig_sshd_start(&d, 2231, 1);	/* a new host key... */
	const struct rig *r = rig_get();
	/* ...while known_hosts holds the rig's old one for this host:port. */
	cr_assert_eq(rig_local("printf '[127.0.0.1]:%d %%s\\n' \"$(cut -d' ' -f1,2 %s/ssh/host_ed25519.pub)\" > %s",
	    d.port, r->state, d.known_hosts), 0);
	rig_target(&t);
	t.hosts = d.hosts;
	t.known_hosts = d.known_hosts;
	struct conn *c = conn_new(&t);
	cr_expect_eq(conn_connect(c, &err), CONN_HOSTKEY_CHANGED);
	cr_expect(strstr(err, "HOST KEY CHANGED") != NULL, "%s", err);
	cr_expect(strstr(err, d.fingerprint) != NULL, "shows the new fingerprint: %s", err);
	free(err), err = NULL;
	cr_expect_neq(conn_trust_host(c, d.hosts, d.fingerprint, &err), CONN_OK,
	    "a changed key must not be accepted by the TOFU call");
	free(err), err = NULL;
	cr_expect_eq(conn_connect(c, &err), CONN_HOSTKEY_CHANGED, "still refused");
	free(err);
	conn_free(c);
	rig_sshd_free(&d);
}

Test(ssh, wrong_key_is_an_auth_error_that_says_what_to_do, .timeout = 60)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char key[] = "/tmp/taotop-key-XXXXXX", *err = NULL, *says;
	int fd = mkstemp(key);

	close(fd);
	unlink(key);
	cr_assert_eq(rig_local("ssh-keygen -q -t ed25519 -N '' -f %s", key), 0);
	rig_target(&t);
	t.key_path = key;
	unsetenv("SSH_AUTH_SOCK");
	setenv("HOME", "/nonexistent", 1);	/* no default identities either */
	struct conn *c = conn_new(&t);
	cr_expect_eq(conn_connect(c, &err), CONN_AUTH);
	says = xasprintf("authentication failed for user %s", r->user);
	cr_expect(strstr(err, says) != NULL, "%s", err);
	free(says);
	cr_expect(strstr(err, "SSH_KEY_PATH") != NULL, "%s", err);
	free(err);
	conn_free(c);
	rig_local("rm -f %s %s.pub", key, key);
}

Test(ssh, reconnects_by_itself_after_sshd_restart, .timeout = 60)
{
	struct rig_sshd d;
	struct conn_target t;
	struct conn_exec x;

	rig_sshd_start(&d, 2232, 0);
	rig_target(&t);
	t.hosts = d.hosts;
	t.known_hosts = d.known_hosts;
	struct conn *c = conn_new(&t);
	run(c, &x, "echo before");
	conn_exec_free(&x);

	rig_sshd_stop(&d);	/* kills the connection's processes too */
	rig_sshd_restart(&d);
	usleep(200 * 1000);

	run(c, &x, "echo after");
	cr_expect_str_eq(x.out.data, "after\n");
	cr_expect_eq(conn_counters(c)->connects, 2);
	conn_exec_free(&x);
	conn_free(c);
	rig_sshd_free(&d);
}

struct loop_count {
	struct worker	*w;
	int		 iterations;
};

Test(ssh, frozen_server_fails_the_request_at_its_timeout_not_the_caller, .timeout = 90)
{
	struct rig_sshd d;
	struct conn_target t;
	struct worker_task task;
	struct worker_msg m;
	struct conn_exec x;
	int connected = 0, done = 0, iterations = 0;

	rig_sshd_start(&d, 2233, 0);
	rig_target(&t);
	t.hosts = d.hosts;
	t.known_hosts = d.known_hosts;
	struct worker_opts o = { .keepalive_s = 60 };
	struct worker *w = worker_start(&t, &o);
	/* Wait until connected. */
	for (double end = now_s() + 10; !connected && now_s() < end;) {
		struct pollfd p = { .fd = worker_fd(w), .events = POLLIN };
		poll(&p, 1, 100);
		while (worker_next(w, &m)) {
			if (m.type == WMSG_EVENT && m.ev.kind == WEV_CONNECTED)
				connected = 1;
			if (m.type == WMSG_EVENT)
				worker_event_free(&m.ev);
		}
	}
	cr_assert(connected, "the worker did not connect");

	rig_sshd_signal_sessions(&d, SIGSTOP);
	conn_exec_init(&x, "echo frozen?");
	x.timeout_ms = 2000;
	worker_task_init(&task, worker_run_exec, &x);
	double t0 = now_s();
	worker_submit(w, &task);
	/* The caller's own loop keeps turning, 20 times a second. */
	while (!done && now_s() - t0 < 30) {
		struct pollfd p = { .fd = worker_fd(w), .events = POLLIN };
		poll(&p, 1, 50);
		iterations++;
		while (worker_next(w, &m)) {
			if (m.type == WMSG_DONE && m.task == &task)
				done = 1;
			if (m.type == WMSG_EVENT)
				worker_event_free(&m.ev);
		}
	}
	double took = now_s() - t0;
	cr_assert(done, "the request never came back");
	cr_expect_eq(task.status, CONN_TIMEOUT, "status %s: %s", conn_status_name(task.status), task.err);
	cr_expect(took >= 1.5 && took < 10, "failed after %.1f s, not at its 2 s timeout", took);
	cr_expect(strstr(task.err, d.hosts) != NULL, "names the host: %s", task.err);
	/* 20 a second when nothing stalls it; a loaded machine turns fewer. */
	cr_expect(iterations >= (int)(took * 5), "the caller's loop stalled: %d turns in %.1f s",
	    iterations, took);
	free(task.err);
	conn_exec_free(&x);

	/* Thawed (or not), a new request gets through on a new connection. */
	rig_sshd_signal_sessions(&d, SIGCONT);
	conn_exec_init(&x, "echo thawed");
	x.timeout_ms = 10000;
	worker_task_init(&task, worker_run_exec, &x);
	worker_call(w, &task, NULL, NULL);
	cr_expect_eq(task.status, CONN_OK, "%s", task.err);
	cr_expect_str_eq(x.out.data, "thawed\n");
	free(task.err);
	conn_exec_free(&x);
	worker_stop(w, NULL);
	rig_sshd_free(&d);
}

/* A task: stat the rig's shared folder over SFTP. */
static void run_stat(struct conn *c, struct worker_task *t)
{
	struct conn_stat st;

	t->status = conn_stat(c, rig_get()->shared, &st, &t->err);
}

/*
 * libssh's SFTP waits for an answer without end: a stat sent as the link
 * dies without a word (no FIN, no RST: the slowlink relay swallows
 * everything) would hold the worker forever. It fails once it has heard
 * nothing for the keepalive time, and the next request, the link back,
 * goes through on a new connection.
 */
Test(ssh, an_sftp_request_on_a_silently_dropped_link_ends_at_the_keepalive_time, .timeout = 90)
{
	struct rig_relay l;
	struct conn_target t;
	struct worker_task task;
	struct worker_opts o = { .keepalive_s = 3 };
	struct worker *w;
	double t0, took;

	rig_relay_start(&l, 2294, 0);
	rig_target(&t);
	t.hosts = l.hosts;
	t.known_hosts = l.known_hosts;
	t.connect_timeout_s = 2;
	w = worker_start(&t, &o);
	worker_task_init(&task, run_stat, NULL);
	worker_call(w, &task, NULL, NULL);
	cr_assert_eq(task.status, CONN_OK, "%s", task.err);

	rig_relay_set(&l, "drop");
	worker_task_init(&task, run_stat, NULL);
	t0 = now_s();
	worker_call(w, &task, NULL, NULL);
	took = now_s() - t0;
	cr_expect_neq(task.status, CONN_OK, "a stat answered on a dead link");
	/* libssh 0.10: 3 s of silence (the watchdog), then one reconnect the
	 * dead link swallows (2 s); libssh 0.11 (Debian 13) ends the request
	 * itself at the session's timeout (2 s), then the same reconnect. */
	cr_expect(took >= 1.5 && took < 15, "the stat came back after %.1f s: %s", took, task.err);
	free(task.err);

	rig_relay_set(&l, "pass");
	worker_task_init(&task, run_stat, NULL);
	worker_call(w, &task, NULL, NULL);
	cr_expect_eq(task.status, CONN_OK, "%s", task.err);
	free(task.err);
	worker_stop(w, NULL);
	rig_relay_stop(&l);
}

/*
 * A command needs its channel open answered before its exec can be sent, so
 * each command's channel is opened one command ahead (conn_exec.c): the
 * first command of a session costs two round trips, every later one one,
 * with a script on standard input too, and after the server closed the
 * channel waiting ahead (a reconnection) the next command still runs.
 * Counted at the relay, as the far-link benchmark does.
 */
Test(ssh, commands_after_the_first_cost_one_round_trip_each, .timeout = 60)
{
	struct rig_relay l;
	struct conn_target t;
	struct conn_exec x;
	long long rt, least = 99, least_in = 99;
	char *err = NULL;

	rig_relay_start(&l, 2293, 5);
	rig_target(&t);
	t.hosts = l.hosts;
	t.known_hosts = l.known_hosts;
	struct conn *c = conn_new(&t);
	cr_assert_eq(conn_connect(c, &err), CONN_OK, "%s", err);
	/* The key's signature sent at once, no "none" request first. */
	rt = rig_relay_round_trips(&l);
	if (rt > 4) {
		char *chunks = rig_relay_chunks(&l);
		cr_expect_leq(rt, 4, "the connect: %lld round trips; what crossed the relay:\n%s",
		    rt, chunks);
		free(chunks);
	}
	run(c, &x, "echo one");
	cr_expect_str_eq(x.out.data, "one\n");
	conn_exec_free(&x);
	/* What taotop controls: the command's own exchange, and a keepalive
	 * of its own only when the server held the exit status 50 ms past the
	 * output's end (conn_exec.c's idle; on a loaded machine sshd reaps
	 * the command late), each at most one round trip more. So the round
	 * trips less taotop's keepalives, the least of a few. */
	for (int i = 0; i < 4; i++) {
		unsigned long ka = conn_counters(c)->keepalives;
		rt = rig_relay_round_trips(&l);
		run(c, &x, "echo two");
		cr_expect_str_eq(x.out.data, "two\n");
		conn_exec_free(&x);
		rt = rig_relay_round_trips(&l) - rt;
		cr_expect_geq(rt, 1, "a command in no round trip: the relay's count is wrong");
		rt -= (long long)(conn_counters(c)->keepalives - ka);
		least = rt < least ? rt : least;

		ka = conn_counters(c)->keepalives;
		rt = rig_relay_round_trips(&l);
		conn_exec_init(&x, "cat; exit 3");
		x.in = "three\n";
		x.in_len = 6;
		cr_assert_eq(conn_exec(c, &x, &err), CONN_OK, "%s", err);
		cr_expect_str_eq(x.out.data, "three\n");
		cr_expect_eq(x.exit_status, 3);
		conn_exec_free(&x);
		rt = rig_relay_round_trips(&l) - rt;
		rt -= (long long)(conn_counters(c)->keepalives - ka);
		least_in = rt < least_in ? rt : least_in;
	}
	cr_expect_leq(least, 1, "a command after the first: %lld round trips (less keepalives)", least);
	cr_expect_leq(least_in, 2, "a command with stdin: %lld round trips (less keepalives)", least_in);

	/* The session and the channel waiting ahead gone (sshd restarted its
	 * sessions, say): the next command reconnects and runs. */
	conn_test_cut_after(c, "echo cut");
	conn_exec_init(&x, "echo cut");
	cr_expect_eq(conn_exec(c, &x, &err), CONN_DISCONNECTED);
	conn_exec_free(&x);
	free(err), err = NULL;
	conn_test_cut_after(c, NULL);
	run(c, &x, "echo four");
	cr_expect_str_eq(x.out.data, "four\n");
	conn_exec_free(&x);
	cr_expect_eq(conn_counters(c)->connects, 2);
	conn_free(c);
	rig_relay_stop(&l);
}

Test(ssh, worker_reports_connection_events, .timeout = 60)
{
	struct conn_target t;
	struct worker_msg m;
	int saw_unreachable = 0, saw_reconnecting = 0;

	rig_target(&t);
	t.hosts = "127.0.0.1:1";
	struct worker *w = worker_start(&t, NULL);
	for (double end = now_s() + 10; !(saw_unreachable && saw_reconnecting) && now_s() < end;) {
		struct pollfd p = { .fd = worker_fd(w), .events = POLLIN };
		poll(&p, 1, 100);
		while (worker_next(w, &m)) {
			if (m.type != WMSG_EVENT)
				continue;
			if (m.ev.kind == WEV_UNREACHABLE) {
				saw_unreachable = 1;
				cr_expect(strstr(m.ev.error, "127.0.0.1:1") != NULL, "%s", m.ev.error);
			}
			if (m.ev.kind == WEV_RECONNECTING) {
				saw_reconnecting = 1;
				cr_expect_eq(m.ev.in_s, 1, "first backoff is 1 s");
			}
			worker_event_free(&m.ev);
		}
	}
	cr_expect(saw_unreachable && saw_reconnecting);
	worker_stop(w, NULL);
}

Test(ssh, quoting_round_trips_through_the_remote_shell, .timeout = 120)
{
	enum { N = 4000, BATCH = 400 };
	static char strs[N][48];
	static const char special[] = "'\"$`\\\n\t *?[]{}()<>|&;#~!-=%^";
	const char *attacks[] = { "$(touch /tmp/pwned)", "`touch /tmp/pwned`",
	    "'; touch /tmp/pwned; '", "\"; touch /tmp/pwned; \"", "$(touch${IFS}/tmp/pwned)",
	    "\n touch /tmp/pwned", "-n", "--", "*", "~", "" };
	unsigned seed = 4242;
	struct conn *c = rig_conn();
	size_t na = sizeof(attacks) / sizeof(attacks[0]);

	rig_local("rm -f /tmp/pwned");
	for (int i = 0; i < N; i++) {
		if ((size_t)i < na) {
			snprintf(strs[i], sizeof(strs[i]), "%s", attacks[i]);
			continue;
		}
		size_t len = (size_t)rand_r(&seed) % (sizeof(strs[i]) - 1), k;
		for (k = 0; k < len; k++) {
			int pick = rand_r(&seed) % 3;
			strs[i][k] = pick == 0 ? special[rand_r(&seed) % (sizeof(special) - 1)]
			    : pick == 1 ? (char)(1 + rand_r(&seed) % 255) : (char)('a' + rand_r(&seed) % 26);
		}
		strs[i][len] = '\0';
	}
	for (int b = 0; b < N; b += BATCH) {
		struct buf cmd;
		struct conn_exec x;
		buf_init(&cmd);
		buf_adds(&cmd, "printf '%s\\0'");
		for (int i = b; i < b + BATCH; i++) {
			buf_addc(&cmd, ' ');
			sh_quote_buf(&cmd, strs[i], strlen(strs[i]));
		}
		run(c, &x, cmd.data);
		size_t off = 0;
		for (int i = b; i < b + BATCH; i++) {
			cr_assert(off < x.out.len, "string %d did not come back", i);
			cr_assert_str_eq(x.out.data + off, strs[i], "string %d changed", i);
			off += strlen(x.out.data + off) + 1;
		}
		conn_exec_free(&x);
		buf_free(&cmd);
	}
	struct stat st;
	cr_expect(stat("/tmp/pwned", &st) != 0, "an argument ran as a command");
	conn_free(c);
}

/* ---- SFTP ---------------------------------------------------------------------- */

static char *remote_dir(struct conn *c, const char *name)
{
	const struct rig *r = rig_get();
	char *dir = xasprintf("%s/ssh-tests/%s-%d", r->shared, name, rig_uniq());
	char *err = NULL;
	cr_assert_eq(conn_mkdir_p(c, dir, 0755, &err), CONN_OK, "%s", err);
	return dir;
}

struct watch {
	const char	*path;
	atomic_int	 stop;
	int		 seen;		/* stats that found the file */
	unsigned	 bad_mode;	/* a mode other than 0600, or 0 */
};

/* From a second connection, stat the file as fast as possible. */
static void *watch_mode(void *arg)
{
	struct watch *wt = arg;
	struct conn *c = rig_conn();
	struct conn_stat st;

	while (!atomic_load(&wt->stop)) {
		if (conn_stat(c, wt->path, &st, NULL) == CONN_OK) {
			wt->seen++;
			if (st.mode != 0600 && wt->bad_mode == 0)
				wt->bad_mode = st.mode | 0x10000;
		}
	}
	conn_free(c);
	return NULL;
}

Test(sftp, secret_file_is_0600_from_its_first_byte, .timeout = 120)
{
	struct conn *c = rig_conn();
	char *dir = remote_dir(c, "secret"), *err = NULL;
	char *path = xasprintf("%s/job_1.env", dir);
	size_t n = 16u << 20;
	char *data = xmalloc(n);
	struct watch wt = { .path = path };
	pthread_t th;

	memset(data, 'x', n);
	atomic_init(&wt.stop, 0);
	pthread_create(&th, NULL, watch_mode, &wt);
	usleep(100 * 1000);
	cr_expect_eq(conn_write_file(c, path, data, n, 0600, CONN_WRITE_EXCL, &err), CONN_OK, "%s", err);
	usleep(100 * 1000);
	atomic_store(&wt.stop, 1);
	pthread_join(th, NULL);
	cr_expect(wt.seen > 0, "the watcher never saw the file");
	cr_expect_eq(wt.bad_mode, 0, "seen with mode %o", wt.bad_mode & 07777);

	/* O_EXCL: it never reuses a file that was there before. */
	cr_expect_neq(conn_write_file(c, path, "y", 1, 0600, CONN_WRITE_EXCL, &err), CONN_OK);
	cr_expect(strstr(err, "already exists") != NULL, "%s", err);
	free(err), free(data), free(path), free(dir);
	conn_free(c);
}

Test(sftp, read_at_offset_returns_the_exact_bytes, .timeout = 60)
{
	struct conn *c = rig_conn();
	char *dir = remote_dir(c, "read"), *err = NULL;
	char *path = xasprintf("%s/log", dir);
	struct conn_exec x;
	struct buf b;
	struct conn_stat st;

	char *cmd = xasprintf("printf 'line1\\nline2\\nline3\\n' > %s", path);
	run(c, &x, cmd);
	conn_exec_free(&x);
	buf_init(&b);
	cr_assert_eq(conn_read_at(c, path, 6, 6, &b, &err), CONN_OK, "%s", err);
	cr_expect_str_eq(b.data, "line2\n");
	buf_reset(&b);
	/* Each round trip to the server is counted (the poll's cost is
	 * measured with these): open, a read, the read that finds the end,
	 * close; a stat is one. */
	unsigned long req = conn_counters(c)->sftp_requests;
	cr_assert_eq(conn_read_at(c, path, 12, 100, &b, &err), CONN_OK, "%s", err);
	cr_expect_str_eq(b.data, "line3\n", "a short read at the end");
	cr_expect_eq(conn_counters(c)->sftp_requests - req, 4, "%lu requests for a short read",
	    conn_counters(c)->sftp_requests - req);
	buf_reset(&b);
	cr_assert_eq(conn_read_at(c, path, 18, 100, &b, &err), CONN_OK, "%s", err);
	cr_expect_eq(b.len, 0, "nothing past the end");
	req = conn_counters(c)->sftp_requests;
	cr_assert_eq(conn_stat(c, path, &st, &err), CONN_OK);
	cr_expect_eq(conn_counters(c)->sftp_requests - req, 1);
	cr_expect_eq(st.size, 18);
	cr_expect_eq(st.is_dir, 0);
	char *missing = xasprintf("%s/nope", dir);
	cr_expect_eq(conn_read_at(c, missing, 0, 10, &b, &err), CONN_NOTFOUND);
	cr_expect(strstr(err, "no such file") != NULL, "%s", err);
	cr_expect_eq(conn_stat(c, missing, &st, &err), CONN_NOTFOUND);
	buf_free(&b);
	free(err), free(cmd), free(missing), free(path), free(dir);
	conn_free(c);
}

Test(sftp, mkdir_p_makes_every_level_and_reports_a_file_in_the_way, .timeout = 60)
{
	struct conn *c = rig_conn();
	char *dir = remote_dir(c, "mkdir"), *err = NULL;
	char *deep = xasprintf("%s/a/b c/d", dir);
	struct conn_stat st;

	cr_expect_eq(conn_mkdir_p(c, deep, 0755, &err), CONN_OK, "%s", err);
	cr_expect_eq(conn_stat(c, deep, &st, NULL), CONN_OK);
	cr_expect(st.is_dir);
	cr_expect_eq(conn_mkdir_p(c, deep, 0755, &err), CONN_OK, "again: %s", err);
	char *file = xasprintf("%s/f", dir);
	cr_assert_eq(conn_write_file(c, file, "x", 1, 0644, 0, &err), CONN_OK, "%s", err);
	char *under = xasprintf("%s/f/g", dir);
	cr_expect_eq(conn_mkdir_p(c, under, 0755, &err), CONN_REMOTE);
	cr_expect(strstr(err, "is not a folder") != NULL, "%s", err);
	free(err), free(deep), free(file), free(under), free(dir);
	conn_free(c);
}

/* A file on the rig (the same machine), whole; fails the test if unreadable. */
static char *slurp(const char *path, size_t *len)
{
	char *err = NULL, *text = file_read_all(path, len, &err);
	cr_assert_not_null(text, "%s", err);
	return text;
}

Test(sftp, atomic_write_leaves_old_or_new_after_a_cut, .timeout = 120)
{
	struct conn *c = rig_conn();
	char *err = NULL;
	size_t n = 8u << 20, len;
	char *dir = remote_dir(c, "atomic");
	char *path = xasprintf("%s/spec.yaml", dir);
	char *fresh = xmalloc(n), *got;

	memset(fresh, 'N', n);
	cr_assert_eq(conn_write_file(c, path, "old\n", 4, 0644, CONN_WRITE_ATOMIC, &err), CONN_OK, "%s", err);

	/* Cut halfway through the upload: the old file stays whole. */
	conn_test_cut_after(c, ".taotop-");
	cr_expect_eq(conn_write_file(c, path, fresh, n, 0644, CONN_WRITE_ATOMIC, &err), CONN_DISCONNECTED);
	got = slurp(path, &len);
	cr_expect(len == 4 && memcmp(got, "old\n", 4) == 0, "old content damaged (%zu bytes)", len);
	free(got);

	/* Cut after the rename ran, before its answer: the new file is whole. */
	conn_test_cut_after(c, "mv -f");
	cr_expect_eq(conn_write_file(c, path, fresh, n, 0644, CONN_WRITE_ATOMIC, &err), CONN_DISCONNECTED);
	got = slurp(path, &len);
	cr_expect(len == n && memcmp(got, fresh, n) == 0, "new content damaged (%zu bytes)", len);
	free(got);

	/* Uncut (and reconnected by itself), a write replaces the file whole. */
	conn_test_cut_after(c, NULL);
	cr_assert_eq(conn_write_file(c, path, "third\n", 6, 0644, CONN_WRITE_ATOMIC, &err), CONN_OK, "%s", err);
	got = slurp(path, &len);
	cr_expect(len == 6 && memcmp(got, "third\n", 6) == 0);
	free(got);
	cr_expect_eq(conn_counters(c)->connects, 3, "reconnected after each cut");

	free(err), free(path), free(dir), free(fresh);
	conn_free(c);
}

Test(ssh, honours_ssh_config_aliases, .timeout = 60)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char cfg[] = "/tmp/taotop-sshcfg-XXXXXX", *err = NULL;
	int fd = mkstemp(cfg);
	FILE *f = fdopen(fd, "w");

	/* Everything comes from the config: host name, port, user, key. */
	fprintf(f, "Host rig-login\n  HostName %s\n  Port %d\n  User %s\n  IdentityFile %s\n",
	    r->host, r->port, r->user, r->key);
	fclose(f);
	memset(&t, 0, sizeof(t));
	t.hosts = "rig-login";
	t.known_hosts = r->known_hosts;
	t.ssh_config = cfg;
	unsetenv("SSH_AUTH_SOCK");
	struct conn *c = conn_new(&t);
	cr_expect_eq(conn_connect(c, &err), CONN_OK, "%s", err);
	cr_expect_str_eq(conn_host(c), "rig-login");
	struct conn_exec x;
	run(c, &x, "id -un");
	cr_expect(strncmp(x.out.data, r->user, strlen(r->user)) == 0 &&
	    strcmp(x.out.data + strlen(r->user), "\n") == 0, "%s", x.out.data);
	conn_exec_free(&x);
	conn_free(c);
	unlink(cfg);
	free(err);
}

Test(ssh, a_running_command_can_be_cancelled, .timeout = 60)
{
	struct conn_target t;
	struct worker_task task;
	struct conn_exec x;
	struct worker_msg m;
	int done = 0;

	rig_target(&t);
	struct worker *w = worker_start(&t, NULL);
	/* A sleep of this test's own, to see it running (not another's). */
	char *sleep_cmd = xasprintf("sleep 32.%d", rig_uniq());
	char *look = xasprintf("pgrep -f -x '%s' || true", sleep_cmd);
	conn_exec_init(&x, sleep_cmd);
	worker_task_init(&task, worker_run_exec, &x);
	worker_submit(w, &task);
	/* Cancelled while it runs (not while the worker still connects). */
	for (int i = 0; i < 100; i++) {
		char *out = rig_ssh_ok(look);
		int running = out[0] != '\0';
		free(out);
		if (running)
			break;
		usleep(100 * 1000);
	}
	free(look);
	double t0 = now_s();
	worker_cancel(w, &task);
	while (!done && now_s() - t0 < 10) {
		struct pollfd p = { .fd = worker_fd(w), .events = POLLIN };
		poll(&p, 1, 100);
		while (worker_next(w, &m)) {
			if (m.type == WMSG_DONE)
				done = 1;
			else
				worker_event_free(&m.ev);
		}
	}
	cr_assert(done);
	cr_expect_eq(task.status, CONN_CANCELLED, "%s", task.err);
	cr_expect(now_s() - t0 < 3, "cancel took %.2f s (the command runs 32)", now_s() - t0);
	free(task.err), free(sleep_cmd);
	conn_exec_free(&x);
	worker_stop(w, NULL);
}

Test(ssh, keepalive_finds_a_dead_peer_on_an_idle_connection, .timeout = 60)
{
	struct rig_sshd d;
	struct conn_target t;
	struct worker_msg m;
	int connected = 0, dropped = 0;

	rig_sshd_start(&d, 2235, 0);
	rig_target(&t);
	t.hosts = d.hosts;
	t.known_hosts = d.known_hosts;
	struct worker_opts o = { .keepalive_s = 1 };
	struct worker *w = worker_start(&t, &o);
	double t0 = now_s();
	while (!dropped && now_s() - t0 < 20) {
		struct pollfd p = { .fd = worker_fd(w), .events = POLLIN };
		poll(&p, 1, 100);
		while (worker_next(w, &m)) {
			if (m.type != WMSG_EVENT)
				continue;
			if (m.ev.kind == WEV_CONNECTED && !connected) {
				connected = 1;
				/* No request in flight: only a keepalive can notice. */
				rig_sshd_signal_sessions(&d, SIGSTOP);
				t0 = now_s();
			}
			if (m.ev.kind == WEV_DISCONNECTED && connected)
				dropped = 1;
			worker_event_free(&m.ev);
		}
	}
	cr_expect(connected, "never connected");
	cr_expect(dropped, "a frozen peer went unnoticed for %.0f s", now_s() - t0);
	cr_expect(now_s() - t0 < 10, "noticed after %.1f s (keepalives every 1 s)", now_s() - t0);
	worker_stop(w, NULL);
	rig_sshd_free(&d);
}

/*
 * One SSH session for every taotop on the laptop (ssh/lend.h): the CLI's
 * verbs through the agent and through a running monitor print what they
 * print on their own and exit the same; a killed lender leaves its
 * clients on their own connections with no error; another user is
 * refused; the agent ends by itself; a script of twenty `taotop status`
 * on a one-time-code server is asked for one code.
 *
 * Every test has a runtime folder of its own (XDG_RUNTIME_DIR): tests/run
 * turns sharing off for every other suite (TAOTOP_NO_SHARE=1), and each
 * test here turns it on for its own runs (TAOTOP_NO_SHARE empty) and
 * stops its agent at the end.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/xmalloc.h"

/* A test's folder: run/ the runtime folder (0700), state/ the records,
 * log the agent's and the verbs' log. */
struct place {
	char	*dir;
	char	*on;		/* env words: sharing on, here */
	char	*off;		/* the same, sharing off */
};

/* The test's folder, for its .fini: an agent a failed assertion left is
 * stopped there, never left for hours. */
static char *fini_on, *fini_dir;
static void stop_totp(void);

static void share_fini(void)
{
	stop_totp();
	if (fini_on != NULL) {
		char *out = NULL;
		rig_taotop(fini_on, "agent stop", &out);
		free(out);
		rig_local("rm -rf %s", fini_dir);
	}
}

TestSuite(share, .fini = share_fini);

static struct place open_place(void)
{
	char tmpl[] = "/tmp/taotop-share-XXXXXX";
	struct place p;

	cr_assert_not_null(mkdtemp(tmpl));
	p.dir = xstrdup(tmpl);
	cr_assert_eq(rig_local("mkdir -m 700 %s/run && mkdir %s/state", p.dir, p.dir), 0);
	p.on = xasprintf("TAOTOP_NO_SHARE= XDG_RUNTIME_DIR=%s/run XDG_STATE_HOME=%s/state "
	    "TAOTOP_LOG=%s/log", p.dir, p.dir, p.dir);
	p.off = xasprintf("TAOTOP_NO_SHARE=1 XDG_RUNTIME_DIR=%s/run XDG_STATE_HOME=%s/state "
	    "TAOTOP_LOG=%s/log.off", p.dir, p.dir, p.dir);
	fini_on = xstrdup(p.on);
	fini_dir = xstrdup(p.dir);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (f == NULL)
		return xstrdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = xcalloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = '\0';
	fclose(f);
	return s;
}

/* A file of NUL-separated words (a /proc environ), the NULs as spaces. */
static char *slurp_raw(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = xcalloc(1, 65537);
	size_t n = 0;

	if (f != NULL) {
		n = fread(s, 1, 65536, f);
		fclose(f);
	}
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	return s;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* The agent's log (and its stderr: a sanitizer's report lands there). */
static char *agent_log(const struct place *p)
{
	char *path = xasprintf("%s/log", p->dir), *s = slurp(path);

	free(path);
	return s;
}

static void close_place(struct place *p)
{
	char *out = NULL, *log;

	rig_taotop(p->on, "agent stop", &out);
	free(out);
	log = agent_log(p);
	/* An agent built with the sanitizers reports at its end, there. */
	cr_expect(strstr(log, "Sanitizer") == NULL && strstr(log, "runtime error") == NULL,
	    "the agent's log holds a sanitizer's report:\n%s", log);
	free(log);
	rig_local("rm -rf %s", p->dir);
	free(p->dir), free(p->on), free(p->off);
	free(fini_on), free(fini_dir);
	fini_on = fini_dir = NULL;
}

/* `taotop agent status`'s count of requests served, or -1: none runs. */
static int agent_served(const struct place *p)
{
	char *out = NULL, *at;
	int n = -1;

	/* Its line, "agent (pid N): lends to K clients now, R requests
	 * served, ...", not a monitor's. */
	if (rig_taotop(p->on, "agent status", &out) == 0 && (at = strstr(out, "agent (pid ")) != NULL &&
	    (at == out || at[-1] == '\n') && (at = strstr(at, " clients now, ")) != NULL)
		n = atoi(at + 14);
	else if (out != NULL && (at = strstr(out, "agent (pid ")) != NULL &&
	    (at = strstr(at, " client now, ")) != NULL)
		n = atoi(at + 13);
	free(out);
	return n;
}

/* The agent of this test's folder killed (SIGKILL: no goodbye), by the
 * pid it says. */
static void kill_agent(const struct place *p)
{
	char *out = NULL, *at;
	int pid = 0;

	if (rig_taotop(p->on, "agent status", &out) == 0 && (at = strstr(out, "agent (pid ")) != NULL)
		pid = atoi(at + 11);
	free(out);
	cr_assert_gt(pid, 1, "no agent to kill");
	cr_assert_eq(kill(pid, SIGKILL), 0);
	for (int i = 0; i < 50 && kill(pid, 0) == 0; i++)
		usleep(100 * 1000);
}

/* `taotop logs ID -f` borrowing, in the background (its pid in
 * DIR/follow.pid): the file it writes to (caller frees). */
static char *follow_start(const struct place *p, const char *id)
{
	const struct rig *r = rig_get();
	char *follow = xasprintf("%s/follow.txt", p->dir);

	cr_assert_eq(rig_local("cd / && env SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s "
	    "TAOTOP_KNOWN_HOSTS=%s TAOTOP_CLUSTER=rig TAOTOP_CONFIG=/nonexistent/config.yaml %s "
	    "%s logs %s -f > %s 2>&1 & echo $! > %s/follow.pid", r->user, r->host, r->port, r->key,
	    r->known_hosts, p->on, getenv("TAOTOP_BIN"), id, follow, p->dir), 0);
	return follow;
}

/* The same verb with its own connection and through the lender: the same
 * output (stdout and stderr) and exit code. */
static void same_both_ways(const struct place *p, const char *args, int want_rc)
{
	char *own = NULL, *lent = NULL;
	int rc_own = rig_taotop(p->off, args, &own), rc_lent = rig_taotop(p->on, args, &lent);

	cr_expect_eq(rc_own, want_rc, "%s on its own: exit %d:\n%s", args, rc_own, own);
	cr_expect_eq(rc_lent, rc_own, "%s lent: exit %d, on its own %d:\n%s", args, rc_lent, rc_own,
	    lent);
	cr_expect_str_eq(lent, own, "%s prints otherwise through the lender", args);
	free(own), free(lent);
}

Test(share, verbs_through_the_agent_print_and_exit_as_on_their_own, .timeout = 240)
{
	const struct rig *r = rig_get();
	struct place p = open_place();
	char *id, *opts, *args, *out = NULL, *log, *remote;
	int served, k;

	remote = xasprintf("%s/share-%d", r->shared, rig_uniq());
	cr_assert_eq(rig_local("mkdir -p %s && chmod 777 %s", remote, remote), 0);
	/* A held job (its status does not move) and one that wrote both
	 * logs and ended (exec's stdout, SFTP reads). */
	opts = xasprintf("--hold -J share-held-%d -t 5 -o /dev/null", rig_uniq());
	id = rig_sbatch(opts, "true");
	free(opts);

	/* The first verb starts the agent. */
	cr_assert_eq(agent_served(&p), -1, "an agent runs before the first verb");
	args = xasprintf("status %s", id);
	same_both_ways(&p, args, 0);
	cr_assert_geq(agent_served(&p), 1, "no agent served the first verb");
	log = agent_log(&p);
	cr_expect(strstr(log, "lend: agent: lent to pid") != NULL, "the verb did not borrow:\n%s",
	    log);
	free(log);
	free(args);

	{
		char *done;
		opts = xasprintf("-J share-done-%d -t 5 -o %s/o.out -e %s/o.err", rig_uniq(), remote,
		    remote);
		done = rig_sbatch(opts, "'printf \"out line 1\\nout line 2\\n\"; echo err line >&2'");
		free(opts);
		free(rig_wait_state(done, "COMPLETED", 60));
		served = agent_served(&p);
		args = xasprintf("logs %s", done);
		same_both_ways(&p, args, 0);
		free(args);
		args = xasprintf("logs %s --err -n 1", done);
		same_both_ways(&p, args, 0);
		free(args);
		cr_expect_geq(agent_served(&p), served + 2, "the logs did not go through the agent");
		free(done);
	}
	/* A failure comes back the same way: its words and its exit code. */
	same_both_ways(&p, "status 999999999", 1);
	same_both_ways(&p, "logs 999999999", 1);

	/* The agent's one connection served them all: one connect in its log. */
	log = agent_log(&p);
	k = count_of(log, "ssh: connected to");
	cr_expect_eq(k, 1, "the agent connected %d times:\n%s", k, log);
	free(log);

	/* A bare status says who lends. */
	cr_expect_eq(rig_taotop(p.on, "status", &out), 0, "%s", out);
	cr_expect(rig_matches(out, "^agent \\(pid [0-9]+\\): lends to 0 clients now, [0-9]+ "
	    "requests served"), "%s", out);
	cr_expect(strstr(out, "connected to") != NULL, "%s", out);
	free(out);

	args = xasprintf("scancel %s; rm -rf %s", id, remote);
	free(rig_ssh_ok(args));
	free(args), free(id), free(remote);
	close_place(&p);
}

Test(share, a_submit_and_a_cancel_through_the_agent_reach_the_cluster, .timeout = 300)
{
	const struct rig *r = rig_get();
	struct place p = open_place();
	char *remote, *bundle, *env, *out = NULL, *sid, *cmd, *log, *at, *slurm_id;
	const char *secret = "hf_shareSecret0123456789abcdef";

	remote = xasprintf("%s/share-sub-%d", r->shared, rig_uniq());
	bundle = rig_bundle(p.dir, remote, "classification_pyt", "[sleep, '300']",
	    "secrets: [HF_TOKEN]\n");
	env = xasprintf("%s HF_TOKEN=%s SLURM_BASE_RESULTS_DIR=lustre://%s/jobs", p.on, secret,
	    remote);
	cmd = xasprintf("submit %s", bundle);
	cr_assert_eq(rig_taotop(env, cmd, &out), 0, "%s", out);
	free(cmd);
	at = strstr(out, "submitted ");
	cr_assert_not_null(at, "%s", out);
	sid = xstrndup(at + 10, strcspn(at + 10, " \n"));
	at = strstr(out, " as SLURM job ");
	cr_assert_not_null(at, "%s", out);
	slurm_id = xstrndup(at + 14, strcspn(at + 14, " \n"));
	free(out);
	cr_expect_geq(agent_served(&p), 1, "the submit did not go through the agent");

	/* On the cluster, under its SLURM id; then cancelled through the
	 * agent (one more request served). */
	{
		int served;
		cmd = xasprintf("squeue -h -o %%i -u %s", r->user);
		out = rig_ssh_ok(cmd);
		free(cmd);
		cr_expect(rig_matches(out, slurm_id), "job %s is not in the queue:\n%s", slurm_id, out);
		free(out);
		served = agent_served(&p);
		cmd = xasprintf("cancel %s", sid);
		cr_expect_eq(rig_taotop(env, cmd, &out), 0, "%s", out);
		free(out), free(cmd);
		cr_expect_gt(agent_served(&p), served, "the cancel did not go through the agent");
	}
	{
		char *slurm = NULL, *st = NULL;
		cmd = xasprintf("status %s --json", sid);
		cr_expect_eq(rig_taotop(env, cmd, &st), 0, "%s", st);
		free(cmd);
		cr_expect(strstr(st, "Canceled") != NULL || strstr(st, "CANCELLED") != NULL,
		    "the cancel through the agent did not land:\n%s", st);
		free(st), free(slurm);
	}
	/* The lender keeps nothing of the secret: not in its log, nor in
	 * the environment it was started with (the submit's own). */
	log = agent_log(&p);
	cr_expect(strstr(log, secret) == NULL, "the agent's log holds the secret:\n%s", log);
	free(log);
	{
		char *st = NULL, *env_path, *env_text;
		int pid = 0;
		if (rig_taotop(p.on, "agent status", &st) == 0 && strstr(st, "agent (pid ") != NULL)
			pid = atoi(strstr(st, "agent (pid ") + 11);
		free(st);
		cr_assert_gt(pid, 1, "no agent");
		env_path = xasprintf("/proc/%d/environ", pid);
		env_text = slurp_raw(env_path);
		cr_expect(strstr(env_text, "HF_TOKEN") == NULL,
		    "the agent kept the submit's environment, its secret with it");
		cr_expect(strstr(env_text, "XDG_RUNTIME_DIR=") != NULL, "environ not read");
		free(env_text), free(env_path);
	}

	cmd = xasprintf("rm -rf %s", remote);
	free(rig_ssh_ok(cmd));
	free(cmd), free(sid), free(slurm_id), free(env), free(bundle), free(remote);
	close_place(&p);
}

Test(share, a_killed_agent_leaves_its_clients_on_their_own_connection, .timeout = 240)
{
	const struct rig *r = rig_get();
	struct place p = open_place();
	char *id, *opts, *args, *out = NULL, *before = NULL, *remote, *cmd;
	char *follow, *followed;
	int rc;

	opts = xasprintf("--hold -J share-kill-%d -t 5 -o /dev/null", rig_uniq());
	id = rig_sbatch(opts, "true");
	free(opts);
	args = xasprintf("status %s", id);
	cr_assert_eq(rig_taotop(p.on, args, &before), 0, "%s", before);
	cr_assert_geq(agent_served(&p), 1);

	/* Between two verbs: the next starts a new agent, or connects on
	 * its own; either way no error and the same answer. */
	kill_agent(&p);
	rc = rig_taotop(p.on, args, &out);
	cr_expect_eq(rc, 0, "%s", out);
	cr_expect_str_eq(out, before);
	free(out);

	/* During a verb: `logs -f` follows on through the lender, the
	 * lender dies, and the lines written after still come, now on the
	 * verb's own connection. */
	remote = xasprintf("%s/share-kill-%d", r->shared, rig_uniq());
	cr_assert_eq(rig_local("mkdir -p %s && chmod 777 %s", remote, remote), 0);
	opts = xasprintf("-J share-follow-%d -t 5 -o %s/f.out", rig_uniq(), remote);
	free(id);
	id = rig_sbatch(opts, "'echo first line; sleep 300'");
	free(opts);
	{
		char *fout = xasprintf("%s/f.out", remote);
		free(rig_wait_file(fout, "first line", 60));
		free(fout);
	}
	follow = follow_start(&p, id);
	free(rig_wait_file(follow, "first line", 30));
	{
		char *log = agent_log(&p);
		cr_expect(count_of(log, "lend: agent: lent to pid") >= 2,
		    "the follow did not borrow:\n%s", log);
		free(log);
	}
	kill_agent(&p);
	cr_assert_eq(rig_local("echo after the agent died >> %s/f.out", remote), 0);
	followed = rig_wait_file(follow, "after the agent died", 30);
	cr_expect(followed != NULL && strstr(followed, "after the agent died") != NULL,
	    "the follow stopped with its lender:\n%s", followed ? followed : "");
	cr_expect(followed != NULL && strstr(followed, "taotop:") == NULL,
	    "the follow said an error:\n%s", followed ? followed : "");
	free(followed);
	rig_local("kill $(cat %s/follow.pid) 2>/dev/null; true", p.dir);

	cmd = xasprintf("scancel %s; rm -rf %s", id, remote);
	free(rig_ssh_ok(cmd));
	free(cmd), free(follow), free(remote), free(args), free(id), free(before);
	close_place(&p);
}

static struct rig_sshd lost;

Test(share, a_lender_that_loses_its_link_makes_it_again_and_says_what_a_verb_would,
    .timeout = 180)
{
	struct place p = open_place();
	char *on, *off, *out = NULL, *own = NULL, *log;
	int rc, rc_own;

	rig_sshd_start(&lost, 2253, 0);
	on = xasprintf("%s SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s", p.on, lost.hosts,
	    lost.known_hosts);
	off = xasprintf("%s SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s", p.off, lost.hosts,
	    lost.known_hosts);
	cr_assert_eq(rig_taotop(on, "jobs", &out), 0, "%s", out);
	free(out);

	/* The server ends the agent's session: the next verb is served on
	 * a connection the agent makes again, as the verb would have. */
	rig_sshd_signal_sessions(&lost, 9);
	usleep(300 * 1000);
	rc = rig_taotop(on, "jobs", &out);
	cr_expect_eq(rc, 0, "%s", out);
	free(out);
	log = agent_log(&p);
	cr_expect_eq(count_of(log, "ssh: connected to"), 2, "%s", log);
	free(log);

	/* The server gone for good: after the agent's idle probe (15 s),
	 * a verb through it says what the verb says on its own. */
	rig_sshd_signal_sessions(&lost, 9);
	rig_sshd_stop(&lost);
	sleep(19);
	rc = rig_taotop(on, "jobs", &out);
	rc_own = rig_taotop(off, "jobs", &own);
	cr_expect_eq(rc_own, 3, "%s", own);
	cr_expect_eq(rc, rc_own, "through the agent: %d\n%s\non its own: %d\n%s", rc, out, rc_own, own);
	cr_expect_str_eq(out, own);
	free(out), free(own), free(on), free(off);
	close_place(&p);
}

/* A raw hello to a socket: 1 answered, 0 closed without a word. */
static int hello_answered(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *req = "{\"op\":\"status\",\"blobs\":[]}";
	unsigned char len[4] = { 0, 0, 0, (unsigned char)strlen(req) };
	char buf[8];
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), got;

	cr_assert_geq(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0,
	    "root could not even connect to %s", path);
	if (send(fd, len, 4, MSG_NOSIGNAL) != 4 ||
	    send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		close(fd);
		return 0;
	}
	got = (int)read(fd, buf, sizeof(buf));
	close(fd);
	return got > 0;
}

Test(share, another_user_is_refused, .timeout = 180)
{
	const struct rig *r = rig_get();
	struct place p = open_place();
	char *theirs, *cmd, *out = NULL, *sock;

	/* The agent of the rig's user (another uid than this test's, root),
	 * in that user's own private folder. */
	theirs = xasprintf("%s/theirs", p.dir);
	cr_assert_eq(rig_local("mkdir -m 711 %s && mkdir -m 700 %s/run && chown %d %s/run && "
	    "chmod 755 %s", theirs, theirs, r->uid, theirs, p.dir), 0);
	cmd = xasprintf("setpriv --reuid=%d --regid=%d --clear-groups env HOME=%s "
	    "XDG_RUNTIME_DIR=%s/run TAOTOP_NO_SHARE= TAOTOP_CONFIG=/nonexistent %s agent start "
	    "--idle 60s", r->uid, r->uid, r->home, theirs, getenv("TAOTOP_BIN"));
	{
		const char *const argv[] = { "sh", "-c", cmd, NULL };
		cr_assert_eq(rig_run(argv, &out), 0, "%s", out);
		free(out);
	}
	free(cmd);

	/* Root gets through the folder's mode (it may), and the agent
	 * refuses it on its uid: not a word back. */
	sock = xasprintf("%s/run/taotop/agent.sock", theirs);
	cr_expect_eq(hello_answered(sock), 0, "the agent answered another uid (root)");
	cmd = xasprintf("setpriv --reuid=%d --regid=%d --clear-groups env HOME=%s "
	    "XDG_RUNTIME_DIR=%s/run %s agent status", r->uid, r->uid, r->home, theirs,
	    getenv("TAOTOP_BIN"));
	{
		const char *const argv[] = { "sh", "-c", cmd, NULL };
		cr_expect_eq(rig_run(argv, &out), 0, "%s", out);
		cr_expect(strstr(out, "1 connection of another user refused") != NULL,
		    "the agent does not say it refused root:\n%s", out);
		free(out);
	}
	free(cmd);

	/* A client told to use a folder that is not its own refuses it
	 * before any connection (and says so), and connects on its own. */
	{
		char *env = xasprintf("TAOTOP_NO_SHARE= XDG_RUNTIME_DIR=%s/run XDG_STATE_HOME=%s/state",
		    theirs, p.dir);
		cr_expect_eq(rig_taotop(env, "jobs", &out), 0, "%s", out);
		cr_expect(strstr(out, "not to you: the shared session is off") != NULL,
		    "a foreign folder was used without a word:\n%s", out);
		free(out);
		free(env);
	}
	/* A folder of one's own that others may enter: refused as well. */
	cr_assert_eq(rig_local("mkdir -p -m 755 %s/run/taotop && chmod 755 %s/run/taotop", p.dir,
	    p.dir), 0);
	cr_expect_eq(rig_taotop(p.on, "jobs", &out), 0, "%s", out);
	cr_expect(strstr(out, "the shared session needs it private") != NULL, "%s", out);
	free(out);
	cr_expect_eq(agent_served(&p), -1, "an agent started in a folder others may enter");
	rig_local("chmod 700 %s/run/taotop", p.dir);

	/* A second user connecting as a user would: the folder keeps it out. */
	cmd = xasprintf("setpriv --reuid=%d --regid=%d --clear-groups sh -c "
	    "'test -w %s || echo no access'", r->uid + 1, r->uid + 1, sock);
	{
		const char *const argv[] = { "sh", "-c", cmd, NULL };
		rig_run(argv, &out);
		cr_expect(strstr(out, "no access") != NULL, "another uid may write the socket: %s",
		    out);
		free(out);
	}
	free(cmd);
	cmd = xasprintf("setpriv --reuid=%d --regid=%d --clear-groups env HOME=%s "
	    "XDG_RUNTIME_DIR=%s/run %s agent stop", r->uid, r->uid, r->home, theirs,
	    getenv("TAOTOP_BIN"));
	rig_local("%s >/dev/null 2>&1", cmd);
	free(cmd), free(sock), free(theirs);
	close_place(&p);
}

Test(share, each_switch_keeps_a_verb_on_its_own_connection, .timeout = 120)
{
	const struct rig *r = rig_get();
	struct place p = open_place();
	char *out = NULL, *cfg, *env;
	FILE *f;

	/* --no-share on the verb, and before it. */
	cr_expect_eq(rig_taotop(p.on, "jobs --no-share", &out), 0, "%s", out);
	free(out);
	cr_expect_eq(rig_taotop(p.on, "--no-share jobs", &out), 0, "%s", out);
	free(out);
	cr_expect_eq(agent_served(&p), -1, "--no-share started an agent");
	/* share: false in the config. */
	cfg = xasprintf("%s/config.yaml", p.dir);
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fprintf(f, "share: false\ndefault_cluster: rig\nclusters:\n  rig:\n    hosts: %s:%d\n"
	    "    user: %s\n    key: %s\n    known_hosts: %s\n", r->host, r->port, r->user, r->key,
	    r->known_hosts);
	fclose(f);
	env = xasprintf("%s TAOTOP_CONFIG=%s SLURM_HOSTNAME= TAOTOP_CLUSTER=", p.on, cfg);
	cr_expect_eq(rig_taotop(env, "jobs", &out), 0, "%s", out);
	free(out);
	cr_expect_eq(agent_served(&p), -1, "share: false started an agent");
	cr_expect_eq(rig_taotop(env, "status", &out), 0, "%s", out);
	cr_expect(strstr(out, "sessions are not shared") != NULL, "%s", out);
	free(out);
	/* And a bad value is named with what it takes. */
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fprintf(f, "share: maybe\nclusters: {}\n");
	fclose(f);
	cr_expect_eq(rig_taotop(env, "jobs", &out), 2, "%s", out);
	cr_expect(strstr(out, "share is true") != NULL && strstr(out, "config.yaml") != NULL, "%s",
	    out);
	free(out), free(env), free(cfg);
	close_place(&p);
}

Test(share, a_lender_that_stopped_answering_is_not_waited_for, .timeout = 120)
{
	struct place p = open_place();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *own = NULL, *out = NULL;
	time_t t0;
	int fd, rc;

	/* A monitor suspended (Ctrl-Z): its socket still takes connections,
	 * the kernel queues them, and nothing answers. */
	cr_assert_eq(rig_local("mkdir -m 700 %s/run/taotop", p.dir), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/run/taotop/monitor-1.sock", p.dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0);
	cr_assert_eq(rig_taotop(p.off, "status 999999999", &own), 1, "%s", own);
	t0 = time(NULL);
	rc = rig_taotop(p.on, "status 999999999", &out);
	cr_expect_eq(rc, 1, "%s", out);
	cr_expect_str_eq(out, own, "a verb past a stopped lender prints otherwise");
	cr_expect_leq(time(NULL) - t0, 20, "the verb waited %d s for a lender that never answers",
	    (int)(time(NULL) - t0));
	/* The agent served it instead. */
	cr_expect_geq(agent_served(&p), 1);
	close(fd);
	free(own), free(out);
	close_place(&p);
}

Test(share, agents_started_at_once_leave_one, .timeout = 120)
{
	struct place p = open_place();
	char *cmd, *out = NULL;
	int n;

	/* Four scripts' first commands at the same moment. */
	cmd = xasprintf("for i in 1 2 3 4; do env SLURM_USER=x TAOTOP_CONFIG=/nonexistent %s %s "
	    "agent start --idle 60s >/dev/null 2>&1 & done; wait", p.on, getenv("TAOTOP_BIN"));
	cr_assert_eq(rig_local("%s", cmd), 0);
	free(cmd);
	cmd = xasprintf("n=0; for a in $(pgrep -f 'taotop agent serve'); do grep -qz "
	    "'XDG_RUNTIME_DIR=%s/run' /proc/$a/environ 2>/dev/null && n=$((n + 1)); done; "
	    "exit $n", p.dir);
	n = rig_local("%s", cmd);
	free(cmd);
	cr_expect_eq(n, 1, "%d agents run in one folder", n);
	cr_expect_eq(rig_taotop(p.on, "agent status", &out), 0, "%s", out);
	cr_expect_eq(count_of(out, "agent (pid "), 1, "%s", out);
	free(out);
	close_place(&p);
}

Test(share, the_agent_ends_by_itself_after_its_idle_time, .timeout = 120)
{
	struct place p = open_place();
	char *out = NULL, *sock;
	struct stat sb;
	time_t t0;

	cr_assert_eq(rig_taotop(p.on, "agent start --idle 3s", &out), 0, "%s", out);
	cr_expect(strstr(out, "started; it ends 3 s after its last command") != NULL, "%s", out);
	free(out);
	cr_assert_eq(rig_taotop(p.on, "jobs", &out), 0, "%s", out);
	free(out);
	cr_assert_geq(agent_served(&p), 1);
	sock = xasprintf("%s/run/taotop/agent.sock", p.dir);
	/* Gone within its idle time and a tick after its last client,
	 * its socket with it. */
	t0 = time(NULL);
	while (stat(sock, &sb) == 0 && time(NULL) - t0 < 30)
		usleep(200 * 1000);
	cr_expect_neq(stat(sock, &sb), 0, "the agent still listens after %d s", (int)(time(NULL) - t0));
	cr_expect_geq(time(NULL) - t0, 2, "the agent ended before its idle time");
	cr_expect_eq(rig_taotop(p.on, "agent status", &out), 1, "%s", out);
	cr_expect(strstr(out, "no taotop agent or monitor lends a session") != NULL, "%s", out);
	free(out), free(sock);
	close_place(&p);
}

Test(share, verbs_through_the_monitors_session_print_and_exit_as_on_their_own, .timeout = 240)
{
	const struct rig *r = rig_get();
	struct place p = open_place();
	struct screen s;
	struct screen_opts so = { .cols = 140, .lines = 30 };
	char *id, *opts, *args, *log, *remote, *cmd, *follow, *env;

	opts = xasprintf("--hold -J share-mon-%d -t 5 -o /dev/null", rig_uniq());
	id = rig_sbatch(opts, "true");
	free(opts);
	env = xasprintf("TAOTOP_NO_SHARE= XDG_RUNTIME_DIR=%s/run", p.dir);
	so.env = env;
	screen_open(&s, "sharemon", &so);
	screen_wait(&s, 30, "rig:", "polled", NULL);

	/* A verb borrows the monitor's session: no agent is started. */
	args = xasprintf("status %s", id);
	same_both_ways(&p, args, 0);
	free(args);
	cr_expect_eq(agent_served(&p), -1, "an agent was started for what the monitor holds");
	{
		char *path = xasprintf("%s/taotop.log", s.dir);
		log = slurp(path);
		free(path);
	}
	cr_expect(strstr(log, "lend: monitor: lent to pid") != NULL,
	    "the verb did not borrow the monitor's session:\n%s", log);
	free(log);
	same_both_ways(&p, "status 999999999", 1);

	/* While one borrows, the status bar says so. */
	remote = xasprintf("%s/share-mon-%d", r->shared, rig_uniq());
	cr_assert_eq(rig_local("mkdir -p %s && chmod 777 %s", remote, remote), 0);
	opts = xasprintf("-J share-monf-%d -t 5 -o %s/m.out", rig_uniq(), remote);
	free(id);
	id = rig_sbatch(opts, "'echo monitor line; sleep 300'");
	free(opts);
	follow = follow_start(&p, id);
	free(rig_wait_file(follow, "monitor line", 60));
	screen_wait(&s, 10, "lent to 1 command", NULL);
	rig_local("kill $(cat %s/follow.pid) 2>/dev/null; true", p.dir);
	screen_wait_gone(&s, 10, "lent to");
	{
		char *out = NULL;
		cr_expect_eq(rig_taotop(p.on, "status", &out), 0, "%s", out);
		cr_expect(rig_matches(out, "^monitor \\(pid [0-9]+\\): lends to 0 clients now"),
		    "%s", out);
		cr_expect(strstr(out, "rig slurmuser") != NULL || strstr(out, "rig ") != NULL,
		    "the monitor's clusters are not listed:\n%s", out);
		free(out);
	}

	screen_keys(&s, "q");
	screen_wait(&s, 10, "[taotop exited 0]", NULL);
	screen_close(&s);
	cmd = xasprintf("scancel %s; rm -rf %s", id, remote);
	free(rig_ssh_ok(cmd));
	free(cmd), free(follow), free(remote), free(id), free(env);
	close_place(&p);
}

/* ---- a one-time code, once for twenty commands ---------------------------------------------- */

static struct rig_sshd totp;
static char *tmux_sock;

static void stop_totp(void)
{
	if (tmux_sock != NULL)
		rig_local("tmux -L %s kill-server 2>/dev/null; true", tmux_sock);
	if (totp.dir != NULL)
		rig_sshd_stop(&totp);
}

static char *tmux_text(void)
{
	char *cmd = xasprintf("tmux -L %s capture-pane -p -S -300", tmux_sock), *out = NULL;
	const char *const argv[] = { "sh", "-c", cmd, NULL };

	rig_run(argv, &out);
	free(cmd);
	return out != NULL ? out : xstrdup("");
}

static char *tmux_wait(const char *what, int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	char *text;

	for (;;) {
		text = tmux_text();
		if (strstr(text, what) != NULL || time(NULL) >= end)
			return text;
		free(text);
		usleep(200 * 1000);
	}
}

Test(share, a_script_of_twenty_status_calls_is_asked_one_code, .timeout = 300)
{
	const struct rig *r = rig_get();
	struct place p = open_place();
	char *script, *id, *opts, *text, *code, *log;
	FILE *f;
	int asked, ok;

	rig_sshd_start_totp(&totp, 2252, 3);
	opts = xasprintf("--hold -J share-totp-%d -t 5 -o /dev/null", rig_uniq());
	id = rig_sbatch(opts, "true");
	free(opts);
	/* The user's script: twenty status calls, nothing else. */
	script = xasprintf("%s/script.sh", p.dir);
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\nexport SLURM_USER=%s SLURM_HOSTNAME=%s SSH_KEY_PATH=%s "
	    "TAOTOP_KNOWN_HOSTS=%s TAOTOP_CLUSTER=rig TAOTOP_CONFIG=/nonexistent/config.yaml "
	    "LANG=C.UTF-8 %s\nok=0\nfor i in $(seq 20); do\n  %s status %s >/dev/null && "
	    "ok=$((ok + 1))\ndone\necho \"[$ok of 20 ran]\"\nsleep 600\n", r->user, totp.hosts,
	    r->key, totp.known_hosts, p.on, getenv("TAOTOP_BIN"), id);
	fclose(f);
	tmux_sock = xasprintf("taotop-share-totp-%d", rig_uniq());
	cr_assert_eq(rig_local("chmod +x %s && tmux -L %s -f /dev/null new-session -d -x 120 -y 40 "
	    "%s", script, tmux_sock, script), 0);

	text = tmux_wait("One-time password (OATH) for `", 30);
	cr_assert(strstr(text, "One-time password (OATH) for `") != NULL, "not asked:\n%s", text);
	free(text);
	code = rig_totp(0);
	cr_assert_eq(rig_local("tmux -L %s send-keys -l '%s' && tmux -L %s send-keys Enter",
	    tmux_sock, code, tmux_sock), 0);
	text = tmux_wait("of 20 ran]", 120);
	asked = count_of(text, "One-time password (OATH)");
	ok = strstr(text, "[20 of 20 ran]") != NULL;
	cr_expect(ok, "not every call ran:\n%s", text);
	cr_expect_eq(asked, 1, "asked %d codes for twenty calls:\n%s", asked, text);
	cr_expect(strstr(text, code) == NULL, "the code was echoed:\n%s", text);
	free(text);
	/* One connection, made by the first call, its code never kept. */
	log = agent_log(&p);
	cr_expect_eq(count_of(log, "ssh: connected to"), 1, "%s", log);
	cr_expect(strstr(log, code) == NULL, "the agent's log holds the code:\n%s", log);
	free(log);
	cr_expect_geq(agent_served(&p), 20);

	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	free(code), free(id), free(script);
	close_place(&p);
}

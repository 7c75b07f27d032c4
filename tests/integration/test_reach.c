/*
 * Reaching clusters as sites set them up: a login host that wants a key and
 * then a one-time code (TOTP through PAM, libpam-oath; codes from
 * oathtool), and a login host only a bastion may reach (ProxyJump). Both
 * are private OpenSSH servers of the rig (tests/cluster/up provides the PAM
 * service and the bastion's network namespace). The monitor is driven in
 * tmux, the CLI on a terminal of its own (tmux) and without one, as a user
 * would.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

struct term {
	char	*sock;
	char	*dir;
};

static struct rig_sshd *sshds[3];
/* The terminal a test has open (a copy: the test's own is on its stack),
 * for the suite's fini to close when the test fails. */
static struct term open_term;

static void term_close(struct term *t);

static void cleanup(void)
{
	size_t i;

	screen_kill_all();
	if (open_term.sock != NULL)
		term_close(&open_term);
	for (i = 0; i < sizeof(sshds) / sizeof(sshds[0]); i++)
		if (sshds[i] != NULL)
			rig_sshd_stop(sshds[i]);
}

TestSuite(reach, .fini = cleanup);

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0, len = 0, n;

	if (f == NULL)
		return xstrdup("");
	do {
		cap += 65536;
		text = xrealloc(text, cap + 1);
		n = fread(text + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	text[len] = '\0';
	fclose(f);
	return text;
}

/* Every file of dir (not recursive) and of dir/taotop, concatenated. */
static char *slurp_dir(const char *dir)
{
	char *cmd = xasprintf("cat %s/* %s/taotop/* 2>/dev/null", dir, dir), *out = NULL;
	const char *const argv[] = { "sh", "-c", cmd, NULL };

	rig_run(argv, &out);
	free(cmd);
	return out != NULL ? out : xstrdup("");
}

/* Processes whose parent is pid (from /proc): how many. */
static int children_of(int pid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[300], buf[512], *close_paren;
		FILE *f;
		int ppid;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), f) != NULL && (close_paren = strrchr(buf, ')')) != NULL &&
		    sscanf(close_paren + 2, "%*c %d", &ppid) == 1 && ppid == pid)
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* ---- the CLI on a terminal of its own ------------------------------------------ */

/* taotop ARGS on a tmux terminal, its stderr there too (where questions
 * go), the rig's coordinates then env in its environment. */
static void term_open(struct term *t, const char *name, const char *env, const char *args)
{
	const struct rig *r = rig_get();
	char tmpl[] = "/tmp/taotop-term-XXXXXX", *script, *cmd, *out = NULL;
	FILE *f;

	cr_assert_not_null(mkdtemp(tmpl));
	t->dir = xstrdup(tmpl);
	t->sock = xasprintf("taotop-%s-%d", name, rig_uniq());
	script = xasprintf("%s/run.sh", t->dir);
	f = fopen(script, "w");
	cr_assert_not_null(f);
	/* trap: Ctrl-C is for taotop; the shell lives on to report. */
	fprintf(f, "#!/bin/sh\ntrap '' INT\nexport SLURM_USER=%s SSH_KEY_PATH=%s TAOTOP_CLUSTER=rig "
	    "TAOTOP_CONFIG=/nonexistent/config.yaml XDG_STATE_HOME=%s/state TAOTOP_LOG=%s/taotop.log "
	    "LANG=C.UTF-8 %s\n%s %s\necho \"[taotop exited $?]$(stty -a | grep -o -- ' -\\?echo ')\"\n"
	    "sleep 600\n", r->user, r->key,
	    t->dir, t->dir, env, getenv("TAOTOP_BIN"), args);
	fclose(f);
	cmd = xasprintf("chmod +x %s && tmux -L %s -f /dev/null new-session -d -x 120 -y 30 %s",
	    script, t->sock, script);
	{
		const char *const argv[] = { "sh", "-c", cmd, NULL };
		cr_assert_eq(rig_run(argv, &out), 0, "tmux: %s", out);
	}
	free(out), free(cmd), free(script);
	free(open_term.sock), free(open_term.dir);
	open_term.sock = xstrdup(t->sock);
	open_term.dir = xstrdup(t->dir);
}

static char *term_text(struct term *t)
{
	char *cmd = xasprintf("tmux -L %s capture-pane -p -S -100", t->sock), *out = NULL;
	const char *const argv[] = { "sh", "-c", cmd, NULL };

	rig_run(argv, &out);
	free(cmd);
	return out != NULL ? out : xstrdup("");
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (; (text = strstr(text, what)) != NULL; text += strlen(what))
		n++;
	return n;
}

/* Wait until the terminal shows what at least n times. */
static void term_wait_n(struct term *t, int timeout_s, const char *what, int n)
{
	int i;
	char *text = NULL;

	for (i = 0; i < timeout_s * 10; i++) {
		free(text);
		text = term_text(t);
		if (count_of(text, what) >= n) {
			free(text);
			return;
		}
		usleep(100 * 1000);
	}
	cr_assert_fail("the terminal never showed '%s' %d times:\n%s", what, n, text);
}

static void term_wait(struct term *t, int timeout_s, const char *what)
{
	term_wait_n(t, timeout_s, what, 1);
}

static void term_type(struct term *t, const char *text)
{
	char *cmd = xasprintf("tmux -L %s send-keys -l '%s' && tmux -L %s send-keys Enter",
	    t->sock, text, t->sock);

	cr_assert_eq(rig_local("%s", cmd), 0);
	free(cmd);
}

static void term_close(struct term *t)
{
	rig_local("tmux -L %s kill-server 2>/dev/null; rm -rf %s", t->sock, t->dir);
	if (t != &open_term) {
		free(open_term.sock), free(open_term.dir);
		open_term.sock = open_term.dir = NULL;
	}
	free(t->sock);
	free(t->dir);
	t->sock = t->dir = NULL;
}

/* ---- one-time codes ---------------------------------------------------------------- */

Test(reach, cli_asks_for_the_code_on_a_terminal_and_refuses_without_one, .timeout = 120)
{
	static struct rig_sshd d;
	struct term t;
	char *env, *out = NULL, *text, *wrong = xstrdup("000000"), *code, *log;

	rig_sshd_start_totp(&d, 2240, 1);
	sshds[0] = &d;
	env = xasprintf("SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s", d.hosts, d.known_hosts);

	/* No terminal: a clear refusal, exit 3, never a hang. */
	cr_expect_eq(rig_taotop(env, "jobs < /dev/null", &out), 3, "%s", out);
	cr_expect(strstr(out, "no terminal to ask it on") != NULL, "%s", out);
	free(out);

	/* On a terminal: the server's prompt, a wrong code refused with the
	 * server's words and asked again, then the right one connects. */
	term_open(&t, "totpcli", env, "jobs");
	term_wait(&t, 20, "One-time password (OATH) for `");
	cr_assert_neq(strcmp(wrong, (code = rig_totp(0))), 0);
	term_type(&t, wrong);
	term_wait(&t, 20, "refused: Wrong one-time code: the server refused it.");
	/* The prompt itself, not the words before it: echo goes off just
	 * before the prompt shows, as OpenSSH does. */
	term_wait_n(&t, 20, "One-time password (OATH) for `", 2);
	term_type(&t, code);
	term_wait(&t, 30, "[taotop exited 0]");
	text = term_text(&t);
	cr_expect(strstr(text, "SLURM") != NULL, "no jobs table:\n%s", text);
	cr_expect(strstr(text, code) == NULL, "the code was echoed:\n%s", text);
	cr_expect(strstr(text, wrong) == NULL, "the wrong code was echoed:\n%s", text);
	{
		char *p = xasprintf("%s/taotop.log", t.dir);
		log = slurp(p);
		free(p);
	}
	cr_expect(strstr(log, code) == NULL && strstr(log, wrong) == NULL,
	    "taotop's log holds a code:\n%s", log);
	free(log), free(text), free(code), free(wrong);
	term_close(&t);

	/* Ctrl-C at the hidden prompt: the terminal gets its echo back. */
	term_open(&t, "totpint", env, "jobs");
	term_wait(&t, 20, "One-time password (OATH) for `");
	cr_assert_eq(rig_local("tmux -L %s send-keys C-c", t.sock), 0);
	term_wait(&t, 10, "[taotop exited 130] echo");
	term_close(&t);
	free(env);
	sshds[0] = NULL;
	rig_sshd_free(&d);
}

Test(reach, the_monitor_asks_for_the_code_in_a_dialog_and_again_on_reconnect, .timeout = 180)
{
	static struct rig_sshd d;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 32 };
	char polled[96], name[64], opts[160], *dir, *id, *wrong = xstrdup("999999"), *code[2];
	char *text, *files, *p;
	int i;

	rig_sshd_start_totp(&d, 2241, 2);
	sshds[0] = &d;
	dir = screen_shared_dir("totp");
	snprintf(name, sizeof(name), "totp%d", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 10 -o %s/totp.out", name, dir);
	id = rig_sbatch(opts, "'sleep 300'");
	snprintf(polled, sizeof(polled), "rig: %s, polled", d.hosts);
	so.hosts = d.hosts;
	so.known_hosts = d.known_hosts;
	code[0] = rig_totp(0);
	code[1] = rig_totp(1);
	cr_assert(strcmp(wrong, code[0]) != 0 && strcmp(wrong, code[1]) != 0);

	screen_open(&s, "totp", &so);
	screen_wait(&s, 20, "Cluster rig: sign in", "the server " , "asks:",
	    "One-time password (OATH) for `", "Enter: send", NULL);
	screen_wait(&s, 5, "rig: the server asks a question", NULL);
	/* The keys never freeze while the worker waits for the answer. */
	screen_type(&s, wrong);
	screen_wait(&s, 10, "******_", NULL);
	text = screen_text(&s);
	cr_expect(strstr(text, wrong) == NULL, "the code is shown as typed:\n%s", text);
	free(text);
	screen_keys(&s, "Enter");
	screen_wait(&s, 20, "Refused (try 1): Wrong one-time code: the server refused it.",
	    "One-time password (OATH)", NULL);
	screen_type(&s, code[0]);
	screen_keys(&s, "Enter");
	screen_wait(&s, 30, polled, NULL);
	screen_filter(&s, name);
	screen_wait_line(&s, 30, name, NULL);

	/* The connection drops: the reconnection needs a new code, asked in
	 * the dialog again. */
	rig_sshd_signal_sessions(&d, 9);
	screen_wait(&s, 30, "Cluster rig: sign in", "One-time password (OATH)", NULL);
	screen_type(&s, code[1]);
	screen_keys(&s, "Enter");
	screen_wait(&s, 30, polled, NULL);
	screen_wait_line(&s, 30, name, NULL);
	screen_keys(&s, "P");
	screen_wait(&s, 10, "screen-", NULL);
	text = screen_text(&s);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);

	/* Neither the screen, its dump, taotop's log nor its stderr holds a
	 * code (the state folder holds the dump and the records). */
	p = xasprintf("%s/state", s.dir);
	files = slurp_dir(p);
	free(p);
	{
		char *log = slurp_dir(s.dir);
		for (i = 0; i < 2; i++) {
			cr_expect(strstr(text, code[i]) == NULL, "the screen holds a code:\n%s", text);
			cr_expect(strstr(files, code[i]) == NULL, "the dump or records hold a code");
			cr_expect(strstr(log, code[i]) == NULL, "taotop's log or stderr holds a code");
		}
		cr_expect(strstr(log, wrong) == NULL, "taotop's log or stderr holds the wrong code");
		cr_expect(strstr(files, "Cluster") != NULL || strstr(files, name) != NULL,
		    "no screen dump was written");
		free(log);
	}
	free(files), free(text);
	screen_close(&s);
	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	free(id), free(dir), free(wrong), free(code[0]), free(code[1]);
	sshds[0] = NULL;
	rig_sshd_free(&d);
}

/* A server that wants a password: refused without asking unless the
 * cluster's config turns password_auth on; then asked like a code. */
Test(reach, a_password_is_asked_only_where_the_config_allows_it, .timeout = 120)
{
	static struct rig_sshd d;
	const struct rig *r = rig_get();
	struct term t;
	char *env, *out = NULL, *cfg, *text;

	rig_sshd_start_conf(&d, 2250, "-e 's|^PasswordAuthentication .*|PasswordAuthentication yes"
	    "\\nAuthenticationMethods password|'");
	sshds[2] = &d;
	env = xasprintf("SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s", d.hosts, d.known_hosts);
	/* Off (the default): no question, even on a terminal. */
	term_open(&t, "pwoff", env, "jobs");
	term_wait(&t, 20, "[taotop exited 3]");
	text = term_text(&t);
	cr_expect(strstr(text, "password_auth: true") != NULL && strstr(text, "wants a password") != NULL,
	    "%s", text);
	cr_expect(strstr(text, "asks:") == NULL, "a password was asked for:\n%s", text);
	free(text);
	term_close(&t);

	/* On: asked on the terminal, echo off (the rig's user has no
	 * password: refused three times, then exit 3). */
	cfg = xasprintf("%s/config.yaml", d.dir);
	cr_assert_eq(rig_local("printf 'clusters:\\n  rig:\\n    hosts: \"%s\"\\n    user: %s\\n"
	    "    key: %s\\n    known_hosts: %s\\n    password_auth: true\\n' > %s", d.hosts,
	    r->user, r->key, d.known_hosts, cfg), 0);
	free(env);
	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	term_open(&t, "pwon", env, "jobs");
	term_wait(&t, 20, "\nPassword:");
	term_type(&t, "not-the-password");
	term_wait(&t, 20, "refused: the server refused the password");
	text = term_text(&t);
	cr_expect(strstr(text, "not-the-password") == NULL, "the password was echoed:\n%s", text);
	free(text);
	term_wait_n(&t, 20, "\nPassword:", 2);
	term_type(&t, "x");
	term_wait_n(&t, 20, "\nPassword:", 3);
	term_type(&t, "y");
	term_wait(&t, 20, "[taotop exited 3]");
	term_close(&t);
	free(env), free(cfg), free(out);
	sshds[2] = NULL;
	rig_sshd_free(&d);
}

/* ---- bastions ------------------------------------------------------------------------ */

/* A known_hosts holding both servers' keys (caller frees). */
static char *both_known(const struct rig_sshd *a, const struct rig_sshd *b, const char *name)
{
	char *kh = xasprintf("%s/%s", a->dir, name);

	cr_assert_eq(rig_local("cat %s %s > %s", a->known_hosts, b->known_hosts, kh), 0);
	return kh;
}

Test(reach, through_a_bastion_jobs_logs_and_a_submit_with_no_other_process, .timeout = 400)
{
	static struct rig_sshd b, l;
	const struct rig *r = rig_get();
	char *kh, *env, *out = NULL, *bundle, *dir, *id, *args, *p;
	struct screen s;
	struct screen_opts so = { .cols = 130, .lines = 30 };
	char polled[96];

	rig_sshd_start_bastion(&b, 2242, 0, 0, &l, 2243);
	sshds[0] = &b;
	sshds[1] = &l;
	kh = both_known(&b, &l, "both_known_hosts");

	/* Straight to the login host: refused, it lets in the bastion only. */
	env = xasprintf("SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s", l.hosts, kh);
	cr_expect_eq(rig_taotop(env, "jobs", &out), 3, "reached without the bastion:\n%s", out);
	free(out), free(env);

	/* Through it (jump: as the config's key, here its variable). */
	dir = screen_shared_dir("bastion");
	env = xasprintf("SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s TAOTOP_JUMP=%s@%s "
	    "XDG_STATE_HOME=%s/state SLURM_BASE_RESULTS_DIR=lustre://%s/root", l.hosts, kh,
	    r->user, b.hosts, dir, dir);
	cr_expect_eq(rig_taotop(env, "jobs", &out), 0, "%s", out);
	cr_expect(strstr(out, "SLURM") != NULL, "%s", out);
	free(out);
	/* A submit, and its log followed. */
	{
		char *local = xasprintf("%s/local", dir);
		cr_assert_eq(rig_local("mkdir -p %s", local), 0);
		bundle = rig_bundle(local, dir, "bastion_pyt",
		    "[sh, -c, 'echo through-the-bastion-1; sleep 3; echo through-the-bastion-2']", NULL);
		free(local);
	}
	args = xasprintf("submit %s", bundle);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	p = strstr(out, "submitted tao-");
	cr_assert_not_null(p, "%s", out);
	id = xstrndup(p + 10, strcspn(p + 10, " \n"));
	free(out), free(args);
	/* Followed until its last line comes (pending, the container's
	 * start, the job's 3 s: longer on a loaded machine). */
	args = xasprintf("logs %s -f > %s/follow.txt & pid=$!; for i in $(seq 360); do "
	    "grep -q through-the-bastion-2 %s/follow.txt && break; sleep 0.5; done; kill $pid; "
	    "wait; cat %s/follow.txt", id, dir, dir, dir);
	rig_taotop(env, args, &out);
	cr_expect(strstr(out, "through-the-bastion-1") != NULL &&
	    strstr(out, "through-the-bastion-2") != NULL, "the log was not followed:\n%s", out);
	free(out), free(args);

	/* The monitor through it: the job listed, no process started. */
	snprintf(polled, sizeof(polled), "rig: %s, polled", l.hosts);
	so.hosts = l.hosts;
	so.known_hosts = kh;
	p = xasprintf("TAOTOP_JUMP=%s@%s", r->user, b.hosts);
	so.env = p;
	screen_open(&s, "bastion", &so);
	screen_wait(&s, 30, polled, NULL);
	screen_filter(&s, id);
	screen_wait_line(&s, 30, id, NULL);
	cr_expect_gt(screen_pid(&s), 0);
	cr_expect_eq(children_of(screen_pid(&s)), 0, "taotop started a process");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(p);

	free(id), free(bundle), free(env), free(dir), free(kh);
	sshds[0] = sshds[1] = NULL;
	rig_sshd_free(&l);
	rig_sshd_free(&b);
}

Test(reach, an_unknown_bastion_key_shows_the_host_key_dialog, .timeout = 120)
{
	static struct rig_sshd b, l;
	const struct rig *r = rig_get();
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 32 };
	char polled[96], *jump, *env;

	rig_sshd_start_bastion(&b, 2244, 1, 0, &l, 2245);
	sshds[0] = &b;
	sshds[1] = &l;
	/* Only the login host's key is known: the bastion's is new. */
	snprintf(polled, sizeof(polled), "rig: %s, polled", l.hosts);
	jump = xasprintf("%s@%s", r->user, b.hosts);
	env = xasprintf("TAOTOP_JUMP=%s", jump);
	so.hosts = l.hosts;
	so.known_hosts = l.known_hosts;
	so.env = env;
	screen_open(&s, "bastionkey", &so);
	screen_wait(&s, 20, "Unknown host key", jump, b.fingerprint, "a: accept", NULL);
	cr_expect_eq(children_of(screen_pid(&s)), 0, "taotop started a process");
	screen_keys(&s, "a");
	screen_wait(&s, 30, polled, NULL);
	cr_expect_eq(rig_local("grep -q '%s\\]:%d' %s", r->bastion_addr, b.port, l.known_hosts), 0,
	    "known_hosts does not hold the bastion's key");
	cr_expect_eq(children_of(screen_pid(&s)), 0, "taotop started a process");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(jump), free(env);
	sshds[0] = sshds[1] = NULL;
	rig_sshd_free(&l);
	rig_sshd_free(&b);
}

/* The ssh layer reads ProxyJump from ~/.ssh/config itself and runs no
 * ProxyCommand: the login host sees the bastion as its client. */
Test(reach, proxyjump_from_the_ssh_config_is_done_by_taotop_and_proxycommand_never_run,
    .timeout = 120)
{
	static struct rig_sshd b, l;
	const struct rig *r = rig_get();
	struct conn_target t;
	struct conn *c;
	struct conn_exec x;
	char *kh, *cfg, *err = NULL, *marker;
	enum conn_status st;

	rig_sshd_start_bastion(&b, 2246, 0, 0, &l, 2247);
	sshds[0] = &b;
	sshds[1] = &l;
	kh = both_known(&b, &l, "both_known_hosts");
	cfg = xasprintf("%s/ssh_config", l.dir);
	cr_assert_eq(rig_local("printf 'Host behind\\n  HostName %s\\n  Port %d\\n"
	    "  ProxyJump %s@%s:%d\\n' > %s", r->inner_addr, l.port, r->user, r->bastion_addr,
	    b.port, cfg), 0);
	memset(&t, 0, sizeof(t));
	t.hosts = "behind";
	t.user = r->user;
	t.key_path = r->key;
	t.known_hosts = kh;
	t.ssh_config = cfg;
	t.connect_timeout_s = 10;
	c = conn_new(&t);
	st = conn_connect(c, &err);
	cr_assert_eq(st, CONN_OK, "%s", err ? err : "");
	conn_exec_init(&x, "echo $SSH_CONNECTION");
	cr_assert_eq(conn_exec(c, &x, &err), CONN_OK, "%s", err ? err : "");
	cr_expect(strncmp(x.out.data, r->bastion_addr, strlen(r->bastion_addr)) == 0,
	    "the login host's client is not the bastion: %s", x.out.data);
	cr_expect_eq(children_of(getpid()), 0, "a process was started");
	conn_exec_free(&x);
	conn_free(c);

	/* A ProxyCommand would start a program: refused, never run. */
	marker = xasprintf("%s/proxycommand-ran", l.dir);
	cr_assert_eq(rig_local("printf 'Host behind\\n  HostName %s\\n  Port %d\\n"
	    "  ProxyCommand touch %s\\n' > %s", r->inner_addr, l.port, marker, cfg), 0);
	c = conn_new(&t);
	free(err);
	err = NULL;
	st = conn_connect(c, &err);
	cr_expect_neq(st, CONN_OK);
	cr_expect(err != NULL && strstr(err, "ProxyCommand") != NULL &&
	    strstr(err, "ProxyJump") != NULL, "%s", err ? err : "");
	cr_expect_neq(access(marker, F_OK), 0, "the ProxyCommand ran");
	conn_free(c);
	free(err), free(marker), free(cfg), free(kh);
	sshds[0] = sshds[1] = NULL;
	rig_sshd_free(&l);
	rig_sshd_free(&b);
}

/* The bastion's own one-time code goes through the same path: asked on
 * the terminal, naming the bastion. */
Test(reach, a_bastion_that_wants_a_code_is_asked_for_it, .timeout = 120)
{
	static struct rig_sshd b, l;
	const struct rig *r = rig_get();
	struct term t;
	char *kh, *env, *code, *asks, *text;

	rig_sshd_start_bastion(&b, 2248, 0, 3, &l, 2249);
	sshds[0] = &b;
	sshds[1] = &l;
	kh = both_known(&b, &l, "both_known_hosts");
	env = xasprintf("SLURM_HOSTNAME=%s TAOTOP_KNOWN_HOSTS=%s TAOTOP_JUMP=%s@%s", l.hosts, kh,
	    r->user, b.hosts);
	asks = xasprintf("taotop: %s@%s asks:", r->user, b.hosts);
	term_open(&t, "bastiontotp", env, "jobs");
	term_wait(&t, 20, asks);
	term_wait(&t, 5, "One-time password (OATH) for `");
	code = rig_totp(0);
	term_type(&t, code);
	term_wait(&t, 30, "[taotop exited 0]");
	text = term_text(&t);
	cr_expect(strstr(text, "SLURM") != NULL, "no jobs table:\n%s", text);
	cr_expect(strstr(text, code) == NULL, "the code was echoed:\n%s", text);
	free(text), free(code), free(asks), free(env), free(kh);
	term_close(&t);
	sshds[0] = sshds[1] = NULL;
	rig_sshd_free(&l);
	rig_sshd_free(&b);
}

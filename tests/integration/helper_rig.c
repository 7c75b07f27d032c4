#include "integration/helper_rig.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ssh/conn.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

static struct rig rig;
static int rig_loaded;

static void set_field(const char *key, const char *val)
{
	struct { const char *name; char **slot; } map[] = {
		{ "RIG_STATE", &rig.state }, { "RIG_HOST", &rig.host },
		{ "RIG_USER", &rig.user }, { "RIG_HOME", &rig.home },
		{ "RIG_KEY", &rig.key }, { "RIG_KNOWN_HOSTS", &rig.known_hosts },
		{ "RIG_SHARED", &rig.shared }, { "RIG_SSHD_CONFIG", &rig.sshd_config },
		{ "SLURM_CONF", &rig.slurm_conf },
		{ "RIG_TOTP_SECRET", &rig.totp_secret }, { "RIG_TOTP_USERS", &rig.totp_users },
		{ "RIG_TOTP_SSHD", &rig.totp_sshd }, { "RIG_NETNS", &rig.netns },
		{ "RIG_BASTION_ADDR", &rig.bastion_addr }, { "RIG_INNER_ADDR", &rig.inner_addr },
	};
	size_t i;

	if (strcmp(key, "RIG_PORT") == 0)
		rig.port = atoi(val);
	else if (strcmp(key, "RIG_UID") == 0)
		rig.uid = atoi(val);
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(key, map[i].name) == 0)
			*map[i].slot = xstrdup(val);
}

const struct rig *rig_get(void)
{
	const char *path = getenv("RIG_ENV"), *state = getenv("RIG_STATE");
	char line[4096], state_env[4096];
	FILE *f;

	if (rig_loaded)
		return &rig;
	/* RIG_ENV, else the env file of the rig in RIG_STATE (a second rig
	 * beside the default one), else the default rig's. */
	if (path == NULL && state != NULL && state[0] != '\0') {
		snprintf(state_env, sizeof(state_env), "%s/rig.env", state);
		path = state_env;
	}
	if (path == NULL)
		path = "/var/tmp/taotop-rig/rig.env";
	f = fopen(path, "r");
	cr_assert_not_null(f, "the test cluster is not up: %s: %s "
	    "(run tests/cluster/up, or make check)", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		char *eq = strchr(line, '=');
		if (line[0] == '#' || eq == NULL)
			continue;
		*eq = '\0';
		eq[strcspn(eq + 1, "\n") + 1] = '\0';
		set_field(line, eq + 1);
	}
	fclose(f);
	cr_assert(rig.host && rig.port && rig.user && rig.key && rig.shared,
	    "%s lacks a field: rerun tests/cluster/up", path);
	/* Local slurm commands (sinfo, scontrol) in tests need it too. */
	setenv("SLURM_CONF", rig.slurm_conf, 1);
	rig_loaded = 1;
	return &rig;
}

int rig_run(const char *const argv[], char **out)
{
	int pfd[2], status;
	struct buf b;
	char chunk[8192];
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(pfd), 0);
	/* No cr_* call in the child: Criterion reports every assertion to its
	 * runner, and a forked copy doing so deadlocks. */
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	cr_assert_neq(pid, -1);
	close(pfd[1]);
	buf_init(&b);
	while ((n = read(pfd[0], chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			buf_add(&b, chunk, (size_t)n);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (out != NULL)
		*out = buf_detach(&b);
	else
		buf_free(&b);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int rig_ssh(const char *cmd, char **out)
{
	const struct rig *r = rig_get();
	char port[16], kh[4096], dest[512];

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(kh, sizeof(kh), "UserKnownHostsFile=%s", r->known_hosts);
	snprintf(dest, sizeof(dest), "%s@%s", r->user, r->host);
	const char *const argv[] = {
		"ssh", "-q", "-o", "BatchMode=yes", "-o", kh, "-o",
		"StrictHostKeyChecking=yes", "-o", "ConnectTimeout=10", "-i", r->key,
		"-p", port, dest, "--", cmd, NULL,
	};
	return rig_run(argv, out);
}

char *rig_ssh_ok(const char *cmd)
{
	char *out = NULL;
	int rc = rig_ssh(cmd, &out);
	cr_assert_eq(rc, 0, "remote command failed (rc %d): %s\n%s", rc, cmd, out);
	size_t len = strlen(out);
	while (len > 0 && out[len - 1] == '\n')
		out[--len] = '\0';
	return out;
}

static int word_in(const char *word, size_t len, const char *list)
{
	const char *p = list;
	while (*p != '\0') {
		size_t l = strcspn(p, " ");
		if (l == len && strncmp(p, word, len) == 0)
			return 1;
		p += l;
		p += strspn(p, " ");
	}
	return 0;
}

char *rig_sbatch(const char *opts, const char *script)
{
	char *cmd = xasprintf("sbatch --parsable %s --wrap %s", opts, script);
	char *id = rig_ssh_ok(cmd);

	free(cmd);
	cr_assert(atoi(id) > 0, "sbatch said '%s'", id);
	return id;
}

char *rig_wait_state(const char *jobid, const char *want, int timeout_s)
{
	char *cmd = xasprintf("sacct -j %s -X -n -P -o State", jobid);
	char *out = NULL;
	time_t end = time(NULL) + timeout_s;

	for (;;) {
		free(out);
		out = NULL;
		if (rig_ssh(cmd, &out) == 0) {
			out[strcspn(out, "\n")] = '\0';
			size_t w = strcspn(out, " +");
			if (w > 0 && word_in(out, w, want))
				break;
		}
		cr_assert(time(NULL) < end, "job %s did not reach %s within %d s (last: '%s')",
		    jobid, want, timeout_s, out ? out : "");
		usleep(500 * 1000);
	}
	free(cmd);
	return out;
}

int rig_local(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	cmd = xvasprintf(fmt, ap);
	va_end(ap);
	rc = system(cmd);
	free(cmd);
	if (rc == -1)
		return -1;
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

void rig_check_sanitizer(int rc, const char *out, const char *what)
{
	if (rc != RIG_SANITIZER_EXIT && (out == NULL ||
	    !rig_matches(out, "ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:")))
		return;
	/* On the suite's own output, where tests/run's check finds it. */
	fprintf(stderr, "taotop %s: a sanitizer's report (exit %d):\n%s\n", what, rc,
	    out != NULL ? out : "");
	cr_expect(0, "taotop %s: a sanitizer reported an error (exit %d): see its report above", what, rc);
}

int rig_taotop(const char *env, const char *args, char **out)
{
	const struct rig *r = rig_get();
	const char *bin = getenv("TAOTOP_BIN");
	char *cmd;
	int rc;

	cr_assert_not_null(bin, "TAOTOP_BIN is not set (run through tests/run)");
	/* A sanitizer's report exits with its own code, never one taotop
	 * gives (1 "failed" would pass a test that expects a failure). */
	cmd = xasprintf("ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=%d "
	    "UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=%d "
	    "SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s TAOTOP_KNOWN_HOSTS=%s "
	    "TAOTOP_CLUSTER=rig TAOTOP_CONFIG=/nonexistent/config.yaml %s %s %s 2>&1",
	    RIG_SANITIZER_EXIT, RIG_SANITIZER_EXIT, r->user, r->host,
	    r->port, r->key, r->known_hosts, env ? env : "", bin, args);
	{
		const char *const argv[] = { "sh", "-c", cmd, NULL };
		rc = rig_run(argv, out);
	}
	free(cmd);
	rig_check_sanitizer(rc, *out, args);
	return rc;
}

char *rig_bundle(const char *local_dir, const char *remote_dir, const char *arch,
    const char *command, const char *extra)
{
	char *path = xasprintf("%s/%s.yaml", local_dir, arch), *cmd;
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fprintf(f, "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: %s\n"
	    "action: train\ncommand: %s\ndatasets: [lustre://%s/data]\n"
	    "gpus: 1\ncpus_per_task: 1\ntime_hours: 0.5\n%s",
	    arch, command, remote_dir, extra ? extra : "");
	fclose(f);
	cmd = xasprintf("mkdir -p %s/data", remote_dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
	return path;
}

void rig_target(struct conn_target *t)
{
	const struct rig *r = rig_get();
	static char hosts[64];

	snprintf(hosts, sizeof(hosts), "%s:%d", r->host, r->port);
	memset(t, 0, sizeof(*t));
	t->hosts = hosts;
	t->user = r->user;
	t->key_path = r->key;
	t->known_hosts = r->known_hosts;
	t->ssh_config = "";
	t->connect_timeout_s = 5;
}

static char *first_line(const char *cmd)
{
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	char *out = NULL;
	cr_assert_eq(rig_run(argv, &out), 0, "%s: %s", cmd, out);
	out[strcspn(out, "\n")] = '\0';
	return out;
}

/* A private sshd: the rig's config with its port, address, key and pidfile,
 * then `extra` sed expressions (or ""); started unless defer. */
static void sshd_setup(struct rig_sshd *d, int port, int new_key, const char *addr,
    const char *netns, const char *prog, const char *extra)
{
	const struct rig *r = rig_get();
	char *cmd;

	memset(d, 0, sizeof(*d));
	/* Tests name ports for the default rig (sshd on 2222); a second rig
	 * beside it shifts them by as much as its own sshd port, so the two
	 * rigs' private servers never meet. */
	port += r->port - 2222;
	d->port = port;
	d->addr = xstrdup(addr != NULL ? addr : "127.0.0.1");
	d->netns = netns != NULL ? xstrdup(netns) : NULL;
	d->prog = prog != NULL ? xstrdup(prog) : NULL;
	/* A listener a failed test left behind on this port (with sessions it
	 * may have left stopped) would answer in place of ours. Only this
	 * rig's: the pattern holds its state folder. */
	rig_local("for m in $(pgrep -f '%s/sshd-%d/sshd_config'); do for p in $(pgrep -P $m); do "
	    "pkill -CONT -P $p; kill -CONT $p; pkill -KILL -P $p; kill -KILL $p; done; kill $m; "
	    "done 2>/dev/null; true", r->state, port);
	d->dir = xasprintf("%s/sshd-%d", r->state, port);
	d->hosts = xasprintf("%s:%d", d->addr, port);
	d->known_hosts = xasprintf("%s/known_hosts", d->dir);
	cr_assert_eq(rig_local("rm -rf %s && mkdir -p %s", d->dir, d->dir), 0);
	if (new_key)
		cr_assert_eq(rig_local("ssh-keygen -q -t ed25519 -N '' -f %s/host_key", d->dir), 0);
	else
		cr_assert_eq(rig_local("cp %s/ssh/host_ed25519 %s/host_key && "
		    "cp %s/ssh/host_ed25519.pub %s/host_key.pub",
		    r->state, d->dir, r->state, d->dir), 0);
	/* The rig's config with our port, key and pidfile. */
	cr_assert_eq(rig_local("sed -e 's|^Port .*|Port %d|' -e 's|^HostKey .*|HostKey %s/host_key|' "
	    "-e 's|^PidFile .*|PidFile %s/sshd.pid|' -e 's|^ListenAddress .*|ListenAddress %s|' "
	    "%s %s > %s/sshd_config", port, d->dir, d->dir, d->addr, extra, r->sshd_config,
	    d->dir), 0);
	/* A PAM service of its own: the program's name (argv0, a link to
	 * sshd) up to OpenSSH 9.7; from 9.8 on the session runs as
	 * sshd-session and only PAMServiceName (10.0) says it. Kept only
	 * where sshd knows the keyword. */
	if (prog != NULL)
		cr_assert_eq(rig_local("printf 'PAMServiceName %s\\n' >> %s/sshd_config && "
		    "{ /usr/sbin/sshd -t -f %s/sshd_config 2>/dev/null || sed -i '$d' %s/sshd_config; }",
		    strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog, d->dir, d->dir, d->dir), 0);
	cmd = xasprintf("printf '[%s]:%d %%s\\n' \"$(cut -d' ' -f1,2 %s/host_key.pub)\" "
	    "> %s && echo ok", d->addr, port, d->dir, d->known_hosts);
	free(first_line(cmd));
	free(cmd);
	cmd = xasprintf("ssh-keygen -l -E sha256 -f %s/host_key.pub | cut -d' ' -f2", d->dir);
	d->fingerprint = first_line(cmd);
	free(cmd);
}

void rig_sshd_start(struct rig_sshd *d, int port, int new_key)
{
	sshd_setup(d, port, new_key, NULL, NULL, NULL, "");
	rig_sshd_restart(d);
}

/* s with its slot's number for the N at its end or before ".oath". */
static char *slot_path(const char *s, int slot)
{
	const char *n = strrchr(s, 'N');

	cr_assert_not_null(n, "%s", s);
	return xasprintf("%.*s%d%s", (int)(n - s), s, slot, n + 1);
}

#define TOTP_SED "-e 's|^UsePAM .*|UsePAM yes|' -e 's|^KbdInteractiveAuthentication .*|" \
    "KbdInteractiveAuthentication yes\\nAuthenticationMethods publickey,keyboard-interactive|'"

/* Slot's users file written afresh; its sshd program (caller frees). */
static char *totp_slot(int slot)
{
	const struct rig *r = rig_get();
	char *users;

	cr_assert_not_null(r->totp_sshd, "the rig has no TOTP service: bring it up again "
	    "(tests/cluster/up)");
	users = slot_path(r->totp_users, slot);
	cr_assert_eq(rig_local("printf 'HOTP/T30/6\\t%s\\t-\\t%s\\n' > %s && chmod 600 %s",
	    r->user, r->totp_secret, users, users), 0);
	free(users);
	return slot_path(r->totp_sshd, slot);
}

void rig_sshd_start_conf(struct rig_sshd *d, int port, const char *sed)
{
	sshd_setup(d, port, 0, NULL, NULL, NULL, sed);
	rig_sshd_restart(d);
}

void rig_sshd_start_totp(struct rig_sshd *d, int port, int slot)
{
	char *prog = totp_slot(slot);

	sshd_setup(d, port, 0, NULL, NULL, prog, TOTP_SED);
	free(prog);
	rig_sshd_restart(d);
}

char *rig_totp(int steps)
{
	const struct rig *r = rig_get();
	char *cmd = xasprintf("oathtool --totp -N \"$(date -u -d @$(( $(date +%%s) + %d * 30 )) "
	    "'+%%Y-%%m-%%d %%H:%%M:%%S UTC')\" %s", steps, r->totp_secret);
	char *code = first_line(cmd);

	free(cmd);
	cr_assert(code != NULL && strlen(code) == 6, "oathtool gave no code");
	return code;
}

void rig_sshd_start_bastion(struct rig_sshd *bastion, int bastion_port, int bastion_new_key,
    int totp_slot_n, struct rig_sshd *login, int login_port)
{
	const struct rig *r = rig_get();
	char *allow, *prog = totp_slot_n ? totp_slot(totp_slot_n) : NULL;

	cr_assert_not_null(r->netns, "the rig has no bastion network: bring it up again "
	    "(tests/cluster/up)");
	sshd_setup(bastion, bastion_port, bastion_new_key, r->bastion_addr, r->netns, prog,
	    prog != NULL ? TOTP_SED : "");
	free(prog);
	allow = xasprintf("-e 's|^AllowUsers .*|AllowUsers %s@%s|'", r->user, r->bastion_addr);
	sshd_setup(login, login_port, 0, r->inner_addr, NULL, NULL, allow);
	free(allow);
	rig_sshd_restart(bastion);
	rig_sshd_restart(login);
}

void rig_sshd_restart(struct rig_sshd *d)
{
	int i;

	cr_assert_eq(rig_local("%s%s%s %s -f %s/sshd_config -E %s/sshd.log",
	    d->netns ? "ip netns exec " : "", d->netns ? d->netns : "", d->netns ? "" : "",
	    d->prog ? d->prog : "/usr/sbin/sshd", d->dir, d->dir), 0,
	    "private sshd on port %d did not start (see %s/sshd.log)", d->port, d->dir);
	for (i = 0; i < 200; i++) {
		if (rig_local("bash -c 'exec 3<>/dev/tcp/%s/%d' 2>/dev/null", d->addr ? d->addr
		    : "127.0.0.1", d->port) == 0)
			return;
		usleep(100 * 1000);
	}
	cr_assert_fail("private sshd on port %d does not listen", d->port);
}

void rig_sshd_signal_sessions(struct rig_sshd *d, int sig)
{
	/* The listener's children are the per-connection monitors; theirs
	 * are the unprivileged session processes. The monitor first: right
	 * after the authentication it forks the session process, which a
	 * signal sent to its children before that would miss (a frozen peer
	 * that still answered, now and then, on OpenSSH 10). Its children are
	 * listed before it is signalled too: a killed monitor's are no longer
	 * its own. */
	rig_local("m=$(cat %s/sshd.pid 2>/dev/null) && for p in $(pgrep -P $m); do "
	    "k=$(pgrep -P $p); kill -%d $p; kill -%d $k $(pgrep -P $p) 2>/dev/null; done; true",
	    d->dir, sig, sig);
}

void rig_sshd_stop(struct rig_sshd *d)
{
	rig_sshd_signal_sessions(d, 9);
	rig_local("p=$(cat %s/sshd.pid 2>/dev/null) && kill $p && "
	    "while kill -0 $p 2>/dev/null; do sleep 0.05; done; rm -f %s/sshd.pid; true",
	    d->dir, d->dir);
}

void rig_sshd_free(struct rig_sshd *d)
{
	rig_sshd_signal_sessions(d, 18);	/* SIGCONT: never leave one stopped */
	rig_sshd_stop(d);
	free(d->dir);
	free(d->hosts);
	free(d->known_hosts);
	free(d->fingerprint);
	free(d->addr);
	free(d->netns);
	free(d->prog);
}

/* ---- the slow link ---------------------------------------------------------------------- */

void rig_relay_start(struct rig_relay *l, int port, int one_way_ms)
{
	const struct rig *r = rig_get();
	char tmpl[] = "/tmp/taotop-relay-XXXXXX", *pidfile, *text;

	memset(l, 0, sizeof(*l));
	cr_assert_not_null(mkdtemp(tmpl));
	l->dir = xstrdup(tmpl);
	l->port = port + (r->port - 2222);
	l->hosts = xasprintf("127.0.0.1:%d", l->port);
	l->known_hosts = xasprintf("%s/known_hosts", l->dir);
	cr_assert_eq(rig_local("sed 's/^\\[127.0.0.1\\]:%d /[127.0.0.1]:%d /' %s > %s", r->port,
	    l->port, r->known_hosts, l->known_hosts), 0);
	/* One a failed test left on this port (its pid beside the rig) goes
	 * first. */
	rig_local("f=%s/relay-%d.pid; [ -f $f ] && { kill $(cat $f); sleep 0.2; } >/dev/null 2>&1; "
	    "true", r->state, l->port);
	cr_assert_eq(rig_local("echo pass > %s/control && %s/tools/slowlink -l %d -t %d -d %d "
	    "-c %s/control -r %s/count -v %s/chunks.log -m 1800 >%s/relay.log 2>&1 & "
	    "echo $! > %s/pid; cp %s/pid %s/relay-%d.pid", l->dir, r->state, l->port, r->port,
	    one_way_ms, l->dir, l->dir, l->dir, l->dir, l->dir, l->dir, r->state, l->port), 0);
	pidfile = xasprintf("%s/pid", l->dir);
	text = file_read_all(pidfile, NULL, NULL);
	cr_assert_not_null(text);
	l->pid = atoi(text);
	free(text), free(pidfile);
	/* Up when it says so (the line is printed once it listens). */
	cr_assert_eq(rig_local("for i in $(seq 200); do grep -q 'each way' %s/relay.log && exit 0; "
	    "sleep 0.1; done; cat %s/relay.log; exit 1", l->dir, l->dir), 0, "slowlink did not start");
}

void rig_relay_set(struct rig_relay *l, const char *mode)
{
	/* Renamed into place: the relay never reads half a word. */
	cr_assert_eq(rig_local("echo %s > %s/control.new && mv %s/control.new %s/control && "
	    "for i in $(seq 200); do m=$(grep -E '^slowlink: (pass|stall|drop)$' %s/relay.log | "
	    "tail -1); [ \"${m:-slowlink: pass}\" = 'slowlink: %s' ] && exit 0; "
	    "sleep 0.05; done; exit 1", mode, l->dir, l->dir, l->dir, l->dir, mode), 0,
	    "slowlink did not take '%s'", mode);
}

int rig_uniq(void)
{
	static int uniq;
	static pid_t owner;
	unsigned int v = 0;
	FILE *f;

	if (uniq != 0 && owner == getpid())
		return uniq;	/* a fork (a Criterion worker) draws its own */
	f = fopen("/dev/urandom", "rb");
	cr_assert_not_null(f, "/dev/urandom: %s", strerror(errno));
	cr_assert_eq(fread(&v, sizeof(v), 1, f), 1);
	fclose(f);
	uniq = 100000000 + (int)(v % 900000000u);
	owner = getpid();
	return uniq;
}

int rig_matches(const char *s, const char *re)
{
	regex_t r;
	int ok;

	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

long long rig_relay_round_trips(const struct rig_relay *l)
{
	char *path = xasprintf("%s/count", l->dir), name[64];
	long long v, rt = 0;
	FILE *f;

	/* The relay writes its count as chunks pass: let the last ones of
	 * what the caller just did reach it first. */
	usleep(200 * 1000);
	f = fopen(path, "r");
	free(path);
	if (f == NULL)
		return 0;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (strcmp(name, "round_trips") == 0)
			rt = v;
	fclose(f);
	return rt;
}

char *rig_relay_chunks(const struct rig_relay *l)
{
	char *path = xasprintf("%s/chunks.log", l->dir), *text;

	text = file_read_all(path, NULL, NULL);
	free(path);
	return text != NULL ? text : xstrdup("(no chunk log)");
}

void rig_relay_stop(struct rig_relay *l)
{
	if (l->pid > 0)
		rig_local("kill %d 2>/dev/null; rm -rf %s %s/relay-%d.pid", l->pid, l->dir,
		    rig_get()->state, l->port);
	free(l->dir), free(l->hosts), free(l->known_hosts);
	memset(l, 0, sizeof(*l));
}

char *rig_wait_file(const char *path, const char *text, int timeout_s)
{
	struct timespec t0, now;
	char *got = NULL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		free(got);
		got = file_read_all(path, NULL, NULL);
		if (got != NULL && strstr(got, text) != NULL)
			return got;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
		    timeout_s * 1000L)
			return got;
		usleep(100 * 1000);
	}
}

#include "integration/helper_rig.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
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
	const char *path = getenv("RIG_ENV");
	char line[4096];
	FILE *f;

	if (rig_loaded)
		return &rig;
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

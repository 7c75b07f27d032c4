#include "cli/share.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/show.h"
#include "engine/config/config.h"
#include "ssh/lend.h"
#include "util/compat.h"
#include "util/xmalloc.h"

#define READY_WAIT_MS	5000

char *share_folder(const struct config *cfg)
{
	const char *off = getenv("TAOTOP_NO_SHARE");
	char *dir, *err = NULL;

	if ((off != NULL && off[0] != '\0' && strcmp(off, "0") != 0) || !cfg->share)
		return NULL;
	dir = lend_dir(&err);
	if (dir == NULL) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
	}
	return dir;
}

/* One request to the lender at dir/name, its answer (caller deletes). */
static cJSON *ask_lender(const char *dir, const char *name, const char *op)
{
	int fd = lend_dial(dir, name);
	cJSON *req, *r = NULL;
	size_t n;

	if (fd < 0)
		return NULL;
	req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "op", op);
	/* A lender that stopped (a suspended monitor) is not waited for. */
	if (lend_send(fd, req, NULL, 0) != 0 || lend_wait(fd, 2000) != 0 ||
	    lend_recv(fd, &r, NULL, 0, &n) != 0)
		r = NULL;
	close(fd);
	return r;
}

static int num(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
}

/* What the agent keeps of the verb's environment: what finding the
 * user's keys, folders and logs needs, nothing else. A verb's environment
 * may hold secrets (a submit's HF_TOKEN, an NGC key) the agent must not
 * keep for hours. */
static char **agent_env(const char *ready_fd)
{
	static const char *const keep[] = { "HOME", "USER", "LOGNAME", "PATH", "LANG", "LC_ALL",
	    "LC_CTYPE", "TMPDIR", "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME",
	    "OPENSSH_PROXYJUMP", "TAOTOP_LOG", "TAOTOP_DEBUG", "ASAN_OPTIONS", "UBSAN_OPTIONS",
	    "LSAN_OPTIONS", NULL };
	char **env = xcalloc(sizeof(keep) / sizeof(keep[0]) + 2, sizeof(*env));
	size_t i, n = 0;

	for (i = 0; keep[i] != NULL; i++)
		if (getenv(keep[i]) != NULL)
			env[n++] = xasprintf("%s=%s", keep[i], getenv(keep[i]));
	env[n++] = xasprintf("TAOTOP_AGENT_READY_FD=%s", ready_fd);
	env[n] = NULL;
	return env;
}

/* The agent: this program again, `agent serve`, in a session of its own,
 * its output nowhere (TAOTOP_LOG is its log), no descriptor of ours but
 * the pipe it says it is ready on: a records lock this verb holds must not
 * live on in it. Two forks, so it is nobody's child to reap. */
static pid_t spawn(int idle_s, int ready_wr)
{
	char *exe = compat_exe_path(), idle[32], fdtext[16];
	pid_t pid;

	if (exe == NULL)
		return -1;
	snprintf(idle, sizeof(idle), "%ds", idle_s);
	snprintf(fdtext, sizeof(fdtext), "%d", ready_wr);
	pid = fork();
	if (pid == 0) {
		const char *log = getenv("TAOTOP_LOG");
		int null = open("/dev/null", O_RDWR), err = -1;
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		/* Not the verb's folder, kept busy for hours. */
		if (chdir("/") != 0)
			_exit(127);
		/* Its stderr is its log's, if it has one: what a sanitizer
		 * or the C library says at its end is read there. */
		if (log != NULL && log[0] != '\0')
			err = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (null >= 0)
			dup2(null, 0), dup2(null, 1), dup2(err >= 0 ? err : null, 2);
		for (int fd = 3; fd < 1024; fd++)
			if (fd != ready_wr)
				close(fd);
		execle(exe, "taotop", "agent", "serve", "--idle", idle, (char *)NULL,
		    agent_env(fdtext));
		_exit(127);
	}
	free(exe);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return pid;
}

int share_agent_ensure(const char *dir, int idle_s, int *started, char **err)
{
	int fd = lend_dial(dir, LEND_AGENT_SOCK), p[2];
	struct pollfd pf;
	char c;

	*started = 0;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (pipe(p) != 0) {
		*err = xasprintf("cannot start the agent: %s", strerror(errno));
		return -1;
	}
	if (spawn(idle_s, p[1]) < 0) {
		close(p[0]), close(p[1]);
		*err = xstrdup("cannot start the agent: this program's path is unknown");
		return -1;
	}
	close(p[1]);
	pf = (struct pollfd){ p[0], POLLIN, 0 };
	/* A byte once it listens; the pipe's end without one: it could not
	 * (another agent won the race, which serves as well). */
	if (poll(&pf, 1, READY_WAIT_MS) == 1 && read(p[0], &c, 1) == 1)
		*started = 1;
	close(p[0]);
	fd = lend_dial(dir, LEND_AGENT_SOCK);
	if (fd < 0) {
		*err = xstrdup("the agent did not start (TAOTOP_LOG names a log that says why)");
		return -1;
	}
	close(fd);
	return 0;
}

int share_agent_stop(const char *dir, int *pid)
{
	cJSON *r;
	int fd = lend_dial(dir, LEND_AGENT_SOCK);

	*pid = 0;
	if (fd < 0)
		return 0;
	close(fd);
	r = ask_lender(dir, LEND_AGENT_SOCK, "stop");
	if (r == NULL)
		return -1;
	*pid = num(r, "pid");
	cJSON_Delete(r);
	/* Gone when its socket no longer answers. */
	for (int i = 0; i < 50; i++) {
		fd = lend_dial(dir, LEND_AGENT_SOCK);
		if (fd < 0)
			return 1;
		close(fd);
		compat_sleep_ms(100);
	}
	return -1;
}

static void print_lender(FILE *f, const cJSON *r)
{
	const cJSON *s, *k = cJSON_GetObjectItemCaseSensitive(r, "lender");
	int clients = num(r, "clients");

	fprintf(f, "%s (pid %d): lends to %d client%s now, %d request%s served", show(
	    cJSON_IsString(k) ? k->valuestring : "?"), num(r, "pid"), clients,
	    clients == 1 ? "" : "s", num(r, "served"), num(r, "served") == 1 ? "" : "s");
	if (num(r, "refused") > 0)
		fprintf(f, ", %d connection%s of another user refused", num(r, "refused"),
		    num(r, "refused") == 1 ? "" : "s");
	fprintf(f, ", idle %d s\n", num(r, "idle_ms") / 1000);
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(r, "sessions")) {
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(s, "hosts");
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(s, "user");
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(s, "host");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(s, "cluster");
		fprintf(f, "  %s%s%s%s%s%s: %s", cJSON_IsString(name) ? show(name->valuestring) : "",
		    cJSON_IsString(name) ? " " : "", cJSON_IsString(u) ? show(u->valuestring) : "",
		    cJSON_IsString(u) ? "@" : "", cJSON_IsString(h) ? show(h->valuestring) : "?",
		    "", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "connected"))
		    ? "connected" : "not connected");
		if (cJSON_IsString(at))
			fprintf(f, " to %s", show(at->valuestring));
		if (cJSON_GetObjectItemCaseSensitive(s, "requests") != NULL)
			fprintf(f, ", %d request%s", num(s, "requests"),
			    num(s, "requests") == 1 ? "" : "s");
		fputc('\n', f);
	}
}

int share_print_lenders(FILE *f, const char *dir, int json)
{
	cJSON *all = cJSON_CreateArray();
	struct dirent *e;
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, i;
	int k = 0;

	while (d != NULL && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, LEND_AGENT_SOCK) == 0 || (strncmp(e->d_name, "monitor-", 8) == 0
		    && strstr(e->d_name, ".sock") != NULL)) {
			names = xreallocarray(names, n + 1, sizeof(*names));
			names[n++] = xstrdup(e->d_name);
		}
	if (d != NULL)
		closedir(d);
	for (i = 0; i < n; i++) {
		cJSON *r = ask_lender(dir, names[i], "status");
		if (r != NULL) {
			if (!json)
				print_lender(f, r);
			cJSON_DeleteItemFromObject(r, "blobs");
			cJSON_DeleteItemFromObject(r, "ok");
			cJSON_AddItemToArray(all, r);
			k++;
		}
		free(names[i]);
	}
	free(names);
	if (json) {
		char *s = cJSON_Print(all);
		fprintf(f, "%s\n", s);
		cJSON_free(s);
	}
	cJSON_Delete(all);
	return k;
}

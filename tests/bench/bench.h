/*
 * What the benchmarks share: a clock, a command over the open session that
 * must succeed, and the baseline's ways of running one: an ssh process per
 * command (what a user types by hand), and the same through OpenSSH's
 * connection sharing (what a user who cares sets up). Header only: each bench is built
 * from its own file and the integration helpers.
 */
#ifndef TAOTOP_TESTS_BENCH_H
#define TAOTOP_TESTS_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/record.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

static inline double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run a command on the login node; exit the bench on failure. */
static inline char *bench_remote(struct conn *c, const char *cmd)
{
	struct conn_exec x;
	char *err = NULL, *out;

	conn_exec_init(&x, cmd);
	if (conn_exec(c, &x, &err) != CONN_OK || x.exit_status != 0) {
		fprintf(stderr, "bench: %s: %s%s\n", cmd, err ? err : "", x.err.data ? x.err.data : "");
		exit(1);
	}
	out = x.out.data ? xstrdup(x.out.data) : xstrdup("");
	conn_exec_free(&x);
	return out;
}

/*
 * OpenSSH's connection sharing, as a user who cares sets it up:
 * ControlMaster=auto, ControlPersist=60, the socket in a folder of its own.
 * The master is started (ssh -M -N -f) and warmed before any timing, its
 * process id asked with -O check (for its CPU), and it ends with -O exit.
 */
struct bench_mux {
	char	dir[64];	/* the private folder */
	char	path[96];	/* its socket */
	int	master_pid;	/* 0: not known */
};

/* One ssh run: through the master m (NULL: a plain ssh process, the
 * baseline's first way), the control request ctl ("check", "exit") when not
 * NULL, else the command cmd. Its standard output (and error, for ctl) in
 * *out when out is not NULL (caller frees); its exit status in *rc when rc
 * is not NULL; its wall time (s). */
static inline double bench_ssh_run(const struct rig *r, const struct bench_mux *m,
    const char *ctl, const char *cmd, char **out, int *rc)
{
	char port[16], kh[4096], dest[256], cm[160], *argv[24];
	double t0 = bench_now_s();
	int fds[2] = { -1, -1 }, status, n = 0;
	pid_t pid;

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(kh, sizeof(kh), "UserKnownHostsFile=%s", r->known_hosts);
	snprintf(dest, sizeof(dest), "%s@%s", r->user, r->host);
	argv[n++] = (char *)"ssh";
	argv[n++] = (char *)"-q";
	argv[n++] = (char *)"-o";
	argv[n++] = (char *)"BatchMode=yes";
	argv[n++] = (char *)"-o";
	argv[n++] = kh;
	argv[n++] = (char *)"-i";
	argv[n++] = (char *)r->key;
	argv[n++] = (char *)"-p";
	argv[n++] = port;
	if (m != NULL) {
		snprintf(cm, sizeof(cm), "ControlPath=%s", m->path);
		argv[n++] = (char *)"-o";
		argv[n++] = (char *)"ControlMaster=auto";
		argv[n++] = (char *)"-o";
		argv[n++] = cm;
		argv[n++] = (char *)"-o";
		argv[n++] = (char *)"ControlPersist=60";
	}
	if (ctl != NULL) {
		argv[n++] = (char *)"-O";
		argv[n++] = (char *)ctl;
	}
	argv[n++] = dest;
	if (cmd != NULL)
		argv[n++] = (char *)cmd;
	argv[n] = NULL;
	if (out != NULL && pipe(fds) != 0)
		exit(1);
	fflush(stdout);	/* or the child flushes our buffer a second time */
	pid = fork();
	if (pid == 0) {
		if (out != NULL) {
			dup2(fds[1], 1);
			if (ctl != NULL)
				dup2(fds[1], 2);
			close(fds[0]);
			close(fds[1]);
		} else if (freopen("/dev/null", "w", stdout) == NULL)
			_exit(127);
		execvp("ssh", argv);
		_exit(127);
	}
	if (out != NULL) {
		struct buf b;
		char chunk[65536];
		ssize_t got;

		close(fds[1]);
		buf_init(&b);
		while ((got = read(fds[0], chunk, sizeof(chunk))) > 0)
			buf_add(&b, chunk, (size_t)got);
		close(fds[0]);
		*out = b.data != NULL ? buf_detach(&b) : xstrdup("");
	}
	waitpid(pid, &status, 0);
	if (rc != NULL)
		*rc = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
	return bench_now_s() - t0;
}

/* The baseline's way: one ssh process per command; its wall time (s). */
static inline double bench_ssh_process(const struct rig *r, const char *cmd)
{
	return bench_ssh_run(r, NULL, NULL, cmd, NULL, NULL);
}

/* The same through the master m; its wall time (s). */
static inline double bench_ssh_mux(const struct rig *r, const struct bench_mux *m,
    const char *cmd)
{
	return bench_ssh_run(r, m, NULL, cmd, NULL, NULL);
}

/* Start the master, warm it (two commands through it), learn its pid. */
static inline void bench_mux_start(const struct rig *r, struct bench_mux *m)
{
	char port[16], kh[4096], dest[256], cm[160], *check = NULL, *p;
	pid_t pid;
	int status, rc;

	snprintf(m->dir, sizeof(m->dir), "/tmp/taotop-mux-XXXXXX");
	if (mkdtemp(m->dir) == NULL)
		exit(1);
	snprintf(m->path, sizeof(m->path), "%s/cm", m->dir);
	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(kh, sizeof(kh), "UserKnownHostsFile=%s", r->known_hosts);
	snprintf(dest, sizeof(dest), "%s@%s", r->user, r->host);
	snprintf(cm, sizeof(cm), "ControlPath=%s", m->path);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* -M alone (with -o ControlMaster=yes too it would mean "ask",
		 * and every session would be refused); -f: to the background
		 * once authenticated, its stdio on /dev/null (or it would hold
		 * a pipe of ours open). */
		if (freopen("/dev/null", "w", stdout) == NULL || freopen("/dev/null", "w", stderr) == NULL)
			_exit(127);
		execlp("ssh", "ssh", "-q", "-o", "BatchMode=yes", "-o", kh, "-i", r->key, "-p", port,
		    "-o", cm, "-o", "ControlPersist=60", "-M", "-N", "-f",
		    dest, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench: the ssh master did not start\n");
		exit(1);
	}
	for (int i = 0; i < 2; i++) {
		bench_ssh_run(r, m, NULL, "true", NULL, &rc);
		if (rc != 0) {
			fprintf(stderr, "bench: a command through the ssh master failed\n");
			exit(1);
		}
	}
	bench_ssh_run(r, m, "check", NULL, &check, &rc);
	m->master_pid = (p = strstr(check, "pid=")) != NULL ? atoi(p + 4) : 0;
	free(check);
	if (rc != 0 || m->master_pid <= 0) {
		fprintf(stderr, "bench: the ssh master is not running\n");
		exit(1);
	}
}

static inline void bench_mux_stop(const struct rig *r, struct bench_mux *m)
{
	char *out = NULL;

	bench_ssh_run(r, m, "exit", NULL, &out, NULL);
	free(out);
	unlink(m->path);
	rmdir(m->dir);
	m->master_pid = 0;
}

/* CPU seconds process pid has used, all its threads, to the nanosecond
 * (the process's CPU clock: /proc's utime and stime count 10 ms ticks,
 * coarser than an idle minute of a quiet process). -1 once it is gone. */
static inline double bench_cpu_s(int pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) != 0 || clock_gettime(clk, &ts) != 0)
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A row of the table, printed and appended to results (when not NULL);
 * theirs < 0: no baseline. */
static inline void bench_row(FILE *results, const char *measure, double ours, double theirs,
    const char *unit)
{
	if (theirs < 0) {
		printf("%-48s %12.3f %12s %s\n", measure, ours, "-", unit);
		if (results != NULL)
			fprintf(results, "%s\t%.3f\t\t%s\n", measure, ours, unit);
		return;
	}
	printf("%-48s %12.3f %12.3f %s\n", measure, ours, theirs, unit);
	if (results != NULL)
		fprintf(results, "%s\t%.3f\t%.3f\t%s\n", measure, ours, theirs, unit);
}

/* Write r (then freed) straight into the records folder jobs, as a
 * record of long ago would be there: no lock, no fsync, for thousands. */
static inline void bench_put_record(const char *jobs, struct job_record *r)
{
	char *json = record_to_json(r), *path = xasprintf("%s/%s.json", jobs, r->id);
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(json, f) < 0 || fclose(f) != 0)
		exit(1);
	free(path);
	free(json);
	record_free(r);
}

/* A process's resident memory (MiB), 0 when it cannot be read. */
static inline double bench_rss_mib(int pid)
{
	char *path = xasprintf("/proc/%d/status", pid), *err = NULL;
	char *text = file_read_all(path, NULL, &err), *p;
	double kib = 0;

	free(path);
	if (text != NULL && (p = strstr(text, "VmRSS:")) != NULL)
		kib = atof(p + 6);
	free(text);
	free(err);
	return kib / 1024.0;
}

#endif

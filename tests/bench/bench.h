/*
 * What the benchmarks share: a clock, a command over the open session that
 * must succeed, and the baseline's way of running one, an ssh process per
 * command (what a user types by hand). Header only: each bench is built
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

/* The baseline's way: one ssh process per command; its wall time (s). */
static inline double bench_ssh_process(const struct rig *r, const char *cmd)
{
	char port[16], kh[4096], dest[256];
	double t0 = bench_now_s();
	pid_t pid;
	int status;

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(kh, sizeof(kh), "UserKnownHostsFile=%s", r->known_hosts);
	snprintf(dest, sizeof(dest), "%s@%s", r->user, r->host);
	fflush(stdout);	/* or the child flushes our buffer a second time */
	pid = fork();
	if (pid == 0) {
		if (freopen("/dev/null", "w", stdout) == NULL)
			_exit(127);
		execlp("ssh", "ssh", "-q", "-o", "BatchMode=yes", "-o", kh, "-i", r->key, "-p", port,
		    dest, cmd, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return bench_now_s() - t0;
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

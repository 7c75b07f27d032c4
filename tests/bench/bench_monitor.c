/*
 * make bench: the monitor, the real binary in tmux against the test cluster.
 * Rows appended to $BENCH_RESULTS:
 *
 *  - CPU over 60 s watching 50 jobs that do not change, at the default poll
 *    rate, against the seed's way of watching: `ssh login squeue` every
 *    10 s (the CPU of those ssh processes over the same 60 s);
 *  - with 10 000 jobs (records of finished jobs): the resident memory, and
 *    the time from a keypress to its frame drawn, from taotop's own debug
 *    log, for moving the selection and for typing into the filter (each key
 *    re-filters and re-sorts all 10 000). No baseline: nothing else does it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "engine/record.h"
#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/file.h"
#include "util/xmalloc.h"

#define IDLE_JOBS	50
#define IDLE_SECONDS	60
#define MANY_JOBS	10000

static FILE *results;

static void row(const char *measure, double ours, double theirs, const char *unit)
{
	bench_row(results, measure, ours, theirs, unit);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds a process has used, all its threads. */
static double cpu_of(int pid)
{
	char *path = xasprintf("/proc/%d/stat", pid), *err = NULL;
	char *text = file_read_all(path, NULL, &err);
	unsigned long ut = 0, st = 0;
	char *p;

	free(path);
	if (text == NULL) {
		fprintf(stderr, "bench_monitor: %s\n", err);
		exit(1);
	}
	/* Fields after the command name (which may hold spaces): 14 utime, 15 stime. */
	p = strrchr(text, ')');
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
	    &st) != 2) {
		fprintf(stderr, "bench_monitor: cannot read /proc/%d/stat\n", pid);
		exit(1);
	}
	free(text);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double children_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void bench_idle(void)
{
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40, .env = "TAOTOP_POLL_S=10" };
	double c0, c1, t0, t1, base0, base1;
	char *cmd;
	int pid, i;

	cmd = xasprintf("for i in $(seq %d); do sbatch --parsable --hold -J bench-idle -t 10 "
	    "-o /dev/null --wrap 'sleep 1' >/dev/null; done", IDLE_JOBS);
	free(rig_ssh_ok(cmd));
	free(cmd);
	screen_open(&s, "bench-idle", &so);
	screen_wait_line(&s, 30, "bench-idle", "Pending", NULL);
	sleep(5);	/* past the first polls and the first log reads */
	pid = screen_pid(&s);
	c0 = cpu_of(pid);
	t0 = now_s();
	sleep(IDLE_SECONDS);
	c1 = cpu_of(pid);
	t1 = now_s();
	screen_keys(&s, "q");
	screen_wait_exit(&s, 10);
	screen_close(&s);

	/* The seed's way: an ssh process every 10 s. */
	base0 = children_cpu();
	for (i = 0; i < IDLE_SECONDS / 10; i++) {
		char *out = NULL;
		rig_ssh("squeue --me >/dev/null", &out);
		free(out);
	}
	base1 = children_cpu();
	row("monitor idle CPU, 50 jobs, 60 s (% of a core)", 100 * (c1 - c0) / (t1 - t0),
	    100 * (base1 - base0) / IDLE_SECONDS, "%");
	free(rig_ssh_ok("scancel --name=bench-idle"));
}

/* 10 000 finished jobs' records, written straight to the store's folder. */
static char *many_records(void)
{
	char tmpl[] = "/tmp/taotop-bench-state-XXXXXX", *dir, *jobs;
	time_t now = time(NULL);
	int i;

	if (mkdtemp(tmpl) == NULL)
		exit(1);
	dir = xstrdup(tmpl);
	jobs = xasprintf("%s/taotop/jobs", dir);
	rig_local("mkdir -p %s", jobs);
	for (i = 0; i < MANY_JOBS; i++) {
		struct job_record *r;
		char id[48], ref[16];
		snprintf(id, sizeof(id), "tao-20261129-%06x", i);
		snprintf(ref, sizeof(ref), "%d", 1000000 + i);
		r = record_new(id);
		record_set(&r->cluster, "rig");
		record_set(&r->backend_ref, ref);
		record_set(&r->native, i % 7 ? "COMPLETED" : "FAILED");
		r->state = i % 7 ? TAO_DONE : TAO_ERROR;
		r->created = r->updated = now - i;
		bench_put_record(jobs, r);
	}
	free(jobs);
	return dir;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Key times logged since offset in taotop's log, in ms, sorted. */
static size_t key_times(const char *log, size_t from, double *ms, size_t max)
{
	char *err = NULL, *text = file_read_all(log, NULL, &err), *p;
	size_t n = 0;

	if (text == NULL) {
		fprintf(stderr, "bench_monitor: %s\n", err);
		exit(1);
	}
	for (p = text + from; (p = strstr(p, "answered in ")) != NULL && n < max; p++)
		ms[n++] = atof(p + 12) / 1000.0;
	free(text);
	qsort(ms, n, sizeof(*ms), cmp_double);
	return n;
}

static size_t file_size(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;

	if (f != NULL) {
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fclose(f);
	}
	return n > 0 ? (size_t)n : 0;
}

static void bench_many(void)
{
	char *state = many_records(), *env, *log;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	double ms[512];
	size_t n, from;
	int pid, i;

	env = xasprintf("XDG_STATE_HOME=%s TAOTOP_DEBUG=1", state);
	so.env = env;
	screen_open(&s, "bench-many", &so);
	log = xasprintf("%s/taotop.log", s.dir);
	screen_wait(&s, 60, "tao-20261129-", NULL);
	sleep(3);
	pid = screen_pid(&s);

	from = file_size(log);
	for (i = 0; i < 200; i++)
		screen_keys(&s, i % 50 < 25 ? "j" : "k");
	n = key_times(log, from, ms, 512);
	row("monitor keypress to frame, 10 000 jobs (median)", n ? ms[n / 2] : -1, -1, "ms");
	row("monitor keypress to frame, 10 000 jobs (p95)", n ? ms[n * 95 / 100] : -1, -1, "ms");

	from = file_size(log);
	screen_keys(&s, "/");
	screen_type(&s, "tao-20261129-00");
	screen_keys(&s, "BSpace");
	screen_keys(&s, "BSpace");
	screen_keys(&s, "Enter");
	n = key_times(log, from, ms, 512);
	row("monitor filter keystroke, 10 000 jobs (median)", n ? ms[n / 2] : -1, -1, "ms");

	row("monitor resident memory, 10 000 jobs", bench_rss_mib(pid), -1, "MiB");
	screen_keys(&s, "q");
	screen_wait_exit(&s, 20);
	screen_close(&s);
	rig_local("rm -rf %s", state);
	free(env);
	free(log);
	free(state);
}

int main(void)
{
	const char *out = getenv("BENCH_RESULTS");

	results = out != NULL ? fopen(out, "a") : NULL;
	bench_many();
	bench_idle();
	if (results != NULL)
		fclose(results);
	return 0;
}

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
 *    re-filters and re-sorts all 10 000). No baseline: nothing else does it;
 *  - keypress to frame while the slowlink relay (250 ms round trip) stalls
 *    the connection completely, against the same keys on loopback, in the
 *    same run: moving the selection (the logs of each job asked for), the
 *    filter, help, scrolling. Twice: taotop's own time from the key read to
 *    its frame drawn (debug log), and from the outside, `?` sent with tmux
 *    to the help dialog seen in the pane.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "engine/store/record.h"
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

/* n finished jobs' records, written straight to the store's folder. */
static char *many_records(int n)
{
	char tmpl[] = "/tmp/taotop-bench-state-XXXXXX", *dir, *jobs;
	time_t now = time(NULL);
	int i;

	if (mkdtemp(tmpl) == NULL)
		exit(1);
	dir = xstrdup(tmpl);
	jobs = xasprintf("%s/taotop/jobs", dir);
	rig_local("mkdir -p %s && chmod 700 %s/taotop %s", jobs, dir, jobs);	/* or refused */
	for (i = 0; i < n; i++) {
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

/* taotop in tmux over the records in state, debug log on, its list shown;
 * the log's path (caller frees). */
static char *open_over(struct screen *s, const char *name, struct screen_opts *so,
    const char *state)
{
	char *env = xasprintf("XDG_STATE_HOME=%s TAOTOP_DEBUG=1", state);

	so->env = env;
	screen_open(s, name, so);
	so->env = NULL;
	free(env);
	screen_wait(s, 60, "tao-20261129-", NULL);
	return xasprintf("%s/taotop.log", s->dir);
}

static void bench_many(void)
{
	char *state = many_records(MANY_JOBS), *log;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	double ms[512];
	size_t n, from;
	int pid, i;

	log = open_over(&s, "bench-many", &so, state);
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
	free(log);
	free(state);
}

#define STALL_JOBS	2000
#define STALL_ONE_WAY	125	/* ms: a 250 ms round trip */
#define HELP_RUNS	15

/* Keys a user types while looking around, their times (ms) from the log,
 * sorted; and the median of `?` to the help dialog seen from outside. */
static size_t look_around(struct screen *s, const char *log, double *ms, size_t max,
    double *help_ms)
{
	double h[HELP_RUNS];
	size_t from = file_size(log), n;
	char *line;
	int i;

	for (i = 0; i < 120; i++)
		screen_keys(s, i % 40 < 20 ? "j" : "k");
	screen_keys(s, "/");
	screen_type(s, "tao-20261129-00");
	screen_keys(s, "BSpace");
	screen_keys(s, "Escape");
	screen_keys(s, "Tab");
	for (i = 0; i < 10; i++)
		screen_keys(s, i < 5 ? "PageUp" : "PageDown");
	screen_keys(s, "Tab");
	screen_keys(s, "Tab");
	for (i = 0; i < HELP_RUNS; i++) {
		double t0 = now_s();
		screen_keys(s, "?");
		screen_wait(s, 10, "taotop keys", NULL);
		h[i] = (now_s() - t0) * 1000;
		screen_keys(s, "Escape");
		while ((line = screen_line_with(s, "taotop keys")) != NULL) {
			free(line);
			usleep(2000);
		}
	}
	qsort(h, HELP_RUNS, sizeof(h[0]), cmp_double);
	*help_ms = h[HELP_RUNS / 2];
	n = key_times(log, from, ms, max);
	return n;
}

static void bench_stalled(void)
{
	char *state = many_records(STALL_JOBS), *log;
	struct screen near, far;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	struct rig_relay l;
	static double m_near[1024], m_far[1024];
	double h_near, h_far;
	size_t n_near, n_far;

	log = open_over(&near, "bench-near", &so, state);
	screen_wait(&near, 30, ", polled ", NULL);
	n_near = look_around(&near, log, m_near, 1024, &h_near);
	screen_keys(&near, "q");
	screen_wait_exit(&near, 20);
	screen_close(&near);
	free(log);

	rig_relay_start(&l, 2296, STALL_ONE_WAY);
	so.hosts = l.hosts;
	so.known_hosts = l.known_hosts;
	log = open_over(&far, "bench-far", &so, state);
	screen_wait(&far, 60, ", polled ", NULL);
	/* Stalled: nothing moves either way; a poll waits behind it. */
	rig_relay_set(&l, "stall");
	screen_wait(&far, 30, "not answering for", NULL);
	n_far = look_around(&far, log, m_far, 1024, &h_far);
	rig_relay_set(&l, "pass");
	screen_keys(&far, "q");
	screen_wait_exit(&far, 60);
	screen_close(&far);
	rig_relay_stop(&l);

	row("monitor keypress to frame, link stalled (median)", n_far ? m_far[n_far / 2] : -1,
	    n_near ? m_near[n_near / 2] : -1, "ms");
	row("monitor keypress to frame, link stalled (p95)", n_far ? m_far[n_far * 95 / 100] : -1,
	    n_near ? m_near[n_near * 95 / 100] : -1, "ms");
	row("monitor ? to help seen in tmux, link stalled", h_far, h_near, "ms");
	printf("(against loopback, the same keys: %zu and %zu keys timed)\n", n_far, n_near);
	rig_local("rm -rf %s", state);
	free(log);
	free(state);
}

int main(void)
{
	const char *out = getenv("BENCH_RESULTS");

	results = out != NULL ? fopen(out, "a") : NULL;
	bench_stalled();
	bench_many();
	bench_idle();
	if (results != NULL)
		fclose(results);
	return 0;
}

/*
 * make bench: the monitor, the real binary in tmux against the test cluster.
 * Rows appended to $BENCH_RESULTS:
 *
 *  - CPU over 60 s watching 50 jobs that do not change, at the default poll
 *    rate (the process's CPU clock, to the nanosecond: /proc's 10 ms ticks
 *    read 0 for it), against the seed's way of watching: `ssh login squeue`
 *    every 10 s (the CPU of those ssh processes over the same 60 s), and the
 *    same through an OpenSSH master (ControlMaster, ControlPersist: the
 *    clients' CPU and the master's);
 *  - with 10 000 jobs (records of finished jobs): the resident memory, and
 *    the time from a keypress to its frame, for moving the selection and
 *    for typing into the filter (each key re-filters and re-sorts all
 *    10 000). No baseline: nothing else does it;
 *  - keypress to frame while the slowlink relay (250 ms round trip) stalls
 *    the connection completely, against the same keys on loopback, in the
 *    same run: moving the selection (the logs of each job asked for), the
 *    filter, help, scrolling; and `?` sent with tmux to the help dialog
 *    seen in the pane (capture-pane, from the outside).
 *
 * A keypress is timed from the key's arrival: the moment the bench writes
 * the send-keys command to a tmux control-mode client (tmux writes the key
 * to the pty at once), to the end of the first burst of bytes taotop
 * writes to the pane after it (tmux's %output notifications; the burst
 * ends at 15 ms without output). So a key waiting behind the monitor's
 * other work (a poll's answer taken, a frame drawn) is counted. taotop's
 * own debug log times a key from the moment it read it, after that work;
 * its median is printed beside, not in the table.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

/* CPU seconds a process has used, all its threads, to the nanosecond. */
static double cpu_of(int pid)
{
	double t = bench_cpu_s(pid);

	if (t < 0) {
		fprintf(stderr, "bench_monitor: no CPU clock for process %d\n", pid);
		exit(1);
	}
	return t;
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
	double c0, c1, t0, t1, base0, base1, mux0, mux1;
	struct bench_mux m;
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
	/* Through a master started and warmed before: the clients and it. */
	bench_mux_start(rig_get(), &m);
	mux0 = children_cpu() + cpu_of(m.master_pid);
	for (i = 0; i < IDLE_SECONDS / 10; i++)
		bench_ssh_mux(rig_get(), &m, "squeue --me >/dev/null");
	mux1 = children_cpu() + cpu_of(m.master_pid);
	bench_mux_stop(rig_get(), &m);
	row("monitor idle CPU, 50 jobs, 60 s (% of a core)", 100 * (c1 - c0) / (t1 - t0),
	    100 * (base1 - base0) / IDLE_SECONDS, "%");
	row("monitor idle CPU, vs squeue via ssh ControlMaster", 100 * (c1 - c0) / (t1 - t0),
	    100 * (mux1 - mux0) / IDLE_SECONDS, "%");
	printf("  (taotop used %.1f ms of CPU in %.0f s)\n", (c1 - c0) * 1000, t1 - t0);
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

/*
 * Keys timed from the outside: a tmux control-mode client of the screen's
 * server. A key is the send-keys command written to it; what taotop writes
 * to the pane comes back as %output lines, noted when read.
 */
struct keyclock {
	pid_t	pid;
	int	to, from;		/* its standard input, its output */
	char	buf[1 << 16];
	size_t	len;
	int	no_frame;		/* keys with no output within a second */
};

/* Read what tmux sends for up to wait_ms (until quiet_ms pass with no
 * output once some came, when quiet_ms > 0): the times of the first and
 * the last %output line (0: none). */
static void keyclock_read(struct keyclock *k, int wait_ms, int quiet_ms, double *first,
    double *last)
{
	double end = now_s() + wait_ms / 1000.0;

	*first = *last = 0;
	for (;;) {
		double now = now_s(), until = end;
		struct pollfd pfd = { .fd = k->from, .events = POLLIN };
		ssize_t got;
		char *nl;

		if (quiet_ms > 0 && *last > 0 && *last + quiet_ms / 1000.0 < until)
			until = *last + quiet_ms / 1000.0;
		if (now >= until)
			return;
		if (poll(&pfd, 1, (int)((until - now) * 1000) + 1) <= 0)
			continue;
		got = read(k->from, k->buf + k->len, sizeof(k->buf) - 1 - k->len);
		if (got <= 0) {
			if (got < 0 && errno == EAGAIN)
				continue;
			fprintf(stderr, "bench_monitor: the tmux control client ended\n");
			exit(1);
		}
		now = now_s();
		k->len += (size_t)got;
		k->buf[k->len] = '\0';
		/* Whole lines; a line longer than the buffer counts as one. */
		while ((nl = strchr(k->buf, '\n')) != NULL || k->len == sizeof(k->buf) - 1) {
			size_t used = nl != NULL ? (size_t)(nl - k->buf) + 1 : k->len;
			if (strncmp(k->buf, "%output ", 8) == 0) {
				if (*first == 0)
					*first = now;
				*last = now;
			}
			memmove(k->buf, k->buf + used, k->len - used + 1);
			k->len -= used;
		}
	}
}

static void keyclock_open(struct keyclock *k, struct screen *s)
{
	int in[2], out[2];
	double a, b;

	memset(k, 0, sizeof(*k));
	if (pipe(in) != 0 || pipe(out) != 0)
		exit(1);
	fflush(stdout);
	k->pid = fork();
	if (k->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execlp("tmux", "tmux", "-L", s->sock, "-C", "attach-session", "-t", "0",
		    (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	k->to = in[1];
	k->from = out[0];
	fcntl(k->from, F_SETFL, O_NONBLOCK);
	keyclock_read(k, 300, 0, &a, &b);
}

static void keyclock_close(struct keyclock *k)
{
	int status;

	close(k->to);	/* a control client ends at the end of its input */
	close(k->from);
	waitpid(k->pid, &status, 0);
}

/* Send one key (send-keys words, e.g. "j", "-l x"); the time (ms) from
 * writing it to the end of the frame taotop wrote for it, -1 when nothing
 * came within a second. The screen settles first (30 ms without output). */
static double keyclock_key(struct keyclock *k, const char *keys)
{
	char *cmd = xasprintf("send-keys -t 0 %s\n", keys);
	double first, last, t0;
	size_t n = strlen(cmd);

	do
		keyclock_read(k, 30, 0, &first, &last);
	while (first != 0);
	t0 = now_s();
	if (write(k->to, cmd, n) != (ssize_t)n) {
		fprintf(stderr, "bench_monitor: cannot write to tmux\n");
		exit(1);
	}
	free(cmd);
	keyclock_read(k, 1000, 15, &first, &last);
	if (first == 0) {
		k->no_frame++;
		return -1;
	}
	return (last - t0) * 1000;
}

/* Keys (send-keys words), each timed; the times into ms (sorted at the
 * end by the caller), their count returned. */
static size_t keyclock_keys(struct keyclock *k, const char *keys, double *ms, size_t n,
    size_t max)
{
	double t = keyclock_key(k, keys);

	if (t >= 0 && n < max)
		ms[n++] = t;
	return n;
}

/* Literal text, a key at a time. */
static size_t keyclock_type(struct keyclock *k, const char *text, double *ms, size_t n,
    size_t max)
{
	char word[8];

	for (; *text != '\0'; text++) {
		snprintf(word, sizeof(word), "-l '%c'", *text);
		n = keyclock_keys(k, word, ms, n, max);
	}
	return n;
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
	struct keyclock kc;
	double ms[512], logged[512];
	size_t n, nl, from;
	int pid, i;

	log = open_over(&s, "bench-many", &so, state);
	sleep(3);
	pid = screen_pid(&s);

	keyclock_open(&kc, &s);
	from = file_size(log);
	for (i = 0, n = 0; i < 200; i++)
		n = keyclock_keys(&kc, i % 50 < 25 ? "j" : "k", ms, n, 512);
	qsort(ms, n, sizeof(ms[0]), cmp_double);
	row("monitor keypress to frame, 10 000 jobs (median)", n ? ms[n / 2] : -1, -1, "ms");
	row("monitor keypress to frame, 10 000 jobs (p95)", n ? ms[n * 95 / 100] : -1, -1, "ms");
	nl = key_times(log, from, logged, 512);
	printf("  (%zu keys timed from their arrival; taotop's own log, from the key read: median "
	    "%.3f ms)\n", n, nl ? logged[nl / 2] : -1);

	from = file_size(log);
	n = keyclock_keys(&kc, "/", ms, 0, 512);
	n = keyclock_type(&kc, "tao-20261129-00", ms, n, 512);
	n = keyclock_keys(&kc, "BSpace", ms, n, 512);
	n = keyclock_keys(&kc, "BSpace", ms, n, 512);
	n = keyclock_keys(&kc, "Enter", ms, n, 512);
	qsort(ms, n, sizeof(ms[0]), cmp_double);
	row("monitor filter keystroke, 10 000 jobs (median)", n ? ms[n / 2] : -1, -1, "ms");
	nl = key_times(log, from, logged, 512);
	printf("  (%zu keys; taotop's own log: median %.3f ms; %d keys drew nothing)\n", n,
	    nl ? logged[nl / 2] : -1, kc.no_frame);
	keyclock_close(&kc);

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

/* Keys a user types while looking around, their times (ms) from their
 * arrival, sorted; the median of taotop's own log's times in *logged_ms;
 * and the median of `?` to the help dialog seen from outside. */
static size_t look_around(struct screen *s, const char *log, double *ms, size_t max,
    double *logged_ms, double *help_ms)
{
	static double logged[1024];
	double h[HELP_RUNS];
	size_t from = file_size(log), n = 0, nl;
	struct keyclock kc;
	char *line;
	int i;

	keyclock_open(&kc, s);
	for (i = 0; i < 120; i++)
		n = keyclock_keys(&kc, i % 40 < 20 ? "j" : "k", ms, n, max);
	n = keyclock_keys(&kc, "/", ms, n, max);
	n = keyclock_type(&kc, "tao-20261129-00", ms, n, max);
	n = keyclock_keys(&kc, "BSpace", ms, n, max);
	n = keyclock_keys(&kc, "Escape", ms, n, max);
	n = keyclock_keys(&kc, "Tab", ms, n, max);
	for (i = 0; i < 10; i++)
		n = keyclock_keys(&kc, i < 5 ? "PageUp" : "PageDown", ms, n, max);
	n = keyclock_keys(&kc, "Tab", ms, n, max);
	n = keyclock_keys(&kc, "Tab", ms, n, max);
	printf("  (%zu keys timed; %d drew nothing within a second)\n", n, kc.no_frame);
	keyclock_close(&kc);
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
	nl = key_times(log, from, logged, 1024);
	*logged_ms = nl ? logged[nl / 2] : -1;
	qsort(ms, n, sizeof(ms[0]), cmp_double);
	return n;
}

static void bench_stalled(void)
{
	char *state = many_records(STALL_JOBS), *log;
	struct screen near, far;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	struct rig_relay l;
	static double m_near[1024], m_far[1024];
	double h_near, h_far, l_near, l_far;
	size_t n_near, n_far;

	log = open_over(&near, "bench-near", &so, state);
	screen_wait(&near, 30, ", polled ", NULL);
	n_near = look_around(&near, log, m_near, 1024, &l_near, &h_near);
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
	n_far = look_around(&far, log, m_far, 1024, &l_far, &h_far);
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
	printf("(against loopback, the same keys: %zu and %zu keys timed; taotop's own log, from "
	    "the key read: median %.3f and %.3f ms)\n", n_far, n_near, l_far, l_near);
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

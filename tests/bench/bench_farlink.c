/*
 * make bench: taotop as a user far from the cluster sees it. The rig's
 * slowlink relay (tests/cluster/slowlink.c) sits between taotop and the
 * cluster's sshd and holds every chunk 100 ms each way, the far
 * link (a 200 ms round trip more than loopback; BENCH_ONE_WAY_MS sets
 * another delay); each measure is the median of 3 runs of the real
 * binary, through the relay and straight to the server, in the same run.
 * The baseline of `jobs` is the seed's way: `ssh login squeue --me` through
 * the same relay. Then the round trips of each operation, counted by the
 * relay itself (slowlink -r), against its floor and the seed's way (see
 * "round trips per operation" below). Each ssh way is measured twice: an
 * ssh process per command, and the same through an OpenSSH master
 * (ControlMaster=auto, ControlPersist=60, started through the relay and
 * warmed before: a command then costs no connect). The CLI's verbs are
 * measured twice too: each with its own connection (TAOTOP_NO_SHARE=1),
 * and borrowing the session of a `taotop agent` (ssh/lend.h) the
 * benchmark starts in a runtime folder of its own and warms through the
 * relay first, as a user's first command of the day leaves it. Rows
 * appended to $BENCH_RESULTS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "bench/bench.h"
#include "engine/config/config.h"
#include "engine/logs/logtail.h"
#include "engine/store/store.h"
#include "engine/submit/submit.h"
#include "engine/track/tracker.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "util/buf.h"
#include "util/xmalloc.h"

/* The relay's delay each way, ms: the 100, or BENCH_ONE_WAY_MS. */
static int one_way_ms = 100;
#define RUNS		3
#define RELAY_PORT	2299

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median seconds of RUNS runs of `sh -c cmd`, which must succeed. */
static double median_of(const char *cmd)
{
	double t[RUNS];
	for (int i = 0; i < RUNS; i++) {
		double t0 = now_s();
		int rc = rig_local("%s >/dev/null 2>&1", cmd);
		t[i] = now_s() - t0;
		if (rc != 0) {
			fprintf(stderr, "bench_farlink: failed (%d): %s\n", rc, cmd);
			exit(1);
		}
	}
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	return t[RUNS / 2];
}

static void row(FILE *out, const char *measure, double ours_ms, double theirs_ms)
{
	printf("%-48s %10.1f ms %10s\n", measure, ours_ms, "");
	if (out == NULL)
		return;
	if (theirs_ms >= 0)
		fprintf(out, "%s\t%.1f\t%.1f\tms\n", measure, ours_ms, theirs_ms);
	else
		fprintf(out, "%s\t%.1f\t\tms\n", measure, ours_ms);
}

/* The same taotop command through the relay and straight to the server;
 * a row each. The medians in seconds go to *far_s and *near_s if given. */
static void far_and_near(FILE *out, const char *far, const char *near, const char *bin,
    const char *args, const char *what, double *far_s, double *near_s)
{
	char *cmd, *label;
	double t[2];

	for (int k = 0; k < 2; k++) {
		cmd = xasprintf("%s %s %s", k ? near : far, bin, args);
		t[k] = median_of(cmd);
		free(cmd);
		label = xasprintf("%s: %s", k ? "loopback" : "far link", what);
		row(out, label, t[k] * 1000, -1);
		free(label);
	}
	if (far_s != NULL)
		*far_s = t[0], *near_s = t[1];
}

/* ---- round trips per operation, counted at the relay -------------------------- */

/* What a user's operation costs on the far link: the relay's count of
 * round trips waited (slowlink -r: a server's answer after the client
 * spoke) and the wall time, for taotop and for the seed's way (an ssh
 * process per command) doing the same thing through the same relay.
 *
 * The floors, and why:
 *  - connect: 4 (version and key exchange, new keys, the auth service,
 *    the key's signature: sent at once, with no "none" request before
 *    it): SSH's own, paid once per CLI run and once per monitor session,
 *    so it is shown on its own row and left out of the CLI verbs' counts
 *    below.
 *  - a command: 2 for a session's first, 1 after. SSH needs the server's
 *    channel number (the answer to the channel open) before it can send
 *    the exec request, so ssh/conn_exec.c opens each command's channel one
 *    command ahead: the next one's open travels with this one's exec, and
 *    a later command costs its exec alone, its output, exit status and
 *    close coming back with the exec's answer. A request on a channel
 *    already open (SFTP) needs 1.
 *  - poll tick: 1, one command (squeue, sacct, the running jobs' status.json).
 *  - first log screen, both panes: 1, one command (log_tails); the paths
 *    come from the record.
 *  - follow tick, both panes: 1, the two reads of what was appended sent
 *    together on the SFTP channel kept open.
 *  - submit, image cached: 2 from the wizard, one command: the checks
 *    (image, data, partition) run first in the staged script (stage.c:
 *    checks, files, sidecar, hold, sbatch, release), which stops before
 *    its first write when one fails. The script travels on standard input
 *    (secrets never in a command line), and no byte of it can go before
 *    the exec's answer: sshd opens a session channel with a window of 0
 *    and grants one only when the exec has started the command (OpenSSH
 *    serverloop.c server_request_session, channels.c channel_set_fds).
 *    So: the exec and the window (1), the script and its answer (1). Was
 *    5 (2 for the checks as a command of their own, 1 for each channel
 *    open). A CLI run pays its connect (4) and its one channel open (1)
 *    first: 3 beyond the connect.
 *  - submit --dry-run: 2 from the CLI, one command with the checks, the
 *    session's first.
 *  - cancel: 2 from the CLI, one command (scancel, the record's state read
 *    back), the session's first.
 *  - preflight: 2 from the CLI, one command with every check, the
 *    session's first.
 *  - jobs, status JOB: 2 from the CLI, one command each (the poll, the
 *    job's state with it), the session's first.
 *  - a CLI verb borrowing the agent's session: no connect (the agent
 *    made it once, for the first verb of the day), and its commands on
 *    the agent's connection cost what the monitor's do, the next
 *    channel having been opened ahead by the agent's previous command
 *    (the warming `jobs` for the first): jobs 1, status 1, cancel 1 (one
 *    command each), submit 2 (the exec and the window, then the script:
 *    see submit above). What the verb says to the agent crosses a local
 *    socket, not the link. A run now and then takes one more: the
 *    keepalive ssh/conn_exec.c sends when a command's exit status has
 *    not come 50 ms after its output ended, and its answer, as in the
 *    monitor's poll tick; the row is the median. */
#define CONNECT_FLOOR	4
struct counted {
	const char	*what;
	int		 floor;		/* the operation's, beyond the connect */
	double		 ms, ssh_ms, cm_ms;
	long long	 rt, ssh_rt, cm_rt;	/* rt: beyond the connect; cm: the
						 * ssh way through a ControlMaster */
	long long	 connect;	/* a CLI verb's connect, 0 in the monitor */
	int		 lent;		/* a CLI verb on the agent's session */
	double		 own_ms;	/* lent: the same verb on its own */
	long long	 own_rt;	/* connection, its connect included */
};

static long long relay_round_trips(const char *count_file)
{
	char name[64];
	long long v, rt = -1;
	FILE *f;

	/* Let the last chunks of the operation reach the relay first. */
	usleep(200 * 1000);
	f = fopen(count_file, "r");
	if (f == NULL)
		return -1;
	while (fscanf(f, "%63s %lld", name, &v) == 2)
		if (strcmp(name, "round_trips") == 0)
			rt = v;
	fclose(f);
	return rt;
}

/* Run `sh -c cmd` once (it says where its output goes): its wall time (ms)
 * and round trips; its exit code. */
static int run_counted(const char *count_file, const char *cmd, double *ms, long long *rt)
{
	long long r0 = relay_round_trips(count_file);
	double t0 = now_s();
	int rc = rig_local("%s", cmd);

	*ms = (now_s() - t0) * 1000;
	*rt = relay_round_trips(count_file) - r0;
	return rc;
}

/* The seed's way: each line of cmds (a command and, after a '<', a local
 * file for its standard input) an ssh process through the relay; the sums. */
static void ssh_way(const char *count_file, const char *ssh, const char *const *cmds,
    double *ms, long long *rt)
{
	*ms = 0, *rt = 0;
	for (size_t i = 0; cmds[i] != NULL; i++) {
		char *q = xasprintf("%s %s >/dev/null 2>&1", ssh, cmds[i]);
		double m;
		long long n;
		if (run_counted(count_file, q, &m, &n) != 0)
			fprintf(stderr, "bench_farlink: the ssh way failed: %s\n", q);
		*ms += m, *rt += n;
		free(q);
	}
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* What the far link needs to reach the rig: the relay's port, its count
 * file, the known_hosts naming it, the ssh way's prefix, a remote folder. */
struct far {
	const struct rig	*r;
	int			 port;
	const char		*count, *kh, *ssh, *remote;
	const char		*ssh_cm;	/* ssh's words through the master */
	const char		*chunks;	/* the relay's chunk log (slowlink -v) */
};

static long file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long)sb.st_size : 0;
}

/* What a run over its floor was made of: the relay's lines for its chunks
 * from offset from ("MS CONN up|down BYTES" and how each answer was
 * judged; slowlink.c says more), the first 40. */
static void print_chunks(const char *log, long from)
{
	FILE *f = fopen(log, "r");
	char line[256];
	int n = 0;

	if (f == NULL || fseek(f, from, SEEK_SET) != 0) {
		if (f != NULL)
			fclose(f);
		return;
	}
	printf("    over its floor; the relay's chunks of that run:\n");
	while (n++ < 40 && fgets(line, sizeof(line), f) != NULL)
		printf("      %s", line);
	fclose(f);
}

/* The master running (-O check is answered by it, nothing on the link),
 * or started again and warmed: ControlPersist=60 may have ended it. */
static void master_up(const char *ssh_cm)
{
	if (rig_local("%s -O check >/dev/null 2>&1", ssh_cm) == 0)
		return;
	if (rig_local("%s -M -N -f >/dev/null 2>&1 && %s true && %s true", ssh_cm, ssh_cm,
	    ssh_cm) != 0) {
		fprintf(stderr, "bench_farlink: the ssh master did not start\n");
		exit(1);
	}
}

/* Both ssh ways of cmds into m: plain processes, then through the master. */
static void ssh_ways(const struct far *fl, const char *const *cmds, struct counted *m)
{
	ssh_way(fl->count, fl->ssh, cmds, &m->ssh_ms, &m->ssh_rt);
	master_up(fl->ssh_cm);
	ssh_way(fl->count, fl->ssh_cm, cmds, &m->cm_ms, &m->cm_rt);
}

/* RUNS runs of a taotop command through the relay, arg[run] after it if
 * given: the median wall time and round trips (less
 * the connect's) into m; each run's "submitted ID" into ids[run] if given. */
static void cli_counted(const struct far *fl, const char *cmd0, char *const *arg,
    long long connect_rt, struct counted *m, char **ids)
{
	double t[RUNS];
	long long n[RUNS];

	for (int i = 0; i < RUNS; i++) {
		char *cmd = xasprintf("%s %s", cmd0, arg != NULL ? arg[i] : "");
		char *full = xasprintf("%s >%s.out 2>&1", cmd, fl->count), line[512];
		long chunks_at = file_size(fl->chunks);
		FILE *f;
		if (run_counted(fl->count, full, &t[i], &n[i]) != 0 && ids != NULL)
			fprintf(stderr, "bench_farlink: failed: %s\n", cmd);
		n[i] -= connect_rt;
		printf("  %s%s: run %d: %lld round trips%s, %.0f ms\n", m->what,
		    m->lent ? " via agent" : "", i + 1, n[i], m->lent ? "" : " after the connect",
		    t[i]);
		if (m->lent && n[i] > m->floor)
			print_chunks(fl->chunks, chunks_at);
		free(full), free(cmd);
		full = xasprintf("%s.out", fl->count);
		f = fopen(full, "r");
		if (ids != NULL)
			ids[i] = NULL;
		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			if (ids != NULL && ids[i] == NULL && strncmp(line, "submitted ", 10) == 0)
				ids[i] = xstrndup(line + 10, strcspn(line + 10, " \n"));
			if (i == RUNS - 1)
				printf("    | %s", line);	/* what the last run said */
		}
		if (f != NULL)
			fclose(f);
		free(full);
	}
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	qsort(n, RUNS, sizeof(n[0]), cmp_ll);
	m->ms = t[RUNS / 2], m->rt = n[RUNS / 2], m->connect = connect_rt;
}

static void counted_rows(FILE *out, const struct counted *m, size_t n)
{
	char head[64];

	snprintf(head, sizeof(head), "far link, %d ms each way", one_way_ms);
	printf("\n%-36s %7s %7s %9s %9s %8s %11s %11s\n", head, "floor", "taotop", "ssh way",
	    "ssh CM", "taotop", "ssh way", "ssh CM");
	for (size_t i = 0; i < n; i++) {
		char label[160], floor[16], ours[48], what[96];
		/* A CLI verb's own connect shown apart: "4+2". */
		if (m[i].connect) {
			snprintf(floor, sizeof(floor), "%d+%d", CONNECT_FLOOR, m[i].floor);
			snprintf(ours, sizeof(ours), "%lld+%lld", m[i].connect, m[i].rt);
		} else {
			snprintf(floor, sizeof(floor), "%d", m[i].floor);
			snprintf(ours, sizeof(ours), "%lld", m[i].rt);
		}
		snprintf(what, sizeof(what), "%s%s", m[i].what, m[i].lent ? " via agent" : "");
		printf("%-36s %7s %7s %9lld %9lld %6.0f ms %8.0f ms %8.0f ms%s\n", what, floor,
		    ours, m[i].ssh_rt, m[i].cm_rt, m[i].ms, m[i].ssh_ms, m[i].cm_ms,
		    m[i].rt > m[i].floor ? "  (over its floor)" : "");
		if (m[i].lent)
			printf("%-36s %7s %7lld %28s %6.0f ms\n", "  the same, its own connection", "",
			    m[i].own_rt, "", m[i].own_ms);
		if (out == NULL)
			continue;
		snprintf(label, sizeof(label), "round trips: %s (floor %s)", what, floor);
		fprintf(out, "%s\t%lld\t%lld\trt\n", label, m[i].connect + m[i].rt, m[i].ssh_rt);
		snprintf(label, sizeof(label), "far link, %s: %s", m[i].lent ? "CLI via agent" :
		    m[i].connect ? "taotop CLI" : "monitor", m[i].what);
		fprintf(out, "%s\t%.1f\t%.1f\tms\n", label, m[i].ms, m[i].ssh_ms);
		if (m[i].lent) {
			snprintf(label, sizeof(label), "round trips: %s, vs own connection", what);
			fprintf(out, "%s\t%lld\t%lld\trt\n", label, m[i].rt, m[i].own_rt);
			snprintf(label, sizeof(label), "far link: %s, vs own connection", what);
			fprintf(out, "%s\t%.1f\t%.1f\tms\n", label, m[i].ms, m[i].own_ms);
		}
		if (m[i].cm_rt < 0)
			continue;
		snprintf(label, sizeof(label), "round trips: %s, vs ssh ControlMaster", what);
		fprintf(out, "%s\t%lld\t%lld\trt\n", label, m[i].connect + m[i].rt, m[i].cm_rt);
		snprintf(label, sizeof(label), "far link: %s, vs ssh ControlMaster", what);
		fprintf(out, "%s\t%.1f\t%.1f\tms\n", label, m[i].ms, m[i].cm_ms);
	}
}

static struct conn *far_conn(const struct far *fl)
{
	char *hosts = xasprintf("127.0.0.1:%d", fl->port);
	struct conn_target t = { .hosts = hosts, .user = fl->r->user, .key_path = fl->r->key,
	    .known_hosts = fl->kh, .ssh_config = "", .jump = "none" };
	struct conn *c = conn_new(&t);

	free(hosts);
	return c;
}

/* The SSH layer's own count of requests sent (its debug counter), beside
 * the relay's. */
static unsigned long layer_requests(struct conn *c)
{
	const struct conn_counters *k = conn_counters(c);
	return k->execs + k->sftp_requests;
}

static void fail_if(int bad, const char *what, char *err)
{
	if (!bad)
		return;
	fprintf(stderr, "bench_farlink: %s: %s\n", what, err ? err : "failed");
	exit(1);
}

/* The connect's count moves by one from run to run (both sides send
 * their version at once, and which the relay reads first varies), and it
 * is taken off every CLI verb's: the median of more runs. */
#define CONNECT_RUNS	7

static void measure_connect(const struct far *fl, struct counted *m)
{
	double t[CONNECT_RUNS];
	long long n[CONNECT_RUNS];
	char *err = NULL;

	for (int i = 0; i < CONNECT_RUNS; i++) {
		struct conn *c = far_conn(fl);
		long long r0 = relay_round_trips(fl->count);
		double t0 = now_s();
		fail_if(conn_connect(c, &err) != CONN_OK, "connect", err);
		t[i] = (now_s() - t0) * 1000;
		conn_free(c);
		n[i] = relay_round_trips(fl->count) - r0;
	}
	qsort(t, CONNECT_RUNS, sizeof(t[0]), cmp_double);
	qsort(n, CONNECT_RUNS, sizeof(n[0]), cmp_ll);
	*m = (struct counted){ .what = "connect", .floor = CONNECT_FLOOR,
	    .ms = t[CONNECT_RUNS / 2], .rt = n[CONNECT_RUNS / 2], .ssh_rt = -1, .ssh_ms = -1,
	    .cm_rt = -1, .cm_ms = -1 };	/* through a master, nothing connects */
	{
		const char *cmds[] = { "true", NULL };
		ssh_way(fl->count, fl->ssh, cmds, &m->ssh_ms, &m->ssh_rt);
	}
}

/* One of the monitor's operations on its open connection, RUNS times:
 * median wall time and round trips into m. */
typedef void monitor_op(struct conn *c, void *data, int run);

static void measure_op(const struct far *fl, struct conn *c, monitor_op *op,
    void (*before)(void *data, int run), void *data, struct counted *m)
{
	double t[RUNS];
	long long n[RUNS];
	unsigned long req0 = layer_requests(c);

	for (int i = 0; i < RUNS; i++) {
		long long r0;
		double t0;
		if (before != NULL)
			before(data, i);
		r0 = relay_round_trips(fl->count);
		t0 = now_s();
		op(c, data, i);
		t[i] = (now_s() - t0) * 1000;
		n[i] = relay_round_trips(fl->count) - r0;
	}
	printf("  %s: round trips a run:", m->what);
	for (int i = 0; i < RUNS; i++)
		printf(" %lld", n[i]);
	printf("; the SSH layer counted %.1f requests a run\n",
	    (double)(layer_requests(c) - req0) / RUNS);
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	qsort(n, RUNS, sizeof(n[0]), cmp_ll);
	m->ms = t[RUNS / 2], m->rt = n[RUNS / 2];
}

struct poll_ctx {
	struct tracker		*tr;
	struct record_store	*st;
};

static void op_poll(struct conn *c, void *data, int run)
{
	struct poll_ctx *p = data;
	struct poll_result res;
	char *err = NULL;

	(void)run;
	fail_if(tracker_poll(p->tr, c, p->st, &res, &err) != 0, "poll", err);
	poll_result_free(&res);
}

struct logs_ctx {
	const char	*paths[2];
	const char	*local[2];	/* the same files, on this machine's side */
	struct log_follow f[2];
};

static void op_first_screen(struct conn *c, void *data, int run)
{
	struct logs_ctx *l = data;
	struct buf got[2];
	uint64_t end[2];
	int missing[2];
	char *err = NULL;

	(void)run;
	buf_init(&got[0]), buf_init(&got[1]);
	fail_if(log_tails(c, l->paths, 2, 50, 1, got, end, missing, &err) != 0, "log_tails", err);
	fail_if(got[0].len == 0 || got[1].len == 0, "log_tails", NULL);
	buf_free(&got[0]), buf_free(&got[1]);
}

static void op_follow(struct conn *c, void *data, int run)
{
	struct logs_ctx *l = data;
	struct buf got[2];
	char *err = NULL;

	buf_init(&got[0]), buf_init(&got[1]);
	/* Both panes' tick, as the monitor's follow task makes it. */
	fail_if(log_follow_ticks(l->f, 2, c, got, &err) != 0, "follow", err);
	fail_if(got[0].len == 0 || got[1].len == 0, "follow: nothing new", NULL);
	buf_free(&got[0]), buf_free(&got[1]);
	(void)run;
}

/* Lines appended to both logs on the cluster's side (the relay does not
 * see it), before each follow tick is timed. */
static void append_lines(void *data, int run)
{
	struct logs_ctx *l = data;

	for (int i = 0; i < 2; i++)
		rig_local("seq -f 'run %d line %%g of the log' 1 20 >> %s", run, l->local[i]);
}

/* The monitor's three: a poll tick, the first screen of both panes, a
 * follow tick of both, on one connection kept open as the monitor does. */
static void monitor_rows(const struct far *fl, struct counted *m)
{
	char dir[] = "/tmp/taotop-farpoll-XXXXXX", *err = NULL, *cmd, *id;
	struct cluster_cfg cl = { .name = (char *)"rig" };
	struct conn *c = far_conn(fl);
	struct poll_ctx p;
	struct logs_ctx l;
	struct job_record *rec;
	char *mint;

	fail_if(conn_connect(c, &err) != CONN_OK || mkdtemp(dir) == NULL, "connect", err);
	/* A held job with its record: what a poll tick looks at. */
	id = bench_remote(c, "sbatch --parsable --hold -J farlink-poll -t 1 -o /dev/null --wrap true");
	id[strcspn(id, "\n")] = '\0';
	p.st = store_open(dir, &err);
	fail_if(p.st == NULL, "store", err);
	p.tr = tracker_new(&cl);
	mint = store_mint_id(p.st);
	rec = record_new(mint);
	record_set(&rec->cluster, "rig");
	record_set(&rec->backend_ref, id);
	fail_if(store_create(p.st, rec, &err) != 0, "record", err);
	record_free(rec);
	free(mint);
	op_poll(c, &p, 0);	/* the first tick also asks sacct: settled */
	m[0] = (struct counted){ .what = "poll tick", .floor = 1 };
	measure_op(fl, c, op_poll, NULL, &p, &m[0]);
	{
		char *q = xasprintf("'sacct -X -n -j %s -o State%%30'", id);
		const char *cmds[] = { "'squeue --me'", q, NULL };
		ssh_ways(fl, cmds, &m[0]);
		free(q);
	}

	/* Two logs of 200 lines on the cluster's shared storage. */
	cmd = xasprintf("%s/logs", fl->remote);
	l.paths[0] = xasprintf("%s/main.out", cmd), l.paths[1] = xasprintf("%s/main.err", cmd);
	l.local[0] = l.paths[0], l.local[1] = l.paths[1];	/* the rig's lustre is local */
	rig_local("mkdir -p %s && seq -f 'out line %%g' 200 > %s && seq -f 'err line %%g' 200 > %s "
	    "&& chmod -R a+rwX %s", cmd, l.paths[0], l.paths[1], cmd);
	m[1] = (struct counted){ .what = "first log screen, 2 panes", .floor = 1 };
	measure_op(fl, c, op_first_screen, NULL, &l, &m[1]);
	{
		char *a = xasprintf("'tail -n 50 %s'", l.paths[0]), *b = xasprintf("'tail -n 50 %s'",
		    l.paths[1]);
		const char *cmds[] = { a, b, NULL };
		ssh_ways(fl, cmds, &m[1]);
		free(a), free(b);
	}

	for (int i = 0; i < 2; i++) {
		struct stat sb;
		log_follow_init(&l.f[i], l.paths[i], stat(l.paths[i], &sb) == 0 ? (uint64_t)sb.st_size : 0);
	}
	m[2] = (struct counted){ .what = "follow tick, 2 panes", .floor = 1 };
	measure_op(fl, c, op_follow, append_lines, &l, &m[2]);
	{
		char *a = xasprintf("'tail -c +%llu %s'", (unsigned long long)l.f[0].offset, l.paths[0]);
		char *b = xasprintf("'tail -c +%llu %s'", (unsigned long long)l.f[1].offset, l.paths[1]);
		const char *cmds[] = { a, b, NULL };
		append_lines(&l, RUNS);
		ssh_ways(fl, cmds, &m[2]);
		free(a), free(b);
	}
	for (int i = 0; i < 2; i++)
		log_follow_free(&l.f[i]);
	free((char *)l.paths[0]), free((char *)l.paths[1]), free(cmd);
	cmd = xasprintf("scancel %s", id);
	free(bench_remote(c, cmd));
	free(cmd), free(id);
	tracker_free(p.tr);
	store_close(p.st);
	rig_local("rm -rf %s", dir);
	conn_free(c);
}

struct submit_ctx {
	struct record_store	*st;
	struct cluster_cfg	 cl;
	const char		*bundle;
	char			*ids[RUNS];
};

static void op_submit(struct conn *c, void *data, int run)
{
	struct submit_ctx *s = data;
	struct submit_opts o = { .spec_path = s->bundle, .gpus = -1, .nodes = -1,
	    .time_hours = -1 };
	struct submit_result res;
	char *err = NULL;

	fail_if(submit_run(c, s->st, &s->cl, &o, NULL, NULL, &res, &err) != 0, "submit", err);
	fail_if(res.converted, "submit: the image was not cached", NULL);
	s->ids[run] = xstrdup(res.slurm_id);
	submit_result_free(&res);
}

/* The monitor's wizard submits with the engine's own submit_run on the
 * connection the monitor has open: no connect to pay. The bundle and the
 * results root are the CLI's (its image converted already); the secret
 * from the environment, as the CLI takes it. */
static void monitor_submit_row(const struct far *fl, const char *bundle, const char *root,
    struct counted *m)
{
	char dir[] = "/tmp/taotop-farsubmit-XXXXXX", *err = NULL, *cmd;
	struct conn *c = far_conn(fl);
	struct submit_ctx sc = { .bundle = bundle };

	fail_if(conn_connect(c, &err) != CONN_OK || mkdtemp(dir) == NULL, "connect", err);
	sc.st = store_open(dir, &err);
	fail_if(sc.st == NULL, "store", err);
	sc.cl.name = (char *)"rig";
	sc.cl.results_root = (char *)root;
	sc.cl.cpu_partition = (char *)"cpu_long";
	setenv("HF_TOKEN", "hf_farlinkBenchToken0123456789", 1);
	/* The monitor has polled on its connection before a submit. */
	free(bench_remote(c, "true"));
	*m = (struct counted){ .what = "submit in the wizard", .floor = 2 };
	measure_op(fl, c, op_submit, NULL, &sc, m);
	for (int i = 0; i < RUNS; i++) {
		cmd = xasprintf("scancel %s", sc.ids[i]);
		free(bench_remote(c, cmd));
		free(cmd), free(sc.ids[i]);
	}
	store_close(sc.st);
	rig_local("rm -rf %s", dir);
	conn_free(c);
}

/* The CLI's four, each a run of the binary (connect included in the wall
 * time, as a user waits for it; left out of the count). */
static void cli_rows(const struct far *fl, const char *far_env, const char *bin,
    const char *bundle, const char *dir, long long connect_rt, struct counted *m)
{
	char *ids[RUNS], *fmt, *seed = xasprintf("%s/seed", fl->remote);

	fmt = xasprintf("%s %s submit %s --dry-run", far_env, bin, bundle);
	m[0] = (struct counted){ .what = "submit --dry-run", .floor = 2 };
	cli_counted(fl, fmt, NULL, connect_rt, &m[0], NULL);
	free(fmt);
	fmt = xasprintf("%s %s submit %s", far_env, bin, bundle);
	m[1] = (struct counted){ .what = "submit, image cached", .floor = 3 };
	cli_counted(fl, fmt, NULL, connect_rt, &m[1], ids);
	free(fmt);
	fmt = xasprintf("%s %s cancel", far_env, bin);
	m[2] = (struct counted){ .what = "cancel", .floor = 2 };
	for (int i = 0; i < RUNS; i++)
		if (ids[i] == NULL)
			ids[i] = xstrdup("none");
	cli_counted(fl, fmt, ids, connect_rt, &m[2], NULL);
	free(fmt);
	fmt = xasprintf("%s %s preflight", far_env, bin);
	m[3] = (struct counted){ .what = "preflight", .floor = 2 };
	cli_counted(fl, fmt, NULL, connect_rt, &m[3], NULL);
	free(fmt);
	for (int i = 0; i < RUNS; i++)
		free(ids[i]);

	/* The seed's way of each: its commands, one ssh process each. */
	rig_local("printf 'export HF_TOKEN=x\\n' > %s/seed.env; printf 'train:\\n  num_epochs: 1\\n' "
	    "> %s/seed.spec; printf '#!/bin/bash\\n#SBATCH -J farlink-seed\\n#SBATCH -t 1\\n"
	    "#SBATCH -o /dev/null\\ntrue\\n' > %s/seed.sbatch", dir, dir, dir);
	{
		char *c1 = xasprintf("'ls -d %s/data'", fl->remote);
		char *c2 = xasprintf("'test -e %s/data'", fl->remote);
		char *c3 = xasprintf("'umask 077; mkdir -p %s/specs %s/sbatch; cat > %s/job.env' "
		    "< %s/seed.env", seed, seed, seed, dir);
		char *c4 = xasprintf("'cat > %s/specs/spec.yaml' < %s/seed.spec", seed, dir);
		char *c5 = xasprintf("'cat > %s/sbatch/job.sbatch' < %s/seed.sbatch", seed, dir);
		char *c6 = xasprintf("'bash -n %s/sbatch/job.sbatch'", seed);
		char *c7 = xasprintf("'sbatch --parsable --hold %s/sbatch/job.sbatch'", seed);
		char *p4 = xasprintf("'test -w %s'", fl->remote);
		const char *dry[] = { c1, c2, NULL };
		const char *sub[] = { c1, c2, c3, c4, c5, c6, c7, NULL };
		const char *can[] = { "'scancel --name=farlink-seed'", NULL };
		const char *pre[] = { "'command -v sbatch squeue sacct scancel srun scontrol'",
		    "'srun --help | grep -c -- --container-image'", "'command -v enroot; true'", p4,
		    "'sinfo -h -o %P'", "'test -s ~/.config/enroot/.credentials; true'", NULL };
		ssh_ways(fl, dry, &m[0]);
		ssh_ways(fl, sub, &m[1]);
		ssh_ways(fl, can, &m[2]);
		ssh_ways(fl, pre, &m[3]);
		free(c1), free(c2), free(c3), free(c4), free(c5), free(c6), free(c7), free(p4);
	}
	free(seed);
}

/* The agent the lent rows borrow from: its runtime folder and the env
 * that reaches it; stopped at the end, or at any exit before. */
static char *agent_env, *agent_rt;
static const char *agent_bin;

static void agent_end(void)
{
	if (agent_env == NULL)
		return;
	if (rig_local("%s %s agent stop >/dev/null 2>&1", agent_env, agent_bin) != 0)
		fprintf(stderr, "bench_farlink: taotop agent stop failed\n");
	rig_local("rm -rf %s", agent_rt);
	free(agent_env), free(agent_rt);
	agent_env = agent_rt = NULL;
}

/* `jobs` and `status JOB` of the CLI on their own connection (m[0], m[1]),
 * then the CLI's four borrowing the agent's session (m[2] to m[5]): jobs,
 * status of the same held job, submit (image cached) and cancel of what it
 * submitted, each against its own connection's run (the submit's and the
 * cancel's from cli_rows: own[0], own[1]) and the ssh ways. */
static void lent_rows(const struct far *fl, const char *far_env, const char *bin,
    const char *bundle, const char *dir, long long connect_rt, const struct counted *own,
    struct counted *m)
{
	char *ids[RUNS], *cmd, *job = rig_sbatch("--hold -J farlink-status -t 1 -o /dev/null",
	    "true");
	char *sq = xasprintf("'squeue -j %s'", job);
	char *sa = xasprintf("'sacct -X -n -j %s -o State%%30'", job);
	const char *jobs_cmds[] = { "'squeue --me'", NULL }, *status_cmds[] = { sq, sa, NULL };

	/* The records of the submits above ended since the last `jobs`: the
	 * first poll settles them (a few round trips for each, on whichever
	 * connection), which is not the verb's steady cost measured below. */
	{
		double ms;
		long long rt;
		cmd = xasprintf("%s %s jobs >/dev/null 2>&1", far_env, bin);
		if (run_counted(fl->count, cmd, &ms, &rt) != 0)
			fprintf(stderr, "bench_farlink: failed: %s\n", cmd);
		printf("  jobs settling the records ended since the last: %lld round trips after "
		    "the connect, %.0f ms (not a row)\n", rt - connect_rt, ms);
		free(cmd);
	}
	cmd = xasprintf("%s %s jobs", far_env, bin);
	m[0] = (struct counted){ .what = "jobs", .floor = 2 };
	cli_counted(fl, cmd, NULL, connect_rt, &m[0], NULL);
	free(cmd);
	cmd = xasprintf("%s %s status %s", far_env, bin, job);
	m[1] = (struct counted){ .what = "status JOB", .floor = 2 };
	cli_counted(fl, cmd, NULL, connect_rt, &m[1], NULL);
	free(cmd);

	/* The agent, in a runtime folder of the benchmark's own (mode 0700):
	 * started, then warmed by one `jobs` through the relay, which makes
	 * its connection and opens its next channel ahead. Its log
	 * (TAOTOP_LOG) says why, should it not start; a run over its floor
	 * prints the relay's chunks of it. */
	agent_bin = bin;
	agent_rt = xasprintf("%s/runtime", dir);
	agent_env = xasprintf("%s TAOTOP_NO_SHARE= XDG_RUNTIME_DIR=%s TAOTOP_LOG=%s/agent.log",
	    far_env, agent_rt, dir);	/* empty: sharing on (cli/share.c) */
	atexit(agent_end);
	fflush(stdout);	/* before the agent's own lines */
	if (mkdir(agent_rt, 0700) != 0 ||
	    rig_local("%s %s agent start --idle 1 >/dev/null 2>&1", agent_env, bin) != 0 ||
	    rig_local("%s %s jobs >/dev/null 2>&1", agent_env, bin) != 0 ||
	    rig_local("%s %s agent status 2>&1 | grep -q 'agent'", agent_env, bin) != 0) {
		fprintf(stderr, "bench_farlink: the agent did not start (log: %s/agent.log)\n", dir);
		exit(1);
	}
	rig_local("%s %s agent status", agent_env, bin);

	cmd = xasprintf("%s %s jobs", agent_env, bin);
	m[2] = (struct counted){ .what = "jobs", .floor = 1, .lent = 1 };
	cli_counted(fl, cmd, NULL, 0, &m[2], NULL);
	free(cmd);
	cmd = xasprintf("%s %s status %s", agent_env, bin, job);
	m[3] = (struct counted){ .what = "status JOB", .floor = 1, .lent = 1 };
	cli_counted(fl, cmd, NULL, 0, &m[3], NULL);
	free(cmd);
	cmd = xasprintf("%s %s submit %s", agent_env, bin, bundle);
	m[4] = (struct counted){ .what = "submit", .floor = 2, .lent = 1 };
	cli_counted(fl, cmd, NULL, 0, &m[4], ids);
	free(cmd);
	for (int i = 0; i < RUNS; i++)
		if (ids[i] == NULL)
			ids[i] = xstrdup("none");
	cmd = xasprintf("%s %s cancel", agent_env, bin);
	m[5] = (struct counted){ .what = "cancel", .floor = 1, .lent = 1 };
	cli_counted(fl, cmd, ids, 0, &m[5], NULL);
	free(cmd);
	fflush(stdout);
	rig_local("%s %s agent status", agent_env, bin);
	agent_end();
	for (int i = 0; i < RUNS; i++)
		free(ids[i]);

	/* Against: the same verb on its own connection, and the ssh ways. */
	m[2].own_rt = m[0].connect + m[0].rt, m[2].own_ms = m[0].ms;
	m[3].own_rt = m[1].connect + m[1].rt, m[3].own_ms = m[1].ms;
	m[4].own_rt = own[0].connect + own[0].rt, m[4].own_ms = own[0].ms;
	m[5].own_rt = own[1].connect + own[1].rt, m[5].own_ms = own[1].ms;
	ssh_ways(fl, jobs_cmds, &m[0]);
	ssh_ways(fl, status_cmds, &m[1]);
	m[2].ssh_ms = m[0].ssh_ms, m[2].ssh_rt = m[0].ssh_rt;
	m[2].cm_ms = m[0].cm_ms, m[2].cm_rt = m[0].cm_rt;
	m[3].ssh_ms = m[1].ssh_ms, m[3].ssh_rt = m[1].ssh_rt;
	m[3].cm_ms = m[1].cm_ms, m[3].cm_rt = m[1].cm_rt;
	m[4].ssh_ms = own[0].ssh_ms, m[4].ssh_rt = own[0].ssh_rt;
	m[4].cm_ms = own[0].cm_ms, m[4].cm_rt = own[0].cm_rt;
	m[5].ssh_ms = own[1].ssh_ms, m[5].ssh_rt = own[1].ssh_rt;
	m[5].cm_ms = own[1].cm_ms, m[5].cm_rt = own[1].cm_rt;
	cmd = xasprintf("scancel %s", job);
	free(rig_ssh_ok(cmd));
	free(cmd), free(job), free(sq), free(sa);
}

/* The relay's pid file: the relay stopped on any exit, an early one too
 * (it would hold the port for its -m 1800 s). */
static char *relay_pid;

static void relay_end(void)
{
	if (relay_pid != NULL)
		rig_local("kill $(cat %s 2>/dev/null) 2>/dev/null; true", relay_pid);
}

int main(void)
{
	const struct rig *r = rig_get();
	const char *bin = getenv("TAOTOP_BIN"), *results = getenv("BENCH_RESULTS");
	char dir[] = "/tmp/taotop-farlink-XXXXXX", *kh, *remote, *bundle, *base, *far, *near, *cmd;
	char *count, *chunks, *ssh, *ssh_cm;
	int port = RELAY_PORT + (r->port - 2222);
	double t_far, t_near, t_ssh;
	FILE *out = results ? fopen(results, "a") : NULL, *f;

	if (bin == NULL || mkdtemp(dir) == NULL) {
		fprintf(stderr, "bench_farlink: run through make bench\n");
		return 1;
	}
	if (getenv("BENCH_ONE_WAY_MS") != NULL && atoi(getenv("BENCH_ONE_WAY_MS")) > 0)
		one_way_ms = atoi(getenv("BENCH_ONE_WAY_MS"));
	/* The relay, and a known_hosts naming the rig's key at its port. */
	count = xasprintf("%s/count", dir);
	chunks = xasprintf("%s/chunks.log", dir);
	if (rig_local("%s/tools/slowlink -l %d -t %d -d %d -m 1800 -r %s -v %s/chunks.log "
	    ">%s/relay.log 2>&1 & echo $! > %s/relay.pid; sleep 0.3", r->state, port, r->port,
	    one_way_ms, count, dir, dir, dir) != 0)
		return 1;
	relay_pid = xasprintf("%s/relay.pid", dir);
	atexit(relay_end);
	/* A relay left on the port would count elsewhere: every count 0. */
	if (rig_local("kill -0 $(cat %s)", relay_pid) != 0) {
		fprintf(stderr, "bench_farlink: the relay did not start on port %d: %s/relay.log\n",
		    port, dir);
		free(count), free(chunks);
		return 1;
	}
	kh = xasprintf("%s/known_hosts", dir);
	rig_local("sed 's/^\\[127.0.0.1\\]:%d /[127.0.0.1]:%d /' %s > %s", r->port, port,
	    r->known_hosts, kh);
	remote = xasprintf("%s/farlink-%d", r->shared, (int)getpid());
	cmd = xasprintf("rm -rf %s && mkdir -p %s/data", remote, remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	bundle = xasprintf("%s/job.yaml", dir);
	f = fopen(bundle, "w");
	if (f == NULL)
		return 1;
	fprintf(f, "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\ndatasets: [lustre://%s/data]\ngpus: 1\ncpus_per_task: 1\n"
	    "time_hours: 0.5\nsecrets: [HF_TOKEN]\nspec:\n  train:\n    num_epochs: 1\n", remote);
	fclose(f);
	/* Each verb on its own connection (TAOTOP_NO_SHARE=1), unless a row
	 * says it borrows the agent's (lent_rows). */
	base = xasprintf("SLURM_USER=%s SSH_KEY_PATH=%s TAOTOP_CLUSTER=rig TAOTOP_CONFIG=/nonexistent "
	    "XDG_STATE_HOME=%s/state SLURM_BASE_RESULTS_DIR=lustre://%s/jobs TAOTOP_NO_SHARE=1 "
	    "HF_TOKEN=hf_farlinkBenchToken0123456789", r->user, r->key, dir, remote);
	far = xasprintf("%s SLURM_HOSTNAME=127.0.0.1:%d TAOTOP_KNOWN_HOSTS=%s", base, port, kh);
	near = xasprintf("%s SLURM_HOSTNAME=%s:%d TAOTOP_KNOWN_HOSTS=%s", base, r->host, r->port,
	    r->known_hosts);

	/* The image converted once, so the submits below measure the steady
	 * path a user meets every day. */
	if (rig_local("%s %s submit %s --dry-run >/dev/null 2>&1; %s %s submit %s >/dev/null 2>&1",
	    near, bin, bundle, near, bin, bundle) != 0)
		fprintf(stderr, "bench_farlink: the first submit failed\n");

	cmd = xasprintf("%s %s jobs", far, bin);
	t_far = median_of(cmd);
	free(cmd);
	cmd = xasprintf("ssh -q -o BatchMode=yes -o UserKnownHostsFile=%s -i %s -p %d %s@127.0.0.1 "
	    "squeue --me", kh, r->key, port, r->user);
	t_ssh = median_of(cmd);
	free(cmd);
	cmd = xasprintf("far link (%d ms each way): taotop jobs", one_way_ms);
	row(out, cmd, t_far * 1000, t_ssh * 1000);
	free(cmd);
	/* The same squeue through a master started and warmed before. */
	ssh_cm = xasprintf("ssh -q -o BatchMode=yes -o UserKnownHostsFile=%s -i %s -p %d "
	    "-o ControlMaster=auto -o ControlPath=%s/cm -o ControlPersist=60 %s@127.0.0.1", kh,
	    r->key, port, dir, r->user);
	master_up(ssh_cm);
	cmd = xasprintf("%s squeue --me", ssh_cm);
	t_ssh = median_of(cmd);
	free(cmd);
	row(out, "far link: taotop jobs, vs ssh ControlMaster", t_far * 1000, t_ssh * 1000);
	/* With a week of history from accounting: in the same command as the
	 * poll, so no round trip more than `jobs` (against one ssh asking both). */
	cmd = xasprintf("%s %s jobs --since 7d", far, bin);
	t_near = median_of(cmd);
	free(cmd);
	/* `jobs` again, right after: the first runs above also settled the
	 * records the submit left. */
	cmd = xasprintf("%s %s jobs", far, bin);
	t_far = median_of(cmd);
	free(cmd);
	cmd = xasprintf("ssh -q -o BatchMode=yes -o UserKnownHostsFile=%s -i %s -p %d %s@127.0.0.1 "
	    "'squeue --me; sacct -X -u %s -S now-7days'", kh, r->key, port, r->user, r->user);
	t_ssh = median_of(cmd);
	free(cmd);
	row(out, "far link: taotop jobs --since 7d", t_near * 1000, t_ssh * 1000);
	master_up(ssh_cm);
	cmd = xasprintf("%s 'squeue --me; sacct -X -u %s -S now-7days'", ssh_cm, r->user);
	t_ssh = median_of(cmd);
	free(cmd);
	row(out, "far link: jobs --since 7d, vs ssh ControlMaster", t_near * 1000, t_ssh * 1000);
	printf("far link: --since 7d costs %.0f ms over jobs (one round trip is %d ms)\n",
	    (t_near - t_far) * 1000, 2 * one_way_ms);

	cmd = xasprintf("submit %s --dry-run", bundle);
	far_and_near(out, far, near, bin, cmd, "submit --dry-run", NULL, NULL);
	free(cmd);
	cmd = xasprintf("submit %s", bundle);
	far_and_near(out, far, near, bin, cmd, "submit, image cached, one secret", &t_far, &t_near);
	free(cmd);
	printf("far link: a submit costs about %.0f round trips more than on loopback\n",
	    (t_far - t_near) * 1000 / (2 * one_way_ms));

	/* Round trips per operation, counted at the relay. */
	ssh = xasprintf("ssh -q -o BatchMode=yes -o UserKnownHostsFile=%s -i %s -p %d %s@127.0.0.1",
	    kh, r->key, port, r->user);
	{
		const struct far fl = { .r = r, .port = port, .count = count, .kh = kh, .ssh = ssh,
		    .remote = remote, .ssh_cm = ssh_cm, .chunks = chunks };
		struct counted m[15];
		char *root = xasprintf("lustre://%s/jobs", remote);
		measure_connect(&fl, &m[0]);
		monitor_rows(&fl, &m[1]);
		monitor_submit_row(&fl, bundle, root, &m[4]);
		cli_rows(&fl, far, bin, bundle, dir, m[0].rt, &m[5]);
		/* The same seed's commands as the CLI's submit: measured once. */
		m[4].ssh_ms = m[6].ssh_ms, m[4].ssh_rt = m[6].ssh_rt;
		m[4].cm_ms = m[6].cm_ms, m[4].cm_rt = m[6].cm_rt;
		lent_rows(&fl, far, bin, bundle, dir, m[0].rt, &m[6], &m[9]);
		counted_rows(out, m, 15);
		free(root);
	}
	rig_local("%s -O exit >/dev/null 2>&1; true", ssh_cm);
	free(count), free(chunks), free(ssh), free(ssh_cm);

	relay_end();
	free(relay_pid);
	relay_pid = NULL;
	rig_local("scancel -u %s >/dev/null 2>&1; true", r->user);
	cmd = xasprintf("scancel --me --name=tao-* 2>/dev/null; rm -rf %s", remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	rig_local("rm -rf %s", dir);
	if (out != NULL)
		fclose(out);
	free(kh), free(remote), free(bundle), free(base), free(far), free(near);
	return 0;
}

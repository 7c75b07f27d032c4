/*
 * make bench: records that scale (issue 19). Rows appended to
 * $BENCH_RESULTS:
 *
 *  - a poll tick's engine time (engine_us: all but the command's round
 *    trip) with 1 000, 10 000 and 100 000 records on disk, 1 % of them
 *    live (held jobs on the test cluster), the rest finished; the tracker
 *    shows the monitor's page (TRACKER_PAGE). The median of 5 steady
 *    ticks; the baseline is what every tick cost before the index: every
 *    record read and parsed (store_list), measured on the same folder;
 *  - the monitor's start to its first frame showing the records, 100 000
 *    of them (the real binary in tmux, its screen read every 10 ms), and
 *    to its first poll's answer (its debug log): with the index file the
 *    last run left, against the same start with the index file removed
 *    (rebuilt from the records);
 *  - the monitor's resident memory while polling 10 000 records (100 of
 *    them live): an hour of polling at the default rate (10 s) is 360
 *    polls; the bench runs those 360 polls back to back at the screens'
 *    1 s rate (a key every second keeps the polls from backing off), and
 *    compares the RSS after them with the RSS after the first minute's
 *    worth (6 polls). No malloc_trim anywhere. BENCH_LONG=1 runs the real
 *    hour at the default rate instead.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/track/tracker.h"
#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/file.h"
#include "util/xmalloc.h"

#define LIVE_EVERY	100	/* 1 % live */
#define MAX_RECORDS	100000

static FILE *results;

static void row(const char *measure, double ours, double theirs, const char *unit)
{
	bench_row(results, measure, ours, theirs, unit);
}

/* Records [from, to) in jobs: every LIVE_EVERY-th tracks a held job of
 * refs (one per line, consumed), the others finished. */
static void make_records(const char *jobs, int from, int to, char **refs)
{
	time_t now = time(NULL);
	int i;

	for (i = from; i < to; i++) {
		struct job_record *r;
		char id[48], ref[24], *nl;
		snprintf(id, sizeof(id), "tao-20261129-%06x", i);
		r = record_new(id);
		record_set(&r->cluster, "rig");
		record_set(&r->network_arch, "classification_pyt");
		record_set(&r->action, "train");
		if (i % LIVE_EVERY == 0 && **refs != '\0') {
			nl = strchr(*refs, '\n');
			snprintf(ref, sizeof(ref), "%.*s", nl ? (int)(nl - *refs) : (int)strlen(*refs), *refs);
			*refs = nl ? nl + 1 : *refs + strlen(*refs);
			record_set(&r->native, "PENDING");
			r->state = TAO_PENDING;
		} else {
			snprintf(ref, sizeof(ref), "%d", 90000000 + i);
			record_set(&r->native, i % 7 ? "COMPLETED" : "FAILED");
			r->state = i % 7 ? TAO_DONE : TAO_ERROR;
			record_transition(r, r->state, r->native, NULL, "scheduler", now - (MAX_RECORDS - i));
		}
		record_set(&r->backend_ref, ref);
		r->created = r->updated = now - (MAX_RECORDS - i);
		bench_put_record(jobs, r);
	}
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

/* One size: a fresh store and tracker over the folder (the index file the
 * last one left), its first tick, then the median of 5 steady ones. */
static void bench_size(struct conn *c, const char *jobs, int n)
{
	struct cluster_cfg cl = { .name = (char *)"rig" };
	struct record_store *st;
	struct tracker *tr;
	struct poll_result res;
	struct job_record **list;
	long us[5];
	size_t nl;
	char *err = NULL, measure[96];
	double t0, parse_all;
	int k;

	if ((st = store_open(jobs, &err)) == NULL) {
		fprintf(stderr, "bench_records: %s\n", err);
		exit(1);
	}
	tr = tracker_new(&cl);
	tracker_set_page(tr, TRACKER_PAGE);
	for (k = 0; k < 6; k++) {
		if (tracker_poll(tr, c, st, &res, &err) != 0) {
			fprintf(stderr, "bench_records: %s\n", err);
			exit(1);
		}
		if (k == 0)
			printf("  (%d records: first tick %.1f ms on the laptop, %zu rows)\n", n,
			    res.engine_us / 1000.0, res.n);
		else
			us[k - 1] = res.engine_us;
		poll_result_free(&res);
	}
	qsort(us, 5, sizeof(*us), cmp_long);
	/* Before the index, every tick read every record. */
	t0 = bench_now_s();
	store_list(st, &list, &nl, NULL);
	parse_all = bench_now_s() - t0;
	store_list_free(list, nl);
	snprintf(measure, sizeof(measure), "records: poll tick engine time, %d (1%% live)", n);
	row(measure, us[2] / 1000.0, parse_all * 1000, "ms");
	tracker_free(tr);
	store_close(st);	/* writes the index file */
}

static size_t polls_logged(const char *log)
{
	char *err = NULL, *text = file_read_all(log, NULL, &err), *p;
	size_t n = 0;

	for (p = text; p != NULL && (p = strstr(p, "polled in ")) != NULL; p++)
		n++;
	free(text);
	free(err);
	return n;
}

/* ms from starting the monitor on state to the first frame showing its
 * records' rows (the screen read every 10 ms), and in *poll_ms to its
 * first poll's (its debug log): the rows come from the records' index
 * before the link is up, the poll's answers after. */
static double start_to_rows(const char *state, double *poll_ms)
{
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	char *env = xasprintf("XDG_STATE_HOME=%s TAOTOP_DEBUG=1", state), *log;
	double t0 = bench_now_s(), t = -1;

	so.env = env;
	*poll_ms = -1;
	screen_open(&s, "bench-records", &so);
	log = xasprintf("%s/taotop.log", s.dir);
	while (bench_now_s() - t0 < 120 && (t < 0 || *poll_ms < 0)) {
		char *text = t < 0 ? screen_text(&s) : NULL;
		if (text != NULL && strstr(text, "tao-20261129-") != NULL)
			t = bench_now_s() - t0;
		free(text);
		if (*poll_ms < 0 && polls_logged(log) > 0)
			*poll_ms = (bench_now_s() - t0) * 1000;
		usleep(10000);
	}
	screen_keys(&s, "q");
	screen_wait_exit(&s, 60);
	screen_close(&s);
	free(log);
	free(env);
	return t * 1000;
}

static void bench_rss(const char *state)
{
	int lng = getenv("BENCH_LONG") != NULL && strcmp(getenv("BENCH_LONG"), "1") == 0;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	char *env = xasprintf("XDG_STATE_HOME=%s TAOTOP_DEBUG=1%s", state,
	    lng ? " TAOTOP_POLL_S=10" : ""), *log;
	size_t first = 6, last = 360, n = 0, mark = 30;
	double at_first = 0, at_last = 0, t0 = bench_now_s();
	int pid, i = 0;

	so.env = env;
	screen_open(&s, "bench-rss", &so);
	log = xasprintf("%s/taotop.log", s.dir);
	while (polls_logged(log) == 0 && bench_now_s() - t0 < 120)
		usleep(100000);
	pid = screen_pid(&s);
	t0 = bench_now_s();
	while (n < last && bench_now_s() - t0 < (lng ? 4000 : 1200)) {
		/* At the keyboard: polls stay at the base rate. */
		screen_keys(&s, i++ % 2 ? "k" : "j");
		sleep(1);
		n = polls_logged(log);
		if (at_first == 0 && n >= first)
			at_first = bench_rss_mib(pid);
		if (n >= mark) {
			/* The curve, to tell a climb from a plateau. */
			printf("  (RSS after %zu polls: %.2f MiB)\n", n, bench_rss_mib(pid));
			mark += 60;
		}
	}
	at_last = bench_rss_mib(pid);
	printf("  (%zu polls; RSS %.2f MiB after %zu, %.2f MiB after %zu: %+.1f %%)\n", n,
	    at_first, first, at_last, n, 100 * (at_last - at_first) / at_first);
	row("monitor RSS after an hour's polls, 10 000 records", at_last, at_first, "MiB");
	screen_keys(&s, "q");
	screen_wait_exit(&s, 60);
	screen_close(&s);
	free(log);
	free(env);
}

int main(void)
{
	const int sizes[] = { 1000, 10000, MAX_RECORDS };
	const char *out = getenv("BENCH_RESULTS");
	struct conn_target t;
	char tmpl[] = "/tmp/taotop-bench-records-XXXXXX", *err = NULL, *jobs, *ids, *refs, *index;
	struct conn *c;
	int done = 0;
	size_t k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	results = out != NULL ? fopen(out, "a") : NULL;
	rig_target(&t);
	c = conn_new(&t);
	if (conn_connect(c, &err) != CONN_OK || mkdtemp(tmpl) == NULL) {
		fprintf(stderr, "bench_records: %s\n", err ? err : "mkdtemp");
		return 1;
	}
	jobs = xasprintf("%s/taotop/jobs", tmpl);
	rig_local("mkdir -p %s && chmod 700 %s/taotop %s", jobs, tmpl, jobs);
	/* The live 1 %: held jobs, one command (after any a stopped run left). */
	ids = bench_remote(c, "scancel --name=bench-records; for i in $(seq 1000); do sbatch --parsable --hold -J bench-records "
	    "-t 1 -o /dev/null --wrap true; done");
	refs = ids;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		make_records(jobs, done, sizes[k], &refs);
		done = sizes[k];
		bench_size(c, jobs, sizes[k]);
		if (sizes[k] == 10000) {
			/* The RSS run on 10 000 records, in a copy of its own. */
			char tmpl2[] = "/tmp/taotop-bench-rss-XXXXXX";
			if (mkdtemp(tmpl2) == NULL)
				return 1;
			rig_local("cp -a %s/taotop %s/", tmpl, tmpl2);
			bench_rss(tmpl2);
			rig_local("rm -rf %s", tmpl2);
		}
	}
	{
		double with_poll, without_poll, with = start_to_rows(tmpl, &with_poll), without;
		index = xasprintf("%s/.index/records", jobs);
		unlink(index);
		without = start_to_rows(tmpl, &without_poll);
		row("monitor start to first rows, 100 000 records", with, without, "ms");
		row("monitor start to first poll's rows, 100 000", with_poll, without_poll, "ms");
		free(index);
	}
	free(bench_remote(c, "scancel --name=bench-records; true"));
	conn_free(c);
	rig_local("rm -rf %s", tmpl);
	free(ids);
	free(jobs);
	if (results != NULL)
		fclose(results);
	return 0;
}

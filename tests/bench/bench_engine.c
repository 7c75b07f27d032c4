/*
 * make bench: the engine against the seed's way, on the test cluster, in the
 * same run. Rows appended to $BENCH_RESULTS:
 *
 *  - the first screen (50 lines) of a 1 GiB log: log_tail over the open
 *    session vs `ssh login tail -n 50 FILE`, and vs the same through an
 *    OpenSSH master (ControlMaster, started and warmed first); best of 3;
 *  - bytes read per follow tick vs bytes appended: log_follow_tick vs a
 *    `tail -n 50` re-read each tick (what watch(1) + ssh does);
 *  - one status poll for 1, 100 and 1000 tracked jobs: tracker_poll (one
 *    command) vs one `ssh login sacct -j ID` process per job. The baseline
 *    is measured on BENCH_SEED_SAMPLE (10) jobs and scaled per job, since
 *    1000 ssh processes take four minutes. taotop's steady tick (best of
 *    three) asks squeue only; its first tick also asks sacct about every
 *    tracked job, and is shown apart;
 *  - the same ticks against what a user who cares runs, through an OpenSSH
 *    master: one `squeue --me` with a format like taotop's per tick (the
 *    queue holds the same 1000 held jobs in every row), plus one `sacct -j`
 *    of the tracked jobs for the first tick; and a tick after a job left
 *    the queue (cancelled between ticks): taotop's (squeue, then sacct of
 *    that job, in one command) against `squeue --me` then `sacct -j ID`,
 *    two commands through the master;
 *  - the history window from accounting (the user's jobs of the last 7
 *    days, 500 array tasks and what else ran): the tick
 *    that carries it against the same tick without it plus the history as
 *    a command of its own, and the steady ticks between (history set but
 *    not due) against ticks without it; commands sent per tick counted by
 *    the connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/logs/logtail.h"
#include "engine/slurm/slurm.h"
#include "engine/store/store.h"
#include "engine/track/tracker.h"
#include "integration/helper_rig.h"
#include "bench/bench.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"


static FILE *results;

static void row(const char *measure, double ours, double theirs, const char *unit)
{
	printf("%-44s %12.2f %12.2f %s\n", measure, ours, theirs, unit);
	if (results != NULL)
		fprintf(results, "%s\t%.2f\t%.2f\t%s\n", measure, ours, theirs, unit);
}



/* The poll's parse over an answer of lines that never end a record (a
 * hostile job name, an answer cut at the output cap): the time at 16 MiB
 * against 16 times the time at 1 MiB, which a linear parse matches and a
 * quadratic one (the parse before 2026-12-04: hours at the 64 MiB cap)
 * exceeds sixteenfold. */
static double parse_flood_ms(size_t mib)
{
	static const char nonce[] = "0123456789abcdef";
	char line[64];
	size_t n = mib << 20, at, len;
	char *in = xmalloc(n + 64);
	struct slurm_poll p;
	double t0, best = 1e9;
	int round;

	len = (size_t)snprintf(line, sizeof(line), "garbage\x1f%s never ends\n", nonce);
	at = (size_t)sprintf(in, "@@taotop-%s squeue\n", nonce);
	while (at + len < n) {
		memcpy(in + at, line, len);
		at += len;
	}
	in[at] = '\0';
	for (round = 0; round < 3; round++) {
		t0 = bench_now_s();
		slurm_poll_parse(in, "", nonce, &p);
		t0 = bench_now_s() - t0;
		if (t0 < best)
			best = t0;
		slurm_poll_free(&p);
	}
	free(in);
	return best * 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void bench_parse(void)
{
	double one = parse_flood_ms(1), sixteen = parse_flood_ms(16);
	row("poll parse, 16 MiB of unended lines", sixteen, 16 * one, "ms (vs 16 x 1 MiB)");
}

static void bench_logs(struct conn *c, const struct rig *r, const struct bench_mux *m)
{
	char *dir = xasprintf("%s/bench", r->shared), *path = xasprintf("%s/big.log", dir), *cmd;
	struct buf out;
	uint64_t end;
	int missing;
	char *err = NULL;

	/* 1 GiB of numbered lines, made once and kept between runs. */
	cmd = xasprintf("mkdir -p %s && { [ \"$(stat -c %%s %s 2>/dev/null)\" = 1073741824 ] || "
	    "{ yes 'a line of training log output that is about eighty bytes long.............' "
	    "| head -c 1073741824 > %s; }; }", dir, path, path);
	free(bench_remote(c, cmd));
	free(cmd);

	/* Each way best of 3, taken in turns. */
	buf_init(&out);
	cmd = xasprintf("tail -n 50 %s", path);
	double ours = 1e9, theirs = 1e9, muxed = 1e9;
	for (int i = 0; i < 3; i++) {
		double t0 = bench_now_s(), t;
		buf_reset(&out);
		if (log_tail(c, path, 50, 0, &out, &end, &missing, &err) != 0) {
			fprintf(stderr, "bench_engine: %s\n", err);
			exit(1);
		}
		t = bench_now_s() - t0;
		ours = t < ours ? t : ours;
		t = bench_ssh_process(r, cmd);
		theirs = t < theirs ? t : theirs;
		t = bench_ssh_mux(r, m, cmd);
		muxed = t < muxed ? t : muxed;
	}
	free(cmd);
	row("logs: first screen of a 1 GiB log", ours * 1000, theirs * 1000, "ms");
	row("logs: first screen, vs ssh ControlMaster", ours * 1000, muxed * 1000, "ms");

	/* Follow: 20 ticks, each after 20 lines (~1 KiB) appended: a log
	 * growing slower than a screen per tick, as training logs do. */
	char *fpath = xasprintf("%s/follow.log", dir);
	cmd = xasprintf(": > %s", fpath);
	free(bench_remote(c, cmd));
	free(cmd);
	struct log_follow f;
	log_follow_init(&f, fpath, 0);
	uint64_t appended = 0, tail_bytes = 0;
	for (int tick = 0; tick < 20; tick++) {
		cmd = xasprintf("seq -f 'tick %d line %%g of the followed log.........' 1 20 >> %s",
		    tick, fpath);
		free(bench_remote(c, cmd));
		free(cmd);
		buf_reset(&out);
		log_follow_tick(&f, c, &out, &err);
		/* The re-read way transfers the last 50 lines every tick. */
		cmd = xasprintf("tail -n 50 %s | wc -c", fpath);
		char *n = bench_remote(c, cmd);
		tail_bytes += strtoull(n, NULL, 10);
		free(n);
		free(cmd);
	}
	cmd = xasprintf("stat -c %%s %s", fpath);
	char *size = bench_remote(c, cmd);
	appended = strtoull(size, NULL, 10);
	free(size), free(cmd);
	row("logs: bytes read per follow tick", (double)f.bytes_read / 20, (double)tail_bytes / 20,
	    "B");
	printf("  (appended %.0f B per tick: the follower read %+.0f B per tick beyond it)\n",
	    (double)appended / 20, ((double)f.bytes_read - (double)appended) / 20);
	log_follow_free(&f);
	buf_free(&out);
	free(fpath), free(path), free(dir);
}

/* squeue's format as a user who scripts it writes one: taotop's fields. */
#define USER_SQUEUE "squeue --me -h -o '%A|%i|%F|%K|%j|%T|%r|%P|%D|%b|%M|%l'"
#define USER_SACCT "sacct -X -n -P -o JobIDRaw,JobID,JobName,State,Reason,Partition,NNodes," \
	"Elapsed,Timelimit,ExitCode -j "

/* One command through the master that must succeed; its output (caller
 * frees); its wall time added to *t. */
static char *mux_ok(const struct rig *r, const struct bench_mux *m, const char *cmd, double *t)
{
	char *out = NULL;
	int rc;

	*t += bench_ssh_run(r, m, NULL, cmd, &out, &rc);
	if (rc != 0) {
		fprintf(stderr, "bench_engine: through the ssh master: %s: exit %d\n", cmd, rc);
		exit(1);
	}
	return out;
}

/* Whether squeue's answer (USER_SQUEUE's) lists job id. */
static int lists_job(const char *answer, const char *id)
{
	size_t n = strlen(id);
	const char *p;

	for (p = answer; *p != '\0'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (strncmp(p, id, n) == 0 && p[n] == '|')
			return 1;
	return 0;
}

static void bench_poll(struct conn *c, const struct rig *r, const struct bench_mux *m)
{
	const int sizes[] = { 1, 100, 1000 };
	int sample = getenv("BENCH_SEED_SAMPLE") ? atoi(getenv("BENCH_SEED_SAMPLE")) : 10;
	char tmpl[] = "/tmp/taotop-bench-XXXXXX", *err = NULL;
	struct cluster_cfg cl = { .name = (char *)"rig" };

	if (mkdtemp(tmpl) == NULL)
		exit(1);
	struct record_store *st = store_open(tmpl, &err);
	struct tracker *tr = tracker_new(&cl);
	/* 1000 held jobs, submitted in one command, tracked by records. */
	char *ids = bench_remote(c, "for i in $(seq 1000); do sbatch --parsable --hold -J bench-poll "
	    "-t 1 -o /dev/null --wrap true; done");
	char *save = NULL, *tok = strtok_r(ids, "\n", &save), *first = xstrdup(tok);
	int tracked = 0;
	double per_job = 0;
	struct buf tracked_ids;

	buf_init(&tracked_ids);
	/* The seed's way, on a sample: one ssh + sacct process per job. */
	for (int i = 0; i < sample; i++) {
		char *cmd = xasprintf("sacct -j %s -X -n -o State%%30", first);
		per_job += bench_ssh_process(r, cmd);
		free(cmd);
	}
	per_job /= sample;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		while (tracked < sizes[k] && tok != NULL) {
			char *id = store_mint_id(st);
			struct job_record *rec = record_new(id);
			record_set(&rec->cluster, "rig");
			record_set(&rec->backend_ref, tok);
			store_create(st, rec, &err);
			record_free(rec);
			free(id);
			buf_addf(&tracked_ids, "%s%s", tracked ? "," : "", tok);
			tracked++;
			tok = strtok_r(NULL, "\n", &save);
		}
		struct poll_result res;
		double best = 1e9, first_tick = 0, user_tick = 1e9;
		/* A fresh tracker: its first tick asks sacct about every job.
		 * Each tick is followed by the user's: one squeue through the
		 * master (the queue holds the same 1000 jobs in every row), so
		 * the machine's load weighs on both alike; best of 3 each. */
		tracker_free(tr);
		tr = tracker_new(&cl);
		for (int rep = 0; rep < 4; rep++) {
			const struct conn_counters *cc = conn_counters(c);
			unsigned long ka = cc->keepalives;
			uint64_t bytes = cc->exec_bytes_read;
			double t0 = bench_now_s(), t;
			if (tracker_poll(tr, c, st, &res, &err) != 0) {
				fprintf(stderr, "bench_engine: %s\n", err);
				exit(1);
			}
			t = bench_now_s() - t0;
			if (rep == 0)
				first_tick = t;
			else if (t < best)
				best = t;
			/* Where a tick's time went, to read a slow one by. */
			printf("  tick %d, %d jobs: %.1f ms, %.1f of it on the laptop, %llu bytes "
			    "answered, %lu keepalives\n", rep + 1, sizes[k], t * 1000,
			    res.engine_us / 1000.0, (unsigned long long)(cc->exec_bytes_read - bytes),
			    cc->keepalives - ka);
			poll_result_free(&res);
			if (rep == 0)
				continue;
			t = 0;
			char *ans = mux_ok(r, m, USER_SQUEUE, &t);
			if (!lists_job(ans, first)) {
				fprintf(stderr, "bench_engine: squeue does not list job %s\n", first);
				exit(1);
			}
			free(ans);
			if (t < user_tick)
				user_tick = t;
		}
		char measure[64];
		snprintf(measure, sizeof(measure), "poll: one tick, %d tracked jobs", sizes[k]);
		row(measure, best * 1000, per_job * sizes[k] * 1000, "ms");
		snprintf(measure, sizeof(measure), "poll: first tick (+sacct), %d jobs", sizes[k]);
		row(measure, first_tick * 1000, per_job * sizes[k] * 1000, "ms");

		/* The user's first tick: squeue, then sacct of the jobs they
		 * follow (best of 3). */
		double user_first = 1e9;
		char *sacct = xasprintf(USER_SACCT "%s", tracked_ids.data);
		for (int rep = 0; rep < 3; rep++) {
			double t = 0;
			free(mux_ok(r, m, USER_SQUEUE, &t));
			free(mux_ok(r, m, sacct, &t));
			if (t < user_first)
				user_first = t;
		}
		free(sacct);
		snprintf(measure, sizeof(measure), "poll: one tick, %d jobs, vs squeue (ssh CM)",
		    sizes[k]);
		row(measure, best * 1000, user_tick * 1000, "ms");
		snprintf(measure, sizeof(measure), "poll: first tick, %d, vs squeue+sacct (CM)",
		    sizes[k]);
		row(measure, first_tick * 1000, user_first * 1000, "ms");
	}

	/* A job leaves the queue (cancelled between ticks), 3 times. taotop:
	 * the tick after it left asks squeue only and notes it missing, the
	 * next asks sacct about it too (timed: the tick that learns its end).
	 * The user: squeue through the master, the job missing from it, then
	 * `sacct -j ID`: two commands, timed together. Medians. */
	double ours_left[3], theirs_left[3];
	char *save2 = NULL, *left_ids = xstrdup(tracked_ids.data);
	char *job = strtok_r(left_ids, ",", &save2);
	for (int rep = 0; rep < 3 && job != NULL; rep++, job = strtok_r(NULL, ",", &save2)) {
		struct poll_result res;
		char *cmd = xasprintf("scancel %s && for i in $(seq 100); do "
		    "squeue --me -h -o %%i | grep -qx %s || break; sleep 0.1; done", job, job);
		double t0, t = 0;
		free(bench_remote(c, cmd));
		free(cmd);
		if (tracker_poll(tr, c, st, &res, &err) != 0)
			exit(1);
		poll_result_free(&res);
		t0 = bench_now_s();
		if (tracker_poll(tr, c, st, &res, &err) != 0)
			exit(1);
		ours_left[rep] = bench_now_s() - t0;
		poll_result_free(&res);
		char *ans = mux_ok(r, m, USER_SQUEUE, &t);
		if (lists_job(ans, job)) {
			fprintf(stderr, "bench_engine: job %s still queued\n", job);
			exit(1);
		}
		free(ans);
		cmd = xasprintf(USER_SACCT "%s", job);
		ans = mux_ok(r, m, cmd, &t);
		if (strstr(ans, job) == NULL) {
			fprintf(stderr, "bench_engine: sacct -j %s: %s\n", job, ans);
			exit(1);
		}
		free(ans);
		free(cmd);
		theirs_left[rep] = t;
	}
	qsort(ours_left, 3, sizeof(double), cmp_double);
	qsort(theirs_left, 3, sizeof(double), cmp_double);
	row("poll: tick after a job left, vs squeue+sacct", ours_left[1] * 1000,
	    theirs_left[1] * 1000, "ms");
	free(left_ids);
	buf_free(&tracked_ids);
	free(bench_remote(c, "scancel --name=bench-poll"));
	free(first);
	free(ids);
	tracker_free(tr);
	store_close(st);
}

/* Best of n ticks of tr: seconds; commands sent per tick in *execs. */
static double best_tick(struct tracker *tr, struct conn *c, struct record_store *st, int n,
    double *execs, size_t *rows)
{
	double best = 1e9;
	unsigned long e0 = conn_counters(c)->execs;
	char *err = NULL;

	for (int i = 0; i < n; i++) {
		struct poll_result res;
		double t0 = bench_now_s(), t;
		if (tracker_poll(tr, c, st, &res, &err) != 0) {
			fprintf(stderr, "bench_engine: %s\n", err);
			exit(1);
		}
		t = bench_now_s() - t0;
		if (t < best)
			best = t;
		if (rows != NULL)
			*rows = res.n;
		poll_result_free(&res);
	}
	*execs = (double)(conn_counters(c)->execs - e0) / n;
	return best;
}

static void bench_history(struct conn *c)
{
	char tmpl[] = "/tmp/taotop-bench-XXXXXX", *err = NULL, *cmd;
	struct cluster_cfg cl = { .name = (char *)"rig" };
	struct record_store *st;
	struct tracker *plain, *hist;
	const long since_s = 7 * 86400;
	const unsigned max = 5000;
	double t_plain, e_plain = 0, t_first = 1e9, e_first = 0, t_steady, e_steady = 0, t_alone = 1e9;
	size_t rows_plain = 0, rows_hist = 0;
	char measure[96];

	if (mkdtemp(tmpl) == NULL || (st = store_open(tmpl, &err)) == NULL)
		exit(1);
	/* A week's worth of finished jobs: an array of 500 short tasks, each
	 * a row of accounting's window (-X), waited for there. */
	free(bench_remote(c, "id=$(sbatch --parsable --array=1-500 -J bench-hist -t 1 -o /dev/null "
	    "--wrap true) && for i in $(seq 240); do "
	    "[ $(sacct -X -n -P -S now-1days --name=bench-hist -s CD -o JobID | wc -l) -ge 500 ] "
	    "&& break; sleep 0.5; done"));
	plain = tracker_new(&cl);
	/* The tick that carries the history: a fresh tracker's first, best
	 * of 3 fresh trackers. */
	for (int i = 0; i < 3; i++) {
		double t, e;
		hist = tracker_new(&cl);
		tracker_set_history(hist, since_s, 300, max);
		t = best_tick(hist, c, st, 1, &e, &rows_hist);
		if (t < t_first)
			t_first = t, e_first = e;
		if (i < 2)
			tracker_free(hist);
	}
	/* Between: history set, not due; interleaved with ticks without it,
	 * so the machine's load weighs on both alike. */
	t_plain = t_steady = 1e9;
	for (int i = 0; i < 7; i++) {
		double t, e;
		t = best_tick(plain, c, st, 1, &e, &rows_plain);
		if (t < t_plain)
			t_plain = t, e_plain = e;
		t = best_tick(hist, c, st, 1, &e, NULL);
		if (t < t_steady)
			t_steady = t, e_steady = e;
	}
	/* The other way: the history as a command of its own (the same
	 * sacct as the poll's history section). */
	cmd = xstrdup("sacct -X -n -p -o JobIDRaw,JobID,JobName,State,Reason,Partition,NNodes,"
	    "Elapsed,Timelimit,ExitCode,AllocTRES -u \"$(id -un)\" -S now-604800seconds -E now "
	    "| tail -n 5001");
	for (int i = 0; i < 3; i++) {
		double t0 = bench_now_s();
		free(bench_remote(c, cmd));
		if (bench_now_s() - t0 < t_alone)
			t_alone = bench_now_s() - t0;
	}
	snprintf(measure, sizeof(measure), "poll+history: the tick with it (%zu jobs)", rows_hist);
	row(measure, t_first * 1000, (t_plain + t_alone) * 1000, "ms");
	row("poll+history: commands for that tick", e_first, e_plain + 1, "execs");
	row("poll+history: steady tick, history not due", t_steady * 1000, t_plain * 1000, "ms");
	row("poll+history: commands per steady tick", e_steady, e_plain, "execs");
	free(cmd);
	tracker_free(hist);
	tracker_free(plain);
	store_close(st);
	free(bench_remote(c, "scancel --name=bench-hist; true"));
	rig_local("rm -rf %s", tmpl);
}

int main(void)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char *err = NULL;
	const char *out = getenv("BENCH_RESULTS");

	results = out != NULL ? fopen(out, "a") : NULL;
	rig_target(&t);
	struct conn *c = conn_new(&t);
	if (conn_connect(c, &err) != CONN_OK) {
		fprintf(stderr, "bench_engine: %s\n", err);
		return 1;
	}
	/* BENCH_ENGINE_ONLY=history runs that part alone (by hand). */
	if (getenv("BENCH_ENGINE_ONLY") == NULL || strcmp(getenv("BENCH_ENGINE_ONLY"), "history") != 0) {
		struct bench_mux m;
		bench_mux_start(r, &m);
		bench_logs(c, r, &m);
		bench_poll(c, r, &m);
		bench_mux_stop(r, &m);
		bench_parse();
	}
	bench_history(c);
	conn_free(c);
	if (results != NULL)
		fclose(results);
	return 0;
}

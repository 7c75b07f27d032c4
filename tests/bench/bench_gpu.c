/*
 * make bench: live GPU use (engine/usage.h) on the test cluster. Rows
 * appended to $BENCH_RESULTS:
 *
 *  - one sampling round for 1, 10 and 50 running jobs: use_sample (one
 *    remote command, every job's `srun --overlap` at once) vs what a user
 *    does by hand, one `ssh login srun --overlap --jobid=ID nvidia-smi ...`
 *    per job (measured on up to BENCH_SEED_SAMPLE (5) jobs, scaled), and
 *    the same through an OpenSSH master (ControlMaster, started and warmed
 *    first); and the remote commands each took;
 *  - the monitor's poll tick with 50 running taotop jobs, without sampling
 *    and with a round every 2 s: the real watch (engine/watch.h), the time
 *    from a poll's request to its answer (so a poll queued behind a round
 *    would show), median and worst.
 *
 * The rig has 32 cores and 16 GPUs: the jobs run in its hidden `bench`
 * partition, whose cores are shared four ways; the first 16 hold a GPU each,
 * the others none (their nvidia-smi answers "No devices were found": the
 * same remote work, no GPU line).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/track/usage.h"
#include "engine/watch/watch.h"
#include "integration/helper_rig.h"
#include "bench/bench.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

#define NJOBS	50
#define NGPU	16

static FILE *results;


static void row(const char *measure, double ours, double theirs, const char *unit)
{
	printf("%-44s %12.2f %12.2f %s\n", measure, ours, theirs, unit);
	if (results != NULL)
		fprintf(results, "%s\t%.2f\t%.2f\t%s\n", measure, ours, theirs, unit);
}



static void bench_rounds(struct conn *c, const struct rig *r, char **ids)
{
	const int sizes[] = { 1, 10, NJOBS };
	int sample = getenv("BENCH_SEED_SAMPLE") ? atoi(getenv("BENCH_SEED_SAMPLE")) : 5;
	struct use_job jobs[NJOBS];
	double per_job = 0, per_job_cm = 0;
	struct bench_mux m;
	size_t k;
	int i;

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < NJOBS; i++) {
		jobs[i].slurm_id = ids[i];
		jobs[i].nodes = 1;
		jobs[i].epoch = -1;
	}
	for (i = 0; i < sample; i++) {
		char *cmd = xasprintf("srun --overlap --jobid=%s nvidia-smi --query-gpu=index,"
		    "utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits", ids[i]);
		per_job += bench_ssh_process(r, cmd);
		free(cmd);
	}
	per_job /= sample;
	bench_mux_start(r, &m);
	for (i = 0; i < sample; i++) {
		char *cmd = xasprintf("srun --overlap --jobid=%s nvidia-smi --query-gpu=index,"
		    "utilization.gpu,memory.used,memory.total --format=csv,noheader,nounits", ids[i]);
		per_job_cm += bench_ssh_mux(r, &m, cmd);
		free(cmd);
	}
	per_job_cm /= sample;
	bench_mux_stop(r, &m);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		double best = 1e9;
		unsigned long execs = 0;
		size_t answered = 0, j;
		int rep;
		for (rep = 0; rep < 3; rep++) {
			struct use_round round;
			unsigned long before = conn_counters(c)->execs;
			char *err = NULL;
			double t0 = bench_now_s(), t;
			if (use_sample(c, jobs, (size_t)sizes[k], &round, &err) != 0) {
				fprintf(stderr, "bench_gpu: %s\n", err);
				exit(1);
			}
			t = bench_now_s() - t0;
			if (t < best)
				best = t;
			execs = conn_counters(c)->execs - before;
			answered = 0;
			for (j = 0; j < round.n; j++)
				answered += round.jobs[j].ok;
			use_round_free(&round);
		}
		char measure[80];
		snprintf(measure, sizeof(measure), "gpu use: one round, %d running jobs", sizes[k]);
		row(measure, best * 1000, per_job * sizes[k] * 1000, "ms");
		snprintf(measure, sizeof(measure), "gpu use: round, %d jobs, vs ssh ControlMaster",
		    sizes[k]);
		row(measure, best * 1000, per_job_cm * sizes[k] * 1000, "ms");
		snprintf(measure, sizeof(measure), "gpu use: remote commands, %d jobs", sizes[k]);
		row(measure, (double)execs, (double)sizes[k], "cmd");
		printf("  (%zu of %d jobs answered with GPU lines: the rig has %d GPUs)\n", answered,
		    sizes[k], NGPU);
	}
}

/* The monitor's poll with the 50 jobs as taotop's records, for `seconds`,
 * sampling every use_s (0: never): the poll's request-to-answer times. */
static void watch_polls(const struct rig *r, char **ids, int use_s, int seconds, double *median,
    double *worst, unsigned long *rounds)
{
	char tmpl[] = "/tmp/taotop-bench-gpu-XXXXXX", *err = NULL, hosts[64];
	struct config cfg;
	struct cluster_cfg cl;
	struct record_store *st;
	struct watch *w;
	double times[512];
	size_t nt = 0, i, j;
	int64_t end, started = 0;
	unsigned long polls = 0;

	if (mkdtemp(tmpl) == NULL)
		exit(1);
	st = store_open(tmpl, &err);
	if (st == NULL) {
		fprintf(stderr, "bench_gpu: %s\n", err);
		exit(1);
	}
	for (i = 0; i < NJOBS; i++) {
		char *id = store_mint_id(st);
		struct job_record *rec = record_new(id);
		record_set(&rec->cluster, "rig");
		record_set(&rec->backend_ref, ids[i]);
		store_create(st, rec, &err);
		record_free(rec);
		free(id);
	}
	snprintf(hosts, sizeof(hosts), "%s:%d", r->host, r->port);
	memset(&cl, 0, sizeof(cl));
	cl.name = (char *)"rig";
	cl.hosts = hosts;
	cl.user = (char *)r->user;
	cl.key_path = (char *)r->key;
	cl.known_hosts = (char *)r->known_hosts;
	cl.poll_s = 2;
	cl.use_s = use_s;
	cl.idle_percent = 5;
	cl.idle_s = 600;
	cl.stall_s = 1800;
	memset(&cfg, 0, sizeof(cfg));
	cfg.clusters = &cl;
	cfg.n = 1;
	w = watch_new(&cfg, st);
	end = watch_now_ms() + seconds * 1000LL;
	while (watch_now_ms() < end) {
		int fds[4], timeout;
		struct pollfd pfd[4];
		int64_t next, now = watch_now_ms();
		const struct watched *p;
		size_t n, k;
		/* A user at the keyboard: polls at the base rate, no backoff. */
		watch_user_active(w);
		watch_tick(w, now, &next);
		p = watch_cluster(w, 0);
		if (p->poll_started_ms != 0)
			started = p->poll_started_ms;
		n = watch_fds(w, fds, 4);
		for (k = 0; k < n; k++) {
			pfd[k].fd = fds[k];
			pfd[k].events = POLLIN;
		}
		timeout = next < 0 ? 200 : (int)(next - now > 200 ? 200 : next - now < 0 ? 0 : next - now);
		poll(pfd, n, timeout);
		watch_dispatch(w);
		p = watch_cluster(w, 0);
		if (p->polls != polls) {
			polls = p->polls;
			if (started != 0 && polls > 1 && nt < sizeof(times) / sizeof(times[0]))
				times[nt++] = (double)(watch_now_ms() - started);
			started = 0;
		}
	}
	*rounds = watch_cluster(w, 0)->use_rounds;
	watch_free(w);
	store_close(st);
	rig_local("rm -rf %s", tmpl);
	/* Sort for the median. */
	for (i = 1; i < nt; i++)
		for (j = i; j > 0 && times[j - 1] > times[j]; j--) {
			double t = times[j];
			times[j] = times[j - 1];
			times[j - 1] = t;
		}
	*median = nt ? times[nt / 2] : 0;
	*worst = nt ? times[nt - 1] : 0;
}

int main(void)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char *err = NULL, *out, *save = NULL, *tok, *ids[NJOBS];
	const char *res = getenv("BENCH_RESULTS");
	double off_med, off_worst, on_med, on_worst;
	unsigned long rounds_off, rounds_on;
	int i, running = 0;

	results = res != NULL ? fopen(res, "a") : NULL;
	rig_target(&t);
	struct conn *c = conn_new(&t);
	if (conn_connect(c, &err) != CONN_OK) {
		fprintf(stderr, "bench_gpu: %s\n", err);
		return 1;
	}
	free(bench_remote(c, "scancel --name=bench-gpu; true"));
	out = bench_remote(c, "for i in $(seq 50); do g=; [ $i -le 16 ] && g=--gres=gpu:1; "
	    "sbatch --parsable -p bench -J bench-gpu -t 10 -c 1 $g -o /dev/null --wrap 'sleep 900'; done");
	for (i = 0, tok = strtok_r(out, "\n", &save); i < NJOBS && tok != NULL;
	    i++, tok = strtok_r(NULL, "\n", &save))
		ids[i] = xstrdup(tok);
	if (i != NJOBS) {
		fprintf(stderr, "bench_gpu: %d jobs submitted, not %d\n", i, NJOBS);
		return 1;
	}
	free(out);
	for (i = 0; i < 120 && running < NJOBS; i++) {
		out = bench_remote(c, "squeue -h --me -n bench-gpu -t R | wc -l");
		running = atoi(out);
		free(out);
		if (running < NJOBS)
			usleep(500000);
	}
	if (running < NJOBS) {
		fprintf(stderr, "bench_gpu: only %d of %d jobs running after a minute\n", running, NJOBS);
		free(bench_remote(c, "scancel --name=bench-gpu; true"));
		return 1;
	}
	bench_rounds(c, r, ids);

	watch_polls(r, ids, 0, 20, &off_med, &off_worst, &rounds_off);
	watch_polls(r, ids, 2, 20, &on_med, &on_worst, &rounds_on);
	row("monitor poll, 50 running jobs: median", on_med, off_med, "ms");
	row("monitor poll, 50 running jobs: worst", on_worst, off_worst, "ms");
	printf("  (taotop: sampling every 2 s, %lu rounds in 20 s; baseline: the same watch without "
	    "sampling, %lu rounds)\n", rounds_on, rounds_off);

	free(bench_remote(c, "scancel --name=bench-gpu; true"));
	for (i = 0; i < NJOBS; i++)
		free(ids[i]);
	conn_free(c);
	if (results != NULL)
		fclose(results);
	return 0;
}

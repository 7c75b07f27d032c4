/*
 * make bench: taotop as a user far from the cluster sees it. The rig's
 * slowlink relay (tests/cluster/slowlink.c) sits between taotop and the
 * cluster's sshd and holds every chunk 50 ms each way (a 100 ms round trip
 * more than loopback); each measure is the median of 3 runs of the real
 * binary, through the relay and straight to the server, in the same run.
 * The baseline of `jobs` is the seed's way: `ssh login squeue --me` through
 * the same relay. Rows appended to $BENCH_RESULTS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "integration/helper_rig.h"
#include "util/xmalloc.h"

#define ONE_WAY_MS	50
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

int main(void)
{
	const struct rig *r = rig_get();
	const char *bin = getenv("TAOTOP_BIN"), *results = getenv("BENCH_RESULTS");
	char dir[] = "/tmp/taotop-farlink-XXXXXX", *kh, *remote, *bundle, *base, *far, *near, *cmd;
	int port = RELAY_PORT + (r->port - 2222);
	double t_far, t_near, t_ssh;
	FILE *out = results ? fopen(results, "a") : NULL, *f;

	if (bin == NULL || mkdtemp(dir) == NULL) {
		fprintf(stderr, "bench_farlink: run through make bench\n");
		return 1;
	}
	/* The relay, and a known_hosts naming the rig's key at its port. */
	if (rig_local("%s/tools/slowlink -l %d -t %d -d %d -m 900 >%s/relay.log 2>&1 & "
	    "echo $! > %s/relay.pid; sleep 0.3", r->state, port, r->port, ONE_WAY_MS, dir, dir) != 0)
		return 1;
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
	base = xasprintf("SLURM_USER=%s SSH_KEY_PATH=%s TAOTOP_CLUSTER=rig TAOTOP_CONFIG=/nonexistent "
	    "XDG_STATE_HOME=%s/state SLURM_BASE_RESULTS_DIR=lustre://%s/jobs "
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
	row(out, "far link (100 ms RTT): taotop jobs", t_far * 1000, t_ssh * 1000);
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
	printf("far link: --since 7d costs %.0f ms over jobs (one round trip is %d ms)\n",
	    (t_near - t_far) * 1000, 2 * ONE_WAY_MS);

	cmd = xasprintf("submit %s --dry-run", bundle);
	far_and_near(out, far, near, bin, cmd, "submit --dry-run", NULL, NULL);
	free(cmd);
	cmd = xasprintf("submit %s", bundle);
	far_and_near(out, far, near, bin, cmd, "submit, image cached, one secret", &t_far, &t_near);
	free(cmd);
	printf("far link: a submit costs about %.0f round trips more than on loopback\n",
	    (t_far - t_near) * 1000 / (2 * ONE_WAY_MS));

	rig_local("kill $(cat %s/relay.pid) 2>/dev/null; scancel -u %s >/dev/null 2>&1; true", dir,
	    r->user);
	cmd = xasprintf("scancel --me --name=tao-* 2>/dev/null; rm -rf %s", remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	rig_local("rm -rf %s", dir);
	if (out != NULL)
		fclose(out);
	free(kh), free(remote), free(bundle), free(base), free(far), free(near);
	return 0;
}

/*
 * make bench: `make demo` from a stopped cluster (packages present), in
 * tmux as a user runs it: the time from the demo's start to the monitor's
 * first screen (its header drawn), and to the example TAO job's row shown
 * in it. Rows appended to $BENCH_RESULTS; no baseline (nothing else does
 * what the demo does). It leaves the cluster up, as the demo does, for the
 * benchmarks after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/xmalloc.h"

#define SESSION		"taotop-bench-demo"
#define LIMIT_S		180

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The pane's text now (caller frees), or NULL. */
static char *capture(void)
{
	FILE *p = popen("tmux capture-pane -p -t " SESSION " 2>/dev/null", "r");
	char *text = NULL;
	size_t cap = 0, len = 0, n;
	char chunk[4096];

	if (p == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0) {
		text = xrealloc(text, (cap = len + n + 1));
		memcpy(text + len, chunk, n);
		len += n;
		text[len] = '\0';
	}
	pclose(p);
	(void)cap;
	return text;
}

/* Seconds from t0 until the pane shows all of a and b, or -1. */
static double wait_for(double t0, const char *a, const char *b)
{
	while (now_s() - t0 < LIMIT_S) {
		char *text = capture();
		int seen = text != NULL && strstr(text, a) != NULL && (b == NULL || strstr(text, b) != NULL);
		free(text);
		if (seen)
			return now_s() - t0;
		usleep(100 * 1000);
	}
	return -1;
}

int main(void)
{
	const char *share = getenv("TAOTOP_SHARE"), *out = getenv("BENCH_RESULTS");
	double t0, first, job;
	char *cmd;
	FILE *f;
	int rc = 0;

	if (share == NULL) {
		fprintf(stderr, "bench_demo: TAOTOP_SHARE is not set (run through make bench)\n");
		return 1;
	}
	/* From a stopped cluster, with a fresh demo state. */
	cmd = xasprintf("%s/tests/cluster/down >/dev/null 2>&1; rm -rf \"$RIG_STATE/demo-state\" "
	    "\"$RIG_STATE/demo-config.yaml\"; tmux kill-session -t " SESSION " 2>/dev/null; true",
	    share);
	(void)!system(cmd);
	free(cmd);
	cmd = xasprintf("tmux new-session -d -s " SESSION " -x 140 -y 40 'cd %s && scripts/demo; "
	    "sleep 600'", share);
	t0 = now_s();
	if (system(cmd) != 0) {
		fprintf(stderr, "bench_demo: tmux did not start\n");
		free(cmd);
		return 1;
	}
	free(cmd);
	first = wait_for(t0, "STATE", "NATIVE");
	job = first >= 0 ? wait_for(t0, "classification_pyt", NULL) : -1;
	(void)!system("tmux send-keys -t " SESSION " q; sleep 1; tmux kill-session -t " SESSION
	    " 2>/dev/null");
	if (first < 0 || job < 0) {
		fprintf(stderr, "bench_demo: the monitor %s within %d s\n", first < 0
		    ? "never drew its first screen" : "never showed the example job", LIMIT_S);
		rc = 1;
	}
	printf("%-48s %12.2f s\n", "make demo: stopped cluster to first screen", first);
	printf("%-48s %12.2f s\n", "make demo: to the TAO job in the monitor", job);
	if (out != NULL && rc == 0 && (f = fopen(out, "a")) != NULL) {
		fprintf(f, "make demo: stopped cluster to first screen\t%.2f\t\ts\n", first);
		fprintf(f, "make demo: to the TAO job in the monitor\t%.2f\t\ts\n", job);
		fclose(f);
	}
	return rc;
}

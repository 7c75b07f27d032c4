/*
 * make bench: N sequential `true` commands over one persistent libssh
 * session (taotop's way) against N `ssh -o BatchMode=yes ... true` processes
 * (the seed's way), to the test cluster's sshd in the same run; and the same
 * `true` as ssh processes through an OpenSSH master (ControlMaster=auto,
 * ControlPersist=60, started and warmed first: what a user who cares sets
 * up). Appends two rows (per-command milliseconds) to $BENCH_RESULTS.
 *
 * BENCH_SSH_N (1000) commands for taotop; BENCH_SSH_BASELINE_N (200) ssh
 * processes, since each costs a quarter of a second: set it to 1000 for the
 * full comparison; BENCH_SSH_MUX_N (1000) through the master. Per-command
 * means are compared, so the counts may differ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);
	return v != NULL && atoi(v) > 0 ? atoi(v) : def;
}

int main(void)
{
	int n = env_int("BENCH_SSH_N", 1000), nb = env_int("BENCH_SSH_BASELINE_N", 200), i;
	const struct rig *r = rig_get();
	struct conn_target t;
	struct conn_exec x;
	char port[16], kh[4096], dest[256], *err = NULL;
	double t0, ours, theirs, muxed;
	int nm = env_int("BENCH_SSH_MUX_N", 1000), rc;
	struct bench_mux m;

	rig_target(&t);
	struct conn *c = conn_new(&t);
	if (conn_connect(c, &err) != CONN_OK) {
		fprintf(stderr, "bench_ssh: %s\n", err);
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < n; i++) {
		conn_exec_init(&x, "true");
		if (conn_exec(c, &x, &err) != CONN_OK || x.exit_status != 0) {
			fprintf(stderr, "bench_ssh: command %d: %s\n", i, err ? err : "non-zero exit");
			return 1;
		}
		conn_exec_free(&x);
	}
	ours = (now_s() - t0) * 1000 / n;
	conn_free(c);

	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(kh, sizeof(kh), "UserKnownHostsFile=%s", r->known_hosts);
	snprintf(dest, sizeof(dest), "%s@%s", r->user, r->host);
	t0 = now_s();
	for (i = 0; i < nb; i++) {
		pid_t pid = fork();
		int status;
		if (pid == 0) {
			execlp("ssh", "ssh", "-q", "-o", "BatchMode=yes", "-o", kh, "-i", r->key,
			    "-p", port, dest, "true", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "bench_ssh: ssh process %d failed\n", i);
			return 1;
		}
	}
	theirs = (now_s() - t0) * 1000 / nb;

	bench_mux_start(r, &m);
	t0 = now_s();
	for (i = 0; i < nm; i++) {
		bench_ssh_run(r, &m, NULL, "true", NULL, &rc);
		if (rc != 0) {
			fprintf(stderr, "bench_ssh: ssh process %d through the master failed\n", i);
			return 1;
		}
	}
	muxed = (now_s() - t0) * 1000 / nm;
	bench_mux_stop(r, &m);

	printf("ssh: %d commands over one session: %.2f ms each; %d ssh processes: %.1f ms each; "
	    "%.0fx; %d through a ControlMaster: %.2f ms each, %.1fx\n", n, ours, nb, theirs,
	    theirs / ours, nm, muxed, muxed / ours);
	const char *out = getenv("BENCH_RESULTS");
	if (out != NULL) {
		FILE *f = fopen(out, "a");
		if (f != NULL) {
			fprintf(f, "ssh: run `true` (per command)\t%.2f\t%.1f\tms\n", ours, theirs);
			fprintf(f, "ssh: run `true`, vs ssh ControlMaster\t%.2f\t%.2f\tms\n", ours,
			    muxed);
			fclose(f);
		}
	}
	return 0;
}

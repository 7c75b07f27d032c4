/*
 * make bench: `taotop report` over 10 000 records (issue 35). Rows
 * appended to $BENCH_RESULTS:
 *
 *  - the report's time for one cluster (accounting's list of the user's
 *    jobs over a week, one remote command, matched with 10 000 taotop
 *    records on disk whose SLURM ids are jobs that list holds: found by the
 *    index, each read and its card added), against the bare `sacct` of the
 *    same window over the same session (what the cluster's side costs);
 *  - its remote commands, against the one a report needs at least.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "engine/slurm/acctreport.h"
#include "engine/store/report.h"
#include "engine/store/store.h"
#include "engine/track/usage_report.h"
#include "integration/helper_rig.h"
#include "util/xmalloc.h"

#define RECORDS	10000
#define WEEK	(7 * 86400L)

int main(void)
{
	const char *out = getenv("BENCH_RESULTS");
	char tmpl[] = "/tmp/taotop-bench-report-XXXXXX", *err = NULL, *jobs, *cmd, *list;
	struct acct_job *aj;
	struct record_store *st;
	struct conn_target t;
	struct report r;
	struct conn *c;
	FILE *results;
	size_t n, i, made = 0;
	double t0, ours, theirs;
	unsigned long e0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	results = out != NULL ? fopen(out, "a") : NULL;
	rig_target(&t);
	c = conn_new(&t);
	if (conn_connect(c, &err) != CONN_OK || mkdtemp(tmpl) == NULL) {
		fprintf(stderr, "bench_report: %s\n", err ? err : "mkdtemp");
		return 1;
	}
	/* The jobs accounting holds for the user this week: the records are
	 * made for the newest RECORDS of them (the test suites' jobs; a rig
	 * with fewer gets as many as it has). */
	cmd = acct_report_command(WEEK);
	list = bench_remote(c, cmd);
	acct_report_parse(list, &aj, &n);
	jobs = xasprintf("%s/taotop/jobs", tmpl);
	rig_local("mkdir -p %s && chmod 700 %s/taotop %s", jobs, tmpl, jobs);
	for (i = n > RECORDS ? n - RECORDS : 0; i < n; i++) {
		char id[48];
		struct job_record *rec;
		snprintf(id, sizeof(id), "tao-20261205-%06zx", i);
		rec = record_new(id);
		record_set(&rec->cluster, "rig");
		record_set(&rec->network_arch, "classification_pyt");
		record_set(&rec->action, "train");
		record_set(&rec->backend_ref, aj[i].id);
		record_transition(rec, TAO_DONE, "COMPLETED", NULL, "scheduler", time(NULL));
		rec->has_card = 1;
		card_make(&rec->card, NULL, NULL, aj[i].gpus, 5);
		rec->card.util_mean = (int)(i % 100);
		bench_put_record(jobs, rec);
		made++;
	}
	printf("  (%zu jobs in accounting this week, %zu records made)\n", n, made);
	if ((st = store_open(jobs, &err)) == NULL) {
		fprintf(stderr, "bench_report: %s\n", err);
		return 1;
	}
	/* Once to build the index (the monitor or the CLI keeps it), then
	 * timed. */
	memset(&r, 0, sizeof(r));
	if (usage_report_gather(c, st, "rig", WEEK, &r, &err) != 0) {
		fprintf(stderr, "bench_report: %s\n", err);
		return 1;
	}
	report_free(&r);
	e0 = conn_counters(c)->execs;
	t0 = bench_now_s();
	if (usage_report_gather(c, st, "rig", WEEK, &r, &err) != 0) {
		fprintf(stderr, "bench_report: %s\n", err);
		return 1;
	}
	ours = bench_now_s() - t0;
	printf("  (%d of the jobs matched taotop's records)\n", r.matched);
	{
		double cmds = (double)(conn_counters(c)->execs - e0);
		t0 = bench_now_s();
		free(bench_remote(c, cmd));
		theirs = bench_now_s() - t0;
		bench_row(results, "report over 10 000 records: one cluster, a week", ours * 1000,
		    theirs * 1000, "ms");
		bench_row(results, "report over 10 000 records: remote commands", cmds, 1,
		    "commands");
	}
	report_free(&r);
	store_close(st);
	conn_free(c);
	rig_local("rm -rf %s", tmpl);
	free(aj), free(list), free(cmd), free(jobs);
	if (results != NULL)
		fclose(results);
	return 0;
}

/*
 * `taotop report [--since SPAN] [--cluster C] [--json]`: where the GPU
 * hours went over a window (engine/store/report.h), every configured
 * cluster (or --cluster's) one after the other, one remote command each; a
 * cluster that cannot be reached is said on stderr and the others are
 * reported.
 */
#include "cli/cli.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jobrow.h"
#include "cli/session.h"
#include "cli/show.h"
#include "engine/slurm/duration.h"
#include "engine/store/report.h"
#include "engine/track/usage_report.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

int cli_report(const struct cli_args *a)
{
	struct session s;
	struct report r;
	const char *since = cli_val(a, "since") != NULL ? cli_val(a, "since") : "7d";
	char *err = NULL;
	long since_s;
	unsigned long commands = 0;
	size_t n = 0, k;
	int rc, reached = 0;

	if ((rc = session_begin_clusters(&s, a, "7d", &since_s, &n)) != EXIT_OK)
		return rc;
	memset(&r, 0, sizeof(r));
	for (k = 0; k < n; k++) {
		const struct cluster_cfg *cl = session_nth(&s, a, k);
		int drc = EXIT_OK;
		struct conn *c = session_dial(cl, &drc, &err);

		if (c == NULL) {
			fprintf(stderr, "taotop: %s: %s\n", cl->name, show_err(err ? err : "?"));
			free(err);
			err = NULL;
			if (drc > rc)
				rc = drc;
			continue;
		}
		if (usage_report_gather(c, s.store, cl->name, since_s, &r, &err) != 0) {
			fprintf(stderr, "taotop: %s\n", show_err(err));
			free(err);
			err = NULL;
			rc = EXIT_FAILED;
		} else {
			reached++;
		}
		commands += conn_counters(c)->execs;
		conn_free(c);
	}
	if (reached > 0 || n == 0) {
		if (cli_val(a, "json") != NULL) {
			cJSON *o = report_json(&r, since);
			cJSON_AddNumberToObject(o, "clusters", reached);
			cJSON_AddNumberToObject(o, "remote_commands", (double)commands);
			jobrow_print_json(o);
		} else {
			char **lines;
			size_t nl = report_lines(&r, since, &lines), i;
			for (i = 0; i < nl; i++) {
				printf("%s\n", show(lines[i]));
				free(lines[i]);
			}
			free(lines);
		}
	}
	report_free(&r);
	session_close(&s);
	return rc;
}

#include "engine/slurm/acctreport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/slurm.h"
#include "util/compat.h"
#include "util/xmalloc.h"

#define NFIELDS	7

char *acct_report_command(long since_s)
{
	long min = since_s > 0 ? (since_s + 59) / 60 : 1;

	/* -S now-Nminutes: sacct's own relative time (no clock of ours). The
	 * state filter is left out: a job that ran in the window at all
	 * counts, as -S/-E select without -s. */
	return xasprintf("sacct -X -n -P -S now-%ldminutes -E now "
	    "-o JobID,State,Partition,Submit,Start,ElapsedRaw,AllocTRES 2>&1", min);
}

static time_t stamp(const char *s)
{
	time_t t;

	return compat_parse_local(s, &t) == 0 ? t : 0;
}

static int gres_gpus(const char *tres)
{
	const char *p = strstr(tres, "gres/gpu=");

	/* "gres/gpu=8", not "gres/gpu:a100=8" (counted in gres/gpu too). */
	while (p != NULL && p != tres && p[-1] != ',')
		p = strstr(p + 1, "gres/gpu=");
	return p != NULL ? atoi(p + 9) : 0;
}

void acct_report_parse(const char *out, struct acct_job **jobs, size_t *n)
{
	char *copy = xstrdup(out != NULL ? out : ""), *line, *save = NULL;
	size_t cap = 0;

	*jobs = NULL;
	*n = 0;
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *f[NFIELDS], *p = line;
		struct acct_job *j;
		int k;

		for (k = 0; k < NFIELDS; k++) {
			f[k] = p;
			p = strchr(p, '|');
			if (p == NULL)
				break;
			*p++ = '\0';
		}
		if (k != NFIELDS - 1 || !slurm_id_ok(f[0]))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*jobs = xreallocarray(*jobs, cap, sizeof(**jobs));
		}
		j = &(*jobs)[(*n)++];
		memset(j, 0, sizeof(*j));
		snprintf(j->id, sizeof(j->id), "%s", f[0]);
		f[1][strcspn(f[1], " +")] = '\0';
		snprintf(j->state, sizeof(j->state), "%s", f[1]);
		snprintf(j->partition, sizeof(j->partition), "%s", f[2]);
		j->submit = stamp(f[3]);
		j->start = stamp(f[4]);
		j->elapsed_s = atol(f[5]);
		j->gpus = gres_gpus(f[6]);
	}
	free(copy);
}

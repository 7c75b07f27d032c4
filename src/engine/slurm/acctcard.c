#include "engine/slurm/acctcard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/slurm/slurm.h"
#include "util/compat.h"
#include "util/xmalloc.h"

/* The admin comment last: it is free text (a site's), and every field
 * before it is SLURM's own, none with a '|'. */
#define FIELDS	"JobID,Submit,Start,ElapsedRaw,TimelimitRaw,AllocCPUS,TotalCPU,MaxRSS,AllocTRES," \
		"TRESUsageInAve,TRESUsageInMax,AdminComment"
#define NFIELDS	12

char *acct_card_command(const char *id)
{
	if (!slurm_id_ok(id))
		abort();	/* broken invariants: the caller checks */
	return xasprintf("sacct -j %s -n -P -o " FIELDS " 2>&1", id);
}

long acct_cpu_seconds(const char *s)
{
	long d = 0, h = 0, m = 0;
	double sec = 0;
	char tail;

	if (s == NULL || *s == '\0')
		return -1;
	if (sscanf(s, "%ld-%ld:%ld:%lf%c", &d, &h, &m, &sec, &tail) == 4 ||
	    (d = 0, sscanf(s, "%ld:%ld:%lf%c", &h, &m, &sec, &tail) == 3) ||
	    (h = 0, sscanf(s, "%ld:%lf%c", &m, &sec, &tail) == 2)) {
		if (d < 0 || h < 0 || m < 0 || sec < 0)
			return -1;
		return ((d * 24 + h) * 60 + m) * 60 + (long)sec;
	}
	return -1;
}

long acct_kib(const char *s)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return -1;
	v = strtod(s, &end);
	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case '\0':	return (long)(v / 1024);
	case 'K':	return (long)v;
	case 'M':	return (long)(v * 1024);
	case 'G':	return (long)(v * 1024 * 1024);
	case 'T':	return (long)(v * 1024 * 1024 * 1024);
	}
	return -1;
}

/* The number after "name=" in a TRES list ("cpu=16,gres/gpu=8,mem=..."),
 * as text (caller frees), or NULL. */
static char *tres(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, name, n) == 0 && p[n] == '=') {
			p += n + 1;
			return xstrndup(p, strcspn(p, ","));
		}
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return NULL;
}

static long stamp(const char *s)
{
	time_t t;

	return compat_parse_local(s, &t) == 0 ? (long)t : -1;
}

/* Split line at '|' into NFIELDS fields, the last taking the rest. */
static int split_line(char *line, char **f)
{
	int i;

	for (i = 0; i < NFIELDS - 1; i++) {
		char *bar = strchr(line, '|');
		if (bar == NULL)
			return -1;
		*bar = '\0';
		f[i] = line;
		line = bar + 1;
	}
	f[NFIELDS - 1] = line;
	return 0;
}

int acct_card_parse(const char *out, const char *id, struct acct_facts *f)
{
	char *copy, *line, *save = NULL, *v[NFIELDS];
	size_t idlen = strlen(id);
	int found = 0;

	memset(f, 0, sizeof(*f));
	f->wait_s = f->elapsed_s = f->limit_s = f->cpu_s = f->rss_peak_kib = -1;
	f->gpu_util = -1;
	f->gpu_mem_mib = -1;
	if (out == NULL)
		return -1;
	copy = xstrdup(out);
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *s;
		long x;

		if (split_line(line, v) != 0 || strncmp(v[0], id, idlen) != 0 ||
		    (v[0][idlen] != '\0' && v[0][idlen] != '.' && v[0][idlen] != '_'))
			continue;
		/* The job's own line, or an array's task's (ID_N, not a
		 * step's ID_N.batch). */
		if (v[0][idlen] == '\0' || (v[0][idlen] == '_' && strchr(v[0], '.') == NULL)) {
			long sub = stamp(v[1]), start = stamp(v[2]), el = *v[3] ? atol(v[3]) : -1;
			int cpus = atoi(v[5]), gpus = 0;
			long cpu_s = acct_cpu_seconds(v[6]);
			found = 1;
			f->tasks++;
			if (sub >= 0 && start >= sub && (f->wait_s < 0 || start - sub < f->wait_s))
				f->wait_s = start - sub;
			if (el > f->elapsed_s)
				f->elapsed_s = el;
			if (*v[4] != '\0' && strcmp(v[4], "UNLIMITED") != 0 &&
			    strcmp(v[4], "Partition_Limit") != 0)
				f->limit_s = atol(v[4]) * 60;
			if (cpus > f->cpus)
				f->cpus = cpus;
			if (cpu_s >= 0)
				f->cpu_s = (f->cpu_s < 0 ? 0 : f->cpu_s) + cpu_s;
			if ((s = tres(v[8], "gres/gpu")) != NULL) {
				gpus = atoi(s);
				free(s);
			}
			if (gpus > f->gpus)
				f->gpus = gpus;
			if (el > 0) {
				f->gpu_s += (double)gpus * el;
				f->cpu_alloc_s += (double)cpus * el;
			}
			if (strncmp(v[11], "JS1:", 4) == 0)
				f->jobstats = 1;
		}
		if ((x = acct_kib(v[7])) > f->rss_peak_kib)
			f->rss_peak_kib = x;
		if ((s = tres(v[9], "gres/gpuutil")) != NULL) {
			if (atoi(s) > f->gpu_util)
				f->gpu_util = atoi(s);
			free(s);
		}
		if ((s = tres(v[10], "gres/gpumem")) != NULL) {
			long kib = acct_kib(s);
			if (kib >= 0 && kib / 1024 > f->gpu_mem_mib)
				f->gpu_mem_mib = kib / 1024;
			free(s);
		}
	}
	free(copy);
	return found ? 0 : -1;
}

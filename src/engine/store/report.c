#include "engine/store/report.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/acctreport.h"
#include "engine/slurm/duration.h"
#include "engine/store/record.h"
#include "util/xmalloc.h"

static const char *const names[REPORT_N] = {
	[REPORT_DONE] = "done", [REPORT_ERROR_PROGRAM] = "error_program",
	[REPORT_ERROR_INFRA] = "error_infrastructure", [REPORT_ERROR_OTHER] = "error_unjudged",
	[REPORT_CANCELED] = "canceled", [REPORT_RUNNING] = "running",
};

static const char *const words[REPORT_N] = {
	[REPORT_DONE] = "Done", [REPORT_ERROR_PROGRAM] = "Error, the program's",
	[REPORT_ERROR_INFRA] = "Error, the infrastructure's", [REPORT_ERROR_OTHER] =
	    "Error, not judged", [REPORT_CANCELED] = "Canceled", [REPORT_RUNNING] =
	    "still running or pending",
};

const char *report_outcome_name(enum report_outcome o)
{
	return (unsigned)o < REPORT_N ? names[o] : "?";
}

/* The outcome: the record's state and class when taotop has one (TAO's
 * own verdict over SLURM's word), else SLURM's state. */
static enum report_outcome outcome(const struct acct_job *j, const struct job_record *rec)
{
	struct native_state ns;

	if (rec != NULL && tao_state_final(rec->state)) {
		if (rec->state == TAO_DONE)
			return REPORT_DONE;
		if (rec->state == TAO_CANCELED)
			return REPORT_CANCELED;
		if (rec->err_class != NULL)
			return strcmp(rec->err_class, RECORD_ERR_INFRA) == 0 ? REPORT_ERROR_INFRA
			    : REPORT_ERROR_PROGRAM;
		return REPORT_ERROR_OTHER;
	}
	native_state_map(j->state, &ns);
	if (!ns.final)
		return REPORT_RUNNING;
	switch (ns.state) {
	case TAO_DONE:		return REPORT_DONE;
	case TAO_CANCELED:	return REPORT_CANCELED;
	default:
		/* A node that failed or never booted is the cluster's,
		 * whoever's job it was (classify.h's rule). */
		return strcmp(ns.word, "NODE_FAIL") == 0 || strcmp(ns.word, "BOOT_FAIL") == 0
		    ? REPORT_ERROR_INFRA : REPORT_ERROR_OTHER;
	}
}

static void consider_waste(struct report *r, const char *cluster, const char *id,
    const char *what, double hours)
{
	size_t i, at;

	if (hours <= 0)
		return;
	for (at = 0; at < r->ntop && r->top[at].hours >= hours; at++)
		;
	if (at >= REPORT_TOP)
		return;
	if (r->ntop < REPORT_TOP)
		r->ntop++;
	for (i = r->ntop - 1; i > at; i--)
		r->top[i] = r->top[i - 1];
	snprintf(r->top[at].cluster, sizeof(r->top[at].cluster), "%s", cluster);
	snprintf(r->top[at].id, sizeof(r->top[at].id), "%s", id);
	snprintf(r->top[at].what, sizeof(r->top[at].what), "%s", what);
	r->top[at].hours = hours;
}

static void add_wait(struct report *r, const char *cluster, const char *partition, long wait)
{
	struct report_wait *w = NULL;
	size_t i;

	for (i = 0; i < r->nwaits && w == NULL; i++)
		if (strcmp(r->waits[i].cluster, cluster) == 0 &&
		    strcmp(r->waits[i].partition, partition) == 0)
			w = &r->waits[i];
	if (w == NULL) {
		r->waits = xreallocarray(r->waits, r->nwaits + 1, sizeof(*r->waits));
		w = &r->waits[r->nwaits++];
		memset(w, 0, sizeof(*w));
		snprintf(w->cluster, sizeof(w->cluster), "%s", cluster);
		snprintf(w->partition, sizeof(w->partition), "%s", partition);
	}
	w->waits = xreallocarray(w->waits, w->n + 1, sizeof(*w->waits));
	w->waits[w->n++] = wait;
}

void report_add(struct report *r, const char *cluster, const struct acct_job *jobs, size_t n,
    struct job_record *const *recs)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct acct_job *j = &jobs[i];
		const struct job_record *rec = recs != NULL ? recs[i] : NULL;
		enum report_outcome o = outcome(j, rec);
		double h = j->gpus * (double)j->elapsed_s / 3600.0;
		char what[64];

		r->hours[o] += h;
		r->jobs[o]++;
		if (rec != NULL)
			r->taotop_hours[o] += h;
		r->matched += rec != NULL;
		if (j->start > 0 && j->submit > 0 && j->start >= j->submit && j->partition[0])
			add_wait(r, cluster, j->partition, (long)(j->start - j->submit));
		if (rec != NULL && rec->has_card && rec->card.util_mean >= 0 && h > 0) {
			double idle = h * (100 - rec->card.util_mean) / 100.0;
			r->idle_hours += idle;
			r->carded_hours += h;
			if (o >= REPORT_ERROR_PROGRAM && o <= REPORT_ERROR_OTHER) {
				snprintf(what, sizeof(what), "%s", words[o]);
				consider_waste(r, cluster, rec->id, what, h);
			} else {
				snprintf(what, sizeof(what), "idle %d %%", 100 - rec->card.util_mean);
				consider_waste(r, cluster, rec->id, what, idle);
			}
		} else if (o >= REPORT_ERROR_PROGRAM && o <= REPORT_ERROR_OTHER) {
			consider_waste(r, cluster, rec != NULL ? rec->id : j->id, words[o], h);
		}
	}
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nwaits; i++)
		free(r->waits[i].waits);
	free(r->waits);
	memset(r, 0, sizeof(*r));
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

static long median(const struct report_wait *w)
{
	long *v = (long *)(void *)xmemdup(w->waits, w->n * sizeof(*w->waits)), m;

	qsort(v, w->n, sizeof(*v), cmp_long);
	m = w->n % 2 ? v[w->n / 2] : (v[w->n / 2 - 1] + v[w->n / 2]) / 2;
	free(v);
	return m;
}

size_t report_lines(const struct report *r, const char *since, char ***out)
{
	size_t n = 0, i;
	double all = 0;
	int jobs = 0;
	char d[32];

	*out = NULL;
	for (i = 0; i < REPORT_N; i++)
		all += r->hours[i], jobs += r->jobs[i];
	xpushf(out, &n, "GPU hours over the last %s: %.2f in %d job%s (%d of them taotop's)", since,
	    all, jobs, jobs == 1 ? "" : "s", r->matched);
	for (i = 0; i < REPORT_N; i++)
		if (r->jobs[i] > 0)
			xpushf(out, &n, "  %-28s %10.2f  %4d job%s", words[i], r->hours[i], r->jobs[i],
			    r->jobs[i] == 1 ? "" : "s");
	if (r->carded_hours > 0)
		xpushf(out, &n, "  %-28s %10.2f  (of the %.2f whose use taotop knows)", "idle",
		    r->idle_hours, r->carded_hours);
	else
		xpushf(out, &n, "  idle: not known (no job in the window has an efficiency card)");
	if (r->ntop > 0) {
		xpushf(out, &n, "Wasted the most (GPU hours):");
		for (i = 0; i < r->ntop; i++)
			xpushf(out, &n, "  %-24s %-12s %8.2f  %s", r->top[i].id, r->top[i].cluster,
			    r->top[i].hours, r->top[i].what);
	}
	if (r->nwaits > 0) {
		size_t *order = xcalloc(r->nwaits, sizeof(*order)), k, j;
		/* The partitions with the most jobs first (insertion: a few). */
		for (i = 0; i < r->nwaits; i++) {
			for (j = i; j > 0 && r->waits[order[j - 1]].n < r->waits[i].n; j--)
				order[j] = order[j - 1];
			order[j] = i;
		}
		xpushf(out, &n, "Median queue wait:");
		for (k = 0; k < r->nwaits && k < REPORT_WAITS; k++) {
			const struct report_wait *w = &r->waits[order[k]];
			duration_format(median(w), d, sizeof(d));
			xpushf(out, &n, "  %-12s %-16s %s  (%zu job%s)", w->cluster, w->partition, d,
			    w->n, w->n == 1 ? "" : "s");
		}
		if (r->nwaits > REPORT_WAITS)
			xpushf(out, &n, "  (+%zu more partitions: --json lists them all)",
			    r->nwaits - REPORT_WAITS);
		free(order);
	}
	return n;
}

static double round2(double x)
{
	return (double)(long long)(x * 10000 + 0.5) / 10000;
}

cJSON *report_json(const struct report *r, const char *since)
{
	cJSON *o = cJSON_CreateObject(), *h, *a;
	size_t i;

	cJSON_AddStringToObject(o, "since", since);
	h = cJSON_AddObjectToObject(o, "gpu_hours");
	for (i = 0; i < REPORT_N; i++)
		cJSON_AddNumberToObject(h, names[i], round2(r->hours[i]));
	cJSON_AddNumberToObject(h, "idle", round2(r->idle_hours));
	cJSON_AddNumberToObject(h, "use_known", round2(r->carded_hours));
	h = cJSON_AddObjectToObject(o, "taotop_gpu_hours");
	for (i = 0; i < REPORT_N; i++)
		cJSON_AddNumberToObject(h, names[i], round2(r->taotop_hours[i]));
	h = cJSON_AddObjectToObject(o, "jobs");
	for (i = 0; i < REPORT_N; i++)
		cJSON_AddNumberToObject(h, names[i], r->jobs[i]);
	cJSON_AddNumberToObject(h, "taotops", r->matched);
	a = cJSON_AddArrayToObject(o, "wasted_most");
	for (i = 0; i < r->ntop; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "id", r->top[i].id);
		cJSON_AddStringToObject(e, "cluster", r->top[i].cluster);
		cJSON_AddNumberToObject(e, "gpu_hours", round2(r->top[i].hours));
		cJSON_AddStringToObject(e, "why", r->top[i].what);
		cJSON_AddItemToArray(a, e);
	}
	a = cJSON_AddArrayToObject(o, "median_wait");
	for (i = 0; i < r->nwaits; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "cluster", r->waits[i].cluster);
		cJSON_AddStringToObject(e, "partition", r->waits[i].partition);
		cJSON_AddNumberToObject(e, "seconds", (double)median(&r->waits[i]));
		cJSON_AddNumberToObject(e, "jobs", (double)r->waits[i].n);
		cJSON_AddItemToArray(a, e);
	}
	return o;
}

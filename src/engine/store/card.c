#include "engine/store/card.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/acctcard.h"
#include "engine/slurm/duration.h"
#include "util/xmalloc.h"

/* A GPU whose mean use over the run is below this did no work of note. */
#define USED_GPU_PCT	10

void card_samples_fold(struct card_samples *s, const int *util, const int *mem_used,
    const int *mem_total, int n, int idle_pct, time_t at)
{
	int i, read = 0, idle = 1;
	long sum = 0;

	if (n > CARD_MAX_GPUS)
		n = CARD_MAX_GPUS;
	for (i = 0; i < n; i++) {
		if (util[i] >= 0) {
			s->util_sum[i] += util[i];
			s->util_n[i]++;
			sum += util[i];
			read++;
			if (util[i] >= idle_pct)
				idle = 0;
		}
		if (mem_used[i] > s->mem_peak_mib)
			s->mem_peak_mib = mem_used[i];
		if (mem_total[i] > s->mem_total_mib)
			s->mem_total_mib = mem_total[i];
	}
	if (read == 0)
		return;		/* nothing read this round (MIG: [N/A]) */
	if (n > s->ngpu)
		s->ngpu = n;
	s->rounds++;
	s->idle_rounds += idle;
	s->hist[(sum / read) / 5 < CARD_BUCKETS ? (sum / read) / 5 : CARD_BUCKETS - 1]++;
	if (s->first == 0)
		s->first = at;
	s->last = at;
}

/* The median round's mean use: the middle of its 5 % bucket. */
static int median(const struct card_samples *s)
{
	unsigned seen = 0, half = ((unsigned)s->rounds + 1) / 2;
	int b;

	for (b = 0; b < CARD_BUCKETS; b++) {
		seen += s->hist[b];
		if (seen >= half)
			return b == CARD_BUCKETS - 1 ? 100 : b * 5 + 2;
	}
	return -1;
}

void card_make(struct card *c, const struct acct_facts *f, const struct card_samples *s,
    int gpus, int idle_pct)
{
	(void)idle_pct;
	memset(c, 0, sizeof(*c));
	c->gpu_hours = c->gpu_hours_used = -1;
	c->util_mean = c->util_median = c->idle_pct = c->gpus_used = -1;
	c->mem_peak_mib = c->mem_total_mib = c->cpu_eff = -1;
	c->rss_peak_kib = c->elapsed_s = c->limit_s = c->wait_s = -1;
	c->gpus = gpus;
	c->acct = f != NULL;
	if (f != NULL) {
		if (c->gpus <= 0)
			c->gpus = f->gpus;
		c->elapsed_s = f->elapsed_s;
		c->limit_s = f->limit_s;
		c->wait_s = f->wait_s;
		c->rss_peak_kib = f->rss_peak_kib;
		c->jobstats = f->jobstats;
		c->tasks = f->tasks;
		if (f->cpu_s >= 0 && f->cpu_alloc_s > 0)
			c->cpu_eff = (int)lround(100.0 * (double)f->cpu_s / f->cpu_alloc_s);
		else if (f->cpu_s >= 0 && f->cpus > 0 && f->elapsed_s > 0)
			c->cpu_eff = (int)lround(100.0 * (double)f->cpu_s /
			    ((double)f->elapsed_s * f->cpus));
		if (c->cpu_eff > 100)
			c->cpu_eff = 100;
	}
	if (f != NULL && f->tasks > 1)
		c->gpu_hours = f->gpu_s / 3600.0;	/* each task's GPUs x its time */
	else if (c->gpus > 0 && c->elapsed_s >= 0)
		c->gpu_hours = c->gpus * (double)c->elapsed_s / 3600.0;
	if (f != NULL && f->gpu_util >= 0) {
		/* The site's own record of the GPUs: the best source. */
		snprintf(c->gpu_source, sizeof(c->gpu_source), "accounting");
		c->util_mean = f->gpu_util > 100 ? 100 : f->gpu_util;
		if (f->gpu_mem_mib >= 0)
			c->mem_peak_mib = (int)f->gpu_mem_mib;
	} else if (s != NULL && s->rounds > 0) {
		long sum = 0, n = 0;
		int i;
		snprintf(c->gpu_source, sizeof(c->gpu_source), "taotop");
		c->rounds = s->rounds;
		c->gpus_used = 0;
		for (i = 0; i < s->ngpu && i < CARD_MAX_GPUS; i++) {
			if (s->util_n[i] == 0)
				continue;
			sum += s->util_sum[i];
			n += s->util_n[i];
			if (s->util_sum[i] / s->util_n[i] >= USED_GPU_PCT)
				c->gpus_used++;
		}
		/* GPUs allocated that no round saw (another node's, when
		 * only one was read) count as unknown, not idle. */
		c->util_mean = n > 0 ? (int)(sum / n) : -1;
		c->util_median = median(s);
		c->idle_pct = (int)lround(100.0 * s->idle_rounds / s->rounds);
		c->mem_peak_mib = s->mem_peak_mib;
		c->mem_total_mib = s->mem_total_mib > 0 ? s->mem_total_mib : -1;
	}
	if (c->util_mean >= 0 && c->gpu_hours >= 0)
		c->gpu_hours_used = c->gpu_hours * c->util_mean / 100.0;
}

/* ---- words ------------------------------------------------------------------------- */

/* "40 min", "3 h 10 min", "2 d 4 h" */
static void span(long s, char *out, size_t len)
{
	if (s < 3600)
		snprintf(out, len, "%ld min", (s + 59) / 60);
	else if (s < 86400)
		snprintf(out, len, s % 3600 >= 60 ? "%ld h %ld min" : "%ld h", s / 3600,
		    s % 3600 / 60);
	else
		snprintf(out, len, "%ld d %ld h", s / 86400, s % 86400 / 3600);
}

size_t card_notes(const struct card *c, char ***out)
{
	size_t n = 0;
	char a[32], b[32];

	*out = NULL;
	if (c->gpus > 1 && c->gpus_used >= 0 && c->gpus_used < c->gpus)
		xpushf(out, &n, "asked for %d GPUs, used %d", c->gpus, c->gpus_used);
	if (c->limit_s > 0 && c->elapsed_s >= 0 && c->elapsed_s * 2 < c->limit_s &&
	    c->limit_s - c->elapsed_s >= 15 * 60) {
		span(c->limit_s, a, sizeof(a));
		span(c->elapsed_s, b, sizeof(b));
		xpushf(out, &n, "asked for %s, needed %s", a, b);
	}
	if (c->idle_pct >= 20)
		xpushf(out, &n, "idle %d %% of its run", c->idle_pct);
	if (c->cpu_eff >= 0 && c->cpu_eff < 10 && c->elapsed_s >= 600)
		xpushf(out, &n, "its CPUs worked %d %% of their time", c->cpu_eff);
	return n;
}

size_t card_lines(const struct card *c, char ***out)
{
	char **notes, a[32], b[32];
	size_t n = 0, nn, i;

	*out = NULL;
	if (c->tasks > 1)
		xpushf(out, &n, "  a job array: its %d tasks summed (time: the longest task's)",
		    c->tasks);
	if (c->gpus > 0 && c->gpu_hours >= 0) {
		if (c->gpu_hours_used >= 0)
			xpushf(out, &n, "  GPU hours: %.2f allocated (%d GPUs), %.2f used", c->gpu_hours,
			    c->gpus, c->gpu_hours_used);
		else
			xpushf(out, &n, "  GPU hours: %.2f allocated (%d GPUs)", c->gpu_hours, c->gpus);
	}
	if (c->gpu_source[0] == '\0') {
		xpushf(out, &n, "  GPU use: not known (accounting records none on this cluster%s, and "
		    "taotop did not sample it: neither the monitor nor `status` looked while it ran)",
		    c->jobstats ? "; its jobstats summary is not read" : "");
	} else {
		char med[40] = "", idle[48] = "", used[64] = "", from[48];
		if (c->util_median >= 0)
			snprintf(med, sizeof(med), ", median %d %%", c->util_median);
		if (c->idle_pct >= 0)
			snprintf(idle, sizeof(idle), ", idle %d %% of the time", c->idle_pct);
		if (c->gpus_used >= 0)
			snprintf(used, sizeof(used), ", %d of %d GPUs did work", c->gpus_used,
			    c->gpus > 0 ? c->gpus : c->gpus_used);
		if (strcmp(c->gpu_source, "taotop") == 0)
			snprintf(from, sizeof(from), "taotop's %d samples", c->rounds);
		else
			snprintf(from, sizeof(from), "accounting");
		xpushf(out, &n, "  GPU use: mean %d %%%s%s%s (from %s)", c->util_mean, med, idle, used,
		    from);
	}
	if (c->mem_peak_mib >= 0 && c->mem_total_mib > 0)
		xpushf(out, &n, "  GPU memory: peak %.1f of %.1f GiB", c->mem_peak_mib / 1024.0,
		    c->mem_total_mib / 1024.0);
	else if (c->mem_peak_mib >= 0)
		xpushf(out, &n, "  GPU memory: peak %.1f GiB", c->mem_peak_mib / 1024.0);
	if (c->cpu_eff >= 0 || c->rss_peak_kib >= 0) {
		char cpu[48] = "CPU efficiency not known", rss[48] = "";
		if (c->cpu_eff >= 0)
			snprintf(cpu, sizeof(cpu), "CPU efficiency %d %%", c->cpu_eff);
		if (c->rss_peak_kib >= 0)
			snprintf(rss, sizeof(rss), ", peak host memory %.1f GiB",
			    c->rss_peak_kib / 1048576.0);
		xpushf(out, &n, "  %s%s (accounting)", cpu, rss);
	}
	if (c->elapsed_s >= 0) {
		duration_format(c->elapsed_s, a, sizeof(a));
		if (c->limit_s > 0) {
			duration_format(c->limit_s, b, sizeof(b));
			xpushf(out, &n, "  time: %s of %s (%ld %%)", a, b,
			    (long)lround(100.0 * c->elapsed_s / c->limit_s));
		} else {
			xpushf(out, &n, "  time: %s", a);
		}
	}
	if (c->wait_s >= 0) {
		duration_format(c->wait_s, a, sizeof(a));
		xpushf(out, &n, "  queue wait: %s", a);
	}
	nn = card_notes(c, &notes);
	for (i = 0; i < nn; i++) {
		xpushf(out, &n, "  note: %s", notes[i]);
		free(notes[i]);
	}
	free(notes);
	return n;
}

void card_figure(const struct card *c, char *out, size_t len)
{
	char **notes;
	size_t nn = card_notes(c, &notes), i;

	for (i = 0; i < nn; i++)
		free(notes[i]);
	free(notes);
	if (c->util_mean < 0)
		snprintf(out, len, "%s", nn > 0 ? "- !" : "-");
	else
		snprintf(out, len, "avg %d%%%s", c->util_mean, nn > 0 ? " !" : "");
}

/* ---- JSON -------------------------------------------------------------------------- */

static void add_int_array(cJSON *o, const char *name, const long *l, const int *v, int n)
{
	cJSON *a = cJSON_AddArrayToObject(o, name);
	int i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(l != NULL ? (double)l[i] : v[i]));
}

void card_samples_to_json(cJSON *o, const char *name, const struct card_samples *s)
{
	cJSON *x = cJSON_AddObjectToObject(o, name);
	cJSON *h;
	int i;

	cJSON_AddNumberToObject(x, "rounds", s->rounds);
	cJSON_AddNumberToObject(x, "idle_rounds", s->idle_rounds);
	cJSON_AddNumberToObject(x, "gpus", s->ngpu);
	add_int_array(x, "util_sum", s->util_sum, NULL, s->ngpu);
	add_int_array(x, "util_n", NULL, s->util_n, s->ngpu);
	h = cJSON_AddArrayToObject(x, "hist");
	for (i = 0; i < CARD_BUCKETS; i++)
		cJSON_AddItemToArray(h, cJSON_CreateNumber(s->hist[i]));
	cJSON_AddNumberToObject(x, "mem_peak_mib", s->mem_peak_mib);
	cJSON_AddNumberToObject(x, "mem_total_mib", s->mem_total_mib);
	cJSON_AddNumberToObject(x, "first", (double)s->first);
	cJSON_AddNumberToObject(x, "last", (double)s->last);
}

static double num(const cJSON *o, const char *name, double lo, double hi, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi ? v->valuedouble
	    : dflt;
}

int card_samples_from_json(const cJSON *o, struct card_samples *s)
{
	const cJSON *a, *b, *h;
	int i;

	memset(s, 0, sizeof(*s));
	if (!cJSON_IsObject(o))
		return -1;
	s->rounds = (int)num(o, "rounds", 0, 1e9, 0);
	s->idle_rounds = (int)num(o, "idle_rounds", 0, s->rounds, 0);
	s->ngpu = (int)num(o, "gpus", 0, CARD_MAX_GPUS, 0);
	a = cJSON_GetObjectItemCaseSensitive(o, "util_sum");
	b = cJSON_GetObjectItemCaseSensitive(o, "util_n");
	for (i = 0; i < s->ngpu; i++) {
		const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
		if (cJSON_IsNumber(x) && cJSON_IsNumber(y) && y->valuedouble >= 0 &&
		    y->valuedouble <= s->rounds && x->valuedouble >= 0 &&
		    x->valuedouble <= 100.0 * y->valuedouble) {
			s->util_sum[i] = (long)x->valuedouble;
			s->util_n[i] = y->valueint;
		}
	}
	h = cJSON_GetObjectItemCaseSensitive(o, "hist");
	for (i = 0; i < CARD_BUCKETS; i++) {
		const cJSON *x = cJSON_GetArrayItem(h, i);
		if (cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble <= s->rounds)
			s->hist[i] = (unsigned)x->valuedouble;
	}
	s->mem_peak_mib = (int)num(o, "mem_peak_mib", 0, 1e8, 0);
	s->mem_total_mib = (int)num(o, "mem_total_mib", 0, 1e8, 0);
	s->first = (time_t)num(o, "first", 0, 1e11, 0);
	s->last = (time_t)num(o, "last", 0, 1e11, 0);
	return 0;
}

void card_to_json(cJSON *o, const char *name, const struct card *c)
{
	cJSON *x = cJSON_AddObjectToObject(o, name);
	char **notes;
	size_t nn = card_notes(c, &notes), i;
	cJSON *a;

	if (c->gpu_source[0] != '\0')
		cJSON_AddStringToObject(x, "gpu_source", c->gpu_source);
	else
		cJSON_AddNullToObject(x, "gpu_source");
	cJSON_AddBoolToObject(x, "jobstats", c->jobstats);
	cJSON_AddNumberToObject(x, "gpus", c->gpus);
	cJSON_AddNumberToObject(x, "gpu_hours", c->gpu_hours >= 0 ? round(c->gpu_hours * 1e4) / 1e4
	    : -1);
	cJSON_AddNumberToObject(x, "gpu_hours_used", c->gpu_hours_used >= 0 ?
	    round(c->gpu_hours_used * 1e4) / 1e4 : -1);
	cJSON_AddNumberToObject(x, "util_mean", c->util_mean);
	cJSON_AddNumberToObject(x, "util_median", c->util_median);
	cJSON_AddNumberToObject(x, "idle_pct", c->idle_pct);
	cJSON_AddNumberToObject(x, "gpus_used", c->gpus_used);
	cJSON_AddNumberToObject(x, "gpu_mem_peak_mib", c->mem_peak_mib);
	cJSON_AddNumberToObject(x, "gpu_mem_total_mib", c->mem_total_mib);
	cJSON_AddNumberToObject(x, "cpu_efficiency", c->cpu_eff);
	cJSON_AddNumberToObject(x, "host_mem_peak_kib", (double)c->rss_peak_kib);
	cJSON_AddNumberToObject(x, "elapsed_s", (double)c->elapsed_s);
	cJSON_AddNumberToObject(x, "time_limit_s", (double)c->limit_s);
	cJSON_AddNumberToObject(x, "queue_wait_s", (double)c->wait_s);
	cJSON_AddNumberToObject(x, "samples", c->rounds);
	cJSON_AddBoolToObject(x, "accounting", c->acct);
	if (c->tasks > 1)
		cJSON_AddNumberToObject(x, "tasks", c->tasks);
	a = cJSON_AddArrayToObject(x, "notes");
	for (i = 0; i < nn; i++) {
		cJSON_AddItemToArray(a, cJSON_CreateString(notes[i]));
		free(notes[i]);
	}
	free(notes);
}

int card_from_json(const cJSON *o, struct card *c)
{
	const cJSON *v;

	memset(c, 0, sizeof(*c));
	if (!cJSON_IsObject(o))
		return -1;
	v = cJSON_GetObjectItemCaseSensitive(o, "gpu_source");
	if (cJSON_IsString(v) && (strcmp(v->valuestring, "accounting") == 0 ||
	    strcmp(v->valuestring, "taotop") == 0))
		snprintf(c->gpu_source, sizeof(c->gpu_source), "%s", v->valuestring);
	c->jobstats = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "jobstats"));
	c->gpus = (int)num(o, "gpus", 0, 1e6, 0);
	c->gpu_hours = num(o, "gpu_hours", -1, 1e9, -1);
	c->gpu_hours_used = num(o, "gpu_hours_used", -1, 1e9, -1);
	c->util_mean = (int)num(o, "util_mean", -1, 100, -1);
	c->util_median = (int)num(o, "util_median", -1, 100, -1);
	c->idle_pct = (int)num(o, "idle_pct", -1, 100, -1);
	c->gpus_used = (int)num(o, "gpus_used", -1, 1e6, -1);
	c->mem_peak_mib = (int)num(o, "gpu_mem_peak_mib", -1, 1e8, -1);
	c->mem_total_mib = (int)num(o, "gpu_mem_total_mib", -1, 1e8, -1);
	c->cpu_eff = (int)num(o, "cpu_efficiency", -1, 100, -1);
	c->rss_peak_kib = (long)num(o, "host_mem_peak_kib", -1, 1e12, -1);
	c->elapsed_s = (long)num(o, "elapsed_s", -1, 1e10, -1);
	c->limit_s = (long)num(o, "time_limit_s", -1, 1e10, -1);
	c->wait_s = (long)num(o, "queue_wait_s", -1, 1e10, -1);
	c->rounds = (int)num(o, "samples", 0, 1e9, 0);
	c->acct = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "accounting"));
	c->tasks = (int)num(o, "tasks", 0, 1e7, 0);
	return 0;
}

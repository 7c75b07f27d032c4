/*
 * `taotop plot JOB...`: every metric series TAO wrote for the jobs, read
 * from their records alone (kept as each job ended: engine/store/series.h),
 * never from the cluster: no connection is opened. A text plot per job and
 * metric to a terminal (util/plot.h), CSV to a pipe, or JSON. Two jobs or
 * more with --metric: the runs compared, one plot, each run with its mark
 * and named in the legend by the spec values that differ between them
 * (engine/store/specdiff.h).
 */
#include "cli/cli.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <langinfo.h>
#include <locale.h>

#include "cli/session.h"
#include "cli/show.h"
#include "engine/store/jobref.h"
#include "engine/store/series.h"
#include "engine/store/specdiff.h"
#include "engine/store/store.h"
#include "util/plot.h"
#include "util/xmalloc.h"

/* Rows of one text plot, its title line apart. */
#define PLOT_ROWS	16

enum plot_format { FMT_TEXT, FMT_CSV, FMT_JSON };

static int terminal_width(void)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col > 200 ? 200 : ws.ws_col;
	if (cols != NULL && atoi(cols) >= 20)
		return atoi(cols) > 200 ? 200 : atoi(cols);
	return 80;
}

static void print_text(const struct job_record *r, const struct series *s, int utf8, int width)
{
	double *x = xcalloc(s->n ? s->n : 1, sizeof(*x));
	struct plot_series ps = { x, s->value, s->n };
	struct plot_opts o = { .width = width, .height = PLOT_ROWS, .utf8 = utf8,
		.x_label = "epoch" };
	long last, best;
	char *p;
	size_t i;

	for (i = 0; i < s->n; i++)
		x[i] = s->epoch[i];
	series_last_best(s, &last, &best);
	/* Names are TAO's, from the cluster: sanitised whatever stdout is. */
	printf("%s  %s", show_tty(1, r->id), show_tty(1, s->name));
	if (last >= 0)
		printf("  last %.6g at epoch %d", s->value[last], s->epoch[last]);
	if (best >= 0)
		printf(", best %.6g at epoch %d", s->value[best], s->epoch[best]);
	if (s->stride > 1)
		printf("  (every %lu%s epoch kept)", s->stride, s->stride == 2 ? "nd" :
		    s->stride == 3 ? "rd" : "th");
	printf("\n");
	p = plot_render(&ps, 1, &o);
	if (p != NULL)
		fputs(p, stdout);
	else
		printf("  (no finite value to draw)\n");
	free(p);
	free(x);
}

/* A CSV field: quoted when it has a comma, a quote or a line break. */
static void csv_field(const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/* A value as TAO's json.dumps writes it: NaN, Infinity, -Infinity. */
static void csv_value(double v)
{
	if (isnan(v))
		fputs("NaN", stdout);
	else if (isinf(v))
		fputs(v > 0 ? "Infinity" : "-Infinity", stdout);
	else
		printf("%.17g", v);
}

static void print_csv(const struct job_record *r, const struct series *s)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		csv_field(r->id);
		putchar(',');
		csv_field(s->name);
		printf(",%d,", s->epoch[i]);
		csv_value(s->value[i]);
		putchar('\n');
	}
}

static cJSON *json_point(const struct series *s, long i)
{
	cJSON *o;

	if (i < 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "epoch", s->epoch[i]);
	cJSON_AddNumberToObject(o, "value", s->value[i]);
	return o;
}

static cJSON *json_series(const struct series *s)
{
	struct series_set one = { (struct series *)s, 1 };
	cJSON *a = series_set_to_json(&one), *o = cJSON_DetachItemFromArray(a, 0);
	long last, best;

	cJSON_Delete(a);
	cJSON_DeleteItemFromObject(o, "seen");
	cJSON_DeleteItemFromObject(o, "tail_off");
	series_last_best(s, &last, &best);
	cJSON_AddItemToObject(o, "last", json_point(s, last));
	cJSON_AddItemToObject(o, "best", json_point(s, best));
	return o;
}

/* One job's series (metric: only that one) printed; 0, or 1 when it has
 * none to print (said on stderr). */
static int plot_job(const struct job_record *r, const char *metric, enum plot_format fmt,
    int utf8, int width, cJSON *out)
{
	cJSON *job = NULL, *list = NULL;
	size_t i, shown = 0;

	if (r->curves.n == 0) {
		fprintf(stderr, "taotop: %s has no metrics recorded: they are kept from TAO's "
		    "status.json as the job ends (state %s)\n", show_err(r->id),
		    tao_state_name(r->state));
		return 1;
	}
	if (fmt == FMT_JSON) {
		job = cJSON_CreateObject();
		cJSON_AddStringToObject(job, "job", r->id);
		if (r->name != NULL)
			cJSON_AddStringToObject(job, "name", r->name);
		else
			cJSON_AddNullToObject(job, "name");
		cJSON_AddStringToObject(job, "state", tao_state_name(r->state));
		list = cJSON_AddArrayToObject(job, "series");
	}
	for (i = 0; i < r->curves.n; i++) {
		const struct series *s = &r->curves.s[i];
		if (metric != NULL && strcmp(metric, s->name) != 0)
			continue;
		shown++;
		if (fmt == FMT_JSON)
			cJSON_AddItemToArray(list, json_series(s));
		else if (fmt == FMT_CSV)
			print_csv(r, s);
		else
			print_text(r, s, utf8, width);
	}
	if (shown == 0) {
		fprintf(stderr, "taotop: %s has no metric '%s'; it has:", show_err(r->id),
		    show_err(metric));
		for (i = 0; i < r->curves.n; i++)
			fprintf(stderr, " %s", show_err(r->curves.s[i].name));
		fprintf(stderr, "\n");
		cJSON_Delete(job);
		return 1;
	}
	if (job != NULL)
		cJSON_AddItemToArray(out, job);
	return 0;
}

/* One metric of runs compared (n >= 2, each with that metric): one text
 * plot with a legend, CSV rows with each run's name, or JSON with each
 * run's name and the spec values that differ. */
static void compare(struct job_record *const *r, size_t n, const char *metric,
    enum plot_format fmt, int utf8, int width, cJSON *out)
{
	const char **specs = xcalloc(n, sizeof(*specs)), **ids = xcalloc(n, sizeof(*ids));
	struct plot_series *ps = xcalloc(n, sizeof(*ps));
	double **x = xcalloc(n, sizeof(*x));
	struct spec_diff d;
	size_t i, k;

	for (i = 0; i < n; i++) {
		specs[i] = r[i]->spec;
		ids[i] = r[i]->id;
	}
	specdiff_make(specs, ids, n, &d);
	for (i = 0; i < n; i++) {
		const struct series *s = series_set_find(&r[i]->curves, metric);
		if (fmt == FMT_CSV) {
			for (k = 0; k < s->n; k++) {
				csv_field(r[i]->id);
				putchar(',');
				csv_field(d.label[i]);
				putchar(',');
				csv_field(s->name);
				printf(",%d,", s->epoch[k]);
				csv_value(s->value[k]);
				putchar('\n');
			}
		} else if (fmt == FMT_JSON) {
			cJSON *job = cJSON_CreateObject(), *diff, *list;
			cJSON_AddStringToObject(job, "job", r[i]->id);
			if (r[i]->name != NULL)
				cJSON_AddStringToObject(job, "name", r[i]->name);
			else
				cJSON_AddNullToObject(job, "name");
			cJSON_AddStringToObject(job, "state", tao_state_name(r[i]->state));
			cJSON_AddStringToObject(job, "label", d.label[i]);
			diff = cJSON_AddObjectToObject(job, "differs");
			for (k = 0; k < d.nkeys; k++)
				if (d.val[i][k] != NULL)
					cJSON_AddStringToObject(diff, d.key[k], d.val[i][k]);
				else
					cJSON_AddNullToObject(diff, d.key[k]);
			list = cJSON_AddArrayToObject(job, "series");
			cJSON_AddItemToArray(list, json_series(s));
			cJSON_AddItemToArray(out, job);
		} else {
			long last, best;
			if (i == 0)
				printf("%s: %zu runs compared\n", show_tty(1, metric), n);
			series_last_best(s, &last, &best);
			printf("  %c %s  %s", PLOT_MARKS[i], show_tty(1, d.label[i]),
			    show_tty(1, r[i]->id));
			if (last >= 0)
				printf("  last %.6g at epoch %d", s->value[last], s->epoch[last]);
			if (best >= 0)
				printf(", best %.6g at epoch %d", s->value[best], s->epoch[best]);
			printf("\n");
			x[i] = xcalloc(s->n ? s->n : 1, sizeof(*x[i]));
			for (k = 0; k < s->n; k++)
				x[i][k] = s->epoch[k];
			ps[i] = (struct plot_series){ x[i], s->value, s->n };
		}
	}
	if (fmt == FMT_TEXT) {
		struct plot_opts o = { .width = width, .height = PLOT_ROWS, .utf8 = utf8,
			.x_label = "epoch", .marks = PLOT_MARKS };
		char *p = plot_render(ps, n, &o);
		fputs(p != NULL ? p : "  (no finite value to draw)\n", stdout);
		free(p);
	}
	for (i = 0; i < n; i++)
		free(x[i]);
	free(x), free(ps), free(specs), free(ids);
	specdiff_free(&d);
}

int cli_plot(const struct cli_args *a)
{
	struct record_store *st;
	char *err = NULL;
	const char *metric = cli_val(a, "metric");
	enum plot_format fmt = isatty(STDOUT_FILENO) ? FMT_TEXT : FMT_CSV;
	cJSON *out = cJSON_CreateArray();
	struct job_record **runs = xcalloc((size_t)a->npos + 1, sizeof(*runs));
	size_t nruns = 0, k;
	int i, failed = 0, utf8, comparing = metric != NULL && a->npos >= 2;

	/* Of two formats given, the later wins. */
	if (cli_at(a, "csv") > cli_at(a, "json") && cli_at(a, "csv") > cli_at(a, "text"))
		fmt = FMT_CSV;
	else if (cli_at(a, "json") > cli_at(a, "text"))
		fmt = FMT_JSON;
	else if (cli_at(a, "text") > 0)
		fmt = FMT_TEXT;
	setlocale(LC_CTYPE, "");
	utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	/* The records alone: no config is needed, no connection is made. */
	if ((st = store_open(NULL, &err)) == NULL) {
		cJSON_Delete(out);
		free(runs);
		return session_say(EXIT_FAILED, err);
	}
	if (comparing && a->npos > PLOT_MAX_SERIES) {
		cJSON_Delete(out);
		free(runs);
		store_close(st);
		fprintf(stderr, "taotop: at most %d runs compared on one plot; give fewer jobs\n",
		    PLOT_MAX_SERIES);
		return EXIT_USAGE;
	}
	if (fmt == FMT_CSV)
		printf(comparing ? "job,label,metric,epoch,value\n" : "job,metric,epoch,value\n");
	for (i = 0; i < a->npos; i++) {
		struct job_ref ref;
		if (job_ref_resolve(st, a->pos[i], &ref, &err) != 0) {
			session_say(0, err);
			failed++;
			continue;
		}
		if (ref.rec == NULL) {
			fprintf(stderr, "taotop: %s is not a job taotop submitted: only its records "
			    "keep metrics\n", show_err(a->pos[i]));
			failed++;
		} else if (comparing) {
			/* Each run must have the metric (said as a single job's
			 * plot says it); the plot comes once all are read. */
			if (series_set_find(&ref.rec->curves, metric) == NULL) {
				failed += plot_job(ref.rec, metric, FMT_CSV, utf8, 0, NULL);
			} else {
				runs[nruns++] = ref.rec;
				ref.rec = NULL;
			}
		} else {
			failed += plot_job(ref.rec, metric, fmt, utf8, terminal_width(), out);
		}
		job_ref_free(&ref);
	}
	if (comparing && failed == 0)
		compare(runs, nruns, metric, fmt, utf8, terminal_width(), out);
	for (k = 0; k < nruns; k++)
		record_free(runs[k]);
	free(runs);
	if (fmt == FMT_JSON) {
		char *text = cJSON_Print(out);
		printf("%s\n", text);
		free(text);
	}
	cJSON_Delete(out);
	store_close(st);
	return failed > 0 ? EXIT_FAILED : EXIT_OK;
}

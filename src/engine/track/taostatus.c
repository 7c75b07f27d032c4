#include "engine/track/taostatus.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/slurm/duration.h"
#include "util/buf.h"
#include "util/xmalloc.h"

/* A line longer than this is no line of TAO's: counted bad, not parsed. */
#define LINE_MAX_BYTES	(1u << 20)

void tao_status_init(struct tao_status *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->epoch = ts->max_epoch = ts->raw_epoch = ts->raw_max = -1;
	ts->eta_s = -1;
}

void tao_status_set_task(struct tao_status *ts, const char *action)
{
	const char *task = action != NULL ? tao_status_deploy_task(action) : NULL;

	snprintf(ts->task[0], sizeof(ts->task[0]), "%s", action != NULL ? action : "");
	/* TAO Deploy's folder is renamed; its words may be either name. */
	snprintf(ts->task[1], sizeof(ts->task[1]), "%s", task != NULL ? task : "");
}

static void free_lines(struct tao_status *ts)
{
	free(ts->message);
	free(ts->series);
	free(ts->series_epoch);
	series_set_free(&ts->curves);
	free(ts->verdict_line);
	free(ts->partial);
}

void tao_status_reset(struct tao_status *ts)
{
	char task[2][32];
	int only = ts->success_only;

	memcpy(task, ts->task, sizeof(task));
	free_lines(ts);
	tao_status_init(ts);
	memcpy(ts->task, task, sizeof(task));
	ts->success_only = only;
}

void tao_status_free(struct tao_status *ts)
{
	free_lines(ts);
	tao_status_init(ts);
}

/* ---- Python's str(timedelta) -------------------------------------------------------- */

/* n digits (1 or 2) at *p, moved past them; -1 if none. */
static long two_digits(const char **p)
{
	long v = 0;
	int n = 0;

	while (n < 2 && isdigit((unsigned char)**p)) {
		v = v * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n > 0 ? v : -1;
}

int tao_status_timedelta_parse(const char *s, double *secs)
{
	const char *p = s;
	char *end;
	long days = 0, h, m, sec;
	double frac = 0;

	while (*p == ' ')
		p++;
	if (strstr(p, "day") != NULL) {
		days = strtol(p, &end, 10);
		if (end == p || *end != ' ' || days < -999999999L || days > 999999999L)
			return -1;
		p = end + 1;
		if (strncmp(p, "days", 4) == 0)
			p += 4;
		else if (strncmp(p, "day", 3) == 0)
			p += 3;
		else
			return -1;
		if (*p++ != ',')
			return -1;
		while (*p == ' ')
			p++;
	}
	if (!isdigit((unsigned char)*p))
		return -1;
	h = strtol(p, &end, 10);
	if (*end != ':' || h > 999999999L)
		return -1;
	p = end + 1;
	if ((m = two_digits(&p)) < 0 || m > 59 || *p++ != ':' || (sec = two_digits(&p)) < 0 ||
	    sec > 59)
		return -1;
	if (*p == '.') {
		double scale = 0.1;
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p)) {
			frac += (*p++ - '0') * scale;
			scale /= 10;
		}
	}
	while (*p == ' ')
		p++;
	if (*p != '\0')
		return -1;
	*secs = (double)days * 86400 + (double)h * 3600 + (double)m * 60 + (double)sec + frac;
	return 0;
}

/* ---- where the file is ----------------------------------------------------------------- */

const char *tao_status_deploy_task(const char *action)
{
	if (strcmp(action, "evaluate") == 0)
		return "trt_evaluate";
	if (strcmp(action, "inference") == 0)
		return "trt_inference";
	return action;
}

int tao_status_image_is_deploy(const char *image)
{
	const char *p;

	for (p = image; p != NULL && *p != '\0'; p++)
		if (strncasecmp(p, "deploy", 6) == 0)
			return 1;
	return 0;
}

static void add_place(char ***v, size_t *n, char *path)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if (strcmp((*v)[i], path) == 0) {
			free(path);
			return;
		}
	}
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = path;
}

char **tao_status_places(const char *results_dir, const char *action, const char *image,
    const char *spec_dir, size_t *n)
{
	char **v = NULL;
	const char *deploy = action != NULL ? tao_status_deploy_task(action) : NULL;
	int is_deploy = tao_status_image_is_deploy(image);

	*n = 0;
	if (spec_dir != NULL && spec_dir[0] == '/')
		add_place(&v, n, xasprintf("%s/status.json", spec_dir));
	if (results_dir == NULL)
		return v;
	if (action != NULL && action[0] != '\0') {
		add_place(&v, n, xasprintf("%s/%s/status.json", results_dir,
		    is_deploy ? deploy : action));
		add_place(&v, n, xasprintf("%s/%s/status.json", results_dir,
		    is_deploy ? action : deploy));
	}
	add_place(&v, n, xasprintf("%s/status.json", results_dir));
	return v;
}

/* ---- the lines ----------------------------------------------------------------------- */

/*
 * json.dumps's NaN, Infinity and -Infinity, which JSON (and cJSON) refuse,
 * outside strings made strings cJSON takes, marked by a leading \u0001
 * (no line of TAO's holds that character). NULL when the line has none.
 */
static char *nonfinite_to_strings(const char *line, size_t len, size_t *outlen)
{
	static const struct { const char *word, *as; } words[] = {
		{ "-Infinity", "\"\\u0001-inf\"" },
		{ "Infinity", "\"\\u0001inf\"" },
		{ "NaN", "\"\\u0001nan\"" },
	};
	struct buf b;
	size_t i, w, from = 0;
	int in_str = 0, any = 0;

	buf_init(&b);
	for (i = 0; i < len; i++) {
		char ch = line[i];
		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"') {
			in_str = 1;
			continue;
		}
		for (w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
			size_t wl = strlen(words[w].word);
			if (i + wl <= len && memcmp(line + i, words[w].word, wl) == 0) {
				buf_add(&b, line + from, i - from);
				buf_adds(&b, words[w].as);
				i += wl - 1;
				from = i + 1;
				any = 1;
				break;
			}
		}
	}
	if (!any) {
		buf_free(&b);
		return NULL;
	}
	buf_add(&b, line + from, len - from);
	*outlen = b.len;
	return buf_detach(&b);
}

/* A number, one of the marked non-finite values, or a string that is a
 * whole number (the TF era and DINO write kpi values as text): 1 with *d. */
static int number_of(const cJSON *v, double *d)
{
	char *end;

	if (cJSON_IsNumber(v)) {
		*d = v->valuedouble;
		return 1;
	}
	if (cJSON_IsString(v) && v->valuestring[0] != '\001' && v->valuestring[0] != '\0' &&
	    !isspace((unsigned char)v->valuestring[0])) {
		*d = strtod(v->valuestring, &end);
		return *end == '\0';
	}
	if (cJSON_IsString(v) && v->valuestring[0] == '\001') {
		const char *w = v->valuestring + 1;
		if (strcmp(w, "nan") == 0)
			*d = NAN;
		else if (strcmp(w, "inf") == 0)
			*d = INFINITY;
		else if (strcmp(w, "-inf") == 0)
			*d = -INFINITY;
		else
			return 0;
		return 1;
	}
	return 0;
}

static void add_point(struct tao_status *ts, int epoch, double value)
{
	if (ts->nseries > 0 && ts->series_epoch[ts->nseries - 1] == epoch) {
		ts->series[ts->nseries - 1] = value;
		return;
	}
	ts->series = xreallocarray(ts->series, ts->nseries + 1, sizeof(*ts->series));
	ts->series_epoch = xreallocarray(ts->series_epoch, ts->nseries + 1, sizeof(*ts->series_epoch));
	ts->series[ts->nseries] = value;
	ts->series_epoch[ts->nseries++] = epoch;
}

/* How much a KPI is wanted for the series: "loss", then TAO PyTorch's
 * "train_loss", then any number (the first seen). */
static int metric_rank(const char *name)
{
	return strcmp(name, "loss") == 0 ? 0 : strcmp(name, "train_loss") == 0 ? 1 : 2;
}

/* The kpi of a line, to the epoch it is of: the last epoch line's (TAO
 * writes "Train metrics generated." after the epoch's line, without one). */
static void feed_kpi(struct tao_status *ts, const cJSON *kpi, int raw_epoch)
{
	const cJSON *v, *best = NULL;
	double d;

	if (raw_epoch < 0)
		return;
	cJSON_ArrayForEach(v, kpi) {
		if (v->string != NULL && strlen(v->string) < sizeof(ts->metric) && number_of(v, &d) &&
		    (best == NULL || metric_rank(v->string) < metric_rank(best->string)))
			best = v;
	}
	if (best != NULL && (ts->metric[0] == '\0' ||
	    metric_rank(best->string) < metric_rank(ts->metric))) {
		/* A better one came: the series starts over with it. */
		snprintf(ts->metric, sizeof(ts->metric), "%s", best->string);
		ts->nseries = 0;
	}
	v = cJSON_GetObjectItemCaseSensitive(kpi, ts->metric);
	if (ts->metric[0] != '\0' && number_of(v, &d))
		add_point(ts, raw_epoch, d);
}

/* Every number of a kpi or graphical object into the curves, at the
 * epoch as the user counts it. */
static void feed_curves(struct tao_status *ts, const cJSON *obj, int raw_epoch, int pinned)
{
	const cJSON *v;
	double d;

	if (raw_epoch < 0 || !cJSON_IsObject(obj))
		return;
	cJSON_ArrayForEach(v, obj)
		if (v->string != NULL && number_of(v, &d))
			series_set_add(&ts->curves, v->string, raw_epoch + ts->zero_based, d, pinned);
}

/* "Train finished successfully.": the action's, or any one word's when
 * no action is set. */
static int success_words(const struct tao_status *ts, const char *m)
{
	static const char tail[] = " finished successfully.";
	size_t ml = strlen(m), tl = sizeof(tail) - 1, i;

	if (ml <= tl || strcmp(m + ml - tl, tail) != 0)
		return 0;
	if (ts->task[0][0] == '\0')
		return memchr(m, ' ', ml - tl) == NULL;
	for (i = 0; i < 2; i++)
		if (ts->task[i][0] != '\0' && strlen(ts->task[i]) == ml - tl &&
		    strncasecmp(m, ts->task[i], ml - tl) == 0)
			return 1;
	return 0;
}

static void set_verdict(struct tao_status *ts, enum tao_verdict v, const char *line)
{
	ts->verdict = v;
	free(ts->verdict_line);
	ts->verdict_line = line != NULL ? xstrdup(line) : NULL;
}

/* Which line decides (taostatus.h): this one's status and message. */
static void judge_line(struct tao_status *ts, const char *status, const char *message)
{
	if (strcmp(status, "STARTED") == 0) {
		set_verdict(ts, TAO_VERDICT_NONE, NULL);
	} else if (strcmp(status, "SUCCESS") == 0 ||
	    (strcmp(status, "SKIPPED") == 0 && !ts->success_only)) {
		char *w = message != NULL ? xasprintf("%s: %s", status, message) : xstrdup(status);
		set_verdict(ts, TAO_VERDICT_SUCCESS, w);
		free(w);
	} else if (strcmp(status, "FAILURE") == 0) {
		set_verdict(ts, TAO_VERDICT_FAILURE, message);
	} else if (strcmp(status, "RUNNING") == 0 && message != NULL && !ts->success_only &&
	    success_words(ts, message)) {
		set_verdict(ts, TAO_VERDICT_SUCCESS, message);
	} else if (ts->verdict == TAO_VERDICT_FAILURE) {
		set_verdict(ts, TAO_VERDICT_NONE, NULL);
	}
}

/* "date" M/D/YYYY and "time" H:M:S, unpadded, local time. */
static void feed_when(struct tao_status *ts, const cJSON *date, const cJSON *tod)
{
	struct tm tm;
	int mo, d, y, h, mi, s;
	char c;

	if (!cJSON_IsString(date) || !cJSON_IsString(tod) ||
	    sscanf(date->valuestring, "%d/%d/%d%c", &mo, &d, &y, &c) != 3 ||
	    sscanf(tod->valuestring, "%d:%d:%d%c", &h, &mi, &s, &c) != 3 ||
	    mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970 || y > 9999 ||
	    h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60)
		return;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	tm.tm_isdst = -1;
	ts->at = mktime(&tm);
}

static void feed_eta(struct tao_status *ts, const cJSON *v)
{
	double secs;

	if (cJSON_IsString(v)) {
		if (tao_status_timedelta_parse(v->valuestring, &secs) != 0)
			return;
	} else if (cJSON_IsNumber(v)) {
		secs = v->valuedouble;
	} else {
		return;
	}
	if (!(secs >= 0))
		secs = 0;	/* a negative timedelta: done */
	if (secs > 1e9)
		secs = 1e9;
	ts->eta_s = (long)(secs + 0.5);
	duration_format(ts->eta_s, ts->eta, sizeof(ts->eta));
}

/* An int field within range, or -1. */
static int int_of(const cJSON *v)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1e9))
		return -1;
	return (int)v->valuedouble;
}

static void feed_line(struct tao_status *ts, const char *line, size_t len)
{
	cJSON *o, *v;
	char *fixed;
	size_t flen = 0;
	int epoch, max;

	ts->lines++;
	if (len > LINE_MAX_BYTES) {
		ts->bad_lines++;
		return;
	}
	fixed = nonfinite_to_strings(line, len, &flen);
	o = fixed != NULL ? cJSON_ParseWithLength(fixed, flen) : cJSON_ParseWithLength(line, len);
	free(fixed);
	if (!cJSON_IsObject(o)) {
		ts->bad_lines++;
		cJSON_Delete(o);
		return;
	}
	feed_when(ts, cJSON_GetObjectItemCaseSensitive(o, "date"),
	    cJSON_GetObjectItemCaseSensitive(o, "time"));
	v = cJSON_GetObjectItemCaseSensitive(o, "message");
	if (cJSON_IsString(v)) {
		free(ts->message);
		ts->message = xstrdup(v->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "status");
	if (cJSON_IsString(v)) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
		snprintf(ts->status, sizeof(ts->status), "%s", v->valuestring);
		judge_line(ts, v->valuestring, cJSON_IsString(m) ? m->valuestring : NULL);
	}
	epoch = int_of(cJSON_GetObjectItemCaseSensitive(o, "epoch"));
	max = int_of(cJSON_GetObjectItemCaseSensitive(o, "max_epoch"));
	if (epoch == 0)
		ts->zero_based = 1;
	if (epoch >= 0)
		ts->raw_epoch = epoch;
	if (max >= 0)
		ts->raw_max = max;
	if ((epoch >= 0 && epoch == max) || cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o,
	    "max_step")))
		ts->max_is_last = 1;
	/* As the user counts (taostatus.h): N of N at the end either way. */
	if (ts->raw_epoch >= 0)
		ts->epoch = ts->raw_epoch + ts->zero_based;
	if (ts->raw_max >= 0)
		ts->max_epoch = ts->raw_max + (ts->zero_based && ts->max_is_last);
	feed_eta(ts, cJSON_GetObjectItemCaseSensitive(o, "eta"));
	v = cJSON_GetObjectItemCaseSensitive(o, "kpi");
	if (cJSON_IsObject(v))
		feed_kpi(ts, v, ts->raw_epoch);
	/* A line with its own epoch pins its values to it (series.h). */
	feed_curves(ts, v, ts->raw_epoch, epoch >= 0);
	feed_curves(ts, cJSON_GetObjectItemCaseSensitive(o, "graphical"), ts->raw_epoch, epoch >= 0);
	cJSON_Delete(o);
}

void tao_status_feed(struct tao_status *ts, const char *text, size_t len)
{
	size_t start = 0, i;

	for (i = 0; i < len; i++) {
		if (text[i] != '\n')
			continue;
		if (ts->npartial > 0) {
			/* The line begun by an earlier feed ends here. */
			if (ts->npartial + i <= LINE_MAX_BYTES) {
				ts->partial = xrealloc(ts->partial, ts->npartial + i + 1);
				memcpy(ts->partial + ts->npartial, text, i);
				feed_line(ts, ts->partial, ts->npartial + i);
			} else {
				ts->lines++;
				ts->bad_lines++;
			}
			free(ts->partial);
			ts->partial = NULL;
			ts->npartial = 0;
		} else if (i > start) {
			feed_line(ts, text + start, i - start);
		}
		start = i + 1;
	}
	if (start < len) {
		/* Kept up to the longest line; past it only the count grows. */
		size_t keep = len - start, room = ts->npartial <= LINE_MAX_BYTES
		    ? LINE_MAX_BYTES + 1 - ts->npartial : 0;
		if (keep > room)
			keep = room;
		if (keep > 0) {
			ts->partial = xrealloc(ts->partial, ts->npartial + keep + 1);
			memcpy(ts->partial + ts->npartial, text + start, keep);
		}
		ts->npartial += len - start;
	}
}

int tao_status_judge(const struct tao_status *ts, enum tao_state *to, char **message)
{
	const char *line = ts->verdict_line;

	switch (ts->verdict) {
	case TAO_VERDICT_SUCCESS:
		*to = TAO_DONE;
		*message = xasprintf("status.json: %s", line != NULL ? line : "SUCCESS");
		return 1;
	case TAO_VERDICT_FAILURE:
		*to = TAO_ERROR;
		*message = xasprintf("status.json: FAILURE%s%s", line != NULL ? ": " : "",
		    line != NULL ? line : "");
		return 1;
	case TAO_VERDICT_NONE:
		break;
	}
	return 0;
}

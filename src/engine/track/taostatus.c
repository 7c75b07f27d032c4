#include "engine/track/taostatus.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

void tao_status_init(struct tao_status *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->epoch = ts->max_epoch = -1;
}

void tao_status_free(struct tao_status *ts)
{
	free(ts->message);
	free(ts->kpi);
	free(ts->series);
	free(ts->series_epoch);
	tao_status_init(ts);
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

static void feed_kpi(struct tao_status *ts, const cJSON *kpi)
{
	const cJSON *v;
	char *text = cJSON_PrintUnformatted(kpi);

	free(ts->kpi);
	ts->kpi = text != NULL ? xstrdup(text) : NULL;
	cJSON_free(text);
	if (ts->metric[0] == '\0') {
		/* Choose once: loss if there, else the first number. */
		v = cJSON_GetObjectItemCaseSensitive(kpi, "loss");
		if (cJSON_IsNumber(v)) {
			snprintf(ts->metric, sizeof(ts->metric), "loss");
		} else {
			cJSON_ArrayForEach(v, kpi) {
				if (cJSON_IsNumber(v) && v->string != NULL) {
					snprintf(ts->metric, sizeof(ts->metric), "%s", v->string);
					break;
				}
			}
		}
	}
	v = cJSON_GetObjectItemCaseSensitive(kpi, ts->metric);
	if (ts->metric[0] != '\0' && cJSON_IsNumber(v) && ts->epoch >= 0)
		add_point(ts, ts->epoch, v->valuedouble);
}

static void feed_line(struct tao_status *ts, const char *line, size_t len)
{
	cJSON *o = cJSON_ParseWithLength(line, len), *v;

	ts->lines++;
	if (!cJSON_IsObject(o)) {
		ts->bad_lines++;
		cJSON_Delete(o);
		return;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "status");
	if (cJSON_IsString(v))
		snprintf(ts->status, sizeof(ts->status), "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "message");
	if (cJSON_IsString(v)) {
		free(ts->message);
		ts->message = xstrdup(v->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "epoch");
	if (cJSON_IsNumber(v))
		ts->epoch = v->valueint;
	v = cJSON_GetObjectItemCaseSensitive(o, "max_epoch");
	if (cJSON_IsNumber(v))
		ts->max_epoch = v->valueint;
	v = cJSON_GetObjectItemCaseSensitive(o, "eta");
	if (cJSON_IsString(v))
		snprintf(ts->eta, sizeof(ts->eta), "%s", v->valuestring);
	else if (cJSON_IsNumber(v))
		snprintf(ts->eta, sizeof(ts->eta), "%.0fs", v->valuedouble);
	v = cJSON_GetObjectItemCaseSensitive(o, "kpi");
	if (cJSON_IsObject(v))
		feed_kpi(ts, v);
	cJSON_Delete(o);
}

void tao_status_feed(struct tao_status *ts, const char *text, size_t len)
{
	size_t start = 0, i;

	for (i = 0; i < len; i++) {
		if (text[i] != '\n')
			continue;
		if (i > start)
			feed_line(ts, text + start, i - start);
		start = i + 1;
	}
}

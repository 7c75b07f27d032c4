#include "engine/taostatus.h"

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
	ts->message = NULL;
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

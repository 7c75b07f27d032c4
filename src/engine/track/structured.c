#include "engine/track/structured.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "util/xmalloc.h"

/* len bytes at text as one JSON value with nothing but white space after
 * it, or NULL. */
static cJSON *parse_whole(const char *text, size_t len)
{
	const char *end = NULL;
	cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);

	while (doc != NULL && end != NULL && end < text + len && isspace((unsigned char)*end))
		end++;
	if (doc != NULL && end != text + len) {
		cJSON_Delete(doc);
		doc = NULL;
	}
	return doc;
}

/* A line cJSON refuses only for Python's bare NaN or Infinity in a kpi
 * (json.dumps writes them: taostatus.h): its "status": "WORD" read as
 * text, upper case. 1 when found. */
static int status_word(const char *line, size_t len, char *out, size_t size)
{
	const char *end = line + len, *p = line, *q;
	size_t i;

	if (len == 0 || line[0] != '{')
		return 0;
	for (q = p; q + 8 <= end; q++) {
		if (memcmp(q, "\"status\"", 8) != 0)
			continue;
		p = q + 8;
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p >= end || *p != ':')
			continue;
		for (p++; p < end && isspace((unsigned char)*p); p++)
			;
		if (p >= end || *p != '"')
			continue;
		/* The first "status" key: a record's own (TAO writes it first). */
		for (i = 0, p++; p < end && *p != '"' && *p != '\\' && i + 1 < size; p++, i++)
			out[i] = (char)toupper((unsigned char)*p);
		out[i] = '\0';
		return p < end && *p == '"' && i > 0;
	}
	return 0;
}

/* The record a parsed whole file ends with, or NULL. */
static const cJSON *last_of(const cJSON *doc)
{
	const cJSON *records = doc;

	if (cJSON_IsObject(doc)) {
		records = cJSON_GetObjectItemCaseSensitive(doc, "records");
		if (!cJSON_IsArray(records))
			return doc;
	}
	if (!cJSON_IsArray(records) || cJSON_GetArraySize(records) == 0)
		return NULL;
	return cJSON_GetArrayItem(records, cJSON_GetArraySize(records) - 1);
}

static int state_of(const cJSON *rec, char *out, size_t size, char **why)
{
	const cJSON *st = cJSON_IsObject(rec) ? cJSON_GetObjectItemCaseSensitive(rec, "status")
	    : NULL;
	size_t i;

	if (!cJSON_IsString(st) || st->valuestring[0] == '\0') {
		*why = xstrdup("its last record has no \"status\"");
		return -1;
	}
	for (i = 0; i + 1 < size && st->valuestring[i] != '\0'; i++)
		out[i] = (char)toupper((unsigned char)st->valuestring[i]);
	out[i] = '\0';
	return 0;
}

int structured_last_state(const char *text, size_t len, char *out, size_t size, char **why)
{
	/* The whole text one value: a first record followed by more lines
	 * is the one-a-line form. */
	cJSON *doc = parse_whole(text, len);
	const char *p, *end = text + len, *last = NULL, *last_end = NULL;
	int rc;

	*why = NULL;
	if (doc != NULL) {
		const cJSON *rec = last_of(doc);
		rc = rec != NULL ? state_of(rec, out, size, why) : -1;
		if (rec == NULL)
			*why = xstrdup("it holds no record");
		cJSON_Delete(doc);
		return rc;
	}
	/* One record a line: the last line that is not blank. */
	for (p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *q;
		for (q = p; q < e && isspace((unsigned char)*q); q++)
			;
		if (q < e)
			last = p, last_end = e;
		p = nl ? nl + 1 : end;
	}
	if (last == NULL) {
		*why = xstrdup("it is empty");
		return -1;
	}
	doc = parse_whole(last, (size_t)(last_end - last));
	if (doc == NULL && status_word(last, (size_t)(last_end - last), out, size))
		return 0;
	if (doc == NULL) {
		*why = xstrdup("it is neither JSON nor one JSON record a line");
		return -1;
	}
	rc = state_of(doc, out, size, why);
	cJSON_Delete(doc);
	return rc;
}

int structured_state_in(const char *state, const char *states)
{
	size_t n = strlen(state);
	const char *p = states;

	while (p != NULL && *p != '\0') {
		size_t k = strcspn(p, "\n");
		if (k == n && strncasecmp(p, state, n) == 0)
			return 1;
		p += k + (p[k] == '\n');
	}
	return 0;
}

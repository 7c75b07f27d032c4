#include "engine/track/segments.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/logs/logpath.h"
#include "engine/store/record.h"
#include "engine/submit/probe.h"
#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

#define TEXT_MAX	1024	/* a path or a message, as kept */

char *segments_path(const struct job_record *r)
{
	return job_log_file(r, "segments.jsonl");
}

/* A string member of o, sanitised for one line and cut; NULL when absent
 * or empty. */
static char *text_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	struct buf b;
	size_t n;

	if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
		return NULL;
	n = strnlen(v->valuestring, TEXT_MAX);
	buf_init(&b);
	sanitize_append_line(&b, v->valuestring, n);
	return buf_detach(&b);
}

static int set_if_new(char **field, char *value)
{
	if (value == NULL || (*field != NULL && strcmp(*field, value) == 0)) {
		free(value);
		return 0;
	}
	free(*field);
	*field = value;
	return 1;
}

static const char *const outcomes[] = { "done", "failed", "signalled", "requeued", "timeout",
	"no_progress", "limit", "refused" };

/* One line into r: 1 when it changed something. */
static int merge_line(struct job_record *r, const char *line, size_t len, int epoch,
    struct buf *told)
{
	char *copy = xstrndup(line, len);
	cJSON *o = cJSON_Parse(copy);
	const cJSON *ev, *n, *at, *oc;
	struct record_segment *s, *prev;
	int changed = 0;
	size_t i;

	free(copy);
	ev = cJSON_GetObjectItemCaseSensitive(o, "event");
	n = cJSON_GetObjectItemCaseSensitive(o, "segment");
	at = cJSON_GetObjectItemCaseSensitive(o, "at");
	if (!cJSON_IsString(ev) || !cJSON_IsNumber(n) || n->valuedouble < 1 ||
	    n->valuedouble > 100000 || !cJSON_IsNumber(at) || at->valuedouble < 0) {
		cJSON_Delete(o);
		return 0;
	}
	oc = cJSON_GetObjectItemCaseSensitive(o, "outcome");
	for (i = 0; cJSON_IsString(oc) && i < sizeof(outcomes) / sizeof(outcomes[0]); i++)
		if (strcmp(oc->valuestring, outcomes[i]) == 0)
			break;
	if ((strcmp(ev->valuestring, "end") == 0 &&
	    (!cJSON_IsString(oc) || i == sizeof(outcomes) / sizeof(outcomes[0]))) ||
	    (strcmp(ev->valuestring, "end") != 0 && strcmp(ev->valuestring, "start") != 0)) {
		cJSON_Delete(o);
		return 0;	/* no segment made of a line that says nothing */
	}
	s = record_segment_at(r, n->valueint);
	prev = s > r->seg ? s - 1 : NULL;
	if (strcmp(ev->valuestring, "start") == 0) {
		if (s->start != (time_t)at->valuedouble) {
			s->start = (time_t)at->valuedouble;
			changed = 1;
			if (prev != NULL && prev->epoch_end >= 0)
				s->epoch_start = prev->epoch_end;
		}
		if (set_if_new(&s->resumed_from, text_of(o, "checkpoint")))
			changed = 1;
		if (changed && s->n > 1)
			buf_addf(told, "%ssegment %d started%s%s", told->len ? "; " : "", s->n,
			    s->resumed_from ? ", resuming from " : "",
			    s->resumed_from ? s->resumed_from : "");
	} else {
		/* A later end line of one segment wins (a refused requeue
		 * follows its "requeued"). */
		if (strcmp(s->outcome, outcomes[i]) != 0 || s->end != (time_t)at->valuedouble) {
			snprintf(s->outcome, sizeof(s->outcome), "%s", outcomes[i]);
			s->end = (time_t)at->valuedouble;
			if (epoch >= 0)
				s->epoch_end = epoch;
			changed = 1;
			set_if_new(&s->checkpoint, text_of(o, "checkpoint"));
			set_if_new(&s->message, text_of(o, "message"));
			if (strcmp(outcomes[i], "requeued") == 0)
				buf_addf(told, "%ssegment %d reached its child timeout%s%s: requeued, "
				    "segment %d waits in the queue", told->len ? "; " : "", s->n,
				    s->checkpoint ? "; newest checkpoint " : "",
				    s->checkpoint ? s->checkpoint : "", s->n + 1);
			else if (s->message != NULL && strcmp(outcomes[i], "failed") != 0 &&
			    strcmp(outcomes[i], "signalled") != 0)
				buf_addf(told, "%s%s", told->len ? "; " : "", s->message);
		}
	}
	cJSON_Delete(o);
	return changed;
}

int segments_merge(struct job_record *r, const char *text, size_t len, int epoch, char **told)
{
	struct buf b;
	const char *p = text, *end = text + len, *nl;
	int changed = 0;

	*told = NULL;
	buf_init(&b);
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			break;	/* a line still being written */
		if (nl > p && merge_line(r, p, (size_t)(nl - p), epoch, &b))
			changed = 1;
		p = nl + 1;
	}
	if (b.len > 0)
		*told = buf_detach(&b);
	else
		buf_free(&b);
	return changed;
}

const struct record_segment *segments_last(const struct job_record *r)
{
	return r->nseg > 0 ? &r->seg[r->nseg - 1] : NULL;
}

const char *segments_stopped(const struct job_record *r)
{
	const struct record_segment *s = segments_last(r);
	static const char *const stops[] = { "timeout", "no_progress", "limit", "refused" };
	size_t i;

	for (i = 0; s != NULL && i < sizeof(stops) / sizeof(stops[0]); i++)
		if (strcmp(s->outcome, stops[i]) == 0)
			return s->message != NULL ? s->message : s->outcome;
	return NULL;
}

int segments_probe_answer(const char *text, size_t len, char **env, char **shape)
{
	const char *p = text, *end = text + len, *nl;
	int found = 0;

	*env = *shape = NULL;
	while (p < end) {
		cJSON *o;
		const cJSON *ev, *oc, *e, *sh;
		char *copy;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			break;	/* a line still being written */
		copy = xstrndup(p, (size_t)(nl - p));
		p = nl + 1;
		o = cJSON_Parse(copy);
		free(copy);
		ev = cJSON_GetObjectItemCaseSensitive(o, "event");
		oc = cJSON_GetObjectItemCaseSensitive(o, "outcome");
		e = cJSON_GetObjectItemCaseSensitive(o, "env");
		sh = cJSON_GetObjectItemCaseSensitive(o, "shape");
		if (cJSON_IsString(ev) && strcmp(ev->valuestring, PROBE_EVENT) == 0 &&
		    cJSON_IsString(oc) && strcmp(oc->valuestring, "passed") == 0 &&
		    cJSON_IsString(e) && strlen(e->valuestring) < TEXT_MAX &&
		    cJSON_IsString(sh) && strlen(sh->valuestring) < 32) {
			free(*env), free(*shape);
			*env = xstrdup(e->valuestring);
			*shape = xstrdup(sh->valuestring);
			found = 1;
		}
		cJSON_Delete(o);
	}
	return found;
}

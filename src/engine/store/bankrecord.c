#include "engine/store/bankrecord.h"

#include <cJSON.h>
#include <string.h>
#include <time.h>

#include "util/buf.h"
#include "util/xmalloc.h"

const char *bankrecord_state(enum tao_state st)
{
	switch (st) {
	case TAO_PENDING:	return "PENDING";
	case TAO_RUNNING:	return "RUNNING";
	case TAO_DONE:		return "COMPLETE";
	case TAO_ERROR:		return "ERROR";
	case TAO_CANCELED:	return "CANCELED";
	case TAO_UNKNOWN:	break;
	}
	return "UNKNOWN";
}

/* The bank's writer stamps datetime.isoformat(timespec="seconds") in UTC. */
static void add_ts(cJSON *o, const char *name, time_t t)
{
	char stamp[40];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S+00:00", &tm);
	cJSON_AddStringToObject(o, name, stamp);
}

static const char *bank_source(const char *source)
{
	return source != NULL && strcmp(source, "scheduler") == 0 ? "poller" : "agent";
}

static int same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static void add_string_or(cJSON *o, const char *name, const char *v, const char *dflt)
{
	cJSON_AddStringToObject(o, name, v != NULL && v[0] != '\0' ? v : dflt);
}

static void add_string_or_null(cJSON *o, const char *name, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

static void add_transition(cJSON *a, const struct transition *t)
{
	cJSON *e = cJSON_CreateObject();
	struct buf m;

	buf_init(&m);
	if (t->native != NULL && t->native[0] != '\0')
		buf_adds(&m, t->native);
	if (t->message != NULL && t->message[0] != '\0') {
		if (m.len > 0)
			buf_adds(&m, ": ");
		buf_adds(&m, t->message);
	}
	add_ts(e, "ts", t->at);
	cJSON_AddStringToObject(e, "state", bankrecord_state(t->to));
	cJSON_AddStringToObject(e, "message", m.data != NULL ? m.data : "");
	cJSON_AddStringToObject(e, "source", bank_source(t->source));
	cJSON_AddItemToArray(a, e);
	buf_free(&m);
}

/*
 * The bank's transitions are the state's moves (a native sub-state's too),
 * first the PENDING its open wrote, and none after the terminal one (its
 * writer refuses them): taotop's history lines of its own (events, the
 * same state and word as before) are left out, the first excepted.
 */
static void add_transitions(cJSON *o, const struct job_record *r, const char **write_by)
{
	cJSON *a = cJSON_AddArrayToObject(o, "transitions");
	const char *native = NULL;
	size_t i;

	*write_by = NULL;
	if (r->nhist == 0) {
		/* A record with no history (never written by a submit): its
		 * open, as the bank's writer makes it. */
		struct transition t = { r->created, TAO_PENDING, TAO_PENDING, NULL,
		    (char *)"record opened before launch", (char *)"taotop" };
		add_transition(a, &t);
	}
	for (i = 0; i < r->nhist; i++) {
		const struct transition *t = &r->hist[i];

		if (i > 0 && t->from == t->to && same(t->native, native))
			continue;
		if (i == 0 && t->to != TAO_PENDING) {
			struct transition open = { t->at, TAO_PENDING, TAO_PENDING, NULL,
			    (char *)"record opened before launch", (char *)"taotop" };
			add_transition(a, &open);
		}
		add_transition(a, t);
		native = t->native;
		if (tao_state_final(t->to)) {
			*write_by = bank_source(t->source);
			break;
		}
	}
}

cJSON *bankrecord_json(const struct job_record *r)
{
	cJSON *o = cJSON_CreateObject();
	const char *write_by;

	cJSON_AddNumberToObject(o, "schema_version", 1);
	cJSON_AddStringToObject(o, "id", r->id);
	add_string_or(o, "platform", r->platform, "slurm");
	add_string_or_null(o, "backend_ref", r->backend_ref);
	add_string_or(o, "image", r->image, "unknown");
	add_string_or(o, "network_arch", r->network_arch, "unknown");
	add_string_or(o, "action", r->action, "unknown");
	add_string_or(o, "results_dir", r->results_dir, "unknown");
	add_string_or(o, "storage_tier", r->storage_tier, "A");
	add_ts(o, "submitted_at", r->created);
	add_transitions(o, r, &write_by);
	if (tao_state_final(r->state)) {
		cJSON_AddStringToObject(o, "terminal_state", bankrecord_state(r->state));
		cJSON_AddStringToObject(o, "terminal_write_by", write_by != NULL ? write_by : "agent");
	} else {
		cJSON_AddNullToObject(o, "terminal_state");
		cJSON_AddNullToObject(o, "terminal_write_by");
	}
	add_string_or_null(o, "err_class", r->state == TAO_ERROR ? r->err_class : NULL);
	add_string_or_null(o, "retry_of", r->retry_of);
	cJSON_AddNullToObject(o, "parent_job");
	/* taotop's records never hold a secret (the names only): nothing to
	 * redact, as the bank's writer would state it. */
	cJSON_AddBoolToObject(o, "redacted", 1);
	return o;
}

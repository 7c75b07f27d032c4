/*
 * A copy of the skill bank's job-record schema, as checks (NVIDIA-TAO/
 * tao-skill-bank skills/core/tao-artifacts/references/job_record.schema.json,
 * written here from its text): its required fields, the only fields it
 * allows, their types, enums and patterns. validate() says through
 * Criterion what a JSON Schema validator would. Used by the unit test of
 * the form and by the integration test of `status --bank-record`.
 */
#ifndef TAOTOP_TESTS_BANK_RECORD_SCHEMA_H
#define TAOTOP_TESTS_BANK_RECORD_SCHEMA_H

#include <cJSON.h>
#include <criterion/criterion.h>
#include <regex.h>
#include <string.h>

static const char *const top_required[] = { "schema_version", "id", "platform", "backend_ref",
	"image", "network_arch", "action", "results_dir", "storage_tier", "submitted_at",
	"transitions", "terminal_state", "redacted" };
static const char *const top_allowed[] = { "schema_version", "id", "platform", "backend_ref",
	"image", "network_arch", "action", "results_dir", "storage_tier", "upload_excludes",
	"submitted_at", "transitions", "terminal_state", "terminal_write_by", "err_class",
	"retry_of", "parent_job", "redacted" };
static const char *const tr_fields[] = { "ts", "state", "message", "source" };
static const char *const states[] = { "PENDING", "RUNNING", "COMPLETE", "ERROR", "CANCELED",
	"UNKNOWN" };
static const char *const terminals[] = { "COMPLETE", "ERROR", "CANCELED" };
static const char *const sources[] = { "agent", "poller", "backend-hook" };
static const char *const tiers[] = { "A", "B", "C" };
static const char *const classes[] = { "ERR_INFRA", "ERR_PROGRAM" };

#define N(a)	(sizeof(a) / sizeof((a)[0]))

static int in(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return 1;
	return 0;
}

static int matches(const char *s, const char *re)
{
	regex_t r;
	int ok;

	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

static void nonempty_string(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	cr_expect(cJSON_IsString(v) && v->valuestring[0] != '\0', "%s: a non-empty string", name);
}

static void string_or_null(const cJSON *o, const char *name, const char *const *set, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (v == NULL || cJSON_IsNull(v))
		return;
	cr_expect(cJSON_IsString(v), "%s: a string or null", name);
	if (cJSON_IsString(v) && set != NULL)
		cr_expect(in(v->valuestring, set, n), "%s: %s is not in the schema's enum", name,
		    v->valuestring);
}

/* What a JSON Schema validator would say of o against the bank's schema:
 * nothing, or the first failure through cr_expect. */
static void validate(const cJSON *o)
{
	const cJSON *v, *t;
	size_t i;

	cr_assert(cJSON_IsObject(o));
	for (i = 0; i < N(top_required); i++)
		cr_expect_not_null(cJSON_GetObjectItemCaseSensitive(o, top_required[i]),
		    "required %s missing", top_required[i]);
	cJSON_ArrayForEach(v, o)
		cr_expect(in(v->string, top_allowed, N(top_allowed)),
		    "%s: additionalProperties is false", v->string);
	v = cJSON_GetObjectItemCaseSensitive(o, "schema_version");
	cr_expect(cJSON_IsNumber(v) && v->valuedouble == 1, "schema_version const 1");
	v = cJSON_GetObjectItemCaseSensitive(o, "id");
	cr_expect(cJSON_IsString(v) && matches(v->valuestring, "^[A-Za-z0-9][A-Za-z0-9._-]*$"));
	v = cJSON_GetObjectItemCaseSensitive(o, "platform");
	cr_expect(cJSON_IsString(v) && matches(v->valuestring, "^[a-z0-9][a-z0-9-]{0,31}$"));
	string_or_null(o, "backend_ref", NULL, 0);
	nonempty_string(o, "image");
	nonempty_string(o, "network_arch");
	nonempty_string(o, "action");
	nonempty_string(o, "results_dir");
	nonempty_string(o, "submitted_at");
	v = cJSON_GetObjectItemCaseSensitive(o, "storage_tier");
	cr_expect(cJSON_IsString(v) && in(v->valuestring, tiers, N(tiers)));
	string_or_null(o, "terminal_state", terminals, N(terminals));
	string_or_null(o, "terminal_write_by", sources, N(sources));
	string_or_null(o, "err_class", classes, N(classes));
	string_or_null(o, "retry_of", NULL, 0);
	string_or_null(o, "parent_job", NULL, 0);
	cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "redacted")), "redacted const true");
	v = cJSON_GetObjectItemCaseSensitive(o, "transitions");
	cr_assert(cJSON_IsArray(v) && cJSON_GetArraySize(v) >= 1, "transitions: minItems 1");
	cJSON_ArrayForEach(t, v) {
		const cJSON *f;
		cr_assert(cJSON_IsObject(t));
		for (i = 0; i < N(tr_fields); i++)
			cr_expect(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(t, tr_fields[i])),
			    "transition's %s: a string", tr_fields[i]);
		cJSON_ArrayForEach(f, t)
			cr_expect(in(f->string, tr_fields, N(tr_fields)), "transition's %s: not allowed",
			    f->string);
		cr_expect(in(cJSON_GetObjectItemCaseSensitive(t, "state")->valuestring, states,
		    N(states)));
		cr_expect(in(cJSON_GetObjectItemCaseSensitive(t, "source")->valuestring, sources,
		    N(sources)));
		cr_expect(cJSON_GetObjectItemCaseSensitive(t, "ts")->valuestring[0] != '\0');
	}
}

#endif

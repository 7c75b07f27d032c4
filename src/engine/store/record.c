#include "util/compat.h"
#include "engine/store/record.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/secrets.h"
#include "engine/slurm/slurm.h"
#include "util/buf.h"
#include "util/xmalloc.h"

/* ---- the record in memory ------------------------------------------------------ */

struct job_record *record_new(const char *id)
{
	struct job_record *r = xcalloc(1, sizeof(*r));

	r->id = xstrdup(id);
	r->platform = xstrdup("slurm");
	r->storage_tier = xstrdup("A");
	r->state = TAO_PENDING;
	r->created = r->updated = time(NULL);
	r->alloc.elapsed_s = r->alloc.limit_s = -1;
	return r;
}

void record_set(char **field, const char *value)
{
	/* Copy before freeing: value may be *field itself. */
	char *copy = value != NULL ? xstrdup(value) : NULL;

	free(*field);
	*field = copy;
}

static int same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

int record_transition(struct job_record *r, enum tao_state to, const char *native,
    const char *message, const char *source, time_t at)
{
	struct transition *t;

	if (r->state == to && same(r->native, native))
		return 0;
	/* The bank's rule (terminal_state never changes once set): whatever
	 * a late or stale answer says, the end a user was told stands. */
	if (tao_state_final(r->state) && to != r->state)
		return 0;
	r->hist = xreallocarray(r->hist, r->nhist + 1, sizeof(*r->hist));
	t = &r->hist[r->nhist++];
	t->at = at;
	t->from = r->state;
	t->to = to;
	t->native = native != NULL ? xstrdup(native) : NULL;
	t->message = message != NULL ? xstrdup(message) : NULL;
	t->source = xstrdup(source != NULL ? source : "taotop");
	r->state = to;
	record_set(&r->native, native);
	r->updated = at;
	return 1;
}

int record_set_err_class(struct job_record *r, const char *cls)
{
	if (r->err_class != NULL || cls == NULL ||
	    (strcmp(cls, RECORD_ERR_INFRA) != 0 && strcmp(cls, RECORD_ERR_PROGRAM) != 0))
		return 0;
	r->err_class = xstrdup(cls);
	return 1;
}

void record_event(struct job_record *r, const char *message, const char *source, time_t at)
{
	struct transition *t;

	r->hist = xreallocarray(r->hist, r->nhist + 1, sizeof(*r->hist));
	t = &r->hist[r->nhist++];
	t->at = at;
	t->from = t->to = r->state;
	t->native = r->native != NULL ? xstrdup(r->native) : NULL;
	t->message = message != NULL ? xstrdup(message) : NULL;
	t->source = xstrdup(source != NULL ? source : "taotop");
	r->updated = at;
}

void record_free(struct job_record *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nhist; i++) {
		free(r->hist[i].native);
		free(r->hist[i].message);
		free(r->hist[i].source);
	}
	free(r->hist);
	for (i = 0; i < r->nexclude; i++) {
		free(r->exclude[i].node);
		free(r->exclude[i].evidence);
		free(r->exclude[i].from);
	}
	free(r->exclude);
	free(r->id), free(r->platform), free(r->cluster), free(r->image);
	free(r->network_arch), free(r->action), free(r->storage_tier);
	free(r->results_dir), free(r->log_dir), free(r->backend_ref);
	free(r->retry_of), free(r->retried_as), free(r->secrets), free(r->native);
	free(r->err_class);
	record_set_progress(r, NULL);
	series_set_free(&r->curves);
	free(r->bundle), free(r->tao_results_dir), free(r->status_path);
	free(r->resume_dir), free(r->resume_checkpoint), free(r->spec);
	free(r->tao_final_message), free(r->name);
	free(r->done_status_path), free(r->success_states);
	free(r->cosmos), free(r->roles);
	for (i = 0; i < r->nseg; i++)
		free(r->seg[i].resumed_from), free(r->seg[i].checkpoint), free(r->seg[i].message);
	free(r->seg);
	free(r);
}

int record_requeued(const struct job_record *r)
{
	return r->nseg > 0 && strcmp(r->seg[r->nseg - 1].outcome, "requeued") == 0;
}

struct record_segment *record_segment_at(struct job_record *r, int n)
{
	size_t i;

	for (i = 0; i < r->nseg; i++)
		if (r->seg[i].n == n)
			return &r->seg[i];
	r->seg = xreallocarray(r->seg, r->nseg + 1, sizeof(*r->seg));
	/* In order of n: a line of a later segment may come first. */
	for (i = r->nseg; i > 0 && r->seg[i - 1].n > n; i--)
		r->seg[i] = r->seg[i - 1];
	memset(&r->seg[i], 0, sizeof(r->seg[i]));
	r->seg[i].n = n;
	r->seg[i].epoch_start = r->seg[i].epoch_end = -1;
	r->nseg++;
	return &r->seg[i];
}

/* ---- JSON ------------------------------------------------------------------------ */

/* The string fields, in the order they are written. */
#define STRING_FIELDS(X)						\
	X(id) X(platform) X(cluster) X(image) X(network_arch) X(action)	\
	X(storage_tier) X(results_dir) X(log_dir) X(backend_ref)	\
	X(retry_of) X(retried_as) X(secrets) X(bundle) X(tao_results_dir)	\
	X(status_path) X(name) X(resume_dir) X(resume_checkpoint) X(spec) X(err_class)	\
	X(done_status_path) X(success_states) X(cosmos) X(roles)

static void add_time(cJSON *o, const char *name, time_t t)
{
	char stamp[32];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cJSON_AddStringToObject(o, name, stamp);
}

/* Cosmos-RL's role names ("controller policy-0"): letters, digits and '-'
 * between single spaces; each names a log file. */
static int roles_ok(const char *v)
{
	size_t i, n = strlen(v);

	if (n == 0 || n > 4096 || v[0] == ' ' || v[n - 1] == ' ')
		return 0;
	for (i = 0; i < n; i++)
		if (!(isalnum((unsigned char)v[i]) || v[i] == '-' || (v[i] == ' ' && v[i + 1] != ' ')))
			return 0;
	return 1;
}

static int get_time(const cJSON *o, const char *name, time_t *t)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsString(v))
		return -1;
	return compat_parse_utc(v->valuestring, t);
}

static void add_opt_string(cJSON *o, const char *name, const char *value)
{
	if (value != NULL)
		cJSON_AddStringToObject(o, name, value);
	else
		cJSON_AddNullToObject(o, name);
}

void record_progress_json(cJSON *o, const struct record_progress *pr)
{
	cJSON *p = cJSON_AddObjectToObject(o, "progress");

	cJSON_AddNumberToObject(p, "epoch", pr->epoch);
	cJSON_AddNumberToObject(p, "max_epoch", pr->max_epoch);
	cJSON_AddStringToObject(p, "eta", pr->eta);
	if (pr->nseries > 0) {
		cJSON_AddStringToObject(p, "metric", pr->metric);
		cJSON_AddItemToObject(p, "series", cJSON_CreateDoubleArray(pr->series,
		    (int)pr->nseries));
	}
}

/* The "segments" list added to o, as records and `--json` write it. */
static void record_segments_json(cJSON *o, const struct record_segment *s, size_t n)
{
	cJSON *a = cJSON_AddArrayToObject(o, "segments");
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "segment", s[i].n);
		if (s[i].start != 0)
			add_time(e, "start", s[i].start);
		else
			cJSON_AddNullToObject(e, "start");
		if (s[i].end != 0)
			add_time(e, "end", s[i].end);
		else
			cJSON_AddNullToObject(e, "end");
		cJSON_AddStringToObject(e, "outcome", s[i].outcome);
		add_opt_string(e, "resumed_from", s[i].resumed_from);
		add_opt_string(e, "checkpoint", s[i].checkpoint);
		add_opt_string(e, "message", s[i].message);
		cJSON_AddNumberToObject(e, "epoch_start", s[i].epoch_start);
		cJSON_AddNumberToObject(e, "epoch_end", s[i].epoch_end);
		cJSON_AddItemToArray(a, e);
	}
}

/* The segments list, when there is one; a malformed entry is left out
 * (a display, not what the record stands for). */
static void get_segments(const cJSON *a, struct job_record *r)
{
	const cJSON *e, *v;

	if (!cJSON_IsArray(a))
		return;
	cJSON_ArrayForEach(e, a) {
		struct record_segment *s;
		v = cJSON_GetObjectItemCaseSensitive(e, "segment");
		if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 100000)
			continue;
		s = record_segment_at(r, v->valueint);
		if (get_time(e, "start", &s->start) != 0)
			s->start = 0;
		if (get_time(e, "end", &s->end) != 0)
			s->end = 0;
		if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(e, "outcome")))
			snprintf(s->outcome, sizeof(s->outcome), "%s", v->valuestring);
		if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(e, "resumed_from")))
			record_set(&s->resumed_from, v->valuestring);
		if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(e, "checkpoint")))
			record_set(&s->checkpoint, v->valuestring);
		if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(e, "message")))
			record_set(&s->message, v->valuestring);
		if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(e, "epoch_start")) &&
		    v->valuedouble >= -1 && v->valuedouble < 1e7)
			s->epoch_start = v->valueint;
		if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(e, "epoch_end")) &&
		    v->valuedouble >= -1 && v->valuedouble < 1e7)
			s->epoch_end = v->valueint;
	}
}

char *record_to_json(const struct job_record *r)
{
	cJSON *o = cJSON_CreateObject(), *hist;
	char *text, *out;
	size_t i;

#define ADD(f) add_opt_string(o, #f, r->f);
	STRING_FIELDS(ADD)
#undef ADD
	cJSON_AddStringToObject(o, "state", tao_state_name(r->state));
	add_opt_string(o, "native_state", r->native);
	add_time(o, "created", r->created);
	add_time(o, "updated", r->updated);
	if (r->progress != NULL)
		record_progress_json(o, r->progress);
	if (r->curves.n > 0)
		cJSON_AddItemToObject(o, "curves", series_set_to_json(&r->curves));
	if (r->tao_final != TAO_UNKNOWN) {
		cJSON *f = cJSON_AddObjectToObject(o, "tao_final");
		cJSON_AddStringToObject(f, "state", tao_state_name(r->tao_final));
		add_opt_string(f, "message", r->tao_final_message);
		add_time(f, "seen", r->tao_final_at);
	}
	if (r->has_alloc) {
		const struct record_alloc *al = &r->alloc;
		cJSON *a = cJSON_AddObjectToObject(o, "allocation");
		cJSON_AddStringToObject(a, "partition", al->partition);
		cJSON_AddNumberToObject(a, "nodes", al->nodes);
		cJSON_AddNumberToObject(a, "gpus", al->gpus);
		cJSON_AddNumberToObject(a, "elapsed_s", (double)al->elapsed_s);
		cJSON_AddNumberToObject(a, "time_limit_s", (double)al->limit_s);
		cJSON_AddStringToObject(a, "exit_code", al->exit_code);
	}
	if (r->samples.rounds > 0)
		card_samples_to_json(o, "gpu_samples", &r->samples);
	if (r->has_card)
		card_to_json(o, "efficiency", &r->card);
	if (r->nexclude > 0) {
		cJSON *ex = cJSON_AddArrayToObject(o, "exclude");
		for (i = 0; i < r->nexclude; i++) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "node", r->exclude[i].node);
			add_opt_string(e, "evidence", r->exclude[i].evidence);
			add_opt_string(e, "from", r->exclude[i].from);
			cJSON_AddItemToArray(ex, e);
		}
	}
	if (r->child_timeout_s > 0)
		cJSON_AddNumberToObject(o, "child_timeout_s", (double)r->child_timeout_s);
	if (r->nseg > 0)
		record_segments_json(o, r->seg, r->nseg);
	hist = cJSON_AddArrayToObject(o, "transitions");
	for (i = 0; i < r->nhist; i++) {
		const struct transition *t = &r->hist[i];
		cJSON *e = cJSON_CreateObject();
		add_time(e, "at", t->at);
		cJSON_AddStringToObject(e, "from", tao_state_name(t->from));
		cJSON_AddStringToObject(e, "to", tao_state_name(t->to));
		add_opt_string(e, "native", t->native);
		add_opt_string(e, "message", t->message);
		cJSON_AddStringToObject(e, "source", t->source);
		cJSON_AddItemToArray(hist, e);
	}
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (text == NULL)
		abort();	/* cJSON only fails when out of memory */
	out = xasprintf("%s\n", text);
	cJSON_free(text);
	return out;
}

static int get_string(const cJSON *o, const char *name, char **out, int required, char **err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (v == NULL || cJSON_IsNull(v)) {
		if (required) {
			free(*err);
			*err = xasprintf("field \"%s\" is missing", name);
			return -1;
		}
		return 0;
	}
	if (!cJSON_IsString(v)) {
		free(*err);
		*err = xasprintf("field \"%s\" is not a string", name);
		return -1;
	}
	record_set(out, v->valuestring);
	return 0;
}

static int get_state(const cJSON *o, const char *name, enum tao_state *st, char **err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsString(v) || tao_state_parse(v->valuestring, st) != 0) {
		free(*err);
		*err = xasprintf("field \"%s\" is not a TAO state", name);
		return -1;
	}
	return 0;
}

#define id_ok record_id_ok

/* A list of secret names as written: "A,B", each a variable name. */
static int names_ok(const char *names)
{
	char *copy = xstrdup(names), *name, *save = NULL;
	int ok = 1;

	for (name = strtok_r(copy, ",", &save); name != NULL && ok; name = strtok_r(NULL, ",", &save))
		ok = secrets_name_ok(name);
	free(copy);
	return ok;
}

/* A folder on the cluster: absolute, one line. */
static int remote_dir_ok(const char *dir)
{
	return dir[0] == '/' && strpbrk(dir, "\n\r") == NULL;
}

/*
 * The values that go into commands on the cluster, checked again as they
 * were when first written: a record is a file anyone with the user's
 * rights (or a shared folder's) may have edited, and a SLURM id reading
 * "--user=u" would make scancel cancel every job of u.
 */
static int check_values(const struct job_record *r, char **err)
{
	const char *bad = NULL;

	if (!id_ok(r->id))
		bad = "id";
	else if (r->backend_ref != NULL && !slurm_id_ok(r->backend_ref))
		bad = "backend_ref";
	else if (r->retry_of != NULL && !id_ok(r->retry_of))
		bad = "retry_of";
	else if (r->retried_as != NULL && !id_ok(r->retried_as))
		bad = "retried_as";
	else if (r->err_class != NULL && strcmp(r->err_class, RECORD_ERR_INFRA) != 0 &&
	    strcmp(r->err_class, RECORD_ERR_PROGRAM) != 0)
		bad = "err_class";
	else if (r->secrets != NULL && !names_ok(r->secrets))
		bad = "secrets";
	else if (r->log_dir != NULL && !remote_dir_ok(r->log_dir))
		bad = "log_dir";
	else if (r->results_dir != NULL && !remote_dir_ok(r->results_dir))
		bad = "results_dir";
	else if (r->tao_results_dir != NULL && !remote_dir_ok(r->tao_results_dir))
		bad = "tao_results_dir";
	else if (r->status_path != NULL && !remote_dir_ok(r->status_path))
		bad = "status_path";
	else if (r->done_status_path != NULL && !remote_dir_ok(r->done_status_path))
		bad = "done_status_path";
	else if (r->resume_dir != NULL && !remote_dir_ok(r->resume_dir))
		bad = "resume_dir";
	else if (r->resume_checkpoint != NULL && !remote_dir_ok(r->resume_checkpoint))
		bad = "resume_checkpoint";
	else if (r->cosmos != NULL && strcmp(r->cosmos, "rl") != 0 &&
	    strcmp(r->cosmos, "framework") != 0)
		bad = "cosmos";
	else if (r->roles != NULL && !roles_ok(r->roles))
		bad = "roles";
	if (bad == NULL)
		return 0;
	free(*err);
	*err = xasprintf("field \"%s\" is not a valid value: refused before any command is "
	    "built from it", bad);
	return -1;
}

void record_set_progress(struct job_record *r, const struct record_progress *p)
{
	if (r->progress != NULL)
		free(r->progress->series);
	free(r->progress);
	r->progress = NULL;
	if (p == NULL)
		return;
	r->progress = (void *)xmemdup(p, sizeof(*p));
	r->progress->series = p->nseries > 0 ? (void *)xmemdup(p->series, p->nseries * sizeof(*p->series))
	    : NULL;
}

void record_set_curves(struct job_record *r, const struct series_set *c)
{
	series_set_free(&r->curves);
	if (c != NULL)
		series_set_copy(&r->curves, c);
}

/* The progress object, when there is one; a malformed one is left out
 * (it is a display, not what the record stands for). */
static void get_progress(const cJSON *o, struct job_record *r)
{
	struct record_progress p = { .epoch = -1, .max_epoch = -1 };
	const cJSON *v;
	int n, i;

	if (!cJSON_IsObject(o))
		return;
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "epoch")))
		p.epoch = v->valueint;
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "max_epoch")))
		p.max_epoch = v->valueint;
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(o, "eta")))
		snprintf(p.eta, sizeof(p.eta), "%s", v->valuestring);
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(o, "metric")))
		snprintf(p.metric, sizeof(p.metric), "%s", v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "series");
	if (cJSON_IsArray(v) && (n = cJSON_GetArraySize(v)) > 0) {
		p.series = xcalloc((size_t)n, sizeof(*p.series));
		for (i = 0; i < n; i++) {
			const cJSON *e = cJSON_GetArrayItem(v, i);
			/* null: NaN or an infinity (JSON has neither): a gap */
			p.series[i] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
		}
		p.nseries = (size_t)n;
	}
	record_set_progress(r, &p);
	free(p.series);
}

/* TAO's final line seen while SLURM ran the job, when there is one. */
static int get_tao_final(const cJSON *o, struct job_record *r, char **err)
{
	if (o == NULL || cJSON_IsNull(o))
		return 0;
	if (!cJSON_IsObject(o) || get_state(o, "state", &r->tao_final, err) != 0 ||
	    get_string(o, "message", &r->tao_final_message, 0, err) != 0 ||
	    get_time(o, "seen", &r->tao_final_at) != 0) {
		free(*err);
		*err = xstrdup("field \"tao_final\" is not a state, message and UTC time");
		r->tao_final = TAO_UNKNOWN;
		return -1;
	}
	return 0;
}

/* The allocation object, when there is one; values out of range are left
 * unknown (a display, not what the record stands for). */
static void get_alloc(const cJSON *o, struct job_record *r)
{
	struct record_alloc *al = &r->alloc;
	const cJSON *v;

	al->elapsed_s = al->limit_s = -1;
	if (!cJSON_IsObject(o))
		return;
	r->has_alloc = 1;
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(o, "partition")))
		snprintf(al->partition, sizeof(al->partition), "%s", v->valuestring);
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "nodes")) &&
	    v->valuedouble >= 0 && v->valuedouble <= 1e6)
		al->nodes = v->valueint;
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "gpus")) &&
	    v->valuedouble >= 0 && v->valuedouble <= 1e6)
		al->gpus = v->valueint;
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "elapsed_s")) &&
	    v->valuedouble >= 0 && v->valuedouble < 1e10)
		al->elapsed_s = (long)v->valuedouble;
	if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(o, "time_limit_s")) &&
	    v->valuedouble >= 0 && v->valuedouble < 1e10)
		al->limit_s = (long)v->valuedouble;
	if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(o, "exit_code")))
		snprintf(al->exit_code, sizeof(al->exit_code), "%s", v->valuestring);
}

/* node (a SLURM name already) added to r's exclusions unless there. */
static int exclude_add(struct job_record *r, const char *node, const char *evidence,
    const char *from)
{
	size_t i;

	for (i = 0; i < r->nexclude; i++)
		if (strcmp(r->exclude[i].node, node) == 0)
			return 0;
	r->exclude = xreallocarray(r->exclude, r->nexclude + 1, sizeof(*r->exclude));
	r->exclude[r->nexclude].node = xstrdup(node);
	r->exclude[r->nexclude].evidence = evidence != NULL ? xstrdup(evidence) : NULL;
	r->exclude[r->nexclude].from = from != NULL ? xstrdup(from) : NULL;
	r->nexclude++;
	return 1;
}

int record_exclude(struct job_record *r, const char *node, const char *evidence,
    const char *from)
{
	return slurm_name_ok(node) ? exclude_add(r, node, evidence, from) : 0;
}

char *record_exclude_list(const struct job_record *r)
{
	size_t i, len = 0;
	char *s;

	if (r->nexclude == 0)
		return NULL;
	for (i = 0; i < r->nexclude; i++)
		len += strlen(r->exclude[i].node) + 1;
	s = xcalloc(1, len);
	for (i = 0; i < r->nexclude; i++) {
		if (i > 0)
			strcat(s, ",");
		strcat(s, r->exclude[i].node);
	}
	return s;
}

static int get_exclude(const cJSON *ex, struct job_record *r, char **err)
{
	const cJSON *e;

	if (ex == NULL)
		return 0;
	if (!cJSON_IsArray(ex)) {
		free(*err);
		*err = xstrdup("field \"exclude\" is not a list");
		return -1;
	}
	cJSON_ArrayForEach(e, ex) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "node");
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(e, "evidence");
		const cJSON *fr = cJSON_GetObjectItemCaseSensitive(e, "from");
		if (!cJSON_IsString(n) || !slurm_name_ok(n->valuestring)) {
			free(*err);
			*err = xstrdup("field \"exclude\" has an entry whose \"node\" is not a SLURM "
			    "node name");
			return -1;
		}
		exclude_add(r, n->valuestring, cJSON_IsString(ev) ? ev->valuestring : NULL,
		    cJSON_IsString(fr) ? fr->valuestring : NULL);
	}
	return 0;
}

struct job_record *record_from_json(const char *json, char **err)
{
	cJSON *o = cJSON_Parse(json), *hist, *e;
	struct job_record *r;

	if (o == NULL || !cJSON_IsObject(o)) {
		const char *at = cJSON_GetErrorPtr();
		free(*err);
		*err = at != NULL && o == NULL
		    ? xasprintf("not valid JSON near byte %ld", (long)(at - json))
		    : xstrdup("not a JSON object");
		cJSON_Delete(o);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
#define GET(f) if (get_string(o, #f, &r->f, strcmp(#f, "id") == 0, err) != 0) goto bad;
	STRING_FIELDS(GET)
#undef GET
	if (r->id == NULL || r->id[0] == '\0') {
		free(*err);
		*err = xstrdup("field \"id\" is empty");
		goto bad;
	}
	if (check_values(r, err) != 0)
		goto bad;
	if (get_state(o, "state", &r->state, err) != 0 ||
	    get_string(o, "native_state", &r->native, 0, err) != 0)
		goto bad;
	if (get_time(o, "created", &r->created) != 0 || get_time(o, "updated", &r->updated) != 0) {
		free(*err);
		*err = xstrdup("field \"created\" or \"updated\" is not a UTC time");
		goto bad;
	}
	get_progress(cJSON_GetObjectItemCaseSensitive(o, "progress"), r);
	/* A record written before curves were kept has none. */
	series_set_from_json(cJSON_GetObjectItemCaseSensitive(o, "curves"), &r->curves);
	if (get_tao_final(cJSON_GetObjectItemCaseSensitive(o, "tao_final"), r, err) != 0)
		goto bad;
	get_alloc(cJSON_GetObjectItemCaseSensitive(o, "allocation"), r);
	card_samples_from_json(cJSON_GetObjectItemCaseSensitive(o, "gpu_samples"), &r->samples);
	r->has_card = card_from_json(cJSON_GetObjectItemCaseSensitive(o, "efficiency"),
	    &r->card) == 0;
	if (get_exclude(cJSON_GetObjectItemCaseSensitive(o, "exclude"), r, err) != 0)
		goto bad;
	get_segments(cJSON_GetObjectItemCaseSensitive(o, "segments"), r);
	{
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "child_timeout_s");
		if (cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1e8)
			r->child_timeout_s = (long)v->valuedouble;
	}
	hist = cJSON_GetObjectItemCaseSensitive(o, "transitions");
	if (hist != NULL && !cJSON_IsArray(hist)) {
		free(*err);
		*err = xstrdup("field \"transitions\" is not a list");
		goto bad;
	}
	cJSON_ArrayForEach(e, hist) {
		struct transition t;
		memset(&t, 0, sizeof(t));
		if (get_time(e, "at", &t.at) != 0 || get_state(e, "from", &t.from, err) != 0 ||
		    get_state(e, "to", &t.to, err) != 0 ||
		    get_string(e, "native", &t.native, 0, err) != 0 ||
		    get_string(e, "message", &t.message, 0, err) != 0 ||
		    get_string(e, "source", &t.source, 1, err) != 0) {
			free(t.native), free(t.message), free(t.source);
			if (*err == NULL)
				*err = xstrdup("a transition has no valid \"at\" time");
			goto bad;
		}
		r->hist = xreallocarray(r->hist, r->nhist + 1, sizeof(*r->hist));
		r->hist[r->nhist++] = t;
	}
	cJSON_Delete(o);
	return r;
bad:
	cJSON_Delete(o);
	record_free(r);
	return NULL;
}

/* Ids name files: letters, digits, '-', '_', '.' only, no leading dot. */
int record_id_ok(const char *id)
{
	size_t i;

	if (id == NULL || id[0] == '\0' || id[0] == '.' || strlen(id) > 128)
		return 0;
	for (i = 0; id[i] != '\0'; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
		    (id[i] >= '0' && id[i] <= '9') || strchr("-_.", id[i]) != NULL))
			return 0;
	return 1;
}

#include "engine/store/series.h"

#include <cJSON.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

void series_set_init(struct series_set *set)
{
	set->s = NULL;
	set->n = 0;
}

void series_set_free(struct series_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		free(set->s[i].epoch);
		free(set->s[i].value);
	}
	free(set->s);
	series_set_init(set);
}


void series_set_copy(struct series_set *dst, const struct series_set *src)
{
	size_t i;

	series_set_init(dst);
	if (src->n == 0)
		return;
	dst->s = xcalloc(src->n, sizeof(*dst->s));
	dst->n = src->n;
	for (i = 0; i < src->n; i++) {
		struct series *d = &dst->s[i];
		const struct series *s = &src->s[i];
		*d = *s;
		d->cap = s->n;
		d->epoch = s->n ? (void *)xmemdup(s->epoch, s->n * sizeof(*s->epoch)) : NULL;
		d->value = s->n ? (void *)xmemdup(s->value, s->n * sizeof(*s->value)) : NULL;
	}
}

struct series_shared {
	atomic_int		refs;
	struct series_set	set;
};

struct series_shared *series_shared_new(const struct series_set *src)
{
	struct series_shared *sh = xcalloc(1, sizeof(*sh));

	atomic_init(&sh->refs, 1);
	series_set_copy(&sh->set, src);
	return sh;
}

struct series_shared *series_shared_ref(struct series_shared *sh)
{
	if (sh != NULL)
		atomic_fetch_add(&sh->refs, 1);
	return sh;
}

void series_shared_unref(struct series_shared *sh)
{
	if (sh == NULL || atomic_fetch_sub(&sh->refs, 1) != 1)
		return;
	series_set_free(&sh->set);
	free(sh);
}

const struct series_set *series_shared_set(const struct series_shared *sh)
{
	return &sh->set;
}

const struct series *series_set_find(const struct series_set *set, const char *name)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->s[i].name, name) == 0)
			return &set->s[i];
	return NULL;
}

/* A metric's name as TAO writes its keys: no control bytes (the names come
 * from the cluster, and every consumer, a CSV to a terminal too, prints
 * them), not empty. */
static int name_ok(const char *name)
{
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return name[0] != '\0';
}

static struct series *series_of(struct series_set *set, const char *name)
{
	struct series *s = (struct series *)series_set_find(set, name);

	if (s != NULL)
		return s;
	if (set->n >= SERIES_MAX_NAMES || strlen(name) >= SERIES_NAME_MAX || !name_ok(name))
		return NULL;
	set->s = xreallocarray(set->s, set->n + 1, sizeof(*set->s));
	s = &set->s[set->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->stride = 1;
	return s;
}

static void push(struct series *s, int epoch, double value)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		if (s->cap > SERIES_MAX_POINTS + 1)
			s->cap = SERIES_MAX_POINTS + 1;
		s->epoch = xreallocarray(s->epoch, s->cap, sizeof(*s->epoch));
		s->value = xreallocarray(s->value, s->cap, sizeof(*s->value));
	}
	s->epoch[s->n] = epoch;
	s->value[s->n++] = value;
}

/* Every other kept point dropped, the first kept; the stride doubled. */
static void thin(struct series *s)
{
	size_t i, k = 0;

	for (i = 0; i < s->n; i += 2) {
		s->epoch[k] = s->epoch[i];
		s->value[k++] = s->value[i];
	}
	s->n = k;
	s->stride *= 2;
}

void series_set_add(struct series_set *set, const char *name, int epoch, double value,
    int pinned)
{
	struct series *s = series_of(set, name);
	size_t keep;

	if (s == NULL)
		return;
	if (s->n > 0 && s->epoch[s->n - 1] == epoch) {
		/* A pinned value stands against a later unpinned one. */
		if (!s->pinned || pinned) {
			s->value[s->n - 1] = value;
			s->pinned = pinned;
		}
		return;
	}
	if (s->n > 0 && s->epoch[s->n - 1] > epoch) {
		/* Back in time: a resumed run redoes these epochs. */
		for (keep = s->n; keep > 0 && s->epoch[keep - 1] >= epoch; keep--)
			;
		s->n = keep;
		s->tail_off = 0;
		s->seen = keep == 0 ? 0 : (unsigned long)keep * s->stride;
	}
	if (s->tail_off) {
		s->n--;		/* the newest was kept only as the newest */
		s->tail_off = 0;
	}
	if (s->seen % s->stride != 0)
		s->tail_off = 1;
	s->seen++;
	s->pinned = pinned;
	push(s, epoch, value);
	if (s->n > SERIES_MAX_POINTS) {
		/* The newest aside, the rest thinned, the newest back (as the
		 * tail when the doubled stride passes it). */
		int te = s->epoch[s->n - 1];
		double tv = s->value[s->n - 1];
		s->n--;
		thin(s);
		push(s, te, tv);
		s->tail_off = (s->seen - 1) % s->stride != 0;
	}
}

int series_better(const char *name)
{
	static const char *const lower[] = { "loss", "err", "mse", "mae", "wer", "cer", "perplexity" };
	size_t i;

	if (strcmp(name, "lr") == 0 || strstr(name, "learning_rate") != NULL ||
	    strstr(name, "_lr") != NULL)
		return 0;
	for (i = 0; i < sizeof(lower) / sizeof(lower[0]); i++)
		if (strstr(name, lower[i]) != NULL)
			return -1;
	return 1;
}

void series_last_best(const struct series *s, long *last, long *best)
{
	int dir = series_better(s->name);
	size_t i;

	*last = *best = -1;
	for (i = 0; i < s->n; i++) {
		if (!isfinite(s->value[i]))
			continue;
		*last = (long)i;
		if (dir != 0 && (*best < 0 || (dir < 0 ? s->value[i] < s->value[*best]
		    : s->value[i] > s->value[*best])))
			*best = (long)i;
	}
}

static cJSON *value_json(double v)
{
	if (isnan(v))
		return cJSON_CreateNull();
	if (isinf(v))
		return cJSON_CreateString(v > 0 ? "Infinity" : "-Infinity");
	return cJSON_CreateNumber(v);
}

cJSON *series_set_to_json(const struct series_set *set)
{
	cJSON *a = cJSON_CreateArray();
	size_t i, k;

	for (i = 0; i < set->n; i++) {
		const struct series *s = &set->s[i];
		cJSON *o = cJSON_CreateObject(), *ep, *va;
		cJSON_AddStringToObject(o, "name", s->name);
		ep = cJSON_AddArrayToObject(o, "epochs");
		va = cJSON_AddArrayToObject(o, "values");
		for (k = 0; k < s->n; k++) {
			cJSON_AddItemToArray(ep, cJSON_CreateNumber(s->epoch[k]));
			cJSON_AddItemToArray(va, value_json(s->value[k]));
		}
		cJSON_AddNumberToObject(o, "stride", (double)s->stride);
		cJSON_AddNumberToObject(o, "seen", (double)s->seen);
		cJSON_AddBoolToObject(o, "tail_off", s->tail_off);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* A stored value: a number, null (NaN), or "Infinity"/"-Infinity". */
static double value_of(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsString(v) && strcmp(v->valuestring, "Infinity") == 0)
		return INFINITY;
	if (cJSON_IsString(v) && strcmp(v->valuestring, "-Infinity") == 0)
		return -INFINITY;
	return NAN;
}

void series_set_from_json(const cJSON *a, struct series_set *set)
{
	const cJSON *o;

	series_set_init(set);
	if (!cJSON_IsArray(a))
		return;
	cJSON_ArrayForEach(o, a) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
		const cJSON *ep = cJSON_GetObjectItemCaseSensitive(o, "epochs");
		const cJSON *va = cJSON_GetObjectItemCaseSensitive(o, "values");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "stride");
		const cJSON *seen = cJSON_GetObjectItemCaseSensitive(o, "seen");
		const cJSON *e, *v;
		struct series *s;
		int last = 0;

		if (!cJSON_IsString(name) || !cJSON_IsArray(ep) || !cJSON_IsArray(va) ||
		    cJSON_GetArraySize(ep) != cJSON_GetArraySize(va) ||
		    cJSON_GetArraySize(ep) > SERIES_MAX_POINTS + 1 ||
		    series_set_find(set, name->valuestring) != NULL ||
		    (s = series_of(set, name->valuestring)) == NULL)
			continue;
		for (e = ep->child, v = va->child; e != NULL && v != NULL; e = e->next, v = v->next) {
			/* Epochs increase: one that does not is not kept. */
			if (!cJSON_IsNumber(e) || !(e->valuedouble >= -1 && e->valuedouble <= 1e9) ||
			    (s->n > 0 && (int)e->valuedouble <= last))
				continue;
			last = (int)e->valuedouble;
			push(s, last, value_of(v));
		}
		if (cJSON_IsNumber(st) && st->valuedouble >= 1 && st->valuedouble <= 1e12)
			s->stride = (unsigned long)st->valuedouble;
		s->seen = cJSON_IsNumber(seen) && seen->valuedouble >= (double)s->n &&
		    seen->valuedouble <= 1e15 ? (unsigned long)seen->valuedouble : s->n;
		s->tail_off = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "tail_off"));
		s->pinned = 1;	/* a record's series is of a run that ended */
	}
}

#include "util/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

struct slot {
	char	*key;		/* NULL: empty */
	void	*value;
	uint64_t hash;
};

struct strmap {
	struct slot	*slots;
	size_t		 cap;	/* a power of two */
	size_t		 n;
};

/* FNV-1a: short keys, no adversary (ids the user's own records and
 * scheduler hold), so a simple hash serves. */
static uint64_t hash_of(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct strmap *strmap_new(void)
{
	struct strmap *m = xcalloc(1, sizeof(*m));

	m->cap = 16;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	return m;
}

void strmap_clear(struct strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++) {
		free(m->slots[i].key);
		m->slots[i].key = NULL;
	}
	m->n = 0;
}

void strmap_free(struct strmap *m)
{
	if (m == NULL)
		return;
	strmap_clear(m);
	free(m->slots);
	free(m);
}

size_t strmap_count(const struct strmap *m)
{
	return m->n;
}

/* The slot holding key, or the empty one where it would go. */
static struct slot *find(const struct strmap *m, const char *key, uint64_t h)
{
	size_t i = (size_t)h & (m->cap - 1);

	while (m->slots[i].key != NULL &&
	    (m->slots[i].hash != h || strcmp(m->slots[i].key, key) != 0))
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

static void grow(struct strmap *m)
{
	struct slot *old = m->slots;
	size_t oldcap = m->cap, i;

	m->cap *= 2;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (i = 0; i < oldcap; i++)
		if (old[i].key != NULL)
			*find(m, old[i].key, old[i].hash) = old[i];
	free(old);
}

void strmap_reserve(struct strmap *m, size_t n)
{
	while (n * 2 > m->cap)
		grow(m);
}

void strmap_put(struct strmap *m, const char *key, void *value)
{
	uint64_t h = hash_of(key);
	struct slot *s = find(m, key, h);

	if (s->key == NULL) {
		/* At most half full: probes stay short. */
		if ((m->n + 1) * 2 > m->cap) {
			grow(m);
			s = find(m, key, h);
		}
		s->key = xstrdup(key);
		s->hash = h;
		m->n++;
	}
	s->value = value;
}

void *strmap_get(const struct strmap *m, const char *key)
{
	const struct slot *s = find(m, key, hash_of(key));

	return s->key != NULL ? s->value : NULL;
}

void *strmap_del(struct strmap *m, const char *key)
{
	struct slot *s = find(m, key, hash_of(key));
	size_t i = (size_t)(s - m->slots), j, home;
	void *value;

	if (s->key == NULL)
		return NULL;
	value = s->value;
	free(s->key);
	s->key = NULL;
	m->n--;
	/* Shift back the entries of the run after i that may no longer be
	 * reached past the hole (Knuth's algorithm R). */
	for (j = (i + 1) & (m->cap - 1); m->slots[j].key != NULL; j = (j + 1) & (m->cap - 1)) {
		home = (size_t)m->slots[j].hash & (m->cap - 1);
		/* Leave j where it is when its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->slots[i] = m->slots[j];
		m->slots[j].key = NULL;
		i = j;
	}
	return value;
}

#include "engine/logs/logring.h"

#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

void log_ring_init(struct log_ring *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->cap = cap > 0 ? cap : 1;
	r->line = xcalloc(r->cap, sizeof(*r->line));
	r->len = xcalloc(r->cap, sizeof(*r->len));
}

void log_ring_clear(struct log_ring *r)
{
	size_t i;

	for (i = 0; i < r->cap; i++) {
		free(r->line[i]);
		r->line[i] = NULL;
	}
	r->head = r->n = 0;
}

void log_ring_free(struct log_ring *r)
{
	log_ring_clear(r);
	free(r->line);
	free(r->len);
	memset(r, 0, sizeof(*r));
}

static void push(struct log_ring *r, const char *s, size_t len)
{
	size_t slot;

	if (r->n == r->cap) {
		slot = r->head;		/* overwrite the oldest */
		r->head = (r->head + 1) % r->cap;
		r->dropped++;
		free(r->line[slot]);
	} else {
		slot = (r->head + r->n++) % r->cap;
	}
	r->line[slot] = xmemdup(s, len);	/* a log line may hold NULs */
	r->len[slot] = len;
}

void log_ring_push_lines(struct log_ring *r, const char *text, size_t len)
{
	size_t start = 0, i;

	for (i = 0; i < len; i++) {
		if (text[i] == '\n') {
			push(r, text + start, i - start);
			start = i + 1;
		}
	}
}

const char *log_ring_get(const struct log_ring *r, size_t i, size_t *len)
{
	size_t slot;

	if (i >= r->n)
		return NULL;
	slot = (r->head + i) % r->cap;
	if (len != NULL)
		*len = r->len[slot];
	return r->line[slot];
}

#include "engine/track/tracker_priv.h"

#include <stdlib.h>

#include "engine/config/config.h"
#include "engine/store/recindex.h"
#include "engine/store/store.h"
#include "util/log.h"
#include "util/strmap.h"
#include "util/xmalloc.h"

/* ---- the records shown ------------------------------------------------------------------- */

void tracker_cached_free(struct cached *c)
{
	free(c->id);
	record_free(c->r);
	free(c);
}

struct row_page *tracker_page_ref(struct row_page *pg)
{
	if (pg != NULL)
		atomic_fetch_add(&pg->refs, 1);
	return pg;
}

/* Drop a reference: the last one frees the page. */
void tracker_page_unref(struct row_page *pg)
{
	size_t i;

	if (pg == NULL || atomic_fetch_sub(&pg->refs, 1) != 1)
		return;
	for (i = 0; i < pg->n; i++)
		tracker_row_clear(&pg->rows[i]);
	free(pg->rows);
	free(pg->gens);
	free(pg);
}

void tracker_sel_free(struct tracker *t)
{
	size_t i;

	for (i = 0; i < t->nsel; i++)
		free(t->sel[i].id);
	free(t->sel);
	t->sel = NULL;
	t->nsel = 0;
}


struct gather {
	struct pick	*v;
	size_t		 n, cap;
};

static void gather_one(const struct rec_meta *m, void *arg)
{
	struct gather *g = arg;
	struct pick *p;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		g->v = xreallocarray(g->v, g->cap, sizeof(*g->v));
	}
	p = &g->v[g->n++];
	p->id = xstrdup(m->id);
	p->created = m->created;
	p->gen = m->gen;
	p->final = tao_state_final(m->state) &&
	    !awaits_accounting(m->state, m->native, m->backend_ref);
	p->c = NULL;
	p->at = SIZE_MAX;
}

static int by_created(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->id, y->id);
}

static void swap_picks(struct pick *a, struct pick *b)
{
	struct pick t = *a;

	*a = *b;
	*b = t;
}

/* The k newest of v[0..n) put first, in no order: Hoare's selection,
 * linear on average, where sorting 100 000 picks to keep 10 000 was a
 * fifth of the monitor's start. No two picks are equal (their ids
 * differ), so the median-of-three pivot keeps the parts balanced. */
static void newest_first(struct pick *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;

	while (k > lo && k < hi && hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, i, at = lo;
		/* The median of v[lo], v[mid], v[hi - 1], moved to hi - 1. */
		if (by_created(&v[mid], &v[lo]) > 0)
			swap_picks(&v[mid], &v[lo]);
		if (by_created(&v[hi - 1], &v[lo]) > 0)
			swap_picks(&v[hi - 1], &v[lo]);
		if (by_created(&v[mid], &v[hi - 1]) > 0)
			swap_picks(&v[mid], &v[hi - 1]);
		for (i = lo; i < hi - 1; i++)
			if (by_created(&v[i], &v[hi - 1]) > 0)
				swap_picks(&v[i], &v[at++]);
		swap_picks(&v[at], &v[hi - 1]);
		/* v[lo..at) newer than v[at], v[at + 1..hi) older. */
		if (k <= at)
			hi = at;
		else
			lo = at + 1;
	}
}

/* The live picks of v[0..n) put first; returns how many. */
static size_t live_first(struct pick *v, size_t n)
{
	size_t i, live = 0;

	for (i = 0; i < n; i++)
		if (!v[i].final)
			swap_picks(&v[i], &v[live++]);
	return live;
}

/* Take the records to show from the index: every live one, and the
 * newest page of the finished ones, oldest first as rows are. */
void tracker_select_records(struct tracker *t, struct rec_index *ix)
{
	struct gather g = { NULL, 0, 0 };
	size_t i, live = 0;

	recindex_each(ix, t->cl->name, gather_one, &g);
	live = live_first(g.v, g.n);
	t->left = t->page > 0 && g.n - live > t->page ? g.n - live - t->page : 0;
	if (t->left > 0) {
		newest_first(g.v + live, g.n - live, t->page);
		for (i = live + t->page; i < g.n; i++)
			free(g.v[i].id);
		g.n = live + t->page;
	}
	if (g.n > 1)
		qsort(g.v, g.n, sizeof(*g.v), by_created);
	tracker_sel_free(t);
	t->sel = g.v;
	t->nsel = g.n;
	t->selected = 1;
}

/* The selection's live records in the cache, read where the index says
 * they changed; the cache's others dropped. */
void tracker_cache_records(struct tracker *t, struct record_store *st)
{
	size_t i;

	t->marks++;
	for (i = 0; i < t->nsel; i++) {
		struct pick *p = &t->sel[i];
		struct cached *c;
		char *err = NULL;

		if (p->final)
			continue;	/* the page's */
		if ((c = strmap_get(t->cache_ix, p->id)) == NULL) {
			c = xcalloc(1, sizeof(*c));
			c->id = xstrdup(p->id);
			t->cache = xreallocarray(t->cache, t->ncache + 1, sizeof(*t->cache));
			t->cache[t->ncache++] = c;
			strmap_put(t->cache_ix, c->id, c);
		}
		c->mark = t->marks;
		p->c = c;
		if (c->gen == p->gen)
			continue;
		record_free(c->r);
		c->r = NULL;
		c->gen = 0;
		if (store_load(st, p->id, &c->r, &err) != 0) {
			/* Changed since the index read it: the next poll. */
			log_msg(LOG_WARN, "poll: %s", err);
			free(err);
			p->c = NULL;
			continue;
		}
		c->gen = p->gen;
	}
	for (i = t->ncache; i > 0; i--) {
		struct cached *c = t->cache[i - 1];
		if (c->mark == t->marks)
			continue;
		strmap_del(t->cache_ix, c->id);
		tracker_cached_free(c);
		t->cache[i - 1] = t->cache[--t->ncache];
	}
}

struct page_fill {
	struct row_page	*pg;
	size_t		 k;
};

static void page_row(const struct rec_meta *m, void *arg)
{
	struct page_fill *f = arg;

	tracker_row_of_meta(&f->pg->rows[f->k], m);
	f->pg->gens[f->k] = m->gen;
}

/* Whether the page holds the selection's finished records as the index
 * has them now, each at its pick's place. */
static int page_current(const struct tracker *t)
{
	const struct row_page *pg = t->pg;
	size_t i, k = 0;

	if (pg == NULL)
		return 0;
	for (i = 0; i < t->nsel; i++) {
		const struct pick *p = &t->sel[i];
		if (!p->final)
			continue;
		if (k >= pg->n || pg->gens[k] != p->gen || strcmp(pg->rows[k].record_id, p->id) != 0)
			return 0;
		k++;
	}
	return k == pg->n;
}

/* The selection's finished records' rows: the page kept when none of
 * them changed (the picks pointed at their rows), else made again from
 * the index. */
void tracker_page_update(struct tracker *t, struct rec_index *ix)
{
	struct page_fill f;
	size_t i, n = 0;

	if (!page_current(t)) {
		for (i = 0; i < t->nsel; i++)
			n += t->sel[i].final;
		f.pg = xcalloc(1, sizeof(*f.pg));
		atomic_init(&f.pg->refs, 1);
		f.pg->rows = xcalloc(n + 1, sizeof(*f.pg->rows));
		f.pg->gens = xcalloc(n + 1, sizeof(*f.pg->gens));
		for (f.k = 0, i = 0; i < t->nsel; i++)
			if (t->sel[i].final && recindex_get(ix, t->sel[i].id, page_row, &f) == 0)
				f.k++;
		f.pg->n = f.k;
		tracker_page_unref(t->pg);
		t->pg = f.pg;
		/* A record gone since the selection: the next refresh drops it. */
	}
	for (i = 0, n = 0; i < t->nsel; i++) {
		struct pick *p = &t->sel[i];
		if (!p->final)
			continue;
		p->at = n < t->pg->n && strcmp(t->pg->rows[n].record_id, p->id) == 0 ? n++
		    : SIZE_MAX;
	}
}

#include "ui/jobtable.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/state.h"
#include "engine/track/tracker.h"
#include "util/buf.h"
#include "util/strmap.h"
#include "util/xmalloc.h"

void jt_init(struct jobtable *t)
{
	memset(t, 0, sizeof(*t));
}

static void free_arrays(struct jobtable *t)
{
	for (size_t i = 0; i < t->narrays; i++) {
		free(t->arrays[i]->name);
		free(t->arrays[i]->partition);
		free(t->arrays[i]->message);
		free(t->arrays[i]);
	}
	free(t->arrays);
	t->arrays = NULL;
	t->narrays = 0;
}

static void clear_entries(struct jobtable *t)
{
	t->n = t->nreal = t->text_real = 0;
	buf_reset(&t->text);
	free_arrays(t);
}

void jt_free(struct jobtable *t)
{
	clear_entries(t);
	buf_free(&t->text);
	free(t->entries);
	free(t->lines);
	free(t->sel_key);
	jt_clear_marks(t);
	for (size_t i = 0; i < t->nexpanded; i++)
		free(t->expanded[i]);
	free(t->expanded);
	memset(t, 0, sizeof(*t));
}

void jt_begin(struct jobtable *t)
{
	clear_entries(t);
	t->nlines = 0;
}

static const char *id_of(const struct job_row *r)
{
	if (r->record_id != NULL)
		return r->record_id;
	return r->shown_id[0] ? r->shown_id : r->slurm_id;
}

/* Running first, then what waits, then what ended badly, then the rest. */
static int state_rank(enum tao_state s)
{
	switch (s) {
	case TAO_RUNNING:
		return 0;
	case TAO_PENDING:
		return 1;
	case TAO_ERROR:
		return 2;
	case TAO_CANCELED:
		return 3;
	case TAO_DONE:
		return 4;
	default:
		return 5;
	}
}

/* The entries' keys and hays where the text is now (it moved as it grew). */
static void rebase(struct jobtable *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		t->entries[i].key = t->text.data + t->entries[i].at[0];
		t->entries[i].hay = t->text.data + t->entries[i].at[1];
	}
}

void jt_add(struct jobtable *t, size_t cluster, const char *cluster_name, const struct job_row *row)
{
	size_t i, key, hay, cap = t->text.cap;
	struct jt_entry *e;

	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->entries = xreallocarray(t->entries, t->cap, sizeof(*t->entries));
	}
	key = t->text.len;
	buf_addf(&t->text, "%s\x1f%s", cluster_name, id_of(row));
	buf_addc(&t->text, '\0');
	hay = t->text.len;
	buf_addf(&t->text, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", cluster_name,
	    row->record_id ? row->record_id : "", row->shown_id, row->name ? row->name : "",
	    row->partition ? row->partition : "", tracker_row_label(row),
	    row->native ? row->native : "", row->message ? row->message : "", row->elapsed);
	buf_addc(&t->text, '\0');
	for (i = hay; i < t->text.len; i++)
		t->text.data[i] = (char)tolower((unsigned char)t->text.data[i]);
	if (t->text.cap != cap)
		rebase(t);	/* grown: it may have moved */
	e = &t->entries[t->n++];
	e->at[0] = key;
	e->at[1] = hay;
	e->cluster = cluster;
	e->cluster_name = cluster_name;
	e->row = row;
	e->key = t->text.data + key;
	e->hay = t->text.data + hay;
	/* Sorting 10 000 rows compares these ~140 000 times: work them out
	 * once here. */
	e->num = strtoull(row->slurm_id, NULL, 10);
	e->rank = state_rank(row->state);
	t->nreal = t->n;
	t->text_real = t->text.len;
}

/* ---- job arrays ----------------------------------------------------------------------- */

/* The array a row is a task of: the user's own job (taotop submits no
 * arrays) shown as "120_3" or "120_[4-9]" (the tasks still pending): the
 * id before '_'; 0 when it is none. */
static size_t array_of(const struct job_row *r, char *id, size_t len)
{
	const char *u = strchr(r->shown_id, '_');
	size_t n;

	if (r->record_id != NULL || u == NULL || u == r->shown_id)
		return 0;
	n = (size_t)(u - r->shown_id);
	if (n + 1 > len)
		return 0;
	memcpy(id, r->shown_id, n);
	id[n] = '\0';
	return n;
}

static int is_expanded(const struct jobtable *t, const char *key)
{
	for (size_t i = 0; i < t->nexpanded; i++)
		if (strcmp(t->expanded[i], key) == 0)
			return 1;
	return 0;
}

/* How many tasks a row stands for: squeue shows an array's pending rest as
 * one "120_[3-4,7]" (ranges, steps "1-9:2", a throttle "%2" after). */
static size_t tasks_of(const struct job_row *r)
{
	const char *p = strchr(r->shown_id, '[');
	size_t n = 0;

	if (p == NULL)
		return 1;
	for (p++; *p != '\0' && *p != ']' && *p != '%';) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a, step = 1;
		if (end == p)
			return n > 0 ? n : 1;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			p = end;
			if (*p == ':') {
				step = strtoul(p + 1, &end, 10);
				p = end;
			}
		}
		if (b >= a && step > 0)
			n += (b - a) / step + 1;
		if (*p == ',')
			p++;
	}
	return n > 0 ? n : 1;
}

struct array_group {
	size_t	*members;	/* entry indexes, in the list's order */
	size_t	 n;
	size_t	 entry;		/* the array's own entry, once made */
	int	 emitted;
};

/* The array's own row, from its tasks. */
static struct job_row *array_row(const struct jobtable *t, const struct array_group *g,
    const char *id)
{
	static const char *const order[] = { "Running", "Pending", "Error", "Canceled", "Done",
		"Unknown" };
	struct job_row *r = xcalloc(1, sizeof(*r));
	const struct job_row *first = t->entries[g->members[0]].row;
	size_t count[6] = { 0 }, i, k, tasks = 0;
	struct buf m;

	snprintf(r->slurm_id, sizeof(r->slurm_id), "%s", id);
	snprintf(r->shown_id, sizeof(r->shown_id), "%s_[*]", id);
	r->name = xstrdup(first->name ? first->name : "");
	r->partition = first->partition ? xstrdup(first->partition) : NULL;
	r->state = TAO_UNKNOWN;
	r->epoch = r->max_epoch = -1;
	r->elapsed_s = r->limit_s = -1;
	snprintf(r->limit, sizeof(r->limit), "%s", first->limit);
	r->created = first->created;
	for (i = 0; i < g->n; i++) {
		const struct job_row *x = t->entries[g->members[i]].row;
		int rank = state_rank(x->state);
		size_t nt = tasks_of(x);
		count[rank] += nt;
		tasks += nt;
		if (r->state == TAO_UNKNOWN || rank < state_rank(r->state))
			r->state = x->state;
		r->nodes += x->nodes;
		r->gpus += x->gpus;
		r->gpus_known = x->gpus_known;
	}
	buf_init(&m);
	buf_addf(&m, "%zu tasks:", tasks);
	for (k = 0; k < 6; k++)
		if (count[k] > 0)
			buf_addf(&m, " %zu %s", count[k], order[k]);
	buf_adds(&m, " (e: expand)");
	r->message = buf_detach(&m);
	return r;
}

const char *jt_sort_name(enum jt_sort s)
{
	static const char *const names[] = { "state", "age", "name", "cluster" };
	return s < JT_SORT_COUNT ? names[s] : "?";
}

/* Newer first: SLURM ids grow; a record not launched yet is newest. */
static int age_cmp(const struct jt_entry *a, const struct jt_entry *b)
{
	if (a->num == 0 || b->num == 0) {
		if (a->num != b->num)
			return a->num == 0 ? -1 : 1;
		return a->row->created > b->row->created ? -1 : a->row->created < b->row->created;
	}
	if (a->num != b->num)
		return a->num > b->num ? -1 : 1;
	return strcmp(a->row->shown_id, b->row->shown_id);
}

static const struct jobtable *sort_table;	/* qsort has no context argument */

static int cmp_entries(const void *pa, const void *pb)
{
	const struct jt_line *la = pa, *lb = pb;
	const struct jt_entry *a = &sort_table->entries[la->entry];
	const struct jt_entry *b = &sort_table->entries[lb->entry];
	int c = 0;

	if (sort_table->group || sort_table->sort == JT_SORT_CLUSTER)
		c = strcmp(a->cluster_name, b->cluster_name);
	if (c == 0) {
		switch (sort_table->sort) {
		case JT_SORT_STATE:
		case JT_SORT_CLUSTER:
			c = a->rank - b->rank;
			break;
		case JT_SORT_NAME:
			c = strcmp(a->row->name ? a->row->name : "", b->row->name ? b->row->name : "");
			break;
		default:
			break;
		}
	}
	if (c == 0)
		c = age_cmp(a, b);
	if (c == 0)
		c = strcmp(a->key, b->key);
	return c;
}

static int shown(const struct jobtable *t, const struct jt_entry *e, const char *needle)
{
	if (t->hide_finished && tao_state_final(e->row->state))
		return 0;
	return needle[0] == '\0' || strstr(e->hay, needle) != NULL;
}

static int is_job(const struct jobtable *t, size_t line)
{
	return line < t->nlines && !t->lines[line].header;
}

void jt_rebuild(struct jobtable *t)
{
	char needle[sizeof(t->filter)];
	size_t i, njobs = 0, out, old_sel = t->sel;
	struct jt_line *jobs;

	/* The last rebuild's array lines go: made again from the tasks. */
	t->n = t->nreal;
	t->text.len = t->text_real;
	free_arrays(t);
	for (i = 0; t->filter[i] != '\0'; i++)
		needle[i] = (char)tolower((unsigned char)t->filter[i]);
	needle[i] = '\0';
	jobs = xcalloc(t->n + 1, sizeof(*jobs));
	t->nhidden = 0;
	for (i = 0; i < t->n; i++) {
		if (shown(t, &t->entries[i], needle))
			jobs[njobs++].entry = i;
		else if (t->hide_finished && (needle[0] == '\0' ||
		    strstr(t->entries[i].hay, needle) != NULL))
			t->nhidden++;	/* hidden for being finished alone */
	}
	sort_table = t;
	qsort(jobs, njobs, sizeof(*jobs), cmp_entries);
	sort_table = NULL;

	/* Job arrays (two tasks or more listed): one line each. */
	{
		struct strmap *groups = strmap_new();
		struct array_group *g;
		char id[32], gkey[160];
		size_t emit_cap = njobs * 2 + 1;

		for (i = 0; i < njobs; i++) {
			const struct jt_entry *e = &t->entries[jobs[i].entry];
			if (array_of(e->row, id, sizeof(id)) == 0)
				continue;
			snprintf(gkey, sizeof(gkey), "%s\x1f%s", e->cluster_name, id);
			if ((g = strmap_get(groups, gkey)) == NULL) {
				g = xcalloc(1, sizeof(*g));
				strmap_put(groups, gkey, g);
			}
			g->members = xreallocarray(g->members, g->n + 1, sizeof(*g->members));
			g->members[g->n++] = jobs[i].entry;
		}
		free(t->lines);
		t->lines = xcalloc(emit_cap + strmap_count(groups) * 2, sizeof(*t->lines));
		out = 0;
		for (i = 0; i < njobs; i++) {
			const struct jt_entry *e = &t->entries[jobs[i].entry];
			size_t line_entry = jobs[i].entry, k;
			g = NULL;
			if (array_of(e->row, id, sizeof(id)) > 0) {
				snprintf(gkey, sizeof(gkey), "%s\x1f%s", e->cluster_name, id);
				g = strmap_get(groups, gkey);
				if (g != NULL && g->n < 2)
					g = NULL;
			}
			if (g != NULL && g->emitted)
				continue;	/* listed under its array already */
			if (g != NULL) {
				struct job_row *ar = array_row(t, g, id);
				size_t cluster = e->cluster;
				const char *cname = e->cluster_name;
				t->arrays = xreallocarray(t->arrays, t->narrays + 1, sizeof(*t->arrays));
				t->arrays[t->narrays++] = ar;
				{
					/* The table's own, not a poll's: dropped at
					 * the next rebuild. */
					size_t nreal = t->nreal, text_real = t->text_real;
					jt_add(t, cluster, cname, ar);
					t->nreal = nreal;
					t->text_real = text_real;
				}
				line_entry = g->entry = t->n - 1;
				g->emitted = 1;
				e = &t->entries[line_entry];
			}
			/* Grouped: a header before each cluster's first job. */
			if (t->group && (out == 0 ||
			    t->entries[t->lines[out - 1].entry].cluster != e->cluster)) {
				t->lines[out].header = 1;
				t->lines[out].task = 0;
				t->lines[out++].cluster = e->cluster;
			}
			t->lines[out].header = 0;
			t->lines[out].task = 0;
			t->lines[out++].entry = line_entry;
			if (g != NULL && is_expanded(t, t->entries[line_entry].key)) {
				for (k = 0; k < g->n; k++) {
					t->lines[out].header = 0;
					t->lines[out].task = 1;
					t->lines[out++].entry = g->members[k];
				}
			}
		}
		t->nlines = out;
		{
			/* The groups, freed through the members of each. */
			for (i = 0; i < njobs; i++) {
				const struct jt_entry *e = &t->entries[jobs[i].entry];
				if (array_of(e->row, id, sizeof(id)) == 0)
					continue;
				snprintf(gkey, sizeof(gkey), "%s\x1f%s", e->cluster_name, id);
				if ((g = strmap_del(groups, gkey)) != NULL) {
					free(g->members);
					free(g);
				}
			}
		}
		strmap_free(groups);
	}
	free(jobs);

	/* The same job as before, else the nearest job line. */
	t->sel = old_sel < t->nlines ? old_sel : (t->nlines ? t->nlines - 1 : 0);
	if (t->sel_key != NULL) {
		for (i = 0; i < t->nlines; i++) {
			if (is_job(t, i) && strcmp(t->entries[t->lines[i].entry].key, t->sel_key) == 0) {
				t->sel = i;
				break;
			}
		}
	}
	jt_move(t, 0);
}

const struct jt_entry *jt_selected(const struct jobtable *t)
{
	return is_job(t, t->sel) ? &t->entries[t->lines[t->sel].entry] : NULL;
}

const struct jt_entry *jt_by_key(const struct jobtable *t, const char *key)
{
	size_t i;

	for (i = 0; key != NULL && i < t->n; i++)
		if (strcmp(t->entries[i].key, key) == 0)
			return &t->entries[i];
	return NULL;
}

static void remember_selection(struct jobtable *t)
{
	const struct jt_entry *e = jt_selected(t);

	if (e != NULL) {
		free(t->sel_key);
		t->sel_key = xstrdup(e->key);
	}
}

void jt_move(struct jobtable *t, long delta)
{
	long s = (long)t->sel, step = delta < 0 ? -1 : 1, left = labs(delta);

	if (t->nlines == 0) {
		t->sel = 0;
		return;
	}
	while (left > 0) {
		long n = s + step;
		while (n >= 0 && n < (long)t->nlines && !is_job(t, (size_t)n))
			n += step;
		if (n < 0 || n >= (long)t->nlines)
			break;
		s = n;
		left--;
	}
	/* Never rest on a header: the job below it, else above. */
	while (s < (long)t->nlines && !is_job(t, (size_t)s))
		s++;
	while (s >= (long)t->nlines || (s > 0 && !is_job(t, (size_t)s)))
		s--;
	t->sel = (size_t)(s < 0 ? 0 : s);
	remember_selection(t);
}

void jt_select_line(struct jobtable *t, size_t line)
{
	if (line >= t->nlines)
		return;
	t->sel = line;
	jt_move(t, 0);
}

void jt_scroll_to_selection(struct jobtable *t, size_t rows)
{
	if (rows == 0)
		return;
	if (t->sel < t->top)
		t->top = t->sel;
	/* Show a group's header when its first job is selected. */
	if (t->sel > 0 && t->sel - 1 < t->top && t->lines[t->sel - 1].header)
		t->top = t->sel - 1;
	if (t->sel >= t->top + rows)
		t->top = t->sel - rows + 1;
	if (t->nlines <= rows)
		t->top = 0;
	else if (t->top > t->nlines - rows)
		t->top = t->nlines - rows;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **find_mark(const struct jobtable *t, const char *key)
{
	return t->nmarks ? bsearch(&key, t->marks, t->nmarks, sizeof(*t->marks), cmp_str) : NULL;
}

int jt_toggle_array(struct jobtable *t)
{
	const struct jt_entry *e = jt_selected(t);
	const struct jt_entry *arr = NULL;
	char id[32], key[160];
	size_t i;

	if (e == NULL)
		return 0;
	if (t->lines[t->sel].task && array_of(e->row, id, sizeof(id)) > 0) {
		/* A task: fold its array, the selection going to the array. */
		snprintf(key, sizeof(key), "%s\x1f%s_[*]", e->cluster_name, id);
		arr = jt_by_key(t, key);
	} else if (strstr(e->row->shown_id, "_[*]") != NULL && e->row->record_id == NULL) {
		arr = e;
	}
	if (arr == NULL)
		return 0;
	for (i = 0; i < t->nexpanded; i++) {
		if (strcmp(t->expanded[i], arr->key) == 0) {
			free(t->expanded[i]);
			t->expanded[i] = t->expanded[--t->nexpanded];
			free(t->sel_key);
			t->sel_key = xstrdup(arr->key);
			jt_rebuild(t);
			return 1;
		}
	}
	t->expanded = xreallocarray(t->expanded, t->nexpanded + 1, sizeof(*t->expanded));
	t->expanded[t->nexpanded++] = xstrdup(arr->key);
	free(t->sel_key);
	t->sel_key = xstrdup(arr->key);
	jt_rebuild(t);
	return 1;
}

int jt_is_marked(const struct jobtable *t, const struct jt_entry *e)
{
	return find_mark(t, e->key) != NULL;
}

static void unmark(struct jobtable *t, char **m)
{
	size_t i = (size_t)(m - t->marks);

	free(*m);
	memmove(&t->marks[i], &t->marks[i + 1], (t->nmarks - i - 1) * sizeof(*t->marks));
	t->nmarks--;
}

static void mark(struct jobtable *t, const char *key)
{
	t->marks = xreallocarray(t->marks, t->nmarks + 1, sizeof(*t->marks));
	t->marks[t->nmarks++] = xstrdup(key);
	qsort(t->marks, t->nmarks, sizeof(*t->marks), cmp_str);
}

void jt_toggle_mark(struct jobtable *t)
{
	const struct jt_entry *e = jt_selected(t);
	char **m;

	if (e == NULL)
		return;
	if ((m = find_mark(t, e->key)) != NULL)
		unmark(t, m);
	else
		mark(t, e->key);
}

void jt_mark_all_shown(struct jobtable *t)
{
	size_t i, unmarked = 0, added = 0;

	for (i = 0; i < t->nlines; i++)
		if (is_job(t, i) && !jt_is_marked(t, &t->entries[t->lines[i].entry]))
			unmarked++;
	if (unmarked == 0) {
		for (i = 0; i < t->nlines; i++) {
			char **m;
			if (is_job(t, i) && (m = find_mark(t, t->entries[t->lines[i].entry].key)))
				unmark(t, m);
		}
		return;
	}
	/* Append them all past the sorted part (which the lookups still
	 * use), then sort once: '*' on 10 000 jobs stays instant. */
	t->marks = xreallocarray(t->marks, t->nmarks + unmarked, sizeof(*t->marks));
	for (i = 0; i < t->nlines; i++) {
		const struct jt_entry *e;
		if (!is_job(t, i))
			continue;
		e = &t->entries[t->lines[i].entry];
		if (!jt_is_marked(t, e))
			t->marks[t->nmarks + added++] = xstrdup(e->key);
	}
	t->nmarks += added;
	qsort(t->marks, t->nmarks, sizeof(*t->marks), cmp_str);
}

void jt_clear_marks(struct jobtable *t)
{
	size_t i;

	for (i = 0; i < t->nmarks; i++)
		free(t->marks[i]);
	free(t->marks);
	t->marks = NULL;
	t->nmarks = 0;
}

size_t jt_targets(const struct jobtable *t, const struct jt_entry ***out)
{
	size_t i, n = 0;
	const struct jt_entry **v = xcalloc(t->nlines + 1, sizeof(*v));

	for (i = 0; i < t->nlines; i++)
		if (is_job(t, i) && jt_is_marked(t, &t->entries[t->lines[i].entry]))
			v[n++] = &t->entries[t->lines[i].entry];
	if (n == 0 && jt_selected(t) != NULL)
		v[n++] = jt_selected(t);
	*out = v;
	return n;
}

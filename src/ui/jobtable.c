#include "ui/jobtable.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/state.h"
#include "engine/track/tracker.h"
#include "util/buf.h"
#include "util/xmalloc.h"

void jt_init(struct jobtable *t)
{
	memset(t, 0, sizeof(*t));
}

static void clear_entries(struct jobtable *t)
{
	t->n = 0;
	buf_reset(&t->text);
}

void jt_free(struct jobtable *t)
{
	clear_entries(t);
	buf_free(&t->text);
	free(t->entries);
	free(t->lines);
	free(t->sel_key);
	jt_clear_marks(t);
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

	/* Grouped: a header before each cluster's first job. */
	free(t->lines);
	t->lines = xcalloc(njobs * 2 + 1, sizeof(*t->lines));
	out = 0;
	for (i = 0; i < njobs; i++) {
		const struct jt_entry *e = &t->entries[jobs[i].entry];
		if (t->group && (i == 0 || t->entries[jobs[i - 1].entry].cluster != e->cluster)) {
			t->lines[out].header = 1;
			t->lines[out++].cluster = e->cluster;
		}
		t->lines[out++] = jobs[i];
	}
	t->nlines = out;
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

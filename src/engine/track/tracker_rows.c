#include "engine/track/tracker_priv.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/slurm/duration.h"
#include "engine/store/recindex.h"
#include "engine/store/store.h"
#include "engine/slurm/slurm.h"
#include "util/xmalloc.h"

/* ---- rows ----------------------------------------------------------------------------- */

struct job_row *tracker_row_add(struct poll_result *res)
{
	/* Doubling: ten thousand rows grown one at a time is ten thousand
	 * reallocations of megabytes. */
	if (res->n == res->rows_cap) {
		res->rows_cap = res->rows_cap ? res->rows_cap * 2 : 64;
		res->rows = xreallocarray(res->rows, res->rows_cap, sizeof(*res->rows));
	}
	memset(&res->rows[res->n], 0, sizeof(res->rows[0]));
	res->rows[res->n].elapsed_s = res->rows[res->n].limit_s = -1;
	return &res->rows[res->n++];
}

/* What SLURM said over what the row knew; what this answer leaves out
 * stays: GPUs only when it said them (sacct's id batch does not), and
 * accounting's first word on a job cancelled while pending has no
 * partition or limit yet (22.05 records it as "allocation", no limit). */
void tracker_row_from_slurm(struct job_row *row, const struct slurm_job *j)
{
	set_text(row->slurm_id, sizeof(row->slurm_id), j->id);
	set_text(row->shown_id, sizeof(row->shown_id), j->shown_id);
	if ((j->partition[0] != '\0' || row->partition == NULL) &&
	    !slurm_partition_keep(row->partition, j->partition))
		record_set(&row->partition, j->partition);
	if (j->nodes > 0 || row->nodes == 0)
		row->nodes = j->nodes;
	if (j->gpus_known || !row->gpus_known) {
		row->gpus = j->gpus;
		row->gpus_known = j->gpus_known;
	}
	if (j->elapsed_s >= 0 || row->elapsed_s < 0) {
		set_text(row->elapsed, sizeof(row->elapsed), j->elapsed);
		row->elapsed_s = j->elapsed_s;
	}
	if (j->limit_s >= 0 || row->limit_s < 0) {
		set_text(row->limit, sizeof(row->limit), j->limit);
		row->limit_s = j->limit_s;
	}
	if (j->exit_code[0] != '\0')
		set_text(row->exit_code, sizeof(row->exit_code), j->exit_code);
}

/* What the record kept of its allocation (NULL: nothing). */
static void fill_from_alloc(struct job_row *row, const struct record_alloc *al)
{
	row->elapsed_s = row->limit_s = -1;
	if (al == NULL)
		return;
	record_set(&row->partition, al->partition[0] ? al->partition : NULL);
	row->nodes = al->nodes;
	row->gpus = al->gpus;
	row->gpus_known = al->gpus > 0;
	row->elapsed_s = al->elapsed_s;
	row->limit_s = al->limit_s;
	duration_format(al->elapsed_s, row->elapsed, sizeof(row->elapsed));
	duration_format(al->limit_s, row->limit, sizeof(row->limit));
	set_text(row->exit_code, sizeof(row->exit_code), al->exit_code);
}

/* TAO's progress in a row (status.json's so far, or what a finished
 * job's record kept: the same fields in two structs). */
static void row_progress(struct job_row *row, int epoch, int max_epoch, const char *eta,
    const char *metric, const double *series, size_t n)
{
	row->epoch = epoch;
	row->max_epoch = max_epoch;
	snprintf(row->eta, sizeof(row->eta), "%s", eta);
	snprintf(row->metric, sizeof(row->metric), "%s", metric);
	if (n > 0) {
		row->series = (void *)xmemdup(series, n * sizeof(*row->series));
		row->nseries = n;
	}
}

/* A record's row as the index (or its parsed file: recindex_meta_of) has it;
 * row is overwritten. */
void tracker_row_of_meta(struct job_row *row, const struct rec_meta *m)
{
	const struct record_progress *p = m->progress;

	memset(row, 0, sizeof(*row));
	row->epoch = row->max_epoch = -1;
	if (p != NULL)
		row_progress(row, p->epoch, p->max_epoch, p->eta, p->metric, p->series, p->nseries);
	row->record_id = xstrdup(m->id);
	/* The run's own name when it was given one (runs of a sweep differ
	 * there), else what it is ("classification_pyt train"): the id has
	 * its own column. */
	if (m->name != NULL && m->name[0] != '\0')
		row->name = xstrdup(m->name);
	else if (m->network_arch != NULL && m->action != NULL)
		row->name = xasprintf("%s %s", m->network_arch, m->action);
	else
		row->name = xstrdup(m->id);
	row->state = m->state;
	/* A job that ended has no time left to estimate (a failed one kept
	 * the ETA of its last epoch). */
	if (tao_state_final(m->state))
		row->eta[0] = '\0';
	row->segments = m->segments;
	row->requeued = m->requeued;
	memcpy(row->efficiency, m->figure, sizeof(row->efficiency));
	row->segments_more = -1;
	row->eta_total_s = -1;
	row->native = m->native != NULL ? xstrdup(m->native) : NULL;
	row->created = m->created;
	if (m->message != NULL)
		row->message = xstrdup(m->message);
	if (m->backend_ref != NULL)
		set_text(row->slurm_id, sizeof(row->slurm_id), m->backend_ref);
	fill_from_alloc(row, m->alloc);
}

const char *tracker_row_label(const struct job_row *row)
{
	/* requeued is the record's (Pending, record_requeued); the state may
	 * be SLURM's newer word, the next segment already running. */
	if (row->requeued && row->state == TAO_PENDING)
		return "Requeued";
	return row->ending && !tao_state_final(row->state) ? "Ending"
	    : tao_state_label(row->state, row->native);
}

/* A running segment's run: how many more segments TAO's eta needs past
 * this one's child timeout, and the eta over them with the queue's mean
 * wait between the segments so far (none seen: not counted). */
static void segments_ahead(struct job_row *row, const struct job_record *r,
    const struct tao_status *ts)
{
	const struct record_segment *s;
	long child = r->child_timeout_s, left, wait = 0;
	size_t i, nwait = 0;

	if (ts->eta_s < 0 || child <= 0 || r->nseg == 0)
		return;
	s = &r->seg[r->nseg - 1];
	left = s->start != 0 ? child - (long)(time(NULL) - s->start) : child;
	if (left < 0)
		left = 0;
	row->segments_more = ts->eta_s > left ? (int)((ts->eta_s - left + child - 1) / child) : 0;
	for (i = 1; i < r->nseg; i++)
		if (r->seg[i].start != 0 && r->seg[i - 1].end != 0 &&
		    r->seg[i].start >= r->seg[i - 1].end) {
			wait += (long)(r->seg[i].start - r->seg[i - 1].end);
			nwait++;
		}
	row->eta_total_s = ts->eta_s + (nwait > 0 ? row->segments_more * (wait / (long)nwait) : 0);
}

/* A parsed record's row, with TAO's progress so far (ts, or NULL) and
 * what SLURM says of it now (j, or NULL); row is overwritten. */
void tracker_row_fill(struct job_row *row, const struct job_record *r,
    const struct slurm_job *j, const struct tao_status *ts)
{
	struct rec_meta m;

	recindex_meta_of(r, &m);
	if (ts != NULL)
		m.progress = NULL;	/* a running job: what status.json says */
	tracker_row_of_meta(row, &m);
	if (ts != NULL)
		row_progress(row, ts->epoch, ts->max_epoch, ts->eta, ts->metric, ts->series,
		    ts->nseries);
	if (j != NULL)
		tracker_row_from_slurm(row, j);
	if (ts != NULL)
		segments_ahead(row, r, ts);
	if (r->tao_final != TAO_UNKNOWN && !tao_state_final(r->state)) {
		row->ending = 1;
		free(row->message);
		row->message = xasprintf("%s (SLURM still runs it)", r->tao_final_message
		    ? r->tao_final_message : tao_state_name(r->tao_final));
	}
}

/* A job of the user's that is not taotop's; prev: its state as last seen
 * (TAO_UNKNOWN: never). */
void tracker_row_of_foreign(struct job_row *row, const struct slurm_job *j, enum tao_state prev)
{
	struct native_state ns;

	native_state_map(j->state, &ns);
	tracker_row_from_slurm(row, j);
	/* The name the queue showed stands: accounting may not have it yet. */
	if (row->name == NULL || !j->from_sacct)
		record_set(&row->name, j->name);
	row->state = native_state_next(&ns, prev);
	record_set(&row->native, ns.word);
	if (j->reason[0] != '\0' && !ns.final)
		record_set(&row->message, j->reason);
	else if (ns.final && j->exit_code[0] != '\0' && strcmp(j->exit_code, "0:0") != 0) {
		free(row->message);
		row->message = xasprintf("exit code %s", j->exit_code);
	}
	else
		record_set(&row->message, NULL);
	row->epoch = row->max_epoch = -1;
}

void tracker_row_clear(struct job_row *r)
{
	if (r->shared) {
		memset(r, 0, sizeof(*r));	/* its page's */
		return;
	}
	free(r->record_id);
	free(r->name);
	free(r->partition);
	free(r->native);
	free(r->message);
	free(r->series);
	series_shared_unref(r->curves);
	memset(r, 0, sizeof(*r));
}

void tracker_row_copy(struct job_row *dst, const struct job_row *src)
{
	*dst = *src;
	dst->shared = 0;
	dst->record_id = src->record_id ? xstrdup(src->record_id) : NULL;
	dst->name = src->name ? xstrdup(src->name) : NULL;
	dst->partition = src->partition ? xstrdup(src->partition) : NULL;
	dst->native = src->native ? xstrdup(src->native) : NULL;
	dst->message = src->message ? xstrdup(src->message) : NULL;
	dst->curves = series_shared_ref(src->curves);
	dst->series = NULL;
	dst->nseries = 0;
	if (src->nseries > 0) {
		dst->series = xcalloc(src->nseries, sizeof(*dst->series));
		memcpy(dst->series, src->series, src->nseries * sizeof(*dst->series));
		dst->nseries = src->nseries;
	}
}

/* *dst, a string a row owns, set to src: kept when it says the same. */
static void keep_or_set(char **dst, const char *src)
{
	if (!same(*dst, src))
		record_set(dst, src);
}

/* dst (an owned row) made what src is, its strings and series kept where
 * they are the same: the user's other jobs are noted again at every poll,
 * and most of them say what they said (a queue of held jobs). */
void tracker_row_assign(struct job_row *dst, const struct job_row *src)
{
	struct job_row was = *dst;

	if (src->shared || dst->shared) {
		tracker_row_clear(dst);
		tracker_row_copy(dst, src);
		return;
	}
	*dst = *src;
	dst->record_id = was.record_id;
	dst->name = was.name;
	dst->partition = was.partition;
	dst->native = was.native;
	dst->message = was.message;
	keep_or_set(&dst->record_id, src->record_id);
	keep_or_set(&dst->name, src->name);
	keep_or_set(&dst->partition, src->partition);
	keep_or_set(&dst->native, src->native);
	keep_or_set(&dst->message, src->message);
	dst->curves = series_shared_ref(src->curves);
	series_shared_unref(was.curves);
	dst->series = was.series;
	dst->nseries = was.nseries;
	if (src->nseries != was.nseries || (src->nseries > 0 &&
	    memcmp(src->series, was.series, src->nseries * sizeof(*src->series)) != 0)) {
		free(dst->series);
		dst->series = src->nseries > 0 ? (void *)xmemdup(src->series,
		    src->nseries * sizeof(*src->series)) : NULL;
		dst->nseries = src->nseries;
	}
}

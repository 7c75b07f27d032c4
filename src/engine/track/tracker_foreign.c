#include "engine/track/tracker_priv.h"


#include "engine/store/recindex.h"
#include "engine/slurm/slurm.h"
#include "util/strmap.h"
#include "util/xmalloc.h"

/* ---- the scheduler's answer -------------------------------------------------------------- */

void tracker_jobmap_build(struct jobmap *m, const struct slurm_poll *p)
{
	size_t k;

	m->queue = strmap_new();
	m->acct = strmap_new();
	for (k = 0; k < p->n; k++) {
		const struct slurm_job *j = &p->jobs[k];
		if (j->from_sacct)
			strmap_put(m->acct, j->id, (void *)j);
		else if (strmap_get(m->queue, j->id) == NULL)
			strmap_put(m->queue, j->id, (void *)j);
	}
}

void tracker_jobmap_free(struct jobmap *m)
{
	strmap_free(m->queue);
	strmap_free(m->acct);
}

/* id in the queue's answer (from_sacct 0) or accounting's (1). */
static const struct slurm_job *find_job(const struct jobmap *m, const char *id, int from_sacct)
{
	return strmap_get(from_sacct ? m->acct : m->queue, id);
}

/* The queue's word on id, else accounting's. */
const struct slurm_job *tracker_jobmap_any(const struct jobmap *m, const char *id)
{
	const struct slurm_job *j = find_job(m, id, 0);

	return j != NULL ? j : find_job(m, id, 1);
}

/* ---- the user's other jobs --------------------------------------------------------------- */

static struct seen_job *seen_note(struct tracker *t, const struct job_row *row);

/* The job of the user's other jobs seen as id, or NULL. */
static struct seen_job *seen_find(struct tracker *t, const char *id)
{
	size_t at = (size_t)(uintptr_t)strmap_get(t->seen_ix, id);

	return at > 0 ? &t->seen[at - 1] : NULL;
}

/* Accounting's finished jobs of the history window the user's other jobs
 * do not hold yet (or hold as not ended): kept as ended, like the ones
 * seen leaving the queue. Live ones come from the queue, taotop's own
 * from their records. */
static void seen_from_history(struct tracker *t, const struct slurm_poll *p,
    const struct jobmap *jm, struct rec_index *ix)
{
	size_t k;

	for (k = 0; k < p->n; k++) {
		const struct slurm_job *j = &p->jobs[k];
		struct native_state ns;
		struct seen_job *sj;
		struct job_row row;

		if (!j->from_history || find_job(jm, j->id, 0) != NULL || recindex_has_ref(ix, j->id))
			continue;
		native_state_map(j->state, &ns);
		if (!ns.final)
			continue;	/* live, or accounting lags: the queue says */
		sj = seen_find(t, j->id);
		if (sj != NULL && sj->ended)
			continue;
		memset(&row, 0, sizeof(row));
		row.elapsed_s = row.limit_s = -1;
		if (sj != NULL)
			tracker_row_copy(&row, &sj->row);	/* keeps the GPUs the queue said */
		tracker_row_of_foreign(&row, j, row.state);
		seen_note(t, &row)->ended = 1;
		tracker_row_clear(&row);
	}
}

/* Remember (or refresh) a job of the user's other jobs. */
static struct seen_job *seen_note(struct tracker *t, const struct job_row *row)
{
	struct seen_job *sj = seen_find(t, row->slurm_id);

	if (sj != NULL) {
		tracker_row_assign(&sj->row, row);
		return sj;
	}
	t->seen = xreallocarray(t->seen, t->nseen + 1, sizeof(*t->seen));
	t->seen[t->nseen].ended = 0;
	tracker_row_copy(&t->seen[t->nseen].row, row);
	strmap_put(t->seen_ix, row->slurm_id, (void *)(uintptr_t)(t->nseen + 1));
	return &t->seen[t->nseen++];
}

/* Forget the oldest ended jobs beyond SEEN_MAX. */
static void seen_prune(struct tracker *t)
{
	size_t i, out = 0, excess = t->nseen > SEEN_MAX ? t->nseen - SEEN_MAX : 0;

	if (excess == 0)
		return;
	strmap_clear(t->seen_ix);
	for (i = 0; i < t->nseen; i++) {
		if (excess > 0 && t->seen[i].ended) {
			tracker_row_clear(&t->seen[i].row);
			excess--;
			continue;
		}
		t->seen[out] = t->seen[i];
		strmap_put(t->seen_ix, t->seen[out].row.slurm_id, (void *)(uintptr_t)(out + 1));
		out++;
	}
	t->nseen = out;
}

/* The user's other jobs: live ones the records do not know, then the
 * ones seen earlier that left the queue. */
void tracker_foreign_rows(struct tracker *t, struct poll_result *res, const struct slurm_poll *p,
    const struct jobmap *jm, struct rec_index *ix)
{
	size_t i, k;

	for (k = 0; k < p->n; k++) {
		struct job_row *row;
		struct seen_job *was;
		if (p->jobs[k].from_sacct || recindex_has_ref(ix, p->jobs[k].id))
			continue;
		was = seen_find(t, p->jobs[k].id);
		row = tracker_row_add(res);
		tracker_row_of_foreign(row, &p->jobs[k], was != NULL ? was->row.state : TAO_UNKNOWN);
		seen_note(t, row);
	}
	if (t->hist_asked && p->history_rc == 0 && res->scheduler_ok)
		seen_from_history(t, p, jm, ix);
	for (i = 0; i < t->nseen; i++) {
		struct seen_job *sj = &t->seen[i];
		if (recindex_has_ref(ix, sj->row.slurm_id))
			continue;
		if (res->scheduler_ok && find_job(jm, sj->row.slurm_id, 0) != NULL)
			continue;	/* live: shown above */
		if (!sj->ended && res->scheduler_ok) {
			const struct slurm_job *j = find_job(jm, sj->row.slurm_id, 1);
			if (j != NULL && res->accounting_ok) {
				struct native_state ns;
				tracker_row_of_foreign(&sj->row, j, sj->row.state);
				native_state_map(j->state, &ns);
				sj->ended = ns.final;
			} else {
				res->waiting_for_accounting = 1;
			}
		}
		tracker_row_copy(tracker_row_add(res), &sj->row);
	}
	seen_prune(t);
}

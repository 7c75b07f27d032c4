/*
 * The sample request: GPU use rounds (engine/track/usage.c) after a poll,
 * their answers and flags, and the jobs sampled on request.
 */
#include "engine/watch/watch_priv.h"

#include <string.h>

#include "engine/config/config.h"
#include "util/log.h"

/* A sampling round: the remote command, the history and flags (the
 * tracker is this worker's), the flags noted in the records. */
void watch_run_sample(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct sample_req *s = &t->u.sample;
	struct cluster *cl = &t->w->cl[t->ci];
	struct use_round r;
	char *err = NULL;
	int have = 0;

	if (use_sample_behind(c, cl->use, s->uj, s->nuj, &r, &have, &err) != 0) {
		wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
		wt->err = err;
		return;
	}
	s->first = !have;
	if (!have) {
		return;
	} else if (r.unavailable != NULL) {
		s->off = r.unavailable;
		r.unavailable = NULL;
	} else {
		use_tracker_fold(cl->use, &r, s->uj, s->nuj, &s->lim, watch_now_ms(), &s->use,
		    &s->nuse, &s->uev, &s->nuev);
		use_note_events(t->w->store, s->uev, s->nuev);
		use_fold_records(t->w->store, s->use, s->nuse, s->uj, s->nuj, s->lim.idle_percent);
	}
	use_round_free(&r);
}

void watch_free_sample(struct task *t)
{
	struct sample_req *s = &t->u.sample;
	size_t i;

	for (i = 0; i < s->nuj; i++) {
		free((char *)s->uj[i].slurm_id);
		free((char *)s->uj[i].record_id);
	}
	free(s->uj);
	free(s->use);
	use_events_free(s->uev, s->nuev);
	free(s->off);
}

static int asked_for(const struct cluster *cl, const char *id)
{
	size_t k;

	for (k = 0; k < USE_ASKED; k++)
		if (cl->asked[k] != NULL && strcmp(cl->asked[k], id) == 0)
			return 1;
	return 0;
}

/* When a round is due, right after a poll, or between polls when the next
 * is at least USE_GAP_MS away. The round's command only reads the last
 * round's answer and starts the next behind it on the login node
 * (engine/track/usage.h): it returns in a round trip, whatever the jobs' nodes
 * do, so it does not stand in a poll's way on the worker's queue. The jobs: taotop's running ones, and the others the
 * user asked about, from the latest poll. */
void watch_maybe_sample(struct watch *w, size_t ci, int64_t now)
{
	struct cluster *cl = &w->cl[ci];
	struct watched *p = &cl->pub;
	struct task *t;
	struct sample_req *s;
	size_t i, n = 0;

	if (p->cfg->use_s <= 0 || p->use_off != NULL || cl->use_busy || now < cl->next_use_ms)
		return;
	t = watch_task_new(w, ci, T_SAMPLE);
	s = &t->u.sample;
	s->uj = xcalloc(p->last.n + 1, sizeof(*s->uj));
	for (i = 0; i < p->last.n; i++) {
		const struct job_row *r = &p->last.rows[i];
		if (r->state != TAO_RUNNING || !use_id_ok(r->slurm_id) ||
		    (r->native != NULL && strcmp(r->native, "RUNNING") != 0) ||
		    (r->record_id == NULL && !asked_for(cl, r->slurm_id)))
			continue;
		s->uj[n].slurm_id = xstrdup(r->slurm_id);
		s->uj[n].record_id = r->record_id != NULL ? xstrdup(r->record_id) : NULL;
		s->uj[n].nodes = r->nodes > 0 ? r->nodes : 1;
		s->uj[n].epoch = r->epoch;
		n++;
	}
	s->nuj = n;
	if (n == 0) {
		/* Nothing runs: forget what was; look again after a poll
		 * interval, not at every wake-up. */
		free(p->use);
		p->use = NULL;
		p->nuse = 0;
		cl->next_use_ms = now + (int64_t)p->cfg->poll_s * 1000;
		watch_task_free(t);
		return;
	}
	s->lim.idle_percent = p->cfg->idle_percent;
	s->lim.idle_s = p->cfg->idle_s;
	s->lim.stall_s = p->cfg->stall_s;
	cl->use_busy = 1;
	log_msg(LOG_DEBUG, "monitor: %s: sampling %zu jobs", p->cfg->name, n);
	worker_submit(cl->worker, &t->wt);
}

void watch_done_sample(struct watch *w, struct cluster *cl, struct task *t)
{
	struct sample_req *s = &t->u.sample;
	struct watched *p = &cl->pub;
	int64_t now = watch_now_ms();
	size_t i;

	cl->use_busy = 0;
	if (t->wt.status != CONN_OK) {
		/* Like the poll: back off while it fails. */
		log_msg(LOG_WARN, "monitor: %s: sampling failed: %s", p->cfg->name,
		    t->wt.err ? t->wt.err : "?");
		if (cl->use_backoff < USE_BACKOFF)
			cl->use_backoff *= 2;
		cl->next_use_ms = now + (int64_t)p->cfg->use_s * cl->use_backoff * 1000;
		return;
	}
	cl->use_backoff = 1;
	cl->next_use_ms = now + (int64_t)p->cfg->use_s * 1000;
	if (s->first) {
		/* Its answer is read with the next round: soon, the first time. */
		if (p->cfg->use_s > USE_FIRST_S)
			cl->next_use_ms = now + USE_FIRST_S * 1000;
		return;
	}
	if (s->off != NULL) {
		/* Said once, never tried again on this cluster. */
		log_msg(LOG_WARN, "monitor: %s: GPU use not available: %s", p->cfg->name, s->off);
		p->use_off = s->off;
		s->off = NULL;
		free(p->use);
		p->use = NULL;
		p->nuse = 0;
		watch_queue_push_state(&w->q, WATCH_EV_USE, t->ci);
		watch_queue_push_state(&w->q, WATCH_EV_LINK, t->ci);
		return;
	}
	free(p->use);
	p->use = s->use;
	p->nuse = s->nuse;
	s->use = NULL;
	p->use_rounds++;
	/* The round first, then what it flagged: a flag's job is in it. */
	watch_queue_push_state(&w->q, WATCH_EV_USE, t->ci);
	for (i = 0; i < s->nuev; i++) {
		struct watch_event *ev = watch_queue_push(&w->q, WATCH_EV_FLAG, t->ci);
		ev->u.flag.job = xstrdup(s->uev[i].record_id ? s->uev[i].record_id
		    : s->uev[i].slurm_id);
		ev->u.flag.text = xstrdup(s->uev[i].text);
	}
}

const struct job_use *watch_use(const struct watch *w, size_t cluster, const char *slurm_id)
{
	const struct watched *p;
	size_t i;

	if (cluster >= w->n || slurm_id == NULL)
		return NULL;
	p = &w->cl[cluster].pub;
	for (i = 0; i < p->nuse; i++)
		if (strcmp(p->use[i].slurm_id, slurm_id) == 0)
			return &p->use[i];
	return NULL;
}

void watch_use_request(struct watch *w, size_t cluster, const char *slurm_id)
{
	struct cluster *cl;

	if (cluster >= w->n || !use_id_ok(slurm_id))
		return;
	cl = &w->cl[cluster];
	if (asked_for(cl, slurm_id))
		return;
	/* The newest few: the oldest makes room. */
	free(cl->asked[USE_ASKED - 1]);
	memmove(&cl->asked[1], &cl->asked[0], (USE_ASKED - 1) * sizeof(cl->asked[0]));
	cl->asked[0] = xstrdup(slurm_id);
	cl->next_use_ms = 0;	/* with the next poll */
}

/*
 * The follow request: a followed log's reads on the worker, its lines into
 * the rings; watch_follow picks the log the user looks at.
 */
#include "engine/watch/watch_priv.h"

#include <string.h>

#include "engine/logs/logpath.h"

void watch_run_follow(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct follow_req *r = &t->u.follow;
	struct follower *lf = r->log;
	char *err = NULL;
	int i;

	if (lf->f[0].path == NULL || lf->f[1].path == NULL) {
		/* The first screen of both panes: the paths (from the record,
		 * or one question to the queue) and both tails in one command. */
		const char *paths[2];
		uint64_t end[2] = { 0, 0 };
		int missing[2] = { 0, 0 };

		if (job_log_paths(c, t->w->store, lf->pub.job, r->path, &err) != 0)
			goto fail;
		for (i = 0; i < 2; i++) {
			if (r->path[i] == NULL) {
				err = xasprintf("%s: SLURM reports no %s path", lf->pub.job,
				    i ? "StdErr" : "StdOut");
				goto fail;
			}
			paths[i] = r->path[i];
		}
		if (log_tails(c, paths, 2, LOG_TAIL_LINES, 1, r->got, end, missing, &err) != 0)
			goto fail;
		for (i = 0; i < 2; i++) {
			log_follow_free(&lf->f[i]);
			log_follow_init(&lf->f[i], paths[i], missing[i] ? 0 : end[i]);
		}
		return;
	}
	/* Both panes' follow tick: one round trip. */
	if (log_follow_ticks(lf->f, 2, c, r->got, &err) != 0)
		goto fail;
	return;
fail:
	wt->status = conn_is_connected(c) ? CONN_REMOTE : CONN_DISCONNECTED;
	wt->err = err;
}

void watch_free_follow(struct task *t)
{
	struct follow_req *r = &t->u.follow;

	buf_free(&r->got[0]);
	buf_free(&r->got[1]);
	free(r->path[0]);
	free(r->path[1]);
}

void watch_follower_free(struct follower *lf)
{
	int i;

	if (lf == NULL)
		return;
	for (i = 0; i < 2; i++) {
		log_ring_free(&lf->pub.ring[i]);
		log_follow_free(&lf->f[i]);
		free(lf->pub.path[i]);
	}
	free(lf->pub.job);
	free(lf->pub.error);
	free(lf);
}

void watch_done_follow(struct watch *w, struct cluster *cl, struct task *t)
{
	struct follow_req *r = &t->u.follow;
	struct follower *lf = r->log;
	int i, got = 0;

	lf->pub.reading_ms = 0;
	/* The worker runs tasks in turn: another read still queued starts now. */
	cl->pub.read_started_ms = --cl->reads > 0 ? watch_now_ms() : 0;
	for (i = 0; i < 2; i++) {
		if (r->path[i] != NULL) {
			free(lf->pub.path[i]);
			lf->pub.path[i] = r->path[i];
			r->path[i] = NULL;
		}
		if (lf->f[i].restarted) {
			/* The file shrank (rotated, a requeued job started
			 * over): what we hold is no longer its text. */
			log_ring_clear(&lf->pub.ring[i]);
			lf->f[i].restarted = 0;
			got = 1;
		}
		if (r->got[i].len > 0) {
			log_ring_push_lines(&lf->pub.ring[i], r->got[i].data, r->got[i].len);
			got = 1;
		}
	}
	if (t->wt.status == CONN_OK) {
		if (lf->pub.error != NULL || !lf->pub.loaded)
			got = 1;
		watch_set_str(&lf->pub.error, NULL);
		lf->pub.loaded = 1;
		lf->pub.read_ms = watch_now_ms();
	} else if (lf->pub.error == NULL || strcmp(lf->pub.error, t->wt.err ? t->wt.err : "") != 0) {
		watch_set_str(&lf->pub.error, t->wt.err ? t->wt.err : "the log could not be read");
		got = 1;
	}
	lf->interval_ms = got ? FOLLOW_MIN_MS : lf->interval_ms * 2;
	if (lf->interval_ms > FOLLOW_MAX_MS)
		lf->interval_ms = FOLLOW_MAX_MS;
	lf->next_ms = watch_now_ms() + lf->interval_ms;
	if (got)
		lf->pub.generation++;
	if (got && lf == w->cur)
		watch_queue_push_state(&w->q, WATCH_EV_LOG, t->ci);
}

struct watch_log *watch_follow(struct watch *w, size_t cluster, const char *job)
{
	struct follower *lf = NULL;
	size_t i, slot = LOG_CACHED;

	if (job == NULL || cluster >= w->n) {
		w->cur = NULL;
		return NULL;
	}
	for (i = 0; i < LOG_CACHED && lf == NULL; i++)
		if (w->logs[i] != NULL && w->logs[i]->pub.cluster == cluster &&
		    strcmp(w->logs[i]->pub.job, job) == 0)
			lf = w->logs[i];
	if (lf == NULL) {
		/* A free slot, else the least recently used idle one. */
		for (i = 0; i < LOG_CACHED; i++) {
			if (w->logs[i] == NULL) {
				slot = i;
				break;
			}
			if (w->logs[i]->pub.reading_ms == 0 && (slot == LOG_CACHED ||
			    w->logs[i]->used < w->logs[slot]->used))
				slot = i;
		}
		if (slot == LOG_CACHED)
			return w->cur != NULL ? &w->cur->pub : NULL;	/* all busy: rare */
		watch_follower_free(w->logs[slot]);
		lf = xcalloc(1, sizeof(*lf));
		lf->pub.cluster = cluster;
		lf->pub.job = xstrdup(job);
		log_ring_init(&lf->pub.ring[0], LOG_RING_LINES);
		log_ring_init(&lf->pub.ring[1], LOG_RING_LINES);
		w->logs[slot] = lf;
	}
	lf->used = ++w->uses;
	lf->interval_ms = FOLLOW_MIN_MS;
	lf->next_ms = 0;	/* read now: switching back catches up at once */
	w->cur = lf;
	return &lf->pub;
}

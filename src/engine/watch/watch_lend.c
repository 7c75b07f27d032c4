/*
 * The monitor lends its sessions (ssh/lend.h): a lender's thread that has
 * a client's request for cluster i hands it to that cluster's worker as a
 * T_LEND task and waits; the worker runs it on the monitor's connection
 * between the monitor's own requests, so a command borrowing the session
 * never opens a connection of its own, and a one-time code the monitor
 * was given serves it too.
 */
#include "engine/watch/watch_priv.h"

#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/config/config.h"
#include "ssh/lend.h"
#include "util/log.h"

struct lend_call {
	pthread_mutex_t	 lock;
	pthread_cond_t	 cv;
	int		 state;		/* 0 queued, 2 running, 1 ran, -1 never will */
	int		 refs;		/* the waiting thread, the task */
	void		(*fn)(struct conn *c, void *arg);
	void		*arg;		/* the waiting thread's */
};

static void call_release(struct lend_call *lc)
{
	int last;

	pthread_mutex_lock(&lc->lock);
	last = --lc->refs == 0;
	pthread_mutex_unlock(&lc->lock);
	if (last) {
		pthread_cond_destroy(&lc->cv);
		pthread_mutex_destroy(&lc->lock);
		free(lc);
	}
}

void watch_run_lend(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct lend_call *lc = t->u.lend;
	int closed;

	/* The monitor is quitting: not started on a connection about to
	 * close (the client does it on its own). */
	pthread_mutex_lock(&t->w->lend_lock);
	closed = t->w->lend_closed;
	pthread_mutex_unlock(&t->w->lend_lock);
	pthread_mutex_lock(&lc->lock);
	if (closed && lc->state == 0) {
		lc->state = -1;
		pthread_cond_signal(&lc->cv);
	}
	if (lc->state != 0) {
		pthread_mutex_unlock(&lc->lock);
		return;
	}
	lc->state = 2;
	pthread_mutex_unlock(&lc->lock);
	lc->fn(c, lc->arg);
	pthread_mutex_lock(&lc->lock);
	lc->state = 1;
	pthread_cond_signal(&lc->cv);
	pthread_mutex_unlock(&lc->lock);
}

void watch_free_lend(struct task *t)
{
	struct lend_call *lc = t->u.lend;

	/* Never run (the worker stopped): the waiting thread hears so. */
	pthread_mutex_lock(&lc->lock);
	if (lc->state == 0) {
		lc->state = -1;
		pthread_cond_signal(&lc->cv);
	}
	pthread_mutex_unlock(&lc->lock);
	call_release(lc);
}

void watch_done_lend(struct watch *w, struct cluster *cl, struct task *t)
{
	(void)w, (void)cl, (void)t;
}

static void *lend_find(void *ctx, const char *key, const struct cJSON *target, char **why)
{
	struct watch *w = ctx;
	size_t i;

	(void)target;
	for (i = 0; i < w->n; i++) {
		if (w->lend_keys[i] == NULL || strcmp(w->lend_keys[i], key) != 0)
			continue;
		/* Only a session that is up: a client must not wait behind a
		 * reconnect or a question the monitor's user has not seen
		 * (the agent serves it instead). The link is the UI thread's:
		 * read here as a hint. */
		if (w->cl[i].pub.link != LINK_UP) {
			*why = xstrdup("the monitor's session to this cluster is not up");
			return NULL;
		}
		return &w->cl[i];
	}
	log_msg(LOG_DEBUG, "lend: no cluster of the monitor's is %s", key);
	for (i = 0; i < w->n; i++)
		log_msg(LOG_DEBUG, "lend: cluster %zu is %s", i, w->lend_keys[i]);
	*why = xstrdup("the monitor holds no session for this cluster as configured");
	return NULL;
}

static int lend_run(void *ctx, void *handle, void (*fn)(struct conn *c, void *arg), void *arg)
{
	struct watch *w = ctx;
	struct cluster *cl = handle;
	struct lend_call *lc = xcalloc(1, sizeof(*lc));
	struct task *t;
	int rc;

	pthread_mutex_init(&lc->lock, NULL);
	pthread_cond_init(&lc->cv, NULL);
	lc->refs = 2;
	lc->fn = fn;
	lc->arg = arg;
	pthread_mutex_lock(&w->lend_lock);
	if (w->lend_closed) {
		pthread_mutex_unlock(&w->lend_lock);
		lc->refs = 1;
		call_release(lc);
		return -1;
	}
	t = watch_task_new(w, (size_t)(cl - w->cl), T_LEND);
	t->u.lend = lc;
	worker_submit(cl->worker, &t->wt);
	pthread_mutex_unlock(&w->lend_lock);
	pthread_mutex_lock(&lc->lock);
	while (lc->state == 0 || lc->state == 2)
		pthread_cond_wait(&lc->cv, &lc->lock);
	rc = lc->state == 1 ? 0 : -1;
	pthread_mutex_unlock(&lc->lock);
	call_release(lc);
	return rc;
}

static void lend_status(void *ctx, cJSON *out)
{
	struct watch *w = ctx;
	cJSON *list = cJSON_AddArrayToObject(out, "sessions");
	size_t i;

	for (i = 0; i < w->n; i++) {
		cJSON *o = cJSON_CreateObject();
		const struct cluster_cfg *cfg = w->cl[i].pub.cfg;
		cJSON_AddStringToObject(o, "cluster", cfg->name);
		cJSON_AddStringToObject(o, "hosts", cfg->hosts != NULL ? cfg->hosts : "");
		if (cfg->user != NULL)
			cJSON_AddStringToObject(o, "user", cfg->user);
		/* link is the UI thread's: read as a hint, never written here */
		cJSON_AddBoolToObject(o, "connected", w->cl[i].pub.link == LINK_UP);
		cJSON_AddItemToArray(list, o);
	}
}

int watch_lend_start(struct watch *w, const struct config *cfg, char **err)
{
	struct lend_backend b = { .kind = "monitor", .find = lend_find, .run = lend_run, .ctx = w };
	const char *off = getenv("TAOTOP_NO_SHARE");
	char name[64], *dir;
	size_t i;

	if (!cfg->share || (off != NULL && off[0] != '\0' && strcmp(off, "0") != 0))
		return 1;
	if (w->lender != NULL)
		return 0;
	if ((dir = lend_dir(err)) == NULL)
		return -1;
	w->lend_keys = xcalloc(w->n > 0 ? w->n : 1, sizeof(*w->lend_keys));
	for (i = 0; i < w->n; i++) {
		struct conn_target t;
		cluster_target(w->cl[i].pub.cfg, &t);
		w->lend_keys[i] = lend_target_key(&t);
	}
	pthread_mutex_init(&w->lend_lock, NULL);
	snprintf(name, sizeof(name), "monitor-%d.sock", (int)getpid());
	w->lender = lender_start(dir, name, &b, err);
	free(dir);
	if (w->lender == NULL) {
		for (i = 0; i < w->n; i++)
			free(w->lend_keys[i]);
		free(w->lend_keys);
		w->lend_keys = NULL;
		pthread_mutex_destroy(&w->lend_lock);
		return -1;
	}
	lender_on_status(w->lender, lend_status, w);
	return 0;
}

void watch_lend_close(struct watch *w)
{
	if (w->lender == NULL)
		return;
	pthread_mutex_lock(&w->lend_lock);
	w->lend_closed = 1;
	pthread_mutex_unlock(&w->lend_lock);
}

void watch_lend_stop(struct watch *w)
{
	size_t i;

	if (w->lender == NULL)
		return;
	watch_lend_close(w);
	lender_stop(w->lender);
	w->lender = NULL;
	for (i = 0; i < w->n; i++)
		free(w->lend_keys[i]);
	free(w->lend_keys);
	w->lend_keys = NULL;
	pthread_mutex_destroy(&w->lend_lock);
}

unsigned watch_lent_clients(const struct watch *w)
{
	return w->lender != NULL ? lender_clients(w->lender) : 0;
}

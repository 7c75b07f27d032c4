/*
 * The submit request: the wizard's submit on the worker, its steps as news
 * under a lock, its end.
 */
#include "engine/watch/watch_priv.h"

#include <string.h>


/* On the worker thread: a step's news, kept for the UI thread. */
static void submit_progress(enum submit_step step, int state, const char *detail, void *data)
{
	struct task *t = data;
	struct submit_job *sj = t->u.submit.sub;

	pthread_mutex_lock(&sj->lock);
	sj->steps = xreallocarray(sj->steps, sj->nsteps + 1, sizeof(*sj->steps));
	sj->steps[sj->nsteps].step = (int)step;
	sj->steps[sj->nsteps].state = state;
	sj->steps[sj->nsteps].detail = detail != NULL ? xstrdup(detail) : NULL;
	sj->nsteps++;
	pthread_mutex_unlock(&sj->lock);
	worker_news(sj->worker, &t->wt);
}

void watch_run_submit(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct submit_job *sj = t->u.submit.sub;

	sj->opts.cancel = &wt->cancel;
	sj->rc = submit_run(c, t->w->store, t->w->cl[t->ci].pub.cfg, &sj->opts, submit_progress, t,
	    &sj->res, &sj->err);
}

static void steps_free(struct watch_step *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].detail);
	free(s);
}

static void submit_job_free(struct submit_job *sj)
{
	size_t i;

	if (sj == NULL)
		return;
	spec_free(&sj->spec);
	free(sj->bundle);
	for (i = 0; i < sj->nsecrets; i++) {
		/* The typed values go no further than the sidecar. */
		buf_mem_wipe(sj->secrets[i].value, strlen(sj->secrets[i].value));
		free(sj->secrets[i].key);
		free(sj->secrets[i].value);
	}
	free(sj->secrets);
	pthread_mutex_destroy(&sj->lock);
	steps_free(sj->steps, sj->nsteps);
	submit_result_free(&sj->res);
	free(sj->err);
	free(sj);
}

void watch_free_submit(struct task *t)
{
	submit_job_free(t->u.submit.sub);
}

/* A submit's steps, moved from its job to the queue, one event each. */
void watch_take_news(struct watch *w, size_t ci, struct submit_job *sj)
{
	struct watch_step *steps;
	size_t n, i;

	pthread_mutex_lock(&sj->lock);
	steps = sj->steps;
	n = sj->nsteps;
	sj->steps = NULL;
	sj->nsteps = 0;
	pthread_mutex_unlock(&sj->lock);
	for (i = 0; i < n; i++)
		watch_queue_push(&w->q, WATCH_EV_STEP, ci)->u.step = steps[i];
	free(steps);
}

void watch_done_submit(struct watch *w, struct cluster *cl, struct task *t)
{
	struct submit_job *sj = t->u.submit.sub;
	struct watch_event *ev;
	int ok = t->wt.status == CONN_OK && sj->rc == 0;

	watch_take_news(w, t->ci, sj);
	w->sub = NULL;
	cl->pub.submitting = 0;
	ev = watch_queue_push(&w->q, WATCH_EV_SUBMITTED, t->ci);
	ev->u.submitted.ok = ok;
	ev->u.submitted.res = sj->res;
	memset(&sj->res, 0, sizeof(sj->res));
	ev->u.submitted.err = sj->err != NULL ? sj->err : ok ? NULL : xstrdup(watch_task_why(t));
	sj->err = NULL;
	/* Show the new job at once; polls waited while it ran. */
	watch_poll_soon(cl);
	watch_queue_push_state(&w->q, WATCH_EV_LINK, t->ci);
}

int watch_submit(struct watch *w, size_t cluster, struct spec *spec, const char *bundle,
    struct spec_kv *secrets, size_t nsecrets, int dry_run)
{
	struct submit_job *sj;
	struct task *t;

	if (w->sub != NULL || cluster >= w->n)
		return -1;
	sj = xcalloc(1, sizeof(*sj));
	sj->spec = *spec;
	memset(spec, 0, sizeof(*spec));
	sj->bundle = bundle != NULL ? xstrdup(bundle) : NULL;
	sj->secrets = secrets;
	sj->nsecrets = nsecrets;
	sj->worker = w->cl[cluster].worker;
	pthread_mutex_init(&sj->lock, NULL);
	sj->opts.spec_path = sj->bundle;
	sj->opts.spec = &sj->spec;
	sj->opts.secrets = sj->secrets;
	sj->opts.nsecrets = sj->nsecrets;
	sj->opts.gpus = sj->opts.nodes = -1;
	sj->opts.time_hours = -1;
	/* What the form shows is what the user asked for, as flags are: the
	 * environment does not override a value typed there. */
	sj->opts.partition = sj->spec.partition;
	sj->opts.account = sj->spec.account;
	sj->opts.dry_run = dry_run;
	t = watch_task_new(w, cluster, T_SUBMIT);
	t->u.submit.sub = sj;
	w->sub = sj;
	w->cl[cluster].pub.submitting = 1;
	worker_submit(w->cl[cluster].worker, &t->wt);
	return 0;
}

int watch_submit_running(const struct watch *w)
{
	return w->sub != NULL;
}

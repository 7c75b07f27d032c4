/*
 * The fetch request: the job's staged files for the detail view; only the
 * newest fetch's answer is queued.
 */
#include "engine/watch/watch_priv.h"



void watch_run_fetch(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct fetch_req *r = &t->u.fetch;
	size_t i;

	r->files = xcalloc(r->n, sizeof(*r->files));
	for (i = 0; i < r->n; i++) {
		struct buf b;
		char *err = NULL;
		r->files[i].path = xstrdup(r->paths[i]);
		buf_init(&b);
		if (conn_read_at(c, r->paths[i], 0, FETCH_MAX, &b, &err) == CONN_OK) {
			if (b.data == NULL)
				buf_adds(&b, "");
			r->files[i].text = buf_detach(&b);
		} else {
			r->files[i].error = err ? err : xstrdup("could not be read");
			buf_free(&b);
		}
	}
}

void watch_free_fetch(struct task *t)
{
	struct fetch_req *r = &t->u.fetch;

	if (r->files != NULL)
		watch_files_free(r->files, r->n);
	watch_strv_free(r->paths, r->n);
}

void watch_done_fetch(struct watch *w, struct cluster *cl, struct task *t)
{
	struct fetch_req *r = &t->u.fetch;
	struct watch_event *ev;
	size_t i;

	(void)cl;
	if (r->seq != w->fetch_seq)
		return;		/* a newer fetch was asked: this one is moot */
	if (t->wt.status != CONN_OK) {
		/* Never ran: say so for each file. */
		if (r->files != NULL)
			watch_files_free(r->files, r->n);
		r->files = xcalloc(r->n, sizeof(*r->files));
		for (i = 0; i < r->n; i++) {
			r->files[i].path = xstrdup(r->paths[i]);
			r->files[i].error = xstrdup(watch_task_why(t));
		}
	}
	ev = watch_queue_push(&w->q, WATCH_EV_FILES, t->ci);
	ev->u.files.v = r->files;
	ev->u.files.n = r->n;
	r->files = NULL;
}

void watch_fetch(struct watch *w, size_t cluster, char *const *paths, size_t n)
{
	struct task *t;

	if (cluster >= w->n || n == 0)
		return;
	t = watch_task_new(w, cluster, T_FETCH);
	t->u.fetch.paths = watch_strv_dup(paths, n);
	t->u.fetch.n = n;
	t->u.fetch.seq = ++w->fetch_seq;
	worker_submit(w->cl[cluster].worker, &t->wt);
}


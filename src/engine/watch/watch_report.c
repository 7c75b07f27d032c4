/*
 * The report request: where a cluster's GPU hours went (the monitor's E),
 * as `taotop report` says it, on the cluster's worker.
 */
#include "engine/watch/watch_priv.h"

#include <stdio.h>
#include <string.h>

#include "engine/config/config.h"

#include "engine/store/report.h"
#include "engine/track/usage_report.h"

void watch_run_report(struct conn *c, struct worker_task *wt)
{
	struct task *t = (struct task *)wt;
	struct report_req *q = &t->u.report;
	struct report r;
	char since[32];

	memset(&r, 0, sizeof(r));
	if (usage_report_gather(c, t->w->store, t->w->cl[t->ci].pub.cfg->name, q->since_s, &r,
	    &q->err) == 0) {
		snprintf(since, sizeof(since), "%ldd", q->since_s / 86400);
		q->n = report_lines(&r, since, &q->lines);
	}
	report_free(&r);
}

void watch_free_report(struct task *t)
{
	struct report_req *q = &t->u.report;

	for (size_t i = 0; i < q->n; i++)
		free(q->lines[i]);
	free(q->lines);
	free(q->err);
}

void watch_done_report(struct watch *w, struct cluster *cl, struct task *t)
{
	struct report_req *q = &t->u.report;
	struct watch_event *ev = watch_queue_push(&w->q, WATCH_EV_REPORT, t->ci);

	(void)cl;
	if (q->lines != NULL && q->err == NULL) {
		ev->u.report.lines = q->lines;
		ev->u.report.n = q->n;
		q->lines = NULL;
		q->n = 0;
	} else {
		ev->u.report.err = q->err != NULL ? q->err : xstrdup(watch_task_why(t));
		q->err = NULL;
	}
}

void watch_report(struct watch *w, size_t cluster, long since_s)
{
	struct task *t;

	if (cluster >= w->n)
		return;
	t = watch_task_new(w, cluster, T_REPORT);
	t->u.report.since_s = since_s;
	worker_submit(w->cl[cluster].worker, &t->wt);
}

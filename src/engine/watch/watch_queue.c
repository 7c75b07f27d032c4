#include "engine/watch/watch_queue.h"

#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

struct wq_node {
	struct watch_event	 ev;
	struct wq_node		*next;
};

struct watch_event *wq_push(struct watch_queue *q, enum watch_kind kind, size_t cluster)
{
	struct wq_node *n = xcalloc(1, sizeof(*n));

	n->ev.kind = kind;
	n->ev.cluster = cluster;
	if (q->tail != NULL)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	return &n->ev;
}

void wq_push_state(struct watch_queue *q, enum watch_kind kind, size_t cluster)
{
	const struct wq_node *n;

	/* The queue is short (the UI empties it after each dispatch): a walk
	 * costs less than keeping an index of it right. */
	for (n = q->head; n != NULL; n = n->next)
		if (n->ev.kind == kind && n->ev.cluster == cluster)
			return;
	wq_push(q, kind, cluster);
}

int wq_next(struct watch_queue *q, struct watch_event *ev)
{
	struct wq_node *n = q->head;

	if (n == NULL)
		return 0;
	*ev = n->ev;
	q->head = n->next;
	if (q->head == NULL)
		q->tail = NULL;
	free(n);
	return 1;
}

void wq_free(struct watch_queue *q)
{
	struct watch_event ev;

	while (wq_next(q, &ev))
		watch_event_free(&ev);
}

void watch_event_free(struct watch_event *ev)
{
	switch (ev->kind) {
	case WATCH_EV_JOBS:
	case WATCH_EV_LINK:
	case WATCH_EV_LOG:
	case WATCH_EV_HOSTKEY:
	case WATCH_EV_ASK:
	case WATCH_EV_USE:
		break;
	case WATCH_EV_OUTCOMES:
		watch_outcomes_free(ev->u.outcomes.v, ev->u.outcomes.n);
		break;
	case WATCH_EV_FILES:
		watch_files_free(ev->u.files.v, ev->u.files.n);
		break;
	case WATCH_EV_RETRY:
		free(ev->u.retry.job);
		free(ev->u.retry.new_id);
		free(ev->u.retry.message);
		break;
	case WATCH_EV_ANSWER:
		free(ev->u.answer.text);
		break;
	case WATCH_EV_STEP:
		free(ev->u.step.detail);
		break;
	case WATCH_EV_SUBMITTED:
		submit_result_free(&ev->u.submitted.res);
		free(ev->u.submitted.err);
		break;
	case WATCH_EV_FLAG:
		free(ev->u.flag.job);
		free(ev->u.flag.text);
		break;
	case WATCH_EV_PREFLIGHT:
		if (ev->u.preflight.ok)
			preflight_free(&ev->u.preflight.p);
		free(ev->u.preflight.err);
		break;
	}
	memset(&ev->u, 0, sizeof(ev->u));
}

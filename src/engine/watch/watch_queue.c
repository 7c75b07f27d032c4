#include "engine/watch/watch_queue.h"

#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"

struct watch_queue_node {
	struct watch_event	 ev;
	struct watch_queue_node		*next;
};

struct watch_event *watch_queue_push(struct watch_queue *q, enum watch_kind kind, size_t cluster)
{
	struct watch_queue_node *n = xcalloc(1, sizeof(*n));

	n->ev.kind = kind;
	n->ev.cluster = cluster;
	if (q->tail != NULL)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	return &n->ev;
}

void watch_queue_push_state(struct watch_queue *q, enum watch_kind kind, size_t cluster)
{
	const struct watch_queue_node *n;

	/* The queue is short (the UI empties it after each dispatch): a walk
	 * costs less than keeping an index of it right. */
	for (n = q->head; n != NULL; n = n->next)
		if (n->ev.kind == kind && n->ev.cluster == cluster)
			return;
	watch_queue_push(q, kind, cluster);
}

int watch_queue_next(struct watch_queue *q, struct watch_event *ev)
{
	struct watch_queue_node *n = q->head;

	if (n == NULL)
		return 0;
	*ev = n->ev;
	q->head = n->next;
	if (q->head == NULL)
		q->tail = NULL;
	free(n);
	return 1;
}

void watch_queue_free(struct watch_queue *q)
{
	struct watch_event ev;

	while (watch_queue_next(q, &ev))
		watch_event_free(&ev);
}


/*
 * The queue of engine/watch/watch.h's events (watch_event.h), behind watch_next(): first in,
 * first out, each event its own node, so nothing waits in a single slot
 * that a second answer could overwrite. Used by watch.c only, on the UI
 * thread (the workers' messages reach it through watch_dispatch()): no
 * lock.
 */
#ifndef TAOTOP_ENGINE_WATCH_QUEUE_H
#define TAOTOP_ENGINE_WATCH_QUEUE_H

#include "engine/watch/watch_event.h"

struct watch_queue_node;

struct watch_queue {
	struct watch_queue_node	*head, *tail;
};

/* A new event at the end, payload zeroed, for the caller to fill. */
struct watch_event *watch_queue_push(struct watch_queue *q, enum watch_kind kind, size_t cluster);
/* A state event (watch.h: the kinds before WATCH_EV_OUTCOMES): queued
 * unless one of its kind and cluster waits unread already. */
void watch_queue_push_state(struct watch_queue *q, enum watch_kind kind, size_t cluster);
/* The oldest event into *ev; 1, or 0 when empty. */
int watch_queue_next(struct watch_queue *q, struct watch_event *ev);
/* Every event not taken, with its payload. */
void watch_queue_free(struct watch_queue *q);

#endif

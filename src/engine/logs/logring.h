/*
 * The last lines of a followed log, bounded: a ring of at most `cap` lines
 * (the oldest dropped first), so a job that prints for days costs the same
 * memory as one that printed a screenful. Lines are stored as given (the
 * follower has already collapsed '\r' rewrites); sanitising happens where
 * they are shown.
 */
#ifndef TAOTOP_ENGINE_LOGRING_H
#define TAOTOP_ENGINE_LOGRING_H

#include <stddef.h>

struct log_ring {
	char	**line;
	size_t	 *len;
	size_t	  cap;
	size_t	  head;		/* index of the oldest line */
	size_t	  n;		/* lines held */
	size_t	  dropped;	/* lines pushed out since the start */
};

void log_ring_init(struct log_ring *r, size_t cap);
void log_ring_free(struct log_ring *r);
/* Add every '\n'-ended line of text (as log_follow_tick produces). */
void log_ring_push_lines(struct log_ring *r, const char *text, size_t len);
/* The i-th line held, oldest first (0 <= i < n); *len gets its length. */
const char *log_ring_get(const struct log_ring *r, size_t i, size_t *len);
void log_ring_clear(struct log_ring *r);

#endif

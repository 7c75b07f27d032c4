/*
 * Bytes from a job's log, made harmless for a terminal: escape sequences
 * (CSI cursor moves and colours, OSC titles and clipboard writes, DCS, ...)
 * are removed whole, other control bytes are shown visibly (^G, ^@), C1
 * controls and invalid UTF-8 become U+FFFD. Newlines and tabs stay.
 */
#ifndef TAOTOP_UTIL_SANITIZE_H
#define TAOTOP_UTIL_SANITIZE_H

#include <stddef.h>

struct buf;

void sanitize_append(struct buf *out, const char *in, size_t len);
/* The same, but colour sequences (SGR: ESC [ digits;... m, nothing else)
 * are kept, for a reader that renders them (the monitor's log panes). */
void sanitize_append_sgr(struct buf *out, const char *in, size_t len);

#endif

/*
 * Bytes from a job's log, made harmless for a terminal: escape sequences
 * (CSI cursor moves and colours, OSC titles and clipboard writes, DCS, ...)
 * are removed whole, other control bytes are shown visibly (^G, ^@), C1
 * controls and invalid UTF-8 become U+FFFD. Bidirectional controls
 * (U+202E and friends), zero-width and other invisible characters are shown
 * as what they are, "<U+202E>", never applied. Newlines and tabs stay.
 *
 * This is the one gate for text others control (log lines, job names,
 * SLURM's and TAO's messages) on its way to a terminal: the CLI's output
 * to a terminal, the monitor, its dialogs and status bar.
 */
#ifndef TAOTOP_UTIL_SANITIZE_H
#define TAOTOP_UTIL_SANITIZE_H

#include <stddef.h>

struct buf;

void sanitize_append(struct buf *out, const char *in, size_t len);
/* The same, but colour sequences (SGR: ESC [ digits;... m, nothing else)
 * are kept, for a reader that renders them (the monitor's log panes). */
void sanitize_append_sgr(struct buf *out, const char *in, size_t len);
/* The same for a value shown on one line (a name, a message): newlines and
 * tabs too are shown visibly (^J, ^I). */
void sanitize_append_line(struct buf *out, const char *in, size_t len);
/* Whether sanitize_append would change anything in s. */
int sanitize_needed(const char *in, size_t len);
/* JSON text (as cJSON prints it: C0 controls already escaped) made safe
 * for a terminal without changing what a JSON reader gets: C1 controls
 * (U+009B is a CSI) and the hidden characters above become \uXXXX
 * escapes of the same code points, and invalid UTF-8, which no JSON text
 * may hold, \uFFFD. */
void sanitize_append_json(struct buf *out, const char *json, size_t len);

#endif

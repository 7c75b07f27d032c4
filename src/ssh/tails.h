/*
 * What was appended to remote files since an offset, for several files in
 * one round trip: each file is kept open over SFTP from one call to the
 * next (on the connection, until its session ends), and the reads of all
 * of them go out together before any answer is waited for. A follow tick
 * of the monitor's two log panes is one round trip on a far link.
 *
 * A file that shrank below the offset (truncated, a requeued job starting
 * over) is noticed without a stat: each read starts one byte before the
 * offset, and an end of file there means the file is shorter. It is then
 * read from its start (one more round trip, that tick only). A file
 * replaced by another under the same name (SLURM truncates its logs in
 * place; a user's rotation or a rewrite renamed over it does not) is
 * noticed by its name: while a kept file reads nothing new, its name is
 * looked up every 10 s (a stat), and another file there is opened and read
 * from its start like a file that shrank.
 */
#ifndef TAOTOP_SSH_TAILS_H
#define TAOTOP_SSH_TAILS_H

#include <stddef.h>
#include <stdint.h>

#include "ssh/conn.h"
#include "util/buf.h"

struct conn_tail {
	/* in */
	const char	*path;
	uint64_t	 offset;	/* the next byte wanted */
	size_t		 max;		/* read at most this much */
	struct buf	*out;		/* the bytes read are appended */
	/* out */
	uint64_t	 from;		/* where they start: offset, or 0 when the
					 * file shrank below it or is another */
	int		 missing;	/* no such file (yet): nothing read */
};

/* Read every file of t[0..n). CONN_OK (missing files included), or the
 * first failure with *err; a file's bytes are only ever appended whole, so
 * a failed call can be repeated from the same offsets. */
enum conn_status tails_read(struct conn *c, struct conn_tail *t, size_t n, char **err);

#endif

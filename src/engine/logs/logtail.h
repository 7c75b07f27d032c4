/*
 * A job's log: its last N lines without reading the whole file (one
 * remote command reads the end of both of a job's logs), and following it
 * by byte offset over SFTP, so a tick reads only what was appended and no
 * remote process runs per tick (both logs in one round trip; a stat now
 * and then only while a log is quiet, ssh/tails.h).
 *
 * Following assembles lines across reads, collapses '\r'-rewritten progress
 * bars (tqdm) to their last state, notices a file that shrank (truncated,
 * rotated, a requeued job starting over) or was replaced under its name and
 * reads it again from the start,
 * and waits quietly for a file that does not exist yet (a pending job).
 */
#ifndef TAOTOP_ENGINE_LOGTAIL_H
#define TAOTOP_ENGINE_LOGTAIL_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

struct conn;

/* Append the last n lines of path to out (of its last MiB at most), in
 * one remote command. Returns 0; -1 with *err (and *missing set when the
 * file does not exist yet). *end gets the offset the tail ends at, to
 * follow from: with complete_only, an unfinished last line is left out and
 * *end stops before it, so a follower prints it whole. */
int log_tail(struct conn *c, const char *path, size_t n, int complete_only, struct buf *out,
    uint64_t *end, int *missing, char **err);
/* The same for count files in the same command (a job's main.out and
 * main.err: the monitor's first screen of both panes is one round trip);
 * a file that does not exist yet sets its missing[i] and is no error. */
int log_tails(struct conn *c, const char *const *paths, size_t count, size_t n,
    int complete_only, struct buf *out, uint64_t *end, int *missing, char **err);

struct log_follow {
	char		*path;
	uint64_t	 offset;	/* next byte to read */
	struct buf	 partial;	/* a line not ended yet */
	int		 restarted;	/* the file shrank or was replaced: read
					 * again from 0 */
	uint64_t	 bytes_read;	/* over SFTP, for the benchmark */
};

void log_follow_init(struct log_follow *f, const char *path, uint64_t offset);
void log_follow_free(struct log_follow *f);
/* The line not ended yet, as a line of its own (appended to lines), for
 * a reader that knows the file will not grow: a job's last words often
 * have no newline (a crash, a progress bar's \r). */
void log_follow_flush(struct log_follow *f, struct buf *lines);

/* Read what was appended since the last tick; append the completed lines
 * (each ending in '\n', carriage-return rewrites collapsed) to lines.
 * Returns 0 (also while the file does not exist), -1 with *err on a
 * connection problem: the offset stays, so nothing is lost or doubled.
 * The file is kept open on the connection between ticks (ssh/tails.h): a
 * tick is one round trip. */
int log_follow_tick(struct log_follow *f, struct conn *c, struct buf *lines, char **err);
/* The same for n followers at once, f[i]'s lines to lines[i]: their reads
 * go out together, so both of a job's logs are one round trip too. */
int log_follow_ticks(struct log_follow *f, size_t n, struct conn *c, struct buf *lines,
    char **err);

/* The same for bytes read some other way (the poll's own command): len
 * bytes of the file from offset `from` (0 below the offset: the file
 * shrank, and restarted is set). The caller clears restarted. */
void log_follow_feed(struct log_follow *f, uint64_t from, const char *data, size_t len,
    struct buf *lines);

/* The text of one line as a terminal would leave it after its '\r's. */
size_t log_collapse_cr(const char *line, size_t len, const char **start);

#endif

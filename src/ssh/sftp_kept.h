/*
 * Between the conn (conn_sftp.c) and ssh/tails.c only: SFTP files kept
 * open on a connection's session from one follow tick to the next. The
 * conn owns the table (conn_sftp.c makes it go with the session: a handle
 * is the session's; the server lets go of its handles when the SFTP
 * channel closes); tails.c fills and reads it. Callers outside the ssh
 * layer use ssh/tails.h.
 */
#ifndef TAOTOP_SSH_SFTP_KEPT_H
#define TAOTOP_SSH_SFTP_KEPT_H

#include <stdint.h>

#include <libssh/sftp.h>

#include "ssh/conn.h"

#define KEEP_MAX	8		/* files kept open per session */

struct kept_file {
	char		*path;
	sftp_file	 f;
	unsigned long	 used;		/* the clock when last read: the oldest goes first */
	int64_t		 looked_ms;	/* when its name was last looked up, or it grew */
	int		 longer;	/* the name's file was longer than the handle's */
};

struct sftp_kept {
	struct kept_file files[KEEP_MAX];
	size_t		 n;
	unsigned long	 clock;
};

struct conn_tail;
/* tails_read through a lent session (lend_client.c): 1 when done so (its
 * status in *st), 0 when tails.c reads on its own. */
int conn_tails_lent(struct conn *c, struct conn_tail *t, size_t n, enum conn_status *st,
    char **err);

/* Free every kept file without a word to the server (the session is going
 * away; a close would wait on a link that may be dead) and set *k NULL. */
void sftp_kept_forget(struct sftp_kept **k);

/* The session's SFTP, started (and connected) if need be; the conn's kept
 * files and counters. CONN_OK or the failure with *err. */
enum conn_status conn_sftp(struct conn *c, sftp_session *sftp, struct sftp_kept ***kept,
    struct conn_counters **counters, char **err);
/* The last SFTP failure on path as a status and a sentence (the session
 * dropped, and the kept files with it, when the connection is gone). */
enum conn_status conn_sftp_fail(struct conn *c, const char *what, const char *path, char **err);
/* An SFTP request waits for the server from now (on: 1, again after each
 * answer), or none does (0): what the worker's watchdog reads. */
void conn_sftp_waits(struct conn *c, int on);
/* One SFTP request sent: counted, and the session's last status cleared
 * (so a failure without one is told apart: no answer). */
void conn_sftp_sent(struct conn *c);

#endif

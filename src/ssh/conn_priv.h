/*
 * What the parts of ssh/conn (conn.c, conn_auth.c, conn_jump.c, conn_exec.c,
 * conn_sftp.c) share, and nothing else includes: the conn struct, the host
 * list's entries, the jump hops, and the helpers one part gives the others.
 * The interface is conn.h.
 */
#ifndef TAOTOP_SSH_CONN_PRIV_H
#define TAOTOP_SSH_CONN_PRIV_H

#include "ssh/conn.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#define IO_CHUNK		(64u << 10)	/* one read or write of a stream or file */

/* One entry of the host list: "[user@]name[:port]". */
struct host {
	char	*name;
	char	*user;		/* NULL: not given */
	int	 port;		/* 0: not given */
	char	*display;	/* as the user wrote it, for messages */
};

/* A jump host in use: its session, the direct-tcpip channel to the next
 * hop, and the thread that pumps bytes between that channel and the
 * socketpair the next hop's session reads (the next session owns the other
 * end). After the hand-over only the relay thread touches s and ch. */
struct hop {
	ssh_session	 s;
	ssh_channel	 ch;
	int		 fd;		/* our end of the socketpair, or -1 */
	pthread_t	 th;
	int		 running;
	atomic_int	 stop;
};

struct conn {
	char		*hosts_spec;
	char		*user;
	char		*key_path;
	char		*known_hosts;
	char		*ssh_config;
	int		 connect_timeout_s;
	char		*jump_spec;	/* NULL: ~/.ssh/config's ProxyJump */
	conn_ask_fn	*ask;
	void		*ask_data;
	int		 password_auth;

	struct host	*hosts;
	size_t		 nhosts;
	struct host	*jumps;		/* of the last connect: for messages, trust */
	size_t		 njumps;
	struct hop	*hops;		/* under c->s, first to last */
	size_t		 nhops;

	ssh_session	 s;
	ssh_channel	 spare;	/* a session channel opened ahead for the next
				 * command (conn_exec.c), NULL: none; freed
				 * with s */
	sftp_session	 sftp;
	struct sftp_kept *kept;	/* ssh/tails.c's files kept open on sftp */
	const struct host *at;	/* the host connected to */
	char		*banner;

	char		*refused_host;
	char		*refused_fp;

	struct conn_counters counters;
	char		*cut_needle;
	char		*lose_needle;	/* conn_test_lose_next */
	int		 lose_left;

	/* libssh's SFTP waits for an answer without end: on a link that died
	 * silently (no FIN, no RST) a request would wait forever. The time
	 * the one in flight last heard from the server, read by a watchdog
	 * on another thread (conn_sftp_waiting_ms), which may then shut the
	 * socket (conn_interrupt) under live_lock. */
	_Atomic int64_t	 sftp_since;	/* monotonic ms, 0: none in flight */
	pthread_mutex_t	 live_lock;
	int		 live_fd;	/* the session's socket, -1: none */

	/* A session lent by another taotop process (ssh/lend.h,
	 * lend_client.c): its socket, or -1. */
	char		*lend_dir;	/* NULL: never borrow */
	int		(*lend_start)(void *data);
	void		*lend_start_data;
	int		 lend_off;	/* no lender for us: our own from now */
	int		 lent_fd;	/* under live_lock (conn_interrupt) */
	char		*lent_by;	/* "agent", "monitor" */
	char		*lent_host;
	int		 lent_pid;
	unsigned	 lent_clients;
};

/* What a trust-on-first-use asks: accept this host's key if it has fp. */
struct trust {
	const char	*host;
	const char	*fp;
	int		 done;
};

/* conn.c */

/* Log msg, put it in *err (the caller frees it; err may be NULL), return st. */
enum conn_status conn_fail(char **err, enum conn_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
char *conn_dup(const char *s);
/* A comma-separated list of "[user@]name[:port]" appended to *hosts. */
void conn_parse_hosts(const char *spec, struct host **hosts, size_t *n);
void conn_free_host(struct host *h);
/* Close the session, its SFTP and its hops; the conn stays, to reconnect. */
void conn_drop_session(struct conn *c);

/* conn_auth.c */

/* Connect s (over fd when >= 0), check its key, and authenticate it, or,
 * when it is the host to trust, write its key to known_hosts instead. */
enum conn_status conn_finish_session(struct conn *c, ssh_session s, const struct host *h,
    int fd, struct trust *tr, char **err);

/* conn_jump.c */

/* Stop and free n hops, last first: each hop carries the ones after it. */
void conn_hops_free(struct hop *hops, size_t n);
/* The jump list in a ProxyCommand libssh made from a ProxyJump, or -1. */
int conn_proxy_to_jumps(const char *cmd, char **jumps);
/* c->jumps from "[user@]host[:port],..." ("none" or NULL: no jumps). */
void conn_set_jumps(struct conn *c, const char *spec);
/* Open a direct-tcpip channel from hop to (the host and port next will
 * connect to), and a socketpair between it and next's session. */
enum conn_status conn_forward(struct hop *hop, const struct host *from,
    ssh_session next, const struct host *to, int *fd, char **err);

/* lend_client.c: each 1 when it did the operation through the lender
 * (its status in *st), 0 when the caller does it on its own session. */
int lend_client_connect(struct conn *c, enum conn_status *st, char **err);
void lend_client_drop(struct conn *c);
int lend_client_exec(struct conn *c, struct conn_exec *x, enum conn_status *st, char **err);
int lend_client_probe(struct conn *c, int timeout_ms, enum conn_status *st, char **err);
int lend_client_stat(struct conn *c, const char *path, struct conn_stat *sb,
    enum conn_status *st, char **err);
int lend_client_read(struct conn *c, const char *path, uint64_t offset, size_t max,
    struct buf *out, enum conn_status *st, char **err);
int lend_client_write(struct conn *c, const char *path, const void *data, size_t len,
    mode_t mode, int flags, enum conn_status *st, char **err);
int lend_client_mkdir(struct conn *c, const char *path, mode_t mode, enum conn_status *st,
    char **err);
int lend_client_unlink(struct conn *c, const char *path, enum conn_status *st, char **err);

/* The monotonic clock in ms (timeouts, the SFTP watchdog's marks). */
int64_t conn_now_ms(void);

#endif

/*
 * One SSH session for every taotop of a user on the laptop: a process that
 * holds a cluster's authenticated connection (the monitor, or the
 * background `taotop agent`) lends it over a local socket to the user's
 * other taotop processes, which send it the commands and SFTP requests they
 * would have sent themselves and get back the answers, exit codes and
 * streams unchanged. A verb then pays one local round trip instead of an
 * SSH connect, and a cluster with one-time codes asks for a code once.
 *
 * Where: the folder lend_dir() names ($XDG_RUNTIME_DIR/taotop, else
 * /tmp/taotop-UID): the user's own, mode 0700, refused on either side when
 * it is anything else (another owner, looser, a link). Sockets: agent.sock,
 * and monitor-PID.sock for each monitor running. Both sides check the
 * other's uid on every connection (SO_PEERCRED): another user is refused
 * even when the folder lets it through (root).
 *
 * What passes: a hello naming the connection the client would make (its
 * conn_target as lend_target_key() writes it: hosts, user, key, known_hosts,
 * ssh config, jump hosts, the home folder); a lender holding the same (or,
 * for the agent, making it) says yes, any other answer sends the client to
 * its own connection. Then the conn.h operations, one at a time. A server's
 * question while the lender connects (a one-time code) is asked in the
 * client's terminal through the client's own ask function, the answer sent
 * back once and wiped on both sides; the lender keeps no secret. Nothing a
 * client sends can do more than its own conn could: the same operations on
 * the same targets, as the same user.
 *
 * The wire: each message a 4-byte big-endian length, a JSON head (cJSON),
 * then the byte blobs the head's "blobs" array sizes (a command's stdin and
 * output, a file's bytes, an answer). Four files: lend_wire.c (messages,
 * the folder, the peer check, the target's key), lend_client.c (the conn's
 * side: conn_priv.h calls it), lend_serve.c (a lender: sockets, clients,
 * the operations run on the lender's conn) and lend_agent.c (the agent's
 * connections and its life).
 */
#ifndef TAOTOP_SSH_LEND_H
#define TAOTOP_SSH_LEND_H

#include <stddef.h>

#include "ssh/conn.h"
#include "util/buf.h"

#define LEND_VERSION	1
#define LEND_AGENT_SOCK	"agent.sock"

struct cJSON;

/* ---- lend_wire.c -------------------------------------------------------------------------- */

/* The sockets' folder, made if missing (mode 0700), or NULL with *err when
 * it is not the user's own and private (named, with what to do). The
 * caller frees it. */
char *lend_dir(char **err);
/* 0 when path is a folder of this user's, mode 0700 or tighter, not a
 * link; else -1 with *err. */
int lend_dir_check(const char *path, char **err);
/* 0 when the peer of a connected Unix socket runs as this user. */
int lend_peer_ok(int fd, int *peer_uid);
/* A connected socket to dir/name, or -1 (no one listening, another user's,
 * a stale socket: the caller falls back). */
int lend_dial(const char *dir, const char *name);

/* What identifies a connection: the target as JSON (hosts, user, key,
 * known_hosts, ssh_config, jump, password_auth, connect timeout, $HOME),
 * the same text for the same target on both sides. Caller frees. */
char *lend_target_key(const struct conn_target *t);

/* A head's text field, or NULL; the monotonic clock in ms. */
const char *lend_str(const struct cJSON *o, const char *name);
long long lend_now_ms(void);

/* Send head (the blobs' sizes added to it) and n blobs; head is freed.
 * 0, or -1 when the peer is gone. */
struct lend_blob {
	const void	*data;
	size_t		 len;
};
int lend_send(int fd, struct cJSON *head, const struct lend_blob *blobs, size_t n);
/* Receive one message: its head (caller deletes) and up to max blobs into
 * b[] (buf_init'ed by the caller, secret ones wiped as they grow), their
 * number in *n. -1 when the peer is gone or the message is malformed. */
int lend_recv(int fd, struct cJSON **head, struct buf *b, size_t max, size_t *n);
/* 0 when a message has begun to arrive on fd within timeout_ms (-1:
 * without limit), else -1: a peer that stopped answering (a suspended
 * monitor still accepts connections: the kernel queues them). */
int lend_wait(int fd, int timeout_ms);

/* ---- lend_client.c (the conn's side; conn_priv.h declares its calls) ------------------------ */

/* ---- lend_serve.c ------------------------------------------------------------------------------ */

/* What lends the connections: the agent's table of conns, or the monitor's
 * workers. */
struct lend_backend {
	const char	*kind;		/* "agent", "monitor": said to clients */
	/* The connection for a client whose target is key (lend_target_key's
	 * text, parsed in target): a handle, or NULL with *why (the client
	 * falls back to its own). On the client's thread. */
	void		*(*find)(void *ctx, const char *key, const struct cJSON *target, char **why);
	/* Run fn(c, arg) on the handle's conn, returning when it has run (or
	 * -1 when it cannot: the lender is stopping). fn may run on another
	 * thread; while it runs on this one, a server's question goes to the
	 * client (lend_ask_client as the conn's ask function). */
	int		(*run)(void *ctx, void *handle, void (*fn)(struct conn *c, void *arg),
			    void *arg);
	void		*ctx;
};

struct lender;

/* Listen on dir/name (a stale socket there replaced, a live one left:
 * NULL with *err) and serve each client on a thread of its own. */
struct lender *lender_start(const char *dir, const char *name, const struct lend_backend *b,
    char **err);
/* Stop listening, end every client's connection, remove the socket. */
void lender_stop(struct lender *l);
/* Clients connected now; requests served since the start; monotonic ms
 * of the last client's leaving or request (0: none yet). */
unsigned lender_clients(const struct lender *l);
unsigned long lender_served(const struct lender *l);
long long lender_last_ms(const struct lender *l);
/* A client asked the lender to stop (`taotop agent stop`). */
int lender_stop_asked(const struct lender *l);

/* A conn_ask_fn for a lender's own conns: the question goes to the client
 * whose request is running on this thread, and its answers come back
 * (never kept). -1 when no client is asking (a reconnect of nobody's). */
int lend_ask_client(const struct conn_challenge *ch, struct buf *answers, void *data);

/* What a lender says of itself to `taotop agent status` and the like:
 * a JSON object the lender's owner adds to (caller's). */
typedef void lend_status_fn(void *ctx, struct cJSON *out);
void lender_on_status(struct lender *l, lend_status_fn *fn, void *ctx);

/* ---- lend_agent.c: the background agent --------------------------------------------------- */

struct lend_agent_opts {
	int	idle_s;		/* end this long after the last client left */
	int	ready_fd;	/* written a byte once listening (then closed), or -1 */
};
/* Serve as the agent on dir's agent.sock: a connection per target the
 * clients name (made on the first client's hello, its questions asked in
 * that client's terminal), used by one request at a time, probed while
 * unused (after 15 s, then every 30 s: a link that died is found before
 * the next command, which then connects again or fails as the verb's own
 * connect would); one agent per folder (agent.lock); an SFTP request
 * unanswered for 60 s ends its connection (libssh would wait forever).
 * Returns when idle or asked to stop: 0, or -1 with *err when it could
 * not start (another agent answers there, the folder is not private). */
int lend_agent_serve(const char *dir, const struct lend_agent_opts *o, char **err);

#endif

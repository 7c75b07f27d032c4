/*
 * One SSH connection to a cluster's login host: connect with failover over a
 * host list, host-key check against known_hosts, public-key authentication,
 * keyboard-interactive prompts (one-time codes) answered through the
 * caller's ask function, jump hosts (ProxyJump) connected by this layer
 * itself, command execution and SFTP on the same session.
 *
 * A conn belongs to one thread at a time (libssh sessions are not shared).
 * Calls block, each bounded by a timeout; ssh/worker.h runs a conn on its own
 * thread for callers that must not block. This layer knows nothing of SLURM.
 *
 * Errors come back as a status and, through char **err, a sentence naming the
 * host and the cause that a user can act on (the caller frees it).
 *
 * This header is the whole interface of five files: conn.c (the conn, its
 * host list, connecting and trust), conn_auth.c (host keys, authentication,
 * questions), conn_jump.c (jump hosts), conn_exec.c (commands) and
 * conn_sftp.c (files); conn_priv.h is what they share among themselves.
 */
#ifndef TAOTOP_SSH_CONN_H
#define TAOTOP_SSH_CONN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

enum conn_status {
	CONN_OK = 0,
	CONN_UNREACHABLE,	/* no host of the list answered */
	CONN_HOSTKEY_UNKNOWN,	/* host key not in known_hosts: refused */
	CONN_HOSTKEY_CHANGED,	/* host key differs from known_hosts: refused */
	CONN_AUTH,		/* no key was accepted, or a challenge went
				 * unanswered or was refused */
	CONN_TIMEOUT,		/* the request ran over its time */
	CONN_DISCONNECTED,	/* the connection dropped during the request */
	CONN_CANCELLED,		/* the caller cancelled the request */
	CONN_NOTFOUND,		/* SFTP: no such file */
	CONN_REMOTE,		/* the server refused (permission, ...) */
};

/* A short name for a status, for logs and events ("host-key-unknown"). */
const char *conn_status_name(enum conn_status st);

/* One prompt of a keyboard-interactive challenge, as the server sent it
 * (raw: sanitise before showing). */
struct conn_prompt {
	const char	*text;
	int		 echo;		/* the server says the answer may be shown */
};

/* A challenge a server sends during authentication: a one-time code, a
 * password (only where the config allows it), or any PAM question. */
struct conn_challenge {
	const char	*host;		/* the host asking, as written ("bastion:22") */
	const char	*name;		/* the server's title for it, may be "" */
	const char	*instruction;	/* may be "" */
	const char	*said;		/* the server's words on the last refused
					 * answer, or NULL on the first asking */
	int		 attempt;	/* 1, then 2, ... after refused answers */
	size_t		 n;
	const struct conn_prompt *prompts;
};

/* Answer each of ch's n prompts into answers[i] (empty secret buffers the
 * caller made with buf_init_secret and wipes after use) and return 0, or
 * return -1: no one can answer (no terminal) or the user declined. Called on
 * the thread that connects, and may block until the user answers. */
typedef int conn_ask_fn(const struct conn_challenge *ch, struct buf *answers, void *data);

/* A copy that owns its strings (for handing to another thread), and its
 * free; NULL is fine. */
struct conn_challenge *conn_challenge_dup(const struct conn_challenge *ch);
void conn_challenge_free(struct conn_challenge *ch);

#define CONN_CONNECT_DEFAULT_S	10

struct conn_target {
	const char	*hosts;		/* "login1,login2:2222,user@[::1]:22" */
	const char	*user;		/* NULL: user@ in hosts, ssh config, $USER */
	const char	*key_path;	/* SSH_KEY_PATH; tried first; NULL: none */
	const char	*known_hosts;	/* NULL: ~/.ssh/known_hosts */
	const char	*ssh_config;	/* NULL: ~/.ssh/config; "": none */
	int		 connect_timeout_s; /* per host; 0: CONN_CONNECT_DEFAULT_S */
	/* Jump hosts, "[user@]host[:port]" comma-separated, connected in
	 * order, each through the one before; the login host through the
	 * last. NULL: the ProxyJump ~/.ssh/config gives the login host, if
	 * any; "none": no jump even if it gives one. */
	const char	*jump;
	conn_ask_fn	*ask;		/* NULL: challenges are refused (CONN_AUTH) */
	void		*ask_data;
	int		 password_auth;	/* answer a "password" method through ask too */
	/* Borrow the session a taotop monitor or agent holds for this same
	 * target, from the sockets in this folder (ssh/lend.h), before
	 * connecting on our own; NULL: never. */
	const char	*lend_dir;
	/* When no lender there has this target and no agent answers: start
	 * one (0 when it listens now), once per connect. NULL: none. */
	int		(*lend_start)(void *data);
	void		*lend_start_data;
};

struct conn;

struct conn *conn_new(const struct conn_target *t);
void conn_free(struct conn *c);

/* Connect to the first host of the list that answers. Reachability errors
 * move on to the next host; a refused host key or failed authentication
 * stops there (they are not the network's fault and must not be masked). */
enum conn_status conn_connect(struct conn *c, char **err);
void conn_disconnect(struct conn *c);
int conn_is_connected(const struct conn *c);
/* A real round trip on the open connection (a channel opened and closed)
 * within timeout_ms, to find a dead peer; never reconnects. A failure drops
 * the connection: CONN_DISCONNECTED or CONN_TIMEOUT. */
enum conn_status conn_probe(struct conn *c, int timeout_ms, char **err);
/* How long the SFTP request in flight has waited for the server's next
 * answer (ms), 0 when none is in flight. libssh's SFTP waits without end,
 * so on a link that died silently only this shows it. Any thread may ask. */
int64_t conn_sftp_waiting_ms(struct conn *c);
/* From another thread: shut the connection's socket, so what waits on it
 * fails as on a dropped connection (and the connection is dropped). */
void conn_interrupt(struct conn *c);
/* Whether c's session is lent by another taotop process (ssh/lend.h):
 * 1 with the lender's kind ("agent", "monitor"), pid and its clients when
 * it said yes; 0 when c has its own connection (or none). */
int conn_lent(const struct conn *c, const char **by, int *pid, unsigned *clients);
/* The host connected to ("login2" or "login2:2222"), its banner, or NULL. */
const char *conn_host(const struct conn *c);
/* How known_hosts names a host written "[user@]host[:port]", quoted for a
 * shell line such as `ssh-keygen -R`: "'[host]:2222'" on another port than
 * 22, as OpenSSH writes it. The caller frees it. */
char *conn_known_hosts_name(const char *spec);
const char *conn_banner(const struct conn *c);
/* The login hosts of c's list, as written, and a new conn to the i-th of
 * them alone with c's user, key, known_hosts, ssh config and jump hosts
 * (not its ask function: a challenge there is refused). For asking every
 * login host the same question (an unclear submit's lookups). */
size_t conn_nhosts(const struct conn *c);
const char *conn_host_at(const struct conn *c, size_t i);
struct conn *conn_new_one(const struct conn *c, size_t i);

/* After CONN_HOSTKEY_UNKNOWN or _CHANGED: the refused host and its key's
 * SHA256 fingerprint ("SHA256:..."), or NULL. */
const char *conn_refused_host(const struct conn *c);
const char *conn_refused_fingerprint(const struct conn *c);

/* Trust on first use, for the UI to offer after showing the fingerprint:
 * connect to host (an entry of the list, or one of the jump hosts, reached
 * through the jumps before it), check that its key still has this
 * fingerprint, and append it to known_hosts. Never replaces a changed key:
 * that stays refused. */
enum conn_status conn_trust_host(struct conn *c, const char *host,
    const char *fingerprint, char **err);

struct conn_exec {
	/* in */
	const char	*cmd;		/* run by the remote login shell */
	const void	*in;		/* stdin bytes, may be NULL */
	size_t		 in_len;
	size_t		 out_cap;	/* keep at most this much; 0: 64 MiB */
	size_t		 err_cap;	/* 0: 1 MiB */
	int		 timeout_ms;	/* 0: no limit */
	atomic_int	*cancel;	/* set non-zero to cancel; may be NULL */
	/* out */
	struct buf	 out, err;
	int		 out_cut, err_cut; /* more was sent than the cap */
	int		 exit_status;	/* -1 when killed by a signal */
	char		 exit_signal[16]; /* "KILL", or "" */
};

void conn_exec_init(struct conn_exec *x, const char *cmd);
void conn_exec_free(struct conn_exec *x);

/* Run x->cmd. CONN_OK means it ran to its end: look at exit_status and
 * exit_signal. A command over its timeout is sent SIGKILL and CONN_TIMEOUT
 * comes back. When the connection had dropped before the command was sent,
 * conn_exec reconnects once by itself; when it drops after, the command may
 * have run: CONN_DISCONNECTED, and the caller must reconcile. */
enum conn_status conn_exec(struct conn *c, struct conn_exec *x, char **err);
/* The same for a command whose stdout is all the caller wants: it (caller
 * frees), or NULL with *err when the command did not run to its end.
 * *status gets its exit status; when that is not 0, *err the first line of
 * its stderr, if it wrote one (caller frees). */
char *conn_run(struct conn *c, const char *cmd, int timeout_ms, int *status, char **err);

struct conn_stat {
	uint64_t	size;
	int64_t		mtime;
	uint32_t	mode;		/* permission bits */
	int		is_dir;
	int		is_reg;		/* a regular file (links followed) */
};

/* SFTP on the same session. Relative paths are relative to the home dir. */
enum conn_status conn_stat(struct conn *c, const char *path,
    struct conn_stat *st, char **err);
/* Append up to max bytes from offset to out (fewer at end of file). */
enum conn_status conn_read_at(struct conn *c, const char *path,
    uint64_t offset, size_t max, struct buf *out, char **err);

enum {
	CONN_WRITE_EXCL = 1,	/* fail if path exists */
	CONN_WRITE_ATOMIC = 2,	/* temp file then rename: old or new, never half */
};
/* Write a file that has `mode` from its first byte (never created looser,
 * then tightened). */
enum conn_status conn_write_file(struct conn *c, const char *path,
    const void *data, size_t len, mode_t mode, int flags, char **err);
enum conn_status conn_mkdir_p(struct conn *c, const char *path, mode_t mode,
    char **err);
enum conn_status conn_unlink(struct conn *c, const char *path, char **err);

/* Counters for tests and benchmarks. */
struct conn_counters {
	unsigned long	connects;	/* successful connects */
	unsigned long	execs;		/* commands sent to the server */
	unsigned long	sftp_ops;	/* SFTP operations: a stat, a whole read,
					 * a whole write, a mkdir, a remove */
	unsigned long	sftp_requests;	/* SFTP requests, each a round trip to the
					 * server: a read is an open, each read
					 * of up to a chunk, and a close */
	uint64_t	sftp_bytes_read;
	uint64_t	exec_bytes_read;	/* commands' stdout and stderr */
	unsigned long	keepalives;	/* sent to nudge an exit-status the server
					 * held 50 ms past its EOF (conn_exec.c) */
};
const struct conn_counters *conn_counters(const struct conn *c);

/* Test hook: drop the connection as a cut network would (CONN_DISCONNECTED)
 * after a command containing `needle` (in its line or the script on its
 * standard input) has run to its end on the server and succeeded (exit
 * status 0: a script that stopped before the needle's part, as a submit's
 * checks stop it, did not run it) but before its answer is read, or
 * halfway through an SFTP write to a path containing it. NULL clears it. */
void conn_test_cut_after(struct conn *c, const char *needle);
/* Test hook: the next n commands containing needle (in their line or the
 * script on their standard input) never run: the connection drops as they
 * are sent (CONN_DISCONNECTED), as on a link cut at that moment. */
void conn_test_lose_next(struct conn *c, const char *needle, int n);

#endif

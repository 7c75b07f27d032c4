/*
 * Writing a job's files on the cluster in one round trip: folders, files
 * and the commands that follow them (the launch) become one shell script
 * that `sh -s` reads from the standard input of a single exec. Nothing of
 * it is on a command line (a secret file's bytes included), each file is
 * written to a temporary name and renamed (old or new, never half), a
 * secret file is created 0600 from its first byte and never replaces one,
 * and a step that fails stops the script, removes the secret file it wrote
 * and says which step it was. Through a 100 ms link the difference is a
 * second per submit: SFTP costs a round trip per request (open, write,
 * close, rename; a stat and a mkdir per folder level). Checks may run
 * first in the same script (a gate): nothing is written unless they pass.
 *
 * Why the script cannot go out with the exec request itself (a round trip
 * less): OpenSSH's sshd opens a session channel with a window of 0 bytes
 * and grants one (2 MiB) only when the exec has started the command
 * (serverloop.c server_request_session, channels.c channel_set_fds), so no
 * byte of standard input may be sent before the exec's answer; libssh
 * would allow the write (channels.c channel_write_common checks the
 * channel, not a pending request) but waits there for that window.
 */
#ifndef TAOTOP_ENGINE_STAGE_H
#define TAOTOP_ENGINE_STAGE_H

#include <stddef.h>

#include "util/buf.h"

struct conn;
struct conn_exec;

struct stage {
	struct buf	 script;	/* for sh -s: may hold a secret (wiped) */
	struct buf	 plan;		/* what it does, for a dry run: no contents */
};

void stage_init(struct stage *s);
/* Wipes the script. */
void stage_free(struct stage *s);

/* Commands that run first, before anything is written (call it before
 * any other): when they end non-zero, the script stops there, having
 * written and run nothing else, and stage_gate_closed says so. Their
 * output is the exec's; plan_line says what they do in the plan. */
void stage_gate(struct stage *s, const char *cmds, const char *plan_line);

/* The job's folder dir, made new under root (mkdir -p of root first):
 * the script stops, writing nothing, when anything is at dir already,
 * unless the script sets again=1 first (a submit sent once more, after
 * its first run may have made it) and dir is the user's own real folder
 * that no one else can write. */
void stage_job_folder(struct stage *s, const char *root, const char *dir);
/* The script stops, writing nothing more, unless dir is the user's own
 * real folder (not a link) that no one else can write: a job folder
 * used again (a retry). */
void stage_own_folder(struct stage *s, const char *dir);
/* mkdir -p of each path (n of them). */
void stage_mkdirs(struct stage *s, const char *const *paths, size_t n);
/* A file of mode 0644, written whole under a temporary name mktemp makes
 * new beside it (never through a link someone left), then renamed;
 * `about` stands for its contents in the plan (NULL: its size). */
void stage_write(struct stage *s, const char *path, const void *data, size_t len,
    const char *about);
/* A secret file: 0600 from its first byte, a new regular file: refused
 * (nothing written through it) if anything is at the path, a link or a
 * FIFO included; removed
 * again if a later step fails. `about` stands for its contents in the
 * plan ("1 secret(s) from your environment"). */
void stage_write_secret(struct stage *s, const char *path, const void *data, size_t len,
    const char *about);
/* Shell commands run after the writes, as they are (their output and exit
 * status are the exec's: they report their own failures); plan_line says
 * what they do in the plan. */
void stage_run(struct stage *s, const char *cmds, const char *plan_line);

/* Run it: one exec of `sh -s`, the script on its standard input. The
 * caller looks at x (exit status, output) and frees it. */
int stage_send(struct conn *c, struct stage *s, struct conn_exec *x, int timeout_ms, char **err);
/* The step that failed, as the script said ("cannot write /x/spec.yaml"),
 * or NULL when none did (caller frees). */
char *stage_failure(const char *out);
/* Whether the gate stopped the script (out: its standard output). */
int stage_gate_closed(const char *out);

#endif

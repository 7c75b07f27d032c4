/*
 * A server's questions while the CLI connects (a one-time code), asked on
 * the terminal: the server's words on stderr, sanitised, the answer read
 * from stdin with echo off where the server says so. Only when stdin is a
 * terminal: a script gets a clear refusal (exit 3) instead of a hang.
 */
#ifndef TAOTOP_CLI_TTYASK_H
#define TAOTOP_CLI_TTYASK_H

struct buf;
struct conn_target;

/* Set t's ask function: the terminal's when stdin is one, else none. */
void tty_ask_target(struct conn_target *t);
/* prompt on the terminal, the answer read with echo off into answer (a
 * buffer made with buf_init_secret). -1 when stdin is not a terminal or
 * ends before a line. */
int tty_ask_hidden(const char *prompt, struct buf *answer);

#endif

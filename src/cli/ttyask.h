/*
 * A server's questions while the CLI connects (a one-time code), asked on
 * the terminal: the server's words on stderr, sanitised, the answer read
 * from stdin with echo off where the server says so. Only when stdin is a
 * terminal: a script gets a clear refusal (exit 3) instead of a hang.
 */
#ifndef TAOTOP_CLI_TTYASK_H
#define TAOTOP_CLI_TTYASK_H

struct conn_target;

/* Set t's ask function: the terminal's when stdin is one, else none. */
void tty_ask_target(struct conn_target *t);

#endif

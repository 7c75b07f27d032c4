/*
 * Text others control (job names, SLURM's reasons, TAO's messages, a
 * failure's evidence from a log) in the CLI's human output: sanitised, on
 * one line, when the stream is a terminal; as it is for a pipe (as `taotop
 * logs` does), where a program reads it and nothing is displayed.
 */
#ifndef TAOTOP_CLI_SHOW_H
#define TAOTOP_CLI_SHOW_H

#include <stdio.h>

/* s as it may be printed to stdout (show: one line) or stderr (show_err:
 * an error's sentences, newlines kept). The
 * result is borrowed: valid until SHOW_SLOTS more calls, enough for the
 * arguments of one printf. NULL stays NULL. */
#define SHOW_SLOTS	16
const char *show(const char *s);
const char *show_err(const char *s);
/* The same for any stream, and for a given answer to isatty. */
const char *show_on(FILE *f, const char *s);
const char *show_tty(int tty, const char *s);

#endif

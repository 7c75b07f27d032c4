/*
 * The command line's side of the shared session (ssh/lend.h): whether a
 * verb borrows (the config's share:, TAOTOP_NO_SHARE, --no-share), the
 * agent started on demand, and what `taotop agent` and a bare `taotop
 * status` say of the lenders running.
 */
#ifndef TAOTOP_CLI_SHARE_H
#define TAOTOP_CLI_SHARE_H

#include <stdio.h>

struct config;

/* The sockets' folder when this process borrows (caller frees), else
 * NULL: sharing is off, or the folder is not private (said once on
 * stderr: the user should know why every command connects). */
char *share_folder(const struct config *cfg);
/* The agent answering in dir, or started (in the background, detached
 * from this process and its terminal) and waited for until it listens:
 * 0, or -1 with *err. *started set when this call started it. */
int share_agent_ensure(const char *dir, int idle_s, int *started, char **err);
/* What the lenders in dir say of themselves: the agent's and each
 * monitor's, as a line each (json: a JSON array) on f. The number that
 * answered. */
int share_print_lenders(FILE *f, const char *dir, int json);
/* Ask the agent in dir to stop: 1 it did, 0 none ran, -1 it did not
 * answer. */
int share_agent_stop(const char *dir, int *pid);

#endif

/*
 * What the user's OpenSSH client config says, for the first-run setup:
 * which hosts it names (offered as login hosts), and what `ssh ALIAS` would
 * use for one of them (the name, port and user it connects with), read by
 * libssh's own parser so that taotop and its connections agree.
 */
#ifndef TAOTOP_SSH_SSHCONFIG_H
#define TAOTOP_SSH_SSHCONFIG_H

#include <stddef.h>

/* The config file read: path if not NULL, else $TAOTOP_SSH_CONFIG, else
 * ~/.ssh/config (the caller frees it). */
char *sshcfg_path(const char *path);

/* The aliases of its Host lines that name one host (no * ? or !), in the
 * order written, each once; Include lines are followed. The caller frees
 * the array and its strings; 0 and NULL when there is no file. */
size_t sshcfg_hosts(const char *path, char ***out);

/* What ssh would connect to for alias: the host name (HostName, else the
 * alias), port (22 by default) and user (User, else NULL: the local user).
 * 0, or -1 when libssh cannot read the file. The caller frees. */
int sshcfg_resolve(const char *path, const char *alias, char **hostname, int *port,
    char **user);

#endif

/*
 * `taotop preflight`: the checks that a cluster can run taotop's jobs
 * (engine/config/preflight.h), one a line; first, if asked, Enroot's credentials
 * for nvcr.io written from the user's NGC API key: typed on the terminal
 * (echo off) or read from a file the user names, never from an environment
 * variable (`NGC_KEY=... taotop ...` puts the key in the shell's history).
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/session.h"
#include "cli/show.h"
#include "engine/config/preflight.h"
#include "cli/ttyask.h"
#include "ssh/conn.h"
#include "util/buf.h"
#include "util/xmalloc.h"

void cli_print_preflight(FILE *f, const struct preflight *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		fprintf(f, "%s %s%s%s\n", p->checks[i].ok ? "\xe2\x9c\x93" : p->checks[i].warn_only
		    ? "!" : "\xe2\x9c\x97", p->checks[i].name, p->checks[i].fix ? ": " : "",
		    p->checks[i].fix ? show_on(f, p->checks[i].fix) : "");
}

/* The key's first line from path: a regular file of the user's that no
 * one else may read (as ssh asks of a private key). 0, or -1 and *err. */
static int key_from_file(const char *path, struct buf *key, char **err)
{
	struct stat st;
	char c;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		*err = xasprintf("--ngc-key-file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() ||
	    (st.st_mode & 077) != 0) {
		*err = xasprintf("--ngc-key-file %s: not used: it must be a file of yours that no one "
		    "else can read or write (chmod 600 %s)", path, path);
		close(fd);
		return -1;
	}
	while ((n = read(fd, &c, 1)) == 1 && c != '\n' && c != '\r' && key->len < 4096)
		buf_addc(key, c);
	close(fd);
	return 0;
}

/* The NGC API key: from --ngc-key-file, else typed on the terminal. */
static int ngc_key(const char *file, struct buf *key, char **err)
{
	int rc;

	if (file != NULL)
		rc = key_from_file(file, key, err);
	else if ((rc = tty_ask_hidden("NGC API key for nvcr.io (not shown): ", key)) != 0)
		goto none;
	if (rc == 0 && (key->len == 0 || key->len >= 4096)) {
		/* Said here, before a login that would only refuse it. */
		*err = xasprintf("%s%s: no key installed", file ? file : "the key typed",
		    key->len == 0 ? " is empty" : " is 4096 bytes or longer (not an NGC API key)");
		return -1;
	}
	return rc;
none:
	*err = xstrdup("no NGC API key: run this in a terminal to type it (it is not shown), or "
	    "give --ngc-key-file FILE (a file of yours, mode 600); it is sent over SFTP only");
	return -1;
}

static int preflight(struct session *s, const struct buf *key, int replace)
{
	struct preflight p;
	char *err = NULL;
	int rc;

	if (key != NULL) {
		if (preflight_install_ngc(s->conn, key->data ? key->data : "", replace, &err) != 0)
			return session_say(EXIT_FAILED, err);
		printf("%s ~/.config/enroot/.credentials on %s (mode 600)\n",
		    replace ? "replaced the NGC lines of" : "installed", conn_host(s->conn));
	}
	if (preflight_run(s->conn, s->cl, &p, &err) != 0)
		return session_say(EXIT_FAILED, err);
	cli_print_preflight(stdout, &p);
	rc = p.all_ok ? EXIT_OK : EXIT_FAILED;
	preflight_free(&p);
	return rc;
}

int cli_preflight(const struct cli_args *a)
{
	struct session s;
	struct buf key;
	char *err = NULL;
	int replace = cli_val(a, "replace-ngc-credentials") != NULL;
	int install = cli_val(a, "install-ngc-credentials") != NULL || replace, rc;

	if (replace && cli_val(a, "install-ngc-credentials") != NULL) {
		fprintf(stderr, "taotop: --install-ngc-credentials writes a new file, "
		    "--replace-ngc-credentials replaces the NGC lines of one: give one of them\n");
		return EXIT_USAGE;
	}
	if (cli_val(a, "ngc-key-file") != NULL && !install) {
		fprintf(stderr, "taotop: --ngc-key-file goes with --install-ngc-credentials or "
		    "--replace-ngc-credentials\n");
		return EXIT_USAGE;
	}
	/* The key first, before connecting: a wrong file costs no login. */
	buf_init_secret(&key);
	if (install && ngc_key(cli_val(a, "ngc-key-file"), &key, &err) != 0) {
		buf_free(&key);
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		return EXIT_FAILED;
	}
	if ((rc = session_open(&s, cli_val(a, "cluster"), NULL)) == EXIT_OK) {
		rc = preflight(&s, install ? &key : NULL, replace);
		session_close(&s);
	}
	buf_free(&key);
	return rc;
}

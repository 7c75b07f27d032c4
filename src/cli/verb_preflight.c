/*
 * `taotop preflight`: the checks that a cluster can run taotop's jobs
 * (engine/config/preflight.h), one a line; first, if asked, Enroot's credentials
 * for nvcr.io written from NGC_KEY.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/session.h"
#include "cli/show.h"
#include "engine/config/preflight.h"
#include "ssh/conn.h"

void cli_print_preflight(FILE *f, const struct preflight *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		fprintf(f, "%s %s%s%s\n", p->checks[i].ok ? "\xe2\x9c\x93" : p->checks[i].warn_only
		    ? "!" : "\xe2\x9c\x97", p->checks[i].name, p->checks[i].fix ? ": " : "",
		    p->checks[i].fix ? show_on(f, p->checks[i].fix) : "");
}

static int preflight(struct session *s, int install)
{
	struct preflight p;
	char *err = NULL;
	int rc;

	if (install) {
		if (preflight_install_ngc(s->conn, getenv("NGC_KEY"), &err) != 0)
			return session_say(EXIT_FAILED, err);
		printf("installed ~/.config/enroot/.credentials on %s (mode 600)\n", conn_host(s->conn));
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
	int rc;

	if ((rc = session_open(&s, cli_val(a, "cluster"), NULL)) != EXIT_OK)
		return rc;
	rc = preflight(&s, cli_val(a, "install-ngc-credentials") != NULL);
	session_close(&s);
	return rc;
}

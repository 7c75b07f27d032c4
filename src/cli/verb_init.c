/*
 * `taotop init`: the first-run setup on the command line. The fields come
 * from the options, and on a terminal the missing ones are asked for, each
 * checked as it is typed (engine/config/setup.h). Then taotop connects (an unknown
 * host key is shown and, on a terminal, offered), runs the preflight and
 * shows it, and writes the cluster into the config file only once the user
 * has said yes (or --yes): nothing is written before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/show.h"
#include "cli/ttyask.h"
#include "engine/config/config.h"
#include "engine/config/preflight.h"
#include "engine/config/setup.h"
#include "ssh/conn.h"
#include "ssh/sshconfig.h"
#include "util/xmalloc.h"

/* A line from the terminal, without its newline; NULL at end of input. */
static char *ask(const char *prompt)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	fputs(prompt, stdout);
	fflush(stdout);
	n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	line[strcspn(line, "\r\n")] = '\0';
	return line;
}

static int yes(const char *prompt)
{
	char *a = ask(prompt);
	int y = a != NULL && (strcmp(a, "y") == 0 || strcmp(a, "Y") == 0 || strcmp(a, "yes") == 0);

	free(a);
	return y;
}

/* The hosts ~/.ssh/config names, offered before the hosts are asked. */
static void offer_ssh_hosts(void)
{
	char **h, *path = sshcfg_path(NULL);
	size_t n = sshcfg_hosts(NULL, &h), i;

	if (n > 0) {
		printf("Hosts in %s:", path);
		for (i = 0; i < n; i++)
			printf("%s %s", i ? "," : "", show(h[i]));
		printf("\n");
	}
	for (i = 0; i < n; i++)
		free(h[i]);
	free(h);
	free(path);
}

/* Each field from its option, else (on a terminal) asked until it reads
 * well. -1 when a field is wrong and cannot be asked again: no_ask says
 * why nothing is asked (no terminal, --yes), NULL when it is. */
static int fill(struct setup_draft *d, const struct cli_args *a, const struct config *existing,
    const char *no_ask)
{
	int f;

	for (f = 0; f < SF_COUNT; f++) {
		const char *given = cli_val(a, setup_option((enum setup_field)f));
		char *problem;

		if (given != NULL) {
			setup_set(d, (enum setup_field)f, given);
		} else if (no_ask == NULL) {
			if (f == SF_HOSTS)
				offer_ssh_hosts();
			for (;;) {
				char *hint = setup_hint(d, (enum setup_field)f), *prompt, *line;
				prompt = xasprintf("%s (%s): ", setup_label((enum setup_field)f), hint);
				line = ask(prompt);
				free(prompt), free(hint);
				if (line == NULL)
					return -1;
				setup_set(d, (enum setup_field)f, line);
				free(line);
				if ((problem = setup_problem(d, (enum setup_field)f, existing)) == NULL)
					break;
				printf("%s\n", problem);
				free(problem);
			}
			continue;
		}
		if ((problem = setup_problem(d, (enum setup_field)f, existing)) != NULL) {
			if (f == SF_HOSTS && given == NULL)
				fprintf(stderr, "taotop init: %s (--hosts; %s)\n", problem, no_ask);
			else
				fprintf(stderr, "taotop init: %s\n", problem);
			free(problem);
			return -1;
		}
	}
	return 0;
}

/* Connect; an unknown host key is shown, and trusted when the user says
 * so on a terminal. */
static int connect_draft(struct conn *c, int tty, int trust_ok)
{
	char *err = NULL;
	enum conn_status st = conn_connect(c, &err);

	if (st == CONN_HOSTKEY_UNKNOWN && tty && trust_ok && conn_refused_host(c) != NULL) {
		char *host = xstrdup(conn_refused_host(c)), *fp = xstrdup(conn_refused_fingerprint(c));
		char *q = xasprintf("The host key of %s is not known yet:\n  %s\nCheck it with your "
		    "site (ssh-keygen -lf on the host), then trust it and add it to known_hosts? "
		    "[y/N] ", show(host), show(fp));
		int trusted = yes(q);
		free(q);
		free(err);
		err = NULL;
		st = trusted ? conn_trust_host(c, host, fp, &err) : CONN_HOSTKEY_UNKNOWN;
		if (!trusted)
			err = xasprintf("%s: host key not trusted", host);
		else if (st == CONN_OK)
			st = conn_connect(c, &err);
		free(host), free(fp);
	}
	if (st != CONN_OK) {
		fprintf(stderr, "taotop init: %s\n", show_err(err ? err : "cannot connect"));
		fprintf(stderr, "taotop init: nothing written\n");
	}
	free(err);
	return st == CONN_OK ? EXIT_OK : EXIT_CONNECT;
}

/* The draft d from the options and, when it may ask, the terminal; checked
 * against the config file's clusters. EXIT_OK, or EXIT_USAGE said. */
static int draft(struct setup_draft *d, const struct cli_args *a, int tty, int given_yes)
{
	struct config existing;
	char *err = NULL;
	int rc, have;

	rc = config_load(&existing, &err);
	if (rc < 0) {
		/* A file that does not read is the user's to fix first: adding
		 * to it could only make it worse. */
		fprintf(stderr, "taotop init: %s\n", show_err(err));
		free(err);
		return EXIT_USAGE;
	}
	free(err);
	have = rc == 0;
	if (fill(d, a, have ? &existing : NULL, !tty ? "without a terminal nothing can be asked" :
	    given_yes ? "with --yes nothing is asked" : NULL) != 0)
		rc = EXIT_USAGE;
	else
		rc = EXIT_OK;
	if (have)
		config_free(&existing);
	return rc;
}

/* Written once the user says yes on a terminal, or gave --yes. */
static int write_cluster(struct setup_draft *d, const char *cluster, int tty, int given_yes)
{
	char *path = config_file_path(), *name = NULL, *err = NULL;
	int rc = EXIT_OK;

	if (!given_yes) {
		char *q = xasprintf("Write cluster '%s' to %s? [y/N] ", cluster, path);
		int ok = tty && yes(q);
		free(q);
		if (!ok) {
			printf("Nothing written%s.\n", tty ? "" : " (pass --yes to write without a "
			    "terminal)");
			free(path);
			return EXIT_FAILED;
		}
	}
	if (setup_write(d, &name, &err) != 0) {
		fprintf(stderr, "taotop init: %s\n", show_err(err));
		rc = EXIT_FAILED;
	} else {
		printf("Wrote cluster '%s' to %s.\nNext: taotop (the monitor), taotop jobs, or "
		    "taotop submit BUNDLE.\n", name, path);
	}
	free(name), free(err), free(path);
	return rc;
}

/* The preflight on c, shown; -1 when it could not run (said). */
static int show_preflight(struct conn *c, const struct cluster_cfg *cl)
{
	struct preflight p;
	char *err = NULL;

	printf("Connected to %s. Preflight:\n", show(conn_host(c)));
	if (preflight_run(c, cl, &p, &err) != 0) {
		fprintf(stderr, "taotop init: %s\ntaotop init: nothing written\n", show_err(err));
		free(err);
		return -1;
	}
	cli_print_preflight(stdout, &p);
	if (!p.all_ok)
		printf("Some checks failed: you can write the cluster now and fix them later "
		    "(taotop preflight checks again).\n");
	preflight_free(&p);
	return 0;
}

int cli_init(const struct cli_args *a)
{
	struct setup_draft d;
	struct cluster_cfg cl;
	struct conn_target t;
	struct conn *c;
	int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO), given_yes = cli_val(a, "yes") != NULL;
	int rc;

	setup_draft_init(&d);
	if ((rc = draft(&d, a, tty, given_yes)) != EXIT_OK) {
		setup_draft_free(&d);
		return rc;
	}
	setup_cluster(&d, &cl);
	cluster_target(&cl, &t);
	tty_ask_target(&t);	/* a one-time code, asked on the terminal */
	c = conn_new(&t);
	printf("Connecting to %s ...\n", show(cl.hosts));
	fflush(stdout);
	if ((rc = connect_draft(c, tty, !given_yes)) == EXIT_OK)
		rc = show_preflight(c, &cl) != 0 ? EXIT_CONNECT : write_cluster(&d, cl.name, tty,
		    given_yes);
	conn_free(c);
	config_cluster_free(&cl);
	setup_draft_free(&d);
	return rc;
}

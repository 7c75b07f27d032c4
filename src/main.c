/*
 * taotop: argv -> a verb, or the full-screen monitor.
 *
 * Only this file (and the UI) may decide to quit or print to the terminal;
 * the engine and the SSH layer return errors as sentences for us to show.
 * The verbs and the options here are cli/table.c's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ui/ui.h"
#include "util/compat.h"

int main(int argc, char **argv)
{
	const struct cli_opt *g = cli_global_opts();
	const struct cli_verb *verb;
	struct cli_args args;
	struct option lopts[10];
	struct ui_opts ui = { NULL, 0, -1 };
	char shorts[16] = "+";	/* '+': stop at the verb, whose options are its own */
	size_t i, n = 0;
	int c, rc;

	for (i = 0; g[i].name != NULL && i < 9; i++, n++) {
		lopts[i] = (struct option){ g[i].name, g[i].arg ? required_argument : no_argument,
		    NULL, g[i].letter ? g[i].letter : 256 + (int)i };
		if (g[i].letter != 0)
			shorts[strlen(shorts)] = g[i].letter;
	}
	lopts[n] = (struct option){ NULL, 0, NULL, 0 };
	/* No core file, and no ptrace by the user's other processes, from the
	 * first instruction: a one-time code, a password or an NGC key may be
	 * typed later, and a secret read from a .env, and each passes through
	 * buffers no wipe can reach (libssh's, the terminal's). */
	compat_no_dumps();
	/* Before any thread: libssh 0.11 must leave a ProxyJump to taotop
	 * (ssh/conn.c reads it back into its own jump chain). */
	setenv("OPENSSH_PROXYJUMP", "1", 0);

	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		const char *name;

		for (i = 0; i < n; i++)
			if (c == (g[i].letter ? g[i].letter : 256 + (int)i))
				break;
		if (i == n) {
			fprintf(stderr, "Try 'taotop --help'.\n");
			return EXIT_USAGE;
		}
		name = g[i].name;
		if (strcmp(name, "help") == 0) {
			cli_help(stdout);
			return EXIT_OK;
		} else if (strcmp(name, "version") == 0) {
			printf("taotop %s\n", TAOTOP_VERSION);
			return EXIT_OK;
		} else if (strcmp(name, "theme") == 0) {
			ui.theme = optarg;
		} else if (strcmp(name, "readonly") == 0) {
			ui.readonly = 1;
		} else if (strcmp(name, "log-colors") == 0) {
			if (strcmp(optarg, "render") != 0 && strcmp(optarg, "strip") != 0) {
				fprintf(stderr, "taotop: --log-colors takes render or strip, not "
				    "'%s'\n", optarg);
				return EXIT_USAGE;
			}
			ui.log_colors = strcmp(optarg, "render") == 0;
		} else if (strcmp(name, "no-share") == 0) {
			setenv("TAOTOP_NO_SHARE", "1", 1);
		}
	}
	argc -= optind;
	argv += optind;

	if (argc == 0)
		return ui_run(&ui);
	/* Not a verb of the table: the shells' completion scripts ask here. */
	if (strcmp(argv[0], "__complete") == 0)
		return cli_complete(argc - 1, argv + 1);
	verb = cli_verb(argv[0]);
	if (verb == NULL) {
		fprintf(stderr, "taotop: unknown verb '%s'\n", argv[0]);
		fprintf(stderr, "Try 'taotop --help'.\n");
		return EXIT_USAGE;
	}
	rc = cli_parse(verb, argc, argv, &args);
	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	return verb->run(&args);
}

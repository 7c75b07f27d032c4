/*
 * taotop: argv -> a verb, or the full-screen monitor.
 *
 * Only this file (and the UI) may decide to quit or print to the terminal;
 * the engine and the SSH layer return errors as sentences for us to show.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ui/ui.h"

struct verb {
	const char	*name;
	const char	*args;
	const char	*summary;
	/* NULL while the verb is not built yet: it says so and exits 1. */
	int		(*run)(int argc, char **argv);
};

static const struct verb verbs[] = {
	{ "submit", "SPEC [--cluster C] [--dry-run]",
	  "stage and submit a job from a spec bundle", cli_submit },
	{ "status", "JOB [--json] [--watch]",
	  "show a job's TAO and SLURM state", cli_status },
	{ "logs", "JOB [--err] [-n N] [-f]",
	  "print or follow a job's main.out or main.err", cli_logs },
	{ "cancel", "JOB...",
	  "cancel jobs (an already finished job counts as cancelled)", cli_cancel },
	{ "retry", "JOB [--cluster C]",
	  "submit a finished job again from its staged sbatch", cli_retry },
	{ "jobs", "[--all-clusters] [--json]",
	  "list taotop's jobs and your other jobs", cli_jobs },
	{ "preflight", "[--cluster C] [--install-ngc-credentials]",
	  "check that a cluster can run taotop's jobs", cli_preflight },
};

enum { OPT_THEME = 256, OPT_READONLY, OPT_LOG_COLORS };

static const struct option global_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "theme", required_argument, NULL, OPT_THEME },
	{ "readonly", no_argument, NULL, OPT_READONLY },
	{ "log-colors", required_argument, NULL, OPT_LOG_COLORS },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
	    "usage: taotop [--theme NAME] [--readonly] [--log-colors render|strip]\n"
	    "       taotop [--help] [--version] VERB [ARGS]\n"
	    "\n"
	    "Without a verb, taotop opens the full-screen monitor of your jobs.\n"
	    "\n"
	    "Verbs:\n");
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-10s %-34s %s\n", verbs[i].name, verbs[i].args,
		    verbs[i].summary);
	fprintf(f,
	    "\n"
	    "Options:\n"
	    "  -h, --help      show this help\n"
	    "  -V, --version   show the version\n"
	    "  --theme NAME    the monitor's theme (default, light, high-contrast,\n"
	    "                  monochrome, ocean256, or your own)\n"
	    "  --readonly      the monitor changes nothing (no cancel)\n"
	    "  --log-colors render|strip\n"
	    "                  show the colours jobs print in their logs, or not\n"
	    "\n"
	    "Exit codes: 0 ok, 1 operation failed, 2 usage error,\n"
	    "            3 connection, authentication or host key failure.\n"
	    "See taotop(1) for files, environment variables and keys.\n");
}

static const struct verb *find_verb(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct verb *verb;
	struct ui_opts ui = { NULL, 0, -1 };
	int c;

	/* '+': stop at the verb, whose own options are its business. */
	while ((c = getopt_long(argc, argv, "+hV", global_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("taotop %s\n", TAOTOP_VERSION);
			return EXIT_OK;
		case OPT_THEME:
			ui.theme = optarg;
			break;
		case OPT_READONLY:
			ui.readonly = 1;
			break;
		case OPT_LOG_COLORS:
			if (strcmp(optarg, "render") != 0 && strcmp(optarg, "strip") != 0) {
				fprintf(stderr, "taotop: --log-colors takes render or strip, not "
				    "'%s'\n", optarg);
				return EXIT_USAGE;
			}
			ui.log_colors = strcmp(optarg, "render") == 0;
			break;
		default:
			fprintf(stderr, "Try 'taotop --help'.\n");
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;

	if (argc == 0)
		return ui_run(&ui);
	verb = find_verb(argv[0]);
	if (verb == NULL) {
		fprintf(stderr, "taotop: unknown verb '%s'\n", argv[0]);
		fprintf(stderr, "Try 'taotop --help'.\n");
		return EXIT_USAGE;
	}
	if (verb->run == NULL) {
		fprintf(stderr, "taotop: '%s' is not built yet\n", verb->name);
		return EXIT_FAILED;
	}
	/* 0, not 1: GNU getopt then forgets the '+' (stop at the first
	 * non-option) of our own parse, and a verb's options may follow its
	 * arguments ("logs JOB -f"). */
	optind = 0;
	return verb->run(argc, argv);
}

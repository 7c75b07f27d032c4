/*
 * The command-line verbs: argv in, text (or JSON) on stdout, sentences on
 * stderr, and the exit codes of taotop(1). They call the same engine
 * functions as the monitor.
 */
#ifndef TAOTOP_CLI_CLI_H
#define TAOTOP_CLI_CLI_H

/* Exit codes, as documented in --help and taotop(1). */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,	/* the operation ran and failed */
	EXIT_USAGE = 2,		/* bad arguments */
	EXIT_CONNECT = 3,	/* connection, authentication or host key */
};

int cli_jobs(int argc, char **argv);
int cli_status(int argc, char **argv);
int cli_cancel(int argc, char **argv);
int cli_logs(int argc, char **argv);
int cli_submit(int argc, char **argv);
int cli_preflight(int argc, char **argv);
int cli_retry(int argc, char **argv);

#endif

/*
 * The command-line verbs: argv in, text (or JSON) on stdout, sentences on
 * stderr, and the exit codes of taotop(1). They call the same engine
 * functions as the monitor.
 *
 * One table (table.c) says what each verb is: its name, positional
 * arguments, options with their argument and one line of help, and
 * summary. `taotop --help`, `taotop VERB --help`, the parsing of a verb's
 * argv and its usage error are all made from it, and a unit test holds
 * taotop.1 to it.
 */
#ifndef TAOTOP_CLI_CLI_H
#define TAOTOP_CLI_CLI_H

#include <stdio.h>

/* Exit codes, as documented in --help and taotop(1). */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,	/* the operation ran and failed */
	EXIT_USAGE = 2,		/* bad arguments */
	EXIT_CONNECT = 3,	/* connection, authentication or host key */
	/* `status --watch` and `logs --until-end`: how the job ended (Done is
	 * EXIT_OK), so a script can tell without parsing. */
	EXIT_JOB_ERROR = 4,	/* the job ended in Error */
	EXIT_JOB_CANCELED = 5,	/* the job was cancelled */
};

enum tao_state;
/* The exit code that tells a final state: 0 Done, EXIT_JOB_ERROR,
 * EXIT_JOB_CANCELED. */
int cli_exit_for_end(enum tao_state st);

/* One option of a verb (or of taotop itself). */
struct cli_opt {
	const char	*name;		/* the long name, without "--" */
	char		 letter;	/* its one-letter form, or 0 */
	const char	*arg;		/* the argument's name ("N"), or NULL: a flag */
	const char	*help;		/* one line */
};

#define CLI_MAX_OPTS	16

struct cli_verb;

/* A verb's argv as parsed: an option's value ("" for a flag), or NULL
 * when it was not given; the positional arguments. */
struct cli_args {
	const struct cli_verb	*verb;
	const char		*val[CLI_MAX_OPTS];
	int			 at[CLI_MAX_OPTS];	/* where it came last, 1-based; 0 not given */
	char			**pos;
	int			 npos;
};

struct cli_verb {
	const char		*name;
	const char		*args;		/* positional: "JOB", "JOB...", "SPEC", "" */
	const char		*summary;	/* one line */
	const struct cli_opt	*opts;		/* ends with a NULL name */
	int			(*run)(const struct cli_args *a);
};

/* The verbs, in the order --help lists them; *n their number. */
const struct cli_verb *cli_verbs(size_t *n);
const struct cli_verb *cli_verb(const char *name);
/* taotop's own options (before the verb), ending with a NULL name. */
const struct cli_opt *cli_global_opts(void);

/* Parse argv (argv[0] the verb's name) by v's table. EXIT_OK, or -1 when
 * --help was asked and printed, or EXIT_USAGE with the usage on stderr. */
int cli_parse(const struct cli_verb *v, int argc, char **argv, struct cli_args *a);
/* Option name's value, "" for a given flag, NULL when not given. Naming
 * an option the verb does not have is a bug: it aborts. */
const char *cli_val(const struct cli_args *a, const char *name);
/* Where option name came last on the command line (0: not given): of two
 * that contradict, the later wins. */
int cli_at(const struct cli_args *a, const char *name);
/* "taotop status JOB [--cluster C] [--json] [--watch]" */
void cli_synopsis(FILE *f, const struct cli_verb *v);
/* `taotop VERB --help` and `taotop --help`. */
void cli_verb_help(FILE *f, const struct cli_verb *v);
void cli_help(FILE *f);
/* The usage line and a pointer to --help on stderr: EXIT_USAGE. */
int cli_usage_error(const struct cli_verb *v);

/* `taotop __complete CWORD WORD...` (argv from CWORD on): the candidates
 * for the word at index CWORD of WORD... (WORD 0 is taotop), one a line,
 * for contrib/completion/'s scripts; "@files" means file names. From the
 * verb table, the config file's clusters and the local records' ids: no
 * network. Not a verb of the table, and not in --help. */
int cli_complete(int argc, char **argv);

int cli_init(const struct cli_args *a);
int cli_jobs(const struct cli_args *a);
int cli_report(const struct cli_args *a);
int cli_status(const struct cli_args *a);
int cli_cancel(const struct cli_args *a);
int cli_logs(const struct cli_args *a);
int cli_plot(const struct cli_args *a);
int cli_submit(const struct cli_args *a);
int cli_preflight(const struct cli_args *a);
int cli_retry(const struct cli_args *a);
int cli_agent(const struct cli_args *a);

/* The preflight's checks, one a line: a mark, the check, its fix. */
struct preflight;
void cli_print_preflight(FILE *f, const struct preflight *p);

#endif

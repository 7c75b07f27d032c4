/*
 * The verbs as one table, and everything made from it: the parsing of a
 * verb's argv, `taotop VERB --help`, `taotop --help` and the usage errors.
 * taotop.1 is checked against it by tests/unit/test_cli.c.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLUSTER(what) { "cluster", 0, "NAME", what }
/* Every verb that reaches a cluster: its own connection, not the one the
 * monitor or the agent would lend (ssh/lend.h). */
#define NO_SHARE { "no-share", 0, NULL, "connect on its own, not through the session a " \
	"running monitor or the agent lends (also TAOTOP_NO_SHARE=1, or share: false in the " \
	"config)" }

static const struct cli_opt submit_opts[] = {
	CLUSTER("the cluster to submit to (default: the configured default)"),
	{ "nodes", 0, "N", "nodes, above the bundle's" },
	{ "gpus", 0, "N", "GPUs in all, above the bundle's" },
	{ "time", 0, "HOURS", "the time limit in hours, above the bundle's" },
	{ "partition", 0, "P", "the partition, above SLURM_PARTITION and the bundle's" },
	{ "account", 0, "A", "the account, above SLURM_ACCOUNT and the bundle's" },
	{ "name", 0, "NAME", "the run's name, above the bundle's name: (in the lists, the record and SLURM's comment)" },
	{ "requeue", 0, NULL, "#SBATCH --requeue (the default)" },
	{ "no-requeue", 0, NULL, "#SBATCH --no-requeue" },
	{ "dry-run", 0, NULL, "print the sbatch, the commands and each value's origin; send nothing" },
	{ "json", 0, NULL, "print the result as JSON" },
	{ "force-reconvert", 0, NULL, "convert the image again even if its .sqsh is cached" },
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt status_opts[] = {
	CLUSTER("the cluster of a SLURM id (a taotop id goes to its record's)"),
	{ "json", 0, NULL, "print the job and its record as JSON" },
	{ "why", 0, NULL, "for a pending job: why it waits, in words, with the scheduler's start "
	  "estimate, its priority factors, your fair-share and what you could change (asks the "
	  "scheduler to plan it: on demand only)" },
	{ "bank-record", 0, NULL, "print the job's record as the skill bank's job record "
	  "(JSON, schema_version 1), for the bank's tools; taotop's own jobs only" },
	{ "watch", 0, NULL, "poll until the job is final, a block each poll; exit 0 Done, "
	  "4 Error, 5 Canceled" },
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt logs_opts[] = {
	CLUSTER("the cluster of a SLURM id (a taotop id goes to its record's)"),
	{ "err", 0, NULL, "main.err instead of main.out" },
	{ "role", 0, "NAME", "a Cosmos-RL job's role's own log (controller, policy-0, ...: "
	  "status lists them) instead of main.out" },
	{ "lines", 'n', "N", "the last N lines (default 200)" },
	{ "follow", 'f', NULL, "follow the file as it grows" },
	{ "until-end", 0, NULL, "follow until the job ends, then exit as status --watch does "
	  "(implies --follow)" },
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt plot_opts[] = {
	{ "metric", 0, "NAME", "only this metric, as TAO names it (val_loss, train_loss...); "
	  "with two jobs or more, the runs compared on one plot" },
	{ "text", 0, NULL, "a text plot (the default on a terminal)" },
	{ "csv", 0, NULL, "the series as CSV: job,metric,epoch,value, and a label column when "
	    "runs are compared (the default to a pipe)" },
	{ "json", 0, NULL, "the series as JSON, with each one's last and best value" },
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt cancel_opts[] = {
	CLUSTER("the cluster of SLURM ids (a taotop id goes to its record's)"),
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt retry_opts[] = {
	CLUSTER("the cluster of a SLURM id (a taotop id goes to its record's)"),
	{ "force", 0, NULL, "retry a job that succeeded (Done) too" },
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt jobs_opts[] = {
	CLUSTER("only this cluster (default: every configured cluster)"),
	{ "json", 0, NULL, "print the jobs as a JSON array" },
	{ "since", 0, "SPAN", "also your jobs that ended within SPAN (7d, 1d, 12h), from accounting" },
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt report_opts[] = {
	CLUSTER("only this cluster (default: every configured cluster)"),
	{ "since", 0, "SPAN", "the window: the jobs that ran within SPAN (default 7d; 1d, 12h, 2w)" },
	{ "json", 0, NULL, "print the report as JSON" },
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt preflight_opts[] = {
	CLUSTER("the cluster to check (default: the configured default)"),
	{ "install-ngc-credentials", 0, NULL,
	  "first write Enroot's credentials for nvcr.io from your NGC API key, typed (not shown)" },
	{ "replace-ngc-credentials", 0, NULL,
	  "the same over an existing file: its NGC lines replaced (a revoked or expired key), "
	  "the rest kept" },
	{ "ngc-key-file", 0, "FILE", "with --install- or --replace-ngc-credentials: read the key "
	  "from FILE (yours, mode 600) instead" },
	NO_SHARE,
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt init_opts[] = {
	{ "hosts", 0, "HOSTS", "login hosts, comma-separated (a Host of ~/.ssh/config counts)" },
	{ "name", 0, "NAME", "the cluster's name in taotop (default: the first host's)" },
	{ "user", 0, "USER", "your user there (default: as ssh takes it)" },
	{ "key", 0, "FILE", "the private key (default: the agent and ssh's own)" },
	{ "results-root", 0, "PATH", "shared storage for job folders (lustre:///path)" },
	{ "partitions", 0, "LIST", "GPU partitions, comma-separated: a job is given them all" },
	{ "account", 0, "A", "#SBATCH --account, if your site charges one" },
	{ "yes", 'y', NULL, "write without asking (and trust no new host key)" },
	{ NULL, 0, NULL, NULL },
};

static const struct cli_opt agent_opts[] = {
	{ "idle", 0, "TIME", "start: end this long after the last command: minutes, or 90s, "
	  "30m, 8h (default: the config's share_idle_minutes, else 480)" },
	{ "json", 0, NULL, "status: the lenders as a JSON array" },
	{ NULL, 0, NULL, NULL },
};

static const struct cli_verb verbs[] = {
	{ "init", "", "set up a cluster: connect, run the preflight, write the config",
	  init_opts, cli_init },
	{ "submit", "SPEC", "stage and submit a job from a spec bundle",
	  submit_opts, cli_submit },
	{ "status", "[JOB]", "show a job's TAO and SLURM state (no JOB: the shared sessions)",
	  status_opts, cli_status },
	{ "logs", "JOB", "print or follow a job's main.out or main.err",
	  logs_opts, cli_logs },
	{ "plot", "JOB...", "plot the metrics TAO reported for finished jobs, from their records",
	  plot_opts, cli_plot },
	{ "cancel", "JOB...", "cancel jobs (an already finished job counts as cancelled)",
	  cancel_opts, cli_cancel },
	{ "retry", "JOB", "submit a finished job again from its staged sbatch",
	  retry_opts, cli_retry },
	{ "jobs", "", "list taotop's jobs and your other jobs, on every cluster",
	  jobs_opts, cli_jobs },
	{ "report", "", "where your GPU hours went: by outcome, idle, the worst, the waits",
	  report_opts, cli_report },
	{ "preflight", "", "check that a cluster can run taotop's jobs",
	  preflight_opts, cli_preflight },
	{ "agent", "ACTION", "start, stop or show the agent lending SSH sessions to taotop",
	  agent_opts, cli_agent },
};

static const struct cli_opt global_opts[] = {
	{ "help", 'h', NULL, "show this help" },
	{ "version", 'V', NULL, "show the version" },
	{ "theme", 0, "NAME", "the monitor's theme (default, light, high-contrast, "
	  "monochrome, ocean256, or your own)" },
	{ "readonly", 0, NULL, "the monitor changes nothing (no cancel, no retry)" },
	{ "log-colors", 0, "render|strip", "show the colours jobs print in their logs, or not" },
	{ "no-share", 0, NULL, "the monitor lends its sessions to no other taotop (see taotop "
	  "agent); before a verb: that verb connects on its own" },
	{ NULL, 0, NULL, NULL },
};

/* Every verb's --help, not in the table: the man page says it once. */
static const struct cli_opt help_opt = { "help", 'h', NULL, "show this help" };

const struct cli_verb *cli_verbs(size_t *n)
{
	*n = sizeof(verbs) / sizeof(verbs[0]);
	return verbs;
}

const struct cli_verb *cli_verb(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

const struct cli_opt *cli_global_opts(void)
{
	return global_opts;
}

static size_t count_opts(const struct cli_opt *o)
{
	size_t n = 0;

	while (o[n].name != NULL)
		n++;
	return n;
}

/* "JOB" 1 to 1, "JOB..." 1 or more, "" none. */
static void arity(const char *args, int *min, int *max)
{
	const char *p;

	int words = 0;

	*min = 0;
	for (p = args; *p != '\0'; p++)
		if (p == args || (p[-1] == ' ' && *p != ' ')) {
			words++;
			if (*p != '[')	/* "[JOB]": may be left out */
				(*min)++;
		}
	*max = strstr(args, "...") != NULL ? -1 : words;
}

/* A word to f at column *col after a space (none at the start of a wrapped
 * line); a word that would pass column 79 starts a new line at indent. */
static void put_word(FILE *f, int *col, int indent, const char *word)
{
	int len = (int)strlen(word);

	if (*col > indent && *col + 1 + len > 79) {
		fprintf(f, "\n%*s", indent, "");
		*col = indent;
	} else if (*col != indent) {
		fputc(' ', f);
		(*col)++;
	}
	fputs(word, f);
	*col += len;
}

/* Text wrapped at white space, going on at column indent. */
static void put_text(FILE *f, int *col, int indent, const char *text)
{
	char word[256];
	size_t n;

	while (*text != '\0') {
		text += strspn(text, " ");
		n = strcspn(text, " ");
		if (n == 0)
			break;
		if (n >= sizeof(word))
			n = sizeof(word) - 1;
		memcpy(word, text, n);
		word[n] = '\0';
		put_word(f, col, indent, word);
		text += n;
	}
}

static void synopsis_at(FILE *f, const struct cli_verb *v, int col)
{
	const struct cli_opt *o;
	char word[128];
	int indent;

	fprintf(f, "taotop %s", v->name);
	col += 7 + (int)strlen(v->name);
	indent = col + 1;
	if (v->args[0] != '\0')
		put_text(f, &col, indent, v->args);
	for (o = v->opts; o->name != NULL; o++) {
		if (o->letter != 0)
			snprintf(word, sizeof(word), "[-%c%s%s]", o->letter, o->arg ? " " : "",
			    o->arg ? o->arg : "");
		else
			snprintf(word, sizeof(word), "[--%s%s%s]", o->name, o->arg ? " " : "",
			    o->arg ? o->arg : "");
		put_word(f, &col, indent, word);
	}
}

void cli_synopsis(FILE *f, const struct cli_verb *v)
{
	synopsis_at(f, v, 0);
}

static void opt_line(FILE *f, const struct cli_opt *o)
{
	char left[64];
	int col;

	snprintf(left, sizeof(left), "%s%c%s--%s%s%s", o->letter ? "-" : " ",
	    o->letter ? o->letter : ' ', o->letter ? ", " : "  ", o->name, o->arg ? " " : "",
	    o->arg ? o->arg : "");
	if (strlen(left) > 24)
		fprintf(f, "  %s\n  %-24s", left, "");
	else
		fprintf(f, "  %-24s", left);
	col = 26;
	put_text(f, &col, 27, o->help);
	fputc('\n', f);
}

void cli_verb_help(FILE *f, const struct cli_verb *v)
{
	const struct cli_opt *o;

	fprintf(f, "usage: ");
	synopsis_at(f, v, 7);
	fprintf(f, "\n\n%c%s.\n\nOptions:\n", v->summary[0] - 'a' + 'A', v->summary + 1);
	for (o = v->opts; o->name != NULL; o++)
		opt_line(f, o);
	opt_line(f, &help_opt);
	fprintf(f, "\nSee taotop(1).\n");
}

void cli_help(FILE *f)
{
	const struct cli_opt *o;
	size_t i;

	fprintf(f,
	    "usage: taotop [--theme NAME] [--readonly] [--log-colors render|strip]\n"
	    "              [--no-share]\n"
	    "       taotop [--help] [--version] VERB [ARGS]\n"
	    "\n"
	    "Without a verb, taotop opens the full-screen monitor of your jobs.\n"
	    "\n"
	    "Verbs:\n");
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
		fprintf(f, "             ");
		synopsis_at(f, &verbs[i], 13);
		fprintf(f, "\n");
	}
	fprintf(f, "\nOptions:\n");
	for (o = global_opts; o->name != NULL; o++)
		opt_line(f, o);
	fprintf(f,
	    "\n"
	    "'taotop VERB --help' tells a verb's options.\n"
	    "Exit codes: 0 ok, 1 operation failed, 2 usage error,\n"
	    "            3 connection, authentication or host key failure;\n"
	    "            status --watch and logs --until-end: 0 the job ended Done,\n"
	    "            4 it ended in Error, 5 it was cancelled.\n"
	    "See taotop(1) for files, environment variables and keys.\n");
}

int cli_usage_error(const struct cli_verb *v)
{
	fprintf(stderr, "usage: ");
	synopsis_at(stderr, v, 7);
	fprintf(stderr, "\nTry 'taotop %s --help'.\n", v->name);
	return EXIT_USAGE;
}

int cli_parse(const struct cli_verb *v, int argc, char **argv, struct cli_args *a)
{
	struct option lopts[CLI_MAX_OPTS + 2];
	char shorts[2 * CLI_MAX_OPTS + 4], *s = shorts;
	size_t n = count_opts(v->opts), i;
	int c, min, max, seq = 0;

	if (n > CLI_MAX_OPTS)
		abort();	/* the table outgrew cli_args */
	memset(a, 0, sizeof(*a));
	a->verb = v;
	*s++ = ':';	/* a missing argument returns ':', not '?' */
	*s++ = 'h';
	for (i = 0; i < n; i++) {
		const struct cli_opt *o = &v->opts[i];
		lopts[i] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
		    o->letter ? o->letter : 256 + (int)i };
		if (o->letter != 0) {
			*s++ = o->letter;
			if (o->arg != NULL)
				*s++ = ':';
		}
	}
	*s = '\0';
	lopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[n + 1] = (struct option){ NULL, 0, NULL, 0 };

	/* 0, not 1: GNU getopt then starts afresh after main's own parse, and
	 * a verb's options may follow its arguments ("logs JOB -f"). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		if (c == 'h') {
			cli_verb_help(stdout, v);
			return -1;
		}
		if (c == '?' || c == ':') {
			if (c == '?' && optopt > 0 && optopt < 256)
				fprintf(stderr, "taotop %s: unknown option '-%c'\n", v->name, optopt);
			else
				fprintf(stderr, "taotop %s: %s '%s'\n", v->name, c == ':' ?
				    "an argument is missing after" : "unknown option", argv[optind - 1]);
			return cli_usage_error(v);
		}
		for (i = 0; i < n; i++)
			if (c == (v->opts[i].letter ? v->opts[i].letter : 256 + (int)i))
				break;
		if (i == n)
			abort();
		a->val[i] = v->opts[i].arg ? optarg : "";
		a->at[i] = ++seq;
		/* Every verb's --no-share is the environment's switch, which
		 * the session reads wherever the verb dials (cli/session.c). */
		if (strcmp(v->opts[i].name, "no-share") == 0)
			setenv("TAOTOP_NO_SHARE", "1", 1);
	}
	a->pos = argv + optind;
	a->npos = argc - optind;
	arity(v->args, &min, &max);
	if (a->npos < min) {
		fprintf(stderr, "taotop %s: no %.*s given\n", v->name, (int)strcspn(v->args, ". "),
		    v->args);
		return cli_usage_error(v);
	}
	if (max >= 0 && a->npos > max) {
		fprintf(stderr, "taotop %s: one argument too many: '%s'%s\n", v->name,
		    a->pos[max], max == 0 ? " (it takes none)" : "");
		return cli_usage_error(v);
	}
	return EXIT_OK;
}

static size_t opt_index(const struct cli_args *a, const char *name)
{
	size_t i;

	for (i = 0; a->verb->opts[i].name != NULL; i++)
		if (strcmp(a->verb->opts[i].name, name) == 0)
			return i;
	fprintf(stderr, "taotop: %s has no option --%s\n", a->verb->name, name);
	abort();
}

const char *cli_val(const struct cli_args *a, const char *name)
{
	return a->val[opt_index(a, name)];
}

int cli_at(const struct cli_args *a, const char *name)
{
	return a->at[opt_index(a, name)];
}

/*
 * `taotop __complete CWORD WORD...`: the candidates for the shells'
 * completion scripts (contrib/completion/), made from the verb table so
 * they never disagree with it, from the config file's cluster names and
 * from the local records' ids. Nothing here touches the network.
 */
#include "cli/cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/config.h"
#include "engine/store/store.h"
#include "util/file.h"
#include "util/share.h"

/* The option called `word` ("--name", "-x") in opts, or NULL. */
static const struct cli_opt *find_opt(const struct cli_opt *opts, const char *word)
{
	size_t i;

	for (i = 0; opts != NULL && opts[i].name != NULL; i++) {
		if (word[0] == '-' && word[1] == '-' && strcmp(word + 2, opts[i].name) == 0)
			return &opts[i];
		if (word[0] == '-' && word[1] == opts[i].letter && opts[i].letter != 0 &&
		    word[2] == '\0')
			return &opts[i];
	}
	return NULL;
}

static void print_opts(const struct cli_opt *opts, int with_help)
{
	size_t i;

	for (i = 0; opts[i].name != NULL; i++) {
		printf("--%s\n", opts[i].name);
		if (opts[i].letter != 0)
			printf("-%c\n", opts[i].letter);
	}
	if (with_help)
		printf("--help\n-h\n");
}

/* The config file's clusters, by the file's text alone (config_parse): a
 * setting missing from the environment must not hide them. */
static void print_clusters(void)
{
	char *path = config_file_path(), *err = NULL, *text;
	struct config cfg;
	size_t len, i;

	text = path != NULL ? file_read_all(path, &len, &err) : NULL;
	if (text != NULL && config_parse(path, text, len, &cfg, &err) == 0) {
		for (i = 0; i < cfg.n; i++)
			printf("%s\n", cfg.clusters[i].name);
		config_free(&cfg);
	}
	free(err);
	free(text);
	free(path);
}

static void print_job_ids(void)
{
	struct job_record **list = NULL;
	struct record_store *st;
	char *err = NULL, *warnings = NULL;
	size_t n = 0, i;

	st = store_open(NULL, &err);
	if (st != NULL && store_list(st, &list, &n, &warnings) == 0) {
		/* Newest first: the job one most likely means. */
		for (i = n; i > 0; i--)
			printf("%s\n", list[i - 1]->id);
		store_list_free(list, n);
	}
	if (st != NULL)
		store_close(st);
	free(warnings);
	free(err);
}

static void print_themes(void)
{
	char *dir = share_dir("themes");
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0 && e->d_name[0] != '.')
			printf("%.*s\n", (int)(len - 5), e->d_name);
	}
	if (d != NULL)
		closedir(d);
	free(dir);
}

/* The values an option's argument may take, where taotop knows them. */
static void print_values(const struct cli_opt *o)
{
	if (strcmp(o->name, "cluster") == 0)
		print_clusters();
	else if (strcmp(o->name, "theme") == 0)
		print_themes();
	else if (strcmp(o->name, "log-colors") == 0)
		printf("render\nstrip\n");
	else if (o->arg != NULL && strcmp(o->arg, "FILE") == 0)
		printf("@files\n");	/* --key, --ngc-key-file: the shell's file names */
}

int cli_complete(int argc, char **argv)
{
	const struct cli_opt *g = cli_global_opts(), *o;
	const struct cli_verb *verb = NULL, *v;
	const char *cur;
	size_t i, n;
	int cword, k, after_dashes = 0;

	/* argv: CWORD, then the words, the first being taotop itself. */
	if (argc < 2)
		return EXIT_USAGE;
	cword = atoi(argv[0]);
	argv++;
	argc--;
	if (cword < 1 || cword > argc)
		return EXIT_USAGE;
	cur = cword < argc ? argv[cword] : "";

	for (k = 1; k < cword; k++) {
		const char *w = argv[k];
		if (verb == NULL) {
			if ((o = find_opt(g, w)) != NULL) {
				k += o->arg != NULL;	/* its argument */
				continue;
			}
			if (w[0] == '-')
				continue;
			verb = cli_verb(w);
			if (verb == NULL)
				return EXIT_OK;		/* not a verb: nothing to offer */
			continue;
		}
		if (strcmp(w, "--") == 0)
			after_dashes = 1;
		else if (!after_dashes && (o = find_opt(verb->opts, w)) != NULL && o->arg != NULL)
			k++;
	}
	if (cword >= 2 && k == cword + 1) {
		/* The word before the cursor is an option wanting a value. */
		o = find_opt(verb != NULL ? verb->opts : g, argv[cword - 1]);
		if (o != NULL)
			print_values(o);
		return EXIT_OK;
	}

	if (verb == NULL) {
		if (cur[0] == '-') {
			print_opts(g, 0);
		} else {
			v = cli_verbs(&n);
			for (i = 0; i < n; i++)
				printf("%s\n", v[i].name);
		}
		return EXIT_OK;
	}
	if (cur[0] == '-' && !after_dashes) {
		print_opts(verb->opts, 1);
		return EXIT_OK;
	}
	if (strncmp(verb->args, "JOB", 3) == 0 || strncmp(verb->args, "[JOB", 4) == 0)
		print_job_ids();
	else if (strcmp(verb->name, "agent") == 0)
		printf("start\nstop\nstatus\n");
	else if (strcmp(verb->args, "SPEC") == 0)
		printf("@files\n");	/* the shell completes file names */
	return EXIT_OK;
}

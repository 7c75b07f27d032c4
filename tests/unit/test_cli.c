/* The command line as a script sees it: exit codes and where text goes;
 * the verb table against --help and taotop.1. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

/* Run $TAOTOP_BIN with args; capture stdout and stderr apart. */
static int taotop(const char *const args[], struct buf *out, struct buf *err)
{
	const char *bin = getenv("TAOTOP_BIN");
	int po[2], pe[2], status;
	char chunk[4096], *argv[16];
	ssize_t n;
	size_t i;

	cr_assert_not_null(bin, "TAOTOP_BIN is not set: run through make check");
	argv[0] = (char *)bin;
	for (i = 0; args[i] != NULL && i < 14; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(po[1], 1), dup2(pe[1], 2);
		close(po[0]), close(pe[0]), close(po[1]), close(pe[1]);
		execv(bin, argv);
		_exit(127);
	}
	close(po[1]), close(pe[1]);
	buf_init(out), buf_init(err);
	while ((n = read(po[0], chunk, sizeof(chunk))) > 0)
		buf_add(out, chunk, (size_t)n);
	while ((n = read(pe[0], chunk, sizeof(chunk))) > 0)
		buf_add(err, chunk, (size_t)n);
	close(po[0]), close(pe[0]);
	waitpid(pid, &status, 0);
	buf_addc(out, '\0'), out->len--;
	buf_addc(err, '\0'), err->len--;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Test(cli, version_prints_name_and_version)
{
	struct buf out, err;
	cr_assert_eq(taotop((const char *[]){ "--version", NULL }, &out, &err), 0);
	cr_expect(strncmp(out.data, "taotop ", 7) == 0, "%s", out.data);
	cr_expect_eq(err.len, 0);
	{
		/* The release from the VERSION file, then nothing or the
		 * commit: "taotop 0.2.0\n" or "taotop 0.2.0 (g1a2b3c4d)\n". */
		char *path = xasprintf("%s/VERSION", getenv("TAOTOP_SHARE"));
		char *e = NULL, *release = file_read_all(path, NULL, &e);
		size_t n;
		cr_assert(release != NULL, "%s", e);
		release[strcspn(release, "\n")] = '\0';
		n = strlen(release);
		cr_expect(n > 0 && strncmp(out.data + 7, release, n) == 0, "%s vs %s", out.data, release);
		cr_expect(strcmp(out.data + 7 + n, "\n") == 0 ||
		    strncmp(out.data + 7 + n, " (g", 3) == 0, "%s", out.data);
		free(release), free(path), free(e);
	}
	buf_free(&out), buf_free(&err);
	/* -V, as the man page gives it, says the same. */
	cr_assert_eq(taotop((const char *[]){ "-V", NULL }, &out, &err), 0, "%s", err.data);
	cr_expect(strncmp(out.data, "taotop ", 7) == 0, "%s", out.data);
	buf_free(&out), buf_free(&err);
}

Test(cli, help_lists_every_verb_and_exit_codes)
{
	struct buf out, err;
	const char *verbs[] = { "submit", "status", "logs", "cancel", "retry", "jobs", "preflight" };
	cr_assert_eq(taotop((const char *[]){ "--help", NULL }, &out, &err), 0);
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		char want[32];
		snprintf(want, sizeof(want), "\n  %s ", verbs[i]);
		cr_expect(strstr(out.data, want) != NULL, "help lacks verb %s", verbs[i]);
	}
	cr_expect(strstr(out.data, "Exit codes") != NULL);
	buf_free(&out), buf_free(&err);
}

Test(cli, unknown_verb_is_a_usage_error_on_stderr)
{
	struct buf out, err;
	cr_expect_eq(taotop((const char *[]){ "frobnicate", NULL }, &out, &err), 2);
	cr_expect_eq(out.len, 0, "usage errors go to stderr, not stdout");
	cr_expect(strstr(err.data, "unknown verb 'frobnicate'") != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
}

Test(cli, unknown_option_is_a_usage_error_on_stderr)
{
	struct buf out, err;
	cr_expect_eq(taotop((const char *[]){ "--frobnicate", NULL }, &out, &err), 2);
	cr_expect_eq(out.len, 0);
	cr_expect(strstr(err.data, "frobnicate") != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
}

Test(cli, retry_without_a_job_is_a_usage_error)
{
	struct buf out, err;
	cr_expect_eq(taotop((const char *[]){ "retry", NULL }, &out, &err), 2);
	cr_expect(strstr(err.data, "usage: taotop retry JOB") != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
}

Test(cli, the_monitor_needs_a_terminal)
{
	struct buf out, err;
	cr_expect_eq(taotop((const char *[]){ NULL }, &out, &err), 2);
	cr_expect(strstr(err.data, "the monitor needs a terminal") != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
	cr_expect_eq(taotop((const char *[]){ "--log-colors", "rainbow", NULL }, &out, &err), 2);
	cr_expect(strstr(err.data, "--log-colors takes render or strip") != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
}

/* s with every run of white space made one space, for text --help wraps. */
/* strcasestr and memmem are not POSIX: the two uses here, by hand. */
static int has_words(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay != '\0'; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return 1;
	return n == 0;
}

static int has_within(const char *from, const char *to, const char *needle)
{
	size_t n = strlen(needle);

	for (; from + n <= to; from++)
		if (memcmp(from, needle, n) == 0)
			return 1;
	return 0;
}

static char *squeeze(const char *s)
{
	char *out = xstrdup(s), *o = out;

	for (; *s != '\0'; s++) {
		if (isspace((unsigned char)*s)) {
			if (o == out || o[-1] != ' ')
				*o++ = ' ';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

Test(cli, every_verb_has_help_on_stdout_with_every_option_of_the_table)
{
	size_t n, i;
	const struct cli_verb *v = cli_verbs(&n);

	cr_assert_geq(n, 7);
	for (i = 0; i < n; i++) {
		struct buf out, err;
		const struct cli_opt *o;
		char want[128], *flat;

		cr_assert_eq(taotop((const char *[]){ v[i].name, "--help", NULL }, &out, &err), 0,
		    "taotop %s --help: %s", v[i].name, err.data);
		cr_expect_eq(err.len, 0, "%s --help wrote to stderr: %s", v[i].name, err.data);
		snprintf(want, sizeof(want), "usage: taotop %s %s", v[i].name, v[i].args);
		flat = squeeze(out.data);
		cr_expect(strncmp(flat, want, strlen(want)) == 0, "%s", out.data);
		cr_expect(has_words(flat, v[i].summary), "no summary in:\n%s", out.data);
		for (o = v[i].opts; o->name != NULL; o++) {
			char *help = squeeze(o->help);
			snprintf(want, sizeof(want), "--%s", o->name);
			cr_expect(strstr(flat, want) != NULL, "%s --help lacks %s:\n%s", v[i].name,
			    want, out.data);
			if (o->letter != 0) {
				snprintf(want, sizeof(want), "-%c, --%s", o->letter, o->name);
				cr_expect(strstr(flat, want) != NULL, "%s --help lacks %s", v[i].name, want);
			}
			cr_expect(strstr(flat, help) != NULL, "%s --help lacks the line of --%s: %s",
			    v[i].name, o->name, o->help);
			free(help);
		}
		free(flat);
		buf_free(&out), buf_free(&err);
		/* -h too, and after the arguments as well as before. */
		cr_expect_eq(taotop((const char *[]){ v[i].name, "x", "-h", NULL }, &out, &err), 0,
		    "taotop %s x -h", v[i].name);
		buf_free(&out), buf_free(&err);
	}
}

Test(cli, the_top_help_has_every_verb_with_every_option)
{
	struct buf out, err;
	size_t n, i;
	const struct cli_verb *v = cli_verbs(&n);
	const struct cli_opt *o;

	cr_assert_eq(taotop((const char *[]){ "--help", NULL }, &out, &err), 0);
	for (i = 0; i < n; i++) {
		char want[128], *from, *to;
		snprintf(want, sizeof(want), "\n  %s ", v[i].name);
		from = strstr(out.data, want);
		cr_assert_not_null(from, "--help lacks %s", v[i].name);
		to = i + 1 < n ? strstr(out.data, (snprintf(want, sizeof(want), "\n  %s ",
		    v[i + 1].name), want)) : strstr(out.data, "\nOptions:");
		cr_assert_not_null(to);
		for (o = v[i].opts; o->name != NULL; o++) {
			if (o->letter != 0)
				snprintf(want, sizeof(want), "[-%c", o->letter);
			else
				snprintf(want, sizeof(want), "[--%s", o->name);
			cr_expect(has_within(from, to, want),
			    "--help lacks %s of %s", want, v[i].name);
		}
	}
	for (o = cli_global_opts(); o->name != NULL; o++) {
		char want[64];
		snprintf(want, sizeof(want), "--%s", o->name);
		cr_expect(strstr(out.data, want) != NULL, "--help lacks %s", want);
	}
	buf_free(&out), buf_free(&err);
}

Test(cli, a_verbs_usage_error_is_its_usage_from_the_table)
{
	struct buf out, err;

	/* A bare `status` lists the shared sessions; --watch is about a job. */
	cr_expect_eq(taotop((const char *[]){ "status", "--watch", NULL }, &out, &err), 2);
	cr_expect_eq(out.len, 0);
	cr_expect(strstr(err.data, "usage: taotop status [JOB] [--cluster NAME] [--json] [--why] [--bank-record]\n"
	    "                     [--watch] [--no-share]\n")
	    != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
	cr_expect_eq(taotop((const char *[]){ "jobs", "--all-clusters", NULL }, &out, &err), 2);
	cr_expect(strstr(err.data, "unknown option '--all-clusters'") != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
	cr_expect_eq(taotop((const char *[]){ "logs", "j", "-n", NULL }, &out, &err), 2);
	cr_expect(strstr(err.data, "an argument is missing after '-n'") != NULL, "%s", err.data);
	buf_free(&out), buf_free(&err);
	cr_expect_eq(taotop((const char *[]){ "logs", "j", "-n", "many", NULL }, &out, &err), 2);
	buf_free(&out), buf_free(&err);
	cr_expect_eq(taotop((const char *[]){ "cancel", NULL }, &out, &err), 2);
	buf_free(&out), buf_free(&err);
	cr_expect_eq(taotop((const char *[]){ "preflight", "extra", NULL }, &out, &err), 2);
	buf_free(&out), buf_free(&err);
}

/* The verbs of taotop.1's "Verbs" list: for each, the options its
 * synopsis (.It Xo ... .Xc) names and those its own option list
 * (.It Fl ...) describes, as indexes into the table's verb; what the
 * table has not is reported as it is met. */
struct man_verb {
	const struct cli_verb	*v;
	int			 in_synopsis[CLI_MAX_OPTS], in_list[CLI_MAX_OPTS];
};

static int man_opt(const struct cli_verb *v, const char *word)
{
	int i;

	for (i = 0; v->opts[i].name != NULL; i++)
		if (word[0] == '-' ? strcmp(v->opts[i].name, word + 1) == 0 :
		    (word[1] == '\0' && v->opts[i].letter == word[0]))
			return i;
	return -1;
}

/* Each word after "Fl" on line, marked in seen[] for v. */
static void man_flags(const struct cli_verb *v, const char *line, int *seen, const char *where)
{
	char *copy = xstrdup(line), *save = NULL, *w, *prev = NULL;

	for (w = strtok_r(copy, " \t", &save); w != NULL; prev = w, w = strtok_r(NULL, " \t", &save)) {
		int i;
		if (prev == NULL || strcmp(prev, "Fl") != 0)
			continue;
		i = man_opt(v, w);
		cr_expect_geq(i, 0, "taotop.1's %s of %s names -%s, which the verb table has not",
		    where, v->name, w);
		if (i >= 0)
			seen[i] = 1;
	}
	free(copy);
}

Test(cli, the_man_page_has_every_verb_and_option_of_the_table_and_no_other)
{
	const char *share = getenv("TAOTOP_SHARE");
	char path[4096], *man, *err = NULL, *line, *save = NULL;
	struct man_verb found[16];
	size_t nverbs, nfound = 0, i, k;
	const struct cli_verb *verbs = cli_verbs(&nverbs);
	int in_verbs = 0, depth = 0, in_xo = 0, want_name = 0;

	snprintf(path, sizeof(path), "%s/man/taotop.1", share ? share : ".");
	man = file_read_all(path, NULL, &err);
	cr_assert_not_null(man, "%s", err);
	for (line = strtok_r(man, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		struct man_verb *cur = nfound > 0 ? &found[nfound - 1] : NULL;
		if (strcmp(line, ".Ss Verbs") == 0) {
			in_verbs = 1;
			continue;
		}
		if (!in_verbs)
			continue;
		if (strncmp(line, ".Ss ", 4) == 0 || strncmp(line, ".Sh ", 4) == 0)
			break;
		if (strncmp(line, ".Bl", 3) == 0)
			depth++;
		else if (strncmp(line, ".El", 3) == 0)
			depth--;
		else if (depth == 1 && strcmp(line, ".It Xo") == 0)
			want_name = 1;
		else if (want_name) {
			const struct cli_verb *v = NULL;
			cr_assert(strncmp(line, ".Cm ", 4) == 0, "taotop.1: a verb's item begins "
			    "'.It Xo', '.Cm NAME', not %s", line);
			for (k = 0; k < nverbs; k++)
				if (strcmp(verbs[k].name, line + 4) == 0)
					v = &verbs[k];
			cr_assert_not_null(v, "taotop.1 lists a verb '%s' the table has not", line + 4);
			cr_assert_lt(nfound, 16);
			memset(&found[nfound], 0, sizeof(found[nfound]));
			found[nfound++].v = v;
			want_name = 0;
			in_xo = 1;
		} else if (in_xo && strcmp(line, ".Xc") == 0) {
			in_xo = 0;
		} else if (in_xo) {
			man_flags(cur->v, line, cur->in_synopsis, "synopsis");
		} else if (cur != NULL && depth == 2 && strncmp(line, ".It Fl ", 7) == 0) {
			man_flags(cur->v, line, cur->in_list, "option list");
		}
	}
	cr_assert(in_verbs, "taotop.1 has no '.Ss Verbs'");
	for (k = 0; k < nverbs; k++) {
		const struct man_verb *m = NULL;
		for (i = 0; i < nfound; i++)
			if (found[i].v == &verbs[k])
				m = &found[i];
		cr_expect_not_null(m, "taotop.1 does not list the verb %s", verbs[k].name);
		for (i = 0; m != NULL && verbs[k].opts[i].name != NULL; i++) {
			cr_expect(m->in_synopsis[i], "taotop.1's synopsis of %s lacks --%s",
			    verbs[k].name, verbs[k].opts[i].name);
			cr_expect(m->in_list[i], "taotop.1 does not describe --%s of %s",
			    verbs[k].opts[i].name, verbs[k].name);
		}
	}
	free(man);
}

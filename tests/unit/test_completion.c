/* Shell completion as a user meets it: contrib/completion/taotop.bash loaded
 * in bash and its function called as bash calls it at <TAB>
 * (COMP_WORDS/COMP_CWORD), and _taotop in an interactive zsh in tmux with
 * real <TAB> keys; the candidates come from the taotop binary under test
 * (TAOTOP_BIN), a config file with two clusters and two local records. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/store/store.h"
#include "util/buf.h"
#include "util/xmalloc.h"

static char dir[64], *ids[2];

/* A home of its own: the config (clusters alpha and beta), two records,
 * and PATH leading to the taotop under test. */
static void setup(void)
{
	const char *bin = getenv("TAOTOP_BIN");
	char *p, *err = NULL, *bindir;
	struct record_store *st;
	FILE *f;

	cr_assert_not_null(bin, "TAOTOP_BIN is not set: run through make check");
	snprintf(dir, sizeof(dir), "/tmp/taotop-complete-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	p = xasprintf("%s/config.yaml", dir);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("clusters:\n  alpha:\n    hosts: a.example\n    user: u\n"
	      "  beta:\n    hosts: b.example\n    user: u\n", f);
	fclose(f);
	setenv("TAOTOP_CONFIG", p, 1);
	free(p);
	setenv("HOME", dir, 1);
	p = xasprintf("%s/state", dir);
	setenv("XDG_STATE_HOME", p, 1);
	free(p);
	p = xasprintf("%s/state/taotop/jobs", dir);
	st = store_open(p, &err);
	cr_assert_not_null(st, "%s", err);
	free(p);
	for (int i = 0; i < 2; i++) {
		struct job_record *r;
		ids[i] = store_mint_id(st);
		r = record_new(ids[i]);
		record_set(&r->cluster, i == 0 ? "alpha" : "beta");
		cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
		record_free(r);
	}
	store_close(st);
	bindir = xstrdup(bin);
	*strrchr(bindir, '/') = '\0';
	p = xasprintf("%s:%s", bindir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", p, 1);
	free(p);
	free(bindir);
}

static void teardown(void)
{
	char *cmd = xasprintf("rm -rf %s", dir);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", dir);
	free(cmd);
	free(ids[0]);
	free(ids[1]);
}

TestSuite(completion, .init = setup, .fini = teardown);

/* What bash's <TAB> offers at the end of `line` as typed (a trailing space:
 * an empty word is being completed): COMPREPLY, one a line. The words are
 * split as bash splits a plain line; the tests' lines hold no quotes. */
static char *bash_complete(const char *line)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *script, buf[512];
	struct buf out;
	FILE *f;

	script = xasprintf("bash --norc -c '. %s/contrib/completion/taotop.bash || exit 9; "
	    "read -ra COMP_WORDS <<< \"$1\"; case $1 in *\\ ) COMP_WORDS+=(\"\");; esac; "
	    "COMP_LINE=$1; COMP_POINT=${#1}; COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _taotop; "
	    "printf \"%%s\\n\" \"${COMPREPLY[@]}\"' bash '%s' 2>&1", share ? share : ".", line);
	f = popen(script, "r");
	cr_assert_not_null(f);
	buf_init(&out);
	while (fgets(buf, sizeof(buf), f) != NULL)
		buf_add(&out, buf, strlen(buf));
	buf_addc(&out, '\0');
	cr_assert_eq(pclose(f), 0, "%s: %s", script, out.data);
	free(script);
	/* No candidate prints one empty line. */
	if (strcmp(out.data, "\n") == 0)
		out.data[0] = '\0';
	return out.data;
}

Test(completion, bash_completes_st_to_status)
{
	char *got = bash_complete("taotop st");
	cr_expect_str_eq(got, "status\n");
	free(got);
}

Test(completion, bash_completes_status_to_the_local_records_ids)
{
	char *got = bash_complete("taotop status ");
	char *want1 = xasprintf("%s\n%s\n", ids[1], ids[0]), *want2 = xasprintf("%s\n%s\n", ids[0], ids[1]);

	cr_expect(strcmp(got, want1) == 0 || strcmp(got, want2) == 0,
	    "want exactly %s and %s, got:\n%s", ids[0], ids[1], got);
	free(got);
	/* With the option before it, and for the verbs that take several. */
	got = bash_complete("taotop cancel --cluster alpha ");
	cr_expect(strstr(got, ids[0]) != NULL && strstr(got, ids[1]) != NULL, "%s", got);
	free(got);
	free(want1);
	free(want2);
}

Test(completion, bash_completes_clusters_options_and_global_options)
{
	static const struct { const char *line, *want; } rows[] = {
		{ "taotop logs --cluster ", "alpha\nbeta\n" },
		{ "taotop jobs --c", "--cluster\n" },
		{ "taotop --log-colors ", "render\nstrip\n" },
		{ "taotop --read", "--readonly\n" },
		{ "taotop nosuchverb ", "" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *got = bash_complete(rows[i].line);
		cr_expect_str_eq(got, rows[i].want, "'%s'", rows[i].line);
		free(got);
	}
}

/* The candidates are the verb table's: every verb, and every option of
 * every verb, with nothing missing or extra. */
Test(completion, the_candidates_are_the_verb_tables)
{
	size_t n, i;
	const struct cli_verb *v = cli_verbs(&n);
	char *got = bash_complete("taotop ");
	struct buf want;

	buf_init(&want);
	for (i = 0; i < n; i++) {
		buf_add(&want, v[i].name, strlen(v[i].name));
		buf_addc(&want, '\n');
	}
	buf_addc(&want, '\0');
	cr_expect_str_eq(got, want.data);
	free(got);
	buf_free(&want);
	for (i = 0; i < n; i++) {
		char *words = xasprintf("taotop %s --", v[i].name);
		got = bash_complete(words);
		for (const struct cli_opt *o = v[i].opts; o->name != NULL; o++) {
			char *opt = xasprintf("\n--%s\n", o->name), *framed = xasprintf("\n%s", got);
			cr_expect(strstr(framed, opt) != NULL, "%s: no --%s in\n%s", words, o->name, got);
			free(opt);
			free(framed);
		}
		free(got);
		free(words);
	}
}

/* SPEC: the shell's own file names. */
Test(completion, bash_completes_a_spec_with_file_names)
{
	char *words = xasprintf("taotop submit %s/conf", dir), *got = bash_complete(words);
	char *want = xasprintf("%s/config.yaml\n", dir);

	cr_expect_str_eq(got, want);
	free(words), free(got), free(want);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int rc;

	va_start(ap, fmt);
	cmd = xvasprintf(fmt, ap);
	va_end(ap);
	rc = system(cmd);
	free(cmd);
	return rc;
}

/* The screen of tmux session sock once it shows `want`, or after 5 s. */
static char *screen_when(const char *sock, const char *want)
{
	char *cmd = xasprintf("tmux -L %s capture-pane -p -t z", sock), line[512];
	struct buf out;

	buf_init(&out);
	for (int i = 0; i < 50; i++) {
		FILE *f = popen(cmd, "r");
		out.len = 0;
		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			buf_add(&out, line, strlen(line));
		if (f != NULL)
			pclose(f);
		buf_addc(&out, '\0');
		out.len--;
		if (strstr(out.data, want) != NULL)
			break;
		nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL);
	}
	free(cmd);
	return out.data;
}

Test(completion, zsh_completes_st_and_the_ids_at_tab)
{
	const char *share = getenv("TAOTOP_SHARE");
	char sock[48], *screen;

	cr_assert_eq(sh("command -v zsh >/dev/null && command -v tmux >/dev/null"), 0,
	    "zsh or tmux is not installed: scripts/deps installs both");
	snprintf(sock, sizeof(sock), "taotop-zsh-%d", (int)getpid());
	cr_assert_eq(sh("tmux -L %s -f /dev/null new-session -d -s z -x 150 -y 20 'zsh -f -i'",
	    sock), 0);
	cr_assert_eq(sh("tmux -L %s send-keys -t z \"PS1='ready> '; fpath=(%s/contrib/completion "
	    "\\$fpath); autoload -Uz compinit; compinit -u; clear\" Enter", sock,
	    share ? share : "."), 0);
	screen = screen_when(sock, "ready> ");
	free(screen);
	cr_assert_eq(sh("tmux -L %s send-keys -t z 'taotop st' Tab", sock), 0);
	/* (capture-pane drops the space after it) */
	screen = screen_when(sock, "> taotop status\n");
	cr_expect(strstr(screen, "> taotop status\n") != NULL, "st<TAB> did not become status:\n%s",
	    screen);
	free(screen);
	/* Two ids: the first <TAB> inserts what they share, the second
	 * lists both under the line. */
	cr_assert_eq(sh("tmux -L %s send-keys -t z Tab", sock), 0);
	free(screen_when(sock, "> taotop status tao-"));
	cr_assert_eq(sh("tmux -L %s send-keys -t z Tab", sock), 0);
	screen = screen_when(sock, ids[1]);
	cr_expect(strstr(screen, ids[0]) != NULL && strstr(screen, ids[1]) != NULL,
	    "status <TAB> did not offer %s and %s:\n%s", ids[0], ids[1], screen);
	free(screen);
	sh("tmux -L %s kill-server 2>/dev/null", sock);
}

/* A candidate holding a command substitution (a cluster's name in a
 * config written by hand, a field that came from elsewhere) is offered as
 * the text it is, never run: compgen -W expanded its word list. Here the
 * candidates come from a taotop that prints such words, first on PATH. */
Test(completion, bash_runs_nothing_a_candidate_holds)
{
	char *fake = xasprintf("%s/fakebin", dir), *p, *marker = xasprintf("%s/pwned", dir);
	char *old_path = xstrdup(getenv("PATH")), *got;
	FILE *f;

	cr_assert_eq(mkdir(fake, 0700), 0);
	p = xasprintf("%s/taotop", fake);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fprintf(f, "#!/bin/sh\nprintf '%%s\\n' alpha '$(touch %s)' '`touch %s`' '${HOME:+x}'\n",
	    marker, marker);
	fclose(f);
	cr_assert_eq(chmod(p, 0755), 0);
	free(p);
	p = xasprintf("%s:%s", fake, old_path);
	setenv("PATH", p, 1);
	free(p);

	got = bash_complete("taotop logs --cluster ");
	p = xasprintf("alpha\n$(touch %s)\n`touch %s`\n${HOME:+x}\n", marker, marker);
	cr_expect_str_eq(got, p, "the candidates as they are");
	free(got), free(p);
	got = bash_complete("taotop logs --cluster $");
	p = xasprintf("$(touch %s)\n${HOME:+x}\n", marker);
	cr_expect_str_eq(got, p, "matched by their text");
	free(got), free(p);
	cr_expect_neq(access(marker, F_OK), 0, "a candidate ran in the completing shell");

	setenv("PATH", old_path, 1);
	free(old_path), free(marker), free(fake);
}

/* The config's cluster names are checked where the file is read: one
 * holding a shell's words is refused with the rule, before anything
 * offers or uses it. */
Test(completion, a_cluster_name_with_shell_words_is_refused_where_the_config_is_read)
{
	char *p = xasprintf("%s/hostile.yaml", dir), *got, *marker = xasprintf("%s/pwned2", dir);
	FILE *f = fopen(p, "w");

	cr_assert_not_null(f);
	fprintf(f, "clusters:\n  \"x$(touch %s)\":\n    hosts: a.example\n", marker);
	fclose(f);
	setenv("TAOTOP_CONFIG", p, 1);
	got = bash_complete("taotop logs --cluster ");
	cr_expect_str_eq(got, "", "no cluster offered from a config that is refused");
	free(got);
	{
		char *cmd = xasprintf("taotop jobs 2>&1"), buf[1024] = "";
		FILE *o = popen(cmd, "r");
		size_t n = fread(buf, 1, sizeof(buf) - 1, o);
		buf[n] = '\0';
		int st = pclose(o);
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "a config that does not read: 2 "
		    "(the man page), got status %d: %s", st, buf);
		cr_expect_not_null(strstr(buf, "a cluster's name holds only letters, digits, '-', '_' and '.'"),
		    "%s", buf);
		free(cmd);
	}
	cr_expect_neq(access(marker, F_OK), 0, "the name ran somewhere");
	p[strlen(p) - strlen("hostile.yaml")] = '\0';
	{
		char *good = xasprintf("%sconfig.yaml", p);
		setenv("TAOTOP_CONFIG", good, 1);
		free(good);
	}
	free(p), free(marker);
}

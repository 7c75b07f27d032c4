/* The command line as a script sees it: exit codes and where text goes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"

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

/* templates/lifecycle.sh, the execution block's runner, run as it is by
 * sh as the job's step runs it in the container: pre-commands in order
 * before the command, post-commands only after it succeeded and only on
 * task 0 (leader) or on every task (all), torchrun in front of the
 * command's words, and the first failure's code as its own. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "util/file.h"
#include "util/xmalloc.h"

static char dir[] = "/tmp/taotop-lifecycle-XXXXXX";

static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
	char *cmd = xasprintf("rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
	free(cmd);
}

TestSuite(lifecycle, .init = make_dir, .fini = remove_dir);

/* Run the runner under env (assignments, as the shell reads them) with
 * args as the command's words; what it wrote to stdout (caller frees)
 * and its exit code. */
static char *run(const char *env, const char *args, int *code)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *out = xasprintf("%s/out", dir), *text;
	char *cmd = xasprintf("cd %s && env -i PATH=%s:/usr/bin:/bin %s sh %s/templates/lifecycle.sh "
	    "%s >%s 2>/dev/null", dir, dir, env, share ? share : ".", args, out);
	int status = system(cmd);

	cr_assert(WIFEXITED(status), "%s", cmd);
	*code = WEXITSTATUS(status);
	text = file_read_all(out, NULL, NULL);
	free(cmd), free(out);
	return text ? text : xstrdup("");
}

#define CMDS "TAOTOP_PRE_COUNT=2 TAOTOP_PRE_1='echo pre one' " \
	"TAOTOP_PRE_2='echo \"pre two $(echo x)\"' TAOTOP_POST_COUNT=1 " \
	"TAOTOP_POST_1='echo post' "

Test(lifecycle, pre_then_the_command_then_post_on_task_0)
{
	int code;
	char *out = run(CMDS "SLURM_PROCID=0", "echo primary 'a b'", &code);

	cr_expect_eq(code, 0);
	cr_expect_str_eq(out, "pre one\npre two x\nprimary a b\npost\n");
	free(out);
	out = run(CMDS "SLURM_PROCID=1", "echo primary", &code);
	cr_expect_eq(code, 0);
	cr_expect_str_eq(out, "pre one\npre two x\nprimary\n", "leader scope: no post on task 1");
	free(out);
	out = run(CMDS "SLURM_PROCID=1 TAOTOP_POST_SCOPE=all", "echo primary", &code);
	cr_expect_str_eq(out, "pre one\npre two x\nprimary\npost\n", "all: post on every task");
	free(out);
}

Test(lifecycle, a_failing_pre_command_stops_the_task_with_its_code)
{
	int code;
	char *out = run("TAOTOP_PRE_COUNT=2 TAOTOP_PRE_1='exit 5' TAOTOP_PRE_2='echo pre two' "
	    "TAOTOP_POST_COUNT=1 TAOTOP_POST_1='echo post'", "echo primary", &code);

	cr_expect_eq(code, 5);
	cr_expect_str_eq(out, "", "nothing ran after the failing pre-command");
	free(out);
}

Test(lifecycle, a_failing_command_runs_no_post_and_its_code_is_the_tasks)
{
	int code;
	char *out = run(CMDS "SLURM_PROCID=0", "sh -c 'echo primary; exit 3'", &code);

	cr_expect_eq(code, 3);
	cr_expect_str_eq(out, "pre one\npre two x\nprimary\n");
	free(out);
	/* A post-command failing is the task's failure too. */
	out = run("TAOTOP_POST_COUNT=2 TAOTOP_POST_1='exit 7' TAOTOP_POST_2='echo later'",
	    "echo primary", &code);
	cr_expect_eq(code, 7);
	cr_expect_str_eq(out, "primary\n");
	free(out);
}

Test(lifecycle, torchrun_goes_in_front_of_the_command)
{
	char *fake = xasprintf("%s/torchrun", dir);
	FILE *f = fopen(fake, "w");
	int code;

	cr_assert_not_null(f);
	fputs("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]' \"$a\"; done; echo\n", f);
	fclose(f);
	cr_assert_eq(chmod(fake, 0755), 0);
	char *out = run("TAOTOP_LAUNCHER=torchrun TAOTOP_NPROC=4 SLURM_NNODES=2 SLURM_PROCID=1 "
	    "MASTER_ADDR=node-a MASTER_PORT=29500", "train.py 'x y'", &code);
	cr_expect_eq(code, 0);
	cr_expect_str_eq(out, "[--nnodes=2][--node_rank=1][--nproc_per_node=4]"
	    "[--master_addr=node-a][--master_port=29500][train.py][x y]\n");
	free(out);
	/* Not a .py: torchrun's own -m, or --no-python for a program. */
	out = run("TAOTOP_LAUNCHER=torchrun TAOTOP_NPROC=2", "python3 -m pkg.mod --x", &code);
	cr_expect_str_eq(out, "[--nnodes=1][--node_rank=0][--nproc_per_node=2]"
	    "[--master_addr=127.0.0.1][--master_port=29500][-m][pkg.mod][--x]\n");
	free(out);
	out = run("TAOTOP_LAUNCHER=torchrun TAOTOP_NPROC=2", "cosmos-rl-evaluate --config c.toml",
	    &code);
	cr_expect_str_eq(out, "[--nnodes=1][--node_rank=0][--nproc_per_node=2]"
	    "[--master_addr=127.0.0.1][--master_port=29500][--no-python][cosmos-rl-evaluate]"
	    "[--config][c.toml]\n");
	free(out);
	out = run("TAOTOP_LAUNCHER=direct", "echo direct", &code);
	cr_expect_str_eq(out, "direct\n");
	free(out), free(fake);
}

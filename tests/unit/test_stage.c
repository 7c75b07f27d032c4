/* The batch a submit sends in one exec, run here by the same `sh -s` the
 * cluster runs: files whole with their bytes, modes from the first byte,
 * a secret never replacing a file, and a step that fails stopping the
 * rest and taking the secret it wrote with it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/submit/stage.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char dir[] = "/tmp/taotop-stage-XXXXXX";

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

TestSuite(stage, .init = make_dir, .fini = remove_dir);

/* Run the script as the cluster would; its output (caller frees) and
 * exit status. */
static char *run(const struct stage *s, int *status)
{
	char *script = xasprintf("%s/script", dir), *cmd, *out, *err = NULL;
	FILE *f = fopen(script, "w");

	cr_assert_not_null(f);
	fwrite(s->script.data, 1, s->script.len, f);
	fclose(f);
	cmd = xasprintf("sh -s < %s > %s/out 2>&1", script, dir);
	*status = WEXITSTATUS(system(cmd));
	free(cmd);
	cmd = xasprintf("%s/out", dir);
	out = file_read_all(cmd, NULL, &err);
	cr_assert_not_null(out, "%s", err);
	free(cmd), free(script);
	return out;
}

static char *in_dir(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static int mode_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

Test(stage, files_arrive_whole_with_their_modes)
{
	struct stage s;
	const char *spec = "train:\n  num_epochs: 3\n$(touch /tmp/pwned)\n";
	unsigned char bin[300];
	char *d1 = in_dir("job dir/specs"), *d2 = in_dir("it's/logs"), *p1, *p2, *sec, *out, *got;
	const char *dirs[] = { d1, d2 };
	size_t i, len;
	int status;

	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (unsigned char)(i * 7);	/* every byte value, NULs included */
	p1 = xasprintf("%s/spec.yaml", d1);
	p2 = xasprintf("%s/data.bin", d1);
	sec = in_dir("job dir/job.env");
	stage_init(&s);
	stage_mkdirs(&s, dirs, 2);
	stage_write(&s, p1, spec, strlen(spec), NULL);
	stage_write(&s, p2, bin, sizeof(bin), NULL);
	stage_write_secret(&s, sec, "export HF_TOKEN='s3cr3t'\n", 25, "1 secret");
	stage_run(&s, "echo '@@done'", "done");
	out = run(&s, &status);
	cr_expect_eq(status, 0, "%s", out);
	cr_expect(strstr(out, "@@done") != NULL, "%s", out);
	free(out);
	cr_expect_eq(mode_of(d2), 0755);
	got = file_read_all(p1, &len, NULL);
	cr_expect_str_eq(got, spec);
	free(got);
	got = file_read_all(p2, &len, NULL);
	cr_expect_eq(len, sizeof(bin));
	cr_expect(memcmp(got, bin, sizeof(bin)) == 0);
	free(got);
	cr_expect_eq(mode_of(p2), 0644);
	cr_expect_eq(mode_of(sec), 0600, "the secret file is 0600");
	got = file_read_all(sec, &len, NULL);
	cr_expect_str_eq(got, "export HF_TOKEN='s3cr3t'\n");
	free(got);
	/* The plan says what happens, never what a secret holds. */
	cr_expect(strstr(s.plan.data, "s3cr3t") == NULL);
	cr_expect(strstr(s.plan.data, "write ") != NULL && strstr(s.plan.data, "1 secret") != NULL);
	/* Nor does the script's text hold it in the clear. */
	cr_expect(strstr(s.script.data, "s3cr3t") == NULL);
	stage_free(&s);
	free(d1), free(d2), free(p1), free(p2), free(sec);
}

Test(stage, a_secret_never_replaces_a_file_and_a_failure_stops_the_rest)
{
	struct stage s;
	char *sec = in_dir("job.env"), *after = in_dir("after.txt"), *out, *why;
	int status;

	/* Someone's file where the sidecar goes: refused, left as it was. */
	{
		char *cmd = xasprintf("echo theirs > %s", sec);
		cr_assert_eq(system(cmd), 0);
		free(cmd);
	}
	stage_init(&s);
	stage_write_secret(&s, sec, "X=1\n", 4, "1 secret");
	stage_write(&s, after, "never\n", 6, NULL);
	out = run(&s, &status);
	cr_expect_neq(status, 0);
	why = stage_failure(out);
	cr_expect(why != NULL && strstr(why, sec) != NULL, "%s", out);
	free(why), free(out);
	out = file_read_all(sec, NULL, NULL);
	cr_expect_str_eq(out, "theirs\n");
	free(out);
	cr_expect_eq(mode_of(after), -1, "a step after the failure ran");
	stage_free(&s);

	/* The secret written, then a write that cannot be (its folder was
	 * never made): the secret goes. */
	unlink(sec);
	free(after);
	after = in_dir("no-such-folder/spec.yaml");
	stage_init(&s);
	stage_write_secret(&s, sec, "X=1\n", 4, "1 secret");
	stage_write(&s, after, "x\n", 2, NULL);
	stage_run(&s, "echo '@@launched'", "launch");
	out = run(&s, &status);
	cr_expect_neq(status, 0);
	cr_expect(strstr(out, "@@launched") == NULL, "%s", out);
	why = stage_failure(out);
	cr_expect(why != NULL && strstr(why, "cannot write") != NULL, "%s", out);
	cr_expect_eq(mode_of(sec), -1, "the sidecar was left behind");
	free(why), free(out);
	stage_free(&s);
	free(sec), free(after);
}

/* A gate (the submit's checks) that fails: nothing after it runs, no
 * folder, no file, no secret; one that passes lets the rest run, its
 * output first. */
Test(stage, a_closed_gate_stops_the_script_before_its_first_write)
{
	struct stage s;
	char *folder = in_dir("job"), *file = in_dir("job/spec.yaml"), *sec = in_dir("job/job.env");
	const char *dirs[] = { folder };
	char *out;
	int status;

	for (int open = 0; open < 2; open++) {
		char *gate = xasprintf("echo '@@checked'; x=1; [ %d = 1 ] && exit 0; false", open);
		stage_init(&s);
		stage_gate(&s, gate, "the checks");
		stage_mkdirs(&s, dirs, 1);
		stage_write(&s, file, "x\n", 2, NULL);
		stage_write_secret(&s, sec, "X=1\n", 4, "1 secret");
		stage_run(&s, "echo \"@@launched ${x:-unset}\"", "launch");
		out = run(&s, &status);
		cr_expect(strstr(out, "@@checked") != NULL, "%s", out);
		if (open) {
			cr_expect_eq(status, 0, "%s", out);
			cr_expect(!stage_gate_closed(out), "%s", out);
			/* The gate's variables stay in it. */
			cr_expect(strstr(out, "@@launched unset") != NULL, "%s", out);
			cr_expect_eq(mode_of(sec), 0600);
		} else {
			cr_expect_neq(status, 0);
			cr_expect(stage_gate_closed(out), "%s", out);
			cr_expect(stage_failure(out) == NULL, "%s", out);
			cr_expect(strstr(out, "@@launched") == NULL, "%s", out);
			cr_expect_eq(mode_of(folder), -1, "a folder was made behind a closed gate");
		}
		cr_expect(strstr(s.plan.data, "the checks") == s.plan.data + 4, "%s", s.plan.data);
		free(out), free(gate);
		stage_free(&s);
		char *cmd = xasprintf("rm -rf %s", folder);
		cr_assert_eq(system(cmd), 0);
		free(cmd);
	}
	free(folder), free(file), free(sec);
}

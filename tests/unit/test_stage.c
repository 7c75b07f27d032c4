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

/* What another user can leave on a shared root, and what the script does
 * with it: a link at the old fixed temp name and at the target itself is
 * never written through (the target is replaced, the link's file kept);
 * a FIFO or a link at the secrets' path refuses the script, nothing
 * written into them, nothing after it run. */
static char *slurp(const char *path)
{
	char *t = file_read_all(path, NULL, NULL);
	return t != NULL ? t : xstrdup("(unreadable)");
}

Test(stage, links_left_at_temp_names_and_targets_are_not_written_through)
{
	struct stage s;
	char *victim = in_dir("victim"), *target = in_dir("spec.yaml");
	char *tmp = xasprintf("%s.taotop-new", target), *out, *got, *cmd;
	int status;
	struct stat st;

	cmd = xasprintf("echo precious > %s && ln -s %s %s && ln -s %s %s", victim, victim, tmp,
	    victim, target);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	stage_init(&s);
	stage_write(&s, target, "mine\n", 5, NULL);
	stage_run(&s, "echo '@@done'", "done");
	out = run(&s, &status);
	cr_expect_eq(status, 0, "%s", out);
	got = slurp(victim);
	cr_expect_str_eq(got, "precious\n", "a write went through a link");
	free(got);
	cr_expect(lstat(target, &st) == 0 && S_ISREG(st.st_mode), "the target is no file of ours");
	got = slurp(target);
	cr_expect_str_eq(got, "mine\n");
	free(got), free(out);
	/* No temp file of ours left beside it. */
	cmd = xasprintf("ls -a %s | grep -c 'spec.yaml.taotop-' | grep -qx 1", dir);
	cr_expect_eq(system(cmd), 0, "a temp file was left (or the planted link went)");
	free(cmd);
	stage_free(&s);
	free(victim), free(target), free(tmp);
}

Test(stage, a_fifo_or_a_link_at_the_secrets_path_refuses_the_script)
{
	for (int kind = 0; kind < 3; kind++) {
		struct stage s;
		char *sec = in_dir("job.env"), *victim = in_dir("victim"), *got, *out, *why, *cmd;
		char *cap = in_dir("captured");
		int status;

		/* 0: a FIFO with a reader waiting on it; 1: a link to a file;
		 * 2: a link to nothing (O_CREAT would make its target). */
		cmd = kind == 0 ? xasprintf("mkfifo %s && (timeout 5 cat %s > %s &)", sec, sec, cap)
		    : kind == 1 ? xasprintf("echo precious > %s && ln -s %s %s", victim, victim, sec)
		    : xasprintf("ln -s %s %s", victim, sec);
		cr_assert_eq(system(cmd), 0);
		free(cmd);
		stage_init(&s);
		stage_write_secret(&s, sec, "HF_TOKEN=s3cr3t\n", 16, "1 secret");
		stage_run(&s, "echo '@@launched'", "launch");
		out = run(&s, &status);
		cr_expect_neq(status, 0, "kind %d: %s", kind, out);
		cr_expect(strstr(out, "@@launched") == NULL, "kind %d ran on: %s", kind, out);
		why = stage_failure(out);
		cr_expect(why != NULL && strstr(why, sec) != NULL && strstr(why, "FIFO") != NULL &&
		    strstr(why, "nothing was submitted") != NULL, "kind %d: %s", kind, out);
		free(why), free(out);
		if (kind == 0) {
			struct stat st;
			cr_expect(lstat(sec, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO went");
			cmd = xasprintf("echo x > %s; sleep 0.3", sec);
			/* Unblock the reader (its only writer is us now), then
			 * look at what it got: our x and nothing before it. */
			cr_expect_eq(system(cmd), 0);
			free(cmd);
			got = slurp(cap);
			cr_expect_str_eq(got, "x\n", "bytes reached the FIFO");
			free(got);
		} else if (kind == 1) {
			got = slurp(victim);
			cr_expect_str_eq(got, "precious\n", "the link's file was written");
			free(got);
		} else {
			cr_expect_eq(mode_of(victim), -1, "the dangling link's target was made");
		}
		stage_free(&s);
		cmd = xasprintf("rm -rf %s %s %s", sec, victim, cap);
		cr_assert_eq(system(cmd), 0);
		free(cmd), free(sec), free(victim), free(cap);
	}
}

/* The job folder: made new; anything at its path (a folder of another
 * user's, a link, a file) stops the script before any write, unless it is
 * a submit sent again (again=1) and the folder is the user's own. */
Test(stage, the_job_folder_is_made_new_or_the_script_stops)
{
	for (int kind = 0; kind < 5; kind++) {
		struct stage s;
		char *root = in_dir("root"), *job = in_dir("root/tao-1"), *file, *out, *why, *cmd;
		char *elsewhere = in_dir("elsewhere");
		int status, refused = kind == 1 || kind == 2 || kind == 4;

		/* 0: nothing there; 1: another user's folder (uid 4242, 0777);
		 * 2: a link to a folder; 3: the user's own, again=1; 4: the
		 * user's own but open to all, again=1. */
		cmd = kind == 0 ? xasprintf("mkdir -p %s", root)
		    : kind == 1 ? xasprintf("mkdir -p %s && chown 4242 %s && chmod 777 %s", job, job,
			job)
		    : kind == 2 ? xasprintf("mkdir -p %s %s && ln -s %s %s", root, elsewhere, elsewhere,
			job)
		    : kind == 3 ? xasprintf("mkdir -p %s", job)
		    : xasprintf("mkdir -p %s && chmod 777 %s", job, job);
		cr_assert_eq(system(cmd), 0);
		free(cmd);
		stage_init(&s);
		if (kind >= 3) {
			/* As resubmit() does: a line before the whole script. */
			struct buf b;
			buf_init(&b);
			buf_adds(&b, "again=1\n");
			buf_add(&b, s.script.data, s.script.len);
			buf_free(&s.script);
			s.script = b;
		}
		file = xasprintf("%s/meta.json", job);
		stage_job_folder(&s, root, job);
		stage_write(&s, file, "{}", 2, NULL);
		stage_run(&s, "echo '@@launched'", "launch");
		out = run(&s, &status);
		if (refused) {
			cr_expect_neq(status, 0, "kind %d: %s", kind, out);
			cr_expect(strstr(out, "@@launched") == NULL, "kind %d: %s", kind, out);
			why = stage_failure(out);
			cr_expect(why != NULL && strstr(why, job) != NULL &&
			    strstr(why, "exists already") != NULL, "kind %d: %s", kind, out);
			free(why);
			cr_expect_eq(mode_of(file), -1, "kind %d: a file was written", kind);
			if (kind == 2) {
				char *e = xasprintf("%s/meta.json", elsewhere);
				cr_expect_eq(mode_of(e), -1, "written through the link");
				free(e);
			}
		} else {
			cr_expect_eq(status, 0, "kind %d: %s", kind, out);
			cr_expect_eq(mode_of(job), 0755, "kind %d", kind);
			cr_expect_eq(mode_of(file), 0644, "kind %d", kind);
		}
		free(out);
		stage_free(&s);
		cmd = xasprintf("rm -rf %s %s", root, elsewhere);
		cr_assert_eq(system(cmd), 0);
		free(cmd), free(root), free(job), free(file), free(elsewhere);
	}
}

/* A job folder used again (a retry): only the user's own real folder. */
Test(stage, a_job_folder_used_again_must_be_the_users_own)
{
	for (int kind = 0; kind < 3; kind++) {
		struct stage s;
		char *job = in_dir("tao-2"), *sec = in_dir("tao-2/job_tao-2.env"), *out, *why, *cmd;
		int status;

		cmd = kind == 0 ? xasprintf("mkdir -p %s", job)
		    : kind == 1 ? xasprintf("mkdir -p %s && chown 4242 %s", job, job)
		    : xasprintf("mkdir -p %s.real && ln -s %s.real %s", job, job, job);
		cr_assert_eq(system(cmd), 0);
		free(cmd);
		stage_init(&s);
		stage_own_folder(&s, job);
		stage_write_secret(&s, sec, "X=1\n", 4, "1 secret");
		out = run(&s, &status);
		if (kind == 0) {
			cr_expect_eq(status, 0, "%s", out);
			cr_expect_eq(mode_of(sec), 0600);
		} else {
			cr_expect_neq(status, 0, "kind %d: %s", kind, out);
			why = stage_failure(out);
			cr_expect(why != NULL && strstr(why, job) != NULL &&
			    strstr(why, "not the one taotop made") != NULL, "kind %d: %s", kind, out);
			free(why);
			cr_expect_eq(mode_of(sec), -1, "kind %d: the secret was written", kind);
		}
		free(out);
		stage_free(&s);
		cmd = xasprintf("rm -rf %s %s.real", job, job);
		cr_assert_eq(system(cmd), 0);
		free(cmd), free(job), free(sec);
	}
}

/*
 * The submit wizard, driven like a user drives it: the real binary in
 * tmux, keys in, screen text out, the job submitted to the real test
 * cluster through the same pipeline as `taotop submit`.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/file.h"
#include "util/xmalloc.h"

#define SECRET "wiz-S3cret-7b1d9e55aa"

TestSuite(wizard, .fini = screen_kill_all);

static void keys_n(struct screen *s, const char *key, int n)
{
	while (n-- > 0)
		screen_keys(s, key);
}

/* Neither text on the screen, its scrollback, nor in taotop's log and
 * stderr files. */
static void assert_nowhere(struct screen *s, const char *secret)
{
	char *text = screen_tmux(s, "capture-pane -p -S - -t 0"), *path, *f;
	const char *files[] = { "taotop.log", "stderr" };
	size_t i;

	cr_expect_null(strstr(text, secret), "the secret is on the screen:\n%s", text);
	free(text);
	for (i = 0; i < 2; i++) {
		path = xasprintf("%s/%s", s->dir, files[i]);
		f = file_read_all(path, NULL, NULL);
		cr_expect(f == NULL || strstr(f, secret) == NULL, "the secret is in %s", path);
		free(f);
		free(path);
	}
}

Test(wizard, a_bundle_picked_submitted_with_its_steps_reaches_done, .timeout = 240)
{
	char *dir = screen_shared_dir("wizard"), *bundles, *bundle, *env, *out, *id, *line, *p;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 45 };

	unsetenv("WIZ_SECRET");
	env = xasprintf("SLURM_BASE_RESULTS_DIR=lustre://%s/root", dir);
	so.env = env;
	screen_open(&s, "wizard", &so);
	/* A bundle in a folder of its own, found with the picker. */
	bundles = xasprintf("%s/bundles", s.dir);
	cr_assert_eq(rig_local("mkdir -p %s/sub", bundles), 0);
	out = xasprintf("[sh, -c, 'echo secret-len=${#WIZ_SECRET}; echo {\\\"status\\\": "
	    "\\\"SUCCESS\\\"} > {results_dir}/status.json']");
	bundle = rig_bundle(bundles, dir, "wizard_pyt", out, "secrets: [WIZ_SECRET]\n");
	free(out);
	screen_wait(&s, 30, "polled", NULL);

	screen_keys(&s, "s");
	screen_wait(&s, 5, "Submit a job", "Bundle", "Partition    polar", NULL);
	/* The folder typed, Enter: the picker, folders first; the bundle. */
	screen_type(&s, bundles);
	screen_type(&s, "/");
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "A spec bundle: ", "../", "sub/", "wizard_pyt.yaml", NULL);
	screen_keys(&s, "j");
	screen_keys(&s, "j");
	screen_keys(&s, "Enter");
	/* The form holds the bundle's fields. */
	screen_wait(&s, 5, "Network arch wizard_pyt", "Time (h)     0.5", "Secrets      WIZ_SECRET",
	    "(type it here", NULL);

	/* The secret typed into its masked row: stars, never the text. */
	keys_n(&s, "Down", 14);
	screen_wait_line(&s, 5, ">   WIZ_SECRET", NULL);
	screen_type(&s, SECRET);
	{
		char stars[64];
		memset(stars, '*', strlen(SECRET));
		stars[strlen(SECRET)] = '\0';
		screen_wait_line(&s, 5, "WIZ_SECRET", stars, NULL);
	}
	assert_nowhere(&s, SECRET);

	/* Submit: the step list, each step ticked, the SLURM id. */
	keys_n(&s, "Down", 2);
	screen_wait_line(&s, 5, ">  [ Submit ]", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 60, "Submit on rig", "submitted tao-", NULL);
	screen_wait(&s, 5, "\xe2\x9c\x93 preflight", "\xe2\x9c\x93 checks", "\xe2\x9c\x93 image",
	    "\xe2\x9c\x93 record", "\xe2\x9c\x93 spec", "\xe2\x9c\x93 sidecar", "\xe2\x9c\x93 lint",
	    "\xe2\x9c\x93 submit", NULL);
	line = screen_line_with(&s, "submitted tao-");
	p = strstr(line, "tao-");
	id = xstrndup(p, strcspn(p, " "));
	free(line);
	/* No probe step in the list, in any state (the jobs list behind it
	 * may show other tests' probe jobs from accounting's history). */
	{
		static const char *const marks[] = { "\xc2\xb7 probe", "\xe2\x80\xa6 probe",
		    "\xe2\x9c\x93 probe", "\xe2\x9c\x97 probe" };
		for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
			line = screen_line_with(&s, marks[m]);
			cr_expect_null(line, "a one-GPU job needs no NCCL probe: %s", line);
			free(line);
		}
	}
	assert_nowhere(&s, SECRET);
	screen_keys(&s, "Escape");

	/* It runs and ends Done, in the list. */
	screen_filter(&s, id);
	screen_wait_line(&s, 90, id, "Done", NULL);
	/* The secret reached the job (its length is all the job prints). */
	{
		char *cmd = xasprintf("cat %s/root/%s/slurm-logs/*/main.out", dir, id), *want;
		out = rig_ssh_ok(cmd);
		want = xasprintf("secret-len=%zu", strlen(SECRET));
		cr_expect_not_null(strstr(out, want), "the job saw no secret: %s", out);
		free(want), free(out), free(cmd);
	}
	assert_nowhere(&s, SECRET);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(id), free(bundle), free(bundles), free(env), free(dir);
}

/* Jobs in the queue or in accounting that ran in a folder under dir (a
 * submit runs sbatch from its job's folder). */
static int jobs_under(const char *dir)
{
	/* Each query must answer (rig_ssh_ok fails the test otherwise): a
	 * count of 0 from a query that failed would pass "no job". */
	char *cmd = xasprintf("q=$(squeue -h -o %%Z) && a=$(sacct -n -X -P -S now-1hour -o WorkDir) && "
	    "{ printf '%%s\n%%s\n' \"$q\" \"$a\" | grep -c '^%s'; [ $? -le 1 ]; }", dir);
	char *out = rig_ssh_ok(cmd);
	int n = atoi(out);

	free(out);
	free(cmd);
	return n;
}

Test(wizard, bad_fields_are_refused_in_the_form_and_nothing_is_sent, .timeout = 120)
{
	char *dir = screen_shared_dir("wizard-bad"), *env, *out, *cmd, *line;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 45 };

	cmd = xasprintf("mkdir -p %s/data", dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
	env = xasprintf("SLURM_BASE_RESULTS_DIR=lustre://%s/root", dir);
	so.env = env;
	screen_open(&s, "wizard-bad", &so);
	screen_wait(&s, 30, "polled", NULL);

	/* From empty fields: image, command, then a dataset on this machine. */
	screen_keys(&s, "s");
	screen_wait(&s, 5, "Submit a job", NULL);
	keys_n(&s, "Tab", 2);
	screen_type(&s, "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt");
	keys_n(&s, "Tab", 3);
	screen_type(&s, "sh -c true");
	screen_keys(&s, "Tab");
	screen_type(&s, "file:///home/me/data");
	screen_wait(&s, 5, "! datasets: file:///home/me/data is a path on this machine", NULL);
	screen_wait_line(&s, 5, ">! Datasets", NULL);
	/* 5 hours on polar, a 4-hour queue: the policy's own words. */
	keys_n(&s, "Tab", 4);
	screen_keys(&s, "C-u");
	screen_type(&s, "5");
	screen_wait(&s, 5, "! 5 h on polar: the packaged partitions", NULL);

	/* Submit refuses, naming the first problem. */
	keys_n(&s, "Up", 11);
	screen_wait_line(&s, 5, ">  [ Submit ]", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "not submitted: datasets: file:///home/me/data", NULL);
	screen_wait_line(&s, 5, ">! Datasets", NULL);
	screen_wait(&s, 5, " ! Time (h)     5", NULL);

	/* Mended, the preview renders the sbatch and writes nothing. */
	screen_keys(&s, "C-u");
	line = xasprintf("lustre://%s/data", dir);
	screen_type(&s, line);
	free(line);
	keys_n(&s, "Tab", 4);
	screen_keys(&s, "C-u");
	screen_type(&s, "1");
	keys_n(&s, "Up", 12);
	screen_wait_line(&s, 5, ">  [ Preview", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 30, "Preview: nothing was written or submitted", "check: if test -e",
	    NULL);
	/* The resolved values and the plan come first: page down to the
	 * script's head, a page at a time, as a user would. */
	for (int page = 0; page < 24; page++) {
		char *shown;
		screen_keys(&s, page == 0 ? "NPage" : "Down Down Down Down Down");
		usleep(300 * 1000);
		shown = screen_text(&s);
		int there = strstr(shown, "#SBATCH --job-name=tao-DRYRUN") != NULL &&
		    strstr(shown, "#SBATCH --time=1:00:00") != NULL;
		free(shown);
		if (there)
			break;
	}
	screen_wait(&s, 5, "#SBATCH --job-name=tao-DRYRUN", "#SBATCH --time=1:00:00", NULL);
	screen_keys(&s, "Escape");
	screen_wait(&s, 5, "Submit a job", NULL);

	/* A dataset the cluster does not have: the step where it fails says
	 * so and what to do; Esc goes back to the form. */
	keys_n(&s, "Down", 8);
	screen_wait_line(&s, 5, ">  Datasets", NULL);
	screen_keys(&s, "C-u");
	line = xasprintf("lustre://%s/missing", dir);
	screen_type(&s, line);
	free(line);
	keys_n(&s, "Up", 7);
	screen_wait_line(&s, 5, ">  [ Submit ]", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 30, "\xe2\x9c\x97 checks", "does not exist on", "stage it on the shared",
	    "Esc: back to the form", NULL);
	screen_keys(&s, "Escape");
	screen_wait(&s, 5, "Submit a job", NULL);
	/* Esc leaves: nothing on the cluster, nothing queued, no record. */
	screen_keys(&s, "Escape");
	screen_wait(&s, 5, "submit abandoned: nothing was written or submitted", NULL);
	cmd = xasprintf("ls -A %s; test -e %s/root && echo ROOT-EXISTS || true", dir, dir);
	out = rig_ssh_ok(cmd);
	cr_expect_str_eq(out, "data", "something was written on the cluster: %s", out);
	free(out), free(cmd);
	cr_expect_eq(jobs_under(dir), 0, "a job reached SLURM");
	{
		char *jobs = xasprintf("%s/state/taotop/jobs", s.dir);
		cr_expect_eq(rig_local("test -z \"$(ls -A %s 2>/dev/null | grep -v '^\\.')\"", jobs), 0,
		    "a record was made in %s", jobs);
		free(jobs);
	}
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(env), free(dir);
}

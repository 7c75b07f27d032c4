/*
 * The submit pipeline against the real cluster: a full submit to Done, the
 * image converted once, the sidecar's life, refusals that submit nothing,
 * a cut connection adopted without a second job, and hostile values.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/submit/spec.h"
#include "engine/submit/submit.h"
#include "engine/track/tracker.h"
#include "integration/helper_rig.h"
#include "integration/helper_submit.h"
#include "ssh/conn.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

#define TOKEN SUB_TOKEN

static const char *full_bundle =
	"image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	"network_arch: classification_pyt\n"
	"action: train\n"
	"command:\n"
	"  - sh\n"
	"  - -c\n"
	"  - 'stat -c %a %B/root/*/job_*.env > %B/results/seen-mode; "
	"printf %s \"$HF_TOKEN\" | wc -c > %B/results/seen-len; "
	"echo training; echo {\\\"status\\\": \\\"SUCCESS\\\"} > %B/results/status.json'\n"
	"datasets: [lustre://%B/data/train, 'slurm://%B/data/val']\n"
	"results_dir: lustre://%B/results\n"
	"gpus: 2\n"
	"time_hours: 0.5\n"
	"secrets: [HF_TOKEN]\n"
	"extra_env: {NCCL_DEBUG: WARN}\n"
	"spec:\n"
	"  train:\n"
	"    num_epochs: 3\n";

Test(submit, a_full_submit_runs_to_done_with_the_image_converted_once, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "full", NULL);
	char *spec = sub_bundle(&e, "full", full_bundle);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect(res.converted, "the registry image was converted");
	cr_assert_not_null(res.slurm_id);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 120), TAO_DONE);

	/* The sidecar was 0600 while the job ran, and is gone now. The job
	 * runs in the image, which sees only its mounts: its evidence is in the
	 * results folder. */
	char *path = xasprintf("%s/results/seen-mode", e.base), *text = sub_slurp(path);
	cr_expect(text && strcmp(text, "600\n") == 0, "sidecar mode: %s", text);
	free(path), free(text);
	path = xasprintf("%s/results/seen-len", e.base);
	text = sub_slurp(path);
	cr_expect(text && atoi(text) == (int)strlen(TOKEN), "the job got the secret: %s", text);
	free(path), free(text);
	path = xasprintf("%s/root/%s/job_%s.env", e.base, res.record_id, res.record_id);
	struct stat st;
	cr_expect(stat(path, &st) != 0, "the sidecar %s outlived the job", path);
	free(path);

	/* spec.yaml parses back to the bundle's spec. */
	path = xasprintf("%s/root/%s/specs/spec.yaml", e.base, res.record_id);
	text = sub_slurp(path);
	cr_assert_not_null(text, "%s", path);
	cr_expect(strstr(text, "num_epochs: 3") != NULL, "%s", text);
	free(path), free(text);

	/* No secret in the sbatch, the record, the logs. */
	char *files[] = {
		xasprintf("%s/root/%s/sbatch/job_%s.sbatch", e.base, res.record_id, res.record_id),
		xasprintf("%s/jobs/%s.json", e.local, res.record_id),
		xasprintf("%s/root/%s/slurm-logs/%s-%s/main.out", e.base, res.record_id, res.record_id, res.slurm_id),
		xasprintf("%s/root/%s/slurm-logs/%s-%s/main.err", e.base, res.record_id, res.record_id, res.slurm_id),
	};
	for (size_t i = 0; i < 4; i++) {
		text = sub_slurp(files[i]);
		cr_expect_not_null(text, "%s is missing", files[i]);
		cr_expect(text == NULL || strstr(text, TOKEN) == NULL, "the token is in %s", files[i]);
		if (i == 2)
			cr_expect(text && strstr(text, "training") != NULL, "main.out: %s", text);
		free(text), free(files[i]);
	}

	/* A second submit reuses the converted image. Its run gets a results
	 * folder of its own: the first run's is refused. */
	struct submit_result again;
	cr_assert_neq(sub_submit(&e, spec, &again, &err), 0, "the same results_dir twice");
	cr_expect(err && strstr(err, res.record_id) != NULL, "the first run is not named: %s", err);
	free(err), err = NULL;
	submit_result_free(&again);
	struct buf second;
	buf_init(&second);
	for (const char *p = full_bundle; *p != '\0'; p++) {
		buf_addc(&second, *p);
		if (strncmp(p, "/results", 8) == 0) {
			buf_adds(&second, "results2");
			p += 7;
		}
	}
	free(spec);
	spec = sub_bundle(&e, "full2", second.data);
	buf_free(&second);
	cr_assert_eq(sub_submit(&e, spec, &again, &err), 0, "%s", err);
	cr_expect(!again.converted, "the image was converted a second time");
	cr_expect_eq(sub_wait_final(&e, again.record_id, 120), TAO_DONE);
	submit_result_free(&again);
	submit_result_free(&res);
	free(spec);
	sub_close(&e);
}

Test(submit, refusals_say_why_and_submit_nothing, .timeout = 240)
{
	struct sub_env e;
	sub_open(&e, "refuse", NULL);
	struct { const char *name, *text, *want; } cases[] = {
		{ "long", "image: /nope.sqsh\ncommand: x\ntime_hours: 5\npartition: polar\n", "5 h on polar" },
		{ "file", "image: /nope.sqsh\ncommand: x\ndatasets: [file:///home/me/data]\n", "cluster cannot read" },
		{ "missing", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\ncommand: x\n"
		  "datasets: [lustre://%B/data/nope]\n", "/data/nope does not exist" },
		{ "conversion", "image: nvcr.io/nvidia/no-such-image:1\ncommand: x\n",
		  "does not fall back to the registry image" },
		{ "secret", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\ncommand: x\n"
		  "extra_env: {WANDB_API_KEY: 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a}\n", "secret: WANDB_API_KEY" },
		{ "yaml", "image: x\ncommand: [unclosed\n", "yaml:3:1: YAML syntax error" },
		{ "nosecret", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\ncommand: x\nsecrets: [NOT_SET_ANYWHERE]\n",
		  "NOT_SET_ANYWHERE is set neither in your environment nor in a .env" },
	};
	/* Other tests submit in parallel, so "nothing submitted" is checked by
	 * name: a refusal that got as far as opening a record (its id is the
	 * job's name) must have no job of that name, queued or accounted. */
	struct buf names;
	buf_init(&names);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct submit_result res;
		char *err = NULL, *spec = sub_bundle(&e, cases[i].name, cases[i].text);
		cr_expect_eq(sub_submit(&e, spec, &res, &err), -1, "%s was submitted", cases[i].name);
		cr_expect(err != NULL && strstr(err, cases[i].want) != NULL, "%s: %s", cases[i].name, err);
		cr_expect(err == NULL || strstr(err, TOKEN) == NULL);
		cr_expect_null(res.slurm_id);
		if (res.record_id != NULL)
			buf_addf(&names, "%s%s", names.len ? "," : "", res.record_id);
		submit_result_free(&res);
		free(err), free(spec);
	}
	/* A template with a placeholder nobody fills. */
	char *tdir = xasprintf("%s/tmpl", e.local);
	mkdir(tdir, 0755);
	char *tpath = xasprintf("%s/singlenode.sbatch.tmpl", tdir);
	FILE *f = fopen(tpath, "w");
	fputs("#!/bin/bash\n#SBATCH -J @@JOB_NAME@@\necho @@NOT_A_SEED_PLACEHOLDER@@\n", f);
	fclose(f);
	char *spec = sub_bundle(&e, "tmpl", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\ncommand: x\n");
	struct submit_opts o = { .spec_path = spec, .gpus = -1, .nodes = -1, .time_hours = -1,
	    .template_dir = tdir };
	struct submit_result res;
	char *err = NULL;
	cr_expect_eq(submit_run(e.conn, e.store, &e.cl, &o, NULL, NULL, &res, &err), -1);
	cr_expect(err && strstr(err, "@@NOT_A_SEED_PLACEHOLDER@@ has no value") != NULL, "%s", err);
	submit_result_free(&res);
	free(err), free(spec), free(tpath), free(tdir);
	cr_assert_gt(names.len, 0, "no refusal opened a record: the name check proves nothing");
	char *check = xasprintf("squeue -h --name=%s; sacct -n -X -P -S now-1hour --name=%s -o JobIDRaw",
	    names.data, names.data);
	char *found = rig_ssh_ok(check);
	cr_expect_str_eq(found, "", "a refused submit reached the scheduler: %s", found);
	free(found), free(check);
	buf_free(&names);
	sub_close(&e);
}

Test(submit, a_cut_connection_after_sbatch_adopts_the_one_job, .timeout = 180)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "cut", NULL);
	char *spec = sub_bundle(&e, "cut", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: [sh, -c, 'sleep 5']\ntime_hours: 0.2\n");
	conn_test_cut_after(e.conn, "sbatch --hold");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect(res.adopted, "the job was not adopted by name");
	char *cmd = xasprintf("squeue -h --name=%s | wc -l", res.record_id);
	char *n = rig_ssh_ok(cmd);
	cr_expect_str_eq(n, "1", "exactly one job, never a second submit");
	struct job_record *r;
	cr_assert_eq(store_load(e.store, res.record_id, &r, &err), 0, "%s", err);
	cr_expect_str_eq(r->backend_ref, res.slurm_id);
	record_free(r);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 90), TAO_ERROR, "no status.json: Error, but it ran");
	free(n), free(cmd), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

Test(submit, hostile_values_are_submitted_as_text_or_refused, .timeout = 180)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "hostile", NULL);
	rig_local("rm -f /tmp/pwned");
	/* A dataset path with a space and a quote: refused, nothing written. */
	char *spec = sub_bundle(&e, "path", "image: /x.sqsh\ncommand: x\ndatasets: [\"lustre://%B/it's a dir\"]\n");
	cr_expect_eq(sub_submit(&e, spec, &res, &err), -1);
	cr_expect(err && strstr(err, "cannot carry") != NULL, "%s", err);
	submit_result_free(&res);
	free(err), err = NULL;
	free(spec);

	/* Words with $( ), backquotes, quotes and a newline: passed as text. */
	spec = sub_bundle(&e, "words", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: [printf, \"[%s]\\n\", '$(touch /tmp/pwned)', '`touch /tmp/pwned`', \"it's \\\"x\\\"\", \"a\\nb\"]\n"
	    "time_hours: 0.2\n");
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	sub_wait_final(&e, res.record_id, 90);
	char *path = xasprintf("%s/root/%s/slurm-logs/%s-%s/main.out", e.base, res.record_id,
	    res.record_id, res.slurm_id);
	char *out = sub_slurp(path);
	cr_expect(out != NULL && strstr(out, "[$(touch /tmp/pwned)]\n[`touch /tmp/pwned`]\n"
	    "[it's \"x\"]\n[a\nb]\n") != NULL, "main.out: %s", out);
	struct stat st;
	cr_expect(stat("/tmp/pwned", &st) != 0, "a command word ran as code");
	free(out), free(path), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* Sample every process's command line on the machine (taotop's side and the
 * cluster's: the rig is both) until told to stop. */
struct sampler {
	atomic_int	 stop;
	long		 samples;
	char		 found[256];	/* the first command line holding the token */
};

static void *sample_cmdlines(void *arg)
{
	struct sampler *s = arg;

	while (!atomic_load(&s->stop)) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d != NULL && (e = readdir(d)) != NULL) {
			char path[300], buf[8192];
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
			FILE *f = fopen(path, "rb");
			if (f == NULL)
				continue;
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			for (size_t i = 0; i < n; i++)
				if (buf[i] == '\0')
					buf[i] = ' ';
			buf[n] = '\0';
			if (strstr(buf, TOKEN) != NULL && s->found[0] == '\0')
				snprintf(s->found, sizeof(s->found), "%.200s", buf);
		}
		if (d != NULL)
			closedir(d);
		s->samples++;
	}
	return NULL;
}

Test(submit, no_command_line_on_the_machine_ever_holds_the_secret, .timeout = 180)
{
	struct sub_env e;
	struct submit_result res;
	struct sampler s = { .samples = 0 };
	pthread_t th;
	char *err = NULL;

	sub_open(&e, "cmdline", NULL);
	atomic_init(&s.stop, 0);
	pthread_create(&th, NULL, sample_cmdlines, &s);
	char *spec = sub_bundle(&e, "full", full_bundle);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect_eq(sub_wait_final(&e, res.record_id, 120), TAO_DONE);
	atomic_store(&s.stop, 1);
	pthread_join(th, NULL);
	cr_expect_gt(s.samples, 20, "sampled only %ld times", s.samples);
	cr_expect_str_eq(s.found, "", "a command line held the token");
	submit_result_free(&res);
	free(spec);
	sub_close(&e);
}

/* The golden bundle: paths under the rig's shared folder, TAO's own
 * command (the job's 8 GPUs reach it as overrides) (caller frees). */
static char *golden_bundle(const struct sub_env *e)
{
	const struct rig *r = rig_get();
	char *spec = xasprintf("%s/golden.yaml", e->local);
	FILE *f = fopen(spec, "w");
	fprintf(f, "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\n"
	    "datasets: [lustre://%s/golden/data]\ngpus: 8\ntime_hours: 2\nsecrets: [HF_TOKEN]\n"
	    "extra_env: {NCCL_DEBUG: WARN}\nspec:\n  train:\n    num_epochs: 80\n", r->shared);
	fclose(f);
	char *cmd = xasprintf("mkdir -p %s/golden/data", r->shared);
	free(rig_ssh_ok(cmd));
	free(cmd);
	return spec;
}

/* `taotop submit --dry-run SPEC ARGS` as a user runs it, paths shown as
 * @SHARED@; its output (caller frees). */
static char *dry_run(const struct sub_env *e, const char *spec, const char *args)
{
	const struct rig *r = rig_get();
	char *cmd = xasprintf("SLURM_USER=%s SLURM_HOSTNAME=%s:%d SSH_KEY_PATH=%s TAOTOP_KNOWN_HOSTS=%s "
	    "XDG_STATE_HOME=%s TAOTOP_CONFIG=/nonexistent/config.yaml "
	    "SLURM_BASE_RESULTS_DIR=lustre://%s/golden/root "
	    "TAOTOP_IMAGE_CACHE=%s/golden/images-never LANG=C %s submit --dry-run %s %s "
	    "| sed -e 's|%s|@SHARED@|g' -e 's|meta.json ([0-9]* bytes)|meta.json (@N@ bytes)|'",
	    r->user, r->host, r->port, r->key, r->known_hosts, e->local,
	    r->shared, r->shared, getenv("TAOTOP_BIN"), spec, args, r->shared);
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	char *out = NULL;
	cr_assert_eq(rig_run(argv, &out), 0, "%s", out);
	free(cmd);
	return out;
}

Test(submit, dry_run_output_matches_the_golden_file, .timeout = 60)
{
	struct sub_env e;
	sub_open(&e, "golden", NULL);
	/* A fixed bundle, paths under the rig's shared folder, written as @SHARED@
	 * in the golden file; a fresh image cache, so "would convert". meta.json
	 * holds those paths, so its size depends on the rig's folder (a second
	 * rig's is longer): @N@. */
	char *spec = golden_bundle(&e);
	char *out = dry_run(&e, spec, "");
	char *golden_path = xasprintf("%s/tests/golden/dry-run.txt", getenv("TAOTOP_SHARE"));
	char *golden = sub_slurp(golden_path);
	if (getenv("TAOTOP_UPDATE_GOLDEN") != NULL) {
		FILE *f = fopen(golden_path, "w");
		fputs(out, f);
		fclose(f);
	}
	cr_assert_not_null(golden, "%s is missing (TAOTOP_UPDATE_GOLDEN=1 writes it)", golden_path);
	cr_expect_str_eq(out, golden, "the dry run differs from %s", golden_path);
	cr_expect(strstr(out, TOKEN) == NULL, "the dry run shows the secret");
	free(golden), free(golden_path), free(out), free(spec);
	sub_close(&e);
}

/* The man page's options, written as a user types them (its example
 * `--nodes 2 --gpus 16`, a time in hours, both requeue options: the later
 * wins), reach the sbatch and say where each value came from. */
Test(submit, the_options_as_the_man_page_writes_them, .timeout = 60)
{
	struct sub_env e;
	sub_open(&e, "options", NULL);
	char *spec = golden_bundle(&e);
	char *out = dry_run(&e, spec, "--nodes 2 --gpus 16 --time 3 --partition polar "
	    "--requeue --no-requeue --force-reconvert");

	cr_expect(strstr(out, "#SBATCH --nodes=2\n") != NULL, "%s", out);
	cr_expect(strstr(out, "#SBATCH --gres=gpu:8\n") != NULL, "8 per node: %s", out);
	cr_expect(strstr(out, "#SBATCH --time=3:00:00\n") != NULL, "%s", out);
	cr_expect(strstr(out, "#SBATCH --no-requeue\n") != NULL, "the later one wins: %s", out);
	cr_expect(strstr(out, "#SBATCH --requeue\n") == NULL, "%s", out);
	cr_expect(strstr(out, "(--gpus") != NULL, "the origin of the GPUs: %s", out);
	cr_expect(strstr(out, "(--time") != NULL, "the origin of the time: %s", out);
	free(out), free(spec);
	sub_close(&e);
}

Test(submit, supporting_files_are_checked_before_anything_is_written_and_staged, .timeout = 120)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "files", NULL);
	char *labels = xasprintf("%s/labels.txt", e.local);
	FILE *f = fopen(labels, "w");
	fputs("cat\ndog\n", f);
	fclose(f);
	/* Its real checksum, by the system's own sha256sum. */
	char *real = NULL;
	char *cmd = xasprintf("sha256sum %s | cut -c1-64", labels);
	const char *const argv[] = { "sh", "-c", cmd, NULL };
	cr_assert_eq(rig_run(argv, &real), 0);
	real[64] = '\0';

	char *text = xasprintf("image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\ncommand: [true]\n"
	    "time_hours: 0.2\nsupporting_files:\n  - path: labels.txt\n    sha256: %s\n", real);
	char *spec = sub_bundle(&e, "files", text);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	char *staged = xasprintf("%s/root/%s/specs/labels.txt", e.base, res.record_id);
	char *got = sub_slurp(staged);
	cr_expect(got && strcmp(got, "cat\ndog\n") == 0, "staged: %s", got);
	free(got), free(staged), free(text), free(spec);
	submit_result_free(&res);

	/* A wrong checksum: refused in preflight, before any record or write. */
	text = xasprintf("image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\ncommand: [true]\n"
	    "supporting_files:\n  - path: labels.txt\n    sha256: %064d\n", 0);
	spec = sub_bundle(&e, "badsum", text);
	cr_expect_eq(sub_submit(&e, spec, &res, &err), -1);
	cr_expect(err && strstr(err, "not the 0000") != NULL, "%s", err);
	cr_expect_null(res.record_id, "a record was opened for a refused bundle");
	submit_result_free(&res);
	free(err), free(text), free(spec), free(real), free(cmd), free(labels);
	sub_close(&e);
}

static int jobs_under(const struct sub_env *e);

Test(submit, a_secret_may_come_from_a_dotenv_file_beside_the_bundle, .timeout = 120)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	memset(&res, 0, sizeof(res));
	sub_open(&e, "dotenv", NULL);
	unsetenv("HF_TOKEN");
	char *dotenv = xasprintf("%s/.env", e.local);
	FILE *f = fopen(dotenv, "w");
	fprintf(f, "# a comment\nexport HF_TOKEN=\"%s\"\n", TOKEN);
	fclose(f);
	char *spec = sub_bundle(&e, "dotenv", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: [sh, -c, 'cd %B/root/*/results && printf %s \"$HF_TOKEN\" | wc -c > seen-len']\n"
	    "time_hours: 0.2\nsecrets: [HF_TOKEN]\n");
	/* As an editor leaves it, readable by others: refused, with the fix,
	 * and nothing submitted. */
	cr_assert_eq(chmod(dotenv, 0644), 0);
	cr_expect_neq(sub_submit(&e, spec, &res, &err), 0, "a .env others can read was used");
	cr_expect(err != NULL && strstr(err, "can be read or written by others (mode 644): not read; "
	    "chmod 600 ") != NULL, "%s", err ? err : "");
	cr_expect(err == NULL || strstr(err, TOKEN) == NULL, "the error holds the secret");
	cr_expect_eq(jobs_under(&e), 0, "a job was submitted");
	free(err), err = NULL;
	submit_result_free(&res);
	cr_assert_eq(chmod(dotenv, 0600), 0);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	sub_wait_final(&e, res.record_id, 90);
	/* In the job's results folder (under its job folder, which the job
	 * mounts; nothing else of the shared storage is in its container). */
	char *path = xasprintf("%s/root/%s/results/seen-len", e.base, res.record_id);
	char *text = sub_slurp(path);
	cr_expect(text && atoi(text) == (int)strlen(TOKEN), "the job got %s bytes", text);
	free(text), free(path), free(spec), free(dotenv);
	submit_result_free(&res);
	sub_close(&e);
}

/* Jobs under the test's folder, known to the controller (finished ones
 * too: accounting may lag) or accounted: how many. */
static int jobs_under(const struct sub_env *e)
{
	/* Each query must answer (rig_ssh_ok fails the test otherwise): a
	 * count of 0 from a query that failed would pass "nothing submitted". */
	char *cmd = xasprintf("q=$(squeue --me -h -t all -o '%%i %%Z') && a=$(sacct -X -n -P -S now-1hour "
	    "-o JobIDRaw,WorkDir) && printf '%%s\n%%s\n' \"$q\" \"$a\" | tr '|' ' ' | grep -F ' %s/' | "
	    "cut -d' ' -f1 | sort -u | wc -l", e->base);
	char *n = rig_ssh_ok(cmd);
	int count = atoi(n);
	free(n), free(cmd);
	return count;
}

/* The job folders under the test's results root on the cluster (a secret
 * file goes in its job's folder). */
static char *root_listing(const struct sub_env *e)
{
	char *cmd = xasprintf("ls -A %s/root", e->base), *out = rig_ssh_ok(cmd);
	free(cmd);
	return out;
}

static const char *cached_bundle =
	"image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	"command: [true]\n"
	"time_hours: 0.2\n"
	"secrets: [HF_TOKEN]\n";

/* With the image cached, the checks run first in the launch's own script:
 * the whole submit is one command. A check that fails there stops the
 * script before its first write and says what it always said: nothing
 * staged (no folder, no secret file), no job, no record left. */
Test(submit, a_check_failing_inside_the_launch_script_stops_it_before_any_write, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "folded", NULL);
	char *spec = sub_bundle(&e, "ok", cached_bundle);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect(res.converted, "the first submit converts the image");
	submit_result_free(&res);
	unsigned long execs = conn_counters(e.conn)->execs;
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect(!res.converted);
	cr_expect_eq(conn_counters(e.conn)->execs - execs, 1,
	    "a submit with the image cached took %lu commands", conn_counters(e.conn)->execs - execs);
	submit_result_free(&res);
	free(spec);
	char *before = root_listing(&e);
	cr_assert_eq(jobs_under(&e), 2);

	struct { const char *name, *extra, *want; } cases[] = {
		{ "dataset", "datasets: [lustre://%B/data/train, lustre://%B/data/nope]\n",
		  "/data/nope does not exist on " },
		{ "partition", "partition: nosuchpart\n",
		  "partition nosuchpart (from the bundle) does not exist on the cluster; its partitions are " },
		{ "nodes", "gpus: 3\nnodes: 3\n", "3 GPUs as 3 nodes x 1: partition polar has 2 nodes" },
		{ "pernode", "gpus_per_node: 16\n", "16 GPUs on a node: the nodes of partition polar have 8" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = xasprintf("%s%s", cached_bundle, cases[i].extra);
		spec = sub_bundle(&e, cases[i].name, text);
		execs = conn_counters(e.conn)->execs;
		cr_expect_eq(sub_submit(&e, spec, &res, &err), -1, "%s was submitted", cases[i].name);
		cr_expect(err != NULL && strstr(err, cases[i].want) != NULL, "%s: %s", cases[i].name, err);
		cr_expect(err == NULL || strstr(err, TOKEN) == NULL);
		cr_expect_eq(conn_counters(e.conn)->execs - execs, 1,
		    "%s: the checks were not in the launch's script", cases[i].name);
		cr_expect_null(res.slurm_id);
		cr_expect_null(res.record_id, "%s: a record is left", cases[i].name);
		char *now = root_listing(&e);
		cr_expect_str_eq(now, before, "%s: something was staged", cases[i].name);
		free(now);
		submit_result_free(&res);
		free(err), err = NULL;
		free(spec), free(text);
	}
	cr_expect_eq(jobs_under(&e), 2, "a stopped submit reached the scheduler");
	struct job_record **list;
	size_t n;
	cr_assert_eq(store_list(e.store, &list, &n, NULL), 0);
	cr_expect_eq(n, 2, "records: %zu, not the two submitted", n);
	store_list_free(list, n);
	free(before);
	sub_close(&e);
}

/* The connection cut after the launch's script (checks, files, sbatch)
 * ran: the job is found by its name and adopted, never submitted twice. */
Test(submit, a_cut_after_the_one_command_submit_adopts_the_one_job, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "foldcut", NULL);
	char *spec = sub_bundle(&e, "ok", cached_bundle);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	submit_result_free(&res);
	conn_test_cut_after(e.conn, "sbatch --hold");
	unsigned long connects = conn_counters(e.conn)->connects;
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect(res.adopted, "the job was not adopted by name");
	cr_expect_gt(conn_counters(e.conn)->connects, connects, "the connection was not cut");
	char *cmd = xasprintf("squeue -h --name=%s | wc -l; sacct -n -X -P -S now-1hour --name=%s "
	    "-o JobIDRaw | sort -u | wc -l", res.record_id, res.record_id);
	char *n = rig_ssh_ok(cmd);
	cr_expect(strncmp(n, "1\n", 2) == 0 || strstr(n, "\n1") != NULL, "exactly one job: %s", n);
	cr_expect_eq(jobs_under(&e), 2, "a second job was submitted");
	struct job_record *r;
	cr_assert_eq(store_load(e.store, res.record_id, &r, &err), 0, "%s", err);
	cr_expect_str_eq(r->backend_ref, res.slurm_id);
	record_free(r);
	free(n), free(cmd), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* ---- an unclear submit, settled by the decision table (engine/submit/settle.h) ---- */

/* All of a record's history messages, one a line (caller frees). */
static char *history_of(struct sub_env *e, const char *id, struct job_record **out)
{
	struct job_record *r;
	struct buf b;
	char *err = NULL;

	cr_assert_eq(store_load(e->store, id, &r, &err), 0, "%s", err);
	buf_init(&b);
	for (size_t i = 0; i < r->nhist; i++)
		buf_addf(&b, "%s\n", r->hist[i].message ? r->hist[i].message : "");
	*out = r;
	return buf_detach(&b);
}

static const char *settle_bundle =
	"image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	"command: [sh, -c, 'sleep 5']\n"
	"time_hours: 0.2\n";

/* The connection cut after sbatch ran, and the first lookups lost with it
 * too: the later lookup finds the job and adopts it; never "nothing was
 * submitted", never a second job. */
Test(submit, an_unclear_submit_whose_first_lookups_fail_adopts_the_job_later, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	char *err = NULL;

	sub_open(&e, "settle-late", NULL);
	char *spec = sub_bundle(&e, "late", settle_bundle);
	conn_test_cut_after(e.conn, "sbatch --hold");
	conn_test_lose_next(e.conn, "@@squeue", 3);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_expect(res.adopted, "the job was not adopted by name");
	cr_expect_null(res.resubmit_of, "submitted again although the job existed");
	cr_assert_not_null(res.settled);
	cr_expect(strstr(res.settled, "3 failed") != NULL, "the failed lookups: %s", res.settled);
	char *cmd = xasprintf("squeue -h -t all --name=%s | wc -l", res.record_id);
	char *n = rig_ssh_ok(cmd);
	cr_expect_str_eq(n, "1", "exactly one job, never a second submit");
	cr_expect_eq(jobs_under(&e), 1, "a second job was submitted");
	char *hist = history_of(&e, res.record_id, &r);
	cr_expect_str_eq(r->backend_ref, res.slurm_id);
	cr_expect(strstr(hist, "adopted by its name") != NULL, "%s", hist);
	cr_expect(strstr(hist, "the submit's answer was unclear") != NULL, "no evidence: %s", hist);
	cr_expect(strstr(hist, "nothing was submitted") == NULL, "%s", hist);
	record_free(r);
	free(hist), free(n), free(cmd), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

struct dup_arg {
	struct sub_env	*e;
	char		*dup_id;	/* the second job of the name, sbatched here */
};

/* While the submit's lookups fail: the record's name, then a second job
 * under it, as a double-clicked submit elsewhere would leave. */
static void *make_duplicate(void *p)
{
	struct dup_arg *a = p;

	for (int i = 0; i < 200 && a->dup_id == NULL; i++) {
		struct job_record **list;
		size_t n;
		if (store_list(a->e->store, &list, &n, NULL) == 0) {
			for (size_t k = 0; k < n && a->dup_id == NULL; k++) {
				if (list[k]->backend_ref != NULL)
					continue;
				char *opts = xasprintf("--job-name=%s -t 5 -o /dev/null", list[k]->id);
				char *check = xasprintf("squeue -h --name=%s | wc -l", list[k]->id);
				char *cnt = rig_ssh_ok(check);
				if (atoi(cnt) == 1)
					a->dup_id = rig_sbatch(opts, "'sleep 600'");
				free(cnt), free(check), free(opts);
			}
			store_list_free(list, n);
		}
		usleep(100 * 1000);
	}
	return NULL;
}

/* Two jobs of the name found after an unclear submit: the first kept, the
 * duplicate cancelled, and the record says so. */
Test(submit, two_jobs_of_the_name_after_an_unclear_submit_cancel_the_duplicate, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *r;
	struct dup_arg a = { 0 };
	pthread_t th;
	char *err = NULL;

	sub_open(&e, "settle-dup", NULL);
	char *spec = sub_bundle(&e, "dup", settle_bundle);
	/* The image converted first: the name is known only once the record
	 * opens, and the lookups must fail long enough for the second job. */
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	submit_result_free(&res);
	conn_test_cut_after(e.conn, "sbatch --hold");
	conn_test_lose_next(e.conn, "@@squeue", 8);
	a.e = &e;
	pthread_create(&th, NULL, make_duplicate, &a);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	pthread_join(th, NULL);
	cr_assert_not_null(a.dup_id, "the test made no second job of the name");
	cr_expect(res.adopted);
	cr_expect_neq(strcmp(res.slurm_id, a.dup_id), 0, "the duplicate was kept");
	char *state = rig_wait_state(a.dup_id, "CANCELLED", 60);
	free(state);
	char *cmd = xasprintf("squeue -h --name=%s -t PD,R -o %%A", res.record_id);
	char *live = rig_ssh_ok(cmd);
	cr_expect(strstr(live, a.dup_id) == NULL, "the duplicate still queued: %s", live);
	char *hist = history_of(&e, res.record_id, &r);
	cr_expect_str_eq(r->backend_ref, res.slurm_id);
	char *want = xasprintf("cancelled the duplicate %s", a.dup_id);
	cr_expect(strstr(hist, want) != NULL, "the record does not say so: %s", hist);
	cr_expect(strstr(res.settled, want) != NULL, "%s", res.settled);
	record_free(r);
	free(want), free(hist), free(live), free(cmd), free(spec), free(a.dup_id);
	submit_result_free(&res);
	sub_close(&e);
}

/* The submit lost before sbatch ran: the lookups work and find nothing
 * for the whole window; an infrastructure failure, submitted once more
 * under a new record linked to it, and no more. */
Test(submit, no_job_within_the_window_is_submitted_once_more_under_a_linked_record, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record *old, *nw;
	char *err = NULL;

	sub_open(&e, "settle-none", NULL);
	char *spec = sub_bundle(&e, "none", settle_bundle);
	conn_test_lose_next(e.conn, "sbatch --hold", 1);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	cr_assert_not_null(res.resubmit_of, "not submitted once more");
	cr_expect_str_neq(res.resubmit_of, res.record_id);
	cr_expect(!res.adopted);
	char *h_old = history_of(&e, res.resubmit_of, &old);
	char *h_new = history_of(&e, res.record_id, &nw);
	cr_expect_eq(old->state, TAO_ERROR);
	cr_expect_str_eq(old->retried_as, res.record_id);
	cr_expect_null(old->backend_ref);
	cr_expect(strstr(h_old, "infrastructure failure") != NULL, "%s", h_old);
	cr_expect(strstr(h_old, "none found by the lookups that worked") != NULL, "%s", h_old);
	cr_expect(strstr(h_old, "nothing was submitted") == NULL, "%s", h_old);
	cr_expect_str_eq(nw->retry_of, res.resubmit_of);
	cr_expect_str_eq(nw->backend_ref, res.slurm_id);
	char *cmd = xasprintf("sacct -n -X -P -S now-1hour --name=%s -o JobIDRaw | wc -l; "
	    "sacct -n -X -P -S now-1hour --name=%s -o JobIDRaw | wc -l; squeue -h -t all --name=%s "
	    "| wc -l", res.resubmit_of, res.record_id, res.record_id);
	char *counts = rig_ssh_ok(cmd);
	int lost, again, queued;
	cr_assert_eq(sscanf(counts, "%d %d %d", &lost, &again, &queued), 3, "%s", counts);
	cr_expect_eq(lost, 0, "a job of the lost submit's name exists");
	cr_expect(again == 1 || queued == 1, "the resubmit's job: %s", counts);
	cr_expect_eq(jobs_under(&e), 1, "more than one job was submitted");
	struct job_record **list;
	size_t n;
	cr_assert_eq(store_list(e.store, &list, &n, NULL), 0);
	cr_expect_eq(n, 2, "records: %zu, not the lost one and its one resubmit", n);
	store_list_free(list, n);
	record_free(old), record_free(nw);
	free(h_old), free(h_new), free(counts), free(cmd), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* The answer lost and every lookup with it, the whole window: the job may
 * exist (it does), so the submit fails without a second job and without
 * the words "nothing was submitted". */
Test(submit, no_lookup_working_never_says_nothing_was_submitted, .timeout = 240)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL;

	sub_open(&e, "settle-blind", NULL);
	char *spec = sub_bundle(&e, "blind", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: [sh, -c, 'sleep 5']\ntime_hours: 0.2\nsecrets: [HF_TOKEN]\n");
	conn_test_cut_after(e.conn, "sbatch --hold");
	conn_test_lose_next(e.conn, "@@squeue", 1000);
	cr_assert_eq(sub_submit(&e, spec, &res, &err), -1, "the submit said it worked");
	cr_assert_not_null(err);
	cr_expect(strstr(err, "nothing was submitted") == NULL, "%s", err);
	cr_expect(strstr(err, "may exist") != NULL, "%s", err);
	cr_expect(strstr(err, "no lookup worked") != NULL, "%s", err);
	conn_test_lose_next(e.conn, NULL, 0);
	cr_expect_eq(jobs_under(&e), 1, "the job that was submitted, and no second one");
	free(err), free(spec);
	submit_result_free(&res);
	sub_close(&e);
}

/* ---- a conversion that never strands (engine/submit/convert.h) ---- */

static void said_image(enum submit_step step, int state, const char *detail, void *data)
{
	if (step == STEP_IMAGE && detail != NULL)
		buf_addf(data, "%d %s\n", state, detail);
}

struct unblock_arg {
	const char	*blocker;
	int		 done;
};

/* Once the first conversion was cancelled, the account's other job ends:
 * the memory its QOS caps is free for the second. */
static void *unblock(void *p)
{
	struct unblock_arg *a = p;

	for (int i = 0; i < 900 && !a->done; i++) {
		char *out = NULL;
		/* Its own conversion: one submitted after the blocker. */
		char *q = xasprintf("sacct -X -n -P -S now-1hour -A taotopconv -o JobIDRaw,JobName,State "
		    "| awk -F'|' '$1 > %s && $2 ~ /^taotop-convert-/ && $3 ~ /^CANCELLED/ { print $2; "
		    "exit }'", a->blocker);
		int found = rig_ssh(q, &out) == 0 && strncmp(out, "taotop-convert-", 15) == 0;
		free(q);
		if (found) {
			char *cmd = xasprintf("scancel %s", a->blocker);
			free(rig_ssh_ok(cmd));
			free(cmd);
			a->done = 1;
		}
		free(out);
		usleep(200 * 1000);
	}
	return NULL;
}

/* A conversion behind another job of its account, whose QOS caps the
 * group's memory: it waits with QOSGrpMemLimit, which the submit shows;
 * it is cancelled and run once more with the explicit profile, and that
 * one converts. Both carry the job's account (sacct). */
Test(submit, a_conversion_on_qos_grp_mem_limit_is_cancelled_and_run_with_the_profile,
    .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	struct buf said;
	struct unblock_arg a = { 0 };
	pthread_t th;
	char *err = NULL;

	rig_get();
	/* The account and its capped QOS (tests/cluster/README.md). */
	rig_local("sacctmgr -i add qos taotop-convlim >/dev/null 2>&1; "
	    "sacctmgr -i modify qos taotop-convlim set GrpTRES=mem=8000 >/dev/null 2>&1; "
	    "sacctmgr -i add account taotopconv Description=taotop-conv Organization=taotop "
	    ">/dev/null 2>&1; sacctmgr -i add user %s account=taotopconv qos=taotop-convlim "
	    "defaultqos=taotop-convlim >/dev/null 2>&1; true", rig_get()->user);
	char *check = rig_ssh_ok("sacctmgr -n -P show assoc user=$(id -un) account=taotopconv "
	    "format=defaultqos");
	cr_assert_str_eq(check, "taotop-convlim", "the rig's capped account is not set up");
	free(check);
	sub_open(&e, "qosmem", NULL);
	/* 2000M of the 8000M held: the conversion's 7200M must wait. */
	char *blocker = rig_sbatch("-A taotopconv -p cpu_long --mem=2000 -c1 -t 30 -o /dev/null",
	    "'sleep 900'");
	char *state = rig_wait_state(blocker, "RUNNING", 60);
	free(state);
	a.blocker = blocker;
	pthread_create(&th, NULL, unblock, &a);
	char *spec = sub_bundle(&e, "qos", "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "command: [true]\ntime_hours: 0.2\naccount: taotopconv\n");
	struct submit_opts o = { .spec_path = spec, .gpus = -1, .nodes = -1, .time_hours = -1 };
	buf_init(&said);
	int rc = submit_run(e.conn, e.store, &e.cl, &o, said_image, &said, &res, &err);
	a.done = 1;
	pthread_join(th, NULL);
	cr_assert_eq(rc, 0, "%s\n%s", err, said.data);
	cr_expect(res.converted);
	cr_expect(strstr(said.data, "waiting in the queue: QOSGrpMemLimit") != NULL,
	    "the pending reason was not shown: %s", said.data);
	cr_expect(strstr(said.data, "pending on QOSGrpMemLimit (ReqCPUS=4 ReqMem=7200M): cancelled; "
	    "converting once more with the explicit profile") != NULL, "%s", said.data);
	cr_expect(strstr(said.data, "1 converted, the second time with the explicit profile") != NULL,
	    "%s", said.data);
	/* sacct: two conversions, both with the account and the profile; the
	 * first cancelled, the second completed. */
	char *q = xasprintf("sacct -X -n -P -S now-1hour -A taotopconv -o JobIDRaw,JobName,Account,"
	    "State,ReqCPUS,ReqMem | awk -F'|' '$1 > %s && $2 ~ /^taotop-convert-/' | sort -n",
	    blocker);
	char *rows = rig_ssh_ok(q);
	free(q);
	char *second = strchr(rows, '\n');
	cr_assert_not_null(second, "not two conversions: %s", rows);
	cr_expect_null(strchr(second + 1, '\n'), "more than two conversions: %s", rows);
	cr_expect(rig_matches(rows, "^[0-9]+\\|taotop-convert-[0-9a-f]+\\|taotopconv\\|CANCELLED[^|]*"
	    "\\|4\\|7200M"), "the first conversion: %s", rows);
	cr_expect(rig_matches(second + 1, "^[0-9]+\\|taotop-convert-[0-9a-f]+\\|taotopconv\\|COMPLETED"
	    "\\|4\\|7200M"), "the second conversion: %s", rows);
	char *cmd = xasprintf("scancel %s; squeue -h -A taotopconv -t PD,R -o %%A | wc -l", blocker);
	free(rig_ssh_ok(cmd));
	free(cmd), free(rows), free(blocker), free(spec);
	buf_free(&said);
	submit_result_free(&res);
	sub_close(&e);
}

/* The gate before sbatch, in the launch's own command: a job of the same
 * name already there refuses it, and so does SLURM's answer to
 * `sbatch --test-only`; neither submits anything. */
Test(submit, the_launch_refuses_a_taken_name_and_what_test_only_refuses, .timeout = 120)
{
	struct sub_env e;
	char *err = NULL, *slurm_id = NULL;
	int adopted = 0;

	sub_open(&e, "gate", NULL);
	char *name = xasprintf("tao-20991231-%06x", rig_uniq() & 0xffffff);
	char *cmd = xasprintf("mkdir -p %s/gate/sbatch %s/gate/slurm-logs && printf '#!/bin/bash\\n"
	    "#SBATCH -o /dev/null\\n#SBATCH -t 5\\nsleep 60\\n' > %s/gate/sbatch/ok.sbatch && "
	    "printf '#!/bin/bash\\n#SBATCH -o /dev/null\\n#SBATCH -t 5\\n#SBATCH --gres=gpu:99\\n"
	    "true\\n' > %s/gate/sbatch/big.sbatch", e.base, e.base, e.base, e.base);
	free(rig_ssh_ok(cmd));
	free(cmd);
	char *dir = xasprintf("%s/gate", e.base), *logs = xasprintf("%s/gate/slurm-logs", e.base);
	char *ok = xasprintf("%s/sbatch/ok.sbatch", dir), *big = xasprintf("%s/sbatch/big.sbatch", dir);
	char *opts = xasprintf("--job-name=%s -t 5 -o /dev/null", name);
	char *first = rig_sbatch(opts, "'sleep 60'");

	cr_expect_eq(submit_launch_staged(e.conn, e.store, name, dir, ok, logs, NULL, &slurm_id, &adopted,
	    &err), -1, "a second job of the name was submitted");
	cr_expect(err && strstr(err, "exists already") != NULL && strstr(err, first) != NULL, "%s",
	    err);
	free(err), err = NULL;
	cmd = xasprintf("squeue -h -t all --name=%s -o %%A", name);
	char *ids = rig_ssh_ok(cmd);
	cr_expect_str_eq(ids, first, "only the first job carries the name");
	free(ids), free(cmd);

	char *other = xasprintf("tao-20991231-%06x", (rig_uniq() + 1) & 0xffffff);
	cr_expect_eq(submit_launch_staged(e.conn, e.store, other, dir, big, logs, NULL, &slurm_id,
	    &adopted, &err), -1, "a job SLURM can never run was submitted");
	/* 22.05's words; newer SLURM says "Batch job submission failed". */
	cr_expect(err && strstr(err, "sbatch --test-only") != NULL &&
	    (strstr(err, "Requested node configuration is not available") != NULL), "%s", err);
	cmd = xasprintf("squeue -h -t all --name=%s | wc -l; sacct -n -X -P -S now-1hour --name=%s "
	    "-o JobIDRaw | wc -l", other, other);
	char *n = rig_ssh_ok(cmd);
	cr_expect_str_eq(n, "0\n0", "the refused job reached the scheduler: %s", n);
	free(n), free(cmd), free(err), free(other), free(first), free(opts), free(ok), free(big);
	free(dir), free(logs), free(name);
	sub_close(&e);
}

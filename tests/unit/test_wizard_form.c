/* The submit wizard's form and its file picker, without a screen. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/submit/spec.h"
#include "ui/picker.h"
#include "ui/wizard.h"
#include "util/xmalloc.h"

static struct cluster_cfg one = { .name = (char *)"rig", .partitions = (char *)"polar,long",
	.account = (char *)"proj" };
static struct config cfg = { .clusters = &one, .n = 1 };

static void set(struct wizard *w, enum wiz_field f, const char *text)
{
	w->row = f;
	wizard_clear(w);
	wizard_type(w, text);
}

/* The problem of field f, "" when none (caller frees). */
static char *problem(const struct wizard *w, enum wiz_field f)
{
	char *p = wizard_problem(w, f);
	return p ? p : xstrdup("");
}

static void expect_problem(const struct wizard *w, enum wiz_field f, const char *want)
{
	char *p = problem(w, f);
	cr_expect_not_null(strstr(p, want), "field %d: want '%s', got '%s'", f, want, p);
	free(p);
}

Test(wizard_form, starts_from_the_seeds_defaults_and_the_clusters_config)
{
	struct wizard w;
	char *msg = NULL;

	wizard_init(&w, &cfg, 0);
	cr_expect_str_eq(w.value[WZ_CLUSTER], "rig");
	cr_expect_str_eq(w.value[WZ_GPUS], "4");
	cr_expect_str_eq(w.value[WZ_NODES], "1");
	cr_expect_str_eq(w.value[WZ_TIME], "4");
	cr_expect_str_eq(w.value[WZ_PARTITION], "polar");
	cr_expect_str_eq(w.value[WZ_ACCOUNT], "proj");
	/* Empty, it cannot be sent: the image is the first thing missing. */
	cr_expect_eq(wizard_first_problem(&w, &msg), WZ_IMAGE);
	cr_expect_str_eq(msg, "Image is required");
	free(msg);
	wizard_free(&w);
}

Test(wizard_form, each_field_is_checked_with_the_engines_words)
{
	struct wizard w;

	wizard_init(&w, &cfg, 0);
	set(&w, WZ_TIME, "5");
	expect_problem(&w, WZ_TIME, "5 h on polar: the packaged partitions");
	/* The same hours elsewhere: the partition's MaxTime decides, later. */
	set(&w, WZ_PARTITION, "long");
	expect_problem(&w, WZ_TIME, "");
	set(&w, WZ_TIME, "four");
	expect_problem(&w, WZ_TIME, "a number of hours above 0");
	set(&w, WZ_DATASETS, "lustre:///data/a file:///home/me/b");
	expect_problem(&w, WZ_DATASETS, "file:///home/me/b is a path on this machine");
	set(&w, WZ_RESULTS, "/lustre/results");
	expect_problem(&w, WZ_RESULTS, "results_dir");
	set(&w, WZ_IMAGE, "not an image");
	{
		char *p = problem(&w, WZ_IMAGE);
		cr_expect_neq(strcmp(p, ""), 0, "a spaced image passed");
		free(p);
	}
	set(&w, WZ_IMAGE, "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt");
	expect_problem(&w, WZ_IMAGE, "");
	set(&w, WZ_GPUS, "6");
	set(&w, WZ_NODES, "4");
	expect_problem(&w, WZ_GPUS, "6 GPUs do not split evenly over 4 nodes");
	set(&w, WZ_NODES, "0");
	expect_problem(&w, WZ_NODES, "a whole number from 1 to 1024");
	set(&w, WZ_ENV, "NCCL_DEBUG=WARN HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789");
	expect_problem(&w, WZ_ENV, "HF_TOKEN looks like a secret: name it under Secrets");
	set(&w, WZ_ENV, "lower=1");
	expect_problem(&w, WZ_ENV, "lower=1 is not NAME=value");
	set(&w, WZ_SECRETS, "HF_TOKEN bad-name");
	expect_problem(&w, WZ_SECRETS, "bad-name is not a variable name");
	wizard_free(&w);
}

Test(wizard_form, typing_and_backspace_go_by_whole_characters)
{
	struct wizard w;

	wizard_init(&w, &cfg, 0);
	w.row = WZ_ARCH;
	wizard_type(&w, "a");
	wizard_type(&w, "\xc3\xa9");	/* é */
	wizard_backspace(&w);
	cr_expect_str_eq(w.value[WZ_ARCH], "a");
	/* The cluster row takes no text; buttons neither. */
	w.row = WZ_CLUSTER;
	wizard_type(&w, "x");
	cr_expect_str_eq(w.value[WZ_CLUSTER], "rig");
	wizard_free(&w);
}

Test(wizard_form, a_typed_secret_stays_with_its_name_and_is_never_shown)
{
	struct wizard w;
	char **lines;
	size_t n, focus, i;
	const char *secret = "s3cr\xc3\xa9t-value";

	unsetenv("WZ_A");
	unsetenv("WZ_B");
	wizard_init(&w, &cfg, 0);
	set(&w, WZ_SECRETS, "WZ_A WZ_B");
	cr_assert_eq(w.nsec, 2);
	w.row = WZ_NFIELDS;		/* WZ_A's row */
	cr_assert_eq(wizard_row_kind(&w, w.row), WR_SECRET);
	wizard_type(&w, secret);
	set(&w, WZ_SECRETS, "WZ_B WZ_A");
	cr_expect_str_eq(w.sec[1].name, "WZ_A");
	cr_expect_str_eq(w.sec[1].value, secret);
	n = wizard_lines(&w, 80, &lines, &focus);
	for (i = 0; i < n; i++) {
		cr_expect_null(strstr(lines[i], "s3cr"), "shown: %s", lines[i]);
		if (strstr(lines[i], "WZ_A ") != NULL)
			cr_expect_not_null(strstr(lines[i], " ************"), "%s", lines[i]);
		free(lines[i]);
	}
	free(lines);
	set(&w, WZ_SECRETS, "WZ_B");
	cr_expect_eq(w.nsec, 1);
	cr_expect_eq(wizard_rows(&w), WZ_NFIELDS + 1 + 2);
	cr_expect_eq(wizard_row_kind(&w, WZ_NFIELDS + 1), WR_PREVIEW);
	cr_expect_eq(wizard_row_kind(&w, WZ_NFIELDS + 2), WR_SUBMIT);
	wizard_free(&w);
}

static char *temp_dir(void)
{
	char tmpl[] = "/tmp/taotop-wizard-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	return xstrdup(tmpl);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(wizard_form, a_bundle_fills_the_form_and_the_form_wins)
{
	struct wizard w;
	struct spec s;
	struct spec_kv *sec;
	size_t nsec;
	char *dir = temp_dir(), *path = xasprintf("%s/job.yaml", dir), *err = NULL;

	write_text(path, "image: /lustre/images/tao.sqsh\nnetwork_arch: classification_pyt\n"
	    "action: train\ncommand: [sh, -c, 'echo two words']\ndatasets: [lustre:///d/a, "
	    "lustre:///d/b]\ngpus: 2\ntime_hours: 1.5\ncpus_per_task: 3\nextra_env: {NCCL_DEBUG: WARN}\n"
	    "secrets: [WZ_TOKEN]\nspec:\n  train:\n    num_epochs: 3\n");
	wizard_init(&w, &cfg, 0);
	/* The path as typed into the bundle row, read from there. */
	set(&w, WZ_BUNDLE, path);
	cr_assert_eq(wizard_load(&w, w.value[WZ_BUNDLE], &err), 0, "%s", err);
	cr_expect_str_eq(w.value[WZ_BUNDLE], path);
	cr_expect_str_eq(w.value[WZ_DATASETS], "lustre:///d/a lustre:///d/b");
	cr_expect_str_eq(w.value[WZ_GPUS], "2");
	cr_expect_str_eq(w.value[WZ_TIME], "1.5");
	cr_expect_str_eq(w.value[WZ_ENV], "NCCL_DEBUG=WARN");
	cr_expect_str_eq(w.value[WZ_PARTITION], "polar", "left out: the form's default");
	w.row = WZ_NFIELDS;
	wizard_type(&w, "typed");
	set(&w, WZ_TIME, "2");
	cr_assert_eq(wizard_build(&w, &s, &sec, &nsec, &err), 0, "%s", err);
	/* The command not edited: the bundle's own words, one of them spaced. */
	cr_assert_eq(s.argc, 3);
	cr_expect_str_eq(s.argv[2], "echo two words");
	cr_expect(s.time_hours == 2, "the form's time wins");
	cr_expect_eq(s.cpus_per_task, 3, "what the form does not show comes from the bundle");
	cr_expect_not_null(s.tao_spec);
	cr_expect_str_eq(s.partition, "polar");
	cr_assert_eq(nsec, 1);
	cr_expect_str_eq(sec[0].key, "WZ_TOKEN");
	cr_expect_str_eq(sec[0].value, "typed");
	free(sec[0].key), free(sec[0].value), free(sec);
	spec_free(&s);
	/* Edited: split at spaces, like a bundle's command given as text. */
	set(&w, WZ_COMMAND, "tao train -e spec.yaml");
	cr_assert_eq(wizard_build(&w, &s, &sec, &nsec, &err), 0, "%s", err);
	cr_expect_eq(s.argc, 4);
	cr_expect_str_eq(s.argv[3], "spec.yaml");
	free(sec[0].key), free(sec[0].value), free(sec);
	spec_free(&s);
	wizard_free(&w);

	/* A broken bundle: its place in the file, and the form unchanged. */
	write_text(path, "image: [\n");
	wizard_init(&w, &cfg, 0);
	cr_expect_neq(wizard_load(&w, path, &err), 0);
	cr_expect_not_null(strstr(err, "job.yaml:"), "%s", err);
	free(err);
	cr_expect_str_eq(w.value[WZ_GPUS], "4");
	wizard_free(&w);
	unlink(path);
	rmdir(dir);
	free(path), free(dir);
}

Test(wizard_form, the_picker_lists_folders_then_bundles_and_walks)
{
	struct picker p = { 0 };
	char *dir = temp_dir(), *cmd, *got;

	cmd = xasprintf("mkdir %s/sub && touch %s/a.yaml %s/b.yml %s/c.txt %s/.hidden.yaml "
	    "%s/sub/in.yaml", dir, dir, dir, dir, dir, dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	picker_open(&p, dir);
	cr_assert_eq(p.n, 4);
	cr_expect_str_eq(p.names[0], "../");
	cr_expect_str_eq(p.names[1], "sub/");
	cr_expect_str_eq(p.names[2], "a.yaml");
	cr_expect_str_eq(p.names[3], "b.yml");
	p.sel = 1;
	cr_expect_null(picker_enter(&p));
	cr_expect_not_null(strstr(p.dir, "/sub"));
	cr_expect_str_eq(p.names[1], "in.yaml");
	picker_up(&p);
	cr_expect_str_eq(p.names[p.sel], "sub/", "the folder left is selected");
	p.sel = 2;
	got = picker_enter(&p);
	cr_assert_not_null(got);
	cr_expect_str_eq(strrchr(got, '/'), "/a.yaml");
	cr_expect_eq(got[0], '/');
	free(got);
	picker_open(&p, "/nonexistent/folder");
	cr_expect_not_null(p.error);
	picker_free(&p);
	cmd = xasprintf("rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd), free(dir);
}

/* What the CLI refuses before writing anything, the form refuses as typed:
 * a partition or account that is not one SLURM name, an uneven total, an
 * unknown placeholder; an empty command is TAO's own. */
Test(wizard_form, the_form_refuses_what_the_submit_would)
{
	static const char *const bad[] = { "polar,cpu_long", "polar#x", "polar x" };
	struct wizard w;

	wizard_init(&w, &cfg, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		set(&w, WZ_PARTITION, bad[i]);
		expect_problem(&w, WZ_PARTITION, "Partition: letters, digits");
		set(&w, WZ_ACCOUNT, bad[i]);
		expect_problem(&w, WZ_ACCOUNT, "Account: letters, digits");
	}
	set(&w, WZ_PARTITION, "polar");
	set(&w, WZ_NODES, "");
	set(&w, WZ_GPUS, "11");
	expect_problem(&w, WZ_GPUS, "8 or 16");
	set(&w, WZ_COMMAND, "classification_pyt train -e {spec} results_dir={results}");
	expect_problem(&w, WZ_COMMAND, "unknown placeholder {results}");
	set(&w, WZ_COMMAND, "");
	set(&w, WZ_ARCH, "classification_pyt");
	set(&w, WZ_ACTION, "train");
	expect_problem(&w, WZ_COMMAND, "");
	set(&w, WZ_ACTION, "");
	expect_problem(&w, WZ_COMMAND, "'action'");
	wizard_free(&w);
}

/* A skill bank's bundle fills the form too: its compute_shape is the
 * GPUs in all, and what the form builds keeps its format, inputs and
 * shape for the submit. */
Test(wizard_form, a_skill_bank_bundle_fills_the_form_with_its_shape)
{
	struct wizard w;
	struct spec s;
	struct spec_kv *sec;
	size_t nsec;
	char *dir = temp_dir(), *path = xasprintf("%s/bank.json", dir), *err = NULL;

	write_text(path, "{\"network_arch\": \"dino\", \"action\": \"train\", \"image\": "
	    "\"nvcr.io/nvidia/tao/tao-toolkit:6.26.3-pyt\", \"mode\": \"config\", \"command\": "
	    "\"dino train -e {config_path}\", \"config_format\": \"yaml\", \"spec\": {\"train\": "
	    "{\"num_epochs\": 1}}, \"declared_inputs\": [{\"spec_key\": \"dataset.root\", \"type\": "
	    "\"folder\", \"uri\": \"lustre:///d/coco\"}], \"declared_outputs\": [{\"spec_key\": "
	    "\"results_dir\", \"type\": \"folder\"}], \"compute_shape\": {\"gpus\": 4, \"nodes\": 2}}");
	wizard_init(&w, &cfg, 0);
	set(&w, WZ_BUNDLE, path);
	cr_assert_eq(wizard_load(&w, w.value[WZ_BUNDLE], &err), 0, "%s", err);
	cr_expect_str_eq(w.value[WZ_GPUS], "8", "4 per node on 2 nodes");
	cr_expect_str_eq(w.value[WZ_NODES], "2");
	cr_expect_str_eq(w.value[WZ_COMMAND], "dino train -e {config_path}");
	cr_assert_eq(wizard_build(&w, &s, &sec, &nsec, &err), 0, "%s", err);
	cr_expect_eq(s.format, SPEC_FORMAT_BANK);
	cr_expect_eq(s.gpus, 8);
	cr_expect_eq(s.gpus_per_node, 4);
	cr_expect_eq(s.nodes, 2);
	cr_assert_eq(s.ninputs, 1);
	cr_expect_str_eq(s.inputs[0].path, "/d/coco");
	free(sec);
	spec_free(&s);
	wizard_free(&w);
	unlink(path);
	rmdir(dir);
	free(path), free(dir);
}

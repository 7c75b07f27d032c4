/* Spec bundles: every field read, every mistake reported at its place. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/spec.h"

static int parse(const char *text, struct spec *s, char **err)
{
	return spec_parse("job.yaml", text, strlen(text), s, err);
}

Test(spec, the_shipped_example_parses_whole)
{
	struct spec s;
	char *err = NULL;
	const char *share = getenv("TAOTOP_SHARE");
	char path[4096];
	snprintf(path, sizeof(path), "%s/templates/example.spec.yaml", share ? share : ".");
	cr_assert_eq(spec_load(path, &s, &err), 0, "%s", err);
	cr_expect_str_eq(s.image, "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt");
	cr_expect_str_eq(s.network_arch, "classification_pyt");
	cr_expect_eq(s.ndatasets, 2);
	cr_expect_str_eq(s.datasets[1], "lustre:///lustre/datasets/imagenet/val");
	cr_expect_eq(s.gpus, 8);
	cr_expect_eq(s.nodes, 1);
	cr_expect_float_eq(s.time_hours, 4.0, 1e-9);
	cr_expect_eq(s.requeue, 1);
	cr_expect_eq(s.nextra_env, 1);
	cr_expect_str_eq(s.extra_env[0].key, "NCCL_DEBUG");
	cr_expect_eq(s.nsecrets, 1);
	cr_expect_str_eq(s.secrets[0], "HF_TOKEN");
	cr_expect_eq(s.nfiles, 1);
	cr_assert_not_null(s.tao_spec);
	cr_expect(strstr(s.tao_spec, "num_epochs: 80") != NULL, "%s", s.tao_spec);
	cr_expect_null(s.account, "left out: unset, for the defaults to fill");
	/* No command in the example: TAO's own, with the staged spec. */
	cr_expect(s.command_is_taos);
	cr_expect_str_eq(s.command, "classification_pyt train -e {spec} results_dir={results_dir}");
	char *yaml = NULL;
	cr_assert_eq(spec_emit_tao(&s, &yaml, &err), 0, "%s", err);
	cr_expect(strstr(yaml, "num_epochs: 80") != NULL, "%s", yaml);
	cr_expect(strstr(yaml, "backbone: resnet_50") != NULL, "%s", yaml);
	free(yaml);
	spec_free(&s);
}

Test(spec, mistakes_are_reported_with_file_line_column_and_field)
{
	struct { const char *text, *want; } cases[] = {
		{ "image: x\ncommand: [unclosed\n", "job.yaml:3:1: YAML syntax error" },
		{ "image: x\ncommand: y\ngpus: four\n", "job.yaml:3:7: field 'gpus' must be a whole number" },
		{ "image: x\ncommand: y\ntime_hours: -2\n", "job.yaml:3:13: field 'time_hours' must be a number of hours" },
		{ "image: x\ncommand: y\ncolour: blue\n", "job.yaml:3:1: unknown field 'colour'" },
		{ "image: x\ncommand: y\nimage: z\n", "job.yaml:3:1: field 'image' is given twice" },
		{ "command: y\n", "job.yaml:1:1: field 'image' is missing" },
		{ "image: x\ncommand: y\nsecrets: [hf_token]\n", "job.yaml:3:11: field 'secrets': 'hf_token' is not a variable name" },
		{ "image: x\ncommand: y\nrequeue: maybe\n", "job.yaml:3:10: field 'requeue' must be true or false" },
		{ "image: x\ncommand: y\nresume: later\n", "job.yaml:3:9: field 'resume' must be true or false" },
		{ "image: x\ncommand: y\ngpu_spec_key: train..num_gpus\n", "job.yaml:3:15: field 'gpu_spec_key' must be a key of TAO's spec" },
		{ "image: x\ncommand: y\ngpu_spec_key: 'train.gpus[0]'\n", "job.yaml:3:15: field 'gpu_spec_key'" },
		{ "image: x\ncommand: y\nsupporting_files:\n  - path: a\n    sha256: abc\n", "job.yaml:4:5: field 'supporting_files'" },
		/* A secret's name as an extra_env key, whatever its value, before
		 * or after secrets: names it. */
		{ "image: x\ncommand: y\nsecrets: [HF_TOKEN]\nextra_env:\n  HF_TOKEN: hf_abc\n",
		  "job.yaml:5:3: field 'extra_env': HF_TOKEN is listed in 'secrets'" },
		{ "image: x\ncommand: y\nextra_env:\n  A: b\n  NGC_KEY: ''\nsecrets: [NGC_KEY]\n",
		  "job.yaml:5:3: field 'extra_env': NGC_KEY is listed in 'secrets'" },
		{ "- just\n- a list\n", "job.yaml:1:1: a spec bundle is a mapping" },
		{ "", "job.yaml:1:1: a spec bundle is a mapping" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spec s;
		char *err = NULL;
		cr_expect_eq(parse(cases[i].text, &s, &err), -1, "case %zu parsed", i);
		cr_expect(err != NULL && strncmp(err, cases[i].want, strlen(cases[i].want)) == 0,
		    "case %zu: got '%s', want '%s...'", i, err, cases[i].want);
		free(err);
	}
}

Test(spec, a_single_dataset_may_be_written_without_a_list)
{
	struct spec s;
	char *err = NULL;
	cr_assert_eq(parse("image: /lustre/i.sqsh\ncommand: run\ndatasets: lustre:///d\n", &s, &err), 0, "%s", err);
	cr_expect_eq(s.ndatasets, 1);
	cr_expect_eq(s.gpus, -1);
	spec_free(&s);
}

Test(spec, a_command_is_words_not_a_shell_line)
{
	struct spec s;
	char *err = NULL;
	cr_assert_eq(parse("image: /l/i.sqsh\ncommand: [\"train\", \"--name\", \"a b $(touch /tmp/pwned)\"]\n",
	    &s, &err), 0, "%s", err);
	cr_expect_eq(s.argc, 3);
	cr_expect_str_eq(s.argv[2], "a b $(touch /tmp/pwned)", "kept as one word, as text");
	spec_free(&s);
}

Test(spec, a_flow_style_tao_spec_is_written_out_too)
{
	struct spec s;
	char *err = NULL, *yaml = NULL;
	cr_assert_eq(parse("image: /l/i.sqsh\ncommand: run\nspec: {train: {num_epochs: 3}}\n", &s, &err), 0, "%s", err);
	cr_assert_eq(spec_emit_tao(&s, &yaml, &err), 0, "%s", err);
	cr_expect(strstr(yaml, "num_epochs: 3") != NULL, "%s", yaml);
	free(yaml);
	spec_free(&s);
}

/* Found by the fuzzer: a spec: whose slice holds nothing a document makes
 * aborted inside libyaml (a NULL input on the second pass). */
Test(spec, a_tao_spec_of_blanks_is_an_empty_one_not_a_crash)
{
	struct spec s;
	char *err = NULL, *yaml = NULL;
	const char *text = "#d\nimage: r.\ncommand: cl\xcf\x9d\xcd\x93\nspec:\n \n  _:";

	if (parse(text, &s, &err) != 0) {
		free(err);
		return;		/* refused is fine too; only no crash matters */
	}
	if (spec_emit_tao(&s, &yaml, &err) == 0)
		cr_expect_not_null(yaml);
	else
		cr_expect_not_null(err);
	free(yaml);
	free(err);
	spec_free(&s);
}

/* A dotted key of TAO's spec, as the tracker's rule for where TAO writes
 * its status file needs it (train.results_dir). */
Test(spec, a_dotted_key_of_taos_spec)
{
	struct spec s;
	char *err = NULL, *v;
	const char *text = "image: a.sqsh\nnetwork_arch: classification_pyt\naction: train\n"
	    "datasets: lustre:///d\nspec:\n  results_dir: /r\n  train:\n    results_dir: /elsewhere/run1\n"
	    "    num_epochs: 80\n    optim: {lr: 0.1}\n";

	cr_assert_eq(parse(text, &s, &err), 0, "%s", err);
	v = spec_tao_value(&s, "train.results_dir", NULL);
	cr_expect_str_eq(v, "/elsewhere/run1");
	free(v);
	v = spec_tao_value(&s, "train.optim.lr", NULL);
	cr_expect_str_eq(v, "0.1");
	free(v);
	cr_expect_null(spec_tao_value(&s, "train", NULL), "a mapping is no scalar");
	cr_expect_null(spec_tao_value(&s, "evaluate.results_dir", NULL));
	cr_expect_null(spec_tao_value(&s, "train.num_epochs.x", NULL));
	spec_free(&s);
}

Test(spec, resume_and_gpu_spec_key_are_read)
{
	struct spec s;
	char *err = NULL;

	cr_assert_eq(parse("image: x\ncommand: y\nresume: true\ngpu_spec_key: train.num_gpus\n",
	    &s, &err), 0, "%s", err);
	cr_expect_eq(s.resume, 1);
	cr_expect_str_eq(s.gpu_spec_key, "train.num_gpus");
	cr_expect(!s.gpu_spec_none);
	spec_free(&s);
	cr_assert_eq(parse("image: x\ncommand: y\ngpu_spec_key: null\n", &s, &err), 0, "%s", err);
	cr_expect_eq(s.resume, -1, "unset");
	cr_expect_null(s.gpu_spec_key);
	cr_expect(s.gpu_spec_none);
	spec_free(&s);
}

Test(spec, a_runs_name_is_read_and_one_that_is_none_is_refused_naming_the_field)
{
	struct { const char *text, *want; } bad[] = {
		{ "image: x\ncommand: y\nname: 'lr 0.01'\n", "job.yaml:3:7: field 'name' has a space at "
		    "character 3: use letters, digits and - _ . + = @ , : only" },
		{ "image: x\ncommand: y\nname: a/b\n", "job.yaml:3:7: field 'name' has '/' at character 2" },
		{ "image: x\ncommand: y\nname: ''\n", "job.yaml:3:7: field 'name' is empty" },
		{ "image: x\ncommand: y\nname: \"a\\x1b[2Jb\"\n", "field 'name' has a byte that is no "
		    "letter at character 2" },
		{ "image: x\ncommand: y\nname: caf\xc3\xa9\n", "field 'name' has a byte that is no "
		    "letter at character 4" },
		{ "image: x\ncommand: y\nname: [a, b]\n", "job.yaml:3:7: field 'name' must be a text" },
		{ "image: x\ncommand: y\nname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		    "field 'name' is 41 characters long: at most 40" },
	};
	struct spec s;
	char *err = NULL;

	cr_assert_eq(parse("image: x\ncommand: y\nname: lr-0.01_bs=32@a100,run:2+\n", &s, &err), 0,
	    "%s", err);
	cr_expect_str_eq(s.name, "lr-0.01_bs=32@a100,run:2+");
	spec_free(&s);
	cr_assert_eq(parse("image: x\ncommand: y\n", &s, &err), 0, "%s", err);
	cr_expect_null(s.name, "no name: none");
	spec_free(&s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		cr_expect_eq(parse(bad[i].text, &s, &err), -1, "%s", bad[i].text);
		cr_expect(err != NULL && strstr(err, bad[i].want) != NULL, "'%s' said '%s', not '%s'",
		    bad[i].text, err ? err : "(nothing)", bad[i].want);
		free(err);
	}
}

/* The GPUs TAO is given: where the count goes for each action and for a
 * bundle's gpu_spec_key, the overrides TAO's own command gets, and every
 * refusal naming both numbers and where each came from. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/gpuspec.h"
#include "engine/submit/spec.h"
#include "util/xmalloc.h"

static struct spec bundle(const char *text)
{
	struct spec s;
	char *err = NULL;

	cr_assert_eq(spec_parse("job.yaml", text, strlen(text), &s, &err), 0, "%s", err);
	return s;
}

static const struct gpu_shape one_by_8 = { 8, 1, "the bundle", "the seed's default", 8 };
static const struct gpu_shape two_by_8 = { 8, 2, "--gpus", "--nodes", 16 };

/* gpuspec_check's message for text against g ("" when it passes). */
static char *verdict(const char *text, const struct gpu_shape *g)
{
	struct spec s = bundle(text);
	char *err = NULL;
	int rc = gpuspec_check(&s, g, s.argv, s.argc, s.command_is_taos, &err);

	cr_expect_eq(rc == 0, err == NULL, "rc %d with '%s'", rc, err);
	spec_free(&s);
	return err != NULL ? err : xstrdup("");
}

Test(gpuspec, the_keys_follow_taos_config_for_each_action)
{
	static const char *const cases[][3] = {
		{ "action: train\n", "train.num_gpus", "train.num_nodes" },
		{ "action: evaluate\n", "evaluate.num_gpus", "evaluate.num_nodes" },
		{ "action: inference\n", "inference.num_gpus", "inference.num_nodes" },
		/* The entry point reads distill's count under train. */
		{ "action: distill\n", "train.num_gpus", "train.num_nodes" },
		/* export and gen_trt_engine have a gpu_id, no count. */
		{ "action: export\n", NULL, NULL },
		{ "action: gen_trt_engine\n", NULL, NULL },
		/* The bank's field: its key, the nodes beside it. */
		{ "action: train\ngpu_spec_key: model.trainer.gpus\n", "model.trainer.gpus",
		  "model.trainer.num_nodes" },
		{ "action: train\ngpu_spec_key: gpus\n", "gpus", "num_nodes" },
		{ "action: train\ngpu_spec_key: null\n", NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = xasprintf("image: x.sqsh\nnetwork_arch: dino\n%s", cases[i][0]);
		struct spec s = bundle(text);
		char *g, *n;

		gpuspec_keys(&s, &g, &n);
		if (cases[i][1] == NULL) {
			cr_expect_null(g, "case %zu: %s", i, g);
			cr_expect_null(n, "case %zu", i);
		} else {
			cr_expect(g && strcmp(g, cases[i][1]) == 0, "case %zu: %s", i, g);
			cr_expect(n && strcmp(n, cases[i][2]) == 0, "case %zu: %s", i, n);
		}
		free(g), free(n), free(text);
		spec_free(&s);
	}
}

Test(gpuspec, taos_own_command_gets_the_count_as_overrides)
{
	struct spec s = bundle("image: x.sqsh\nnetwork_arch: dino\naction: train\n");
	char **argv = xcalloc(s.argc, sizeof(*argv));
	size_t argc = s.argc;

	for (size_t i = 0; i < argc; i++)
		argv[i] = xstrdup(s.argv[i]);
	gpuspec_overrides(&s, &two_by_8, &argv, &argc);
	cr_assert_eq(argc, 7);
	cr_expect_str_eq(argv[4], "results_dir={results_dir}");
	cr_expect_str_eq(argv[5], "train.num_gpus=8");
	cr_expect_str_eq(argv[6], "train.num_nodes=2");
	for (size_t i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	spec_free(&s);

	/* export: none (TAO runs it on one GPU). */
	s = bundle("image: x.sqsh\nnetwork_arch: dino\naction: export\n");
	argc = 0;
	argv = NULL;
	gpuspec_overrides(&s, &(struct gpu_shape){ 1, 1, "the bundle", "the bundle", 1 }, &argv,
	    &argc);
	cr_expect_eq(argc, 0);
	free(argv);
	spec_free(&s);
}

Test(gpuspec, a_spec_that_says_another_count_is_refused_naming_both)
{
	static const char *const head = "image: x.sqsh\nnetwork_arch: dino\naction: train\ngpus: 8\n";
	static const struct { const char *spec, *want; const struct gpu_shape *g; } cases[] = {
		{ "spec:\n  train:\n    num_gpus: 2\n",
		  "spec train.num_gpus is 2 but the bundle asks gpus: 8 (8 per node x 1 node)", &one_by_8 },
		{ "spec:\n  train:\n    num_nodes: 1\n",
		  "spec train.num_nodes is 1 but --nodes asks 2 nodes (8 per node x 2 nodes)", &two_by_8 },
		{ "spec:\n  train:\n    num_gpus: 4\n",
		  "spec train.num_gpus is 4 but --gpus asks 16 GPUs (8 per node x 2 nodes)", &two_by_8 },
		{ "spec:\n  train:\n    gpu_ids: [0, 1]\n",
		  "spec train.gpu_ids lists 2 GPUs but the bundle asks gpus: 8 (8 per node x 1 node)",
		  &one_by_8 },
		{ "gpu_spec_key: model.gpus\nspec:\n  model:\n    gpus: 1\n",
		  "spec model.gpus is 1 but the bundle asks gpus: 8", &one_by_8 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = xasprintf("%s%s", head, cases[i].spec), *err = verdict(text, cases[i].g);
		cr_expect(strstr(err, cases[i].want) != NULL, "case %zu: got '%s', want '%s'", i, err,
		    cases[i].want);
		free(err), free(text);
	}
}

Test(gpuspec, a_spec_that_agrees_or_says_nothing_passes)
{
	static const char *const cases[] = {
		"spec:\n  train:\n    num_gpus: 8\n    num_nodes: 1\n    gpu_ids: [0,1,2,3,4,5,6,7]\n",
		"spec:\n  train:\n    num_epochs: 80\n",
		"",
		/* Not a number (an interpolation): TAO's override wins; not judged. */
		"spec:\n  train:\n    num_gpus: ${oc.env:N}\n",
		/* Another action's count is not this job's. */
		"spec:\n  evaluate:\n    num_gpus: 1\n",
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = xasprintf("image: x.sqsh\nnetwork_arch: dino\naction: train\n%s", cases[i]);
		char *err = verdict(text, &one_by_8);
		cr_expect_str_eq(err, "", "case %zu", i);
		free(err), free(text);
	}
}

Test(gpuspec, a_command_of_the_bundles_own_is_checked_not_changed)
{
	static const struct { const char *command, *want; } cases[] = {
		{ "[dino, train, -e, '{spec}', train.num_gpus=2]",
		  "the command's word train.num_gpus=2 says 2 but the bundle asks gpus: 8" },
		{ "[dino, train, -e, '{spec}', train.num_gpus=8, train.num_nodes=2]",
		  "the command's word train.num_nodes=2 says 2 but the seed's default" },
		{ "[dino, train, -e, '{spec}', 'train.num_gpus={num_gpus}', 'train.num_nodes={num_nodes}']",
		  "" },
		{ "[dino, train, -e, '{spec}']", "" },
		{ "[sh, -c, 'echo num_gpus=1']", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = xasprintf("image: x.sqsh\nnetwork_arch: dino\naction: train\ncommand: %s\n",
		    cases[i].command), *err = verdict(text, &one_by_8);
		if (cases[i].want[0] == '\0')
			cr_expect_str_eq(err, "", "case %zu", i);
		else
			cr_expect(strstr(err, cases[i].want) != NULL, "case %zu: got '%s'", i, err);
		free(err), free(text);
	}
}

Test(gpuspec, an_action_tao_runs_on_one_gpu_is_refused_more)
{
	char *err = verdict("image: x.sqsh\nnetwork_arch: dino\naction: export\ngpus: 8\n", &one_by_8);

	cr_expect(strstr(err, "action export: TAO's entry point runs it on one GPU") != NULL &&
	    strstr(err, "the bundle asks gpus: 8 (8 per node x 1 node)") != NULL, "%s", err);
	free(err);
	/* One GPU, a command of the bundle's own, or gpu_spec_key: null: allowed. */
	err = verdict("image: x.sqsh\nnetwork_arch: dino\naction: export\ngpus: 1\n",
	    &(struct gpu_shape){ 1, 1, "the bundle", "the bundle", 1 });
	cr_expect_str_eq(err, "");
	free(err);
	err = verdict("image: x.sqsh\naction: export\ncommand: [my-export]\n", &one_by_8);
	cr_expect_str_eq(err, "");
	free(err);
	err = verdict("image: x.sqsh\nnetwork_arch: dino\naction: export\ngpu_spec_key: null\n",
	    &one_by_8);
	cr_expect_str_eq(err, "");
	free(err);
}

Test(gpuspec, spec_values_are_read_at_dotted_keys)
{
	struct spec s = bundle("image: x.sqsh\ncommand: x\nspec:\n  train:\n    num_gpus: 4\n"
	    "    gpu_ids: [0, 1, 2]\n    results_dir: /r/t\n");
	int len;
	char *v = spec_tao_value(&s, "train.num_gpus", &len);

	cr_expect(v && strcmp(v, "4") == 0 && len == -1, "%s", v);
	free(v);
	v = spec_tao_value(&s, "train.gpu_ids", &len);
	cr_expect(v == NULL && len == 3);
	v = spec_tao_value(&s, "train.results_dir", &len);
	cr_expect(v && strcmp(v, "/r/t") == 0, "%s", v);
	free(v);
	v = spec_tao_value(&s, "train.num_nodes", &len);
	cr_expect(v == NULL && len == -1);
	v = spec_tao_value(&s, "train.num_gpus.x", &len);
	cr_expect(v == NULL && len == -1);
	spec_free(&s);
}

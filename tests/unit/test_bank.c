/* The skill bank's spec bundle (spec_bundle.schema.json) read beside
 * taotop's own: the bank's own valid DINO case (its tests/
 * test_artifact_schemas.py), the same in JSON, each of the schema's
 * refusals naming the field, and the spec bound and written at submit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xmalloc.h"
#include "engine/submit/bank.h"
#include "engine/submit/spec.h"

/* The bank's DINO_BUNDLE, as a user writes it in YAML. */
static const char dino_yaml[] =
    "network_arch: dino\n"
    "action: train\n"
    "image: nvcr.io/nvidia/tao/tao-toolkit:6.26.3-pyt\n"
    "mode: config\n"
    "command: dino train -e {config_path}\n"
    "config_format: yaml\n"
    "spec:\n"
    "  dataset:\n"
    "    train_data_sources:\n"
    "      - image_dir: /lustre/fsw/portfolios/data/coco/train2017\n"
    "        json_file: /lustre/fsw/portfolios/data/coco/train.json\n"
    "    batch_size: 4\n"
    "  train:\n"
    "    num_epochs: 12\n"
    "    num_gpus: 8\n"
    "    optim:\n"
    "      lr: 0.0002\n"
    "declared_inputs:\n"
    "  - spec_key: dataset.train_data_sources[0].image_dir\n"
    "    type: folder\n"
    "    uri: lustre:///lustre/fsw/portfolios/data/coco/train2017\n"
    "  - spec_key: train.pretrained_model_path\n"
    "    type: file\n"
    "    optional: true\n"
    "    uri: ngc://nvidia/tao/pretrained_dino_nvimagenet:fan_small\n"
    "declared_outputs:\n"
    "  - spec_key: results_dir\n"
    "    type: folder\n"
    "upload_excludes: [inputs/]\n"
    "compute_shape:\n"
    "  gpus: 8\n"
    "  nodes: 1\n"
    "gpu_spec_key: train.num_gpus\n";

/* The same bundle as the bank's Python writes it: JSON. */
static const char dino_json[] =
    "{\"network_arch\": \"dino\", \"action\": \"train\",\n"
    " \"image\": \"nvcr.io/nvidia/tao/tao-toolkit:6.26.3-pyt\",\n"
    " \"mode\": \"config\", \"command\": \"dino train -e {config_path}\",\n"
    " \"config_format\": \"yaml\",\n"
    " \"spec\": {\"dataset\": {\"train_data_sources\": [{\"image_dir\": "
    "\"/lustre/fsw/portfolios/data/coco/train2017\", \"json_file\": "
    "\"/lustre/fsw/portfolios/data/coco/train.json\"}], \"batch_size\": 4},\n"
    "   \"train\": {\"num_epochs\": 12, \"num_gpus\": 8, \"optim\": {\"lr\": 0.0002}}},\n"
    " \"declared_inputs\": [\n"
    "   {\"spec_key\": \"dataset.train_data_sources[0].image_dir\", \"type\": \"folder\",\n"
    "    \"uri\": \"lustre:///lustre/fsw/portfolios/data/coco/train2017\"},\n"
    "   {\"spec_key\": \"train.pretrained_model_path\", \"type\": \"file\", \"optional\": true,\n"
    "    \"uri\": \"ngc://nvidia/tao/pretrained_dino_nvimagenet:fan_small\"}],\n"
    " \"declared_outputs\": [{\"spec_key\": \"results_dir\", \"type\": \"folder\"}],\n"
    " \"upload_excludes\": [\"inputs/\"],\n"
    " \"compute_shape\": {\"gpus\": 8, \"nodes\": 1},\n"
    " \"gpu_spec_key\": \"train.num_gpus\"}\n";

/* fmt with its one %s (if any) filled by arg (caller frees). */
static char *xasprintf_test(const char *fmt, const char *arg)
{
	size_t n = strlen(fmt) + strlen(arg) + 1;
	char *out = malloc(n);

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(out, n, fmt, arg);
#pragma GCC diagnostic pop
	return out;
}

static int parse(const char *file, const char *text, struct spec *s, char **err)
{
	return spec_parse(file, text, strlen(text), s, err);
}

/* dino_yaml with `from` replaced by `to` (caller frees). */
static char *edited(const char *from, const char *to)
{
	const char *at = strstr(dino_yaml, from);
	char *out;

	cr_assert_not_null(at, "the fixture has no '%s'", from);
	out = malloc(sizeof(dino_yaml) + strlen(to));
	snprintf(out, sizeof(dino_yaml) + strlen(to), "%.*s%s%s", (int)(at - dino_yaml), dino_yaml,
	    to, at + strlen(from));
	return out;
}

static void check_dino(const struct spec *s)
{
	cr_expect_eq(s->format, SPEC_FORMAT_BANK);
	cr_expect_str_eq(s->mode, "config");
	cr_expect_str_eq(s->config_format, "yaml");
	cr_expect_str_eq(s->network_arch, "dino");
	cr_expect_str_eq(s->action, "train");
	cr_assert_eq(s->argc, 4);
	cr_expect_str_eq(s->argv[0], "dino");
	cr_expect_str_eq(s->argv[3], "{config_path}");
	cr_expect_eq(s->command_is_taos, 0);
	cr_expect_eq(s->gpus_per_node, 8, "compute_shape.gpus is GPUs per node");
	cr_expect_eq(s->nodes, 1);
	cr_expect_str_eq(s->gpu_spec_key, "train.num_gpus");
	cr_assert_eq(s->ninputs, 2);
	cr_expect_str_eq(s->inputs[0].path, "/lustre/fsw/portfolios/data/coco/train2017");
	cr_expect(s->inputs[0].folder);
	cr_expect(!s->inputs[0].optional);
	cr_expect_null(s->inputs[1].path, "ngc:// is no path on the cluster");
	cr_expect(s->inputs[1].optional && s->inputs[1].skipped, "optional, so left out");
	cr_assert_eq(s->noutputs, 1);
	cr_expect_str_eq(s->outputs[0].spec_key, "results_dir");
	cr_expect_null(s->outputs[0].path, "unset in the spec: bound at submit");
	cr_assert_not_null(s->tao_spec);
	cr_expect(strstr(s->tao_spec, "lr: 0.0002") != NULL, "%s", s->tao_spec);
}

Test(bank, the_banks_own_dino_case_reads_into_the_one_form)
{
	struct spec s;
	char *err = NULL;

	cr_assert_eq(parse("dino.yaml", dino_yaml, &s, &err), 0, "%s", err);
	check_dino(&s);
	spec_free(&s);
}

Test(bank, the_same_bundle_in_json_reads_the_same)
{
	struct spec y, j;
	char *err = NULL, *ty = NULL, *tj = NULL;

	cr_assert_eq(parse("dino.yaml", dino_yaml, &y, &err), 0, "%s", err);
	/* A .json name, and a JSON text under another name, both read as JSON. */
	cr_assert_eq(parse("bundle.spec", dino_json, &j, &err), 0, "%s", err);
	check_dino(&j);
	cr_expect_str_eq(j.tao_spec, y.tao_spec, "the staged spec's text is the same");
	cr_expect_str_eq(j.command, y.command);
	cr_assert_eq(bank_bind(&y, "/r/job/results", 8, &err), 0, "%s", err);
	cr_assert_eq(bank_bind(&j, "/r/job/results", 8, &err), 0, "%s", err);
	cr_assert_eq(bank_config_text(&y, &ty, &err), 0, "%s", err);
	cr_assert_eq(bank_config_text(&j, &tj, &err), 0, "%s", err);
	cr_expect_str_eq(tj, ty);
	free(ty), free(tj);
	spec_free(&y);
	spec_free(&j);
	cr_assert_eq(parse("dino.json", dino_json, &j, &err), 0, "%s", err);
	spec_free(&j);
}

Test(bank, a_json_syntax_error_names_its_line_and_column)
{
	struct spec s;
	char *err = NULL;

	cr_assert_eq(parse("b.json", "{\"mode\": \"config\",\n \"x\": }\n", &s, &err), -1);
	cr_expect(strstr(err, "b.json:2:") == err && strstr(err, "JSON syntax error") != NULL,
	    "%s", err);
	free(err);
}

/* Each of the schema's refusals (as the bank's own tests have them, and
 * more), the field named by its path. */
Test(bank, the_schemas_refusals_each_name_the_field)
{
	struct { const char *from, *to, *want; } cases[] = {
		/* nested, never dotted, at every depth */
		{ "  train:\n", "  train.num_epochs: 12\n  train:\n",
		  "dino.yaml:13:3: spec: key 'train.num_epochs' is dotted" },
		{ "      lr: 0.0002\n", "      lr: 0.0002\n    optim.lr: 0.001\n",
		  "spec.train: key 'optim.lr' is dotted: the spec is nested, never dotted (the schema's "
		  "rule at every level): write it nested, optim: {lr: ...}" },
		{ "        json_file:", "        image.dir: /x\n        json_file:",
		  "spec.dataset.train_data_sources[0]: key 'image.dir' is dotted" },
		/* mode discrimination */
		{ "config_format: yaml\n", "config_format: yaml\nargs: [--foo]\n",
		  "args: is not allowed in mode config" },
		{ "config_format: yaml\n", "", "config_format: is missing" },
		{ "dino train -e {config_path}", "dino train", "command: 'dino train' has no {config_path}" },
		{ "mode: config\n", "", "mode: is missing" },
		{ "mode: config", "mode: args", "args: is missing" },
		{ "mode: config", "mode: both", "mode: must be config or args" },
		{ "config_format: yaml", "config_format: ini", "config_format: must be yaml, json or toml" },
		/* other seams */
		{ "nvcr.io/nvidia/tao/tao-toolkit:6.26.3-pyt", "tao_toolkit.pyt",
		  "image: 'tao_toolkit.pyt' is not a resolved container image" },
		{ "    uri: lustre:///lustre/fsw/portfolios/data/coco/train2017\n", "",
		  "declared_inputs[0]: field 'uri' is missing" },
		{ "  - spec_key: results_dir\n    type: folder\n", "  []\n",
		  "declared_outputs: must be a list of at least one" },
		{ "  nodes: 1", "  nodes: 0", "compute_shape.nodes: must be at least 1 (it is 0)" },
		{ "  gpus: 8", "  gpus: -1", "compute_shape.gpus: must be at least 0" },
		{ "  gpus: 8", "  gpus: '8'", "compute_shape.gpus: must be an integer, not a text" },
		{ "  nodes: 1", "  nodes: 1\n  cpus: 4", "compute_shape: unknown field 'cpus'" },
		{ "    type: folder\n    uri: lustre", "    type: dir\n    uri: lustre",
		  "declared_inputs[0].type: must be file or folder" },
		{ "    optional: true", "    optional: yes please",
		  "declared_inputs[1].optional: must be true or false" },
		{ "    type: folder\n    uri: lustre", "    type: folder\n    tier: A\n    uri: lustre",
		  "declared_inputs[0]: unknown field 'tier'" },
		{ "gpu_spec_key: train.num_gpus\n", "gpu_spec_key: train.num_gpus\ncolour: blue\n",
		  "colour: unknown field (the skill bank's spec bundle has:" },
		/* one bundle, one format */
		{ "gpu_spec_key: train.num_gpus\n", "gpu_spec_key: train.num_gpus\ndatasets: [lustre:///d]\n",
		  "datasets: is a field of taotop's own bundle, and this one is the skill bank's" },
		/* storage: the procedure's rule */
		{ "uri: lustre:///lustre/fsw/portfolios/data/coco/train2017",
		  "uri: s3://bkt/coco/train2017",
		  "declared_inputs[0].uri: 's3://bkt/coco/train2017' is not on the cluster's shared "
		  "storage: taotop never fetches inside the allocation" },
		{ "uri: lustre:///lustre/fsw/portfolios/data/coco/train2017", "uri: file:///x",
		  "declared_inputs[0].uri: 'file:///x' is no place the job can read" },
		/* pointers into the spec */
		{ "spec_key: dataset.train_data_sources[0].image_dir",
		  "spec_key: dataset.train_data_sources[3].image_dir",
		  "declared_inputs[0].spec_key: index [3] of 'dataset.train_data_sources' does not "
		  "exist: the list in the spec has 1 entry" },
		{ "spec_key: dataset.train_data_sources[0].image_dir",
		  "spec_key: dataset.val_data_sources[0].image_dir",
		  "declared_inputs[0].spec_key: 'dataset.val_data_sources' is not in the spec, so it "
		  "has no index [0]" },
		{ "spec_key: dataset.train_data_sources[0].image_dir", "spec_key: dataset.batch_size.x",
		  "declared_inputs[0].spec_key: 'dataset.batch_size' in the spec is not a mapping" },
		{ "spec_key: dataset.train_data_sources[0].image_dir", "spec_key: dataset..x",
		  "declared_inputs[0].spec_key: 'dataset..x' is not a pointer" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spec s;
		char *err = NULL, *text = edited(cases[i].from, cases[i].to);
		int rc = parse("dino.yaml", text, &s, &err);
		cr_expect_eq(rc, -1, "case %zu was accepted: %s", i, text);
		if (rc == 0)
			spec_free(&s);
		else
			cr_expect(strstr(err, cases[i].want) != NULL, "case %zu: want '%s' in '%s'", i,
			    cases[i].want, err);
		free(err);
		free(text);
	}
}

Test(bank, a_json_bundles_refusal_names_the_field_by_its_path)
{
	struct spec s;
	char *err = NULL;
	const char *text = strstr(dino_json, "\"spec_key\": \"train.pretrained_model_path\"");
	char *bad = malloc(sizeof(dino_json));

	cr_assert_not_null(text);
	snprintf(bad, sizeof(dino_json), "%.*s\"spec_key\": 7%s", (int)(text - dino_json), dino_json,
	    text + strlen("\"spec_key\": \"train.pretrained_model_path\""));
	cr_assert_eq(parse("dino.json", bad, &s, &err), -1);
	cr_expect_str_eq(err, "dino.json: declared_inputs[1].spec_key: must be a non-empty text, "
	    "not an integer");
	free(err), free(bad);
}

Test(bank, mode_args_runs_the_command_and_its_args_as_words)
{
	/* The bank's ARGS_BUNDLE, its s3:// input optional here (the bank's
	 * own is refused: it is not on shared storage). */
	const char *text =
	    "network_arch: data_services\naction: gap_analysis\n"
	    "image: nvcr.io/nvidia/tao/tao-toolkit:6.26.3-data-services\n"
	    "mode: args\ncommand: gap_analysis vcn_aoi\n"
	    "args: [--results-parquet, /data/results.parquet, --top-k, '200']\n"
	    "declared_inputs:\n  - {spec_key: results_parquet, type: file, optional: true, "
	    "uri: 's3://bkt/exp/results.parquet'}\n"
	    "declared_outputs: [{spec_key: results_dir, type: folder}]\n"
	    "compute_shape: {gpus: 0, nodes: 1}\n";
	struct spec s;
	char *err = NULL;

	cr_assert_eq(parse("args.yaml", text, &s, &err), 0, "%s", err);
	cr_expect_str_eq(s.mode, "args");
	cr_expect_null(s.tao_spec);
	cr_expect_str_eq(s.command, "gap_analysis vcn_aoi --results-parquet /data/results.parquet "
	    "--top-k 200");
	cr_expect_eq(s.argc, 6);
	cr_expect_eq(s.gpus, 0, "0 GPUs per node: taotop's gpus: 0");
	cr_expect_eq(s.gpus_per_node, -1);
	spec_free(&s);
	cr_assert_eq(parse("args.yaml", "network_arch: d\naction: a\nimage: r/i:t\nmode: args\n"
	    "command: x\nargs: []\nspec: {a: 1}\ndeclared_inputs: []\n"
	    "declared_outputs: [{spec_key: r, type: folder}]\ncompute_shape: {gpus: 1, nodes: 1}\n",
	    &s, &err), -1);
	cr_expect(strstr(err, "spec: is not allowed in mode args") != NULL, "%s", err);
	free(err);
}

Test(bank, taotops_own_format_is_still_its_own)
{
	struct spec s;
	char *err = NULL;

	cr_assert_eq(parse("job.yaml", "image: x\ncommand: y\ngpus: 2\n", &s, &err), 0, "%s", err);
	cr_expect_eq(s.format, SPEC_FORMAT_TAOTOP);
	cr_expect_null(s.mode);
	cr_expect_str_eq(bank_config_name(&s), "spec.yaml");
	spec_free(&s);
}

Test(bank, the_inputs_outputs_and_gpus_are_bound_into_the_spec)
{
	struct spec s;
	char *err = NULL, *v;

	cr_assert_eq(parse("dino.yaml", dino_yaml, &s, &err), 0, "%s", err);
	cr_assert_eq(bank_bind(&s, "/r/tao-1/results", 8, &err), 0, "%s", err);
	v = spec_tao_value(&s, "results_dir", NULL);
	cr_expect_str_eq(v, "/r/tao-1/results", "an output named results_dir: the results folder");
	free(v);
	cr_expect_str_eq(s.outputs[0].path, "/r/tao-1/results");
	v = spec_tao_value(&s, "train.num_gpus", NULL);
	cr_expect_str_eq(v, "8");
	free(v);
	v = spec_tao_value(&s, "train.pretrained_model_path", NULL);
	cr_expect_null(v, "the optional ngc:// input is left out: %s", v);
	free(v);
	cr_expect(strstr(s.tao_spec, "image_dir: /lustre/fsw/portfolios/data/coco/train2017") != NULL,
	    "%s", s.tao_spec);
	spec_free(&s);

	/* The count goes where gpu_spec_key points when the spec has none;
	 * an output at a key the spec does not have: its maps are made, a
	 * file named after the key under the results folder. */
	char *text = edited("    num_gpus: 8\n", "");
	char *t2 = malloc(strlen(text) + 64);
	sprintf(t2, "%s", text);
	free(text);
	text = edited("  - spec_key: results_dir\n", "  - spec_key: export.onnx.file\n    type: file\n"
	    "  - spec_key: results_dir\n");
	cr_assert_eq(parse("dino.yaml", text, &s, &err), 0, "%s", err);
	cr_assert_eq(bank_bind(&s, "/r/tao-2/results", 4, &err), 0, "%s", err);
	v = spec_tao_value(&s, "export.onnx.file", NULL);
	cr_expect_str_eq(v, "/r/tao-2/results/file");
	free(v);
	spec_free(&s);
	free(text);
	/* One the spec sets as lustre:///: the path, for TAO to open. */
	text = edited("    batch_size: 4\n", "    batch_size: 4\n    out: lustre:///lustre/out/x.json\n");
	char *t3 = malloc(strlen(text) + 64);
	sprintf(t3, "%s", text);
	free(text);
	text = t3;
	t3 = strstr(text, "  - spec_key: results_dir\n");
	cr_assert_not_null(t3);
	memcpy(t3, "  - spec_key: dataset.out\n", 26);	/* same length: "results_dir\n" + 1 */
	cr_assert_eq(parse("dino.yaml", text, &s, &err), 0, "%s\n%s", err, text);
	cr_assert_eq(bank_bind(&s, "/r/tao-3/results", 4, &err), 0, "%s", err);
	cr_expect_str_eq(s.outputs[0].path, "/lustre/out/x.json");
	v = spec_tao_value(&s, "dataset.out", NULL);
	cr_expect_str_eq(v, "/lustre/out/x.json");
	free(v);
	spec_free(&s);
	cr_assert_eq(parse("dino.yaml", t2, &s, &err), 0, "%s", err);
	cr_assert_eq(bank_bind(&s, "/r/tao-2/results", 4, &err), 0, "%s", err);
	v = spec_tao_value(&s, "train.num_gpus", NULL);
	cr_expect_str_eq(v, "4");
	free(v);
	spec_free(&s);
	free(text), free(t2);
}

/* mode config's spec written in its config_format: json by cJSON, toml by
 * taotop's small emitter (tables, lists of tables, scalars). */
Test(bank, the_spec_is_written_in_its_config_format)
{
	struct spec s;
	char *err = NULL, *text = NULL, *b;

	b = edited("config_format: yaml", "config_format: json");
	cr_assert_eq(parse("dino.yaml", b, &s, &err), 0, "%s", err);
	cr_expect_str_eq(bank_config_name(&s), "spec.json");
	cr_assert_eq(bank_config_text(&s, &text, &err), 0, "%s", err);
	cr_expect_str_eq(text,
	    "{\n\t\"dataset\":\t{\n\t\t\"train_data_sources\":\t[{\n"
	    "\t\t\t\t\"image_dir\":\t\"/lustre/fsw/portfolios/data/coco/train2017\",\n"
	    "\t\t\t\t\"json_file\":\t\"/lustre/fsw/portfolios/data/coco/train.json\"\n"
	    "\t\t\t}],\n\t\t\"batch_size\":\t4\n\t},\n"
	    "\t\"train\":\t{\n\t\t\"num_epochs\":\t12,\n\t\t\"num_gpus\":\t8,\n"
	    "\t\t\"optim\":\t{\n\t\t\t\"lr\":\t0.0002\n\t\t}\n\t}\n}\n");
	free(text), free(b);
	spec_free(&s);

	b = edited("config_format: yaml", "config_format: toml");
	cr_assert_eq(parse("dino.yaml", b, &s, &err), 0, "%s", err);
	cr_expect_str_eq(bank_config_name(&s), "spec.toml");
	cr_assert_eq(bank_config_text(&s, &text, &err), 0, "%s", err);
	cr_expect_str_eq(text,
	    "[dataset]\nbatch_size = 4\n\n"
	    "[[dataset.train_data_sources]]\n"
	    "image_dir = \"/lustre/fsw/portfolios/data/coco/train2017\"\n"
	    "json_file = \"/lustre/fsw/portfolios/data/coco/train.json\"\n\n"
	    "[train]\nnum_epochs = 12\nnum_gpus = 8\n\n[train.optim]\nlr = 0.0002\n");
	free(text), free(b);
	spec_free(&s);

	/* TOML has no null: refused, naming the key. */
	b = edited("    batch_size: 4\n", "    batch_size: 4\n    sampler: null\n    tags: [a, \"b c\", 1.5, true]\n");
	char *b2 = malloc(strlen(b) + 8);
	sprintf(b2, "%s", b);
	free(b);
	b = b2;
	{
		char *at = strstr(b, "config_format: yaml");
		memcpy(at + 15, "toml", 4);
	}
	cr_assert_eq(parse("dino.yaml", b, &s, &err), 0, "%s", err);
	cr_assert_eq(bank_config_text(&s, &text, &err), -1);
	cr_expect_str_eq(err, "spec.dataset.sampler: TOML has no null: give it a value, leave the "
	    "key out, or write the spec in yaml or json");
	free(err), free(b);
	spec_free(&s);
}

/* The execution contract's shape, as the schema says it (what it does is
 * the common field handling's): each refusal names the field. */
Test(bank, the_execution_contracts_shape_is_the_schemas)
{
	static const char sha[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct { const char *execution, *want; } cases[] = {
		{ "  supporting_files:\n    - {source: /etc/helper.py, destination: helper.py, sha256: %s}\n",
		  "execution.supporting_files[0].source: '/etc/helper.py' is an absolute path" },
		{ "  supporting_files:\n    - {source: ../outside.py, destination: helper.py, sha256: %s}\n",
		  "execution.supporting_files[0].source: '../outside.py' climbs out with '..'" },
		{ "  supporting_files:\n    - {source: a/b.py, destination: x/../../b.py, sha256: %s}\n",
		  "execution.supporting_files[0].destination: 'x/../../b.py' climbs out with '..'" },
		{ "  supporting_files:\n    - {source: a/b.py, destination: /b.py, sha256: %s}\n",
		  "execution.supporting_files[0].destination: '/b.py' is an absolute path" },
		{ "  supporting_files:\n    - {source: scripts/helper.py, destination: helper.py}\n",
		  "execution.supporting_files[0]: field 'sha256' is missing" },
		{ "  supporting_files:\n    - {source: a.py, destination: a.py, sha256: ABC}\n",
		  "execution.supporting_files[0].sha256: 'ABC' is not a sha256" },
		{ "  supporting_files:\n    - {source: a.py, destination: a.py, sha256: %s, mode: 0755}\n",
		  "execution.supporting_files[0]: unknown field 'mode'" },
		{ "  environment: {bad-name: value}\n",
		  "execution.environment: 'bad-name' is not a variable name" },
		{ "  post_scope: rank0\n", "execution.post_scope: must be all or leader" },
		{ "  distributed: {launcher: torchrun, processes_per_node: 8, tasks_per_node: 2}\n",
		  "execution.distributed.tasks_per_node: must be 1" },
		{ "  distributed: {launcher: mpirun, processes_per_node: 8}\n",
		  "execution.distributed.launcher: must be direct or torchrun" },
		{ "  completion: {child_exit_code_path: x, success_states: []}\n",
		  "execution.completion.success_states: must list at least one state" },
		{ "  completion: {child_exit_code_path: x, success_states: [SUCCESS, SUCCESS]}\n",
		  "execution.completion.success_states: 'SUCCESS' is listed twice" },
		{ "  completion: {structured_status_path: x}\n",
		  "execution.completion: field 'child_exit_code_path' is missing" },
		{ "  pre_commands: ['']\n", "execution.pre_commands[0]: must be a non-empty text" },
		{ "  retries: 3\n", "execution: unknown field 'retries'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spec s;
		char *err = NULL, *block = xasprintf_test(cases[i].execution, sha);
		char *with = malloc(strlen(block) + 16);
		sprintf(with, "execution:\n%s", block);
		char *text = edited("gpu_spec_key: train.num_gpus\n", with);
		int rc = parse("dino.yaml", text, &s, &err);
		cr_expect_eq(rc, -1, "case %zu was accepted", i);
		if (rc == 0)
			spec_free(&s);
		else
			cr_expect(strstr(err, cases[i].want) != NULL, "case %zu: want '%s' in '%s'", i,
			    cases[i].want, err);
		free(err), free(text), free(with), free(block);
	}
}

Test(bank, a_json_text_that_is_not_utf8_is_refused)
{
	struct spec s;
	char *err = NULL;
	static const char text[] = "{\"mode\": \"config\", \"action\": \"tr\xff\xfein\"}";

	cr_assert_eq(parse("b.json", text, &s, &err), -1);
	cr_expect_str_eq(err, "b.json: a text in it is not UTF-8");
	free(err);
}

/* Bound twice (a submit that opens its record again after the checks
 * left an optional input out): the second starts from the spec as read. */
Test(bank, binding_again_starts_from_the_spec_as_read)
{
	struct spec s;
	char *err = NULL, *v;

	cr_assert_eq(parse("dino.yaml", dino_yaml, &s, &err), 0, "%s", err);
	free(s.inputs[0].path);
	s.inputs[0].path = strdup("/elsewhere/images");
	cr_assert_eq(bank_bind(&s, "/r/a/results", 8, &err), 0, "%s", err);
	cr_expect(strstr(s.tao_spec, "image_dir: /elsewhere/images") != NULL, "%s", s.tao_spec);
	s.inputs[0].skipped = 1;
	cr_assert_eq(bank_bind(&s, "/r/b/results", 8, &err), 0, "%s", err);
	v = spec_tao_value(&s, "results_dir", NULL);
	cr_expect_str_eq(v, "/r/b/results");
	free(v);
	cr_expect(strstr(s.tao_spec, "image_dir: /lustre/fsw/portfolios/data/coco/train2017") != NULL,
	    "the spec's own value again:\n%s", s.tao_spec);
	spec_free(&s);
}

/* The bank's placeholder in a spec string its platform fills (NVIDIA's
 * Cosmos-reason producer writes spec results_dir: "{results_dir}" and
 * declares results_dir an output): the job's results folder, and a path
 * under it; OmegaConf's ${results_dir}/x stays TAO's. */
Test(bank, an_outputs_results_dir_placeholder_is_the_jobs_folder)
{
	struct spec s;
	char *err = NULL, *v, *text;

	text = edited("    batch_size: 4\n", "    batch_size: 4\n  results_dir: '{results_dir}'\n"
	    "  eval_dir: '{results_dir}/eval'\n  other: '${results_dir}/x'\n");
	/* eval_dir and other declared too. */
	{
		const char *from = "  - spec_key: results_dir\n    type: folder\n";
		char *at = strstr(text, from), *t3;
		cr_assert_not_null(at);
		t3 = xasprintf("%.*s%s  - spec_key: eval_dir\n    type: folder\n  - spec_key: other\n"
		    "    type: folder\n%s", (int)(at - text), text, from, at + strlen(from));
		free(text);
		text = t3;
	}
	cr_assert_eq(parse("dino.yaml", text, &s, &err), 0, "%s\n%s", err, text);
	cr_assert_eq(bank_bind(&s, "/r/tao-4/results", 8, &err), 0, "%s", err);
	v = spec_tao_value(&s, "results_dir", NULL);
	cr_expect_str_eq(v, "/r/tao-4/results");
	free(v);
	v = spec_tao_value(&s, "eval_dir", NULL);
	cr_expect_str_eq(v, "/r/tao-4/results/eval");
	free(v);
	v = spec_tao_value(&s, "other", NULL);
	cr_expect_str_eq(v, "${results_dir}/x", "OmegaConf's own is TAO's");
	free(v);
	spec_free(&s);
	free(text);
}

/* sbatch templates: every placeholder filled, or nothing rendered. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/template.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char *slurp(const char *path)
{
	char *err = NULL, *text = file_read_all(path, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	return text;
}

Test(template, fills_every_placeholder)
{
	const struct tmpl_value v[] = { { "NAME", "world" }, { "N_2", "42" } };
	char *out = NULL, *err = NULL;
	cr_assert_eq(template_render("t", "hello @@NAME@@, @@N_2@@ and @@NAME@@ again; a@@b\n", v,
	    2, &out, &err), -1, "a stray @@ is malformed");
	cr_expect(strstr(err, "t:1: malformed placeholder") != NULL, "%s", err);
	free(err), err = NULL;
	cr_assert_eq(template_render("t", "hello @@NAME@@, @@N_2@@ and @@NAME@@ again; a@b\n", v, 2,
	    &out, &err), 0, "%s", err);
	cr_expect_str_eq(out, "hello world, 42 and world again; a@b\n");
	free(out);
}

Test(template, an_unfilled_placeholder_is_an_error_naming_it_and_its_line)
{
	const struct tmpl_value v[] = { { "JOB_NAME", "tao-1" }, { "ENV_FILE", NULL } };
	char *out = NULL, *err = NULL;
	cr_expect_eq(template_render("job.sbatch", "#!/bin/bash\n#SBATCH -J @@JOB_NAME@@\n"
	    "ENV=@@ENV_FILE@@\n", v, 2, &out, &err), -1);
	cr_expect_str_eq(err, "job.sbatch:3: placeholder @@ENV_FILE@@ has no value: nothing was submitted");
	cr_expect_null(out);
	free(err);
}

Test(template, the_shipped_single_node_template_uses_the_seeds_placeholders)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *path = NULL;
	path = xasprintf("%s/templates/singlenode.sbatch.tmpl", share ? share : ".");
	char *text = slurp(path);
	char *names = template_placeholders(text);
	const char *seed[] = { "JOB_NAME", "NUM_GPUS", "CPUS_PER_TASK", "TIME", "LOG_DIR", "IMAGE",
	    "CONTAINER_MOUNTS", "COMMAND", "SBATCH_EXTRA", "ENV_FILE", "EXTRA_ENV" };
	for (size_t i = 0; i < sizeof(seed) / sizeof(seed[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "\n%s\n", seed[i]);
		char *wrapped = NULL;
		wrapped = xasprintf("\n%s\n", names);
		cr_expect(strstr(wrapped, want) != NULL, "the template lacks @@%s@@", seed[i]);
		free(wrapped);
	}
	free(names), free(text), free(path);
}

Test(template, the_multi_node_template_is_a_strict_superset_of_the_single_node_one)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *single_path = NULL, *multi_path = NULL;
	single_path = xasprintf("%s/templates/singlenode.sbatch.tmpl", share ? share : ".");
	multi_path = xasprintf("%s/templates/multinode.sbatch.tmpl", share ? share : ".");
	char *single = slurp(single_path), *multi = slurp(multi_path);
	char *copy = strdup(single), *save = NULL;
	size_t nsingle = 0, nmulti = 0;

	/* Every line of the single-node template, in the same order: each
	 * found as a whole line after the one before it. */
	char *framed = NULL;
	framed = xasprintf("\n%s", multi);
	const char *from = framed;
	for (char *line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *want = NULL;
		want = xasprintf("\n%s\n", line);
		const char *at = strstr(from, want);
		cr_expect_not_null(at, "the multi-node template lacks (in order): %s", line);
		if (at != NULL)
			from = at + 1 + strlen(line);	/* at the line's own newline */
		free(want);
		nsingle++;
	}
	free(framed);
	for (const char *p = multi; *p; p++)
		nmulti += *p == '\n';
	cr_expect_gt(nmulti, nsingle, "strictly more");
	/* And what it adds. */
	const char *adds[] = { "#SBATCH --nodes=@@NUM_NODES@@", "#SBATCH --wait-all-nodes=1",
	    "export WORLD_SIZE=@@NUM_NODES@@", "export NUM_GPU_PER_NODE=@@NUM_GPUS@@",
	    "export MASTER_PORT=29500", "NODE_RANK=$SLURM_PROCID", "TAO_NODE_RANK=$SLURM_PROCID",
	    "export TAO_NODE_COUNT=\"$WORLD_SIZE\"", "export TAO_GPUS_PER_NODE=\"$NUM_GPU_PER_NODE\"",
	    "scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1" };
	for (size_t i = 0; i < sizeof(adds) / sizeof(adds[0]); i++)
		cr_expect_not_null(strstr(multi, adds[i]), "missing: %s", adds[i]);
	free(copy), free(single), free(multi), free(single_path), free(multi_path);
}

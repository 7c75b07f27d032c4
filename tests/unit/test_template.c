/* sbatch templates: every placeholder filled, or nothing rendered. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/template.h"
#include "util/file.h"

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
	cr_assert(asprintf(&path, "%s/templates/singlenode.sbatch.tmpl", share ? share : ".") > 0);
	char *text = slurp(path);
	char *names = template_placeholders(text);
	const char *seed[] = { "JOB_NAME", "NUM_GPUS", "CPUS_PER_TASK", "TIME", "LOG_DIR", "IMAGE",
	    "CONTAINER_MOUNTS", "COMMAND", "SBATCH_EXTRA", "ENV_FILE", "EXTRA_ENV" };
	for (size_t i = 0; i < sizeof(seed) / sizeof(seed[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "\n%s\n", seed[i]);
		char *wrapped = NULL;
		cr_assert(asprintf(&wrapped, "\n%s\n", names) > 0);
		cr_expect(strstr(wrapped, want) != NULL, "the template lacks @@%s@@", seed[i]);
		free(wrapped);
	}
	free(names), free(text), free(path);
}

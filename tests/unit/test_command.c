#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/submit/command.h"
#include "engine/submit/spec.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/xmalloc.h"

static const struct command_vars vars = {
	"/lustre/jobs/tao-1/specs/spec.yaml", "/lustre/jobs/tao-1/results", "/lustre/jobs/tao-1",
	"tao-1", "8", "2",
};

static char *expand(const char *word, const struct command_vars *v)
{
	char *err = NULL, *out = command_expand_word(word, v, &err);
	cr_assert_not_null(out, "%s: %s", word, err);
	return out;
}

static void expect_expands(const char *const cases[][2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *s = expand(cases[i][0], &vars);
		cr_expect_str_eq(s, cases[i][1], "%s", cases[i][0]);
		free(s);
	}
}

Test(command, fills_each_placeholder_inside_its_word)
{
	static const char *const cases[][2] = {
		{ "-e", "-e" },
		{ "{spec}", "/lustre/jobs/tao-1/specs/spec.yaml" },
		{ "results_dir={results_dir}", "results_dir=/lustre/jobs/tao-1/results" },
		{ "{job_dir}/x-{job_id}.log", "/lustre/jobs/tao-1/x-tao-1.log" },
		{ "train.num_gpus={num_gpus}", "train.num_gpus=8" },
		{ "train.num_nodes={num_nodes}", "train.num_nodes=2" },
	};
	expect_expands(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Hydra's own braces are left alone; doubled ones are literal; a name
 * that is not a placeholder's shape is text. */
Test(command, braces_that_are_not_names_stay_and_doubled_ones_escape)
{
	static const char *const cases[][2] = {
		{ "model.x={a: 1}", "model.x={a: 1}" }, { "{{spec}}", "{spec}" }, { "{}", "{}" },
		{ "{Spec}", "{Spec}" },
	};
	expect_expands(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(command, an_unknown_placeholder_is_named)
{
	char *err = NULL;
	cr_expect_null(command_expand_word("results_dir={results}", &vars, &err));
	cr_assert_not_null(err);
	cr_expect(strstr(err, "{results}") != NULL && strstr(err, "{results_dir}") != NULL, "%s", err);
	free(err), err = NULL;
	cr_expect_eq(command_check_word("{specs}", &err), -1);
	free(err), err = NULL;
	cr_expect_eq(command_check_word("{spec}", &err), 0);
}

/* A value with a space, a quote or $(...) stays one inert word once quoted:
 * the shell reads back exactly the bytes. */
Test(command, a_hostile_value_stays_one_inert_word)
{
	const char *values[] = { "/lustre/my results", "/lustre/it's", "/lustre/$(touch /tmp/pwned)",
	    "/lustre/`id`;rm -rf ~" };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		struct command_vars v = vars;
		v.results_dir = values[i];
		char *w = expand("results_dir={results_dir}", &v), *q = sh_quote(w);
		char *cmd, line[512] = "";
		FILE *f;
		cmd = NULL;
		cmd = xasprintf("printf '%%s|' %s", q);
		f = popen(cmd, "r");
		cr_assert_not_null(f);
		cr_assert_not_null(fgets(line, sizeof(line), f));
		pclose(f);
		char *want = NULL;
		want = xasprintf("results_dir=%s|", values[i]);
		cr_expect_str_eq(line, want, "one word, exactly its bytes");
		free(want), free(cmd), free(q), free(w);
	}
	cr_expect(access("/tmp/pwned", F_OK) != 0, "nothing ran");
}

Test(command, taos_own_when_the_bundle_gives_none)
{
	char **argv = NULL, *err = NULL;
	size_t argc = 0;
	cr_assert_eq(command_default("classification_pyt", "train", &argv, &argc, &err), 0);
	cr_assert_eq(argc, 5);
	const char *want[] = { "classification_pyt", "train", "-e", "{spec}", "results_dir={results_dir}" };
	for (size_t i = 0; i < argc; i++) {
		cr_expect_str_eq(argv[i], want[i]);
		free(argv[i]);
	}
	free(argv);
	cr_expect_eq(command_default("classification_pyt", NULL, &argv, &argc, &err), -1);
	cr_expect(strstr(err, "'action'") != NULL, "%s", err);
	free(err);
}

Test(command, a_bundle_without_command_parses_to_taos_own)
{
	const char *text = "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "network_arch: classification_pyt\naction: train\n";
	struct spec s;
	char *err = NULL;
	cr_assert_eq(spec_parse("b.yaml", text, strlen(text), &s, &err), 0, "%s", err);
	cr_expect_str_eq(s.command, "classification_pyt train -e {spec} results_dir={results_dir}");
	spec_free(&s);
	const char *noarch = "image: x/y:1\naction: train\n";
	cr_expect_eq(spec_parse("b.yaml", noarch, strlen(noarch), &s, &err), -1);
	cr_expect(strstr(err, "b.yaml:") == err && strstr(err, "network_arch") != NULL, "%s", err);
	free(err), err = NULL;
	const char *bad = "image: x/y:1\ncommand: [tao, -e, '{spec_path}']\n";
	cr_expect_eq(spec_parse("b.yaml", bad, strlen(bad), &s, &err), -1);
	cr_expect(strstr(err, "{spec_path}") != NULL, "%s", err);
	free(err);
}

/* Shell text (a pre- or post-command): our placeholders filled as the
 * skill bank's platform fills them, the shell's braces left as written,
 * and a value the shell would read refused, not quoted into the author's
 * text. */
Test(command, shell_text_gets_our_placeholders_and_keeps_the_shells_braces)
{
	const struct command_vars v = { "/j/specs/spec.toml", "/j/results", "/j", "tao-1", "4", "1" };
	const struct command_vars odd = { "/j/specs/spec.toml", "/j/my results", "/j", "tao-1", "4",
		"1" };
	char *err = NULL, *s;

	s = command_expand_shell("check --config {config_path} --out \"${out_dir}/{job_id}\" "
	    "{a,b} {{x}}", &v, &err);
	cr_assert_not_null(s, "%s", err);
	cr_expect_str_eq(s, "check --config /j/specs/spec.toml --out \"${out_dir}/tao-1\" {a,b} {{x}}");
	free(s);
	cr_expect_null(command_expand_shell("ls {results_dir}", &odd, &err));
	cr_expect(err != NULL && strstr(err, "'/j/my results', which the shell would read") != NULL,
	    "%s", err ? err : "");
	free(err);
}

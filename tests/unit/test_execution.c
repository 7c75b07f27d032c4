/* A bundle's execution block: every key read, every refusal naming its
 * field; supporting files' names that would collide; the checksum a
 * supporting file is checked with; a bundle's structured status read as
 * the skill bank's platform reads it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/command.h"
#include "engine/submit/execution.h"
#include "engine/submit/spec.h"
#include "engine/track/structured.h"
#include "util/sha256.h"

#define HEAD "image: x\ncommand: y\n"
#define SUM_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static int parse(const char *text, struct spec *s, char **err)
{
	return spec_parse("job.yaml", text, strlen(text), s, err);
}

Test(execution, every_key_is_read)
{
	struct spec s;
	char *err = NULL;
	const char *text = HEAD
	    "execution:\n"
	    "  environment: {RUN_ID: '{job_id}', OUT: '{results_dir}/x', CFG: '{config_path}'}\n"
	    "  pre_commands: ['echo one', 'test -x \"$(command -v python3)\"']\n"
	    "  post_commands: [python3 check.py]\n"
	    "  post_scope: all\n"
	    "  distributed: {launcher: torchrun, processes_per_node: 4, tasks_per_node: 1}\n"
	    "  supporting_files:\n"
	    "    - {source: scripts/check.py, destination: helpers/check.py, sha256: " SUM_A "}\n"
	    "  completion:\n"
	    "    child_exit_code_path: '{results_dir}/child_exit_code'\n"
	    "    structured_status_path: status.json\n"
	    "    success_states: [SUCCESS]\n";

	cr_assert_eq(parse(text, &s, &err), 0, "%s", err);
	cr_expect(s.exec.given);
	cr_assert_eq(s.exec.nenv, 3);
	cr_expect_str_eq(s.exec.env[0].key, "RUN_ID");
	cr_expect_str_eq(s.exec.env[2].value, "{config_path}");
	cr_assert_eq(s.exec.npre, 2);
	cr_expect_str_eq(s.exec.pre[1], "test -x \"$(command -v python3)\"");
	cr_assert_eq(s.exec.npost, 1);
	cr_expect(s.exec.post_all);
	cr_expect_eq(s.exec.launcher, EXEC_TORCHRUN);
	cr_expect_eq(s.exec.procs_per_node, 4);
	cr_assert_eq(s.exec.nfiles, 1);
	cr_expect_str_eq(s.exec.files[0].destination, "helpers/check.py");
	cr_expect_str_eq(s.exec.exit_code_path, "{results_dir}/child_exit_code");
	cr_expect_str_eq(s.exec.status_path, "status.json");
	cr_assert_eq(s.exec.nsuccess, 1);
	spec_free(&s);

	/* Left out: leader scope, the direct launcher, no completion. */
	cr_assert_eq(parse(HEAD "execution: {pre_commands: [true]}\n", &s, &err), 0, "%s", err);
	cr_expect(!s.exec.post_all);
	cr_expect_eq(s.exec.launcher, EXEC_DIRECT);
	cr_expect_null(s.exec.exit_code_path);
	spec_free(&s);
	cr_assert_eq(parse(HEAD, &s, &err), 0, "%s", err);
	cr_expect(!s.exec.given);
	spec_free(&s);
}

Test(execution, refusals_name_the_field)
{
	struct { const char *text, *want; } cases[] = {
		{ "execution: [a]\n", "job.yaml:3:12: field 'execution' must be a mapping" },
		{ "execution: {colour: blue}\n", "unknown key 'colour'" },
		{ "execution: {environment: {hf_token: x}}\n",
		  "field 'execution.environment': 'hf_token' is not a variable name" },
		{ "execution: {environment: {9LIVES: x}}\n", "'9LIVES' is not a variable name" },
		{ "execution: {environment: {A: '{nope}'}}\n",
		  "field 'execution.environment': command: unknown placeholder {nope}" },
		{ "execution: {pre_commands: ['']}\n",
		  "field 'execution.pre_commands': every entry must be a non-empty text" },
		{ "execution: {post_commands: echo}\n",
		  "field 'execution.post_commands' must be a list of texts" },
		{ "execution: {post_scope: first}\n", "field 'execution.post_scope' must be leader" },
		{ "execution: {distributed: {launcher: mpirun, processes_per_node: 2}}\n",
		  "field 'execution.distributed.launcher' must be direct or torchrun" },
		{ "execution: {distributed: {launcher: torchrun}}\n",
		  "field 'execution.distributed' needs launcher and processes_per_node" },
		{ "execution: {distributed: {launcher: torchrun, processes_per_node: 0}}\n",
		  "field 'execution.distributed.processes_per_node' must be a whole number" },
		{ "execution: {distributed: {launcher: torchrun, processes_per_node: 2, tasks_per_node: 2}}\n",
		  "field 'execution.distributed.tasks_per_node' must be 1" },
		{ "execution: {supporting_files: [{source: /etc/passwd, destination: a, sha256: " SUM_A "}]}\n",
		  "field 'execution.supporting_files.source': '/etc/passwd' must be a relative path" },
		{ "execution: {supporting_files: [{source: a/../../b, destination: a, sha256: " SUM_A "}]}\n",
		  "field 'execution.supporting_files.source': 'a/../../b' must be a relative path" },
		{ "execution: {supporting_files: [{source: a, destination: ../a, sha256: " SUM_A "}]}\n",
		  "field 'execution.supporting_files.destination': '../a' must be a relative path" },
		{ "execution: {supporting_files: [{source: a, destination: x/..//b, sha256: " SUM_A "}]}\n",
		  "field 'execution.supporting_files.destination': 'x/..//b'" },
		{ "execution: {supporting_files: [{source: a, destination: /b, sha256: " SUM_A "}]}\n",
		  "field 'execution.supporting_files.destination': '/b' must be a relative path" },
		{ "execution: {supporting_files: [{source: 'a b', destination: b, sha256: " SUM_A "}]}\n",
		  "'a b' must be a relative path without '..' or spaces" },
		{ "execution: {supporting_files: [{source: a, destination: b, sha256: ABC}]}\n",
		  "field 'execution.supporting_files.sha256' must be 64 lower-case hex digits" },
		{ "execution: {supporting_files: [{source: a, destination: b}]}\n",
		  "each entry needs source, destination and sha256" },
		{ "execution: {supporting_files: [{source: a, destination: b, sha256: " SUM_A "},"
		  " {source: c, destination: ./b, sha256: " SUM_A "}]}\n",
		  "field 'execution.supporting_files': destinations 'b' and './b' name one file" },
		{ "execution: {supporting_files: [{source: a, destination: b, sha256: " SUM_A "},"
		  " {source: c, destination: b/c, sha256: " SUM_A "}]}\n",
		  "destinations 'b' and 'b/c': one would be a folder the other is in" },
		{ "execution: {completion: {structured_status_path: s}}\n",
		  "field 'execution.completion' needs child_exit_code_path" },
		{ "execution: {completion: {child_exit_code_path: ../c}}\n",
		  "field 'execution.completion.child_exit_code_path': '../c' must be a path without '..'" },
		{ "execution: {completion: {child_exit_code_path: c, structured_status_path: s,"
		  " success_states: [OK, OK]}}\n", "'OK' is listed twice" },
		{ "secrets: [HF_TOKEN]\nexecution: {environment: {HF_TOKEN: x}}\n",
		  "field 'execution.environment': HF_TOKEN is listed in 'secrets'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spec s;
		char *err = NULL, text[1024];
		snprintf(text, sizeof(text), HEAD "%s", cases[i].text);
		cr_expect_eq(parse(text, &s, &err), -1, "accepted: %s", cases[i].text);
		cr_expect(err && strstr(err, cases[i].want) != NULL, "for %s\nwant: %s\ngot:  %s",
		    cases[i].text, cases[i].want, err);
		free(err);
	}
}

/* The schema lets either of the status path and the states come alone: a
 * status file with no states named is judged by SUCCESS; states with no
 * file are read and judge nothing. */
Test(execution, a_status_file_alone_is_judged_by_success)
{
	struct spec s;
	char *err = NULL;

	cr_assert_eq(parse(HEAD "execution: {completion: {child_exit_code_path: c, "
	    "structured_status_path: s}}\n", &s, &err), 0, "%s", err);
	cr_assert_eq(s.exec.nsuccess, 1);
	cr_expect_str_eq(s.exec.success_states[0], "SUCCESS");
	spec_free(&s);
	cr_assert_eq(parse(HEAD "execution: {completion: {child_exit_code_path: c, "
	    "success_states: [OK]}}\n", &s, &err), 0, "%s", err);
	cr_expect_null(s.exec.status_path);
	spec_free(&s);
}

Test(execution, supporting_files_of_one_name_or_named_spec_yaml_are_refused)
{
	struct { const char *text, *want; } cases[] = {
		{ "supporting_files:\n  - {path: a/labels.txt, sha256: " SUM_A "}\n"
		  "  - {path: b/labels.txt, sha256: " SUM_A "}\n",
		  "field 'supporting_files': a/labels.txt and b/labels.txt would both be staged as "
		  "specs/labels.txt" },
		{ "supporting_files:\n  - {path: mine/spec.yaml, sha256: " SUM_A "}\n",
		  "field 'supporting_files': mine/spec.yaml would be staged as specs/spec.yaml, where "
		  "the staged TAO spec is" },
		{ "supporting_files:\n  - {path: dir/, sha256: " SUM_A "}\n", "which names no file" },
	};
	struct spec s;
	char *err = NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text), HEAD "%s", cases[i].text);
		cr_expect_eq(parse(text, &s, &err), -1, "accepted: %s", cases[i].text);
		cr_expect(err && strstr(err, cases[i].want) != NULL, "want: %s\ngot:  %s",
		    cases[i].want, err);
		free(err);
		err = NULL;
	}
	/* Two names in one folder are two files. */
	cr_assert_eq(parse(HEAD "supporting_files:\n  - {path: a/x.txt, sha256: " SUM_A "}\n"
	    "  - {path: a/y.txt, sha256: " SUM_A "}\n", &s, &err), 0, "%s", err);
	spec_free(&s);
}

Test(execution, relative_paths_and_clashes)
{
	cr_expect(exec_relpath_ok("a/b.py"));
	cr_expect(exec_relpath_ok("./a..b/c"));
	cr_expect(!exec_relpath_ok(""));
	cr_expect(!exec_relpath_ok("/a"));
	cr_expect(!exec_relpath_ok(".."));
	cr_expect(!exec_relpath_ok("a/.."));
	cr_expect(!exec_relpath_ok("a\tb"));
	char p1[] = "a/b", p2[] = "a//c", p3[] = "./a/d", p4[] = "x", p5[] = "a//b";
	char *d1[] = { p1, p2, p3 };
	cr_expect_null(exec_destination_clash(d1, 3));
	char *d2[] = { p1, p4, p5 };
	char *why = exec_destination_clash(d2, 3);
	cr_expect(why && strstr(why, "'a/b' and 'a//b'") != NULL, "%s", why);
	free(why);
}

Test(execution, completion_paths_are_filled_and_put_under_the_results_folder)
{
	const struct command_vars v = { "/j/specs/spec.yaml", "/r", "/j", "tao-1", "8", "1" };
	char *err = NULL, *p;

	p = exec_completion_path("child_exit_code", &v, &err);
	cr_expect_str_eq(p, "/r/child_exit_code");
	free(p);
	p = exec_completion_path("{results_dir}/{job_id}/rc", &v, &err);
	cr_expect_str_eq(p, "/r/tao-1/rc");
	free(p);
	p = exec_completion_path("/x/{job_id}", &v, &err);
	cr_expect_str_eq(p, "/x/tao-1");
	free(p);
	char *w = command_expand_word("-e={config_path}", &v, &err);
	cr_expect_str_eq(w, "-e=/j/specs/spec.yaml", "{config_path} is {spec}");
	free(w);
}

Test(execution, sha256_matches_the_standard_vectors)
{
	char hex[65];
	static char million[1000000];

	sha256_hex("", 0, hex);
	cr_expect_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, hex);
	cr_expect_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	cr_expect_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', sizeof(million));
	sha256_hex(million, sizeof(million), hex);
	cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(execution, a_structured_status_is_its_last_records_status)
{
	struct { const char *text, *want; } ok[] = {
		{ "{\"status\": \"RUNNING\"}\n{\"status\": \"success\"}\n", "SUCCESS" },
		{ "{\"status\":\"STARTED\"}\n\n{\"status\":\"FAILURE\",\"message\":\"x\"}\n  \n", "FAILURE" },
		{ "[{\"status\": \"RUNNING\"}, {\"status\": \"SUCCESS\"}]", "SUCCESS" },
		{ "{\"records\": [{\"status\": \"RUNNING\"}, {\"status\": \"ERROR\"}]}", "ERROR" },
		{ "{\"status\": \"SUCCESS\", \"kpi\": {\"loss\": NaN}}", "SUCCESS" },
		{ "{\n  \"status\": \"DONE\"\n}\n", "DONE" },
	};
	const char *bad[] = { "", "\n\n", "not json", "{\"state\": \"SUCCESS\"}", "[]",
	    "{\"status\": \"SUCCESS\"}\n{\"status\": \"RUN", };
	char state[32], *why = NULL;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_expect_eq(structured_last_state(ok[i].text, strlen(ok[i].text), state,
		    sizeof(state), &why), 0, "%s: %s", ok[i].text, why);
		cr_expect_str_eq(state, ok[i].want, "%s", ok[i].text);
		free(why);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(structured_last_state(bad[i], strlen(bad[i]), state, sizeof(state),
		    &why), -1, "accepted: %s", bad[i]);
		cr_expect_not_null(why);
		free(why);
	}
	cr_expect(structured_state_in("SUCCESS", "SUCCEEDED\nsuccess"));
	cr_expect(!structured_state_in("SUCCESS", "SUCCEEDED\nSUCCESSFUL"));
}

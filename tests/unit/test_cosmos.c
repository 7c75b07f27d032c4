/*
 * Cosmos jobs' rules and roles (engine/submit/cosmos.h): the bundles a
 * user writes, refused with the field and what to do; Cosmos-RL's roles
 * placed as the guardrails and Cosmos-RL's own SLURM script place them.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/cosmos.h"
#include "engine/submit/spec.h"
#include "util/xmalloc.h"

static void parse(const char *text, struct spec *s)
{
	char *err = NULL;

	cr_assert_eq(spec_parse("b.yaml", text, strlen(text), s, &err), 0, "%s", err);
}

/* The check's refusal for a bundle (nodes nodes), or NULL when it may run. */
static char *refusal(const char *text, const char *requeue_from, int nodes)
{
	struct spec s;
	char *err = NULL;

	parse(text, &s);
	if (cosmos_check(&s, requeue_from, nodes, &err) == 0) {
		spec_free(&s);
		return NULL;
	}
	spec_free(&s);
	cr_assert_not_null(err);
	return err;
}

#define RL "network_arch: cosmos-reason\naction: train\ncommand: [run]\ncosmos: {backend: rl}\n"

Test(cosmos, a_cosmos_rl_bundle_with_a_sqsh_may_run)
{
	struct spec s;

	parse("image: /lustre/img/cosmos.sqsh\n" RL, &s);
	cr_expect_str_eq(s.cosmos_backend, "rl");
	cr_expect_eq(s.cosmos_rollout_nodes, 0);
	spec_free(&s);
	cr_expect_null(refusal("image: /lustre/img/cosmos.sqsh\n" RL, NULL, 2));
	cr_expect_null(refusal("image: lustre:///img/cosmos.sqsh\n" RL "requeue: false\n", NULL, 2));
}

Test(cosmos, a_registry_image_is_refused_before_anything_is_written)
{
	char *e = refusal("image: nvcr.io/nvidia/cosmos/cosmos-rl:1.0\n" RL, NULL, 2);

	cr_assert_not_null(e, "a registry image was taken");
	cr_expect_not_null(strstr(e, "field 'image' is 'nvcr.io/nvidia/cosmos/cosmos-rl:1.0'"), "%s", e);
	cr_expect_not_null(strstr(e, "prebuilt .sqsh only"), "%s", e);
	cr_expect_not_null(strstr(e, "before the GPU allocation"), "%s", e);
	free(e);
}

Test(cosmos, a_requeue_is_refused_with_where_it_came_from)
{
	char *e = refusal("image: /x/c.sqsh\n" RL "requeue: true\n", "the bundle", 2);

	cr_assert_not_null(e, "requeue: true was taken");
	cr_expect_not_null(strstr(e, "requeue is asked for (the bundle)"), "%s", e);
	cr_expect_not_null(strstr(e, "never requeued"), "%s", e);
	free(e);
	/* The same from the command line (request.c sets the bundle's field). */
	{
		struct spec s;
		char *err = NULL;
		parse("image: /x/c.sqsh\n" RL, &s);
		s.requeue = 1;
		cr_expect_eq(cosmos_check(&s, "--requeue", 2, &err), -1);
		cr_expect_not_null(err && strstr(err, "(--requeue)"), "%s", err ? err : "");
		free(err);
		spec_free(&s);
	}
}

Test(cosmos, the_backend_is_asked_for_and_only_for_cosmos_models)
{
	char *e = refusal("image: /x/c.sqsh\nnetwork_arch: cosmos-embed\naction: train\n"
	    "command: [run]\n", NULL, 1);

	cr_assert_not_null(e);
	cr_expect_not_null(strstr(e, "network_arch cosmos-embed is a Cosmos model"), "%s", e);
	cr_expect_not_null(strstr(e, "cosmos: {backend: rl}"), "%s", e);
	free(e);
	e = refusal("image: /x/c.sqsh\nnetwork_arch: dino\naction: train\ncommand: [run]\n"
	    "cosmos: {backend: framework}\n", NULL, 1);
	cr_assert_not_null(e);
	cr_expect_not_null(strstr(e, "field 'cosmos' is for Cosmos models, but network_arch is 'dino'"),
	    "%s", e);
	free(e);
	/* Any other model is none of this module's business. */
	cr_expect_null(refusal("image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: dino\n"
	    "action: train\nrequeue: true\n", "the bundle", 1));
}

Test(cosmos, the_cosmos_field_names_what_is_wrong)
{
	const char *bad[][2] = {
		{ "cosmos: {backend: ray}\n", "field 'cosmos.backend' is 'ray'" },
		{ "cosmos: rl\n", "field 'cosmos' must be a mapping" },
		{ "cosmos: {rollout_nodes: 1}\n", "field 'cosmos' needs a backend" },
		{ "cosmos: {backend: rl, policy: 2}\n", "unknown key 'policy'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct spec s;
		char *err = NULL, *text = xasprintf("image: /x/c.sqsh\nnetwork_arch: cosmos-reason\n"
		    "action: train\ncommand: [run]\n%s", bad[i][0]);
		cr_expect_eq(spec_parse("b.yaml", text, strlen(text), &s, &err), -1, "%s", bad[i][0]);
		cr_expect(err != NULL && strstr(err, bad[i][1]) != NULL, "%s: %s", bad[i][0],
		    err ? err : "(none)");
		cr_expect(err != NULL && strncmp(err, "b.yaml:", 7) == 0, "the place: %s", err);
		free(err), free(text);
	}
}

Test(cosmos, rollout_nodes_leave_a_policy_node_and_are_for_rl_only)
{
	char *e = refusal("image: /x/c.sqsh\nnetwork_arch: cosmos-reason\naction: train\ncommand: [run]\n"
	    "cosmos: {backend: rl, rollout_nodes: 2}\n", NULL, 2);
	cr_assert_not_null(e);
	cr_expect_not_null(strstr(e, "'cosmos.rollout_nodes' is 2 on 2 nodes"), "%s", e);
	free(e);
	e = refusal("image: /x/c.sqsh\nnetwork_arch: cosmos-reason\naction: train\ncommand: [run]\n"
	    "cosmos: {backend: framework, rollout_nodes: 1}\n", NULL, 2);
	cr_assert_not_null(e);
	cr_expect_not_null(strstr(e, "for Cosmos-RL"), "%s", e);
	free(e);
}

Test(cosmos, the_controller_is_on_node_0_and_a_policy_on_every_policy_node)
{
	struct cosmos_role *v;
	size_t n;
	char *names;

	cr_assert_eq(cosmos_roles(2, 0, &v, &n), 0);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(v[0].name, "controller");
	cr_expect_str_eq(v[0].kind, "controller");
	cr_expect_eq(v[0].node, 0);
	cr_expect_str_eq(v[1].name, "policy-0");
	cr_expect_str_eq(v[1].kind, "policy");
	cr_expect_eq(v[1].node, 0);
	cr_expect_str_eq(v[2].name, "policy-1");
	cr_expect_eq(v[2].node, 1);
	free(v);
	/* Rollout replicas on the last nodes; the controller stays on node 0. */
	cr_assert_eq(cosmos_roles(4, 1, &v, &n), 0);
	cr_assert_eq(n, 5);
	cr_expect_eq(v[0].node, 0);
	cr_expect_str_eq(v[3].name, "policy-2");
	cr_expect_eq(v[3].node, 2);
	cr_expect_str_eq(v[4].name, "rollout-0");
	cr_expect_str_eq(v[4].kind, "rollout");
	cr_expect_eq(v[4].node, 3);
	free(v);
	/* One node: the controller and its policy share it. */
	names = cosmos_role_names(1, 0);
	cr_expect_str_eq(names, "controller policy-0");
	free(names);
	/* No policy node left: no roles. */
	cr_expect_eq(cosmos_roles(2, 2, &v, &n), -1);
	cr_expect_null(cosmos_role_names(2, 2));
}

/* The shipped example, as a user copies it, may run. */
Test(cosmos, the_shipped_example_is_a_cosmos_rl_bundle_that_may_run)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *path = xasprintf("%s/templates/example-cosmos-rl.spec.yaml", share ? share : ".");
	struct spec s;
	char *err = NULL;

	cr_assert_eq(spec_load(path, &s, &err), 0, "%s", err);
	cr_expect_str_eq(s.cosmos_backend, "rl");
	cr_expect_eq(cosmos_check(&s, "the bundle", s.nodes, &err), 0, "%s", err);
	spec_free(&s);
	free(path);
}

/* The skill bank's Cosmos bundle (network_arch cosmos-reason, its model
 * skill's execution lifecycle, no cosmos: field: the bank has none) runs
 * as the bank hands it over: its one command with its lifecycle, under
 * the platform's rules (a .sqsh only, never requeued). A bundle of
 * taotop's own with cosmos: and an execution block is refused: the
 * roles' template does not run a lifecycle around them. */
Test(cosmos, the_banks_cosmos_bundle_runs_as_one_command_under_the_rules)
{
	static const char bank[] =
	    "network_arch: cosmos-reason\naction: evaluate\nmode: args\n"
	    "command: python -m cosmos_rl.evaluate\nargs: [--config, /lustre/cfg.toml]\n"
	    "declared_inputs: []\ndeclared_outputs: [{spec_key: results_dir, type: folder}]\n"
	    "compute_shape: {gpus: 8, nodes: 1}\n"
	    "execution: {completion: {child_exit_code_path: child_exit_code,"
	    " structured_status_path: '{results_dir}/status.json', success_states: [SUCCESS]}}\n";
	char *text = xasprintf("image: /lustre/img/cosmos.sqsh\n%s", bank), *e;

	cr_expect_null(refusal(text, NULL, 1), "the bank's Cosmos bundle runs");
	free(text);
	text = xasprintf("image: nvcr.io/nvidia/cosmos/cosmos-rl:1.0\n%s", bank);
	e = refusal(text, NULL, 1);
	cr_expect(e != NULL && strstr(e, "prebuilt .sqsh only") != NULL, "%s", e ? e : "");
	free(e), free(text);
	e = refusal("image: /lustre/img/cosmos.sqsh\n" RL
	    "execution: {pre_commands: ['true']}\n", NULL, 2);
	cr_expect(e != NULL && strstr(e, "field 'execution' is not run around a Cosmos job's "
	    "roles") != NULL, "%s", e ? e : "");
	free(e);
}

/*
 * What a new user trips over (issue 40), from their side: the CLI run as
 * they run it, each message asserted as the exact line they read, said
 * once, naming its real source and the valid choices taotop knows; a
 * secret can never be an extra_env key; a job that succeeded is retried
 * only when the user insists, and keeps its verdict.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "util/xmalloc.h"

/* The marks as a UTF-8 terminal shows them, whatever the runner's locale. */
#define UTF8	"LC_ALL=C.UTF-8"

/* `taotop ARGS` as u with env: its exit status, *out all it printed. */
static int run(struct user *u, const char *env, const char *args, char **out)
{
	char *e = xasprintf("%s %s %s", u->env, UTF8, env ? env : "");
	int rc = rig_taotop(e, args, out);

	free(e);
	return rc;
}

/* A secret named in secrets: may not be an extra_env key, whatever its
 * value (the job would export the bundle's literal over the real one); a
 * secret-looking literal under another name stays refused by the lint. */
Test(newuser, an_extra_env_key_named_in_secrets_is_refused_by_name, .timeout = 120)
{
	struct user u;
	char *b, *out = NULL, *args, *want;

	user_open(&u, "envsecret", NULL);
	b = user_bundle(&u, "leak", NULL, "extra_env:\n  HF_TOKEN: hf_abc\n");
	args = xasprintf("submit %s", b);
	cr_expect_eq(run(&u, NULL, args, &out), 1, "%s", out);
	want = xasprintf("\xe2\x9c\x97 preflight: %s:10:3: field 'extra_env': HF_TOKEN is listed in "
	    "'secrets', so its value comes from your environment or the .env beside the bundle, "
	    "never from the bundle: remove HF_TOKEN from extra_env\n", b);
	cr_expect_str_eq(out, want);
	free(out), free(want), free(args), free(b);

	b = user_bundle(&u, "literal", NULL,
	    "extra_env:\n  MY_API_KEY: Ab3dEf9hIjK2mN0pQrStUvWx1234\n");
	args = xasprintf("submit %s", b);
	cr_expect_eq(run(&u, NULL, args, &out), 1, "%s", out);
	cr_expect(strstr(out, "\xe2\x9c\x97 lint: the rendered sbatch fails the lint, nothing was "
	    "submitted") != NULL, "%s", out);
	cr_expect(strstr(out, ": secret: MY_API_KEY is given a literal secret-looking value") != NULL,
	    "%s", out);
	cr_expect(strstr(out, "taotop: ") == NULL, "said twice:\n%s", out);
	free(out), free(args), free(b);
	user_close(&u);
}

/* `taotop retry` of a job that succeeded says so and runs nothing; with
 * --force it runs again, in a results folder of its own from the job's
 * newest checkpoint (said by the retry and by status), and the job's note
 * still starts with its verdict.
 * An unknown --cluster with that job's id is a usage error (2), as
 * everywhere. */
Test(newuser, a_job_that_succeeded_is_retried_only_with_force_and_keeps_its_verdict,
    .timeout = 300)
{
	struct user u;
	char *b, *out = NULL, *args, *want, *id, *verdict, *note;
	cJSON *st;

	user_open(&u, "retrydone", NULL);
	b = user_bundle(&u, "done", NULL, NULL);
	id = user_submit(&u, b, &out);
	free(out);
	st = user_wait_final(&u, id, 180);
	cr_assert_str_eq(json_str(st, "state"), "Done");
	note = xstrdup(json_str(st, "message"));
	verdict = xstrdup(note[0] ? note : "Done");
	cJSON_Delete(st);

	args = xasprintf("retry %s", id);
	cr_expect_eq(run(&u, NULL, args, &out), 1, "%s", out);
	want = xasprintf("taotop: %s succeeded (Done): a retry would run it again in a results "
	    "folder of its own, resuming from its newest checkpoint; taotop retry --force %s does "
	    "that\n", id, id);
	cr_expect_str_eq(out, want);
	free(out), free(want), free(args);
	args = xasprintf("status %s --json", id);
	cr_assert_eq(run(&u, NULL, args, &out), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cr_expect_str_eq(json_str(st, "message"), note, "the refused retry changed the note");
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "record"), "retried_as")));
	cJSON_Delete(st);
	free(out), free(args);

	args = xasprintf("retry --force %s", id);
	cr_expect_eq(run(&u, NULL, args, &out), 0, "%s", out);
	cr_expect(strncmp(out, "retried ", 8) == 0, "%s", out);
	{
		/* Its own folder, and the checkpoint it resumes from. */
		char *dir = xasprintf("%s/jobs/%s/results", u.remote, id), *line;
		char *ck = xasprintf("  resumes from %s/train/model_epoch_000.pth (the newest "
		    "checkpoint in %s)\n", dir, dir), *nid = NULL, *p = strstr(out, " as ");
		cr_expect(strstr(out, ck) != NULL, "want '%s' in:\n%s", ck, out);
		cr_assert_not_null(p, "%s", out);
		nid = xstrndup(p + 4, strcspn(p + 4, ","));
		line = xasprintf("  results %s/jobs/%s/results\n", u.remote, nid);
		cr_expect(strstr(out, line) != NULL, "want '%s' in:\n%s", line, out);
		free(out), free(args), free(line);
		args = xasprintf("status %s", nid);
		cr_assert_eq(run(&u, NULL, args, &out), 0, "%s", out);
		cr_expect(strstr(out, ck) != NULL, "status: want '%s' in:\n%s", ck, out);
		free(dir), free(ck), free(nid);
	}
	free(out), free(args);
	args = xasprintf("status %s --json", id);
	cr_assert_eq(run(&u, NULL, args, &out), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cr_expect(strncmp(json_str(st, "message"), verdict, strlen(verdict)) == 0 &&
	    strstr(json_str(st, "message"), "; retried as tao-") != NULL,
	    "the note lost its verdict '%s': %s", verdict, json_str(st, "message"));
	cJSON_Delete(st);
	free(out), free(args);

	args = xasprintf("logs %s --cluster nosuch", id);
	cr_expect_eq(run(&u, NULL, args, &out), 2, "%s", out);
	cr_expect_str_eq(out, "taotop: no cluster called 'nosuch' (--cluster); the configured "
	    "cluster is: rig\n");
	free(out), free(args);
	free(verdict), free(note), free(id), free(b);
	user_close(&u);
}

/* An unknown cluster names where the name came from and the clusters
 * there are: --cluster, or TAOTOP_CLUSTER when it came from there. */
Test(newuser, an_unknown_cluster_names_its_source_and_the_configured_ones, .timeout = 60)
{
	struct user u;
	char *env, *e2, *out = NULL;

	user_open(&u, "nocluster", NULL);
	env = user_two_clusters(&u, 1);
	cr_expect_eq(rig_taotop(env, "status 12 --cluster nosuch", &out), 2, "%s", out);
	cr_expect_str_eq(out, "taotop: no cluster called 'nosuch' (--cluster); the configured "
	    "clusters are: alpha, beta\n");
	free(out);
	cr_expect_eq(rig_taotop(env, "jobs --cluster nosuch", &out), 2, "%s", out);
	cr_expect_str_eq(out, "taotop: no cluster called 'nosuch' (--cluster); the configured "
	    "clusters are: alpha, beta\n");
	free(out);
	e2 = xasprintf("%s TAOTOP_CLUSTER=gamma", env);
	cr_expect_eq(rig_taotop(e2, "status 12", &out), 2, "%s", out);
	cr_expect_str_eq(out, "taotop: no cluster called 'gamma' (TAOTOP_CLUSTER); the configured "
	    "clusters are: alpha, beta\n");
	free(out), free(e2), free(env);
	user_close(&u);
}

/* What was wrong with an option or a missing argument, then the usage. */
Test(newuser, a_bad_option_value_or_a_missing_bundle_is_said_before_the_usage, .timeout = 60)
{
	static const struct { const char *args, *line; } cases[] = {
		{ "submit B --time 1h", "taotop submit: --time takes the limit in hours as a number "
		  "(0.5, 4, 12), not '1h'\n" },
		{ "submit B --gpus abc", "taotop submit: --gpus takes a whole number of GPUs in all "
		  "(1, 8, 16, ...), not 'abc'\n" },
		{ "submit", "taotop submit: no SPEC given\n" },
	};
	struct user u;
	char *b, *out = NULL;

	user_open(&u, "usage", NULL);
	b = user_bundle(&u, "b", NULL, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *args = xasprintf("%s", cases[i].args), *at = strstr(args, " B ");
		if (at != NULL) {
			char *full = xasprintf("%.*s %s %s", (int)(at - args), args, b, at + 3);
			free(args);
			args = full;
		}
		cr_expect_eq(run(&u, NULL, args, &out), 2, "%s: %s", args, out);
		cr_expect(strncmp(out, cases[i].line, strlen(cases[i].line)) == 0 &&
		    strncmp(out + strlen(cases[i].line), "usage: taotop submit SPEC", 25) == 0,
		    "%s:\n%s", args, out);
		free(out), free(args);
	}
	free(b);
	user_close(&u);
}

/* Each refusal of a submit: one line, under its step, in taotop's words. */
Test(newuser, submit_refusals_are_one_line_under_their_step, .timeout = 120)
{
	struct user u;
	char *b, *out = NULL, *args, *want, *parts, *p, *extra;

	user_open(&u, "refusals", NULL);
	/* A partition the cluster has not: its partitions listed. */
	b = user_bundle(&u, "part", NULL, NULL);
	args = xasprintf("submit %s --partition polaris", b);
	cr_expect_eq(run(&u, NULL, args, &out), 1, "%s", out);
	parts = rig_ssh_ok("sinfo -h -o %R | sort -u | paste -sd, - | sed 's/,/, /g'");
	if ((p = strchr(parts, '\n')) != NULL)
		*p = '\0';
	want = xasprintf("\xe2\x9c\x93 preflight\n\xe2\x9c\x97 checks: partition polaris (from "
	    "--partition) does not exist on the cluster; its partitions are %s\n", parts);
	cr_expect_str_eq(out, want);
	free(out), free(want), free(args), free(b), free(parts);

	/* A dataset written as a plain absolute path. */
	extra = xasprintf("datasets: [%s/datasets/imagenet/train]\n", u.remote);
	b = user_bundle(&u, "abs", NULL, NULL);
	cr_assert_eq(rig_local("sed -i '/^datasets:/d' %s && printf '%%s' '%s' >> %s", b, extra, b), 0);
	args = xasprintf("submit %s", b);
	cr_expect_eq(run(&u, NULL, args, &out), 1, "%s", out);
	want = xasprintf("\xe2\x9c\x97 preflight: datasets: %s/datasets/imagenet/train is a plain "
	    "path: a folder on the cluster's shared storage is written lustre://%s/datasets/imagenet/"
	    "train (a folder only on this machine must be copied there first)\n", u.remote, u.remote);
	cr_expect_str_eq(out, want);
	free(out), free(want), free(args), free(b), free(extra);

	/* A supporting file that is not there: taotop's line, not sha256sum's. */
	b = user_bundle(&u, "labels", NULL, "supporting_files:\n  - path: ./labelz.txt\n"
	    "    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n");
	args = xasprintf("submit %s", b);
	cr_expect_eq(run(&u, NULL, args, &out), 1, "%s", out);
	want = xasprintf("\xe2\x9c\x97 preflight: supporting file %s/./labelz.txt does not exist: fix "
	    "its path under supporting_files (relative to the bundle's folder)\n", u.local);
	cr_expect_str_eq(out, want);
	free(out), free(want), free(args), free(b);
	user_close(&u);
}

/* --dry-run says where the shape came from and what --gpus changed, and
 * where the secret came from: the .env beside the bundle, or the
 * environment. */
Test(newuser, dry_run_says_where_the_shape_and_the_secret_came_from, .timeout = 120)
{
	struct user u;
	char *b, *out = NULL, *args, *line, *want;

	user_open(&u, "origins", NULL);
	b = user_bundle(&u, "shape", NULL, "nodes: 1\n");
	args = xasprintf("submit %s --dry-run --gpus 3", b);
	cr_expect_eq(run(&u, NULL, args, &out), 0, "%s", out);
	line = text_line_with(out, "  shape ");
	cr_expect_str_eq(line ? line : "", "  shape       1 node x 3 GPUs (3 GPUs from --gpus, on the "
	    "bundle's nodes: 1)");
	free(line), free(out), free(args);
	args = xasprintf("submit %s --dry-run --gpus 12", b);
	cr_expect_eq(run(&u, NULL, args, &out), 0, "%s", out);
	line = text_line_with(out, "  shape ");
	cr_expect_str_eq(line ? line : "", "  shape       2 nodes x 6 GPUs, exclusive (12 GPUs from "
	    "--gpus are more than a node's 8, so the bundle's nodes: 1 became 2 whole nodes of 6)");
	free(line), free(out);

	/* The secret from the environment, then from .env beside the bundle. */
	cr_expect_eq(run(&u, NULL, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "mode 0600 from its first byte, a new file: 1 secret: HF_TOKEN from your "
	    "environment\n") != NULL, "%s", out);
	free(out);
	cr_assert_eq(rig_local("echo HF_TOKEN=%s > %s/.env && chmod 600 %s/.env", USER_TOKEN, u.local,
	    u.local), 0);
	cr_expect_eq(run(&u, "HF_TOKEN=", args, &out), 0, "%s", out);
	want = xasprintf("mode 0600 from its first byte, a new file: 1 secret: HF_TOKEN from %s/.env\n", u.local);
	cr_expect(strstr(out, want) != NULL, "not '%s':\n%s", want, out);
	cr_expect(strstr(out, USER_TOKEN) == NULL, "the dry run shows the secret");
	free(out), free(want), free(args), free(b);
	user_close(&u);
}

/* taotop init without --results-root names --results-root. */
Test(newuser, init_without_a_results_root_names_the_option, .timeout = 120)
{
	const struct rig *r = rig_get();
	struct user u;
	char *out = NULL, *args, *env, *line;

	user_open(&u, "initroot", NULL);
	env = xasprintf("SLURM_BASE_RESULTS_DIR= TAOTOP_CONFIG=%s/new.yaml", u.local);
	args = xasprintf("init --hosts %s:%d --user %s --key %s --yes", r->host, r->port, r->user,
	    r->key);
	/* A results root is needed to submit, not to watch: the config is
	 * written, and init succeeds, saying what is missing. */
	cr_expect_eq(run(&u, env, args, &out), 0, "%s", out);
	line = text_line_with(out, "results root");
	cr_expect_str_eq(line ? line : "", "\xe2\x9c\x97 results root: no results root is set: give "
	    "taotop init --results-root lustre:///path (a shared-storage folder you can write; "
	    "results_root: in config.yaml), or export SLURM_BASE_RESULTS_DIR", "%s", out);
	free(line), free(out), free(args), free(env);
	user_close(&u);
}

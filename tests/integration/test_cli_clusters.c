/*
 * Every cluster from the command line, from the user's side: `taotop jobs`
 * lists each configured cluster (with a CLUSTER column when there are
 * several; --cluster narrows), a cluster that cannot be reached is said
 * while the others are listed, and `status`, `logs` of a taotop id go to
 * its record's cluster by themselves. Two clusters in the config file, both
 * the local cluster's login node under two names, or one of them a port
 * where nothing answers.
 */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_user.h"
#include "util/xmalloc.h"

/* A one-GPU bundle running command (a YAML list), submitted to cluster:
 * its id. */
static char *submit_to(struct user *u, const char *env, const char *cluster, const char *name,
    const char *command)
{
	char *path = xasprintf("%s/%s.yaml", u->local, name), *args, *out = NULL, *id;
	FILE *f = fopen(path, "w");
	cJSON *o;

	cr_assert_not_null(f);
	fprintf(f, "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\ncommand: %s\ndatasets: [lustre://%s/datasets/imagenet/train]\ngpus: 1\n"
	    "cpus_per_task: 1\ntime_hours: 0.5\nsecrets: [HF_TOKEN]\nspec:\n  train:\n"
	    "    num_epochs: 1\n", command, u->remote);
	fclose(f);
	args = xasprintf("submit %s --cluster %s --json", path, cluster);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	o = cJSON_Parse(strchr(out, '{'));
	id = xstrdup(json_str(o, "id"));
	cr_assert(id[0] != '\0', "%s", out);
	cJSON_Delete(o);
	free(out), free(args), free(path);
	return id;
}

/* Whether a line of text begins with word and a space. */
static int line_begins(const char *text, const char *word)
{
	size_t n = strlen(word);
	const char *p;

	for (p = text; p != NULL; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, word, n) == 0 && p[n] == ' ')
			return 1;
	return 0;
}

Test(cli_clusters, jobs_lists_every_cluster_and_cluster_narrows, .timeout = 180)
{
	struct user u;
	char *env, *id, *alpha_id, *out = NULL, *row, *args;

	user_open(&u, "jobsboth", NULL);
	env = user_two_clusters(&u, 1);
	id = submit_to(&u, env, "beta", "jobsboth", "[sleep, '300']");
	alpha_id = submit_to(&u, env, "alpha", "jobsalpha", "[sleep, '300']");

	cr_assert_eq(rig_taotop(env, "jobs", &out), 0, "%s", out);
	cr_expect(strncmp(out, "CLUSTER ", 8) == 0, "no CLUSTER column:\n%s", out);
	row = text_line_with(out, id);
	cr_assert_not_null(row, "beta's job is not listed:\n%s", out);
	cr_expect(strncmp(row, "beta ", 5) == 0, "its row is not beta's: %s", row);
	free(row);
	row = text_line_with(out, alpha_id);
	cr_assert_not_null(row, "alpha's job is not listed:\n%s", out);
	cr_expect(strncmp(row, "alpha ", 6) == 0, "its row is not alpha's: %s", row);
	free(row), free(out);

	cr_assert_eq(rig_taotop(env, "jobs --cluster beta", &out), 0, "%s", out);
	cr_expect(strncmp(out, "ID ", 3) == 0, "one cluster needs no CLUSTER column:\n%s", out);
	cr_expect(line_begins(out, id), "beta's job is not listed by --cluster beta:\n%s", out);
	cr_expect(!line_begins(out, "alpha") && !line_begins(out, "beta"), "%s", out);
	cr_expect(!line_begins(out, alpha_id), "alpha's job listed by --cluster beta:\n%s", out);
	free(out);

	/* alpha sees the same queue, but beta's job is not alpha's record. */
	cr_assert_eq(rig_taotop(env, "jobs --cluster alpha", &out), 0, "%s", out);
	cr_expect(line_begins(out, alpha_id), "%s", out);
	cr_expect(!line_begins(out, id), "beta's record listed as alpha's:\n%s", out);
	free(out);

	cr_assert_eq(rig_taotop(env, "jobs --json", &out), 0, "%s", out);
	{
		cJSON *a = cJSON_Parse(strchr(out, '[')), *o;
		int alpha = 0, beta = 0;
		cr_assert_not_null(a, "%s", out);
		cJSON_ArrayForEach(o, a) {
			alpha += strcmp(json_str(o, "cluster"), "alpha") == 0 &&
			    strcmp(json_str(o, "id"), alpha_id) == 0;
			beta += strcmp(json_str(o, "cluster"), "beta") == 0 &&
			    strcmp(json_str(o, "id"), id) == 0;
		}
		cr_expect(alpha == 1 && beta == 1, "alpha's job %d, beta's job %d:\n%s", alpha, beta,
		    out);
		cJSON_Delete(a);
	}
	free(out);

	args = xasprintf("cancel %s %s", id, alpha_id);
	cr_expect_eq(rig_taotop(env, args, &out), 0, "%s", out);
	free(out), free(args);
	free(env), free(id), free(alpha_id);
	user_close(&u);
}

Test(cli_clusters, an_unreachable_cluster_is_said_and_the_others_listed, .timeout = 180)
{
	struct user u;
	char *env, *id, *out = NULL, *row, *args;
	int rc;

	user_open(&u, "jobsdown", NULL);
	env = user_two_clusters(&u, 0);
	id = submit_to(&u, env, "beta", "jobsdown", "[sleep, '300']");

	rc = rig_taotop(env, "jobs", &out);
	cr_expect_eq(rc, 3, "a cluster could not be reached: jobs exits 3 (the man page):\n%s", out);
	cr_expect(strstr(out, "taotop: alpha: ") != NULL, "alpha's failure is not said:\n%s", out);
	row = text_line_with(out, id);
	cr_expect_not_null(row, "beta's job is not listed:\n%s", out);
	cr_expect(row == NULL || strncmp(row, "beta ", 5) == 0, "%s", row);
	free(row), free(out);

	args = xasprintf("cancel %s", id);
	cr_expect_eq(rig_taotop(env, args, &out), 0, "%s", out);
	free(out), free(args);
	free(env), free(id);
	user_close(&u);
}

Test(cli_clusters, status_and_logs_of_a_taotop_id_go_to_its_records_cluster, .timeout = 300)
{
	struct user u;
	char *env, *id, *out = NULL, *args;
	const char *state = "";
	cJSON *st = NULL;

	/* The default cluster, alpha, cannot be reached: only going to beta works. */
	user_open(&u, "statusbeta", NULL);
	env = user_two_clusters(&u, 0);
	id = submit_to(&u, env, "beta", "statusbeta", "[echo, hello-from-beta]");

	args = xasprintf("status %s --json", id);
	for (int waited = 0; waited < 200; waited += 2) {
		cJSON_Delete(st);
		st = NULL;
		cr_assert_eq(rig_taotop(env, args, &out), 0, "status went elsewhere:\n%s", out);
		st = cJSON_Parse(strchr(out, '{'));
		free(out);
		state = json_str(st, "state");
		if (strcmp(state, "Done") == 0 || strcmp(state, "Error") == 0 ||
		    strcmp(state, "Canceled") == 0)
			break;
		sleep(2);
	}
	cr_expect_str_eq(json_str(st, "cluster"), "beta");
	cr_expect(strcmp(state, "Done") == 0 || strcmp(state, "Error") == 0, "%s", state);
	free(args);

	args = xasprintf("status %s", id);
	cr_expect_eq(rig_taotop(env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, id) != NULL, "%s", out);
	free(out), free(args);

	args = xasprintf("logs %s", id);
	cr_expect_eq(rig_taotop(env, args, &out), 0, "logs went elsewhere:\n%s", out);
	cr_expect(strstr(out, "hello-from-beta") != NULL, "%s", out);
	free(out), free(args);

	/* Told the wrong cluster, it refuses rather than look there. */
	args = xasprintf("logs %s --cluster alpha", id);
	cr_expect_neq(rig_taotop(env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "cluster 'beta'") != NULL, "%s", out);
	free(out), free(args);

	cJSON_Delete(st);
	free(env), free(id);
	user_close(&u);
}

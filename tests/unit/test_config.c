/* The config file, the environment over it, and errors at their place. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"

static void clear_env(void)
{
	const char *vars[] = { "SLURM_HOSTNAME", "SLURM_USER", "SSH_KEY_PATH", "TAOTOP_KNOWN_HOSTS",
	    "SLURM_PARTITION", "SLURM_ACCOUNT", "SLURM_BASE_RESULTS_DIR", "TAOTOP_IMAGE_CACHE",
	    "TAOTOP_CPU_PARTITION", "TAOTOP_CLUSTER", "TAOTOP_POLL_S" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void write_config(const char *text)
{
	char path[] = "/tmp/taotop-config-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	setenv("TAOTOP_CONFIG", path, 1);
}

Test(config, the_example_names_clusters_and_the_default)
{
	struct config cfg;
	char *err = NULL;
	const char *share = getenv("TAOTOP_SHARE");
	char path[4096];

	clear_env();
	setenv("HOME", "/home/alice", 1);
	snprintf(path, sizeof(path), "%s/templates/config.example.yaml", share ? share : ".");
	setenv("TAOTOP_CONFIG", path, 1);
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_expect_eq(cfg.n, 2);
	const struct cluster_cfg *cl = config_cluster(&cfg, NULL);
	cr_assert_not_null(cl);
	cr_expect_str_eq(cl->name, "ord", "default_cluster");
	cr_expect_str_eq(cl->hosts, "login1.ord.example,login2.ord.example");
	cr_expect_str_eq(cl->key_path, "/home/alice/.ssh/id_ed25519", "~ expanded");
	cr_expect_eq(cl->poll_s, 10);
	cl = config_cluster(&cfg, "lab");
	cr_assert_not_null(cl);
	cr_expect_str_eq(cl->partitions, "polar,polar3,polar4,grizzly", "the seed's default list");
	cr_expect_str_eq(cl->cpu_partition, "cpu_long");
	cr_expect_null(config_cluster(&cfg, "nope"));
	config_free(&cfg);
}

Test(config, the_environment_overrides_the_file)
{
	struct config cfg;
	char *err = NULL;

	clear_env();
	write_config("clusters:\n  a:\n    hosts: h1\n    user: u1\n    partitions: p1\n");
	setenv("SLURM_USER", "envuser", 1);
	setenv("SLURM_ACCOUNT", "acct", 1);
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_expect_str_eq(cfg.clusters[0].user, "envuser");
	cr_expect_str_eq(cfg.clusters[0].hosts, "h1");
	cr_expect_str_eq(cfg.clusters[0].partitions, "p1");
	cr_expect_str_eq(cfg.clusters[0].account, "acct");
	config_free(&cfg);
}

Test(config, no_file_means_the_seeds_variables_alone)
{
	struct config cfg;
	char *err = NULL;

	clear_env();
	setenv("TAOTOP_CONFIG", "/nonexistent/config.yaml", 1);
	cr_expect_eq(config_load(&cfg, &err), -1);
	cr_expect(strstr(err, "cluster 'default' has no hosts: set SLURM_HOSTNAME") != NULL, "%s", err);
	free(err), err = NULL;
	setenv("SLURM_HOSTNAME", "login1,login2", 1);
	setenv("SLURM_USER", "bob", 1);
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_expect_eq(cfg.n, 1);
	cr_expect_str_eq(cfg.clusters[0].name, "default");
	config_free(&cfg);
}

Test(config, mistakes_are_reported_at_their_place)
{
	struct { const char *text, *want; } cases[] = {
		{ "clusters:\n  a:\n    hosts: h\n    colour: blue\n", ":4:5: cluster 'a': unknown field 'colour'" },
		{ "clusters:\n  a:\n    hosts: h\n    user: u\n    poll_seconds: often\n", ":5:19: cluster 'a': field 'poll_seconds'" },
		{ "clusters: [\n", ":2:1: YAML syntax error" },
		{ "cluster:\n  a: {}\n", ":1:1: unknown top-level field 'cluster'" },
	};
	clear_env();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config cfg;
		char *err = NULL;
		write_config(cases[i].text);
		cr_expect_eq(config_load(&cfg, &err), -1, "case %zu loaded", i);
		cr_expect(err && strstr(err, cases[i].want) != NULL, "case %zu: %s", i, err);
		cr_expect(err && strncmp(err, "/tmp/taotop-config-", 19) == 0, "names the file: %s", err);
		free(err);
	}
}

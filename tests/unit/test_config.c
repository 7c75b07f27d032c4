/* The config file, the environment over it, and errors at their place. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/config.h"
#include "ssh/conn.h"

static void clear_env(void)
{
	const char *vars[] = { "SLURM_HOSTNAME", "SLURM_USER", "SSH_KEY_PATH", "TAOTOP_KNOWN_HOSTS",
	    "SLURM_PARTITION", "SLURM_ACCOUNT", "SLURM_BASE_RESULTS_DIR", "TAOTOP_IMAGE_CACHE",
	    "TAOTOP_CPU_PARTITION", "TAOTOP_CLUSTER", "TAOTOP_POLL_S", "TAOTOP_JUMP" };
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
	cr_expect_eq(cl->history_days, 7);
	cr_expect_eq(cl->history_every_s, 300);
	cr_expect_eq(cl->history_max, 1000);
	cl = config_cluster(&cfg, "lab");
	cr_assert_not_null(cl);
	cr_expect_str_eq(cl->partitions, "polar,polar3,polar4,grizzly", "the seed's default list");
	cr_expect_eq(cl->history_days, 7, "the default window");
	cr_expect_eq(cl->history_every_s, 300);
	cr_expect_eq(cl->history_max, 1000);
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
	/* Nothing configured: not an error of the user's, but the way to
	 * set one up. */
	cr_expect_eq(config_load(&cfg, &err), CONFIG_NONE);
	cr_expect(strstr(err, "no cluster is configured yet: run 'taotop init'") != NULL, "%s", err);
	free(err), err = NULL;
	/* Hosts alone are enough: ssh's rules give the user. */
	setenv("SLURM_HOSTNAME", "login1,login2", 1);
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_expect_null(cfg.clusters[0].user);
	config_free(&cfg);
	setenv("SLURM_USER", "bob", 1);
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_expect_eq(cfg.n, 1);
	cr_expect_str_eq(cfg.clusters[0].name, "default");
	cr_expect_str_eq(cfg.clusters[0].user, "bob");
	config_free(&cfg);
	/* A file with no cluster in it, and no SLURM_HOSTNAME: the same. */
	clear_env();
	write_config("theme: light\n");
	cr_expect_eq(config_load(&cfg, &err), CONFIG_NONE);
	free(err), err = NULL;
	/* A cluster of the file without hosts is the file's mistake. */
	write_config("clusters:\n  a:\n    user: u\n");
	cr_expect_eq(config_load(&cfg, &err), -1);
	cr_expect(strstr(err, "cluster 'a' has no hosts") != NULL, "%s", err);
	free(err);
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

static char *read_back(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[8192];
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const struct cluster_cfg *reload(struct config *cfg, const char *name)
{
	char *err = NULL;

	setenv("SLURM_HOSTNAME", "login1", 1);
	setenv("SLURM_USER", "alice", 1);
	cr_assert_eq(config_load(cfg, &err), 0, "%s", err);
	return config_cluster(cfg, name);
}

Test(config, the_probe_answer_is_remembered_in_the_file_with_its_comments)
{
	static const char text[] =
	    "# my clusters\n"
	    "default_cluster: ord\n"
	    "clusters:\n"
	    "  ord:\n"
	    "    hosts: login1   # the first\n"
	    "    partitions: polar\n"
	    "  lab:\n"
	    "    user: bob\n"
	    "    nccl_ladder:\n"
	    "      - NCCL_P2P_DISABLE=1\n"
	    "theme: light\n";
	struct config cfg;
	const struct cluster_cfg *c;
	char *err = NULL, *now;

	clear_env();
	write_config(text);
	cr_assert_eq(config_save_nccl_env("ord", "NCCL_P2P_DISABLE=1", NULL, &err), 0, "%s", err);
	cr_assert_eq(config_save_nccl_env("lab", "", NULL, &err), 0, "%s", err);
	cr_assert_eq(config_save_nccl_env("new", "NCCL_IB_DISABLE=1", NULL, &err), 0, "%s", err);
	now = read_back(getenv("TAOTOP_CONFIG"));
	cr_assert_str_eq(now,
	    "# my clusters\n"
	    "default_cluster: ord\n"
	    "clusters:\n"
	    "  ord:\n"
	    "    hosts: login1   # the first\n"
	    "    partitions: polar\n"
	    "    nccl_env: \"NCCL_P2P_DISABLE=1\"\n"
	    "  lab:\n"
	    "    user: bob\n"
	    "    nccl_ladder:\n"
	    "      - NCCL_P2P_DISABLE=1\n"
	    "    nccl_env: \"\"\n"
	    "  \"new\":\n"
	    "    nccl_env: \"NCCL_IB_DISABLE=1\"\n"
	    "theme: light\n");
	/* Again: the field's line is replaced, not added twice. */
	cr_assert_eq(config_save_nccl_env("ord", "NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1", NULL, &err), 0,
	    "%s", err);
	c = reload(&cfg, "ord");
	cr_assert_str_eq(c->nccl_env, "NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1");
	cr_assert_str_eq(config_cluster(&cfg, "lab")->nccl_env, "");
	cr_assert_str_eq(config_cluster(&cfg, "lab")->nccl_ladder, "NCCL_P2P_DISABLE=1\n");
	cr_assert_eq(c->retry_budget, 10);
	cr_assert_eq(c->nccl_probe_timeout_s, 120);
	config_free(&cfg);
}

Test(config, without_a_file_the_probe_answer_makes_one)
{
	char dir[] = "/tmp/taotop-cfgdir-XXXXXX", path[256];
	struct config cfg;
	char *err = NULL;

	clear_env();
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/config.yaml", dir);
	setenv("TAOTOP_CONFIG", path, 1);
	setenv("TAOTOP_CLUSTER", "rig", 1);
	cr_assert_eq(config_save_nccl_env("rig", "NCCL_P2P_DISABLE=1", NULL, &err), 0, "%s", err);
	cr_assert_str_eq(reload(&cfg, "rig")->nccl_env, "NCCL_P2P_DISABLE=1");
	cr_assert_str_eq(config_cluster(&cfg, "rig")->hosts, "login1", "the environment still counts");
	config_free(&cfg);
}

Test(config, bad_multi_node_fields_name_their_place)
{
	struct config cfg;
	char *err = NULL;

	clear_env();
	write_config("clusters:\n  a:\n    hosts: h\n    user: u\n    retry_budget: 11\n");
	cr_assert_neq(config_load(&cfg, &err), 0);
	cr_assert_not_null(strstr(err, ":5:19: cluster 'a': field 'retry_budget' must be a number "
	    "from 0 to 10"), "%s", err);
	free(err);
	err = NULL;
	write_config("clusters:\n  a:\n    hosts: h\n    user: u\n    nccl_ladder: NCCL_P2P_DISABLE=1\n");
	cr_assert_neq(config_load(&cfg, &err), 0);
	cr_assert_not_null(strstr(err, "field 'nccl_ladder' is a list of texts"), "%s", err);
	free(err);
}

Test(config, the_columns_picked_replace_the_field_and_keep_the_rest)
{
	const char *const picked[] = { "state", "name", "slurm" };
	const char *const none[] = { NULL };
	char *err = NULL, *now;

	clear_env();
	/* A block list between comments and other fields: its lines give way
	 * to one. */
	write_config("# mine\ntheme: light\ncolumns:\n  - id\n  - reason   # why\nnotify: [bell]\n"
	    "clusters:\n  a:\n    hosts: h\n    user: u\n");
	cr_assert_eq(config_save_columns(picked, 3, &err), 0, "%s", err);
	now = read_back(getenv("TAOTOP_CONFIG"));
	cr_assert_str_eq(now, "# mine\ntheme: light\ncolumns: [state, name, slurm]\nnotify: [bell]\n"
	    "clusters:\n  a:\n    hosts: h\n    user: u\n");
	/* Again: replaced, not added twice; the file still loads. */
	cr_assert_eq(config_save_columns(picked, 2, &err), 0, "%s", err);
	now = read_back(getenv("TAOTOP_CONFIG"));
	cr_assert_str_eq(now, "# mine\ntheme: light\ncolumns: [state, name]\nnotify: [bell]\n"
	    "clusters:\n  a:\n    hosts: h\n    user: u\n");
	{
		struct config cfg;
		cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
		cr_assert_eq(cfg.ncolumns, 2);
		cr_expect_str_eq(cfg.columns[0].name, "state");
		cr_expect_str_eq(cfg.columns[1].name, "name");
		config_free(&cfg);
	}
	/* None: the field goes (taotop chooses for the width again). */
	cr_assert_eq(config_save_columns(none, 0, &err), 0, "%s", err);
	now = read_back(getenv("TAOTOP_CONFIG"));
	cr_assert_str_eq(now, "# mine\ntheme: light\nnotify: [bell]\nclusters:\n  a:\n    hosts: h\n"
	    "    user: u\n");
	/* Absent: added at the end. */
	cr_assert_eq(config_save_columns(picked, 1, &err), 0, "%s", err);
	now = read_back(getenv("TAOTOP_CONFIG"));
	cr_assert_str_eq(now, "# mine\ntheme: light\nnotify: [bell]\nclusters:\n  a:\n    hosts: h\n    user: u\n"
	    "columns: [state]\n");
}

/* The monitor gets keys and columns as data, each with its place in the
 * file (line:column of the value), to name in a message; it checks the
 * names itself. */
Test(config, keys_and_columns_come_in_order_with_their_places)
{
	struct config cfg;
	char *err = NULL;

	clear_env();
	write_config("# mine\nkeys:\n  cancel: x\n  retry:   q\ncolumns: [state, name,  slurm]\n"
	    "clusters:\n  a:\n    hosts: h\n    user: u\n");
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_assert_eq(cfg.nkeys, 2);
	cr_expect_str_eq(cfg.keys[0].name, "cancel");
	cr_expect_str_eq(cfg.keys[0].key, "x");
	cr_expect_eq(cfg.keys[0].line, 3);
	cr_expect_eq(cfg.keys[0].col, 11);
	cr_expect_str_eq(cfg.keys[1].name, "retry");
	cr_expect_str_eq(cfg.keys[1].key, "q");
	cr_expect_eq(cfg.keys[1].line, 4);
	cr_expect_eq(cfg.keys[1].col, 12);
	cr_assert_eq(cfg.ncolumns, 3);
	cr_expect_str_eq(cfg.columns[0].name, "state");
	cr_expect_null(cfg.columns[0].key);
	cr_expect_eq(cfg.columns[0].line, 5);
	cr_expect_eq(cfg.columns[0].col, 11);
	cr_expect_str_eq(cfg.columns[2].name, "slurm");
	cr_expect_eq(cfg.columns[2].col, 25);
	config_free(&cfg);

	/* Neither in the file: none, and nothing to free. */
	write_config("clusters:\n  a:\n    hosts: h\n    user: u\n");
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_expect_eq(cfg.nkeys, 0);
	cr_expect_eq(cfg.ncolumns, 0);
	cr_expect_null(cfg.keys);
	cr_expect_null(cfg.columns);
	config_free(&cfg);
}

Test(config, columns_are_not_saved_into_a_file_that_does_not_parse)
{
	const char *const picked[] = { "state" };
	char *err = NULL, *now;
	const char *bad = "theme: [light\ncolumns: [id]\n";

	clear_env();
	write_config(bad);
	cr_assert_neq(config_save_columns(picked, 1, &err), 0);
	cr_assert_not_null(strstr(err, "fix it, then taotop can save the columns there"), "%s", err);
	free(err);
	now = read_back(getenv("TAOTOP_CONFIG"));
	cr_assert_str_eq(now, bad, "the file was changed");
}

Test(config, the_history_window_is_bounded_and_zero_turns_it_off)
{
	struct config cfg;
	char *err = NULL;
	const char *off = "clusters:\n  c:\n    hosts: h\n    user: u\n    history_days: 0\n";
	const char *bad = "clusters:\n  c:\n    hosts: h\n    user: u\n    history_max: 9000\n";

	cr_assert_eq(config_parse("off.yaml", off, strlen(off), &cfg, &err), 0, "%s", err);
	cr_expect_eq(cfg.clusters[0].history_days, 0);
	config_free(&cfg);
	cr_expect_neq(config_parse("bad.yaml", bad, strlen(bad), &cfg, &err), 0);
	cr_expect(err != NULL && strstr(err, "bad.yaml:5:") != NULL &&
	    strstr(err, "'history_max' must be a number from 1 to 5000") != NULL, "%s", err);
	free(err);
}

/* Jump hosts and password authentication (issue 18): the file's fields, the
 * environment over them, what reaches the ssh layer, and a bad value. */
Test(config, jump_hosts_and_password_auth)
{
	struct config cfg;
	struct conn_target t;
	char *err = NULL;
	const struct cluster_cfg *cl;

	clear_env();
	write_config("clusters:\n  a:\n    hosts: login\n    user: u\n    jump: me@bastion:2200,gw\n"
	    "    password_auth: true\n  b:\n    hosts: h\n    user: u\n");
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cl = config_cluster(&cfg, "a");
	cr_assert_str_eq(cl->jump, "me@bastion:2200,gw");
	cr_assert_eq(cl->password_auth, 1);
	cluster_target(cl, &t);
	cr_expect_str_eq(t.jump, "me@bastion:2200,gw");
	cr_expect_eq(t.password_auth, 1);
	cl = config_cluster(&cfg, "b");
	cr_expect_null(cl->jump, "no jump: ~/.ssh/config's ProxyJump decides");
	cr_expect_eq(cl->password_auth, 0, "password authentication is off unless turned on");
	config_free(&cfg);

	setenv("TAOTOP_JUMP", "none", 1);
	cr_assert_eq(config_load(&cfg, &err), 0, "%s", err);
	cr_expect_str_eq(config_cluster(&cfg, "a")->jump, "none");
	config_free(&cfg);
	unsetenv("TAOTOP_JUMP");

	write_config("clusters:\n  a:\n    hosts: h\n    user: u\n    password_auth: sometimes\n");
	cr_assert_neq(config_load(&cfg, &err), 0);
	cr_expect_not_null(strstr(err, ":5:20: cluster 'a': field 'password_auth' is true or false, "
	    "not 'sometimes'"), "%s", err);
	free(err);
}

/* How long a job SLURM still runs after TAO's final line is left before
 * taotop cancels it: 120 s unless the cluster says. */
Test(config, ending_grace_seconds)
{
	struct config cfg;
	char *err = NULL;
	const char *set = "clusters:\n  c:\n    hosts: h\n    user: u\n    ending_grace_seconds: 30\n"
	    "  d:\n    hosts: h\n    user: u\n";
	const char *bad = "clusters:\n  c:\n    hosts: h\n    user: u\n    ending_grace_seconds: 0\n";

	cr_assert_eq(config_parse("set.yaml", set, strlen(set), &cfg, &err), 0, "%s", err);
	cr_expect_eq(cfg.clusters[0].ending_grace_s, 30);
	config_cluster_defaults(&cfg.clusters[1]);
	cr_expect_eq(cfg.clusters[1].ending_grace_s, 120);
	config_free(&cfg);
	cr_expect_neq(config_parse("bad.yaml", bad, strlen(bad), &cfg, &err), 0);
	cr_expect(err != NULL && strstr(err, "bad.yaml:5:") != NULL &&
	    strstr(err, "'ending_grace_seconds' must be a number from 1 to 86400") != NULL, "%s", err);
	free(err);
}

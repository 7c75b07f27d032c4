/* The first-run setup's fields, the hosts of an ssh config, and the
 * cluster added to a config file that has comments and clusters already. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/config/setup.h"
#include "ssh/sshconfig.h"
#include "util/file.h"

static char dir[] = "/tmp/taotop-setup-XXXXXX";

static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
	setenv("HOME", dir, 1);
	unsetenv("SLURM_HOSTNAME");
	unsetenv("TAOTOP_KNOWN_HOSTS");
	unsetenv("TAOTOP_CLUSTER");
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(setup, .init = make_dir, .fini = remove_dir);

static char *path_in(const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);
	sprintf(p, "%s/%s", dir, name);
	return p;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static char *problem(struct setup_draft *d, enum setup_field f, const char *value)
{
	setup_set(d, f, value);
	return setup_problem(d, f, NULL);
}

Test(setup, each_field_is_checked_in_taotops_words)
{
	struct setup_draft d;
	char *p, *key = path_in("id_test");

	setup_draft_init(&d);
	p = problem(&d, SF_HOSTS, "");
	cr_expect(p != NULL && strstr(p, "give at least one") != NULL, "%s", p);
	free(p);
	p = problem(&d, SF_HOSTS, "login1 login2");
	cr_expect(p != NULL && strstr(p, "'login1 login2'") != NULL, "%s", p);
	free(p);
	p = problem(&d, SF_HOSTS, "login1;touch x");
	cr_expect_not_null(p, "a shell word passed as a host");
	free(p);
	cr_expect_null(problem(&d, SF_HOSTS, "  alice@login1.ord.example:2222,[::1]:22  "),
	    "blanks around a paste are not part of it");
	cr_expect_str_eq(d.value[SF_HOSTS], "alice@login1.ord.example:2222,[::1]:22");

	cr_expect_null(problem(&d, SF_RESULTS, "lustre:///lustre/fsw/me/tao"));
	p = problem(&d, SF_RESULTS, "/home/me/results");
	cr_expect(p != NULL && strstr(p, "lustre:///") != NULL, "a laptop's path: %s", p);
	free(p);
	p = problem(&d, SF_RESULTS, "file:///home/me/results");
	cr_expect(p != NULL && strstr(p, "results root") != NULL, "%s", p);
	free(p);
	p = problem(&d, SF_PARTITIONS, "polar,gpu a");
	cr_expect(p != NULL && strstr(p, "gpu a") != NULL, "%s", p);
	free(p);
	cr_expect_null(problem(&d, SF_PARTITIONS, "polar,polar3"));
	p = problem(&d, SF_ACCOUNT, "--account=x");
	cr_expect_not_null(p);
	free(p);
	p = problem(&d, SF_USER, "al ice");
	cr_expect_not_null(p);
	free(p);
	p = problem(&d, SF_KEY, key);
	cr_expect(p != NULL && strstr(p, "No such file") != NULL, "%s", p);
	free(p);
	write_file(key, "not really a key\n");
	cr_expect_null(problem(&d, SF_KEY, "~/id_test"), "~ is the home folder");
	free(key);
	setup_draft_free(&d);
}

Test(setup, the_name_defaults_to_the_first_hosts_and_must_be_new)
{
	struct setup_draft d;
	struct config cfg;
	struct cluster_cfg cl;
	char *p, *name;

	setup_draft_init(&d);
	setup_set(&d, SF_HOSTS, "alice@login1.ord.example:2222,login2.ord.example");
	name = setup_default_name(&d);
	cr_expect_str_eq(name, "login1");
	free(name);
	memset(&cfg, 0, sizeof(cfg));
	cfg.clusters = calloc(1, sizeof(*cfg.clusters));
	cfg.clusters[0].name = strdup("login1");
	cfg.n = 1;
	p = setup_problem(&d, SF_NAME, &cfg);
	cr_expect(p != NULL && strstr(p, "'login1' is configured already") != NULL, "%s", p);
	free(p);
	setup_set(&d, SF_NAME, "ord");
	cr_expect_null(setup_problem(&d, SF_NAME, &cfg));
	config_free(&cfg);

	/* The cluster tried: the seed's defaults for what was not said. */
	setup_set(&d, SF_KEY, "~/.ssh/id_ed25519");
	setup_cluster(&d, &cl);
	cr_expect_str_eq(cl.name, "ord");
	cr_expect_null(cl.user, "no user typed: ssh's");
	cr_expect_str_eq(cl.partitions, "polar,polar3,polar4,grizzly");
	cr_expect_eq(cl.retry_budget, 10);
	cr_expect(strncmp(cl.key_path, dir, strlen(dir)) == 0, "%s", cl.key_path);
	config_cluster_free(&cl);
	setup_draft_free(&d);
}

Test(setup, the_ssh_configs_hosts_are_offered_and_resolved_as_ssh_would)
{
	char *cfg = path_in("ssh_config"), *inc = path_in("more.conf"), **h, *text;
	char *name = NULL, *user = NULL;
	int port = 0;
	size_t n, i;

	text = malloc(4096);
	snprintf(text, 4096, "# mine\nHost ord-login ord\n  HostName login1.ord.example\n"
	    "  Port 2222\n  User alice\nhost=lab\n  hostname 10.0.0.5\nHost *.example !bad\n"
	    "  User nobody\nInclude %s\nHost ord\n", inc);
	write_file(cfg, text);
	free(text);
	write_file(inc, "Host included-one # a comment\n");
	n = sshcfg_hosts(cfg, &h);
	cr_assert_eq(n, 4, "%zu hosts", n);
	cr_expect_str_eq(h[0], "ord-login");
	cr_expect_str_eq(h[1], "ord");
	cr_expect_str_eq(h[2], "lab");
	cr_expect_str_eq(h[3], "included-one");
	for (i = 0; i < n; i++)
		free(h[i]);
	free(h);

	cr_assert_eq(sshcfg_resolve(cfg, "ord", &name, &port, &user), 0);
	cr_expect_str_eq(name, "login1.ord.example");
	cr_expect_eq(port, 2222);
	cr_expect_str_eq(user, "alice");
	free(name), free(user);
	cr_assert_eq(sshcfg_resolve(cfg, "lab", &name, &port, &user), 0);
	cr_expect_str_eq(name, "10.0.0.5");
	cr_expect_eq(port, 22);
	free(name), free(user);

	/* No file: no hosts, and a host is itself. */
	cr_expect_eq(sshcfg_hosts("/nonexistent/ssh_config", &h), 0);
	free(h);
	free(cfg), free(inc);
}

Test(setup, a_cluster_is_added_keeping_the_file_and_never_twice)
{
	char *cfg = path_in("config.yaml"), *text, *err = NULL, *name = NULL, *before;
	struct setup_draft d;
	struct config loaded;

	setenv("TAOTOP_CONFIG", cfg, 1);
	write_file(cfg, "# my clusters\ntheme: light\nclusters:\n  ord:\n    hosts: login1\n"
	    "    # the lab's, below\n");
	setup_draft_init(&d);
	setup_set(&d, SF_HOSTS, "lab-login:2222");
	setup_set(&d, SF_KEY, "~/.ssh/lab");
	setup_set(&d, SF_RESULTS, "lustre:///scratch/me/tao");
	cr_assert_eq(setup_write(&d, &name, &err), 0, "%s", err);
	cr_expect_str_eq(name, "lab-login");
	free(name);
	text = file_read_all(cfg, NULL, &err);
	cr_assert_not_null(text);
	cr_expect(strstr(text, "# my clusters\ntheme: light\nclusters:\n  ord:\n    hosts: login1\n") ==
	    text, "%s", text);
	cr_expect(strstr(text, "  \"lab-login\":\n    hosts: \"lab-login:2222\"\n    key: \"~/.ssh/lab\"\n"
	    "    results_root: \"lustre:///scratch/me/tao\"\n") != NULL, "%s", text);
	cr_expect(strstr(text, "user:") == NULL && strstr(text, "partitions:") == NULL,
	    "only what was typed: %s", text);
	before = text;

	/* It reads back as the user meant it. */
	cr_assert_eq(config_load(&loaded, &err), 0, "%s", err);
	cr_expect_eq(loaded.n, 2);
	cr_expect_str_eq(loaded.clusters[1].name, "lab-login");
	cr_expect(strstr(loaded.clusters[1].key_path, "/.ssh/lab") != NULL);
	config_free(&loaded);

	/* The same name again: refused, the file as it was. */
	cr_expect_eq(setup_write(&d, &name, &err), -1);
	cr_expect(err != NULL && strstr(err, "'lab-login' already") != NULL, "%s", err);
	free(err), err = NULL;
	free(name);
	text = file_read_all(cfg, NULL, &err);
	cr_expect_str_eq(text, before);
	free(text), free(before);

	/* No file at all: made, with its folder. */
	free(cfg);
	cfg = path_in("new/taotop/config.yaml");
	setenv("TAOTOP_CONFIG", cfg, 1);
	cr_assert_eq(setup_write(&d, &name, &err), 0, "%s", err);
	free(name);
	cr_assert_eq(config_load(&loaded, &err), 0, "%s", err);
	cr_expect_eq(loaded.n, 1);
	config_free(&loaded);
	unsetenv("TAOTOP_CONFIG");
	setup_draft_free(&d);
	free(cfg);
}

/*
 * A new user's first minutes, as they go: no config at all, an ssh config
 * that names the cluster (as most users have one), an empty known_hosts.
 * `taotop` opens on the setup form, `taotop init` asks on a terminal, and
 * either way nothing is written before the user says yes; after, the jobs
 * list works. A host of ~/.ssh/config is taken with its User, Port and
 * IdentityFile, as ssh itself takes them.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helper_rig.h"
#include "helper_screen.h"
#include "helper_user.h"
#include "util/file.h"
#include "util/xmalloc.h"

TestSuite(firstrun, .fini = screen_kill_all);

/* A new user's folder: an ssh config naming the rig as `rigalias` (with
 * its port, user and key: nothing else says them), an empty known_hosts,
 * and no taotop config. */
struct newcomer {
	char	*dir;
	char	*env;		/* for rig_taotop and screens: no host, user or key */
	char	*config;	/* where the config will be written */
};

static void newcomer_open(struct newcomer *n)
{
	const struct rig *r = rig_get();
	char tmpl[] = "/tmp/taotop-newcomer-XXXXXX";
	FILE *f;
	char *p;

	cr_assert_not_null(mkdtemp(tmpl));
	n->dir = xstrdup(tmpl);
	p = xasprintf("%s/ssh_config", n->dir);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fprintf(f, "# a user's ~/.ssh/config\nHost rigalias\n    HostName %s\n    Port %d\n"
	    "    User %s\n    IdentityFile %s\n\nHost *.example.org\n    User nobody\n",
	    r->host, r->port, r->user, r->key);
	fclose(f);
	free(p);
	cr_assert_eq(rig_local("mkdir -p %s/state && : > %s/known_hosts", n->dir, n->dir), 0);
	n->config = xasprintf("%s/config/taotop/config.yaml", n->dir);
	n->env = xasprintf("SLURM_HOSTNAME= SLURM_USER= SSH_KEY_PATH= TAOTOP_CLUSTER= "
	    "TAOTOP_CONFIG= XDG_CONFIG_HOME=%s/config XDG_STATE_HOME=%s/state "
	    "TAOTOP_SSH_CONFIG=%s/ssh_config TAOTOP_KNOWN_HOSTS=%s/known_hosts", n->dir, n->dir,
	    n->dir, n->dir);
}

static void newcomer_close(struct newcomer *n)
{
	rig_local("rm -rf %s", n->dir);
	free(n->dir), free(n->env), free(n->config);
}

static char *read_config(const struct newcomer *n)
{
	char *err = NULL, *text = file_read_all(n->config, NULL, &err);

	cr_assert_not_null(text, "%s", err);
	return text;
}

/* A job of the user's, so that the jobs list has something to show. */
static char *a_running_job(const char *name)
{
	char *opts = xasprintf("-J %s -p cpu_long -t 5", name), *id;

	id = rig_sbatch(opts, "'sleep 120'");
	free(opts);
	free(rig_wait_state(id, "RUNNING", 60));
	return id;
}

static void cancel(const char *id)
{
	char *cmd = xasprintf("scancel %s", id);

	free(rig_ssh_ok(cmd));
	free(cmd);
}

Test(firstrun, taotop_with_no_config_opens_the_setup_form_and_then_the_jobs, .timeout = 180)
{
	const struct rig *r = rig_get();
	struct newcomer n;
	struct screen s;
	struct screen_opts o = { .cols = 120, .lines = 40 };
	char *job = a_running_job("firstrun-form"), *text, *results;
	int row;

	newcomer_open(&n);
	o.env = n.env;		/* after the rig's own variables: it wins */
	screen_open(&s, "firstrun", &o);

	/* Not an error: the form, offering ~/.ssh/config's one host (the
	 * pattern is no host to offer). */
	screen_wait(&s, 20, "set up a cluster", "Nothing is written until you confirm", NULL);
	screen_wait_line(&s, 5, "In ~/.ssh/config", "rigalias", NULL);
	text = screen_text(&s);
	cr_expect(strstr(text, "example.org") == NULL, "a Host pattern was offered:\n%s", text);
	free(text);

	/* The user takes the offered host: ssh's config says where it is. */
	screen_keys(&s, "C-n");
	screen_wait_line(&s, 5, "login hosts", "rigalias", NULL);
	screen_wait_line(&s, 5, "rigalias is", r->host, NULL);
	/* Down to the results root, typed; the user stays empty (ssh's). */
	screen_keys(&s, "Down");
	screen_wait(&s, 5, "empty: 'rigalias'", NULL);
	screen_keys(&s, "Down");
	screen_wait_line(&s, 5, "empty:", r->user, "as ssh takes it", NULL);
	screen_keys(&s, "Down Down");
	results = xasprintf("lustre://%s/tao-tests/firstrun-%d", r->shared, rig_uniq());
	screen_type(&s, results);
	screen_wait_line(&s, 5, "results root", results, NULL);
	screen_keys(&s, "Down Down Down Enter");

	/* The host key is asked about with its fingerprint; nothing is
	 * written while the user decides. */
	screen_wait(&s, 30, "Unknown host key", "SHA256:", "a: accept and remember", NULL);
	cr_expect(access(n.config, F_OK) != 0, "written before the user said yes");
	screen_keys(&s, "a");
	screen_wait(&s, 60, "Preflight:", "results root", "write cluster 'rigalias'", NULL);
	screen_wait_line(&s, 5, "partitions", NULL);
	cr_expect(access(n.config, F_OK) != 0, "written before the user said yes");

	/* Yes: the config, and the monitor's jobs list with the user's job. */
	screen_keys(&s, "Enter");
	screen_wait_line(&s, 30, "firstrun-form", "Running", NULL);
	row = screen_row_of(&s, "STATE");
	cr_expect(row >= 0, "no jobs list header");
	text = read_config(&n);
	cr_expect(strstr(text, "\"rigalias\":") != NULL && strstr(text, "hosts: \"rigalias\"") != NULL,
	    "%s", text);
	cr_expect(strstr(text, results) != NULL, "%s", text);
	cr_expect(strstr(text, "user:") == NULL, "a user nobody typed was written:\n%s", text);
	free(text);
	/* The host key was remembered where taotop was told to keep them. */
	cr_expect_eq(rig_local("grep -q '%d' %s/known_hosts", r->port, n.dir), 0);

	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	cancel(job);
	free(job), free(results);
	newcomer_close(&n);
}

/* A new user's first `taotop`: the setup form, open. */
static void form_open(struct newcomer *n, struct screen *s, const char *name, int cols)
{
	struct screen_opts o = { .cols = cols, .lines = 30 };

	newcomer_open(n);
	o.env = n->env;
	screen_open(s, name, &o);
	screen_wait(s, 20, "set up a cluster", NULL);
}

/* Escape leaves the form: taotop exits 0 and has written nothing. */
static void form_quit(struct newcomer *n, struct screen *s)
{
	screen_keys(s, "Escape");
	cr_expect_eq(screen_wait_exit(s, 10), 0);
	cr_expect(access(n->config, F_OK) != 0, "leaving the form wrote a config");
	screen_close(s);
	newcomer_close(n);
}

Test(firstrun, quitting_the_form_writes_nothing, .timeout = 60)
{
	struct newcomer n;
	struct screen s;

	form_open(&n, &s, "firstrun-quit", 100);
	screen_type(&s, "login.example.org");
	form_quit(&n, &s);
}

Test(firstrun, a_wrong_field_is_named_and_the_form_stays, .timeout = 60)
{
	struct newcomer n;
	struct screen s;

	form_open(&n, &s, "firstrun-wrong", 120);
	screen_type(&s, "rigalias");
	/* A local path is no results root: the cluster cannot read it. */
	screen_keys(&s, "Down Down Down Down");
	screen_type(&s, "file:///home/me/results");
	screen_keys(&s, "Down Down Down Enter");
	screen_wait(&s, 10, "results root", "lustre:///", NULL);
	screen_wait_line(&s, 5, "results root", "file:///home/me/results_", NULL);
	cr_expect(access(n.config, F_OK) != 0);
	form_quit(&n, &s);
}

Test(firstrun, init_asks_on_a_terminal_and_writes_only_on_yes, .timeout = 180)
{
	const struct rig *r = rig_get();
	struct newcomer n;
	struct screen s;
	struct screen_opts o = { .cols = 160, .lines = 50, .args = "init" };
	char *out = NULL, *text, *results;

	newcomer_open(&n);
	o.env = n.env;
	screen_open(&s, "firstrun-init", &o);
	screen_wait_line(&s, 20, "Hosts in", "ssh_config", "rigalias", NULL);
	screen_wait(&s, 5, "login hosts (", NULL);
	screen_type(&s, "rigalias");
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "cluster name (", NULL);
	screen_type(&s, "my lab");	/* a space: refused, asked again */
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "cluster name 'my lab': a cluster's name holds only letters", NULL);
	screen_type(&s, "mylab");
	screen_keys(&s, "Enter");
	screen_wait_line(&s, 5, "user (", r->user, NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "private key (", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "results root (", NULL);
	results = xasprintf("lustre://%s/tao-tests/init-%d", r->shared, rig_uniq());
	screen_type(&s, results);
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "GPU partitions (", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "account (", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 30, "is not known yet", "SHA256:", "[y/N]", NULL);
	screen_type(&s, "y");
	screen_keys(&s, "Enter");
	screen_wait(&s, 60, "Preflight:", "Write cluster 'mylab' to", NULL);
	cr_expect(access(n.config, F_OK) != 0, "written before the user said yes");
	screen_type(&s, "y");
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "Wrote cluster 'mylab'", "[taotop exited 0]", NULL);
	screen_close(&s);

	text = read_config(&n);
	cr_expect(strstr(text, "\"mylab\":") != NULL, "%s", text);
	free(text);
	/* The config works: the CLI lists the user's jobs through it. */
	cr_expect_eq(rig_taotop(n.env, "jobs", &out), 0, "%s", out);
	cr_expect(strstr(out, "ID") != NULL, "%s", out);
	free(out);
	free(results);
	newcomer_close(&n);
}

Test(firstrun, init_without_a_terminal_needs_every_answer_given, .timeout = 120)
{
	const struct rig *r = rig_get();
	struct newcomer n;
	char *out = NULL, *args, *text;

	newcomer_open(&n);
	/* Nothing configured: every verb says how to set one up, not an
	 * error about hosts. */
	cr_expect_eq(rig_taotop(n.env, "jobs", &out), 2, "%s", out);
	cr_expect(strstr(out, "no cluster is configured yet") != NULL &&
	    strstr(out, "taotop init") != NULL, "%s", out);
	free(out);

	/* No hosts and no terminal to ask on. */
	cr_expect_eq(rig_taotop(n.env, "init </dev/null", &out), 2, "%s", out);
	cr_expect(strstr(out, "--hosts") != NULL, "%s", out);
	free(out);

	/* An unknown host key cannot be asked about: refused, nothing written. */
	cr_expect_eq(rig_taotop(n.env, "init --hosts rigalias </dev/null", &out), 3, "%s", out);
	cr_expect(strstr(out, "SHA256:") != NULL && strstr(out, "nothing written") != NULL, "%s",
	    out);
	free(out);
	cr_expect(access(n.config, F_OK) != 0);

	/* The key known: the preflight runs, but without --yes nothing is
	 * written. */
	cr_assert_eq(rig_local("cp %s %s/known_hosts", r->known_hosts, n.dir), 0);
	cr_expect_eq(rig_taotop(n.env, "init --hosts rigalias </dev/null", &out), 1, "%s", out);
	cr_expect(strstr(out, "Preflight:") != NULL && strstr(out, "--yes") != NULL, "%s", out);
	free(out);
	cr_expect(access(n.config, F_OK) != 0);

	args = xasprintf("init --hosts rigalias --name lab --partitions polar,cpu_long "
	    "--results-root lustre://%s/tao-tests/init --yes </dev/null", r->shared);
	cr_expect_eq(rig_taotop(n.env, args, &out), 0, "%s", out);
	free(out);
	/* A second cluster of the same name is refused, the file unchanged. */
	cr_expect_eq(rig_taotop(n.env, args, &out), 2, "%s", out);
	cr_expect(strstr(out, "'lab' is configured already") != NULL, "%s", out);
	free(out);
	free(args);
	text = read_config(&n);
	cr_expect(strstr(text, "partitions: \"polar,cpu_long\"") != NULL, "%s", text);
	cr_expect(strstr(text, "\"lab\":") != NULL &&
	    strstr(strstr(text, "\"lab\":") + 1, "\"lab\":") == NULL, "%s", text);
	free(text);
	newcomer_close(&n);
}

/* `SLURM_HOSTNAME=rigalias taotop jobs` with nothing else: the user, port
 * and key are ~/.ssh/config's, as `ssh rigalias` would take them. */
Test(firstrun, a_host_of_the_ssh_config_brings_its_user_port_and_key, .timeout = 120)
{
	const struct rig *r = rig_get();
	struct newcomer n;
	char *out = NULL, *env, *job = a_running_job("sshcfg-user");

	newcomer_open(&n);
	cr_assert_eq(rig_local("cp %s %s/known_hosts", r->known_hosts, n.dir), 0);
	env = xasprintf("%s SLURM_HOSTNAME=rigalias", n.env);
	cr_expect_eq(rig_taotop(env, "jobs", &out), 0, "%s", out);
	cr_expect(strstr(out, "sshcfg-user") != NULL, "%s", out);
	free(out);
	cancel(job);
	free(env), free(job);
	newcomer_close(&n);
}

/* --yes on a terminal asks nothing: a missing --hosts is said as that,
 * not as a missing terminal. */
Test(firstrun, init_yes_on_a_terminal_asks_nothing, .timeout = 60)
{
	struct newcomer n;
	struct screen s;
	struct screen_opts o = { .cols = 160, .lines = 20, .args = "init --yes" };
	char *text, *path, *err = NULL;

	newcomer_open(&n);
	o.env = n.env;
	screen_open(&s, "firstrun-yes", &o);
	screen_wait(&s, 20, "[taotop exited 2]", NULL);
	text = screen_text(&s);
	cr_expect(strstr(text, "login hosts (") == NULL, "--yes, and a field was asked:\n%s", text);
	free(text);
	/* The sentence, on stderr (the screen's file). */
	path = xasprintf("%s/stderr", s.dir);
	text = file_read_all(path, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	cr_expect(strstr(text, "(--hosts; with --yes nothing is asked)") != NULL, "%s", text);
	cr_expect(strstr(text, "without a terminal") == NULL, "on a terminal:\n%s", text);
	/* That one line and nothing else (no sanitizer's report): said, the
	 * file is emptied for screen_close, which wants no stderr at all. */
	cr_expect(text[0] != '\0' && strchr(text, '\n') == text + strlen(text) - 1,
	    "more than the one line:\n%s", text);
	cr_assert_eq(rig_local(": > %s", path), 0);
	free(text), free(path);
	cr_expect(access(n.config, F_OK) != 0);
	screen_close(&s);
	newcomer_close(&n);
}

/* --user, --key and --account as a user gives them for a host that no ssh
 * config knows: a wrong user or key is refused by the cluster (so they
 * are what taotop connects with), the right ones are written, the jobs
 * list connects through them, and a submit's dry run charges the
 * account. */
Test(firstrun, init_takes_the_user_key_and_account_given, .timeout = 180)
{
	const struct rig *r = rig_get();
	struct newcomer n;
	char *out = NULL, *args, *text, *bundle, *want;

	newcomer_open(&n);
	cr_assert_eq(rig_local("cp %s %s/known_hosts && ssh-keygen -q -t ed25519 -N '' -f %s/other",
	    r->known_hosts, n.dir, n.dir), 0);

	args = xasprintf("init --hosts %s:%d --name keyed --user nobody-here --key %s --yes "
	    "</dev/null", r->host, r->port, r->key);
	cr_expect_eq(rig_taotop(n.env, args, &out), 3, "%s", out);
	cr_expect(strstr(out, "nobody-here") != NULL && strstr(out, "nothing written") != NULL,
	    "%s", out);
	free(out), free(args);
	/* -y, the short form the man page gives. */
	args = xasprintf("init --hosts %s:%d --name keyed --user %s --key %s/other -y </dev/null",
	    r->host, r->port, r->user, n.dir);
	cr_expect_eq(rig_taotop(n.env, args, &out), 3, "another key got in:\n%s", out);
	cr_expect(strstr(out, "nothing written") != NULL, "%s", out);
	free(out), free(args);
	cr_expect(access(n.config, F_OK) != 0);

	args = xasprintf("init --hosts %s:%d --name keyed --user %s --key %s --account vision "
	    "--partitions polar --results-root lustre://%s/tao-tests/keyed-%d --yes </dev/null",
	    r->host, r->port, r->user, r->key, r->shared, rig_uniq());
	cr_expect_eq(rig_taotop(n.env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "Wrote cluster 'keyed'") != NULL, "%s", out);
	free(out), free(args);
	text = read_config(&n);
	want = xasprintf("user: \"%s\"", r->user);
	cr_expect(strstr(text, want) != NULL, "%s", text);
	free(want);
	want = xasprintf("key: \"%s\"", r->key);
	cr_expect(strstr(text, want) != NULL, "%s", text);
	free(want);
	cr_expect(strstr(text, "account: \"vision\"") != NULL, "%s", text);
	free(text);

	cr_expect_eq(rig_taotop(n.env, "jobs", &out), 0, "%s", out);
	cr_expect(strstr(out, "TIME/LIMIT") != NULL, "%s", out);
	free(out);
	text = xasprintf("%s/bundle", n.dir);
	want = xasprintf("%s/tao-tests/keyed-%d", r->shared, rig_uniq());
	cr_assert_eq(rig_local("mkdir -p %s", text), 0);
	bundle = rig_bundle(text, want, "classification_pyt", "true", NULL);
	free(text), free(want);
	args = xasprintf("submit %s --dry-run", bundle);
	cr_expect_eq(rig_taotop(n.env, args, &out), 0, "%s", out);
	text = text_line_with(out, "  account ");
	cr_expect(text != NULL && strstr(text, "vision") && strstr(text, "(the cluster's config)"),
	    "%s", out);
	free(text);
	cr_expect(strstr(out, "#SBATCH --account=vision") != NULL, "%s", out);
	free(out), free(args), free(bundle);
	newcomer_close(&n);
}

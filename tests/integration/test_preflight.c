/* Preflight against the real cluster: what passes, what fails and its fix,
 * and the NGC credentials installed without the key showing anywhere. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/config/preflight.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "util/xmalloc.h"

#define KEY "nvapi-TaoTopTestKey0123456789abcdefghijklmnopqrstuv"

static const struct preflight_check *find(const struct preflight *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->checks[i].name, name) == 0)
			return &p->checks[i];
	cr_assert_fail("no check called %s", name);
	return NULL;
}

static struct cluster_cfg rig_cluster(const char *partitions, const char *root)
{
	struct cluster_cfg cl = { .name = (char *)"rig", .partitions = (char *)partitions,
	    .results_root = (char *)root, .cpu_partition = (char *)"cpu_long" };
	return cl;
}

Test(preflight, the_test_cluster_passes_and_bad_settings_say_how_to_fix_them, .timeout = 60)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	struct preflight p;
	char *err = NULL, *root = xasprintf("lustre://%s/preflight-root", r->shared);

	rig_target(&t);
	struct conn *c = conn_new(&t);
	struct cluster_cfg cl = rig_cluster("polar,polar3,polar4,grizzly", root);
	cr_assert_eq(preflight_run(c, &cl, &p, &err), 0, "%s", err);
	for (size_t i = 0; i < p.n; i++)
		if (strcmp(p.checks[i].name, "ngc credentials") != 0)
			cr_expect(p.checks[i].ok, "%s: %s", p.checks[i].name, p.checks[i].fix);
	cr_expect(p.all_ok);
	preflight_free(&p);

	cl = rig_cluster("polar,nosuch", "/root/not-yours");
	cr_assert_eq(preflight_run(c, &cl, &p, &err), 0, "%s", err);
	cr_expect(!p.all_ok);
	cr_expect(!find(&p, "partitions")->ok);
	cr_expect(strstr(find(&p, "partitions")->fix, "not on this cluster: nosuch;") != NULL, "%s",
	    find(&p, "partitions")->fix);
	cr_expect(!find(&p, "results root")->ok);
	cr_expect(strstr(find(&p, "results root")->fix, "/root/not-yours is not writable") != NULL);
	preflight_free(&p);
	free(root);
	conn_free(c);
}

Test(preflight, ngc_credentials_go_in_0600_and_the_key_shows_nowhere, .timeout = 60)
{
	const struct rig *r = rig_get();
	struct conn_target t;
	char *err = NULL;

	free(rig_ssh_ok("rm -f ~/.config/enroot/.credentials"));
	rig_target(&t);
	struct conn *c = conn_new(&t);
	cr_assert_eq(preflight_install_ngc(c, KEY, 0, &err), 0, "%s", err);
	char *path = xasprintf("%s/.config/enroot/.credentials", r->home);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600);
	char *mode = rig_ssh_ok("grep -c 'machine nvcr.io login $oauthtoken password nvapi-' "
	    "~/.config/enroot/.credentials");
	cr_expect_str_eq(mode, "1");
	free(mode);
	cr_expect_eq(preflight_install_ngc(c, KEY, 0, &err), -1, "an existing file was replaced");
	cr_expect(strstr(err, "already exists") != NULL, "%s", err);
	cr_expect(strstr(err, KEY) == NULL, "the error shows the key");
	free(err), err = NULL;
	cr_expect_eq(preflight_install_ngc(c, "", 0, &err), -1);
	cr_expect(strstr(err, "no NGC API key was given") != NULL, "%s", err);
	free(err), err = NULL;
	/* Replacing: NGC's two lines get the new key, another registry's
	 * line stays, the mode stays 600, the old key is gone. */
	free(rig_ssh_ok("printf 'machine ghcr.io login me password ghp-keep\\n' >> "
	    "~/.config/enroot/.credentials"));
	cr_assert_eq(preflight_install_ngc(c, "nvapi-NewKey42", 1, &err), 0, "%s", err);
	{
		char *text = rig_ssh_ok("cat ~/.config/enroot/.credentials");
		cr_expect(strstr(text, KEY) == NULL, "the old key is kept:\n%s", text);
		cr_expect(strstr(text, "machine nvcr.io login $oauthtoken password nvapi-NewKey42\n")
		    != NULL, "%s", text);
		cr_expect(strstr(text, "machine authn.nvidia.com login $oauthtoken password "
		    "nvapi-NewKey42") != NULL, "%s", text);
		cr_expect(strstr(text, "machine ghcr.io login me password ghp-keep\n") != NULL,
		    "another registry's line was lost:\n%s", text);
		free(text);
	}
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600);
	/* An entry over several lines: whose password line is whose is not
	 * guessed; refused, the file as it was. */
	free(rig_ssh_ok("printf 'machine other.io\\n  login me\\n  password keep\\n' >> "
	    "~/.config/enroot/.credentials"));
	cr_expect_eq(preflight_install_ngc(c, KEY, 1, &err), -1);
	cr_expect(err != NULL && strstr(err, "netrc entries over several lines") != NULL, "%s", err);
	free(err), err = NULL;
	{
		char *text = rig_ssh_ok("cat ~/.config/enroot/.credentials");
		cr_expect(strstr(text, "nvapi-NewKey42") != NULL && strstr(text, "password keep") != NULL,
		    "the file changed:\n%s", text);
		free(text);
	}
	free(rig_ssh_ok("rm -f ~/.config/enroot/.credentials"));
	/* With no file, replacing writes it new. */
	cr_assert_eq(preflight_install_ngc(c, KEY, 1, &err), 0, "%s", err);
	mode = rig_ssh_ok("grep -c 'machine nvcr.io login $oauthtoken password nvapi-' "
	    "~/.config/enroot/.credentials");
	cr_expect_str_eq(mode, "1");
	free(mode);
	free(rig_ssh_ok("rm -f ~/.config/enroot/.credentials"));
	free(path);
	conn_free(c);
}

/* A private nvcr.io image, as its user meets it: the submit's conversion
 * fails with the registry's 401 and says the one-time fix; after
 * `taotop preflight --install-ngc-credentials` the same submit converts it
 * and runs. (Serial with the test above: both touch the one credentials
 * file of the test user.) */
Test(preflight, a_private_image_converts_once_the_credentials_are_installed, .timeout = 240)
{
	const struct rig *r = rig_get();
	char tmpl[] = "/tmp/taotop-private-XXXXXX", *out = NULL, *env, *bundle, *args, *cmd;
	char *remote = xasprintf("%s/preflight-private-%d", r->shared, rig_uniq());
	FILE *f;

	cr_assert_not_null(mkdtemp(tmpl));
	cmd = xasprintf("rm -rf %s && mkdir -p %s/data", remote, remote);
	free(rig_ssh_ok(cmd));
	free(cmd);
	bundle = xasprintf("%s/ea.yaml", tmpl);
	f = fopen(bundle, "w");
	cr_assert_not_null(f);
	fprintf(f, "image: nvcr.io/ea-tao/tao/tao-toolkit:6.1.0-ea\nnetwork_arch: classification_pyt\n"
	    "action: train\ndatasets: [lustre://%s/data]\ngpus: 1\ncpus_per_task: 1\ntime_hours: 0.5\n"
	    "spec:\n  train:\n    num_epochs: 1\n", remote);
	fclose(f);
	env = xasprintf("SLURM_BASE_RESULTS_DIR=lustre://%s/jobs XDG_STATE_HOME=%s/state",
	    remote, tmpl);
	args = xasprintf("submit %s", bundle);
	free(rig_ssh_ok("rm -f ~/.config/enroot/.credentials"));
	cr_expect_eq(rig_taotop(env, args, &out), 1, "a step of submit failed: 1:\n%s", out);
	cr_expect(strstr(out, "401 Unauthorized") != NULL, "the registry's words:\n%s", out);
	cr_expect(strstr(out, "taotop preflight --install-ngc-credentials") != NULL, "%s", out);
	free(out);
	{
		/* The key from a file of the user's (a script's way: no
		 * terminal here to type it); never from the environment. */
		char *keyfile = xasprintf("%s/ngc.key", tmpl), *a;
		f = fopen(keyfile, "w");
		cr_assert_not_null(f);
		fprintf(f, "%s\n", KEY);
		fclose(f);
		cr_assert_eq(chmod(keyfile, 0644), 0);
		a = xasprintf("preflight --install-ngc-credentials --ngc-key-file %s", keyfile);
		cr_expect_eq(rig_taotop(env, a, &out), 1, "%s", out);
		cr_expect(strstr(out, "must be a file of yours that no one else can read or write") != NULL,
		    "a key file others can read is refused:\n%s", out);
		free(out);
		cr_expect_eq(rig_taotop(env, "preflight --install-ngc-credentials", &out), 1, "%s", out);
		cr_expect(strstr(out, "no NGC API key: run this in a terminal to type it") != NULL,
		    "without a terminal or a file:\n%s", out);
		free(out);
		cr_assert_eq(chmod(keyfile, 0600), 0);
		/* A key the registry does not accept (revoked, another
		 * org's): installed, then the submit says it was refused,
		 * not that credentials are missing. */
		{
			char *wrong = xasprintf("%s/wrong.key", tmpl), *wa;
			f = fopen(wrong, "w");
			cr_assert_not_null(f);
			fprintf(f, "nvapi-RevokedKey0123456789abcdefghijklmnopqrstuvwx\n");
			fclose(f);
			cr_assert_eq(chmod(wrong, 0600), 0);
			wa = xasprintf("preflight --install-ngc-credentials --ngc-key-file %s", wrong);
			cr_assert_eq(rig_taotop(env, wa, &out), 0, "%s", out);
			free(out);
			free(wa);
			cr_expect_eq(rig_taotop(env, args, &out), 1, "%s", out);
			cr_expect(strstr(out, "401 Unauthorized") != NULL, "%s", out);
			cr_expect(strstr(out, "refused the NGC key installed on this cluster") != NULL,
			    "a refused key is not a missing one:\n%s", out);
			cr_expect(strstr(out, "taotop preflight --replace-ngc-credentials") != NULL,
			    "%s", out);
			cr_expect(strstr(out, "RevokedKey") == NULL, "the key was printed:\n%s", out);
			free(out);
			/* --install again is refused: the file is there. */
			cr_expect_eq(rig_taotop(env, a, &out), 1, "%s", out);
			cr_expect(strstr(out, "--replace-ngc-credentials replaces its NGC lines") != NULL,
			    "%s", out);
			free(out);
			/* The right key, in its place. */
			wa = xasprintf("preflight --replace-ngc-credentials --ngc-key-file %s", keyfile);
			cr_assert_eq(rig_taotop(env, wa, &out), 0, "%s", out);
			cr_expect(strstr(out, "replaced the NGC lines of ~/.config/enroot/.credentials")
			    != NULL, "%s", out);
			cr_expect(strstr(out, KEY) == NULL, "the key was printed:\n%s", out);
			free(out), free(wa), free(wrong);
		}
		/* An empty key file: refused before any login. */
		{
			char *empty = xasprintf("%s/empty.key", tmpl), *ea;
			f = fopen(empty, "w");
			cr_assert_not_null(f);
			fclose(f);
			cr_assert_eq(chmod(empty, 0600), 0);
			ea = xasprintf("preflight --install-ngc-credentials --ngc-key-file %s", empty);
			cr_expect_eq(rig_taotop("SLURM_HOSTNAME=127.0.0.1:1", ea, &out), 1, "%s", out);
			cr_expect(strstr(out, "empty.key is empty: no key installed") != NULL &&
			    strstr(out, "could not be reached") == NULL, "%s", out);
			free(out), free(ea), free(empty);
		}
		free(a), free(keyfile);
	}
	cr_expect_eq(rig_taotop(env, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "image: converted") != NULL, "%s", out);
	free(out);
	free(rig_ssh_ok("rm -f ~/.config/enroot/.credentials"));
	rig_local("rm -rf %s", tmpl);
	free(args), free(env), free(bundle), free(remote);
}

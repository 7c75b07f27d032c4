/*
 * A results root others can write (a project space), and what another
 * user can leave there: a FIFO or a link where the secrets' sidecar goes,
 * a job folder of their own in place of the user's, a probes folder of
 * theirs with a probe in it, an image of theirs (or one anyone can
 * rewrite). Each is refused with a message naming the path and the fix;
 * nothing is written through what they left, and nothing is submitted.
 * The other user is played by root here (the tests run as root on this
 * machine), leaving files chowned to nobody (65534) on the rig's shared
 * folder, as a foreign user's files look to the test user.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/config/preflight.h"
#include "engine/store/store.h"
#include "engine/submit/submit.h"
#include "engine/track/retry.h"
#include "integration/helper_rig.h"
#include "integration/helper_submit.h"
#include "ssh/conn.h"
#include "util/file.h"
#include "util/xmalloc.h"

#define OTHER "65534"

/* A bundle whose command fails at once: a job to retry. */
static char *failing_bundle(struct sub_env *e)
{
	return sub_bundle(e, "fails",
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\n"
	    "network_arch: classification_pyt\n"
	    "action: train\n"
	    "command: [sh, -c, 'echo no >&2; exit 1']\n"
	    "datasets: [lustre://%B/data/train]\n"
	    "gpus: 1\ncpus_per_task: 1\ntime_hours: 0.5\n"
	    "secrets: [HF_TOKEN]\n");
}

/* The retry record a refused retry of id opened (its id, caller frees). */
static char *retry_record_of(struct sub_env *e, const char *id)
{
	struct job_record **v;
	size_t n, i;
	char *got = NULL;

	cr_assert_eq(store_list(e->store, &v, &n, NULL), 0);
	for (i = 0; i < n; i++)
		if (v[i]->retry_of != NULL && strcmp(v[i]->retry_of, id) == 0 && got == NULL)
			got = xstrdup(v[i]->id);
	store_list_free(v, n);
	return got;
}

/* No SLURM job, pending, running or ended, carries this name. */
static void expect_no_job_named(const char *name)
{
	char *cmd = xasprintf("squeue -h -t all --name=%s -o %%A; echo @@asked", name);
	char *out = rig_ssh_ok(cmd);
	cr_expect_str_eq(out, "@@asked", "a job named %s was submitted", name);
	free(out), free(cmd);
}

static char *slurp_local(const char *path)
{
	char *cmd = xasprintf("cat %s 2>/dev/null", path), *out = NULL;
	const char *argv[] = { "sh", "-c", cmd, NULL };
	rig_run(argv, &out);
	free(cmd);
	return out != NULL ? out : xstrdup("");
}

struct attacked {
	char	*id;		/* the failed job's record */
	char	*dir;		/* its job folder */
	char	*sidecar;
};

static void submit_failing(struct sub_env *e, const char *spec, struct attacked *a)
{
	struct submit_result res;
	char *err = NULL;

	cr_assert_eq(sub_submit(e, spec, &res, &err), 0, "%s", err);
	a->id = xstrdup(res.record_id);
	a->dir = xasprintf("%s/root/%s", e->base, a->id);
	a->sidecar = xasprintf("%s/job_%s.env", a->dir, a->id);
	submit_result_free(&res);
}

/* The retry refused with words naming the path; no job for it. */
static void expect_refused(struct sub_env *e, const struct attacked *a, const char *names,
    const char *words)
{
	char *err = NULL, *nid = NULL, *sid = NULL, *rid;

	cr_expect_eq(retry_job(e->conn, e->store, &e->cl, a->id, "asked by the operator", 0, &nid,
	    &sid, &err), -1, "the retry of %s went on", a->id);
	cr_expect(err != NULL && strstr(err, names) != NULL && strstr(err, words) != NULL,
	    "the message names %s and says '%s': %s", names, words, err);
	cr_expect(err == NULL || strstr(err, SUB_TOKEN) == NULL, "the message shows the secret");
	rid = retry_record_of(e, a->id);
	cr_expect_not_null(rid, "no retry record was opened for %s", a->id);
	if (rid != NULL)
		expect_no_job_named(rid);
	free(err), free(nid), free(sid), free(rid);
}

Test(roots, a_fifo_a_link_or_another_users_folder_at_a_retrys_paths_is_refused, .timeout = 400)
{
	struct sub_env e;
	struct attacked a[3];
	char *spec, *victim, *cap, *got;
	struct stat st;
	int i;

	sub_open(&e, "roots-retry", NULL);
	spec = failing_bundle(&e);
	for (i = 0; i < 3; i++)
		submit_failing(&e, spec, &a[i]);
	for (i = 0; i < 3; i++)
		cr_assert_eq(sub_wait_final(&e, a[i].id, 200), TAO_ERROR, "%s", a[i].id);
	victim = xasprintf("%s/victim.txt", e.base);
	cr_assert_eq(rig_local("echo precious > %s && chown %d %s", victim, rig_get()->uid, victim),
	    0);

	/* 1. A FIFO at the sidecar's path, a reader waiting on it. */
	cap = xasprintf("%s/captured", e.local);
	cr_assert_eq(rig_local("rm -f %s && mkfifo -m 666 %s && chown " OTHER " %s && "
	    "(timeout 120 cat %s > %s 2>&1 &)", a[0].sidecar, a[0].sidecar, a[0].sidecar,
	    a[0].sidecar, cap), 0);
	expect_refused(&e, &a[0], a[0].sidecar, "FIFO");
	cr_expect(lstat(a[0].sidecar, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
	/* Its only writer now is this test: what the reader got is ours. */
	cr_assert_eq(rig_local("echo ours > %s; sleep 0.5", a[0].sidecar), 0);
	got = slurp_local(cap);
	cr_expect_str_eq(got, "ours\n", "bytes of taotop's reached the FIFO");
	free(got);

	/* 2. A link at the sidecar's path to a file of the user's. */
	cr_assert_eq(rig_local("rm -f %s && ln -s %s %s && chown -h " OTHER " %s", a[1].sidecar,
	    victim, a[1].sidecar, a[1].sidecar), 0);
	expect_refused(&e, &a[1], a[1].sidecar, "a link");
	got = slurp_local(victim);
	cr_expect_str_eq(got, "precious\n", "written through the link");
	free(got);
	cr_expect(lstat(a[1].sidecar, &st) == 0 && S_ISLNK(st.st_mode), "the link was replaced");

	/* 3. The root open to all without the sticky bit: the other user
	 * moves the job folder aside and puts theirs in its place, with a
	 * staged sbatch of their own and a link at a temp name. */
	cr_assert_eq(rig_local("chmod 777 %s/root && mv %s %s.moved && mkdir -p %s/sbatch && "
	    "printf '#!/bin/sh\\ntouch %s/PWNED\\n' > %s/sbatch/job_%s.sbatch && "
	    "ln -s %s %s && ln -s %s %s/meta.json.taotop-new && chown -R " OTHER " %s && "
	    "chmod -R 777 %s", e.base, a[2].dir, a[2].dir, a[2].dir, e.base, a[2].dir, a[2].id,
	    victim, a[2].sidecar, victim, a[2].dir, a[2].dir, a[2].dir), 0);
	expect_refused(&e, &a[2], a[2].dir, "not the one taotop made");
	sleep(3);
	cr_expect_eq(rig_local("test -e %s/PWNED", e.base), 1, "the planted sbatch ran");
	got = slurp_local(victim);
	cr_expect_str_eq(got, "precious\n", "written through a planted link");
	free(got);
	cr_assert_eq(rig_local("chmod 755 %s/root", e.base), 0);

	for (i = 0; i < 3; i++)
		free(a[i].id), free(a[i].dir), free(a[i].sidecar);
	free(spec), free(victim), free(cap);
	sub_close(&e);
}

/* A job of two GPUs asks the NCCL probe (no knobs cached): it runs as the
 * job's first step from the job's own new folder, so a probes folder of
 * another user's at the root, open to all, with a probe program and a
 * "passed" output in it, is never used: nothing of it runs or is read,
 * its files stay theirs and as they were. */
Test(roots, another_users_probes_folder_is_never_used, .timeout = 300)
{
	struct sub_env e;
	struct submit_result res;
	char *err = NULL, *spec, *probes, *got, *out;

	sub_open(&e, "roots-probe", NULL);
	free(e.cl.nccl_env);
	e.cl.nccl_env = NULL;
	probes = xasprintf("%s/root/probes", e.base);
	cr_assert_eq(rig_local("mkdir -p %s && printf 'import os\\nos.system(\"touch %s/PWNED\")\\n' "
	    "> %s/nccl_probe.py && echo TAOTOP_PROBE_OK > %s/taotop-nccl-probe-rig-0-1.out && "
	    "chown -R " OTHER " %s && chmod 777 %s", probes, e.base, probes, probes, probes, probes),
	    0);
	spec = sub_bundle(&e, "two",
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\ncommand: [sh, -c, 'exit 0']\ndatasets: [lustre://%B/data/train]\n"
	    "gpus: 2\ncpus_per_task: 1\ntime_hours: 0.5\n");
	memset(&res, 0, sizeof(res));
	cr_assert_eq(sub_submit(&e, spec, &res, &err), 0, "%s", err);
	/* The job's script (as staged and submitted) probes, and names no
	 * file of that folder. */
	got = xasprintf("%s/root/%s/sbatch/job_%s.sbatch", e.base, res.record_id, res.record_id);
	out = file_read_all(got, NULL, &err);
	cr_assert_not_null(out, "%s", err);
	cr_expect_not_null(strstr(out, "\nTAOTOP_PROBE=1\n"), "the job does not probe:\n%s", out);
	cr_expect_null(strstr(out, probes), "the job's script uses %s", probes);
	free(out), free(got);
	free(rig_wait_state(res.slurm_id, "COMPLETED FAILED CANCELLED", 180));
	got = xasprintf("%s/nccl_probe.py", probes);
	cr_expect_eq(rig_local("grep -q PWNED %s && test \"$(stat -c %%u %s)\" = " OTHER, got, got), 0,
	    "their probe was replaced");
	free(got);
	cr_expect_eq(rig_local("test -e %s/PWNED", e.base), 1, "their probe ran");
	free(err), free(spec), free(probes);
	submit_result_free(&res);
	sub_close(&e);
}

/* An image given as a .sqsh: another user's (squashfs magic and all),
 * then the user's own that anyone may rewrite, then the user's own in a
 * folder anyone may write: each refused before anything is written. */
Test(roots, an_image_another_user_could_have_put_or_can_replace_is_refused, .timeout = 200)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record **v;
	const struct rig *r = rig_get();
	char *err = NULL, *spec, *img, *text, *open_dir;
	size_t n;

	sub_open(&e, "roots-image", NULL);
	img = xasprintf("%s/images/planted.sqsh", e.base);
	open_dir = xasprintf("%s/open", e.base);
	cr_assert_eq(rig_local("mkdir -p %s/images %s && printf 'hsqs-not-really' > %s && "
	    "cp %s %s/mine.sqsh && chown " OTHER " %s && chown -R %d %s && chmod 777 %s",
	    e.base, open_dir, img, img, open_dir, img, r->uid, open_dir, open_dir), 0);
	for (int k = 0; k < 3; k++) {
		const char *path = k == 2 ? NULL : img;
		char *p = path ? xstrdup(path) : xasprintf("%s/mine.sqsh", open_dir);
		if (k == 1)
			cr_assert_eq(rig_local("chown %d %s && chmod 666 %s", r->uid, p, p), 0);
		text = xasprintf("image: %s\nnetwork_arch: classification_pyt\naction: train\n"
		    "command: [sh, -c, 'exit 0']\ndatasets: [lustre://%%B/data/train]\ngpus: 1\n"
		    "cpus_per_task: 1\ntime_hours: 0.5\n", p);
		spec = sub_bundle(&e, "img", text);
		memset(&res, 0, sizeof(res));
		cr_expect_neq(sub_submit(&e, spec, &res, &err), 0, "case %d: submitted", k);
		const char *words = k == 0 ? "belongs to uid " OTHER : k == 1
		    ? "can be written by other users" : "in a folder other users can write";
		cr_expect(err != NULL && strstr(err, p) != NULL && strstr(err, words) != NULL &&
		    strstr(err, "nothing was submitted") != NULL, "case %d: %s", k, err);
		submit_result_free(&res);
		free(err), err = NULL;
		free(text), free(spec), free(p);
	}
	cr_expect_eq(store_list(e.store, &v, &n, NULL), 0);
	cr_expect_eq(n, 0, "a record was opened");
	store_list_free(v, n);
	cr_expect_eq(rig_local("ls %s/root | grep -q tao-", e.base), 1, "a job folder was made");
	free(img), free(open_dir);
	sub_close(&e);
}

/* `taotop preflight` on a root anyone may write without the sticky bit,
 * with another user's images folder in it: a line each, naming the path
 * and the fix; with the sticky bit and the folder gone, none. */
Test(roots, preflight_names_what_is_unsafe_about_a_root, .timeout = 120)
{
	const struct rig *r = rig_get();
	char *root = xasprintf("%s/roots-preflight-%d", r->shared, rig_uniq()), *env, *out = NULL;

	cr_assert_eq(rig_local("rm -rf %s && mkdir -p %s/images && chown %d %s && chmod 777 %s && "
	    "chown " OTHER " %s/images", root, root, r->uid, root, root, root), 0);
	env = xasprintf("SLURM_BASE_RESULTS_DIR=lustre://%s XDG_STATE_HOME=/tmp/taotop-roots-%d",
	    root, rig_uniq());
	int rc = rig_taotop(env, "preflight", &out);
	rig_check_sanitizer(rc, out, "preflight");
	cr_expect(strstr(out, "! root safety: ") != NULL, "%s", out);
	char *line = xasprintf("%s can be written by other users and has no sticky bit", root);
	cr_expect(strstr(out, line) != NULL, "%s", out);
	free(line);
	line = xasprintf("chmod +t %s", root);
	cr_expect(strstr(out, line) != NULL, "%s", out);
	free(line);
	line = xasprintf("%s/images belongs to uid " OTHER ", not to you", root);
	cr_expect(strstr(out, line) != NULL, "%s", out);
	free(line);
	free(out);

	cr_assert_eq(rig_local("chmod 1777 %s && rm -rf %s/images", root, root), 0);
	rc = rig_taotop(env, "preflight", &out);
	rig_check_sanitizer(rc, out, "preflight");
	cr_expect(strstr(out, "\xe2\x9c\x93 root safety") != NULL, "%s", out);
	cr_expect(strstr(out, "! root safety") == NULL, "%s", out);
	free(out);
	cr_assert_eq(rig_local("rm -rf %s", root), 0);
	free(root), free(env);
}

/* A registry image: its images folder another user's (a conversion would
 * write its files there and the image then run), then the user's own
 * folder with another user's file at the converted image's name. Both
 * refused, naming the path; nothing converted, nothing submitted. */
Test(roots, another_users_images_folder_or_cached_image_is_refused, .timeout = 200)
{
	struct sub_env e;
	struct submit_result res;
	struct job_record **v;
	const struct rig *r = rig_get();
	char *err = NULL, *spec, *theirs, *cached, *out, *cmd;
	size_t n;

	sub_open(&e, "roots-cache", NULL);
	theirs = xasprintf("%s/theirs-images", e.base);
	cr_assert_eq(rig_local("mkdir -p %s && chown " OTHER " %s && chmod 777 %s", theirs, theirs,
	    theirs), 0);
	free(e.cl.image_cache);
	e.cl.image_cache = xstrdup(theirs);
	spec = sub_bundle(&e, "registry",
	    "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: classification_pyt\n"
	    "action: train\ncommand: [sh, -c, 'exit 0']\ndatasets: [lustre://%B/data/train]\n"
	    "gpus: 1\ncpus_per_task: 1\ntime_hours: 0.5\n");
	memset(&res, 0, sizeof(res));
	cr_expect_neq(sub_submit(&e, spec, &res, &err), 0, "converted into another user's folder");
	cr_expect(err != NULL && strstr(err, theirs) != NULL &&
	    strstr(err, "belongs to uid " OTHER) != NULL &&
	    strstr(err, "nothing was converted or submitted") != NULL, "%s", err);
	submit_result_free(&res);
	free(err), err = NULL;
	cmd = xasprintf("find %s -user %d | wc -l", theirs, r->uid);
	out = rig_ssh_ok(cmd);
	cr_expect_str_eq(out, "0", "files of the user's were written into %s", theirs);
	free(out), free(cmd);

	/* The user's own folder, another user's file at the image's name. */
	free(e.cl.image_cache);
	e.cl.image_cache = xasprintf("%s/images", e.base);
	cached = xasprintf("%s/images/nvcr.io+nvidia+tao+tao-toolkit+5.5.0-pyt.sqsh", e.base);
	cr_assert_eq(rig_local("mkdir -p %s/images && chown %d %s/images && printf 'hsqs-planted' > %s "
	    "&& chown " OTHER " %s", e.base, r->uid, e.base, cached, cached), 0);
	memset(&res, 0, sizeof(res));
	cr_expect_neq(sub_submit(&e, spec, &res, &err), 0, "another user's image was run");
	cr_expect(err != NULL && strstr(err, cached) != NULL &&
	    strstr(err, "belongs to uid " OTHER) != NULL &&
	    strstr(err, "nothing was submitted") != NULL, "%s", err);
	submit_result_free(&res);
	cr_expect_eq(store_list(e.store, &v, &n, NULL), 0);
	cr_expect_eq(n, 0, "a record was opened");
	store_list_free(v, n);
	cr_expect_eq(rig_local("ls %s/root | grep -q tao-", e.base), 1, "a job folder was made");
	free(err), free(spec), free(theirs), free(cached);
	sub_close(&e);
}

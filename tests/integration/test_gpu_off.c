/*
 * A cluster where GPU use cannot be read: the rig's nodes without their
 * nvidia-smi (moved aside for the test, put back after). The monitor says
 * so once in the status bar, stops trying, and polls as before. A suite of
 * its own: tests/run runs suites one after another, so no other test sees
 * the nodes without it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char *smi, *smi_aside;

static void put_back(void)
{
	screen_kill_all();
	if (smi_aside != NULL && access(smi_aside, F_OK) == 0)
		rename(smi_aside, smi);
}

TestSuite(gpu_off, .fini = put_back);

Test(gpu_off, a_cluster_without_nvidia_smi_says_so_once_and_polls_on, .timeout = 240)
{
	const char *state = getenv("RIG_STATE");
	char *dir = screen_shared_dir("gpuoff"), *cfg, *env, *id, *line, *log, *text, *err = NULL;
	char *bundle, *args, *out = NULL, *p;
	struct screen s;
	struct screen_opts so = { .cols = 170, .lines = 40 };
	FILE *f;
	int said = 0, rounds = 0;

	smi = xasprintf("%s/bin/nvidia-smi", state ? state : "/var/tmp/taotop-rig");
	smi_aside = xasprintf("%s.aside", smi);
	cr_assert_eq(access(smi, X_OK), 0, "the rig has no %s to move aside", smi);
	cr_assert_eq(rename(smi, smi_aside), 0);

	cfg = xasprintf("/tmp/gpuoff-%d.yaml", rig_uniq());
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fputs("clusters:\n  rig:\n    gpu_sample_seconds: 1\n", f);
	fclose(f);
	env = xasprintf("TAOTOP_CONFIG=%s TAOTOP_DEBUG=1", cfg);
	so.env = env;
	screen_open(&s, "gpuoff", &so);
	/* A taotop job that runs a few seconds, then says SUCCESS. */
	bundle = rig_bundle(s.dir, dir, "off_pyt", "[sh, -c, 'sleep 8; echo {\\\"status\\\": "
	    "\\\"SUCCESS\\\"} > {results_dir}/status.json']", NULL);
	args = xasprintf("submit %s", bundle);
	{
		char *e = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s "
		    "SLURM_BASE_RESULTS_DIR=lustre://%s/root", s.dir, cfg, dir);
		cr_assert_eq(rig_taotop(e, args, &out), 0, "%s", out);
		free(e);
	}
	p = strstr(out, "submitted tao-");
	cr_assert_not_null(p, "%s", out);
	id = xstrndup(p + 10, strcspn(p + 10, " "));
	free(out), free(args), free(bundle);

	screen_filter(&s, "off_pyt");
	screen_wait_line(&s, 60, id, "Running", NULL);
	/* Said in the status bar, with why. */
	screen_wait(&s, 20, " rig: ", "GPU use not available: nvidia-smi is not on the nodes' PATH", NULL);
	line = screen_line_with(&s, id);
	cr_assert_not_null(line);
	cr_expect_null(strstr(line, "%"), "a GPU use shown without nvidia-smi: %s", line);
	free(line);
	/* And polls on: the job's end shows. */
	screen_wait_line(&s, 60, id, "Done", NULL);
	screen_wait(&s, 5, "GPU use not available", NULL);

	/* Once: the first round started on the login node, the second read
	 * its answer and found it out; none came after (the log). */
	log = xasprintf("%s/taotop.log", s.dir);
	text = file_read_all(log, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	for (p = text; (p = strstr(p, "GPU use not available")) != NULL; p++)
		said++;
	for (p = text; (p = strstr(p, ": sampling ")) != NULL; p++)
		rounds++;
	cr_expect_eq(said, 1, "said %d times:\n%s", said, text);
	/* At least the two (a round that failed on a loaded machine backs
	 * off and comes again), and none after the word. */
	cr_expect_geq(rounds, 2, "%d sampling rounds, not 2 (one started, one read):\n%s", rounds,
	    text);
	p = strstr(text, "GPU use not available");
	p = p != NULL ? strchr(p, '\n') : NULL;
	cr_expect(p == NULL || strstr(p, ": sampling ") == NULL,
	    "sampled again after saying GPU use is not available:\n%s", text);
	cr_expect(strstr(text, "polled in") != NULL, "no polls in the log");
	free(text), free(log);

	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	put_back();
	unlink(cfg);
	free(id), free(env), free(cfg), free(dir);
}

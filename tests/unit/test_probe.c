/*
 * The NCCL probe as the job's first step: the templates' "taotop-probe
 * begin/end" text, run as it is under bash and dash with stand-ins for
 * srun (a hang unless NCCL_P2P_DISABLE=1, as the rig's torch stand-in
 * does) and scontrol; and the variables taotop fills it with.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/submit/probe.h"
#include "engine/track/segments.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

#include "unit/shells.h"

/* The text between a template's `# NAME begin` and `# NAME end` lines. */
static char *block_of(const char *tmpl, const char *name)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *path = xasprintf("%s/templates/%s", share ? share : ".", tmpl), *err = NULL;
	char *text = file_read_all(path, NULL, &err), *b, *e, *out;
	char *begin = xasprintf("# %s begin", name), *end = xasprintf("# %s end", name);

	cr_assert_not_null(text, "%s", err);
	b = strstr(text, begin);
	e = strstr(text, end);
	cr_assert(b != NULL && e != NULL && e > b, "%s has no %s block", path, name);
	out = xstrndup(b, (size_t)(e - b));
	free(text), free(path), free(begin), free(end);
	return out;
}

static char dir[64];

static void put(const char *name, const char *text, mode_t mode)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	free(path);
}

static void setup(void)
{
	char *seg = block_of("singlenode.sbatch.tmpl", "taotop-segments");
	char *probe = block_of("singlenode.sbatch.tmpl", "taotop-probe"), *lib;

	snprintf(dir, sizeof(dir), "/tmp/taotop-probe.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	lib = xasprintf("%s\n%s\n", seg, probe);
	put("lib.sh", lib, 0644);
	{
		char *bin = xasprintf("%s/bin", dir);
		cr_assert_eq(mkdir(bin, 0755), 0);
		free(bin);
	}
	/* srun: the probe's all-reduce; hangs without the P2P knob (or
	 * ends by the collective's own timeout when told to), passes with
	 * it; what --container-env named, in srun.log. */
	put("bin/srun",
	    "#!/bin/sh\n"
	    "for a; do case $a in --container-env=*)\n"
	    "  echo \"${a#*=}\" >>\"${0%/bin/srun}/srun.log\" ;; esac; done\n"
	    "if [ \"${NCCL_P2P_DISABLE:-}\" = 1 ]; then echo 'NCCL_PROBE_OK world=4'; exit 0; fi\n"
	    "if [ -n \"${STANDIN_WATCHDOG:-}\" ]; then\n"
	    "  echo '[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)"
	    " ran for 100 milliseconds before timing out.' >&2; exit 1\n"
	    "fi\n"
	    "if [ -n \"${STANDIN_BROKEN:-}\" ]; then\n"
	    "  echo 'torchrun: command not found' >&2; exit 127\nfi\n"
	    "exec sleep 30\n", 0755);
	put("bin/scontrol", "#!/bin/sh\necho node01\n", 0755);
	free(seg), free(probe), free(lib);
}

static void teardown(void)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
	free(cmd);
}

TestSuite(probe, .init = setup, .fini = teardown);

/* Run body after the lib under shell, in dir, with the probe's variables
 * as taotop writes them (vars); stdout and stderr (each trimmed), rc. */
static void run(const char *shell, const char *vars, const char *body, char **out, char **err,
    int *rc)
{
	char *script = xasprintf("%s/t.sh", dir), *cmd, buf[8192];
	FILE *f = fopen(script, "w"), *p;
	size_t n;

	cr_assert_not_null(f);
	fprintf(f, "cd '%s' || exit 99\nPATH='%s/bin':$PATH\nSLURM_JOB_ID=7\n"
	    "SLURM_JOB_NODELIST=node01\nTAOTOP_SEGMENTS_FILE='%s/segments.jsonl'\n. '%s/lib.sh'\n"
	    "%s\n%s\n", dir, dir, dir, dir, vars, body);
	fclose(f);
	cmd = xasprintf("%s '%s' 2>'%s/err'", shell, script, dir);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	*rc = WEXITSTATUS(pclose(p));
	*out = xstrdup(buf);
	free(cmd);
	cmd = xasprintf("%s/err", dir);
	*err = file_read_all(cmd, NULL, NULL);
	if (*err == NULL)
		*err = xstrdup("");
	free(script), free(cmd);
}

static char *slurp(const char *name)
{
	char *path = xasprintf("%s/%s", dir, name), *t = file_read_all(path, NULL, NULL);
	free(path);
	return t ? t : xstrdup("");
}


/* taotop's variables for a probe on 1x4 in dir, the shipped ladder. */
static char *vars(int timeout_s)
{
	struct probe_plan p = { .dir = dir, .nodes = 1,
	    .gpus_per_node = 4, .timeout_s = timeout_s };
	struct buf b;
	char *err = NULL;

	buf_init(&b);
	cr_assert_eq(probe_script_vars(&p, &b, &err), 0, "%s", err);
	return buf_detach(&b);
}

Test(probe, both_templates_carry_the_same_text)
{
	char *a = block_of("singlenode.sbatch.tmpl", "taotop-probe");
	char *b = block_of("multinode.sbatch.tmpl", "taotop-probe");
	cr_expect_str_eq(a, b, "the multi-node template's probe block differs from the "
	    "single-node one's");
	free(a), free(b);
}

Test(probe, the_variables_name_the_shape_the_rungs_and_quote_the_paths)
{
	struct probe_plan p = { .dir = "/l/it's job", .nodes = 2,
	    .gpus_per_node = 8, .timeout_s = 90,
	    .ladder = "NCCL_P2P_DISABLE=1\nNCCL_IB_DISABLE=1\n" };
	struct buf b;
	char *err = NULL;

	buf_init(&b);
	cr_assert_eq(probe_script_vars(NULL, &b, &err), 0);
	cr_expect_str_eq(b.data, "TAOTOP_PROBE=0");
	buf_reset(&b);
	cr_assert_eq(probe_script_vars(&p, &b, &err), 0, "%s", err);
	cr_expect_str_eq(b.data, "TAOTOP_PROBE=1\nTAOTOP_PROBE_SHAPE=2x8\nTAOTOP_PROBE_NODES=2\n"
	    "TAOTOP_PROBE_GPUS=8\nTAOTOP_PROBE_TIMEOUT_S=90\n"
	    "TAOTOP_PROBE_DIR='/l/it'\\''s job'\n"
	    "TAOTOP_PROBE_ANSWER='/l/it'\\''s job/nccl-probe.env'\n"
	    "TAOTOP_PROBE_RUNGS='none\nNCCL_P2P_DISABLE=1\nNCCL_IB_DISABLE=1'");
	buf_reset(&b);
	p.ladder = "NCCL_P2P_DISABLE=1 $(reboot)\n";
	cr_expect_eq(probe_script_vars(&p, &b, &err), -1);
	cr_expect_not_null(err != NULL ? strstr(err, "'$(reboot)' is not an NCCL knob") : NULL,
	    "%s", err ? err : "(no error)");
	free(err);
	buf_free(&b);
}

/* The first rung hangs, the second passes: its knob exported for the
 * training and named for --container-env, kept for later segments, told
 * in the segments file; the hung rung's output not in the job's log. */
Test(probe, a_hung_rung_is_followed_by_the_next_which_passes)
{
	for (size_t i = 0; i < 2; i++) {
		char *v = vars(1), *out, *err, *seg, *answer, *log;
		int rc;

		if (!have(shells[i]))
			continue;
		run(shells[i], v, "taotop_nccl_probe || exit 3\n"
		    "echo \"after P2P=$NCCL_P2P_DISABLE names=$TAOTOP_NCCL_NAMES\"", &out, &err,
		    &rc);
		cr_expect_eq(rc, 0, "%s: %s\n%s", shells[i], out, err);
		cr_expect_not_null(strstr(out, "taotop: the NCCL probe on 1x4, rung 1: none "
		    "(up to 1s)\ntaotop: the NCCL probe hung with none (ran past 1s): its output "
		    "is in "), "%s: %s", shells[i], out);
		cr_expect_not_null(strstr(out, "rung 2: NCCL_P2P_DISABLE=1 (up to 1s)\n"
		    "NCCL_PROBE_OK world=4\n"
		    "taotop: the NCCL probe passed on 1x4 with NCCL_P2P_DISABLE=1\n"
		    "after P2P=1 names=,NCCL_P2P_DISABLE\n"), "%s: %s", shells[i], out);
		cr_expect_str_eq(err, "", "%s", shells[i]);
		answer = slurp("nccl-probe.env");
		cr_expect_str_eq(answer, "NCCL_P2P_DISABLE=1\n");
		seg = slurp("segments.jsonl");
		cr_expect(strstr(seg, "{\"event\":\"nccl_probe\",\"at\":") == seg, "%s", seg);
		cr_expect_not_null(strstr(seg, ",\"outcome\":\"passed\",\"shape\":\"1x4\","
		    "\"env\":\"NCCL_P2P_DISABLE=1\"}\n"), "%s", seg);
		{
			/* As the poll reads it back. */
			char *e = NULL, *s = NULL;
			cr_expect_eq(segments_probe_answer(seg, strlen(seg), &e, &s), 1);
			cr_expect_str_eq(e ? e : "", "NCCL_P2P_DISABLE=1");
			cr_expect_str_eq(s ? s : "", "1x4");
			free(e), free(s);
		}
		log = slurp("srun.log");
		cr_expect_str_eq(log, "WORLD_SIZE,NUM_GPU_PER_NODE,MASTER_ADDR,MASTER_PORT\n"
		    "WORLD_SIZE,NUM_GPU_PER_NODE,MASTER_ADDR,MASTER_PORT,NCCL_P2P_DISABLE\n");
		free(log), free(seg), free(answer), free(out), free(err), free(v);
		{
			char *cmd = xasprintf("rm -f '%s'/nccl-probe.env '%s'/segments.jsonl "
			    "'%s'/srun.log", dir, dir, dir);
			cr_assert_eq(system(cmd), 0);
			free(cmd);
		}
	}
}

/* Every rung ends by the collective's own timeout: the job must end
 * before training, one line in main.err naming the rungs tried, and the
 * segments file saying so; nothing kept for later segments. */
Test(probe, every_rung_hanging_ends_the_job_before_training)
{
	for (size_t i = 0; i < 2; i++) {
		char *v = vars(20), *out, *err, *seg, *body;
		int rc;

		if (!have(shells[i]))
			continue;
		body = xasprintf("%s\nTAOTOP_PROBE_RUNGS='none\nNCCL_IB_DISABLE=1'\n"
		    "STANDIN_WATCHDOG=1; export STANDIN_WATCHDOG", v);
		run(shells[i], body, "taotop_nccl_probe || exit 3\necho training", &out, &err, &rc);
		cr_expect_eq(rc, 3, "%s: %s\n%s", shells[i], out, err);
		cr_expect_null(strstr(out, "training"), "%s", out);
		cr_expect_not_null(strstr(out, "hung with NCCL_IB_DISABLE=1 (ended by the "
		    "collective's own timeout)"), "%s: %s", shells[i], out);
		cr_expect_null(strstr(out, "Watchdog"), "a hung rung's output in the log: %s", out);
		cr_expect_str_eq(err, "taotop: the NCCL probe hung with every rung of the ladder "
		    "on 1x4 (tried: none; NCCL_IB_DISABLE=1): the training did not start; ask the "
		    "cluster's admins which NCCL settings work there and set them as nccl_env for "
		    "this cluster in taotop's config.yaml\n", "%s", shells[i]);
		seg = slurp("segments.jsonl");
		cr_expect_not_null(strstr(seg, "\"outcome\":\"hung\""), "%s", seg);
		{
			char *e = NULL, *s = NULL;
			cr_expect_eq(segments_probe_answer(seg, strlen(seg), &e, &s), 0);
			free(e), free(s);
		}
		cr_expect_eq(access("nccl-probe.env", F_OK), -1);
		free(seg), free(out), free(err), free(v), free(body);
		body = xasprintf("rm -f '%s'/segments.jsonl", dir);
		cr_assert_eq(system(body), 0);
		free(body);
	}
}

/* A probe that cannot run at all (no torchrun) stops at once: its
 * output's end in main.err. */
Test(probe, a_rung_that_fails_outright_stops_the_ladder)
{
	char *v = vars(20), *out, *err, *body;
	int rc;

	body = xasprintf("%s\nSTANDIN_BROKEN=1; export STANDIN_BROKEN", v);
	run("bash", body, "taotop_nccl_probe || exit 3\necho training", &out, &err, &rc);
	cr_expect_eq(rc, 3, "%s\n%s", out, err);
	cr_expect_null(strstr(out, "rung 2"), "%s", out);
	cr_expect_not_null(strstr(err, "taotop: the NCCL probe failed on 1x4 with none: exited 127 "
	    "without NCCL_PROBE_OK; the training did not start; its output ends with:\n"
	    "torchrun: command not found\n"), "%s", err);
	free(out), free(err), free(v), free(body);
}

/* A later segment (or a requeue) takes the run's answer: no probe again. */
Test(probe, a_later_segment_takes_the_answer_and_runs_no_probe)
{
	char *v = vars(20), *out, *err, *log, *path;
	int rc;

	path = xasprintf("%s/nccl-probe.env", dir);
	put("nccl-probe.env", "NCCL_P2P_DISABLE=1 NCCL_SOCKET_IFNAME=eth0\n", 0644);
	run("bash", v, "taotop_nccl_probe || exit 3\n"
	    "echo \"P2P=$NCCL_P2P_DISABLE IF=$NCCL_SOCKET_IFNAME names=$TAOTOP_NCCL_NAMES\"", &out,
	    &err, &rc);
	cr_expect_eq(rc, 0, "%s\n%s", out, err);
	cr_expect_str_eq(out, "taotop: the NCCL knobs of this run's probe: NCCL_P2P_DISABLE=1 "
	    "NCCL_SOCKET_IFNAME=eth0\nP2P=1 IF=eth0 names=,NCCL_P2P_DISABLE,NCCL_SOCKET_IFNAME\n");
	log = slurp("srun.log");
	cr_expect_str_eq(log, "", "the probe ran again");
	free(log), free(out), free(err), free(v), free(path);
}

/* No probe (one GPU, or cached knobs): nothing runs, nothing is named. */
Test(probe, no_probe_runs_nothing)
{
	char *out, *err, *log;
	int rc;

	run("dash", "TAOTOP_PROBE=0",
	    "taotop_nccl_probe || exit 3\necho \"names=[$TAOTOP_NCCL_NAMES]\"", &out, &err, &rc);
	cr_expect_eq(rc, 0);
	cr_expect_str_eq(out, "names=[]\n");
	log = slurp("srun.log");
	cr_expect_str_eq(log, "");
	free(log), free(out), free(err);
}

/* The probe's time comes out of the allocation: the training's child
 * timeout is that much shorter (so it still ends before SLURM's wall). */
Test(probe, the_probe_time_shortens_the_child_timeout)
{
	char *v = vars(1), *out, *err, *body;
	int rc, child = 0;
	const char *at;

	body = xasprintf("%s\nTAOTOP_CHILD_TIMEOUT_S=1000", v);
	run("bash", body, "taotop_nccl_probe || exit 3\necho \"child=$TAOTOP_CHILD_TIMEOUT_S\"", &out,
	    &err, &rc);
	cr_expect_eq(rc, 0, "%s\n%s", out, err);
	cr_expect_not_null(strstr(out, "taotop: the NCCL probe took "), "%s", out);
	at = strstr(out, "child=");
	cr_assert_not_null(at, "%s", out);
	child = atoi(at + 6);
	cr_expect(child < 1000 && child > 900, "child timeout %d after the probe:\n%s", child, out);
	free(out), free(err), free(v), free(body);
}

/* A probe that took (nearly) all of the child timeout leaves the training
 * a minute, or half the timeout when that is shorter: never the whole
 * timeout again (it would run past the wall). Here 2 s, the probe's hung
 * rung alone 1 s or more: 1 s left, the floor (half of 2). */
Test(probe, a_probe_longer_than_the_margin_leaves_the_training_a_minute)
{
	char *v = vars(1), *out, *err, *body;
	const char *at;
	int rc, child;

	body = xasprintf("%s\nTAOTOP_CHILD_TIMEOUT_S=2", v);
	run("dash", body, "taotop_nccl_probe || exit 3\necho \"child=$TAOTOP_CHILD_TIMEOUT_S\"", &out,
	    &err, &rc);
	cr_expect_eq(rc, 0, "%s\n%s", out, err);
	at = strstr(out, "child=");
	cr_assert_not_null(at, "%s", out);
	child = atoi(at + 6);
	cr_expect_eq(child, 1, "child timeout %d of 2 after the probe:\n%s", child, out);
	free(out), free(err), free(v), free(body);
}

/* A job signalled (scancel, preemption) during a rung starts no next rung
 * and says why: no "hung"/"failed" verdict for the ladder. */
Test(probe, a_signal_during_the_probe_stops_the_ladder)
{
	char *v = vars(3), *out, *err, *body;
	int rc;

	body = xasprintf("%s\ntaotop_signalled=", v);
	run("bash", body, "trap 'taotop_signalled=1' TERM\n"
	    "( sleep 1; kill -TERM $$ ) &\n"
	    "taotop_nccl_probe || exit 3\necho trained", &out, &err, &rc);
	cr_expect_eq(rc, 3, "%s\n%s", out, err);
	cr_expect_not_null(strstr(err, "signalled during the NCCL probe"), "%s", err);
	cr_expect_null(strstr(out, "rung 2"), "a next rung started:\n%s", out);
	cr_expect_null(strstr(out, "trained"), "%s", out);
	free(out), free(err), free(v), free(body);
}

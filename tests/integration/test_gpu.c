/*
 * Are my GPUs working? The monitor and `taotop status` against the real
 * test cluster, whose nodes have an nvidia-smi stand-in that reports what
 * the TAO stand-in's job does: busy while it trains, idle when its spec
 * makes it stuck (train.stuck_at_epoch). Each test names its jobs uniquely
 * and filters the list to them, since other tests share the queue.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char *cancel_me[4];

static void cleanup(void)
{
	size_t i;

	screen_kill_all();
	for (i = 0; i < sizeof(cancel_me) / sizeof(cancel_me[0]); i++) {
		if (cancel_me[i] != NULL) {
			char *cmd = xasprintf("scancel %s", cancel_me[i]), *out = NULL;
			rig_ssh(cmd, &out);
			free(out), free(cmd);
		}
	}
}

/* The nvidia-smi stand-in's fault (tests/cluster/README.md): the fields
 * named answer "[N/A]" / "[Not Supported]" in the jobs listed. */
static void na_off(void)
{
	rig_local("rm -f %s/fault/nvidia-smi-na", rig_get()->state);
}

static void cleanup_all(void)
{
	na_off();
	cleanup();
}

TestSuite(gpu, .fini = cleanup_all);

/* A config file: sampling every second, idle after idle_s, progress
 * stopped after stall_s; notifications on. */
static char *write_config(const char *name, int idle_s, int stall_s)
{
	char *path = xasprintf("/tmp/gpu-%s-%d.yaml", name, rig_uniq());
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	/* The cluster's NCCL knobs set by hand: these two-GPU jobs skip the
	 * probe, whose hung rungs would be idle rounds before any epoch. */
	fprintf(f, "notify: [bell, osc9, osc777]\nclusters:\n  rig:\n    gpu_sample_seconds: 1\n"
	    "    gpu_idle_percent: 5\n    gpu_idle_seconds: %d\n    stall_seconds: %d\n"
	    "    nccl_env: NCCL_P2P_DISABLE=1\n", idle_s, stall_s);
	fclose(f);
	return path;
}

/* `taotop submit` of a TAO stand-in training job with these overrides:
 * its record id; *slurm its SLURM id (both caller frees). */
static char *submit_tao(struct screen *s, const char *dir, const char *arch, const char *overrides,
    const char *config, char **slurm)
{
	char *command = xasprintf("[classification_pyt, train, -e, '{spec}', "
	    "'results_dir={results_dir}', 'train.num_gpus={num_gpus}', %s]", overrides);
	char *bundle = xasprintf("%s/%s.yaml", s->dir, arch), *env, *args, *out = NULL, *p, *id;
	FILE *f = fopen(bundle, "w");

	/* Two GPUs: a bar for each. */
	cr_assert_not_null(f, "%s", bundle);
	fprintf(f, "image: nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt\nnetwork_arch: %s\n"
	    "action: train\ncommand: %s\ndatasets: [lustre://%s/data]\n"
	    "results_dir: lustre://%s/results\ngpus: 2\ncpus_per_task: 1\ntime_hours: 0.5\n"
	    "spec:\n  train:\n    num_epochs: 400\n", arch, command, dir, dir);
	fclose(f);
	p = xasprintf("mkdir -p %s/data %s/results", dir, dir);
	free(rig_ssh_ok(p));
	free(p);

	env = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s SLURM_BASE_RESULTS_DIR=lustre://%s/root",
	    s->dir, config, dir);
	args = xasprintf("submit %s", bundle);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	p = strstr(out, "submitted tao-");
	cr_assert_not_null(p, "%s", out);
	id = xstrndup(p + 10, strcspn(p + 10, " "));
	p = strstr(out, " as SLURM job ");
	cr_assert_not_null(p, "%s", out);
	*slurm = xstrndup(p + 14, strcspn(p + 14, " \n"));
	free(out), free(args), free(env), free(bundle), free(command);
	return id;
}

/* The GPU% cell of a row: the number before the first "N%" word. -1 if
 * none. */
static int gpu_percent(const char *line)
{
	const char *p;

	for (p = line; p != NULL && *p != '\0'; p++) {
		if (*p == '%' && p > line && p[-1] >= '0' && p[-1] <= '9') {
			const char *q = p;
			while (q > line && q[-1] >= '0' && q[-1] <= '9')
				q--;
			if (q == line || q[-1] == ' ')
				return atoi(q);
		}
	}
	return -1;
}

/* `taotop status ID` (env as given) run until its output holds want, for
 * at most timeout_s: the last output (caller frees). */
static char *status_until(const char *env, const char *id, const char *want, int timeout_s)
{
	char *args = xasprintf("status %s", id), *out = NULL;
	time_t end = time(NULL) + timeout_s;

	for (;;) {
		free(out);
		out = NULL;
		cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
		if (strstr(out, want) != NULL || time(NULL) >= end)
			break;
		sleep(1);
	}
	free(args);
	return out;
}

/* Wait until the row holding text shows a GPU% for which ok() holds. */
static char *wait_gpu(struct screen *s, const char *text, int timeout_s, int at_least, int below)
{
	char *line = NULL;
	int i, v = -1;

	for (i = 0; i < timeout_s * 4; i++) {
		free(line);
		line = screen_line_with(s, text);
		v = line ? gpu_percent(line) : -1;
		if (v >= 0 && v >= at_least && v < below)
			return line;
		usleep(250000);
	}
	cr_assert_fail("the row of %s never showed GPU%% in [%d, %d): %s\n%s", text, at_least, below,
	    line ? line : "(no row)", screen_text(s));
	return NULL;
}

Test(gpu, a_training_job_shows_high_gpu_use_in_its_row_detail_and_status, .timeout = 240)
{
	char *dir = screen_shared_dir("gpubusy"), *cfg = write_config("busy", 600, 600), *env;
	char *id, *slurm, *line, *text, *out = NULL, *args, *envc;
	struct screen s;
	struct screen_opts so = { .cols = 170, .lines = 45 };
	cJSON *st, *use, *gpus;

	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	screen_open(&s, "gpubusy", &so);
	id = submit_tao(&s, dir, "busy_pyt", "train.seconds_per_epoch=1", cfg, &slurm);
	cancel_me[0] = slurm;
	screen_filter(&s, "busy_pyt");
	screen_wait_line(&s, 90, id, "Running", NULL);
	screen_wait(&s, 5, "GPU%", "GPUMEM", NULL);
	/* Training: every GPU busy, in its row, with its memory. */
	line = wait_gpu(&s, id, 60, 90, 101);
	cr_expect_not_null(strstr(line, "/79.6G"), "no GPU memory in the row: %s", line);
	cr_expect_null(strstr(line, "IDLE"), "a busy job flagged idle: %s", line);
	free(line);

	/* The detail view: a bar per GPU and the sparkline of the rounds. */
	screen_keys(&s, "Enter");
	screen_wait(&s, 15, "Job detail", "GPU use: ", "GPU % per round:", NULL);
	sleep(3);	/* a few rounds */
	line = screen_line_with(&s, "GPU % per round:");
	cr_assert_not_null(line);
	/* High blocks only (the top two of eight), and the last value high. */
	cr_expect(strstr(line, "\xe2\x96\x88") != NULL || strstr(line, "\xe2\x96\x87") != NULL,
	    "the sparkline is not high: %s", line);
	/* Once it trains it stays busy: no idle round after the first high
	 * one (a round taken while TAO was still starting, before its first
	 * epoch, is idle, as on a real GPU while the data loads). */
	{
		const char *hi = strstr(line, "\xe2\x96\x87"), *top = strstr(line, "\xe2\x96\x88");
		if (hi == NULL || (top != NULL && top < hi))
			hi = top;
		cr_expect(hi == NULL || strstr(hi, "\xe2\x96\x81") == NULL,
		    "an idle round in a busy job: %s", line);
	}
	cr_expect(strstr(line, "(last 9") != NULL, "%s", line);
	free(line);
	/* Two GPUs, each with a bar nearly full. */
	text = screen_text(&s);
	{
		const char *p = text;
		int bars = 0;
		while ((p = strstr(p, "[##################")) != NULL) {
			bars++;
			p++;
		}
		cr_expect_eq(bars, 2, "not a full bar for each of the 2 GPUs:\n%s", text);
	}
	free(text);
	screen_keys(&s, "Escape");

	/* taotop status: the same, on the terminal and in --json. */
	envc = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s", s.dir, cfg);
	args = xasprintf("status %s", id);
	cr_assert_eq(rig_taotop(envc, args, &out), 0, "%s", out);
	cr_expect(strstr(out, "GPU use 9") != NULL, "%s", out);
	cr_expect(strstr(out, "/gpu") != NULL, "%s", out);
	free(out), free(args);
	args = xasprintf("status %s --json", id);
	cr_assert_eq(rig_taotop(envc, args, &out), 0, "%s", out);
	st = cJSON_Parse(out);
	cr_assert_not_null(st, "%s", out);
	use = cJSON_GetObjectItem(st, "use");
	cr_assert_not_null(use, "%s", out);
	cr_expect_geq(cJSON_GetNumberValue(cJSON_GetObjectItem(use, "util_mean")), 90, "%s", out);
	gpus = cJSON_GetObjectItem(use, "gpus");
	cr_expect_eq(cJSON_GetArraySize(gpus), 2, "%s", out);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(gpus, 0),
	    "mem_total_mib")), 81559, "%s", out);
	cJSON_Delete(st);
	free(out), free(args), free(envc);

	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	unlink(cfg);
	free(id), free(env), free(cfg), free(dir);
}

Test(gpu, a_stuck_job_is_flagged_idle_noted_in_its_history_and_notified, .timeout = 240)
{
	char *dir = screen_shared_dir("gpustuck"), *cfg = write_config("stuck", 6, 14), *env;
	char *id, *slurm, *line, *text, *want, *envc, *out = NULL;
	struct screen s;
	struct screen_opts so = { .cols = 170, .lines = 45, .typescript = 1 };

	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	screen_open(&s, "gpustuck", &so);
	/* Two epochs, then the data loader "dies": the process lives on. */
	id = submit_tao(&s, dir, "stuck_pyt", "train.seconds_per_epoch=1, train.stuck_at_epoch=3",
	    cfg, &slurm);
	cancel_me[1] = slurm;
	screen_filter(&s, "stuck_pyt");
	screen_wait_line(&s, 90, id, "Running", NULL);
	/* Its GPUs at 0 %: flagged after the configured 6 s, not before. */
	line = wait_gpu(&s, id, 60, 0, 1);
	free(line);
	screen_wait_line(&s, 30, id, "0% IDLE", NULL);
	screen_wait_line(&s, 5, id, "Running", NULL);

	/* The notification, read from what taotop wrote to the terminal. */
	want = xasprintf("]777;notify;taotop;rig %s: GPUs idle", id);
	text = screen_typescript_wait(&s, 10, want);
	free(want);
	want = xasprintf("]9;taotop: rig %s: GPUs idle: every GPU below 5 %% for ", id);
	cr_expect_not_null(strstr(text, want), "no OSC 9 for the idle GPUs in what taotop wrote");
	free(want);
	want = xasprintf("]777;notify;taotop;rig %s: GPUs idle", id);
	cr_expect_not_null(strstr(text, want), "no OSC 777 for the idle GPUs");
	free(want), free(text);

	/* The record's history says it, and that progress stopped (epoch 2). */
	envc = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s", s.dir, cfg);
	out = status_until(envc, id, "progress stopped: epoch 2 for", 30);
	cr_expect_not_null(strstr(out, "taotop    GPUs idle: every GPU below 5 % for"), "%s", out);
	cr_expect_not_null(strstr(out, "progress stopped: epoch 2 for"), "%s", out);
	cr_expect_not_null(strstr(out, "GPU use 0 %"), "%s", out);
	free(out), free(envc);

	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	unlink(cfg);
	free(id), free(env), free(cfg), free(dir);
}

/* Whose GPUs: a job beside a busy training on the same node (another
 * job's, as another user's would be) shows only its own GPUs, idle. The
 * rig's nodes do not constrain devices (as many sites): nvidia-smi there
 * lists all eight GPUs of the node, the training's busy ones too, and
 * taotop asks for the job's own by index. */
Test(gpu, a_job_beside_a_busy_one_shows_only_its_own_gpus, .timeout = 240)
{
	char *dir = screen_shared_dir("gpuside"), *cfg = write_config("side", 600, 600), *env;
	char *id, *slurm, *line, *out = NULL, *args, *envc, *node, *cmd, *opts, *other;
	struct screen s;
	struct screen_opts so = { .cols = 170, .lines = 45 };
	cJSON *st, *use, *gpus;

	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	screen_open(&s, "gpuside", &so);
	id = submit_tao(&s, dir, "side_pyt", "train.seconds_per_epoch=1", cfg, &slurm);
	cancel_me[1] = slurm;
	screen_filter(&s, "side_pyt");
	screen_wait_line(&s, 90, id, "Running", NULL);
	line = wait_gpu(&s, id, 60, 90, 101);
	free(line);
	cmd = xasprintf("squeue -h -j %s -o %%N", slurm);
	node = rig_ssh_ok(cmd);
	free(cmd);
	node[strcspn(node, "\n")] = '\0';
	cr_assert(node[0] != '\0', "the training's node");

	/* Its neighbour: two GPUs of the same node, doing nothing. */
	opts = xasprintf("-J gpuside%d -w %s --gres=gpu:2 -t 5 -o /dev/null", rig_uniq(), node);
	other = rig_sbatch(opts, "'sleep 200'");
	cancel_me[2] = other;
	free(rig_wait_state(other, "RUNNING", 60));

	envc = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s", s.dir, cfg);
	args = xasprintf("status %s --json", other);
	cr_assert_eq(rig_taotop(envc, args, &out), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cr_assert_not_null(st, "%s", out);
	use = cJSON_GetObjectItem(st, "use");
	cr_assert_not_null(use, "the neighbour's GPU use was read:\n%s", out);
	gpus = cJSON_GetObjectItem(use, "gpus");
	cr_expect_eq(cJSON_GetArraySize(gpus), 2, "its own two GPUs, not the node's eight:\n%s", out);
	cr_expect_lt(cJSON_GetNumberValue(cJSON_GetObjectItem(use, "util_mean")), 5,
	    "credited with the training's use:\n%s", out);
	cJSON_Delete(st);
	free(out), free(args);

	/* And the training's own, as before: busy, two GPUs. */
	args = xasprintf("status %s --json", id);
	cr_assert_eq(rig_taotop(envc, args, &out), 0, "%s", out);
	st = cJSON_Parse(strchr(out, '{'));
	cr_assert_not_null(st, "%s", out);
	use = cJSON_GetObjectItem(st, "use");
	cr_assert_not_null(use, "%s", out);
	cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(use, "gpus")), 2, "%s", out);
	cr_expect_geq(cJSON_GetNumberValue(cJSON_GetObjectItem(use, "util_mean")), 90, "%s", out);
	cJSON_Delete(st);
	free(out), free(args), free(envc);

	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	unlink(cfg);
	free(opts), free(node), free(id), free(env), free(cfg), free(dir);
}

/* On a MIG-enabled GPU nvidia-smi answers utilization.gpu "[N/A]" (and a
 * board that cannot say its memory, "[Not Supported]"): the job's use is
 * "n/a" in status and its row, null in --json, the readable memory kept,
 * never an error, "GPU use not read" or a 0 % that calls it idle. */
Test(gpu, a_gpu_that_cannot_say_its_use_shows_n_a_not_an_error, .timeout = 240)
{
	char *dir = screen_shared_dir("gpuna"), *cfg = write_config("na", 2, 600), *env;
	char *id, *slurm, *out = NULL, *args, *envc, *line;
	struct screen s;
	struct screen_opts so = { .cols = 170, .lines = 45 };
	cJSON *st, *use, *g0;

	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	screen_open(&s, "gpuna", &so);
	id = submit_tao(&s, dir, "na_pyt", "train.seconds_per_epoch=1", cfg, &slurm);
	cancel_me[3] = slurm;
	free(rig_wait_state(slurm, "RUNNING", 90));
	cr_assert_eq(rig_local("printf '%%s utilization.gpu [N/A]\\n%%s memory.used [Not Supported]\\n'"
	    " %s %s > %s/fault/nvidia-smi-na", slurm, slurm, rig_get()->state), 0);

	envc = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s", s.dir, cfg);
	out = status_until(envc, id, "GPU use n/a", 60);
	cr_expect_not_null(strstr(out, "GPU use n/a"), "%s", out);
	{
		/* Each GPU (its index is the one the job got) n/a too. */
		const char *g = strstr(out, "/gpu");
		cr_expect(g != NULL && strncmp(g + strspn(g + 4, "0123456789") + 4, " n/a", 4) == 0,
		    "%s", out);
		cr_expect_not_null(strstr(out, "memory n/a/79.6G"), "%s", out);
	}
	cr_expect_null(strstr(out, "GPU use not read"), "%s", out);
	cr_expect_null(strstr(out, "[N/A]"), "nvidia-smi's word shown as an error: %s", out);
	free(out);

	args = xasprintf("status %s --json", id);
	cr_assert_eq(rig_taotop(envc, args, &out), 0, "%s", out);
	st = cJSON_Parse(out);
	cr_assert_not_null(st, "%s", out);
	use = cJSON_GetObjectItem(st, "use");
	cr_assert_not_null(use, "%s", out);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(use, "util_mean")), "%s", out);
	g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(use, "gpus"), 0);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(g0, "util")), "%s", out);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItem(g0, "mem_used_mib")), "%s", out);
	cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(g0, "mem_total_mib")), 81559, "%s", out);
	cJSON_Delete(st);
	free(out), free(args), free(envc);

	/* The monitor's row: n/a, and never IDLE past gpu_idle_seconds (2). */
	screen_filter(&s, "na_pyt");
	screen_wait_line(&s, 60, id, "n/a", NULL);
	sleep(5);
	line = screen_line_with(&s, id);
	cr_expect(line != NULL && strstr(line, "IDLE") == NULL, "called idle: %s", line ? line : "");
	free(line);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	na_off();
	unlink(cfg);
	free(id), free(env), free(cfg), free(dir);
}

/* Stuck but busy: a collective one rank never joins keeps the GPUs at
 * 100 % (NCCL's kernels spin) while no epoch ends. The GPUs are not idle,
 * so only progress can tell: the row says STALL (never IDLE) and the
 * record says progress stopped, with no "GPUs idle" note. */
Test(gpu, a_job_stuck_with_busy_gpus_is_flagged_by_its_progress_not_idle, .timeout = 240)
{
	char *dir = screen_shared_dir("gpubusyhang"), *cfg = write_config("busyhang", 4, 10), *env;
	char *id, *slurm, *line, *envc, *out = NULL;
	struct screen s;
	struct screen_opts so = { .cols = 220, .lines = 45 };

	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	screen_open(&s, "gpubusyhang", &so);
	id = submit_tao(&s, dir, "busyhang_pyt",
	    "train.seconds_per_epoch=1, stand_in.busy_hang_at_epoch=3", cfg, &slurm);
	cancel_me[3] = slurm;
	screen_filter(&s, "busyhang_pyt");
	screen_wait_line(&s, 90, id, "Running", NULL);
	/* The stand-in's GPUs a point apart, as real ones: 99-100 %. */
	line = wait_gpu(&s, id, 60, 98, 101);
	free(line);
	screen_wait_line(&s, 60, id, "% STALL", NULL);
	line = screen_line_with(&s, id);
	cr_expect(line != NULL && strstr(line, "IDLE") == NULL, "busy GPUs called idle: %s",
	    line ? line : "");
	free(line);

	envc = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s", s.dir, cfg);
	out = status_until(envc, id, "progress stopped: epoch 2 for", 30);
	cr_expect_not_null(strstr(out, "progress stopped: epoch 2 for"), "%s", out);
	cr_expect_null(strstr(out, "GPUs idle"), "busy GPUs called idle: %s", out);
	cr_expect(strstr(out, "GPU use 99 %") != NULL || strstr(out, "GPU use 100 %") != NULL,
	    "%s", out);
	free(out), free(envc);

	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	unlink(cfg);
	free(id), free(env), free(cfg), free(dir);
}

/* The efficiency card: accounting's facts as sacct prints them (22.05 on
 * the rig; a site that records GPU use adds gres/gpuutil and gres/gpumem
 * to the steps' TRES usage, as slurm.conf's AccountingStorageTRES
 * documents them), taotop's samples folded round by round, the card made
 * from the best source, its notes, and its JSON round trip. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/acctcard.h"
#include "engine/store/card.h"
#include "engine/store/record.h"
#include "util/xmalloc.h"

/* A 2-node, 16-GPU job of the rig: 120 s of a 10 min limit, queued 1 s. */
static const char rig_job[] =
    "23125|2026-12-05T07:25:45|2026-12-05T07:25:46|120|10|32|00:00.002||"
    "billing=32,cpu=32,gres/gpu=16,mem=3200M,node=2|||\n"
    "23125.batch|2026-12-05T07:25:46|2026-12-05T07:25:46|120||16|00:00.002|3276K|"
    "cpu=16,gres/gpu=8,mem=1600M,node=1|cpu=00:00:00,energy=0,fs/disk=11087,mem=3276K,pages=0,"
    "vmem=5512K|cpu=00:00:00,energy=0,fs/disk=11087,mem=3276K,pages=0,vmem=5512K|\n";

Test(card, the_rigs_sacct_lines_read_as_facts)
{
	struct acct_facts f;

	cr_assert_eq(acct_card_parse(rig_job, "23125", &f), 0);
	cr_expect_eq(f.wait_s, 1);
	cr_expect_eq(f.elapsed_s, 120);
	cr_expect_eq(f.limit_s, 600);
	cr_expect_eq(f.cpus, 32);
	cr_expect_eq(f.cpu_s, 0);
	cr_expect_eq(f.rss_peak_kib, 3276, "the batch step's MaxRSS");
	cr_expect_eq(f.gpus, 16);
	cr_expect_eq(f.gpu_util, -1, "the rig records no GPU use");
	cr_expect_eq(f.jobstats, 0);
	cr_expect_eq(acct_card_parse(rig_job, "2312", &f), -1, "another job's lines are not its");
	cr_expect_eq(acct_card_parse("sacct: error: slurmdbd is down\n", "23125", &f), -1);

	cr_expect_eq(acct_cpu_seconds("00:00.002"), 0);
	cr_expect_eq(acct_cpu_seconds("01:02:03"), 3723);
	cr_expect_eq(acct_cpu_seconds("1-00:00:10"), 86410);
	cr_expect_eq(acct_cpu_seconds("12:30.5"), 750);
	cr_expect_eq(acct_cpu_seconds(""), -1);
	cr_expect_eq(acct_kib("3276K"), 3276);
	cr_expect_eq(acct_kib("1.5G"), 1572864);
	cr_expect_eq(acct_kib("2048"), 2);
	cr_expect_eq(acct_kib("x"), -1);
}

/* A site with GPU accounting: its numbers win over taotop's samples, and
 * the admin comment's jobstats summary is noticed. */
Test(card, a_site_that_records_gpu_use_is_the_source)
{
	static const char site[] =
	    "777|2026-12-05T01:00:00|2026-12-05T01:10:00|7200|240|16|1-08:00:00||"
	    "billing=16,cpu=16,gres/gpu=8,mem=64G,node=1||"
	    "|JS1:H4sIAAAAAAAAA6tWKkktLlGyUlAqS8wpTgUAnQ8pUBAAAAA=\n"
	    "777.0|2026-12-05T01:10:00|2026-12-05T01:10:00|7190||16|1-07:59:00|20G|"
	    "cpu=16,gres/gpu=8,mem=64G,node=1|cpu=1-07:59:00,gres/gpumem=30000M,gres/gpuutil=83,"
	    "mem=20G|cpu=1-07:59:00,gres/gpumem=61440M,gres/gpuutil=99,mem=20G|\n";
	struct acct_facts f;
	struct card_samples s = { 0 };
	struct card c;
	int util[8] = { 5, 5, 5, 5, 5, 5, 5, 5 }, mem[8] = { 0 }, tot[8] = { 0 };

	cr_assert_eq(acct_card_parse(site, "777", &f), 0);
	cr_expect_eq(f.gpu_util, 83);
	cr_expect_eq(f.gpu_mem_mib, 61440, "the steps' peak, TRESUsageInMax");
	cr_expect_eq(f.rss_peak_kib, 20 * 1048576);
	cr_expect_eq(f.jobstats, 1);
	card_samples_fold(&s, util, mem, tot, 8, 5, 1000);
	card_make(&c, &f, &s, 8, 5);
	cr_expect_str_eq(c.gpu_source, "accounting");
	cr_expect_eq(c.util_mean, 83);
	cr_expect_eq(c.wait_s, 600);
	cr_expect(c.gpu_hours > 15.99 && c.gpu_hours < 16.01, "%f", c.gpu_hours);
	cr_expect(c.gpu_hours_used > 13.27 && c.gpu_hours_used < 13.29, "%f", c.gpu_hours_used);
	cr_expect_eq(c.cpu_eff, 100, "32 h of CPU over 2 h x 16 CPUs");
}

static char *all_lines(const struct card *c)
{
	char **v, *s;
	size_t n = card_lines(c, &v), i, len = 1;

	for (i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	s = xcalloc(1, len);
	for (i = 0; i < n; i++) {
		strcat(s, v[i]);
		strcat(s, "\n");
		free(v[i]);
	}
	free(v);
	return s;
}

/* Eight GPUs asked, TAO told of one (no count in its spec): one busy GPU
 * and seven idle in every round, and a 1-hour limit used for 2 minutes. */
Test(card, asked_for_8_used_1_and_the_time_note_from_taotops_samples)
{
	struct acct_facts f = { .wait_s = 4, .elapsed_s = 120, .limit_s = 3600, .cpus = 8,
		.cpu_s = 400, .rss_peak_kib = 2097152, .gpus = 8, .gpu_util = -1, .gpu_mem_mib = -1 };
	struct card_samples s = { 0 };
	struct card c, back;
	int util[8] = { 97, 0, 0, 0, 0, 0, 0, 0 }, mem[8] = { 30000 }, tot[8];
	char fig[16], *text;
	int i;

	for (i = 0; i < 8; i++)
		tot[i] = 81559;
	for (i = 0; i < 4; i++)
		card_samples_fold(&s, util, mem, tot, 8, 5, 1000 + 30 * i);
	card_make(&c, &f, &s, 8, 5);
	cr_expect_str_eq(c.gpu_source, "taotop");
	cr_expect_eq(c.rounds, 4);
	cr_expect_eq(c.gpus_used, 1);
	cr_expect_eq(c.util_mean, 12, "97 over 8 GPUs");
	cr_expect_eq(c.idle_pct, 0, "a GPU worked in every round");
	cr_expect_eq(c.mem_peak_mib, 30000);
	cr_expect_eq(c.cpu_eff, 42);
	text = all_lines(&c);
	cr_expect(strstr(text, "note: asked for 8 GPUs, used 1") != NULL, "%s", text);
	cr_expect(strstr(text, "note: asked for 1 h, needed 2 min") != NULL, "%s", text);
	cr_expect(strstr(text, "from taotop's 4 samples") != NULL, "%s", text);
	cr_expect(strstr(text, "time: 00:02:00 of 01:00:00 (3 %)") != NULL, "%s", text);
	cr_expect(strstr(text, "queue wait: 00:00:04") != NULL, "%s", text);
	free(text);
	card_figure(&c, fig, sizeof(fig));
	cr_expect_str_eq(fig, "avg 12% !");

	/* Kept in the record as it is. */
	{
		struct job_record *r = record_new("tao-20261205-0c0c0c"), *b;
		char *json, *err = NULL;
		r->samples = s;
		r->card = c;
		r->has_card = 1;
		json = record_to_json(r);
		b = record_from_json(json, &err);
		cr_assert_not_null(b, "%s", err);
		cr_expect(b->has_card);
		cr_expect_eq(memcmp(&b->samples, &s, sizeof(s)), 0, "the samples round trip");
		back = b->card;
		cr_expect_eq(back.gpus_used, 1);
		cr_expect_eq(back.util_mean, 12);
		cr_expect_str_eq(back.gpu_source, "taotop");
		cr_expect_eq(back.limit_s, 3600);
		cr_expect(strstr(json, "\"asked for 8 GPUs, used 1\"") != NULL, "%s", json);
		free(json);
		record_free(b);
		record_free(r);
	}
}

/* A job that kept its GPUs busy: no note; one idle most of its run: the
 * idle note and the median below the mean's spikes; none sampled and no
 * accounting of GPUs: said so, the time part kept. */
Test(card, busy_idle_and_unknown)
{
	struct acct_facts f = { .wait_s = 0, .elapsed_s = 3000, .limit_s = 3600, .cpus = 16,
		.cpu_s = 30000, .rss_peak_kib = -1, .gpus = 4, .gpu_util = -1, .gpu_mem_mib = -1 };
	struct card_samples busy = { 0 }, idle = { 0 };
	struct card c;
	int hi[4] = { 95, 96, 97, 98 }, lo[4] = { 0, 0, 0, 0 }, mem[4] = { 0 }, tot[4] = { 0 };
	char **notes, *text;
	int i;

	for (i = 0; i < 10; i++)
		card_samples_fold(&busy, hi, mem, tot, 4, 5, 1000 + i);
	card_make(&c, &f, &busy, 4, 5);
	cr_expect_eq(c.util_mean, 96);
	cr_expect_eq(c.util_median, 97);
	cr_expect_eq(c.gpus_used, 4);
	cr_expect_eq(card_notes(&c, &notes), 0, "a busy run that used its time: no note");
	free(notes);

	for (i = 0; i < 10; i++)
		card_samples_fold(&idle, i < 3 ? hi : lo, mem, tot, 4, 5, 1000 + i);
	card_make(&c, &f, &idle, 4, 5);
	cr_expect_eq(c.idle_pct, 70);
	cr_expect_eq(c.util_median, 2, "the middle round was idle");
	text = all_lines(&c);
	cr_expect(strstr(text, "note: idle 70 % of its run") != NULL, "%s", text);
	free(text);

	card_make(&c, &f, NULL, 4, 5);
	cr_expect_str_eq(c.gpu_source, "");
	text = all_lines(&c);
	cr_expect(strstr(text, "GPU use: not known") != NULL, "%s", text);
	cr_expect(strstr(text, "CPU efficiency 63 %") != NULL, "%s", text);
	free(text);
}

/* A job array's id: its tasks' lines summed (sacct -j 300 lists 300_0,
 * 300_0.batch, 300_1, ...), each task's GPUs times its own time. */
Test(card, a_job_arrays_card_sums_its_tasks)
{
	static const char arr[] =
	    "300_0|2026-12-05T07:00:00|2026-12-05T07:00:10|600|60|4|00:20:00||"
	    "billing=4,cpu=4,gres/gpu=2,node=1|||\n"
	    "300_0.batch|2026-12-05T07:00:10|2026-12-05T07:00:10|600||4|00:20:00|2G|"
	    "cpu=4,gres/gpu=2,node=1|||\n"
	    "300_1|2026-12-05T07:00:00|2026-12-05T07:00:40|1200|60|4|00:40:00||"
	    "billing=4,cpu=4,gres/gpu=2,node=1|||\n"
	    "300_2|2026-12-05T07:00:00|2026-12-05T07:01:00|300|60|4|00:05:00||"
	    "billing=4,cpu=4,gres/gpu=2,node=1|||\n";
	struct acct_facts f;
	struct card c;
	char *text;

	cr_assert_eq(acct_card_parse(arr, "300", &f), 0);
	cr_expect_eq(f.tasks, 3);
	cr_expect_eq(f.elapsed_s, 1200, "the longest task");
	cr_expect_eq(f.wait_s, 10, "the first to start");
	cr_expect_eq(f.rss_peak_kib, 2097152);
	cr_expect(fabs(f.gpu_s - 2.0 * 2100) < 1e-9, "%f", f.gpu_s);
	card_make(&c, &f, NULL, 0, 5);
	cr_expect(fabs(c.gpu_hours - 4200.0 / 3600) < 1e-9, "%f", c.gpu_hours);
	cr_expect_eq(c.cpu_eff, 46, "65 min of CPU over 4 CPUs x 35 min");
	text = all_lines(&c);
	cr_expect(strstr(text, "a job array: its 3 tasks summed") != NULL, "%s", text);
	free(text);
	cr_assert_eq(acct_card_parse(arr, "300_1", &f), 0, "one task alone");
	cr_expect_eq(f.tasks, 1);
	cr_expect_eq(f.elapsed_s, 1200);
}

/* `taotop report`'s sums: accounting's lines as 22.05 prints them (sacct
 * -X -P), matched with records, added up by outcome, idle hours from the
 * cards, the worst wasters in order, the median waits by partition. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/acctreport.h"
#include "engine/store/record.h"
#include "engine/store/report.h"
#include "util/xmalloc.h"

static const char lines[] =
    "101|COMPLETED|polar|2026-12-05T07:00:00|2026-12-05T07:00:10|3600|billing=16,cpu=16,gres/gpu=8,mem=1600M,node=1\n"
    "102|FAILED|polar|2026-12-05T07:00:00|2026-12-05T07:00:30|1800|cpu=8,gres/gpu=4,node=1\n"
    "103|NODE_FAIL|grizzly|2026-12-05T07:00:00|2026-12-05T07:01:00|900|cpu=8,gres/gpu=4,node=1\n"
    "104|CANCELLED by 1001|polar|2026-12-05T07:00:00|2026-12-05T07:00:20|600|cpu=4,gres/gpu=2,node=1\n"
    "105|FAILED|polar|2026-12-05T07:00:00|2026-12-05T07:00:40|7200|cpu=4,gres/gpu:a100=1,gres/gpu=1,node=1\n"
    "106|PENDING|polar|2026-12-05T07:00:00|Unknown|0|cpu=4,node=1\n"
    "107|COMPLETED|cpu_long|2026-12-05T07:00:00|2026-12-05T07:00:00|120|cpu=4,mem=7200M,node=1\n"
    "sacct: warning: something said\n";

static struct job_record *rec(const char *id, const char *ref, enum tao_state st,
    const char *cls, int util)
{
	struct job_record *r = record_new(id);
	record_set(&r->backend_ref, ref);
	record_transition(r, st, "X", NULL, "scheduler", 1);
	if (cls != NULL)
		record_set_err_class(r, cls);
	if (util >= 0) {
		r->has_card = 1;
		card_make(&r->card, NULL, NULL, 8, 5);
		r->card.util_mean = util;
	}
	return r;
}

Test(report, outcomes_idle_wasters_and_waits)
{
	struct acct_job *j;
	struct job_record *recs[8] = { 0 };
	struct report r;
	size_t n;

	acct_report_parse(lines, &j, &n);
	cr_assert_eq(n, 7, "the warning is no job");
	cr_expect_str_eq(j[3].state, "CANCELLED", "the first word");
	cr_expect_eq(j[4].gpus, 1, "gres/gpu=, not the typed count");
	cr_expect_eq(j[5].start, 0);
	/* 101 a taotop run that kept 1 of its 8 GPUs busy (util 12); 102 one
	 * TAO failed (the program's); 103 not taotop's (NODE_FAIL: the
	 * cluster's); 104 taotop's, cancelled; 105 not taotop's, FAILED. */
	recs[0] = rec("tao-a", "101", TAO_DONE, NULL, 12);
	recs[1] = rec("tao-b", "102", TAO_ERROR, RECORD_ERR_PROGRAM, -1);
	recs[3] = rec("tao-d", "104", TAO_CANCELED, NULL, -1);
	memset(&r, 0, sizeof(r));
	report_add(&r, "rig", j, n, recs);
	cr_expect_float_eq(r.hours[REPORT_DONE], 8.0 + 0.0, 1e-9, "101's 8 GPU hours (107 has none)");
	cr_expect_float_eq(r.hours[REPORT_ERROR_PROGRAM], 2.0, 1e-9);
	cr_expect_float_eq(r.hours[REPORT_ERROR_INFRA], 1.0, 1e-9, "NODE_FAIL is the cluster's");
	cr_expect_float_eq(r.hours[REPORT_ERROR_OTHER], 2.0, 1e-9, "105: FAILED, not judged");
	cr_expect_float_eq(r.hours[REPORT_CANCELED], 2.0 / 6, 1e-9);
	cr_expect_eq(r.jobs[REPORT_RUNNING], 1);
	cr_expect_float_eq(r.taotop_hours[REPORT_DONE], 8.0, 1e-9);
	cr_expect_float_eq(r.taotop_hours[REPORT_ERROR_INFRA], 0.0, 1e-9);
	cr_expect_float_eq(r.idle_hours, 8.0 * 0.88, 1e-9);
	cr_expect_eq(r.matched, 3);
	cr_assert_eq(r.ntop, 4);
	cr_expect_str_eq(r.top[0].id, "tao-a", "7.04 idle hours first");
	cr_expect_str_eq(r.top[0].what, "idle 88 %");
	cr_expect_float_eq(r.top[1].hours, 2.0, 1e-9);
	cr_expect_float_eq(r.top[3].hours, 1.0, 1e-9);
	{
		char **v;
		size_t nl = report_lines(&r, "1d", &v), i;
		int saw_polar = 0;
		for (i = 0; i < nl; i++) {
			if (strstr(v[i], "polar") != NULL && strstr(v[i], "00:00:25  (4 jobs)") != NULL)
				saw_polar = 1;
			free(v[i]);
		}
		free(v);
		cr_expect(saw_polar, "polar's median of 10, 20, 30, 40 s");
	}
	{
		cJSON *o = report_json(&r, "1d");
		char *t = cJSON_PrintUnformatted(o);
		cr_expect(strstr(t, "\"error_program\":2,") != NULL, "%s", t);
		cr_expect(strstr(t, "\"idle\":7.04,") != NULL, "%s", t);
		free(t);
		cJSON_Delete(o);
	}
	for (size_t i = 0; i < 8; i++)
		record_free(recs[i]);
	report_free(&r);
	free(j);
}

Test(report, the_command_asks_the_window_and_no_free_text)
{
	char *c = acct_report_command(86400);
	cr_expect(strstr(c, "-S now-1440minutes -E now") != NULL, "%s", c);
	cr_expect(strstr(c, "JobName") == NULL, "a job's name is another user's text: %s", c);
	free(c);
}

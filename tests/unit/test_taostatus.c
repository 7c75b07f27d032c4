/* TAO's status.json, line by line, as training appends it: the lines are
 * copied in shape from TAO PyTorch (core/loggers/api_logging.py,
 * core/callbacks/loggers.py, core/decorators/workflow.py), its 0-based
 * Lightning version, and the TF-era containers. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/track/taostatus.h"

static void feed(struct tao_status *ts, const char *text)
{
	tao_status_feed(ts, text, strlen(text));
}

/* A RUNNING line with this message (caller frees). */
static char *xline(const char *message)
{
	size_t n = strlen(message) + 64;
	char *s = malloc(n);

	cr_assert_not_null(s);
	snprintf(s, n, "{\"status\": \"RUNNING\", \"message\": \"%s\"}\n", message);
	return s;
}

/* A train run of 3 epochs as current TAO PyTorch writes it (counting
 * from 1, max_epoch = num_epochs), with a diverging loss at epoch 2. */
static const char current_tao[] =
    "{\"date\": \"3/7/2025\", \"time\": \"9:5:7\", \"status\": \"STARTED\", \"verbosity\": \"INFO\", "
    "\"message\": \"Starting classification_pyt train.\"}\n"
    "{\"date\": \"3/7/2025\", \"time\": \"9:5:9\", \"status\": \"STARTED\", \"verbosity\": \"INFO\", "
    "\"message\": \"Starting Training Loop.\"}\n"
    "{\"date\": \"3/7/2025\", \"time\": \"9:6:10\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training loop in progress\", \"epoch\": 1, \"max_epoch\": 3, "
    "\"time_per_epoch\": \"0:01:01.000212\", \"eta\": \"0:02:02.000424\", "
    "\"kpi\": {\"loss\": 1.9, \"val_acc\": 0.41}}\n"
    "{\"date\": \"3/7/2025\", \"time\": \"9:7:11\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training loop in progress\", \"epoch\": 2, \"max_epoch\": 3, "
    "\"time_per_epoch\": \"0:01:01.000212\", \"eta\": \"0:01:01.000212\", "
    "\"kpi\": {\"loss\": NaN, \"val_acc\": -Infinity}}\n"
    "{\"date\": \"3/7/2025\", \"time\": \"9:8:12\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training loop in progress\", \"epoch\": 3, \"max_epoch\": 3, "
    "\"time_per_epoch\": \"0:01:01.000212\", \"eta\": \"0:00:00\", "
    "\"kpi\": {\"loss\": 0.8, \"val_acc\": Infinity}}\n"
    "{\"date\": \"3/7/2025\", \"time\": \"9:8:12\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training loop complete.\", \"kpi\": {\"loss\": 0.8, \"val_acc\": Infinity}}\n"
    "{\"date\": \"3/7/2025\", \"time\": \"9:8:13\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Train finished successfully.\", \"kpi\": {\"loss\": 0.8, \"val_acc\": Infinity}}\n";

/* The Lightning version: current_epoch from 0, max_epoch = num_epochs - 1. */
static const char zero_based_tao[] =
    "{\"date\": \"12/31/2024\", \"time\": \"23:59:59\", \"status\": \"STARTED\", "
    "\"verbosity\": \"INFO\", \"message\": \"Starting Training Loop.\"}\n"
    "{\"date\": \"1/1/2025\", \"time\": \"0:0:1\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training loop in progress\", \"epoch\": 0, \"max_epoch\": 2, \"step\": 10, "
    "\"max_step\": 30, \"time_per_epoch\": \"1 day, 2:03:04\", \"eta\": \"3 days, 0:00:01\", "
    "\"kpi\": {\"train_loss\": 2.5}}\n"
    "{\"date\": \"1/2/2025\", \"time\": \"2:3:5\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training loop in progress\", \"epoch\": 1, \"max_epoch\": 2, "
    "\"eta\": \"1 day, 2:03:04\", \"kpi\": {\"train_loss\": 1.5}}\n"
    "{\"date\": \"1/3/2025\", \"time\": \"4:6:9\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training loop in progress\", \"epoch\": 2, \"max_epoch\": 2, "
    "\"eta\": \"0:00:00\", \"kpi\": {\"train_loss\": 0.5}}\n"
    "{\"date\": \"1/3/2025\", \"time\": \"4:6:10\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"message\": \"Train finished successfully.\"}\n";

/* TAO 5.5: from 0, max_epoch = num_epochs, no step fields. */
static const char counter0_tao[] =
    "{\"epoch\": 0, \"max_epoch\": 3, \"time_per_epoch\": \"0:00:01.000100\", "
    "\"eta\": \"0:00:03.000300\", \"date\": \"5/6/2024\", \"time\": \"8:0:1\", "
    "\"status\": \"RUNNING\", \"verbosity\": \"INFO\", \"message\": \"Training loop in progress\"}\n"
    "{\"epoch\": 1, \"max_epoch\": 3, \"eta\": \"0:00:02.000200\", \"status\": \"RUNNING\", "
    "\"message\": \"Training loop in progress\"}\n"
    "{\"epoch\": 2, \"max_epoch\": 3, \"eta\": \"0:00:01.000100\", \"status\": \"RUNNING\", "
    "\"message\": \"Training loop in progress\"}\n";

/* TAO 7.0.1 as the stand-in writes it: the epoch's validation kpi on its
 * line, train_loss after it without an epoch field; epoch 2's NaN. */
static const char train_metrics_after[] =
    "{\"status\": \"RUNNING\", \"message\": \"Eval metrics generated.\", \"kpi\": {\"val_loss\": 0.9}}\n"
    "{\"epoch\": 0, \"step\": 100, \"max_epoch\": 2, \"max_step\": 300, \"status\": \"RUNNING\", "
    "\"message\": \"Training loop in progress\", \"kpi\": {\"val_loss\": 0.9}}\n"
    "{\"status\": \"RUNNING\", \"message\": \"Train metrics generated.\", "
    "\"kpi\": {\"val_loss\": 0.9, \"train_loss\": 1.5}}\n"
    "{\"epoch\": 1, \"step\": 200, \"max_epoch\": 2, \"max_step\": 300, \"status\": \"RUNNING\", "
    "\"message\": \"Training loop in progress\", \"kpi\": {\"val_loss\": 0.8, \"train_loss\": 1.5}}\n"
    "{\"status\": \"RUNNING\", \"message\": \"Train metrics generated.\", "
    "\"kpi\": {\"val_loss\": 0.8, \"train_loss\": NaN}}\n"
    "{\"epoch\": 2, \"step\": 300, \"max_epoch\": 2, \"max_step\": 300, \"status\": \"RUNNING\", "
    "\"message\": \"Training loop in progress\", \"kpi\": {\"val_loss\": 0.7, \"train_loss\": NaN}}\n"
    "{\"status\": \"RUNNING\", \"message\": \"Train metrics generated.\", "
    "\"kpi\": {\"val_loss\": 0.7, \"train_loss\": 0.5}}\n";

/* A TF-era container: SUCCESS at the end, in <results_dir>/status.json. */
static const char tf_era[] =
    "{\"date\": \"6/1/2022\", \"time\": \"10:0:0\", \"status\": \"STARTED\", \"verbosity\": \"INFO\", "
    "\"message\": \"Starting DetectNet_v2 Training job\"}\n"
    "{\"date\": \"6/1/2022\", \"time\": \"10:5:0\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"epoch\": 1, \"max_epoch\": 2, \"time_per_epoch\": \"0:05:00\", \"eta\": \"0:05:00\", "
    "\"kpi\": {\"loss\": 0.3}}\n"
    "{\"date\": \"6/1/2022\", \"time\": \"10:10:0\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", "
    "\"epoch\": 2, \"max_epoch\": 2, \"eta\": \"0:00:00\", \"kpi\": {\"loss\": 0.2}}\n"
    "{\"date\": \"6/1/2022\", \"time\": \"10:10:1\", \"status\": \"SUCCESS\", \"verbosity\": \"INFO\", "
    "\"message\": \"Training finished successfully.\"}\n";

Test(taostatus, current_tao_counts_from_1_and_its_success_line_decides)
{
	struct tao_status ts;
	enum tao_state to;
	char *msg = NULL;

	tao_status_init(&ts);
	tao_status_set_task(&ts, "train");
	feed(&ts, current_tao);
	cr_expect_eq(ts.bad_lines, 0, "NaN and Infinity lines are kept: %zu bad", ts.bad_lines);
	cr_expect_eq(ts.epoch, 3);
	cr_expect_eq(ts.max_epoch, 3, "epoch 3 of 3 at the end");
	cr_expect_eq(ts.eta_s, 0);
	cr_expect_str_eq(ts.eta, "00:00:00");
	cr_expect_str_eq(ts.metric, "loss");
	cr_assert_eq(ts.nseries, 3, "one point per epoch, the NaN one too");
	cr_expect_float_eq(ts.series[0], 1.9, 1e-9);
	cr_expect(isnan(ts.series[1]), "epoch 2's loss is NaN: %g", ts.series[1]);
	cr_expect_float_eq(ts.series[2], 0.8, 1e-9);
	cr_expect_eq(ts.verdict, TAO_VERDICT_SUCCESS);
	cr_assert_eq(tao_status_judge(&ts, &to, &msg), 1);
	cr_expect_eq(to, TAO_DONE);
	cr_expect_str_eq(msg, "status.json: Train finished successfully.");
	free(msg);
	tao_status_free(&ts);
}

Test(taostatus, the_eta_goes_down_in_the_one_duration_format)
{
	struct tao_status ts;
	const char *line = strchr(strchr(strchr(current_tao, '\n') + 1, '\n') + 1, '\n') + 1;

	tao_status_init(&ts);
	tao_status_feed(&ts, current_tao, (size_t)(line - current_tao));
	cr_expect_eq(ts.epoch, 1);
	cr_expect_eq(ts.max_epoch, 3);
	cr_expect_eq(ts.eta_s, 122, "0:02:02.000424 rounds to 122 s: %ld", ts.eta_s);
	cr_expect_str_eq(ts.eta, "00:02:02");
	cr_expect_eq(ts.verdict, TAO_VERDICT_NONE, "no final line yet");
	tao_status_free(&ts);
}

Test(taostatus, lightning_counts_from_0_and_shows_as_the_user_counts)
{
	struct tao_status ts;
	const char *second = strchr(strchr(zero_based_tao, '\n') + 1, '\n') + 1;

	tao_status_init(&ts);
	tao_status_set_task(&ts, "train");
	tao_status_feed(&ts, zero_based_tao, (size_t)(second - zero_based_tao));
	cr_expect_eq(ts.epoch, 1, "epoch 0 is the first: shown as 1, not 0");
	cr_expect_eq(ts.max_epoch, 3, "max_epoch 2 is 3 epochs");
	cr_expect_eq(ts.eta_s, 3 * 86400 + 1, "\"3 days, 0:00:01\": %ld", ts.eta_s);
	cr_expect_str_eq(ts.eta, "3-00:00:01");
	feed(&ts, second);
	cr_expect_eq(ts.epoch, 3);
	cr_expect_eq(ts.max_epoch, 3, "3 of 3 at the end, never 2 of 2 or 3 of 2");
	cr_expect_str_eq(ts.metric, "train_loss");
	cr_expect_eq(ts.nseries, 3);
	cr_expect_eq(ts.verdict, TAO_VERDICT_SUCCESS);
	tao_status_free(&ts);
}

Test(taostatus, tao_5_5_counts_from_0_with_max_epoch_the_count)
{
	struct tao_status ts;

	tao_status_init(&ts);
	feed(&ts, counter0_tao);
	cr_expect_eq(ts.epoch, 3);
	cr_expect_eq(ts.max_epoch, 3, "3 of 3 at the end, not 3 of 4");
	cr_expect_eq(ts.eta_s, 1);
	tao_status_free(&ts);
}

Test(taostatus, train_loss_after_its_epoch_line_and_one_nan_epoch)
{
	struct tao_status ts;

	tao_status_init(&ts);
	feed(&ts, train_metrics_after);
	cr_expect_eq(ts.bad_lines, 0);
	cr_expect_str_eq(ts.metric, "train_loss", "train_loss over val_loss");
	cr_assert_eq(ts.nseries, 3);
	cr_expect_float_eq(ts.series[0], 1.5, 1e-9);
	cr_expect(isnan(ts.series[1]), "epoch 2 of the user's: NaN");
	cr_expect_float_eq(ts.series[2], 0.5, 1e-9);
	cr_expect_eq(ts.epoch, 3);
	cr_expect_eq(ts.max_epoch, 3);
	tao_status_free(&ts);
}

Test(taostatus, tf_era_kpi_values_as_text)
{
	struct tao_status ts;

	tao_status_init(&ts);
	feed(&ts, "{\"status\": \"RUNNING\", \"epoch\": 1, \"max_epoch\": 2, "
	    "\"kpi\": {\"loss\": \"0.25\", \"note\": \"abc\"}}\n"
	    "{\"status\": \"RUNNING\", \"epoch\": 2, \"max_epoch\": 2, \"kpi\": {\"loss\": \"nan\"}}\n");
	cr_expect_str_eq(ts.metric, "loss");
	cr_assert_eq(ts.nseries, 2);
	cr_expect_float_eq(ts.series[0], 0.25, 1e-9);
	cr_expect(isnan(ts.series[1]));
	tao_status_free(&ts);
}

Test(taostatus, tf_era_success_and_skipped_are_final)
{
	struct tao_status ts;
	enum tao_state to;
	char *msg = NULL;

	tao_status_init(&ts);
	tao_status_set_task(&ts, "train");
	feed(&ts, tf_era);
	cr_expect_eq(ts.epoch, 2);
	cr_expect_eq(ts.max_epoch, 2);
	cr_assert_eq(tao_status_judge(&ts, &to, &msg), 1);
	cr_expect_eq(to, TAO_DONE);
	cr_expect_str_eq(msg, "status.json: SUCCESS: Training finished successfully.");
	free(msg);
	feed(&ts, "{\"status\": \"STARTED\", \"message\": \"again\"}\n");
	cr_expect_eq(ts.verdict, TAO_VERDICT_NONE, "a run that starts again has no verdict");
	feed(&ts, "{\"status\": \"SKIPPED\"}\n");
	cr_assert_eq(tao_status_judge(&ts, &to, &msg), 1);
	cr_expect_eq(to, TAO_DONE);
	cr_expect_str_eq(msg, "status.json: SKIPPED");
	free(msg);
	tao_status_free(&ts);
}

Test(taostatus, failure_verdicts_in_taos_words)
{
	static const struct {
		const char *lines;
		int final;
		enum tao_state to;
		const char *msg;
	} cases[] = {
		/* a prefixed FAILURE: the exception TAO caught and named */
		{ "{\"status\": \"STARTED\", \"message\": \"Starting classification_pyt train.\"}\n"
		  "{\"status\": \"FAILURE\", \"message\": \"Configuration error: Key 'bogus' is not in struct\"}\n",
		  1, TAO_ERROR, "status.json: FAILURE: Configuration error: Key 'bogus' is not in struct" },
		/* Ctrl-C: FAILURE, and the process exits 0 */
		{ "{\"status\": \"RUNNING\", \"epoch\": 1, \"max_epoch\": 5}\n"
		  "{\"status\": \"FAILURE\", \"message\": \"User/System interruption: Train was interrupted\"}\n",
		  1, TAO_ERROR, "status.json: FAILURE: User/System interruption: Train was interrupted" },
		/* a RuntimeError or CUDA OOM writes no final line */
		{ "{\"status\": \"STARTED\", \"message\": \"Starting Training Loop.\"}\n"
		  "{\"status\": \"RUNNING\", \"message\": \"Training loop in progress\", \"epoch\": 1}\n",
		  0, TAO_UNKNOWN, NULL },
		/* a logged ERROR mid-run: FAILURE, then the run goes on */
		{ "{\"status\": \"FAILURE\", \"message\": \"Dataloader hiccup\"}\n"
		  "{\"status\": \"RUNNING\", \"message\": \"Training loop in progress\", \"epoch\": 2}\n",
		  0, TAO_UNKNOWN, NULL },
		/* success, then the cloud upload note: still a success */
		{ "{\"status\": \"RUNNING\", \"message\": \"Train finished successfully.\"}\n"
		  "{\"status\": \"RUNNING\", \"message\": \"Job artifacts in results dir are being uploaded to the cloud\"}\n",
		  1, TAO_DONE, "status.json: Train finished successfully." },
		/* another action's success words are not this one's */
		{ "{\"status\": \"RUNNING\", \"message\": \"Evaluate finished successfully.\"}\n",
		  0, TAO_UNKNOWN, NULL },
		/* an empty file */
		{ "", 0, TAO_UNKNOWN, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tao_status ts;
		enum tao_state to = TAO_UNKNOWN;
		char *msg = NULL;
		int final;

		tao_status_init(&ts);
		tao_status_set_task(&ts, "train");
		feed(&ts, cases[i].lines);
		final = tao_status_judge(&ts, &to, &msg);
		cr_expect_eq(final, cases[i].final, "case %zu", i);
		if (cases[i].final) {
			cr_expect_eq(to, cases[i].to, "case %zu", i);
			cr_expect_str_eq(msg, cases[i].msg, "case %zu", i);
		}
		free(msg);
		tao_status_free(&ts);
	}
}

Test(taostatus, each_actions_success_words_and_tao_deploys)
{
	static const struct { const char *action, *message; int success; } cases[] = {
		{ "train", "Train finished successfully.", 1 },
		{ "evaluate", "Evaluate finished successfully.", 1 },
		{ "evaluate", "Trt_evaluate finished successfully.", 1 },
		{ "inference", "Inference finished successfully.", 1 },
		{ "export", "Export finished successfully.", 1 },
		{ "gen_trt_engine", "Gen_trt_engine finished successfully.", 1 },
		{ "prune", "Train finished successfully.", 0 },
		{ "train", "Train finished successfully", 0 },
		{ "train", "Training loop complete.", 0 },
		{ NULL, "Distill finished successfully.", 1 },
		{ NULL, "Not one word finished successfully.", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tao_status ts;
		char *line = xline(cases[i].message);

		tao_status_init(&ts);
		tao_status_set_task(&ts, cases[i].action);
		feed(&ts, line);
		cr_expect_eq(ts.verdict == TAO_VERDICT_SUCCESS, cases[i].success, "%s: %s",
		    cases[i].action ? cases[i].action : "(any)", cases[i].message);
		free(line);
		tao_status_free(&ts);
	}
}

Test(taostatus, python_timedelta_forms)
{
	static const struct { const char *s; double secs; } good[] = {
		{ "0:00:00", 0 }, { "0:01:02.345678", 62.345678 }, { "1 day, 2:03:04", 93784 },
		{ "3 days, 0:00:01", 259201 }, { "-1 day, 23:59:59", -1 }, { "12:00:00", 43200 },
		{ "100:00:00", 360000 }, { "0:00:00.5", 0.5 },
	};
	static const char *const bad[] = { "", "1:2", "abc", "1 day 2:03:04", "0:60:00",
	    "0:00:00.", "1 week, 0:00:00", "0:00:00 later", "-0:00:01" };
	size_t i;
	double d;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_expect_eq(tao_status_timedelta_parse(good[i].s, &d), 0, "%s", good[i].s);
		cr_expect_float_eq(d, good[i].secs, 1e-6, "%s: %f", good[i].s, d);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(tao_status_timedelta_parse(bad[i], &d), -1, "'%s' is no timedelta", bad[i]);
}

Test(taostatus, nan_and_infinity_are_values_not_lost_lines)
{
	struct tao_status ts;

	tao_status_init(&ts);
	feed(&ts, "{\"status\": \"RUNNING\", \"epoch\": 1, \"max_epoch\": 2, "
	    "\"message\": \"NaN Infinity in a string stay text\", \"kpi\": {\"loss\": -Infinity}}\n"
	    "{\"status\": \"RUNNING\", \"epoch\": 2, \"max_epoch\": 2, \"kpi\": {\"loss\": Infinity}}\n"
	    "{\"status\": \"RUNNING\", \"epoch\": 2, \"kpi\": {\"loss\": NaNa}}\n");
	cr_expect_eq(ts.lines, 3);
	cr_expect_eq(ts.bad_lines, 1, "NaNa is still no JSON");
	cr_expect_str_eq(ts.message, "NaN Infinity in a string stay text");
	cr_assert_eq(ts.nseries, 2);
	cr_expect(isinf(ts.series[0]) && ts.series[0] < 0);
	cr_expect(isinf(ts.series[1]) && ts.series[1] > 0);
	tao_status_free(&ts);
}

Test(taostatus, unpadded_date_and_time)
{
	struct tao_status ts;
	struct tm tm;

	tao_status_init(&ts);
	feed(&ts, "{\"date\": \"3/7/2025\", \"time\": \"9:5:7\", \"status\": \"RUNNING\"}\n");
	cr_assert_neq(ts.at, 0);
	localtime_r(&ts.at, &tm);
	cr_expect_eq(tm.tm_year, 125);
	cr_expect_eq(tm.tm_mon, 2);
	cr_expect_eq(tm.tm_mday, 7);
	cr_expect_eq(tm.tm_hour, 9);
	cr_expect_eq(tm.tm_min, 5);
	cr_expect_eq(tm.tm_sec, 7);
	tao_status_free(&ts);
}

/* Whether two readings agree on everything a row or a verdict shows. */
static void expect_same(const struct tao_status *a, const struct tao_status *b, size_t cut)
{
	size_t i;

	cr_expect_str_eq(a->status, b->status, "cut %zu", cut);
	cr_expect_eq(a->epoch, b->epoch, "cut %zu", cut);
	cr_expect_eq(a->max_epoch, b->max_epoch, "cut %zu", cut);
	cr_expect_eq(a->eta_s, b->eta_s, "cut %zu", cut);
	cr_expect_eq(a->lines, b->lines, "cut %zu", cut);
	cr_expect_eq(a->bad_lines, b->bad_lines, "cut %zu", cut);
	cr_expect_eq(a->verdict, b->verdict, "cut %zu", cut);
	cr_assert_eq(a->nseries, b->nseries, "cut %zu", cut);
	for (i = 0; i < a->nseries; i++)
		cr_expect(memcmp(&a->series[i], &b->series[i], sizeof(double)) == 0, "cut %zu", cut);
}

Test(taostatus, a_file_fed_in_two_pieces_is_the_file_fed_whole)
{
	const char *files[] = { current_tao, zero_based_tao, counter0_tao, train_metrics_after,
	    tf_era };
	size_t f, cut;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct tao_status whole;
		size_t len = strlen(files[f]);

		tao_status_init(&whole);
		tao_status_set_task(&whole, "train");
		feed(&whole, files[f]);
		for (cut = 0; cut <= len; cut++) {
			struct tao_status two;
			tao_status_init(&two);
			tao_status_set_task(&two, "train");
			tao_status_feed(&two, files[f], cut);
			tao_status_feed(&two, files[f] + cut, len - cut);
			expect_same(&whole, &two, cut);
			tao_status_free(&two);
		}
		tao_status_free(&whole);
	}
}

Test(taostatus, a_line_still_being_written_counts_once_it_ends)
{
	struct tao_status ts;

	tao_status_init(&ts);
	feed(&ts, "{\"status\": \"RUNNING\", \"epoch\": 4, \"max_e");
	cr_expect_eq(ts.lines, 0);
	cr_expect_eq(ts.epoch, -1);
	feed(&ts, "poch\": 9}\n");
	cr_expect_eq(ts.lines, 1);
	cr_expect_eq(ts.epoch, 4);
	cr_expect_eq(ts.max_epoch, 9);
	tao_status_reset(&ts);
	cr_expect_eq(ts.epoch, -1, "a requeued run starts over");
	tao_status_free(&ts);
}

Test(taostatus, where_tao_writes_the_status_file)
{
	static const struct {
		const char *results, *action, *image, *spec_dir;
		const char *want[4];
	} cases[] = {
		/* TAO PyTorch: the task folder, then the TF-era place */
		{ "/r", "train", "/lustre/images/nvcr.io+nvidia+tao+tao-toolkit+5.5.0-pyt.sqsh", NULL,
		  { "/r/train/status.json", "/r/status.json" } },
		/* the spec's train.results_dir first */
		{ "/r", "train", "x.sqsh", "/elsewhere/run1",
		  { "/elsewhere/run1/status.json", "/r/train/status.json", "/r/status.json" } },
		/* TAO Deploy: trt_evaluate first on a deploy image */
		{ "/r", "evaluate", "/i/nvcr.io+nvidia+tao+tao-toolkit+5.5.0-deploy.sqsh", NULL,
		  { "/r/trt_evaluate/status.json", "/r/evaluate/status.json", "/r/status.json" } },
		{ "/r", "inference", "/i/tao-toolkit+5.5.0-pyt.sqsh", NULL,
		  { "/r/inference/status.json", "/r/trt_inference/status.json", "/r/status.json" } },
		{ "/r", "gen_trt_engine", "/i/deploy.sqsh", NULL,
		  { "/r/gen_trt_engine/status.json", "/r/status.json" } },
		/* a relative spec folder is left to the search */
		{ "/r", "prune", NULL, "relative/dir", { "/r/prune/status.json", "/r/status.json" } },
	};
	size_t i, k, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char **v = tao_status_places(cases[i].results, cases[i].action, cases[i].image,
		    cases[i].spec_dir, &n);
		for (k = 0; k < 4 && cases[i].want[k] != NULL; k++) {
			cr_assert_lt(k, n, "case %zu: %zu places", i, n);
			cr_expect_str_eq(v[k], cases[i].want[k], "case %zu place %zu", i, k);
		}
		cr_expect_eq(n, k, "case %zu: %zu places, %zu wanted", i, n, k);
		for (k = 0; k < n; k++)
			free(v[k]);
		free(v);
	}
}

/* TAO 7.0.1's order as the stand-in writes it (kpi replaced on each set):
 * the next epoch's validation before its epoch line, train_loss after it,
 * TF1's graphical on the epoch line. Every key becomes a curve, each
 * value at its own epoch. */
Test(taostatus, every_kpi_and_graphical_key_is_a_curve_at_its_own_epoch)
{
	static const char lines[] =
	    "{\"status\": \"RUNNING\", \"message\": \"Eval metrics generated.\", \"kpi\": {\"val_loss\": 0.9, \"val_acc_1\": 0.5}}\n"
	    "{\"epoch\": 0, \"max_epoch\": 2, \"max_step\": 30, \"status\": \"RUNNING\", "
	    "\"message\": \"Training loop in progress\", \"kpi\": {\"val_loss\": 0.9, \"val_acc_1\": 0.5}}\n"
	    "{\"status\": \"RUNNING\", \"message\": \"Train metrics generated.\", \"kpi\": {\"train_loss\": 1.5}, "
	    "\"graphical\": {\"lr\": 0.01}}\n"
	    "{\"status\": \"RUNNING\", \"message\": \"Eval metrics generated.\", \"kpi\": {\"val_loss\": 0.8, \"val_acc_1\": 0.6}}\n"
	    "{\"epoch\": 1, \"max_epoch\": 2, \"max_step\": 30, \"status\": \"RUNNING\", "
	    "\"message\": \"Training loop in progress\", \"kpi\": {\"val_loss\": 0.8, \"val_acc_1\": 0.6}}\n"
	    "{\"status\": \"RUNNING\", \"message\": \"Train metrics generated.\", \"kpi\": {\"train_loss\": NaN}}\n"
	    "{\"status\": \"RUNNING\", \"message\": \"Eval metrics generated.\", \"kpi\": {\"val_loss\": 0.7, \"val_acc_1\": \"0.7\"}}\n"
	    "{\"epoch\": 2, \"max_epoch\": 2, \"max_step\": 30, \"status\": \"RUNNING\", "
	    "\"message\": \"Training loop in progress\", \"kpi\": {\"val_loss\": 0.7, \"val_acc_1\": \"0.7\", \"note\": \"x\"}}\n"
	    "{\"status\": \"RUNNING\", \"message\": \"Train metrics generated.\", \"kpi\": {\"train_loss\": 0.5}}\n"
	    "{\"status\": \"RUNNING\", \"message\": \"Training loop complete.\", \"kpi\": {\"train_loss\": 0.5}}\n";
	struct tao_status ts;
	const struct series *v, *a, *t, *lr;

	tao_status_init(&ts);
	feed(&ts, lines);
	cr_expect_eq(ts.curves.n, 4, "val_loss, val_acc_1, train_loss, lr (not the text \"note\")");
	v = series_set_find(&ts.curves, "val_loss");
	a = series_set_find(&ts.curves, "val_acc_1");
	t = series_set_find(&ts.curves, "train_loss");
	lr = series_set_find(&ts.curves, "lr");
	cr_assert(v && a && t && lr);
	cr_assert_eq(v->n, 3);
	cr_expect_eq(v->epoch[0], 1, "epochs as the user counts them");
	cr_expect_eq(v->epoch[2], 3);
	cr_expect_float_eq(v->value[0], 0.9, 1e-12, "epoch 1's own, not the next one's");
	cr_expect_float_eq(v->value[1], 0.8, 1e-12);
	cr_expect_float_eq(v->value[2], 0.7, 1e-12);
	cr_expect_float_eq(a->value[2], 0.7, 1e-12, "a number written as text counts");
	cr_assert_eq(t->n, 3);
	cr_expect_float_eq(t->value[0], 1.5, 1e-12);
	cr_expect(isnan(t->value[1]));
	cr_expect_float_eq(t->value[2], 0.5, 1e-12);
	cr_expect_eq(lr->n, 1);
	cr_expect_eq(lr->epoch[0], 1);
	tao_status_reset(&ts);
	cr_expect_eq(ts.curves.n, 0, "a reset forgets them");
	tao_status_free(&ts);
}

/* Cosmos's structured status (engine/submit/cosmos.h): only SUCCESS is a
 * success; TAO's "Train finished successfully." and SKIPPED are not, so
 * SLURM's COMPLETED stays provisional until SUCCESS comes. */
Test(taostatus, cosmos_takes_only_success_as_a_success)
{
	struct tao_status ts;
	enum tao_state to;
	char *msg = NULL, *done = xline("Train finished successfully.");

	tao_status_init(&ts);
	tao_status_set_task(&ts, "train");
	ts.success_only = 1;
	feed(&ts, "{\"status\": \"STARTED\", \"message\": \"Cosmos-RL controller started\"}\n");
	feed(&ts, done);
	feed(&ts, "{\"status\": \"SKIPPED\"}\n");
	cr_expect_eq(ts.verdict, TAO_VERDICT_NONE);
	cr_expect_eq(tao_status_judge(&ts, &to, &msg), 0, "no final line yet: %s", msg ? msg : "");
	tao_status_reset(&ts);
	cr_expect_eq(ts.success_only, 1, "a reset keeps the rule");
	feed(&ts, "{\"status\": \"SUCCESS\", \"message\": \"Training finished successfully\"}\n");
	cr_assert_eq(tao_status_judge(&ts, &to, &msg), 1);
	cr_expect_eq(to, TAO_DONE);
	free(msg), free(done);
	tao_status_free(&ts);
}

/* TAO's status.json, line by line, as training appends it. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/track/taostatus.h"

static void feed(struct tao_status *ts, const char *text)
{
	tao_status_feed(ts, text, strlen(text));
}

Test(taostatus, progress_and_a_metric_series_per_epoch)
{
	struct tao_status ts;
	tao_status_init(&ts);
	feed(&ts, "{\"status\": \"STARTED\", \"message\": \"Starting training\"}\n");
	cr_expect_str_eq(ts.status, "STARTED");
	cr_expect_eq(ts.epoch, -1);
	feed(&ts, "{\"status\": \"RUNNING\", \"epoch\": 1, \"max_epoch\": 10, \"eta\": \"0:09:00\", "
	    "\"kpi\": {\"accuracy\": 0.41, \"loss\": 1.9}}\n"
	    "{\"status\": \"RUNNING\", \"epoch\": 2, \"max_epoch\": 10, \"eta\": 480, \"kpi\": {\"loss\": 1.2}}\n"
	    "not json at all\n"
	    "{\"status\": \"RUNNING\", \"epoch\": 2, \"kpi\": {\"loss\": 1.1}}\n"
	    "{\"status\": \"RUNNING\", \"epoch\": 3, \"kpi\": {\"loss\": 0.8}}\n"
	    "{\"status\": \"RUNN");	/* a line still being written */
	cr_expect_eq(ts.epoch, 3);
	cr_expect_eq(ts.max_epoch, 10);
	cr_expect_str_eq(ts.eta, "480s");
	cr_expect_str_eq(ts.metric, "loss");
	cr_assert_eq(ts.nseries, 3, "one point per epoch");
	cr_expect_float_eq(ts.series[0], 1.9, 1e-9);
	cr_expect_float_eq(ts.series[1], 1.1, 1e-9, "the later value of epoch 2 wins");
	cr_expect_float_eq(ts.series[2], 0.8, 1e-9);
	cr_expect_str_eq(ts.kpi, "{\"loss\":0.8}");
	cr_expect_eq(ts.bad_lines, 1);
	feed(&ts, "{\"status\": \"SUCCESS\", \"message\": \"Training finished\"}\n");
	cr_expect_str_eq(ts.status, "SUCCESS");
	cr_expect_str_eq(ts.message, "Training finished");
	tao_status_free(&ts);
}

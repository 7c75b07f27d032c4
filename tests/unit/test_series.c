/* TAO's metric series as a record keeps them: which value an epoch keeps,
 * a resumed run, the bound and its thinning, the JSON. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/series.h"

Test(series, every_name_gets_its_own_series_and_a_pinned_value_stands)
{
	struct series_set set;
	const struct series *s;

	series_set_init(&set);
	series_set_add(&set, "val_loss", 1, 0.9, 1);	/* on epoch 1's line */
	series_set_add(&set, "train_loss", 1, 1.4, 0);	/* after it */
	series_set_add(&set, "train_loss", 1, 1.5, 0);	/* a later one */
	series_set_add(&set, "val_loss", 1, 0.7, 0);	/* the next epoch's, before its line */
	series_set_add(&set, "val_loss", 2, 0.7, 1);
	cr_assert_eq(set.n, 2);
	s = series_set_find(&set, "val_loss");
	cr_assert_not_null(s);
	cr_assert_eq(s->n, 2);
	cr_expect_eq(s->epoch[0], 1);
	cr_expect_float_eq(s->value[0], 0.9, 1e-12);
	cr_expect_eq(s->epoch[1], 2);
	cr_expect_float_eq(series_set_find(&set, "train_loss")->value[0], 1.5, 1e-12);
	cr_expect_null(series_set_find(&set, "lr"));
	series_set_free(&set);
}

Test(series, a_resumed_run_redoes_its_epochs)
{
	struct series_set set;
	const struct series *s;
	int e;

	series_set_init(&set);
	for (e = 1; e <= 10; e++)
		series_set_add(&set, "loss", e, e, 1);
	for (e = 6; e <= 12; e++)
		series_set_add(&set, "loss", e, 100 + e, 1);
	s = series_set_find(&set, "loss");
	cr_assert_eq(s->n, 12);
	cr_expect_float_eq(s->value[4], 5, 1e-12);
	cr_expect_float_eq(s->value[5], 106, 1e-12, "epoch 6 is the resumed run's");
	cr_expect_eq(s->epoch[11], 12);
	series_set_free(&set);
}

/* The points of a long run: at most the bound, spread evenly (one
 * stride apart), the first and the newest always there. */
static void expect_even(const struct series *s, int last)
{
	size_t i;

	cr_assert_leq(s->n, SERIES_MAX_POINTS + 1);
	cr_expect_eq(s->epoch[0], 1);
	cr_expect_eq(s->epoch[s->n - 1], last, "the newest epoch %d is kept (got %d)", last,
	    s->epoch[s->n - 1]);
	cr_expect_float_eq(s->value[s->n - 1], last * 0.5, 1e-9);
	for (i = 1; i + 1 < s->n; i++)
		cr_assert_eq(s->epoch[i] - s->epoch[i - 1], (int)s->stride,
		    "points %zu and %zu are %d epochs apart, the stride is %lu (last %d)", i - 1, i,
		    s->epoch[i] - s->epoch[i - 1], s->stride, last);
}

Test(series, a_long_run_is_thinned_evenly_and_keeps_its_newest_point)
{
	struct series_set set;
	const struct series *s;
	int e;

	series_set_init(&set);
	for (e = 1; e <= SERIES_MAX_POINTS; e++)
		series_set_add(&set, "loss", e, e * 0.5, 1);
	s = series_set_find(&set, "loss");
	cr_expect_eq(s->n, SERIES_MAX_POINTS, "every epoch kept up to the bound");
	cr_expect_eq(s->stride, 1);
	for (e = SERIES_MAX_POINTS + 1; e <= 9001; e++) {
		series_set_add(&set, "loss", e, e * 0.5, 1);
		s = series_set_find(&set, "loss");
		if (e % 997 == 0 || e == SERIES_MAX_POINTS + 1 || e == 2 * SERIES_MAX_POINTS + 1)
			expect_even(s, e);
	}
	expect_even(s, 9001);
	cr_expect_eq(s->stride, 8, "9001 epochs in 2000 points: every 8th");
	cr_expect_geq(s->n, SERIES_MAX_POINTS / 2, "thinning keeps at least half the bound");
	series_set_free(&set);
}

Test(series, nan_and_infinities_survive_the_json_and_so_does_the_thinning_state)
{
	struct series_set set, back;
	const struct series *s, *b;
	cJSON *j;
	char *text;
	int e;

	series_set_init(&set);
	series_set_add(&set, "train_loss", 0, 2.3, 1);
	series_set_add(&set, "train_loss", 1, NAN, 1);
	series_set_add(&set, "train_loss", 2, INFINITY, 1);
	series_set_add(&set, "train_loss", 3, -INFINITY, 1);
	for (e = 1; e <= 4001; e++)
		series_set_add(&set, "val_acc_1", e, e * 0.5, 1);
	j = series_set_to_json(&set);
	text = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	cr_expect(strstr(text, "[2.3,null,\"Infinity\",\"-Infinity\"]") != NULL, "%s", text);
	j = cJSON_Parse(text);
	series_set_from_json(j, &back);
	cJSON_Delete(j);
	free(text);
	cr_assert_eq(back.n, 2);
	b = series_set_find(&back, "train_loss");
	cr_assert_eq(b->n, 4);
	cr_expect_float_eq(b->value[0], 2.3, 1e-12);
	cr_expect(isnan(b->value[1]));
	cr_expect(isinf(b->value[2]) && b->value[2] > 0);
	cr_expect(isinf(b->value[3]) && b->value[3] < 0);
	s = series_set_find(&set, "val_acc_1");
	b = series_set_find(&back, "val_acc_1");
	cr_assert_eq(b->n, s->n);
	cr_expect_eq(b->stride, s->stride);
	cr_expect_eq(memcmp(b->epoch, s->epoch, s->n * sizeof(int)), 0);
	/* It goes on thinning as it would have. */
	for (e = 4002; e <= 9001; e++)
		series_set_add(&back, "val_acc_1", e, e * 0.5, 1);
	expect_even(series_set_find(&back, "val_acc_1"), 9001);
	series_set_free(&set);
	series_set_free(&back);
}

Test(series, what_cannot_be_read_is_left_out)
{
	struct series_set set;
	cJSON *j = cJSON_Parse("[{\"name\": \"a\", \"epochs\": [1, 2], \"values\": [1]},"
	    "{\"name\": 3, \"epochs\": [], \"values\": []}, 7,"
	    "{\"name\": \"b\", \"epochs\": [1, 1, 0, 2, \"x\"], \"values\": [1, 2, 3, 4, 5]}]");

	series_set_from_json(j, &set);
	cJSON_Delete(j);
	cr_assert_eq(set.n, 1, "only b reads");
	cr_expect_eq(set.s[0].n, 2, "epochs that do not increase are dropped");
	cr_expect_eq(set.s[0].epoch[1], 2);
	series_set_free(&set);
	series_set_from_json(NULL, &set);
	cr_expect_eq(set.n, 0);
}

Test(series, the_best_value_is_the_lowest_loss_and_the_highest_accuracy)
{
	struct series_set set;
	long last, best;

	series_set_init(&set);
	series_set_add(&set, "val_loss", 1, 0.9, 1);
	series_set_add(&set, "val_loss", 2, 0.4, 1);
	series_set_add(&set, "val_loss", 3, 0.6, 1);
	series_set_add(&set, "val_loss", 4, NAN, 1);
	series_set_add(&set, "val_acc_1", 1, 0.5, 1);
	series_set_add(&set, "val_acc_1", 2, 0.7, 1);
	series_set_add(&set, "lr", 1, 0.01, 1);
	series_last_best(series_set_find(&set, "val_loss"), &last, &best);
	cr_expect_eq(last, 2, "the last finite one (epoch 4 is NaN)");
	cr_expect_eq(best, 1);
	series_last_best(series_set_find(&set, "val_acc_1"), &last, &best);
	cr_expect_eq(best, 1);
	series_last_best(series_set_find(&set, "lr"), &last, &best);
	cr_expect_eq(last, 0);
	cr_expect_eq(best, -1, "no best learning rate");
	series_set_free(&set);
}

/* A metric's name comes from the cluster: one with a control byte (an
 * escape sequence a CSV to a terminal would print) or an empty one is not
 * kept; its neighbours are. */
Test(series, a_name_with_control_bytes_is_not_kept)
{
	struct series_set set;

	series_set_init(&set);
	series_set_add(&set, "loss\x1b]0;PWNED\x07", 1, 0.5, 1);
	series_set_add(&set, "", 1, 0.5, 1);
	series_set_add(&set, "val_loss", 1, 0.4, 1);
	cr_expect_eq(set.n, 1);
	cr_expect_not_null(series_set_find(&set, "val_loss"));
	series_set_free(&set);
}

/* A running job's curves as the rows hand them on: a copy, unchanged as
 * the set it was made from grows, alive while any reference is held. */
Test(series, a_shared_copy_stands_while_the_set_grows_and_lives_while_held)
{
	struct series_set set;
	struct series_shared *a, *b;
	const struct series *s;

	series_set_init(&set);
	series_set_add(&set, "val_loss", 1, 0.9, 1);
	a = series_shared_new(&set);
	series_set_add(&set, "val_loss", 2, 0.8, 1);
	series_set_add(&set, "train_loss", 2, 1.2, 1);
	s = series_set_find(series_shared_set(a), "val_loss");
	cr_assert_not_null(s);
	cr_expect_eq(s->n, 1, "the copy grew with its source");
	cr_expect_eq(series_shared_set(a)->n, 1);
	b = series_shared_ref(a);
	cr_assert_eq(b, a);
	series_shared_unref(a);
	/* Still held by b: its points readable (ASan would say otherwise). */
	cr_expect_float_eq(series_shared_set(b)->s[0].value[0], 0.9, 1e-12);
	series_shared_unref(b);
	cr_expect_null(series_shared_ref(NULL));
	series_shared_unref(NULL);
	series_set_free(&set);
}

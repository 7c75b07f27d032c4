/* The seed's defaults and rules, decided before anything is staged. */
#include <stdio.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/policy.h"
#include "engine/submit/spec.h"

static struct spec blank(void)
{
	struct spec s;
	memset(&s, 0, sizeof(s));
	s.gpus = s.nodes = s.cpus_per_task = s.requeue = -1;
	s.time_hours = -1;
	return s;
}

Test(policy, the_seeds_defaults)
{
	struct spec s = blank();
	struct resources r;
	char *err = NULL, *note = NULL;
	cr_assert_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, &note, &err), 0, "%s", err);
	cr_expect_eq(r.nodes, 1);
	cr_expect_eq(r.gpus_per_node, 4);
	cr_expect_eq(r.cpus_per_task, 16);
	cr_expect_str_eq(r.time, "4:00:00");
	cr_expect_float_eq(r.child_timeout_hours, 3.8, 1e-9, "3.8 h for a 4 h wall, never 12");
	cr_expect_str_eq(r.child_timeout, "13680s");
	cr_expect_eq(r.requeue, 1);
	cr_expect_eq(r.exclusive, 0);
}

Test(policy, more_than_four_hours_on_a_packaged_partition_is_refused)
{
	struct spec s = blank();
	struct resources r;
	char *err = NULL;
	s.time_hours = 5;
	cr_expect_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), -1);
	cr_expect(strstr(err, "5 h on polar") != NULL, "%s", err);
	cr_expect(strstr(err, "choose a partition whose MaxTime allows 5 h") != NULL, "%s", err);
	free(err), err = NULL;
	/* Elsewhere only what the partition's MaxTime allows. */
	cr_expect_eq(policy_resources(&s, &seed_defaults, "cpu_long", 168, &r, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(r.time, "5:00:00");
	cr_expect_eq(policy_resources(&s, &seed_defaults, "short", 2, &r, NULL, &err), -1);
	cr_expect(strstr(err, "its MaxTime is 2 h") != NULL, "%s", err);
	free(err), err = NULL;
	cr_expect_eq(policy_resources(&s, &seed_defaults, "mystery", 0, &r, NULL, &err), -1);
	cr_expect(strstr(err, "could not be read") != NULL, "%s", err);
	free(err);
}

Test(policy, a_node_or_more_of_gpus_means_exclusive_nodes)
{
	struct { int gpus, nodes, per; } cases[] = { { 8, 1, 8 }, { 16, 2, 8 }, { 12, 2, 6 },
	    { 20, 4, 5 }, { 24, 3, 8 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spec s = blank();
		struct resources r;
		char *err = NULL, *note = NULL;
		s.gpus = cases[i].gpus;
		cr_assert_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, &note, &err), 0, "%s", err);
		cr_expect_eq(r.nodes, cases[i].nodes, "%d GPUs", cases[i].gpus);
		cr_expect_eq(r.gpus_per_node, cases[i].per, "%d GPUs", cases[i].gpus);
		cr_expect(r.exclusive);
		cr_expect(note != NULL && strstr(note, "exclusive") != NULL, "says what it chose");
		free(note);
	}
}

Test(policy, times_format_as_slurm_wants)
{
	char t[16];
	policy_format_time(3.8, t, sizeof(t));
	cr_expect_str_eq(t, "3:48:00");
	policy_format_time(0.5, t, sizeof(t));
	cr_expect_str_eq(t, "0:30:00");
	policy_format_time(30, t, sizeof(t));
	cr_expect_str_eq(t, "1-6:00:00");
}

/* An uneven total is refused with the shapes that would work, never spread
 * over as many exclusive one-GPU nodes as it has GPUs. */
Test(policy, an_uneven_total_is_refused_naming_the_shapes_that_work)
{
	int totals[] = { 11, 13, 17, 19 };
	for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
		struct spec s = blank();
		struct resources r;
		char *err = NULL;
		s.gpus = totals[i];
		cr_expect_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), -1,
		    "%d GPUs gave %d x %d", totals[i], r.nodes, r.gpus_per_node);
		cr_assert_not_null(err);
		char want[32];
		snprintf(want, sizeof(want), "%d or %d", totals[i] / 8 * 8, totals[i] / 8 * 8 + 8);
		cr_expect(strstr(err, want) != NULL, "%d: %s", totals[i], err);
		free(err);
	}
}

/* gpus_per_node says the shape outright: with nodes, or from a total. */
Test(policy, gpus_per_node_says_the_shape)
{
	struct spec s = blank();
	struct resources r;
	char *err = NULL;
	s.gpus_per_node = 4;
	s.nodes = 3;
	cr_assert_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), 0, "%s", err);
	cr_expect(r.nodes == 3 && r.gpus_per_node == 4 && r.gpus_total == 12 && !r.exclusive);
	s = blank();
	s.gpus_per_node = 8;
	s.gpus = 24;
	cr_assert_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), 0, "%s", err);
	cr_expect(r.nodes == 3 && r.gpus_per_node == 8 && r.exclusive);
	s = blank();
	s.gpus_per_node = 4;
	s.gpus = 11;
	cr_expect_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), -1);
	cr_expect(err != NULL && strstr(err, "8 or 12") != NULL, "%s", err);
	free(err), err = NULL;
	s = blank();
	s.gpus_per_node = 4;
	s.gpus = 8;
	s.nodes = 3;
	cr_expect_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), -1);
	cr_expect(err != NULL && strstr(err, "disagree") != NULL, "%s", err);
	free(err);
}

/* Segments: the child timeout is 0.95 of whatever wall, the bundle's own
 * when below the wall, refused at or above it (the step would never stop
 * before SLURM's --time, and the job could not requeue itself). */
Test(policy, the_child_timeout_follows_the_wall)
{
	struct spec s = blank();
	struct resources r;
	char *err = NULL;

	s.time_hours = 1.0 / 60;	/* SLURM's shortest --time: a minute */
	cr_assert_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(r.time, "0:01:00");
	cr_expect_str_eq(r.child_timeout, "57s", "0.95 of a minute");
}

Test(policy, a_bundles_child_timeout_below_the_wall_is_used)
{
	struct spec s = blank();
	struct resources r;
	char *err = NULL;

	s.time_hours = 4;
	s.child_timeout_hours = 3.5;
	cr_assert_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(r.child_timeout, "12600s");
	cr_expect_str_eq(r.time, "4:00:00", "the wall stays");
}

Test(policy, a_child_timeout_at_or_above_the_wall_is_refused)
{
	const double asked[] = { 4, 4.5 };
	size_t i;

	for (i = 0; i < 2; i++) {
		struct spec s = blank();
		struct resources r;
		char *err = NULL;
		s.time_hours = 4;
		s.child_timeout_hours = asked[i];
		cr_assert_eq(policy_resources(&s, &seed_defaults, "polar", 4, &r, NULL, &err), -1,
		    "%g h under a 4 h wall was taken", asked[i]);
		cr_expect(strstr(err, "child_timeout_hours") != NULL && strstr(err, "wall") != NULL &&
		    strstr(err, "3.8") != NULL, "the field, the wall and the default named: %s", err);
		free(err);
	}
}

Test(policy, a_clusters_share_of_the_wall_is_used)
{
	struct spec s = blank();
	struct defaults d = seed_defaults;
	struct resources r;
	char *err = NULL;

	d.timeout_hours = d.time_hours * 0.9;	/* child_timeout_percent: 90 */
	s.time_hours = 2;
	cr_assert_eq(policy_resources(&s, &d, "polar", 4, &r, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(r.child_timeout, "6480s", "0.9 of 2 h");
}

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/strmap.h"

Test(strmap, puts_gets_replaces_and_deletes)
{
	struct strmap *m = strmap_new();
	int a = 1, b = 2;

	cr_expect_null(strmap_get(m, "4242"));
	strmap_put(m, "4242", &a);
	strmap_put(m, "tao-20261201-abcdef", &b);
	cr_expect_eq(strmap_get(m, "4242"), &a);
	cr_expect_eq(strmap_get(m, "tao-20261201-abcdef"), &b);
	strmap_put(m, "4242", &b);
	cr_expect_eq(strmap_get(m, "4242"), &b);
	cr_expect_eq(strmap_count(m), 2);
	cr_expect_eq(strmap_del(m, "4242"), &b);
	cr_expect_null(strmap_del(m, "4242"));
	cr_expect_null(strmap_get(m, "4242"));
	cr_expect_eq(strmap_count(m), 1);
	strmap_free(m);
}

/* Many keys in and out, checked against what must be there: the shifting
 * back on delete must keep every remaining key reachable. */
Test(strmap, survives_churn_like_jobs_coming_and_going)
{
	struct strmap *m = strmap_new();
	static char present[20000];
	char key[32];
	uint32_t x = 12345;
	int round, i, bad = -1;

	/* Mismatches noted, asserted once: with --full-stats every assertion
	 * is a message to Criterion's runner, 220 000 of them half a minute. */
	for (round = 0; round < 200000 && bad < 0; round++) {
		x = x * 1103515245u + 12345u;
		i = (int)((x >> 8) % 20000);
		snprintf(key, sizeof(key), "%d", 1000000 + i);
		if (present[i]) {
			if (strmap_del(m, key) != (void *)(intptr_t)(i + 1))
				bad = i;
			present[i] = 0;
		} else {
			strmap_put(m, key, (void *)(intptr_t)(i + 1));
			present[i] = 1;
		}
	}
	cr_assert_eq(bad, -1, "deleting key %d did not give back its value", 1000000 + bad);
	size_t n = 0;
	for (i = 0; i < 20000 && bad < 0; i++) {
		snprintf(key, sizeof(key), "%d", 1000000 + i);
		if (strmap_get(m, key) != (present[i] ? (void *)(intptr_t)(i + 1) : NULL))
			bad = i;
		n += (size_t)present[i];
	}
	cr_assert_eq(bad, -1, "key %d: not what was put, or there after its delete", 1000000 + bad);
	cr_expect_eq(strmap_count(m), n);
	strmap_clear(m);
	cr_expect_eq(strmap_count(m), 0);
	cr_expect_null(strmap_get(m, "1000001"));
	strmap_free(m);
}

/* Reserved for what a loaded index holds, before and after keys are in:
 * every key stays found. */
Test(strmap, a_reserve_keeps_every_key)
{
	struct strmap *m = strmap_new();
	char key[32];
	int i, bad = -1;

	strmap_put(m, "early", (void *)1);
	strmap_reserve(m, 5000);
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "tao-%06d", i);
		strmap_put(m, key, (void *)(intptr_t)(i + 2));
	}
	strmap_reserve(m, 10);	/* smaller than it is: nothing lost */
	for (i = 0; i < 5000 && bad < 0; i++) {
		snprintf(key, sizeof(key), "tao-%06d", i);
		if (strmap_get(m, key) != (void *)(intptr_t)(i + 2))
			bad = i;
	}
	cr_assert_eq(bad, -1, "key %d lost", bad);
	cr_expect_eq(strmap_get(m, "early"), (void *)1);
	cr_expect_eq(strmap_count(m), 5001);
	strmap_free(m);
}

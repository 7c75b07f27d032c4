#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "engine/logs/logring.h"

Test(logring, keeps_the_last_lines_in_order_within_its_bound)
{
	struct log_ring r;
	char text[64];
	size_t len;

	log_ring_init(&r, 3);
	log_ring_push_lines(&r, "a\nb\n", 4);
	cr_expect_eq(r.n, 2);
	cr_expect_str_eq(log_ring_get(&r, 0, &len), "a");
	for (int i = 0; i < 1000; i++) {
		int n = snprintf(text, sizeof(text), "line %d\n", i);
		log_ring_push_lines(&r, text, (size_t)n);
	}
	cr_expect_eq(r.n, 3, "bounded");
	cr_expect_eq(r.dropped, 999);
	cr_expect_str_eq(log_ring_get(&r, 0, &len), "line 997");
	cr_expect_str_eq(log_ring_get(&r, 2, &len), "line 999");
	cr_expect_eq(len, 8);
	cr_expect_null(log_ring_get(&r, 3, &len));
	log_ring_push_lines(&r, "no newline yet", 14);
	cr_expect_str_eq(log_ring_get(&r, 2, &len), "line 999", "a partial line is not a line");
	log_ring_clear(&r);
	cr_expect_eq(r.n, 0);
	log_ring_free(&r);
}

Test(logring, a_line_holding_nul_bytes_is_kept_whole)
{
	static const char text[] = "nul:\0\0:end\nnext\n";
	struct log_ring r;
	size_t len;
	const char *l;

	log_ring_init(&r, 4);
	log_ring_push_lines(&r, text, sizeof(text) - 1);
	cr_assert_eq(r.n, 2);
	l = log_ring_get(&r, 0, &len);
	cr_assert_eq(len, 10);
	cr_assert_eq(memcmp(l, "nul:\0\0:end", 10), 0);
	log_ring_free(&r);
}

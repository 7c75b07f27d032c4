#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

Test(buf, grows_and_stays_terminated)
{
	struct buf b;
	buf_init(&b);
	for (int i = 0; i < 1000; i++)
		buf_addf(&b, "%d,", i);
	cr_expect_eq(b.len, strlen(b.data));
	cr_expect(strncmp(b.data, "0,1,2,", 6) == 0);
	cr_expect(strcmp(b.data + b.len - 4, "999,") == 0);
	buf_free(&b);
}

Test(buf, holds_binary_bytes)
{
	struct buf b;
	buf_init(&b);
	buf_add(&b, "a\0b", 3);
	cr_expect_eq(b.len, 3);
	cr_expect_eq(memcmp(b.data, "a\0b", 3), 0);
	char *p = buf_detach(&b);
	cr_expect_null(b.data);
	free(p);
}

Test(xmalloc, asprintf_formats)
{
	char *s = xasprintf("%s-%03d", "job", 7);
	cr_expect_str_eq(s, "job-007");
	free(s);
}

Test(buf, a_secret_buffer_grows_and_resets_like_any_other)
{
	struct buf b;
	buf_init_secret(&b);
	for (int i = 0; i < 1000; i++)
		buf_addf(&b, "%d,", i % 10);
	cr_expect_eq(b.len, 2000);
	cr_expect(b.secret, "still secret after growing");
	cr_expect_eq(strncmp(b.data, "0,1,2,", 6), 0);
	buf_reset(&b);
	cr_expect_eq(b.len, 0);
	cr_expect(b.secret);
	buf_free(&b);
	cr_expect(b.secret, "a freed secret buffer stays one if reused");
	cr_expect_null(b.data);
}

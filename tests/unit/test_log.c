/* The debug log (TAOTOP_LOG): what it records holds bytes from the cluster,
 * and a user reads it in a terminal, so it is written through the
 * sanitiser, a message a line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"
#include "util/log.h"
#include "util/xmalloc.h"

Test(log, remote_bytes_are_written_harmless_one_line_each)
{
	char path[] = "/tmp/taotop-log-XXXXXX", *text, *err = NULL, *big;
	size_t len = 0;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(log_open(path, LOG_DEBUG), 0);
	log_msg(LOG_INFO, "banner: %s", "hi\x1b]0;PWNED\x07\x1b[2Jthere\nforged 12:00 error line");
	log_msg(LOG_DEBUG, "job name %s", "a\xe2\x80\xaetxt.exe");
	big = xmalloc(5000);
	memset(big, 'x', 4999);
	big[4999] = '\0';
	big[10] = '\x1b';
	log_msg(LOG_WARN, "%s", big);	/* longer than the stack's buffer */
	log_close();
	text = file_read_all(path, &len, &err);
	cr_assert_not_null(text, "%s", err);
	cr_expect_null(strchr(text, '\x1b'), "an escape reached the log:\n%s", text);
	cr_expect_not_null(strstr(text, " info banner: hithere^Jforged 12:00 error line\n"), "%s", text);
	cr_expect_not_null(strstr(text, "job name a<U+202E>txt.exe\n"), "%s", text);
	cr_expect_null(strstr(text, "\xe2\x80\xae"), "%s", text);
	cr_expect_not_null(strstr(text, "xxxxxxxxx"), "the long line is there");
	{
		size_t lines = 0;
		for (const char *p = text; *p; p++)
			lines += *p == '\n';
		cr_expect_eq(lines, 3, "a message a line:\n%s", text);
	}
	free(text), free(big);
	unlink(path);
}

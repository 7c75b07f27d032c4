#include "cli/show.h"

#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/sanitize.h"

static const char *shown(int tty, int one_line, const char *s)
{
	static struct buf slot[SHOW_SLOTS];
	static unsigned next;
	struct buf *b;

	if (s == NULL || !tty)
		return s;
	b = &slot[next++ % SHOW_SLOTS];
	buf_reset(b);
	(one_line ? sanitize_append_line : sanitize_append)(b, s, strlen(s));
	return b->data != NULL ? b->data : "";
}

const char *show_tty(int tty, const char *s)
{
	return shown(tty, 1, s);
}

const char *show_on(FILE *f, const char *s)
{
	return show_tty(isatty(fileno(f)), s);
}

const char *show(const char *s)
{
	return show_on(stdout, s);
}

const char *show_err(const char *s)
{
	return shown(isatty(2), 0, s);
}

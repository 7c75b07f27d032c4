#include "ssh/quote.h"

#include <string.h>

#include "util/buf.h"

/*
 * Single quotes keep every byte literal in sh except the single quote itself,
 * which cannot appear inside them: close the quotes, add an escaped quote,
 * reopen. A word of safe characters only is left bare, for readable commands;
 * a leading '-' stays safe because quoting could not stop a command from
 * reading it as an option anyway (callers put "--" where that matters).
 */
static int is_safe(const char *s, size_t len)
{
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("/._-+,:@%", c) != NULL))
			return 0;
	}
	/* No '=' (an assignment in first position) and no '~' (tilde
	 * expansion) in the set: those words get quoted. */
	return 1;
}

void sh_quote_buf(struct buf *b, const char *s, size_t len)
{
	size_t i;

	if (is_safe(s, len)) {
		buf_add(b, s, len);
		return;
	}
	buf_addc(b, '\'');
	for (i = 0; i < len; i++) {
		if (s[i] == '\'')
			buf_add(b, "'\\''", 4);
		else
			buf_addc(b, s[i]);
	}
	buf_addc(b, '\'');
}

char *sh_quote(const char *s)
{
	struct buf b;

	buf_init(&b);
	sh_quote_buf(&b, s, strlen(s));
	return buf_detach(&b);
}

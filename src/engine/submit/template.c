#include "engine/submit/template.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

/* At p ("@@..."), the length of NAME in @@NAME@@, or 0 if p holds none. */
static size_t placeholder_at(const char *p)
{
	size_t n = 0;

	if (p[0] != '@' || p[1] != '@')
		return 0;
	while (isupper((unsigned char)p[2 + n]) || isdigit((unsigned char)p[2 + n]) || p[2 + n] == '_')
		n++;
	return n > 0 && p[2 + n] == '@' && p[3 + n] == '@' ? n : 0;
}

static const struct tmpl_value *lookup(const struct tmpl_value *v, size_t n, const char *name,
    size_t len)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strlen(v[i].name) == len && strncmp(v[i].name, name, len) == 0)
			return &v[i];
	return NULL;
}

int template_render(const char *what, const char *text, const struct tmpl_value *values,
    size_t n, char **out, char **err)
{
	struct buf b;
	const char *p = text;
	int line = 1;

	buf_init(&b);
	while (*p != '\0') {
		size_t len = placeholder_at(p);
		const struct tmpl_value *v;

		if (len == 0) {
			if (p[0] == '@' && p[1] == '@') {
				/* "@@" that opens no well-formed placeholder */
				*err = xasprintf("%s:%d: malformed placeholder near \"%.20s\": write "
				    "@@NAME@@ with capitals, digits and _", what, line, p);
				buf_free(&b);
				return -1;
			}
			line += *p == '\n';
			buf_addc(&b, *p++);
			continue;
		}
		v = lookup(values, n, p + 2, len);
		if (v == NULL || v->value == NULL) {
			*err = xasprintf("%s:%d: placeholder @@%.*s@@ has no value: nothing was "
			    "submitted", what, line, (int)len, p + 2);
			buf_free(&b);
			return -1;
		}
		buf_adds(&b, v->value);
		p += len + 4;
	}
	*out = buf_detach(&b);
	return 0;
}

char *template_placeholders(const char *text)
{
	struct buf seen;	/* "\nA\nB\n": each name between newlines */
	const char *p;
	char *names;

	buf_init(&seen);
	buf_addc(&seen, '\n');
	for (p = text; *p != '\0'; p++) {
		size_t len = placeholder_at(p);
		char *key;

		if (len == 0)
			continue;
		key = xasprintf("\n%.*s\n", (int)len, p + 2);
		if (strstr(seen.data, key) == NULL)
			buf_adds(&seen, key + 1);
		free(key);
		p += len + 3;
	}
	/* Drop the leading and trailing newline. */
	names = xstrndup(seen.data + 1, seen.len > 1 ? seen.len - 2 : 0);
	buf_free(&seen);
	return names;
}

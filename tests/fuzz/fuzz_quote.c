/* The one quoting function: whatever the bytes, a POSIX shell reads the
 * quoted text back as exactly one word with exactly those bytes. Checked
 * with a reader of the shell's quoting rules (XCU 2.2). */
#include "fuzz.h"

#include "ssh/quote.h"

/* The words sh would make of s (quote removal, no expansion: a '$' or
 * '`' outside single quotes makes the result unknown: -1). */
static int sh_words(const char *s, char ***out, size_t *n)
{
	char *w = malloc(strlen(s) + 1);
	size_t len = 0;
	int in_word = 0;

	*out = NULL;
	*n = 0;
	for (;;) {
		char c = *s;
		if (c == '\0' || c == ' ' || c == '\t' || c == '\n') {
			if (in_word) {
				w[len] = '\0';
				*out = realloc(*out, (*n + 1) * sizeof(**out));
				(*out)[(*n)++] = strdup(w);
				len = 0;
				in_word = 0;
			}
			if (c == '\0')
				break;
			s++;
		} else if (c == '\'') {
			const char *end = strchr(s + 1, '\'');
			if (end == NULL)
				goto unknown;
			memcpy(w + len, s + 1, (size_t)(end - s - 1));
			len += (size_t)(end - s - 1);
			s = end + 1;
			in_word = 1;
		} else if (c == '\\') {
			if (s[1] == '\0')
				goto unknown;
			if (s[1] != '\n')
				w[len++] = s[1];
			s += 2;
			in_word = 1;
		} else if (c == '"' || c == '$' || c == '`' || strchr("|&;<>()*?[#~=", c) != NULL) {
			goto unknown;	/* quote() never leaves these bare */
		} else {
			w[len++] = c;
			s++;
			in_word = 1;
		}
	}
	free(w);
	return 0;
unknown:
	free(w);
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_text(data, size), *q = sh_quote(s), **words;
	size_t n, i;

	FUZZ_ASSERT(sh_words(q, &words, &n) == 0);
	FUZZ_ASSERT(n == 1);
	FUZZ_ASSERT(strcmp(words[0], s) == 0);
	for (i = 0; i < n; i++)
		free(words[i]);
	free(words);
	free(q);
	free(s);
	return 0;
}

/* A colour theme, as a user writes one. */
#include "fuzz.h"

#include "ui/theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct theme t;
	char *text = fuzz_text(data, size), *err = NULL;

	if (theme_parse("theme.yaml", text, &t, &err) == 0)
		theme_free(&t);
	else
		FUZZ_ASSERT(err != NULL);
	free(err);
	free(text);
	return 0;
}

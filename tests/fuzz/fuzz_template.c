/* A template (user's or shipped): rendered, nothing of @@NAME@@ is left. */
#include "fuzz.h"

#include "engine/submit/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct tmpl_value values[] = {
		{ "JOB_NAME", "tao-1" }, { "NUM_GPUS", "4" }, { "TIME", "4:00:00" },
		{ "COMMAND", "'a b' c" }, { "EMPTY", "" }, { "AT", "@@" }, { "NONE", NULL },
	};
	char *text = fuzz_text(data, size), *out = NULL, *err = NULL;

	if (template_render("fuzz", text, values, sizeof(values) / sizeof(values[0]), &out,
	    &err) == 0) {
		FUZZ_ASSERT(out != NULL && err == NULL);
	} else {
		FUZZ_ASSERT(out == NULL && err != NULL);
	}
	free(out);
	free(err);
	free(template_placeholders(text));
	free(text);
	return 0;
}

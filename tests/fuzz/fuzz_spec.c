/* A spec bundle; one that parses survives TAO's spec through the emitter;
 * a skill bank's one is bound (inputs, outputs, GPUs) and written in each
 * config format. */
#include "fuzz.h"

#include "engine/submit/bank.h"
#include "engine/submit/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec s;
	char *err = NULL, *yaml = NULL;

	if (spec_parse("bundle.yaml", (const char *)data, size, &s, &err) == 0) {
		if (spec_emit_tao(&s, &yaml, &err) != 0)
			FUZZ_ASSERT(err != NULL);
		free(yaml);
		free(err);
		err = NULL;
		if (s.format == SPEC_FORMAT_BANK) {
			static const char *const formats[] = { "yaml", "json", "toml" };
			if (bank_bind(&s, "/r/job/results", 4, &err) != 0) {
				FUZZ_ASSERT(err != NULL);
			} else {
				for (size_t i = 0; i < 3; i++) {
					char *was = s.config_format;
					s.config_format = (char *)formats[i];
					yaml = NULL;
					if (bank_config_text(&s, &yaml, &err) != 0) {
						FUZZ_ASSERT(err != NULL);
						free(err);
						err = NULL;
					}
					free(yaml);
					s.config_format = was;
				}
			}
		}
		spec_free(&s);
	} else {
		FUZZ_ASSERT(err != NULL && strncmp(err, "bundle.yaml:", 12) == 0);
	}
	free(err);
	return 0;
}

/* A spec bundle; one that parses survives TAO's spec through the emitter. */
#include "fuzz.h"

#include "engine/submit/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec s;
	char *err = NULL, *yaml = NULL;

	if (spec_parse("bundle.yaml", (const char *)data, size, &s, &err) == 0) {
		if (spec_emit_tao(&s, &yaml, &err) != 0)
			FUZZ_ASSERT(err != NULL);
		free(yaml);
		spec_free(&s);
	} else {
		FUZZ_ASSERT(err != NULL && strncmp(err, "bundle.yaml:", 12) == 0);
	}
	free(err);
	return 0;
}

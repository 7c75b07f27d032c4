/* config.yaml as a user writes it. */
#include "fuzz.h"

#include "engine/config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	char *err = NULL;

	if (config_parse("config.yaml", (const char *)data, size, &cfg, &err) == 0)
		config_free(&cfg);
	else
		FUZZ_ASSERT(err != NULL && strncmp(err, "config.yaml", 11) == 0);
	free(err);
	return 0;
}

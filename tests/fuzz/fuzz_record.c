/* A job record's JSON (a file in the records folder, maybe damaged): one
 * that loads is written back and loads to the same JSON. */
#include "fuzz.h"

#include "engine/store/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *json = fuzz_text(data, size), *err = NULL, *again, *third;
	struct job_record *r = record_from_json(json, &err), *r2;

	if (r != NULL) {
		again = record_to_json(r);
		r2 = record_from_json(again, &err);
		FUZZ_ASSERT(r2 != NULL);
		third = record_to_json(r2);
		FUZZ_ASSERT(strcmp(again, third) == 0);
		free(third);
		free(again);
		record_free(r2);
		record_free(r);
	} else {
		FUZZ_ASSERT(err != NULL);
	}
	free(err);
	free(json);
	return 0;
}

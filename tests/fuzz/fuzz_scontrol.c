/* A line of `scontrol show job -o`: the fields taotop reads from it. */
#include "fuzz.h"

#include "engine/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "StdOut", "StdErr", "JobName", "UserId", "NodeList",
	    "ArrayJobId", "ArrayTaskId", "JobState", "" };
	char *line = fuzz_text(data, size);
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *v = slurm_scontrol_field(line, keys[i]);
		/* A value is a part of the line. */
		FUZZ_ASSERT(v == NULL || strlen(v) <= size);
		free(v);
	}
	free(line);
	return 0;
}

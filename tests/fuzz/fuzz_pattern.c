/* SLURM's filename patterns (sbatch --output), as a user's job gives them. */
#include "fuzz.h"

#include "engine/slurm/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct slurm_pattern_vars v = { "4242", "4240", "2", "train", "alice", "node01" };
	const struct slurm_pattern_vars empty = { "", "", "", "", "", "" };
	char *pattern = fuzz_text(data, size), *out;

	out = slurm_expand_pattern(pattern, &v);
	FUZZ_ASSERT(out != NULL);
	/* Without a '%' nothing changes. */
	FUZZ_ASSERT(strchr(pattern, '%') != NULL || strcmp(out, pattern) == 0);
	free(out);
	free(slurm_expand_pattern(pattern, &empty));
	free(pattern);
	return 0;
}

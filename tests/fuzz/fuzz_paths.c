/* squeue's answer for a job's log paths (slurm_paths_command's fields,
 * each ended by the delimiter made with FUZZ_NONCE), and the expansion of
 * the patterns it gives. */
#include "fuzz.h"

#include "engine/slurm/slurm.h"

#define FUZZ_NONCE "0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct slurm_paths sp;

	if (slurm_paths_parse(text, FUZZ_NONCE, &sp) == 0) {
		struct slurm_pattern_vars v = { .job_id = sp.job_id, .array_job = sp.array_job,
		    .array_task = sp.array_task, .name = sp.name, .user = sp.user, .node = sp.node };
		char *path = slurm_expand_pattern(sp.out, &v);
		/* A value is a part of the answer. */
		FUZZ_ASSERT(strlen(sp.out) <= size && strlen(sp.name) <= size);
		FUZZ_ASSERT(slurm_id_ok(sp.job_id));
		free(path);
		slurm_paths_free(&sp);
	}
	free(text);
	return 0;
}

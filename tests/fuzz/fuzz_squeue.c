/* squeue/sacct output, as the poll command prints it (stdout, then stderr
 * after the first 0x01 byte), made with the nonce FUZZ_NONCE (the seeds and
 * the dictionary use it). */
#include "fuzz.h"

#include "engine/slurm/slurm.h"

#define FUZZ_NONCE "0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *err = strchr(text, '\x01');
	struct slurm_poll p;

	if (err != NULL)
		*err++ = '\0';
	slurm_poll_parse(text, err ? err : "", FUZZ_NONCE, &p);
	/* Every job parsed has a valid id. */
	for (size_t i = 0; i < p.n; i++)
		FUZZ_ASSERT(slurm_id_ok(p.jobs[i].id));
	(void)slurm_poll_find(&p, "123");
	(void)slurm_poll_find(&p, "123_4");
	slurm_poll_free(&p);
	(void)slurm_count_gpus(text, 2, 1);
	(void)slurm_count_gpus(text, 1, 0);
	(void)slurm_id_ok(text);
	free(text);
	return 0;
}

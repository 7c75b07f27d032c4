/* The GPU sampling round's answer (use_command's lines, each behind the
 * nonce and a job id), then folded into a tracker as the monitor does. */
#include "fuzz.h"

#include "engine/track/usage.h"

#define FUZZ_NONCE "0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct use_job jobs[] = { { "101", "tao-a", 1, 3 }, { "102", NULL, 2, -1 } };
	static const struct use_limits lim = { 5, 1, 1 };
	char *text = fuzz_text(data, size);
	struct use_tracker *t = use_tracker_new();
	struct use_round r;
	struct job_use *out;
	struct use_event *ev;
	size_t n, nev, i;
	int k;

	use_parse(text, FUZZ_NONCE, jobs, 2, &r);
	FUZZ_ASSERT(r.n == 2);
	for (i = 0; i < r.n; i++) {
		FUZZ_ASSERT(r.jobs[i].ngpu >= 0 && r.jobs[i].ngpu <= USE_MAX_GPUS);
		FUZZ_ASSERT(memchr(r.jobs[i].error, '\0', sizeof(r.jobs[i].error)) != NULL);
		for (k = 0; k < r.jobs[i].ngpu; k++)
			FUZZ_ASSERT(r.jobs[i].gpu[k].util == USE_UNKNOWN ||
			    (r.jobs[i].gpu[k].util >= 0 && r.jobs[i].gpu[k].util <= 100));
		FUZZ_ASSERT(use_mean_util(&r.jobs[i]) == USE_UNKNOWN ||
		    (use_mean_util(&r.jobs[i]) >= 0 && use_mean_util(&r.jobs[i]) <= 100));
	}
	/* The status bar's reason names a host, nothing a terminal acts on. */
	for (i = 0; r.unavailable != NULL && r.unavailable[i] != '\0'; i++)
		FUZZ_ASSERT((unsigned char)r.unavailable[i] >= 0x20 && r.unavailable[i] != 0x7f);
	use_tracker_fold(t, &r, jobs, 2, &lim, 5000, &out, &n, &ev, &nev);
	FUZZ_ASSERT(n == 2);
	free(out);
	use_events_free(ev, nev);
	use_round_free(&r);
	use_tracker_free(t);
	free(text);
	return 0;
}

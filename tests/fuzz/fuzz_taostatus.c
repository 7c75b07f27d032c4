/* TAO's status.json, fed whole and in two pieces cut anywhere (as a
 * follower reads it, poll by poll): the two readings must agree. */
#include "fuzz.h"

#include "engine/track/taostatus.h"

static int same_text(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tao_status whole, two;
	size_t cut = size > 0 ? data[0] % (size + 1) : 0, i;
	enum tao_state to1, to2;
	char *m1 = NULL, *m2 = NULL;
	int j1, j2;

	tao_status_init(&whole);
	tao_status_init(&two);
	tao_status_set_task(&whole, "train");
	tao_status_set_task(&two, "train");
	tao_status_feed(&whole, (const char *)data, size);
	tao_status_feed(&two, (const char *)data, cut);
	tao_status_feed(&two, (const char *)data + cut, size - cut);
	FUZZ_ASSERT(strlen(whole.status) < sizeof(whole.status));
	FUZZ_ASSERT(whole.bad_lines <= whole.lines);
	FUZZ_ASSERT(strcmp(whole.status, two.status) == 0);
	FUZZ_ASSERT(same_text(whole.message, two.message));
	FUZZ_ASSERT(whole.lines == two.lines && whole.bad_lines == two.bad_lines);
	FUZZ_ASSERT(whole.epoch == two.epoch && whole.max_epoch == two.max_epoch);
	FUZZ_ASSERT(whole.eta_s == two.eta_s && strcmp(whole.eta, two.eta) == 0);
	FUZZ_ASSERT(whole.at == two.at);
	FUZZ_ASSERT(strcmp(whole.metric, two.metric) == 0 && whole.nseries == two.nseries);
	for (i = 0; i < whole.nseries; i++)
		FUZZ_ASSERT(memcmp(&whole.series[i], &two.series[i], sizeof(double)) == 0);
	/* An epoch 0 line is shown as the first epoch, never as 0. */
	FUZZ_ASSERT(whole.epoch != 0 || whole.zero_based == 0);
	j1 = tao_status_judge(&whole, &to1, &m1);
	j2 = tao_status_judge(&two, &to2, &m2);
	FUZZ_ASSERT(j1 == j2 && (!j1 || (to1 == to2 && strcmp(m1, m2) == 0)));
	free(m1);
	free(m2);
	tao_status_free(&whole);
	tao_status_free(&two);
	return 0;
}

/* TAO's status.json, fed in two pieces as a follower reads it. */
#include "fuzz.h"

#include "engine/track/taostatus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tao_status ts;
	size_t cut = size > 0 ? data[0] % (size + 1) : 0;

	tao_status_init(&ts);
	tao_status_feed(&ts, (const char *)data, cut);
	tao_status_feed(&ts, (const char *)data + cut, size - cut);
	FUZZ_ASSERT(strlen(ts.status) < sizeof(ts.status));
	FUZZ_ASSERT(ts.bad_lines <= ts.lines);
	tao_status_free(&ts);
	return 0;
}

/* Log bytes on their way to the terminal: whatever comes in, what goes
 * out holds no control byte but tab and newline (and, in the SGR variant,
 * only ESC [ digits/semicolons m sequences), and no C1 control. */
#include "fuzz.h"

#include "util/buf.h"
#include "util/sanitize.h"

static int isdigit_c(char c)
{
	return c >= '0' && c <= '9';
}

static void check(const struct buf *b, int sgr)
{
	size_t i;

	for (i = 0; i < b->len; i++) {
		unsigned char c = (unsigned char)b->data[i];
		if (c == 0x1b && sgr) {
			FUZZ_ASSERT(i + 1 < b->len && b->data[i + 1] == '[');
			for (i += 2; i < b->len && (isdigit_c(b->data[i]) || b->data[i] == ';'); i++)
				;
			FUZZ_ASSERT(i < b->len && b->data[i] == 'm');
			continue;
		}
		FUZZ_ASSERT(c >= 0x20 || c == '\t' || c == '\n');
		FUZZ_ASSERT(c != 0x7f);
		/* C1 controls as UTF-8 (U+0080..U+009F). */
		FUZZ_ASSERT(!(c == 0xc2 && i + 1 < b->len && (unsigned char)b->data[i + 1] >= 0x80 &&
		    (unsigned char)b->data[i + 1] <= 0x9f));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf b;

	buf_init(&b);
	sanitize_append(&b, (const char *)data, size);
	check(&b, 0);
	buf_free(&b);
	buf_init(&b);
	sanitize_append_sgr(&b, (const char *)data, size);
	check(&b, 1);
	buf_free(&b);
	return 0;
}

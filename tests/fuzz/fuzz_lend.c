/* A lent session's messages as a peer may send them (a same-user process
 * is still not trusted to be well-formed): lend_recv takes any bytes
 * without a crash, never keeps more than it may, and what it takes it
 * sends again whole: the same head and blobs read back. */
#include "fuzz.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ssh/lend.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf b[4], c[4];
	struct lend_blob out[4];
	cJSON *h = NULL, *h2 = NULL;
	size_t n = 0, n2 = 0, i;
	int sv[2];

	if (size > (1u << 16) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 0;
	for (i = 0; i < 4; i++)
		buf_init(&b[i]), buf_init(&c[i]);
	if (size > 0 && write(sv[0], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[0], SHUT_WR);
	if (lend_recv(sv[1], &h, b, 4, &n) == 0) {
		char *t1, *t2;
		FUZZ_ASSERT(h != NULL && cJSON_IsObject(h) && n <= 4);
		for (i = 0; i < n; i++)
			out[i] = (struct lend_blob){ b[i].data, b[i].len };
		while (cJSON_GetObjectItemCaseSensitive(h, "blobs") != NULL)
			cJSON_DeleteItemFromObjectCaseSensitive(h, "blobs");
		t1 = cJSON_PrintUnformatted(h);
		/* Again through a fresh pair: read back as it was. */
		close(sv[0]), close(sv[1]);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			abort();
		FUZZ_ASSERT(lend_send(sv[0], h, out, n) == 0);
		h = NULL;
		shutdown(sv[0], SHUT_WR);
		FUZZ_ASSERT(lend_recv(sv[1], &h2, c, 4, &n2) == 0 && n2 == n);
		for (i = 0; i < n; i++)
			FUZZ_ASSERT(c[i].len == b[i].len && (b[i].len == 0 ||
			    memcmp(c[i].data, b[i].data, b[i].len) == 0));
		cJSON_DeleteItemFromObjectCaseSensitive(h2, "blobs");
		t2 = cJSON_PrintUnformatted(h2);
		FUZZ_ASSERT(t1 != NULL && t2 != NULL && strcmp(t1, t2) == 0);
		cJSON_free(t1), cJSON_free(t2);
	}
	cJSON_Delete(h), cJSON_Delete(h2);
	for (i = 0; i < 4; i++)
		buf_free(&b[i]), buf_free(&c[i]);
	close(sv[0]), close(sv[1]);
	return 0;
}

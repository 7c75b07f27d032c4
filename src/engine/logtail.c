#include "util/compat.h"
#include "engine/logtail.h"

#include <stdlib.h>
#include <string.h>

#include "ssh/conn.h"
#include "util/xmalloc.h"

#define BLOCK		(64u << 10)
/* Most bytes one follow tick reads: a burst of log output never makes one
 * tick (and the UI waiting on it) arbitrarily long. */
#define TICK_MAX	(4u << 20)

size_t log_collapse_cr(const char *line, size_t len, const char **start)
{
	const char *cr;

	/* "\r\n" endings are not rewrites. */
	while (len > 0 && line[len - 1] == '\r')
		len--;
	cr = compat_memrchr(line, '\r', len);
	if (cr == NULL) {
		*start = line;
		return len;
	}
	*start = cr + 1;
	return len - (size_t)(cr + 1 - line);
}

static void add_line(struct buf *out, const char *line, size_t len)
{
	const char *start;
	size_t n = log_collapse_cr(line, len, &start);

	buf_add(out, start, n);
	buf_addc(out, '\n');
}

int log_tail(struct conn *c, const char *path, size_t n, int complete_only, struct buf *out,
    uint64_t *end, int *missing, char **err)
{
	struct conn_stat st;
	struct buf back;
	uint64_t pos;
	size_t newlines = 0, i, from;
	enum conn_status rc;

	*missing = 0;
	rc = conn_stat(c, path, &st, err);
	if (rc != CONN_OK) {
		*missing = rc == CONN_NOTFOUND;
		return -1;
	}
	*end = st.size;
	/* Read blocks backwards until n+1 newlines (the last may end the
	 * file) or the start: never the whole of a large file. */
	buf_init(&back);
	pos = st.size;
	while (pos > 0 && newlines <= n) {
		uint64_t at = pos > BLOCK ? pos - BLOCK : 0;
		struct buf blk;

		buf_init(&blk);
		if (conn_read_at(c, path, at, (size_t)(pos - at), &blk, err) != CONN_OK) {
			buf_free(&blk);
			buf_free(&back);
			return -1;
		}
		for (i = 0; i < blk.len; i++)
			newlines += blk.data[i] == '\n';
		buf_add(&blk, back.data, back.len);
		buf_free(&back);
		back = blk;
		pos = at;
	}
	if (complete_only && back.len > 0 && back.data[back.len - 1] != '\n') {
		const char *nl = compat_memrchr(back.data, '\n', back.len);
		size_t keep = nl ? (size_t)(nl - back.data) + 1 : 0;
		*end -= back.len - keep;
		back.len = keep;
	}
	/* Keep the last n lines of what was read (lines end at '\n'; a last
	 * line without one counts too). */
	from = back.len;
	{
		size_t seen = 0, stop = back.len;
		if (stop > 0 && back.data[stop - 1] == '\n')
			stop--;
		from = 0;
		for (i = stop; i > 0; i--) {
			if (back.data[i - 1] == '\n' && ++seen == n) {
				from = i;
				break;
			}
		}
		if (n == 0)
			from = back.len;
	}
	for (i = from; i < back.len;) {
		const char *nl = memchr(back.data + i, '\n', back.len - i);
		size_t len = nl ? (size_t)(nl - (back.data + i)) : back.len - i;
		add_line(out, back.data + i, len);
		i += len + 1;
	}
	buf_free(&back);
	return 0;
}

void log_follow_init(struct log_follow *f, const char *path, uint64_t offset)
{
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	f->offset = offset;
	buf_init(&f->partial);
}

void log_follow_free(struct log_follow *f)
{
	free(f->path);
	buf_free(&f->partial);
}

int log_follow_tick(struct log_follow *f, struct conn *c, struct buf *lines, char **err)
{
	struct conn_stat st;
	struct buf chunk;
	size_t i, start = 0;
	enum conn_status rc;

	f->restarted = 0;
	rc = conn_stat(c, f->path, &st, err);
	if (rc == CONN_NOTFOUND) {
		/* Not there yet (the job has not started): waiting, not an
		 * error, so no message is handed back. */
		free(*err);
		*err = NULL;
		return 0;
	}
	if (rc != CONN_OK)
		return -1;
	if (st.size < f->offset) {
		/* It shrank: a new file under the same name. */
		f->offset = 0;
		buf_reset(&f->partial);
		f->restarted = 1;
	}
	if (st.size == f->offset)
		return 0;
	buf_init(&chunk);
	rc = conn_read_at(c, f->path, f->offset,
	    (size_t)(st.size - f->offset > TICK_MAX ? TICK_MAX : st.size - f->offset), &chunk, err);
	if (rc != CONN_OK) {
		buf_free(&chunk);
		return -1;
	}
	f->offset += chunk.len;
	f->bytes_read += chunk.len;
	for (i = 0; i < chunk.len; i++) {
		if (chunk.data[i] != '\n')
			continue;
		if (f->partial.len > 0) {
			buf_add(&f->partial, chunk.data + start, i - start);
			add_line(lines, f->partial.data, f->partial.len);
			buf_reset(&f->partial);
		} else {
			add_line(lines, chunk.data + start, i - start);
		}
		start = i + 1;
	}
	buf_add(&f->partial, chunk.data + start, chunk.len - start);
	buf_free(&chunk);
	return 0;
}

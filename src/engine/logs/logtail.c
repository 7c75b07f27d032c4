#include "util/compat.h"
#include "engine/logs/logtail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "ssh/tails.h"
#include "ssh/quote.h"
#include "util/xmalloc.h"

/* The bytes a first screen looks back through at most, per file, for its
 * lines (only those lines travel): a tail in one exec needs a bound, and a
 * log's 1000 lines fit unless some are megabytes long. */
#define WINDOW		(16u << 20)
#define TAIL_TIMEOUT_MS	30000
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

/* The last n lines of the window `back` (the file's bytes up to *end) into
 * out; with complete_only an unfinished last line is left out and *end
 * moved back before it. */
static void last_lines(struct buf *back, size_t n, int complete_only, struct buf *out,
    uint64_t *end)
{
	size_t i, from, seen = 0, stop;

	if (complete_only && back->len > 0 && back->data[back->len - 1] != '\n') {
		const char *nl = compat_memrchr(back->data, '\n', back->len);
		size_t keep = nl ? (size_t)(nl - back->data) + 1 : 0;
		*end -= back->len - keep;
		back->len = keep;
	}
	/* Lines end at '\n'; a last line without one counts too. */
	stop = back->len;
	if (stop > 0 && back->data[stop - 1] == '\n')
		stop--;
	from = 0;
	for (i = stop; i > 0; i--) {
		if (back->data[i - 1] == '\n' && ++seen == n) {
			from = i;
			break;
		}
	}
	if (n == 0)
		from = back->len;
	for (i = from; i < back->len;) {
		const char *nl = memchr(back->data + i, '\n', back->len - i);
		size_t len = nl ? (size_t)(nl - (back->data + i)) : back->len - i;
		add_line(out, back->data + i, len);
		i += len + 1;
	}
}

/* The remote side of log_tails: for each file, its size and its last n+1
 * lines up to that size (a file growing meanwhile does not move them), of
 * its last WINDOW bytes at most, between marks carrying the nonce. */
static char *tails_command(const char *const *paths, size_t count, size_t n, const char *nonce)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	for (i = 0; i < count; i++) {
		buf_adds(&b, "f=");
		sh_quote_buf(&b, paths[i], strlen(paths[i]));
		buf_addf(&b, "; if [ -f \"$f\" ] && s=$(wc -c < \"$f\"); then "
		    "w=$s; [ \"$w\" -gt %u ] && w=%u; printf '@@%s %zu %%s\\n' \"$s\"; "
		    "tail -c +$((s - w + 1)) \"$f\" | head -c \"$w\" | tail -n %zu; "
		    "printf '\\n@@%s done\\n'; else echo '@@%s %zu missing'; fi; ",
		    WINDOW, WINDOW, nonce, i, n + 1, nonce, nonce, i);
	}
	return buf_detach(&b);
}

/* needle in the len bytes at hay (a log may hold NULs), or NULL. */
static const char *find(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= len; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

int log_tails(struct conn *c, const char *const *paths, size_t count, size_t n,
    int complete_only, struct buf *out, uint64_t *end, int *missing, char **err)
{
	char nonce[SLURM_NONCE_LEN + 1], *cmd, *head, *done;
	struct conn_exec x;
	const char *p, *lim;
	size_t i;

	slurm_nonce(nonce);
	cmd = tails_command(paths, count, n, nonce);
	conn_exec_init(&x, cmd);
	x.timeout_ms = TAIL_TIMEOUT_MS;
	if (conn_exec(c, &x, err) != CONN_OK) {
		conn_exec_free(&x);
		free(cmd);
		return -1;
	}
	free(cmd);
	head = xasprintf("@@%s ", nonce);
	done = xasprintf("\n@@%s done\n", nonce);
	p = x.out.data != NULL ? x.out.data : "";
	lim = p + x.out.len;
	for (i = 0; i < count; i++) {
		unsigned long long size = 0;
		size_t k;
		char word[24] = "";
		const char *at = find(p, (size_t)(lim - p), head), *body, *stop;

		end[i] = 0;
		missing[i] = 1;
		if (at == NULL || sscanf(at + strlen(head), "%zu %23s", &k, word) != 2 || k != i)
			break;
		body = memchr(at, '\n', (size_t)(lim - at));
		if (strcmp(word, "missing") == 0 || body == NULL) {
			p = body != NULL ? body + 1 : at + strlen(head);
			continue;
		}
		size = strtoull(word, NULL, 10);
		stop = find(body + 1, (size_t)(lim - (body + 1)), done);
		if (stop == NULL)
			break;
		{
			struct buf back;
			buf_init(&back);
			buf_add(&back, body + 1, (size_t)(stop - (body + 1)));
			missing[i] = 0;
			end[i] = size;
			last_lines(&back, n, complete_only, &out[i], &end[i]);
			buf_free(&back);
		}
		p = stop + strlen(done);
	}
	free(head);
	free(done);
	if (i < count) {
		const char *e = x.err.data ? x.err.data : "";
		*err = xasprintf("reading %s failed: %.*s", paths[i], (int)strcspn(e, "\n"), e);
		conn_exec_free(&x);
		return -1;
	}
	conn_exec_free(&x);
	return 0;
}

int log_tail(struct conn *c, const char *path, size_t n, int complete_only, struct buf *out,
    uint64_t *end, int *missing, char **err)
{
	if (log_tails(c, &path, 1, n, complete_only, out, end, missing, err) != 0)
		return -1;
	if (*missing) {
		*err = xasprintf("%s does not exist (yet)", path);
		return -1;
	}
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

void log_follow_flush(struct log_follow *f, struct buf *lines)
{
	if (f->partial.len > 0) {
		add_line(lines, f->partial.data, f->partial.len);
		buf_reset(&f->partial);
	}
}

void log_follow_feed(struct log_follow *f, uint64_t from, const char *data, size_t len,
    struct buf *lines)
{
	size_t i, start = 0;

	if (from < f->offset) {
		/* It shrank: a new file under the same name. */
		buf_reset(&f->partial);
		f->restarted = 1;
	}
	f->offset = from + len;
	f->bytes_read += len;
	for (i = 0; i < len; i++) {
		if (data[i] != '\n')
			continue;
		if (f->partial.len > 0) {
			buf_add(&f->partial, data + start, i - start);
			add_line(lines, f->partial.data, f->partial.len);
			buf_reset(&f->partial);
		} else {
			add_line(lines, data + start, i - start);
		}
		start = i + 1;
	}
	buf_add(&f->partial, data + start, len - start);
}

int log_follow_ticks(struct log_follow *f, size_t n, struct conn *c, struct buf *lines,
    char **err)
{
	struct conn_tail *t = xcalloc(n, sizeof(*t));
	struct buf *chunk = xcalloc(n, sizeof(*chunk));
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++) {
		f[i].restarted = 0;
		buf_init(&chunk[i]);
		t[i] = (struct conn_tail){ .path = f[i].path, .offset = f[i].offset, .max = TICK_MAX,
		    .out = &chunk[i] };
	}
	/* A file not there yet (the job has not started) is waited for: no
	 * error, no message. */
	if (tails_read(c, t, n, err) != CONN_OK)
		rc = -1;
	for (i = 0; i < n; i++) {
		if (rc == 0 && !t[i].missing && (chunk[i].len > 0 || t[i].from < f[i].offset))
			log_follow_feed(&f[i], t[i].from, chunk[i].data ? chunk[i].data : "",
			    chunk[i].len, &lines[i]);
		buf_free(&chunk[i]);
	}
	free(t);
	free(chunk);
	return rc;
}

int log_follow_tick(struct log_follow *f, struct conn *c, struct buf *lines, char **err)
{
	return log_follow_ticks(f, 1, c, lines, err);
}

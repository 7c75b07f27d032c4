#include "ssh/tails.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libssh/libssh.h>

#include "ssh/sftp_kept.h"
#include "util/xmalloc.h"

#define CHUNK		(64u << 10)	/* a read request: every server answers it whole */
#define PER_BATCH	4		/* requests in flight per file: 256 KiB a round trip */
#define IDLE_CHECK_MS	10000		/* an idle file's name looked up at most this often */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct kept_file *kept_find(struct sftp_kept *kp, const char *path)
{
	for (size_t i = 0; kp != NULL && i < kp->n; i++)
		if (strcmp(kp->files[i].path, path) == 0)
			return &kp->files[i];
	return NULL;
}

/* Let go of path's kept file (asking the server to close it). */
static void kept_close(struct conn *c, struct sftp_kept *kp, struct kept_file *slot)
{
	conn_sftp_sent(c);
	sftp_close(slot->f);
	free(slot->path);
	*slot = kp->files[--kp->n];
}

/* path's kept file, opened (one round trip, the first time only) and kept
 * if need be; NULL with *st on failure (CONN_NOTFOUND: not there yet). */
static sftp_file kept_open(struct conn *c, sftp_session sftp, struct sftp_kept **kept,
    const char *path, enum conn_status *st, char **err)
{
	struct sftp_kept *kp;
	struct kept_file *slot;
	sftp_file f;

	if (*kept == NULL)
		*kept = xcalloc(1, sizeof(**kept));
	kp = *kept;
	if ((slot = kept_find(kp, path)) != NULL) {
		slot->used = ++kp->clock;
		return slot->f;
	}
	conn_sftp_sent(c);
	f = sftp_open(sftp, path, O_RDONLY, 0);
	if (f == NULL) {
		*st = conn_sftp_fail(c, "open", path, err);
		return NULL;
	}
	if (kp->n == KEEP_MAX) {
		/* The file followed longest ago (another job's log) is let go. */
		size_t old = 0;
		for (size_t i = 1; i < kp->n; i++)
			if (kp->files[i].used < kp->files[old].used)
				old = i;
		kept_close(c, kp, &kp->files[old]);
	}
	slot = &kp->files[kp->n++];
	*slot = (struct kept_file){ .path = xstrdup(path), .f = f, .used = ++kp->clock,
	    .looked_ms = now_ms() };
	return f;
}

/* One file's reads in flight: a batch of up to PER_BATCH requests. */
struct batch {
	struct conn	*c;		/* its wait watched (conn_sftp_waits) */
	sftp_file	 f;
	int		 ids[PER_BATCH];
	int		 nreq;
	size_t		 got;		/* bytes kept from this batch */
	int		 short_read;	/* an answer came short: the end, for now */
};

/* libssh 0.11 deprecates these two for its sftp_aio calls, which 0.10
 * lacks; they are in both, so one code path serves both. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* Send reads of b->f from start, as many chunks as want needs (up to a
 * batch), without waiting for any answer. */
static int batch_begin(struct batch *b, uint64_t start, size_t want)
{
	b->nreq = 0, b->got = 0, b->short_read = 0;
	if (sftp_seek64(b->f, start) != 0)
		return -1;
	while (b->nreq < PER_BATCH && (size_t)b->nreq * CHUNK < want) {
		int id = sftp_async_read_begin(b->f, CHUNK);
		if (id < 0)
			return -1;
		b->ids[b->nreq++] = id;
		conn_sftp_sent(b->c);
	}
	return 0;
}

/* The batch's answers in order, appended to out. After a short one the
 * rest are taken off libssh's queue and dropped: the file may have grown
 * between them, and what they hold would leave a gap. */
static int batch_collect(struct batch *b, struct buf *out)
{
	int failed = 0;

	for (int j = 0; j < b->nreq; j++) {
		ssize_t r;
		buf_reserve(out, CHUNK);
		/* After an end of file libssh answers 0 at once, leaving the
		 * server's answer queued: the flag is cleared for each. */
		b->f->eof = 0;
		r = sftp_async_read(b->f, out->data + out->len, CHUNK, (uint32_t)b->ids[j]);
		if (r < 0)
			failed = 1;
		if (failed || b->short_read)
			continue;
		conn_sftp_waits(b->c, 1);	/* it answers: the wait starts again */
		out->len += (size_t)r;
		b->got += (size_t)r;
		b->short_read = r < (ssize_t)CHUNK;	/* an end of file (0) too */
	}
	if (out->data != NULL)
		out->data[out->len] = '\0';
	return failed ? -1 : 0;
}

#pragma GCC diagnostic pop

static int read_rest(struct conn_tail *t, struct batch *b, struct conn_counters *k, size_t base);

/* The file read again from its start (it is another than the one read so
 * far): what this tick read of it is dropped. */
static int read_from_start(struct conn_tail *t, struct batch *b, struct conn_counters *k,
    size_t base)
{
	t->from = 0;
	t->out->len = base;
	if (t->out->data != NULL)
		t->out->data[base] = '\0';
	if (batch_begin(b, 0, t->max) != 0 || batch_collect(b, t->out) != 0)
		return -1;
	return read_rest(t, b, k, base);
}

/* After the first batch: the byte before the offset dropped (or, when it
 * was not there, the file shrank: read from 0), and the rest of a backlog
 * bigger than a batch read batch after batch. base: out's length before. */
static int finish(struct conn_tail *t, struct batch *b, struct conn_counters *k, size_t base)
{
	if (t->offset > 0 && b->got == 0)
		return read_from_start(t, b, k, base);
	if (t->offset > 0) {
		memmove(t->out->data + base, t->out->data + base + 1, t->out->len - base - 1);
		t->out->len--;
		t->out->data[t->out->len] = '\0';
	}
	return read_rest(t, b, k, base);
}

/* The rest of a backlog bigger than a batch, batch after batch, to t->max. */
static int read_rest(struct conn_tail *t, struct batch *b, struct conn_counters *k, size_t base)
{
	size_t want = t->max, total = t->out->len - base;

	while (!b->short_read && b->nreq == PER_BATCH && total < want) {
		if (batch_begin(b, t->from + total, want - total) != 0 ||
		    batch_collect(b, t->out) != 0)
			return -1;
		total = t->out->len - base;
	}
	if (total > want) {
		t->out->len = base + want;	/* the rest comes next time */
		t->out->data[t->out->len] = '\0';
	}
	k->sftp_ops++;
	k->sftp_bytes_read += t->out->len - base;
	return 0;
}

/*
 * A file replaced by another under the same name (written anew and renamed
 * over it, or removed and made again) would be read on through the kept
 * handle, the old file's, which never grows. So the name of a file that
 * read nothing new is looked up now and then (a stat, one round trip, at
 * most every IDLE_CHECK_MS while it stays idle): when it names a shorter
 * file than was read, that is another file; a longer one is another too if
 * the handle still reads nothing new at the next tick (else the file only
 * grew between the read and the stat). Another file is opened in its place
 * and read from its start, as a file that shrank is (from is 0). 0, or -1
 * when reading it again failed.
 */
static int check_name(struct conn *c, sftp_session sftp, struct sftp_kept *kp,
    struct conn_tail *t, struct batch *b, struct conn_counters *k, size_t base)
{
	struct kept_file *slot = kept_find(kp, t->path);
	int64_t now = now_ms();
	enum conn_status st = CONN_OK;
	char *e = NULL;
	int another = 0;

	if (slot == NULL)
		return 0;
	if (t->out->len > base || t->from != t->offset) {
		slot->looked_ms = now, slot->longer = 0;	/* it moves: the same file */
		return 0;
	}
	if (slot->longer) {
		another = 1;
	} else if (now - slot->looked_ms >= IDLE_CHECK_MS) {
		sftp_attributes a;
		slot->looked_ms = now;
		conn_sftp_sent(c);
		if ((a = sftp_stat(sftp, t->path)) == NULL)
			return 0;	/* gone, or no answer: the next read says */
		another = a->size < t->offset;
		slot->longer = a->size > t->offset;
		sftp_attributes_free(a);
	}
	if (!another)
		return 0;
	kept_close(c, kp, slot);
	b->f = kept_open(c, sftp, &kp, t->path, &st, &e);
	free(e);
	if (b->f == NULL) {
		if (st != CONN_NOTFOUND)
			return -1;
		t->missing = 1;	/* gone meanwhile: waited for, as a new file is */
		return 0;
	}
	return read_from_start(t, b, k, base);
}

static enum conn_status read_tails(struct conn *c, struct conn_tail *t, size_t n, char **err);

/* Watched like every SFTP request: on a link that died silently the
 * worker's watchdog ends the wait (ssh/worker.c). */
enum conn_status tails_read(struct conn *c, struct conn_tail *t, size_t n, char **err)
{
	enum conn_status st;

	if (conn_tails_lent(c, t, n, &st, err))
		return st;
	conn_sftp_waits(c, 1);
	st = read_tails(c, t, n, err);
	conn_sftp_waits(c, 0);
	return st;
}

static enum conn_status read_tails(struct conn *c, struct conn_tail *t, size_t n, char **err)
{
	sftp_session sftp;
	struct sftp_kept **kept;
	struct conn_counters *k;
	struct batch *b;
	size_t *base, i;
	enum conn_status st = conn_sftp(c, &sftp, &kept, &k, err);

	if (st != CONN_OK)
		return st;
	b = xcalloc(n, sizeof(*b));
	base = xcalloc(n, sizeof(*base));
	for (i = 0; i < n && st == CONN_OK; i++) {
		t[i].from = t[i].offset;
		t[i].missing = 0;
		base[i] = t[i].out->len;
		b[i].c = c;
		b[i].f = kept_open(c, sftp, kept, t[i].path, &st, err);
		if (st == CONN_NOTFOUND) {
			t[i].missing = 1;
			free(*err);
			*err = NULL;
			st = CONN_OK;
		}
	}
	/* Every file's first reads go out before any answer is waited for:
	 * one round trip for all of them. Each starts a byte early (see
	 * tails.h). */
	for (i = 0; i < n && st == CONN_OK; i++)
		if (b[i].f != NULL && batch_begin(&b[i], t[i].offset ? t[i].offset - 1 : 0,
		    t[i].max + (t[i].offset ? 1 : 0)) != 0)
			st = conn_sftp_fail(c, "read", t[i].path, err);
	for (i = 0; i < n && st == CONN_OK; i++)
		if (b[i].f != NULL && batch_collect(&b[i], t[i].out) != 0)
			st = conn_sftp_fail(c, "read", t[i].path, err);
	for (i = 0; i < n && st == CONN_OK; i++)
		if (b[i].f != NULL && finish(&t[i], &b[i], k, base[i]) != 0)
			st = conn_sftp_fail(c, "read", t[i].path, err);
	for (i = 0; i < n && st == CONN_OK; i++)
		if (b[i].f != NULL && check_name(c, sftp, *kept, &t[i], &b[i], k, base[i]) != 0)
			st = conn_sftp_fail(c, "read", t[i].path, err);
	if (st != CONN_OK)
		for (i = 0; i < n; i++)
			if (t[i].out->data != NULL && t[i].out->len > base[i]) {
				t[i].out->len = base[i];	/* nothing half */
				t[i].out->data[base[i]] = '\0';
			}
	free(b);
	free(base);
	return st;
}

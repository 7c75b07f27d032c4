#include "ssh/tails.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <libssh/libssh.h>

#include "ssh/sftp_kept.h"
#include "util/xmalloc.h"

#define CHUNK		(64u << 10)	/* a read request: every server answers it whole */
#define PER_BATCH	4		/* requests in flight per file: 256 KiB a round trip */
#define KEEP_MAX	8		/* files kept open per session */

struct kept_file {
	char		*path;
	sftp_file	 f;
	unsigned long	 used;		/* the clock when last read: the oldest goes first */
};

struct sftp_kept {
	struct kept_file files[KEEP_MAX];
	size_t		 n;
	unsigned long	 clock;
};

/* libssh frees a file only in sftp_close, which asks the server and waits
 * for its answer; with the session going away (perhaps over a dead link)
 * the struct, public in sftp.h, is freed as sftp_close would free it. */
static void file_free_quietly(sftp_file f)
{
	free(f->name);
	ssh_string_free(f->handle);
	free(f);
}

void sftp_kept_forget(struct sftp_kept **k)
{
	if (*k == NULL)
		return;
	for (size_t i = 0; i < (*k)->n; i++) {
		free((*k)->files[i].path);
		file_free_quietly((*k)->files[i].f);
	}
	free(*k);
	*k = NULL;
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
	for (size_t i = 0; i < kp->n; i++)
		if (strcmp(kp->files[i].path, path) == 0) {
			kp->files[i].used = ++kp->clock;
			return kp->files[i].f;
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
		conn_sftp_sent(c);
		sftp_close(kp->files[old].f);
		free(kp->files[old].path);
		kp->files[old] = kp->files[--kp->n];
	}
	slot = &kp->files[kp->n++];
	slot->path = xstrdup(path);
	slot->f = f;
	slot->used = ++kp->clock;
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

/* After the first batch: the byte before the offset dropped (or, when it
 * was not there, the file shrank: read from 0), and the rest of a backlog
 * bigger than a batch read batch after batch. base: out's length before. */
static int finish(struct conn_tail *t, struct batch *b, struct conn_counters *k, size_t base)
{
	size_t want = t->max, total;

	if (t->offset > 0 && b->got == 0) {
		t->from = 0;
		if (batch_begin(b, 0, want) != 0 || batch_collect(b, t->out) != 0)
			return -1;
	} else if (t->offset > 0) {
		memmove(t->out->data + base, t->out->data + base + 1, t->out->len - base - 1);
		t->out->len--;
		t->out->data[t->out->len] = '\0';
	}
	total = t->out->len - base;
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

static enum conn_status read_tails(struct conn *c, struct conn_tail *t, size_t n, char **err);

/* Watched like every SFTP request: on a link that died silently the
 * worker's watchdog ends the wait (ssh/worker.c). */
enum conn_status conn_read_tails(struct conn *c, struct conn_tail *t, size_t n, char **err)
{
	enum conn_status st;

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

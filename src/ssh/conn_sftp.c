/*
 * SFTP on the session: stat, ranged reads, files written with their mode
 * from the first byte (atomically through a temp file when asked), mkdir -p
 * and remove. Read-only operations retry once on a fresh connection.
 */
#include "util/compat.h"
#include "ssh/conn_priv.h"
#include "ssh/sftp_kept.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssh/quote.h"
#include "util/xmalloc.h"

/* ---- SFTP ---------------------------------------------------------------------- */

static enum conn_status sftp_ready(struct conn *c, char **err)
{
	enum conn_status st = conn_connect(c, err);

	if (st != CONN_OK)
		return st;
	if (c->sftp != NULL)
		return CONN_OK;
	c->sftp = sftp_new(c->s);
	c->counters.sftp_requests++;	/* the version exchange */
	if (c->sftp == NULL || sftp_init(c->sftp) != SSH_OK) {
		st = ssh_is_connected(c->s) ? CONN_REMOTE : CONN_DISCONNECTED;
		conn_fail(err, st, "%s: the server's SFTP subsystem did not start: %s",
		    c->at->display, ssh_get_error(c->s));
		if (c->sftp != NULL)
			sftp_free(c->sftp);
		c->sftp = NULL;
		if (st == CONN_DISCONNECTED)
			conn_drop_session(c);
		return st;
	}
	return CONN_OK;
}

/* Map the last SFTP failure on path to a status and a sentence. */
static enum conn_status sftp_fail(struct conn *c, const char *what, const char *path, char **err)
{
	int code = c->sftp != NULL ? sftp_get_error(c->sftp) : -1;
	const char *host = c->at != NULL ? c->at->display : "?";

	if (c->s == NULL || !ssh_is_connected(c->s)) {
		conn_drop_session(c);
		return conn_fail(err, CONN_DISCONNECTED, "%s: the connection dropped during %s of %s",
		    host, what, path);
	}
	switch (code) {
	case SSH_FX_OK:
		/* No status from the server: the request failed on our side,
		 * most often no answer within the session's timeout (libssh
		 * 0.11 applies it to SFTP; 0.10 waits for the watchdog). An
		 * answer may still come for it later, so the session is not
		 * trusted again: dropped, and the next request reconnects. */
		conn_drop_session(c);
		return conn_fail(err, CONN_DISCONNECTED, "%s: no answer during %s of %s", host,
		    what, path);
	case SSH_FX_NO_SUCH_FILE:
	case SSH_FX_NO_SUCH_PATH:
		return conn_fail(err, CONN_NOTFOUND, "%s: %s: no such file or folder", host, path);
	case SSH_FX_PERMISSION_DENIED:
		return conn_fail(err, CONN_REMOTE, "%s: %s of %s: permission denied", host, what, path);
	case SSH_FX_FILE_ALREADY_EXISTS:
		return conn_fail(err, CONN_REMOTE, "%s: %s: already exists", host, path);
	default:
		return conn_fail(err, CONN_REMOTE, "%s: %s of %s failed: %s", host, what, path,
		    ssh_get_error(c->s));
	}
}

/* For ssh/tails.c (ssh/sftp_kept.h): the session's SFTP, its kept files,
 * its counters and its failures, without a second copy of any of them. */
enum conn_status conn_sftp(struct conn *c, sftp_session *sftp, struct sftp_kept ***kept,
    struct conn_counters **counters, char **err)
{
	enum conn_status st = sftp_ready(c, err);

	*sftp = c->sftp, *kept = &c->kept, *counters = &c->counters;
	return st;
}

enum conn_status conn_sftp_fail(struct conn *c, const char *what, const char *path, char **err)
{
	return sftp_fail(c, what, path, err);
}

void conn_sftp_sent(struct conn *c)
{
	c->counters.sftp_requests++;
	/* sftp_get_error() keeps the last status the server sent, whatever
	 * came after (an end of file, a missing file): cleared here, a failure
	 * that leaves it SSH_FX_OK is one the server never answered. */
	if (c->sftp != NULL)
		c->sftp->errnum = SSH_FX_OK;
}

void conn_sftp_waits(struct conn *c, int on)
{
	atomic_store(&c->sftp_since, on ? conn_now_ms() : 0);
}

int64_t conn_sftp_waiting_ms(struct conn *c)
{
	int64_t since = atomic_load(&c->sftp_since);

	return since != 0 ? conn_now_ms() - since : 0;
}

void conn_interrupt(struct conn *c)
{
	pthread_mutex_lock(&c->live_lock);
	if (c->live_fd >= 0)
		shutdown(c->live_fd, SHUT_RDWR);
	if (c->lent_fd >= 0)
		shutdown(c->lent_fd, SHUT_RDWR);
	pthread_mutex_unlock(&c->live_lock);
}

/* Read-only SFTP operations are safe to retry once on a fresh connection;
 * a retry that succeeds drops the first attempt's message (the caller sees
 * CONN_OK and would never free it). */
#define RETRY_ONCE(call)						\
	do {								\
		enum conn_status st_;					\
		conn_sftp_waits(c, 1);					\
		st_ = (call);						\
		if (st_ == CONN_DISCONNECTED) {				\
			conn_sftp_waits(c, 1);	/* its own wait */	\
			st_ = (call);					\
			if (st_ == CONN_OK && err != NULL) {		\
				free(*err);				\
				*err = NULL;				\
			}						\
		}							\
		conn_sftp_waits(c, 0);					\
		return st_;						\
	} while (0)

/* Closing a file is one more request to the server: counted like the others. */
static int counted_close(struct conn *c, sftp_file f)
{
	conn_sftp_sent(c);
	return sftp_close(f);
}

static int counted_unlink(struct conn *c, const char *path)
{
	conn_sftp_sent(c);
	return sftp_unlink(c->sftp, path);
}

static enum conn_status stat_once(struct conn *c, const char *path, struct conn_stat *st,
    char **err)
{
	sftp_attributes a;
	enum conn_status rc = sftp_ready(c, err);

	if (rc != CONN_OK)
		return rc;
	c->counters.sftp_ops++;
	conn_sftp_sent(c);
	a = sftp_stat(c->sftp, path);
	if (a == NULL)
		return sftp_fail(c, "stat", path, err);
	memset(st, 0, sizeof(*st));
	st->size = a->size;
	st->mtime = (int64_t)a->mtime;
	st->mode = a->permissions & 07777;
	st->is_dir = a->type == SSH_FILEXFER_TYPE_DIRECTORY;
	st->is_reg = a->type == SSH_FILEXFER_TYPE_REGULAR;
	sftp_attributes_free(a);
	return CONN_OK;
}

enum conn_status conn_stat(struct conn *c, const char *path, struct conn_stat *st, char **err)
{
	enum conn_status lst;

	if (lend_client_stat(c, path, st, &lst, err))
		return lst;
	RETRY_ONCE(stat_once(c, path, st, err));
}

static enum conn_status read_once(struct conn *c, const char *path, uint64_t offset,
    size_t max, struct buf *out, char **err)
{
	size_t start = out->len, got = 0;
	sftp_file f;
	enum conn_status rc = sftp_ready(c, err);

	if (rc != CONN_OK)
		return rc;
	c->counters.sftp_ops++;
	conn_sftp_sent(c);
	f = sftp_open(c->sftp, path, O_RDONLY, 0);
	if (f == NULL)
		return sftp_fail(c, "open", path, err);
	if (sftp_seek64(f, offset) != 0) {
		counted_close(c, f);
		return sftp_fail(c, "seek", path, err);
	}
	while (got < max) {
		size_t want = max - got > IO_CHUNK ? IO_CHUNK : max - got;
		ssize_t n;

		buf_reserve(out, want);
		conn_sftp_sent(c);
		n = sftp_read(f, out->data + out->len, want);
		if (n < 0) {
			out->len = start;
			out->data[out->len] = '\0';
			counted_close(c, f);
			return sftp_fail(c, "read", path, err);
		}
		if (n == 0)
			break;
		conn_sftp_waits(c, 1);	/* it answers: the wait starts again */
		out->len += (size_t)n;
		out->data[out->len] = '\0';
		got += (size_t)n;
	}
	c->counters.sftp_bytes_read += got;
	counted_close(c, f);
	return CONN_OK;
}

enum conn_status conn_read_at(struct conn *c, const char *path, uint64_t offset, size_t max,
    struct buf *out, char **err)
{
	enum conn_status lst;

	if (lend_client_read(c, path, offset, max, out, &lst, err))
		return lst;
	RETRY_ONCE(read_once(c, path, offset, max, out, err));
}

/* Create path with mode from its first byte (O_EXCL: it must be new, so no
 * earlier, looser file can be reused) and write data into it. */
static enum conn_status create_and_write(struct conn *c, const char *path, const void *data,
    size_t len, mode_t mode, char **err)
{
	size_t off = 0;
	sftp_file f;

	c->counters.sftp_ops++;
	conn_sftp_sent(c);
	f = sftp_open(c->sftp, path, O_WRONLY | O_CREAT | O_EXCL, mode);
	if (f == NULL) {
		struct conn_stat st;
		enum conn_status rc = sftp_fail(c, "create", path, err);
		/* OpenSSH says only "Failure" for an existing file. */
		if (rc == CONN_REMOTE && stat_once(c, path, &st, NULL) == CONN_OK)
			return conn_fail(err, CONN_REMOTE, "%s: %s: already exists", c->at->display, path);
		return rc;
	}
	while (off < len) {
		size_t n = len - off > IO_CHUNK ? IO_CHUNK : len - off;
		ssize_t w;

		if (c->cut_needle != NULL && strstr(path, c->cut_needle) != NULL && off >= len / 2) {
			counted_close(c, f);
			conn_drop_session(c);
			return conn_fail(err, CONN_DISCONNECTED, "connection cut halfway through "
			    "writing %s (test hook)", path);
		}
		conn_sftp_sent(c);
		w = sftp_write(f, (const char *)data + off, n);
		if (w <= 0) {
			counted_close(c, f);
			return sftp_fail(c, "write", path, err);
		}
		conn_sftp_waits(c, 1);	/* it answers: the wait starts again */
		off += (size_t)w;
	}
	if (sftp_extension_supported(c->sftp, "fsync@openssh.com", "1")) {
		conn_sftp_sent(c);
		sftp_fsync(f);
	}
	if (counted_close(c, f) != 0)
		return sftp_fail(c, "close", path, err);
	return CONN_OK;
}

static char *temp_name_for(const char *path)
{
	const char *slash = strrchr(path, '/');
	unsigned char rnd[6];
	char hex[13];
	size_t i;

	if (compat_random_bytes(rnd, sizeof(rnd)) != 0)
		memset(rnd, 0, sizeof(rnd));
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
	if (slash == NULL)
		return xasprintf(".%s.taotop-%s", path, hex);
	return xasprintf("%.*s/.%s.taotop-%s", (int)(slash - path), path, slash + 1, hex);
}

static enum conn_status write_file(struct conn *c, const char *path, const void *data,
    size_t len, mode_t mode, int flags, char **err);

enum conn_status conn_write_file(struct conn *c, const char *path, const void *data,
    size_t len, mode_t mode, int flags, char **err)
{
	enum conn_status st;

	if (lend_client_write(c, path, data, len, mode, flags, &st, err))
		return st;
	conn_sftp_waits(c, 1);
	st = write_file(c, path, data, len, mode, flags, err);
	conn_sftp_waits(c, 0);
	return st;
}

static enum conn_status write_file(struct conn *c, const char *path, const void *data,
    size_t len, mode_t mode, int flags, char **err)
{
	enum conn_status st = sftp_ready(c, err);
	struct conn_exec mv;
	char *tmp, *qtmp, *qpath, *cmd;

	if (st != CONN_OK)
		return st;
	if (!(flags & CONN_WRITE_ATOMIC))
		return create_and_write(c, path, data, len, mode, err);

	/*
	 * Atomic: a temp file beside the target, then rename(2) over it. SFTP v3
	 * rename refuses an existing target on OpenSSH and libssh 0.10 offers
	 * no posix-rename call, so the rename is one `mv -f` on the server.
	 */
	if (flags & CONN_WRITE_EXCL) {
		struct conn_stat sb;
		st = stat_once(c, path, &sb, NULL);
		if (st == CONN_OK)
			return conn_fail(err, CONN_REMOTE, "%s: %s: already exists", c->at->display, path);
	}
	tmp = temp_name_for(path);
	st = create_and_write(c, tmp, data, len, mode, err);
	if (st != CONN_OK) {
		if (st != CONN_DISCONNECTED && c->sftp != NULL)
			counted_unlink(c, tmp);
		free(tmp);
		return st;
	}
	qtmp = sh_quote(tmp);
	qpath = sh_quote(path);
	cmd = xasprintf("mv -f -T -- %s %s", qtmp, qpath);
	conn_exec_init(&mv, cmd);
	mv.timeout_ms = c->connect_timeout_s * 1000;
	st = conn_exec(c, &mv, err);
	if (st == CONN_OK && mv.exit_status != 0) {
		st = conn_fail(err, CONN_REMOTE, "%s: cannot move %s into place: %s", c->at->display,
		    path, mv.err.len ? mv.err.data : "mv failed");
		if (c->sftp != NULL)
			counted_unlink(c, tmp);
	}
	conn_exec_free(&mv);
	free(cmd);
	free(qtmp);
	free(qpath);
	free(tmp);
	return st;
}

static enum conn_status mkdir_once(struct conn *c, const char *path, mode_t mode, char **err)
{
	struct conn_stat st;
	char *p;
	size_t i, len = strlen(path);
	enum conn_status rc = stat_once(c, path, &st, NULL);

	if (rc == CONN_OK && st.is_dir)
		return CONN_OK;
	if (rc == CONN_OK)
		return conn_fail(err, CONN_REMOTE, "%s: %s exists and is not a folder", c->at->display, path);
	if (rc != CONN_NOTFOUND)
		return stat_once(c, path, &st, err);
	p = xstrdup(path);
	for (i = 1; i <= len; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		rc = stat_once(c, p, &st, NULL);
		if (rc == CONN_NOTFOUND) {
			c->counters.sftp_ops++;
			conn_sftp_sent(c);
			if (sftp_mkdir(c->sftp, p, mode) != 0) {
				/* Someone else may have made it meanwhile. */
				if (stat_once(c, p, &st, NULL) != CONN_OK || !st.is_dir) {
					rc = sftp_fail(c, "mkdir", p, err);
					free(p);
					return rc;
				}
			}
		} else if (rc != CONN_OK) {
			rc = stat_once(c, p, &st, err);
			free(p);
			return rc;
		} else if (!st.is_dir) {
			rc = conn_fail(err, CONN_REMOTE, "%s: %s exists and is not a folder",
			    c->at->display, p);
			free(p);
			return rc;
		}
		if (i < len)
			p[i] = '/';
	}
	free(p);
	return CONN_OK;
}

enum conn_status conn_mkdir_p(struct conn *c, const char *path, mode_t mode, char **err)
{
	enum conn_status lst;

	if (lend_client_mkdir(c, path, mode, &lst, err))
		return lst;
	RETRY_ONCE(mkdir_once(c, path, mode, err));
}

enum conn_status conn_unlink(struct conn *c, const char *path, char **err)
{
	enum conn_status st;

	if (lend_client_unlink(c, path, &st, err))
		return st;
	conn_sftp_waits(c, 1);
	st = sftp_ready(c, err);
	if (st == CONN_OK) {
		c->counters.sftp_ops++;
		if (counted_unlink(c, path) != 0)
			st = sftp_fail(c, "remove", path, err);
	}
	conn_sftp_waits(c, 0);
	return st;
}

/* ---- the kept files' table (ssh/sftp_kept.h) --------------------------------- */

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

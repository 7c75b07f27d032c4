/*
 * The lent session's wire and place: messages (a JSON head and byte
 * blobs), the private folder of the sockets, the peer's uid, and the
 * text that identifies a connection on both sides. See lend.h.
 */
#include "util/compat.h"
#include "ssh/lend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "util/xmalloc.h"

#define HEAD_MAX	(1u << 20)		/* a head: a command line, a path, a question */
#define BLOB_MAX	((size_t)256 << 20)	/* a blob: a command's output (capped at 64 MiB) */
#define BLOBS_MAX	8
#define READ_CHUNK	((size_t)1 << 20)

int lend_dir_check(const char *path, char **err)
{
	struct stat sb;

	if (lstat(path, &sb) != 0) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		*err = xasprintf("%s is not a folder (a link or a file is in its place): the shared "
		    "session is off until it is removed", path);
		return -1;
	}
	if (sb.st_uid != geteuid()) {
		*err = xasprintf("%s belongs to uid %u, not to you: the shared session is off (another "
		    "user could read or impersonate it); remove it or set XDG_RUNTIME_DIR to a "
		    "folder of your own", path, (unsigned)sb.st_uid);
		return -1;
	}
	if ((sb.st_mode & 077) != 0) {
		*err = xasprintf("%s has mode %03o: the shared session needs it private (chmod 700 %s)",
		    path, (unsigned)(sb.st_mode & 0777), path);
		return -1;
	}
	return 0;
}

char *lend_dir(char **err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir;

	if (xdg != NULL && xdg[0] == '/')
		dir = xasprintf("%s/taotop", xdg);
	else
		dir = xasprintf("/tmp/taotop-%u", (unsigned)geteuid());
	/* Made private from its first moment; one that was there is
	 * checked, never chmod'ed: it may not be ours. */
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		*err = xasprintf("%s: %s", dir, strerror(errno));
		free(dir);
		return NULL;
	}
	if (lend_dir_check(dir, err) != 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

int lend_peer_ok(int fd, int *peer_uid)
{
	uid_t uid;

	if (compat_peer_uid(fd, &uid) != 0)
		return 0;
	if (peer_uid != NULL)
		*peer_uid = (int)uid;
	return uid == geteuid();
}

int lend_dial(const char *dir, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name) >=
	    sizeof(sa.sun_path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || !lend_peer_ok(fd, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

const char *lend_str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

long long lend_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void add_str(cJSON *o, const char *name, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

char *lend_target_key(const struct conn_target *t)
{
	cJSON *o = cJSON_CreateObject();
	char *s, *out;

	add_str(o, "hosts", t->hosts);
	add_str(o, "user", t->user);
	add_str(o, "key_path", t->key_path);
	add_str(o, "known_hosts", t->known_hosts);
	add_str(o, "ssh_config", t->ssh_config);
	add_str(o, "jump", t->jump);
	cJSON_AddNumberToObject(o, "password_auth", t->password_auth != 0);
	cJSON_AddNumberToObject(o, "connect_timeout_s", t->connect_timeout_s > 0
	    ? t->connect_timeout_s : CONN_CONNECT_DEFAULT_S);
	/* Paths left unset are the home folder's (~/.ssh/...): the same
	 * target only with the same home. */
	add_str(o, "home", getenv("HOME"));
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	out = xstrdup(s);
	cJSON_free(s);
	return out;
}

/* ---- messages ---------------------------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

int lend_send(int fd, cJSON *head, const struct lend_blob *blobs, size_t n)
{
	cJSON *sizes = cJSON_AddArrayToObject(head, "blobs");
	unsigned char len[4];
	char *text;
	size_t tl, i;
	int rc = 0;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(sizes, cJSON_CreateNumber((double)blobs[i].len));
	text = cJSON_PrintUnformatted(head);
	cJSON_Delete(head);
	if (text == NULL)
		return -1;
	tl = strlen(text);
	len[0] = (unsigned char)(tl >> 24), len[1] = (unsigned char)(tl >> 16);
	len[2] = (unsigned char)(tl >> 8), len[3] = (unsigned char)tl;
	if (write_all(fd, len, 4) != 0 || write_all(fd, text, tl) != 0)
		rc = -1;
	for (i = 0; i < n && rc == 0; i++)
		if (blobs[i].len > 0 && write_all(fd, blobs[i].data, blobs[i].len) != 0)
			rc = -1;
	cJSON_free(text);
	return rc;
}

int lend_wait(int fd, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int rc;

	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	return rc == 1 ? 0 : -1;
}

int lend_recv(int fd, cJSON **head, struct buf *b, size_t max, size_t *n)
{
	unsigned char len[4];
	const cJSON *sizes, *s;
	size_t hl, k = 0, total = 0;
	char *text;

	*head = NULL;
	*n = 0;
	if (read_all(fd, len, 4) != 0)
		return -1;
	hl = (size_t)len[0] << 24 | (size_t)len[1] << 16 | (size_t)len[2] << 8 | len[3];
	if (hl == 0 || hl > HEAD_MAX)
		return -1;
	text = xmalloc(hl + 1);
	if (read_all(fd, text, hl) != 0) {
		free(text);
		return -1;
	}
	text[hl] = '\0';
	*head = cJSON_Parse(text);
	free(text);
	if (*head == NULL || !cJSON_IsObject(*head))
		goto bad;
	sizes = cJSON_GetObjectItemCaseSensitive(*head, "blobs");
	if (sizes != NULL && !cJSON_IsArray(sizes))
		goto bad;
	cJSON_ArrayForEach(s, sizes) {
		size_t bl;
		if (!cJSON_IsNumber(s) || s->valuedouble < 0 || s->valuedouble > (double)BLOB_MAX ||
		    k >= max || k >= BLOBS_MAX)
			goto bad;
		bl = (size_t)s->valuedouble;
		/* All of a message's blobs together within the one bound: a
		 * peer cannot make us allocate more. */
		if ((total += bl) > BLOB_MAX)
			goto bad;
		buf_reset(&b[k]);
		/* Grown as the bytes come, not to the size the peer claims. */
		while (b[k].len < bl) {
			size_t chunk = bl - b[k].len > READ_CHUNK ? READ_CHUNK : bl - b[k].len;
			buf_reserve(&b[k], chunk);
			if (read_all(fd, b[k].data + b[k].len, chunk) != 0)
				goto bad;
			b[k].len += chunk;
			b[k].data[b[k].len] = '\0';
		}
		k++;
	}
	*n = k;
	return 0;
bad:
	cJSON_Delete(*head);
	*head = NULL;
	return -1;
}

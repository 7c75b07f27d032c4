/*
 * The shared session's parts that need no cluster (ssh/lend.h): the wire
 * (a JSON head and its blobs, a malformed message refused), the private
 * folder's checks, the text that names a target, and a lender that says
 * no: the client then connects on its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "ssh/conn.h"
#include "ssh/lend.h"
#include "util/compat.h"
#include "util/xmalloc.h"

static char *temp_dir(void)
{
	char tmpl[] = "/tmp/taotop-lend-XXXXXX";

	cr_assert_not_null(mkdtemp(tmpl));
	return xstrdup(tmpl);
}

Test(lend, a_message_and_its_blobs_cross_whole)
{
	int sv[2];
	size_t big = (size_t)1 << 20, n, i;
	char *data = xmalloc(big);
	struct lend_blob out[3] = { { "stdin bytes", 11 }, { "", 0 }, { data, big } };
	struct buf in[4];
	cJSON *h = cJSON_CreateObject(), *got;

	for (i = 0; i < big; i++)
		data[i] = (char)(i * 7);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cJSON_AddStringToObject(h, "op", "exec");
	if (fork() == 0) {
		_exit(lend_send(sv[0], h, out, 3) == 0 ? 0 : 1);
	}
	for (i = 0; i < 4; i++)
		buf_init(&in[i]);
	cr_assert_eq(lend_recv(sv[1], &got, in, 4, &n), 0);
	cr_expect_eq(n, 3);
	cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(got, "op")->valuestring, "exec");
	cr_expect_eq(in[0].len, 11);
	cr_expect_str_eq(in[0].data, "stdin bytes");
	cr_expect_eq(in[1].len, 0);
	cr_expect_eq(in[2].len, big);
	cr_expect_eq(memcmp(in[2].data, data, big), 0);
	cJSON_Delete(got);
	cJSON_Delete(h);
	for (i = 0; i < 4; i++)
		buf_free(&in[i]);
	free(data);
	close(sv[0]), close(sv[1]);
}

/* Raw bytes as a message, and whether lend_recv takes it. */
static int takes(const void *raw, size_t len, size_t max)
{
	int sv[2], rc;
	struct buf b[2];
	size_t n;
	cJSON *h;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(write(sv[0], raw, len), (ssize_t)len);
	close(sv[0]);
	buf_init(&b[0]), buf_init(&b[1]);
	rc = lend_recv(sv[1], &h, b, max, &n);
	cJSON_Delete(h);
	buf_free(&b[0]), buf_free(&b[1]);
	close(sv[1]);
	return rc == 0;
}

/* A message of head (its length written before it) and then tail. */
static int takes_head(const char *head, const char *tail, size_t max)
{
	size_t hl = strlen(head), tl = strlen(tail);
	unsigned char *raw = xmalloc(4 + hl + tl);
	int rc;

	raw[0] = (unsigned char)(hl >> 24), raw[1] = (unsigned char)(hl >> 16);
	raw[2] = (unsigned char)(hl >> 8), raw[3] = (unsigned char)hl;
	memcpy(raw + 4, head, hl);
	memcpy(raw + 4 + hl, tail, tl);
	rc = takes(raw, 4 + hl + tl, max);
	free(raw);
	return rc;
}

Test(lend, a_malformed_message_is_refused_not_trusted)
{
	static const char huge[] = "\x7f\0\0\0{}";

	cr_expect(takes_head("{\"blobs\":[2]}", "hi", 2));
	cr_expect(!takes_head("{x}", "", 2), "a head that is no JSON was taken");
	cr_expect(!takes(huge, sizeof(huge) - 1, 2), "a head of 2 GiB was taken");
	cr_expect(!takes_head("{\"blobs\":[9]}", "hi", 2), "a cut blob was taken");
	cr_expect(!takes_head("{\"blobs\":[0,0,0]}", "", 2), "more blobs than room were taken");
	cr_expect(!takes_head("{\"blobs\":[-1]}", "", 2), "a negative size was taken");
	cr_expect(!takes_head("{\"blobs\":2}", "", 2), "sizes that are no list were taken");
	cr_expect(!takes_head("[]", "", 2), "a head that is no object was taken");
}

Test(lend, the_folder_must_be_the_users_own_and_private)
{
	char *dir = temp_dir(), *sub, *link, *err = NULL;

	sub = xasprintf("%s/f", dir);
	link = xasprintf("%s/l", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_expect_eq(lend_dir_check(sub, &err), 0, "%s", err ? err : "");
	chmod(sub, 0755);
	cr_expect_eq(lend_dir_check(sub, &err), -1);
	cr_expect(err != NULL && strstr(err, "has mode 755") != NULL && strstr(err, "chmod 700") !=
	    NULL, "%s", err ? err : "");
	free(err), err = NULL;
	chmod(sub, 0700);
	cr_assert_eq(symlink(sub, link), 0);
	cr_expect_eq(lend_dir_check(link, &err), -1, "a link to a folder was taken");
	cr_expect(err != NULL && strstr(err, "is not a folder") != NULL, "%s", err ? err : "");
	free(err), err = NULL;
	if (geteuid() == 0) {
		/* Another user's folder: refused, however private. */
		cr_assert_eq(chown(sub, 1, 1), 0);
		cr_expect_eq(lend_dir_check(sub, &err), -1);
		cr_expect(err != NULL && strstr(err, "belongs to uid 1, not to you") != NULL, "%s",
		    err ? err : "");
		free(err), err = NULL;
	}
	{
		char *cmd = xasprintf("rm -rf %s", dir);
		cr_expect_eq(system(cmd), 0);
		free(cmd);
	}
	free(sub), free(link), free(dir);
}

Test(lend, a_target_is_named_the_same_on_both_sides)
{
	struct conn_target a = { .hosts = "login1,login2:2222", .user = "ana", .key_path = "/k" };
	struct conn_target b = a;
	char *ka, *kb;

	/* The default connect timeout written out or left unset is one
	 * target (the monitor leaves it unset, a verb's conn has it). */
	b.connect_timeout_s = CONN_CONNECT_DEFAULT_S;
	ka = lend_target_key(&a), kb = lend_target_key(&b);
	cr_expect_str_eq(ka, kb);
	free(kb);
	/* Anything that changes where or how it connects is another. */
	b.jump = "bastion";
	kb = lend_target_key(&b);
	cr_expect_str_neq(ka, kb);
	free(kb);
	b = a;
	b.user = "bo";
	kb = lend_target_key(&b);
	cr_expect_str_neq(ka, kb);
	free(kb);
	setenv("HOME", "/elsewhere", 1);
	kb = lend_target_key(&a);
	cr_expect_str_neq(ka, kb, "another home folder is another ~/.ssh");
	free(ka), free(kb);
}

/* A lender that has no connection for anyone. */
static void *find_none(void *ctx, const char *key, const cJSON *target, char **why)
{
	(void)ctx, (void)key, (void)target;
	*why = xstrdup("not this one");
	return NULL;
}

static int run_never(void *ctx, void *handle, void (*fn)(struct conn *c, void *arg), void *arg)
{
	(void)ctx, (void)handle, (void)fn, (void)arg;
	cr_assert_fail("ran a request without a yes");
	return -1;
}

Test(lend, a_lender_without_the_target_sends_the_client_to_its_own_connection)
{
	char *dir = temp_dir(), *run = xasprintf("%s/run", dir), *err = NULL;
	struct lend_backend b = { .kind = "agent", .find = find_none, .run = run_never };
	struct lender *l;
	struct conn *c;
	struct conn_target t = { .hosts = "127.0.0.1:1", .user = "nobody", .ssh_config = "",
	    .jump = "none", .connect_timeout_s = 2 };
	struct stat sb;
	char *sock = xasprintf("%s/%s", run, LEND_AGENT_SOCK);
	int peer_known;

	/* A system that cannot tell a peer's uid (the portable build's POSIX
	 * fallback) trusts no lender: there every verb connects on its own. */
	{
		int sv[2];
		uid_t uid;
		cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		peer_known = compat_peer_uid(sv[0], &uid) == 0;
		close(sv[0]), close(sv[1]);
	}
	cr_assert_eq(mkdir(run, 0700), 0);
	l = lender_start(run, LEND_AGENT_SOCK, &b, &err);
	cr_assert_not_null(l, "%s", err ? err : "");
	cr_assert_eq(stat(sock, &sb), 0);
	cr_expect_eq(sb.st_mode & 0777, 0600, "the socket is %o", sb.st_mode & 0777);
	if (!peer_known) {
		cr_expect_eq(lend_dial(run, LEND_AGENT_SOCK), -1, "a lender of unknown uid trusted");
		goto own;
	}
	/* A second lender on the same socket is refused: one answers. */
	cr_expect_null(lender_start(run, LEND_AGENT_SOCK, &b, &err));
	cr_expect(err != NULL && strstr(err, "lends there already") != NULL, "%s", err ? err : "");
	free(err), err = NULL;

	/* Spoken to by hand: an operation before a yes is not run (the
	 * connection closes), a hello for a target it has not is declined
	 * with its reason, a status is answered. */
	{
		int fd = lend_dial(run, LEND_AGENT_SOCK);
		cJSON *req = cJSON_CreateObject(), *r = NULL;
		size_t n;
		cr_assert_geq(fd, 0);
		cJSON_AddStringToObject(req, "op", "status");
		cr_assert_eq(lend_send(fd, req, NULL, 0), 0);
		cr_assert_eq(lend_recv(fd, &r, NULL, 0, &n), 0);
		cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(r, "lender")->valuestring, "agent");
		cJSON_Delete(r);
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "hello");
		cJSON_AddNumberToObject(req, "version", LEND_VERSION);
		cJSON_AddStringToObject(req, "key", "{\"hosts\":\"x\"}");
		cr_assert_eq(lend_send(fd, req, NULL, 0), 0);
		cr_assert_eq(lend_recv(fd, &r, NULL, 0, &n), 0);
		cr_expect(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "ok")));
		cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(r, "why")->valuestring, "not this one");
		cJSON_Delete(r);
		req = cJSON_CreateObject();
		cJSON_AddStringToObject(req, "op", "exec");
		cJSON_AddStringToObject(req, "cmd", "touch /tmp/taotop-lend-ran");
		cr_assert_eq(lend_send(fd, req, NULL, 0), 0);
		cr_expect_neq(lend_recv(fd, &r, NULL, 0, &n), 0, "an operation without a yes was "
		    "answered");
		cJSON_Delete(r);
		close(fd);
	}

own:
	t.lend_dir = run;
	c = conn_new(&t);
	/* Declined: the client tries on its own, and port 1 says no. */
	cr_expect_eq(conn_connect(c, &err), CONN_UNREACHABLE, "%s", err ? err : "");
	cr_expect_eq(conn_lent(c, NULL, NULL, NULL), 0);
	cr_expect_eq(lender_clients(l), 0);
	free(err), err = NULL;
	conn_free(c);
	cr_expect_eq(lender_served(l), 0);

	lender_stop(l);
	cr_expect_neq(stat(sock, &sb), 0, "the socket outlived its lender");
	{
		char *cmd = xasprintf("rm -rf %s", dir);
		cr_expect_eq(system(cmd), 0);
		free(cmd);
	}
	free(sock), free(run), free(dir);
}

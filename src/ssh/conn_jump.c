/*
 * Jump hosts (ProxyJump), connected by taotop itself: each hop's
 * direct-tcpip channel to the next, a socketpair under the next hop's
 * session, and a relay thread between the two.
 */
#include "util/compat.h"
#include "ssh/conn_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/xmalloc.h"

/* ---- jump hosts --------------------------------------------------------------- */

/* Bytes between a jump host's channel and the socketpair under the next
 * hop's session, until either side closes. */
static void *pump_main(void *arg)
{
	struct hop *hp = arg;
	char down[IO_CHUNK], up[IO_CHUNK];
	size_t pend = 0, poff = 0;

	fcntl(hp->fd, F_SETFL, fcntl(hp->fd, F_GETFL) | O_NONBLOCK);
	while (!atomic_load(&hp->stop)) {
		int progress = 0;
		ssize_t n;

		if (pend == 0) {
			int r = ssh_channel_read_nonblocking(hp->ch, down, sizeof(down), 0);
			if (r == SSH_ERROR)
				break;
			if (r > 0) {
				pend = (size_t)r;
				poff = 0;
			}
		}
		if (pend > 0) {
			n = write(hp->fd, down + poff, pend);
			if (n > 0) {
				poff += (size_t)n;
				pend -= (size_t)n;
				progress = 1;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				break;
			}
		}
		n = read(hp->fd, up, sizeof(up));
		if (n == 0)
			break;		/* the session above closed its end */
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (n > 0) {
			if (ssh_channel_write(hp->ch, up, (uint32_t)n) != n)
				break;
			progress = 1;
		}
		if (pend == 0 && (ssh_channel_is_eof(hp->ch) || ssh_channel_is_closed(hp->ch) ||
		    !ssh_is_connected(hp->s)))
			break;
		if (!progress) {
			struct pollfd p[2] = {
				{ .fd = ssh_get_fd(hp->s), .events = POLLIN },
				{ .fd = hp->fd, .events = (short)(POLLIN | (pend ? POLLOUT : 0)) },
			};
			poll(p, 2, 100);
		}
	}
	/* The session above sees its connection end. */
	shutdown(hp->fd, SHUT_RDWR);
	return NULL;
}

void conn_hops_free(struct hop *hops, size_t n)
{
	while (n > 0) {
		struct hop *hp = &hops[--n];
		if (hp->running) {
			atomic_store(&hp->stop, 1);
			pthread_join(hp->th, NULL);
		}
		if (hp->fd >= 0)
			close(hp->fd);
		if (hp->ch != NULL) {
			ssh_channel_close(hp->ch);
			ssh_channel_free(hp->ch);
		}
		if (hp->s != NULL) {
			ssh_disconnect(hp->s);
			ssh_free(hp->s);
		}
	}
	free(hops);
}

/*
 * libssh 0.10 turns a ProxyJump of ~/.ssh/config into a ProxyCommand
 * "ssh [-l user] [-p port] [-J rest] -W '[%h]:%p' host" that it would run
 * itself. taotop runs no other program: read the jump list back from it
 * (the first host, then the rest), and clear the command. Any other
 * ProxyCommand is refused.
 */
int conn_proxy_to_jumps(const char *cmd, char **jumps)
{
	char *copy = xstrdup(cmd), *tok, *save = NULL, *user = NULL, *port = NULL, *rest = NULL,
	    *host = NULL;
	int ok = 1;

	*jumps = NULL;
	tok = strtok_r(copy, " ", &save);
	if (tok == NULL || strcmp(tok, "ssh") != 0)
		ok = 0;
	while (ok && (tok = strtok_r(NULL, " ", &save)) != NULL) {
		if (strcmp(tok, "-l") == 0)
			user = strtok_r(NULL, " ", &save);
		else if (strcmp(tok, "-p") == 0)
			port = strtok_r(NULL, " ", &save);
		else if (strcmp(tok, "-J") == 0)
			rest = strtok_r(NULL, " ", &save);
		else if (strcmp(tok, "-W") == 0)
			strtok_r(NULL, " ", &save);
		else if (host == NULL && tok[0] != '-')
			host = tok;
		else
			ok = 0;
	}
	if (ok && host != NULL) {
		int v6 = strchr(host, ':') != NULL;
		*jumps = xasprintf("%s%s%s%s%s%s%s%s", user ? user : "", user ? "@" : "",
		    v6 && port ? "[" : "", host, v6 && port ? "]" : "", port ? ":" : "",
		    port ? port : "", rest ? "," : "");
		if (rest != NULL) {
			char *all = xasprintf("%s%s", *jumps, rest);
			free(*jumps);
			*jumps = all;
		}
	}
	free(copy);
	return ok && host != NULL ? 0 : -1;
}
void conn_set_jumps(struct conn *c, const char *spec)
{
	size_t i;

	for (i = 0; i < c->njumps; i++)
		conn_free_host(&c->jumps[i]);
	free(c->jumps);
	c->jumps = NULL;
	c->njumps = 0;
	if (spec != NULL && strcasecmp(spec, "none") != 0)
		conn_parse_hosts(spec, &c->jumps, &c->njumps);
}

enum conn_status conn_forward(struct hop *hop, const struct host *from,
    ssh_session next, const struct host *to, int *fd, char **err)
{
	char *host = NULL;
	unsigned int port = 22;
	int sv[2];
	enum conn_status st = CONN_OK;

	ssh_options_get(next, SSH_OPTIONS_HOST, &host);	/* HostName from the config */
	ssh_options_get_port(next, &port);
	hop->ch = ssh_channel_new(hop->s);
	if (hop->ch == NULL || ssh_channel_open_forward(hop->ch, host != NULL ? host : to->name,
	    (int)port, "127.0.0.1", 0) != SSH_OK) {
		st = conn_fail(err, CONN_UNREACHABLE, "%s: the jump host %s could not reach %s port %u: %s",
		    to->display, from->display, host != NULL ? host : to->name, port,
		    ssh_get_error(hop->s));
		ssh_string_free_char(host);
		return st;
	}
	ssh_string_free_char(host);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return conn_fail(err, CONN_REMOTE, "%s: socketpair: %s", to->display, strerror(errno));
	hop->fd = sv[1];
	*fd = sv[0];
	atomic_init(&hop->stop, 0);
	if (pthread_create(&hop->th, NULL, pump_main, hop) != 0) {
		close(sv[0]);
		*fd = -1;
		return conn_fail(err, CONN_REMOTE, "%s: cannot start the jump host's relay", to->display);
	}
	hop->running = 1;
	return CONN_OK;
}

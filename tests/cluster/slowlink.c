/*
 * slowlink: a TCP relay that makes a server on this machine look far away,
 * for taotop's tests and benchmarks (the cluster on another continent).
 *
 *   slowlink -l LISTEN_PORT -t TARGET_PORT [-d ONE_WAY_MS] [-j JITTER_MS]
 *            [-b BYTES_PER_S] [-s STALL_AT_MS:STALL_MS] [-x DROP_AT_MS]
 *            [-m MAX_SECONDS] [-r COUNT_FILE]
 *
 * It listens on 127.0.0.1:LISTEN_PORT and relays every connection to
 * 127.0.0.1:TARGET_PORT, holding each chunk of bytes ONE_WAY_MS (plus up to
 * JITTER_MS, never reordering) in each direction, so a round trip costs
 * twice that more. -b caps each direction's rate; -s stops all traffic for
 * STALL_MS once STALL_AT_MS have passed since start (a link that hangs and
 * comes back); -x closes every connection without a word at DROP_AT_MS (a
 * silent drop). It stops by itself after MAX_SECONDS (600) and only ever
 * connects to the loopback address.
 *
 * -r counts the link's turns, the truest measure of what a far link costs
 * a client: a turn is a chunk read from one side after the last chunk of
 * that connection came from the other. A chunk from the server after the
 * client spoke, read once what the client said had reached the server, is
 * a round trip the client waited for (a request and its answer); bytes
 * that crossed the question on the way (the server's version string, a
 * stream against a window adjust) are a turn but no round trip; a stream
 * going on after a window adjust reached the server counts one (an upper
 * bound). After every change the totals over all connections replace
 * COUNT_FILE (written aside, then renamed), one "name value" a line:
 * round_trips, turns, bytes_up, bytes_down, connections. A reader takes
 * the difference across an operation.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS	64
#define CHUNK		16384

struct chunk {
	struct chunk	*next;
	long long	 due_ms;	/* when it may be written */
	size_t		 len, off;
	char		 data[];
};

/* One direction of one connection: read from `from`, write to `to`. */
struct pipe_dir {
	int		 from, to;
	struct chunk	*head, *tail;
	long long	 last_due;	/* keeps the order when jitter varies */
	long long	 budget_ms;	/* rate cap: when the next byte may go */
	int		 eof;
};

struct relay {
	int		 used;
	int		 last;		/* the side the last chunk came from: 0 none,
					 * 1 the client, 2 the server */
	int		 asking;	/* the client spoke and no answer came yet */
	long long	 asked_due;	/* when the first chunk of that reached the
					 * server */
	struct pipe_dir	 up, down;	/* client->server, server->client */
};

/* What -r reports (see the top). */
static struct {
	long long	 round_trips, turns, bytes_up, bytes_down, connections;
	int		 changed;
	const char	*path;
} count;

static long long delay_ms, jitter_ms, rate, stall_at = -1, stall_ms, drop_at = -1;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0) {
		perror("slowlink: listen");
		exit(1);
	}
	return fd;
}

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void dir_free(struct pipe_dir *d)
{
	while (d->head != NULL) {
		struct chunk *c = d->head;
		d->head = c->next;
		free(c);
	}
	d->tail = NULL;
}

static void relay_close(struct relay *r)
{
	close(r->up.from);
	close(r->up.to);
	dir_free(&r->up);
	dir_free(&r->down);
	memset(r, 0, sizeof(*r));
}

/* Read what is there into a chunk due after the link's delay. */
static int dir_read(struct pipe_dir *d, long long now)
{
	struct chunk *c = malloc(sizeof(*c) + CHUNK);
	ssize_t n;

	if (c == NULL)
		return -1;
	n = read(d->from, c->data, CHUNK);
	if (n <= 0) {
		free(c);
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			d->eof = 1;
		return n == 0 ? 0 : -1;
	}
	c->next = NULL;
	c->len = (size_t)n;
	c->off = 0;
	c->due_ms = now + delay_ms + (jitter_ms > 0 ? rand() % (jitter_ms + 1) : 0);
	if (c->due_ms < d->last_due)
		c->due_ms = d->last_due;	/* TCP never reorders */
	d->last_due = c->due_ms;
	if (d->tail != NULL)
		d->tail->next = c;
	else
		d->head = c;
	d->tail = c;
	return 0;
}

/* Write what is due (and allowed by the rate cap). */
static int dir_write(struct pipe_dir *d, long long now)
{
	while (d->head != NULL && d->head->due_ms <= now && (rate == 0 || d->budget_ms <= now)) {
		struct chunk *c = d->head;
		size_t want = c->len - c->off;
		ssize_t n;
		if (rate > 0 && (long long)want > rate / 10)
			want = (size_t)(rate / 10 > 0 ? rate / 10 : 1);
		n = write(d->to, c->data + c->off, want);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		c->off += (size_t)n;
		if (rate > 0)
			d->budget_ms = now + (long long)n * 1000 / rate;
		if (c->off == c->len) {
			d->head = c->next;
			if (d->head == NULL)
				d->tail = NULL;
			free(c);
		}
	}
	if (d->head == NULL && d->eof)
		shutdown(d->to, SHUT_WR);
	return 0;
}

/* Read a chunk from one side (1 the client, 2 the server) and count it. */
static void counted_read(struct relay *r, int side, long long now)
{
	struct pipe_dir *d = side == 1 ? &r->up : &r->down;
	struct chunk *was = d->tail;

	if (dir_read(d, now) != 0 || d->tail == was)
		return;		/* nothing came */
	if (side == 1)
		count.bytes_up += (long long)d->tail->len;
	else
		count.bytes_down += (long long)d->tail->len;
	if (r->last != 0 && r->last != side)
		count.turns++;
	if (side == 1 && !r->asking) {
		r->asking = 1;
		r->asked_due = d->tail->due_ms;
	} else if (side == 2 && r->asking && now >= r->asked_due) {
		/* An answer only if it left the server after the question
		 * reached it: bytes that crossed the question on the way (the
		 * server's version string, a stream against a window adjust)
		 * leave it waiting. */
		r->asking = 0;
		count.round_trips++;
	}
	r->last = side;
	count.changed = 1;
}

/* The totals to COUNT_FILE, whole or not at all (a reader never sees half). */
static void count_write(void)
{
	char tmp[4096];
	FILE *f;

	if (count.path == NULL || !count.changed)
		return;
	count.changed = 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", count.path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return;
	fprintf(f, "round_trips %lld\nturns %lld\nbytes_up %lld\nbytes_down %lld\n"
	    "connections %lld\n", count.round_trips, count.turns, count.bytes_up,
	    count.bytes_down, count.connections);
	if (fclose(f) == 0)
		rename(tmp, count.path);
}

static void usage(void)
{
	fprintf(stderr, "usage: slowlink -l LISTEN_PORT -t TARGET_PORT [-d ONE_WAY_MS] "
	    "[-j JITTER_MS] [-b BYTES_PER_S] [-s STALL_AT_MS:STALL_MS] [-x DROP_AT_MS] "
	    "[-m MAX_SECONDS] [-r COUNT_FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct relay r[MAX_CONNS];
	int lport = 0, tport = 0, c, lfd;
	long long start, max_s = 600;

	while ((c = getopt(argc, argv, "l:t:d:j:b:s:x:m:r:")) != -1) {
		switch (c) {
		case 'l': lport = atoi(optarg); break;
		case 't': tport = atoi(optarg); break;
		case 'd': delay_ms = atoll(optarg); break;
		case 'j': jitter_ms = atoll(optarg); break;
		case 'b': rate = atoll(optarg); break;
		case 's':
			if (sscanf(optarg, "%lld:%lld", &stall_at, &stall_ms) != 2)
				usage();
			break;
		case 'x': drop_at = atoll(optarg); break;
		case 'm': max_s = atoll(optarg); break;
		case 'r': count.path = optarg; count.changed = 1; break;
		default: usage();
		}
	}
	if (lport <= 0 || tport <= 0 || max_s <= 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(lport);
	start = now_ms();
	printf("slowlink: 127.0.0.1:%d -> 127.0.0.1:%d, %lld ms each way\n", lport, tport, delay_ms);
	fflush(stdout);
	while (now_ms() - start < max_s * 1000) {
		struct pollfd fds[1 + 2 * MAX_CONNS];
		int nfds = 1, i, timeout = 1000;
		long long now = now_ms(), since = now - start;
		int stalled = stall_at >= 0 && since >= stall_at && since < stall_at + stall_ms;

		if (drop_at >= 0 && since >= drop_at) {
			/* A silent drop: nothing more goes either way, nothing is said. */
			for (i = 0; i < MAX_CONNS; i++)
				if (r[i].used)
					relay_close(&r[i]);
			drop_at = -1;
		}
		fds[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < MAX_CONNS; i++) {
			if (!r[i].used)
				continue;
			fds[nfds++] = (struct pollfd){ .fd = r[i].up.from,
			    .events = (short)(r[i].up.eof || stalled ? 0 : POLLIN) };
			fds[nfds++] = (struct pollfd){ .fd = r[i].down.from,
			    .events = (short)(r[i].down.eof || stalled ? 0 : POLLIN) };
			/* Wake for the first chunk that falls due. */
			for (int k = 0; k < 2; k++) {
				struct pipe_dir *d = k ? &r[i].down : &r[i].up;
				if (d->head != NULL) {
					long long wait = d->head->due_ms - now;
					if (rate > 0 && d->budget_ms - now > wait)
						wait = d->budget_ms - now;
					if (wait < timeout)
						timeout = wait < 1 ? 1 : (int)wait;
				}
			}
		}
		if (poll(fds, (nfds_t)nfds, stalled ? 50 : timeout) < 0 && errno != EINTR)
			break;
		now = now_ms();
		if (fds[0].revents & POLLIN) {
			int cfd = accept(lfd, NULL, NULL), sfd;
			for (i = 0; cfd >= 0 && i < MAX_CONNS && r[i].used; i++)
				;
			if (cfd >= 0 && i < MAX_CONNS && (sfd = connect_to(tport)) >= 0) {
				int one = 1;
				setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				r[i].used = 1;
				r[i].last = 0;
				r[i].asking = 0;
				count.connections++;
				count.changed = 1;
				r[i].up = (struct pipe_dir){ .from = cfd, .to = sfd };
				r[i].down = (struct pipe_dir){ .from = sfd, .to = cfd };
			} else if (cfd >= 0) {
				close(cfd);
			}
		}
		for (i = 0, nfds = 1; i < MAX_CONNS; i++) {
			if (!r[i].used)
				continue;
			if (!stalled) {
				if ((fds[nfds].revents & (POLLIN | POLLHUP | POLLERR)) && !r[i].up.eof)
					counted_read(&r[i], 1, now);
				if ((fds[nfds + 1].revents & (POLLIN | POLLHUP | POLLERR)) && !r[i].down.eof)
					counted_read(&r[i], 2, now);
				if (dir_write(&r[i].up, now) != 0 || dir_write(&r[i].down, now) != 0) {
					relay_close(&r[i]);
					nfds += 2;
					continue;
				}
			}
			nfds += 2;
			if (r[i].up.eof && r[i].down.eof && r[i].up.head == NULL && r[i].down.head == NULL)
				relay_close(&r[i]);
		}
		count_write();
	}
	close(lfd);
	return 0;
}

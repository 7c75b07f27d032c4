/*
 * slowlink: a TCP relay that makes a server on this machine look far away,
 * for taotop's tests and benchmarks (the cluster on another continent).
 *
 *   slowlink -l LISTEN_PORT -t TARGET_PORT [-d ONE_WAY_MS] [-j JITTER_MS]
 *            [-b BYTES_PER_S] [-s STALL_AT_MS:STALL_MS] [-x DROP_AT_MS]
 *            [-c CONTROL_FILE] [-m MAX_SECONDS] [-r COUNT_FILE] [-v LOG_FILE]
 *
 * It listens on 127.0.0.1:LISTEN_PORT and relays every connection to
 * 127.0.0.1:TARGET_PORT, holding each chunk of bytes ONE_WAY_MS (plus up to
 * JITTER_MS, never reordering) in each direction, so a round trip costs
 * twice that more. -b caps each direction's rate; -s stops all traffic for
 * STALL_MS once STALL_AT_MS have passed since start (a link that hangs and
 * comes back); -x drops every connection silently at DROP_AT_MS: no FIN, no
 * RST, nothing forwarded ever again (what each side sends is taken and
 * thrown away, as a dead route does), and new connections are swallowed the
 * same way. It stops by itself after MAX_SECONDS (600) and only ever
 * connects to the loopback address.
 *
 * -c names a control file read ten times a second, so a test can change
 * the link while it runs (write the word and rename it into place):
 *   pass   forward (the default, and how a stall or a drop ends);
 *   stall  hold everything, both ways, connections kept: on `pass` they go
 *          on where they stopped (a link that hangs);
 *   drop   the silent drop above; on `pass` new connections go through,
 *          the dropped ones stay dead (a VPN or NAT that forgot them).
 * -r counts the link's turns, the truest measure of what a far link costs
 * a client: a turn is a chunk read from one side after the last chunk of
 * that connection came from the other. A round trip is a question and its
 * answer: the client spoke, its first bytes were written to the server,
 * and the server then sent something. "Then" is told by the kernel's
 * arrival time of the server's bytes (SO_TIMESTAMPNS) against the time the
 * question was written, never by when the relay got round to reading
 * either: on a loaded machine the relay may sleep through both, and bytes
 * the server sent before the question reached it (a stream against a
 * window adjust) would look like an answer. The server's identification
 * line ("SSH-2.0-..." and the lines before it) is never an answer: RFC
 * 4253 4.2 has each side send it at once, unasked, so its lateness is the
 * server's start-up (OpenSSH 10 execs sshd-session for it), not a trip
 * across the link. A stream going on after a window adjust reached the
 * server counts one (an upper bound). After every change the totals over
 * all connections replace COUNT_FILE (written aside, then renamed), one
 * "name value" a line: round_trips, turns, bytes_up, bytes_down,
 * connections. A reader takes the difference across an operation.
 *
 * -v appends a line per chunk to LOG_FILE, to see what a count was made of:
 * "MS CONN up|down BYTES" with the relay's milliseconds since it started,
 * and, on the server's chunks, how it was judged ("ident", "answer",
 * "early" for bytes that arrived before the question was written,
 * "no-question"); "MS CONN asked" when a question's first bytes were
 * written to the server.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/uio.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SCM_TIMESTAMPNS
#define SCM_TIMESTAMPNS	SO_TIMESTAMPNS	/* Linux's, hidden by the POSIX feature macro */
#endif

#define MAX_CONNS	64
#define CHUNK		16384

struct chunk {
	struct chunk	*next;
	long long	 due_ms;	/* when it may be written */
	int		 question;	/* a client's chunk that asked (see -r) */
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
	int		 dead;		/* dropped silently: read, never forwarded */
	int		 last;		/* the side the last chunk came from: 0 none,
					 * 1 the client, 2 the server */
	int		 asking;	/* the client spoke and no answer came yet */
	long long	 asked_ns;	/* when its first chunk was written to the
					 * server (CLOCK_REALTIME ns), 0 until then */
	int		 ident_done;	/* the server's identification line went by */
	long long	 arrived_ns;	/* the last server chunk's kernel arrival time */
	int		 id;		/* the connection's number, for -v */
	struct pipe_dir	 up, down;	/* client->server, server->client */
	int		 pfd;		/* its first entry in this round's poll
					 * array, -1: accepted after the poll */
};

enum mode { PASS, STALL, DROP };

/* What -r reports (see the top). */
static struct {
	long long	 round_trips, turns, bytes_up, bytes_down, connections;
	int		 changed;
	const char	*path;
} count;

static long long delay_ms, jitter_ms, rate, stall_at = -1, stall_ms, drop_at = -1;
static const char *control;
static FILE *vlog;		/* -v */
static long long start_ms;
static int tport_g;
static enum mode ctl_mode = PASS;	/* what the control file says */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The clock the kernel stamps arriving bytes with (SO_TIMESTAMPNS). */
static long long real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void vlog_line(const struct relay *r, const char *what, size_t len, const char *note)
{
	if (vlog == NULL)
		return;
	fprintf(vlog, "%lld %d %s", now_ms() - start_ms, r->id, what);
	if (len > 0)
		fprintf(vlog, " %zu", len);
	if (note != NULL)
		fprintf(vlog, " %s", note);
	fputc('\n', vlog);
	fflush(vlog);
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
	/* The server's bytes come stamped with their arrival (see -r). */
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
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
	if (r->up.to >= 0)
		close(r->up.to);
	dir_free(&r->up);
	dir_free(&r->down);
	memset(r, 0, sizeof(*r));
}

/* Read what is there into a chunk due after the link's delay; *arrived_ns
 * (when not NULL) the kernel's arrival time of its bytes, or now when the
 * kernel gave none. */
static int dir_read(struct pipe_dir *d, long long now, long long *arrived_ns)
{
	struct chunk *c = malloc(sizeof(*c) + CHUNK);
	union {
		char		buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr	align;
	} ctl;
	struct iovec iov;
	struct msghdr msg = { 0 };
	struct cmsghdr *cm;
	ssize_t n;

	if (c == NULL)
		return -1;
	iov.iov_base = c->data;
	iov.iov_len = CHUNK;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	n = recvmsg(d->from, &msg, 0);
	if (arrived_ns != NULL) {
		*arrived_ns = real_ns();
		for (cm = CMSG_FIRSTHDR(&msg); n > 0 && cm != NULL; cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;
				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				*arrived_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
			}
	}
	if (n <= 0) {
		free(c);
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			d->eof = 1;
		return n == 0 ? 0 : -1;
	}
	c->next = NULL;
	c->question = 0;
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

/* Write what is due (and allowed by the rate cap); a question's first
 * bytes written to the server start its clock (see -r). */
static int dir_write(struct relay *r, struct pipe_dir *d, long long now)
{
	while (d->head != NULL && d->head->due_ms <= now && (rate == 0 || d->budget_ms <= now)) {
		struct chunk *c = d->head;
		size_t want = c->len - c->off;
		ssize_t n;
		if (rate > 0 && (long long)want > rate / 10)
			want = (size_t)(rate / 10 > 0 ? rate / 10 : 1);
		/* Stamped before the write: the server may answer (and the
		 * kernel stamp its answer) before write() returns here. */
		long long before = c->question && c->off == 0 ? real_ns() : 0;
		n = write(d->to, c->data + c->off, want);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (before != 0 && n > 0) {
			r->asked_ns = before;
			vlog_line(r, "asked", 0, NULL);
		}
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

/* A dropped connection: its queued bytes go nowhere, nothing is closed. */
static void relay_kill(struct relay *r)
{
	dir_free(&r->up);
	dir_free(&r->down);
	r->dead = 1;
}

/* Take what a dead connection's side sends and throw it away (a dead route
 * takes packets too); when the client gives up and closes, let it go. */
static void relay_swallow(struct relay *r, short client_ev, short server_ev)
{
	char sink[CHUNK];

	if (server_ev & (POLLIN | POLLHUP | POLLERR))
		if (read(r->down.from, sink, sizeof(sink)) <= 0 && r->down.from >= 0) {
			close(r->down.from);
			r->down.from = r->up.to = -1;
		}
	if (client_ev & (POLLIN | POLLHUP | POLLERR))
		if (read(r->up.from, sink, sizeof(sink)) <= 0)
			relay_close(r);
}

/* The control file's word, when it names one. */
static void read_control(void)
{
	char word[16] = "";
	FILE *f = fopen(control, "r");
	enum mode m = ctl_mode;

	if (f == NULL)
		return;
	if (fgets(word, sizeof(word), f) != NULL) {
		if (strncmp(word, "pass", 4) == 0)
			m = PASS;
		else if (strncmp(word, "stall", 5) == 0)
			m = STALL;
		else if (strncmp(word, "drop", 4) == 0)
			m = DROP;
	}
	fclose(f);
	if (m != ctl_mode) {
		printf("slowlink: %s\n", m == PASS ? "pass" : m == STALL ? "stall" : "drop");
		fflush(stdout);
		ctl_mode = m;
	}
}

/* How a chunk from the server counts (see -r): "ident" while it is the
 * identification line or before it, "answer" when it arrived after the
 * client's question was written to the server, "early" when it arrived
 * before (it crossed the question), "no-question" when none is waiting. */
static const char *server_chunk(struct relay *r, const struct chunk *c)
{
	if (!r->ident_done) {
		/* The identification line: "SSH-" at a line's start, to its
		 * newline (RFC 4253 4.2 allows other lines before it). */
		const char *p = c->data, *end = c->data + c->len;
		for (; p < end; p++) {
			if ((p == c->data || p[-1] == '\n') && end - p >= 4 &&
			    memcmp(p, "SSH-", 4) == 0) {
				const char *nl = memchr(p, '\n', (size_t)(end - p));
				if (nl != NULL) {
					r->ident_done = 1;
					if (nl + 1 == end)
						return "ident";
					break;	/* more came with it: judged below */
				}
			}
		}
		if (!r->ident_done)
			return "ident";
	}
	if (!r->asking)
		return "no-question";
	if (r->asked_ns == 0 || r->arrived_ns < r->asked_ns)
		return "early";
	return "answer";
}

/* Read a chunk from one side (1 the client, 2 the server) and count it. */
static void counted_read(struct relay *r, int side, long long now)
{
	struct pipe_dir *d = side == 1 ? &r->up : &r->down;
	struct chunk *was = d->tail;

	if (dir_read(d, now, side == 2 ? &r->arrived_ns : NULL) != 0 || d->tail == was)
		return;		/* nothing came */
	if (side == 1)
		count.bytes_up += (long long)d->tail->len;
	else
		count.bytes_down += (long long)d->tail->len;
	if (r->last != 0 && r->last != side)
		count.turns++;
	if (side == 1) {
		if (!r->asking) {
			r->asking = 1;
			r->asked_ns = 0;
			d->tail->question = 1;
		}
		vlog_line(r, "up", d->tail->len, NULL);
	} else {
		const char *how = server_chunk(r, d->tail);
		if (strcmp(how, "answer") == 0) {
			r->asking = 0;
			count.round_trips++;
		}
		vlog_line(r, "down", d->tail->len, how);
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
	    "[-c CONTROL_FILE] [-m MAX_SECONDS] [-r COUNT_FILE] [-v LOG_FILE]\n");
	exit(2);
}

/* A new connection: relayed to the target, or swallowed while dropping. */
static void relay_accept(struct relay *r, int lfd, int dropping)
{
	int cfd = accept(lfd, NULL, NULL), sfd = -1, i, one = 1;

	if (cfd < 0)
		return;
	for (i = 0; i < MAX_CONNS && r[i].used; i++)
		;
	if (i == MAX_CONNS || (!dropping && (sfd = connect_to(tport_g)) < 0)) {
		close(cfd);
		return;
	}
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r[i].used = 1;
	r[i].dead = dropping;
	r[i].last = 0;
	r[i].asking = 0;
	r[i].asked_ns = 0;
	r[i].ident_done = 0;
	r[i].id = (int)count.connections;
	count.connections++;
	count.changed = 1;
	r[i].up = (struct pipe_dir){ .from = cfd, .to = sfd };
	r[i].down = (struct pipe_dir){ .from = sfd, .to = cfd };
	/* Not polled this round: its slot may be below others', whose
	 * entries must not be read as its (a blocking read would hang). */
	r[i].pfd = -1;
}

/* The poll timeout: the first chunk that falls due, at most `cap`. */
static int next_due(const struct relay *r, long long now, int cap)
{
	int i, k, timeout = cap;

	for (i = 0; i < MAX_CONNS; i++) {
		if (!r[i].used || r[i].dead)
			continue;
		for (k = 0; k < 2; k++) {
			const struct pipe_dir *d = k ? &r[i].down : &r[i].up;
			if (d->head != NULL) {
				long long wait = d->head->due_ms - now;
				if (rate > 0 && d->budget_ms - now > wait)
					wait = d->budget_ms - now;
				if (wait < timeout)
					timeout = wait < 1 ? 1 : (int)wait;
			}
		}
	}
	return timeout;
}

int main(int argc, char **argv)
{
	static struct relay r[MAX_CONNS];
	int lport = 0, c, lfd;
	long long start, max_s = 600;
	enum mode was = PASS;

	while ((c = getopt(argc, argv, "l:t:d:j:b:s:x:c:m:r:v:")) != -1) {
		switch (c) {
		case 'l': lport = atoi(optarg); break;
		case 't': tport_g = atoi(optarg); break;
		case 'd': delay_ms = atoll(optarg); break;
		case 'j': jitter_ms = atoll(optarg); break;
		case 'b': rate = atoll(optarg); break;
		case 's':
			if (sscanf(optarg, "%lld:%lld", &stall_at, &stall_ms) != 2)
				usage();
			break;
		case 'x': drop_at = atoll(optarg); break;
		case 'c': control = optarg; break;
		case 'm': max_s = atoll(optarg); break;
		case 'r': count.path = optarg; count.changed = 1; break;
		case 'v':
			if ((vlog = fopen(optarg, "a")) == NULL) {
				perror("slowlink: -v");
				exit(2);
			}
			break;
		default: usage();
		}
	}
	if (lport <= 0 || tport_g <= 0 || max_s <= 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(lport);
	start = start_ms = now_ms();
	printf("slowlink: 127.0.0.1:%d -> 127.0.0.1:%d, %lld ms each way\n", lport, tport_g,
	    delay_ms);
	fflush(stdout);
	while (now_ms() - start < max_s * 1000) {
		struct pollfd fds[1 + 2 * MAX_CONNS];
		int nfds = 1, i;
		long long now = now_ms(), since = now - start;
		enum mode mode;
		int stalled;

		if (control != NULL)
			read_control();
		mode = ctl_mode;
		if (drop_at >= 0 && since >= drop_at && mode == PASS)
			mode = DROP;
		if (stall_at >= 0 && since >= stall_at && since < stall_at + stall_ms && mode == PASS)
			mode = STALL;
		stalled = mode == STALL;
		if (mode == DROP && was != DROP)
			for (i = 0; i < MAX_CONNS; i++)
				if (r[i].used)
					relay_kill(&r[i]);
		if (was == DROP && mode != DROP)
			drop_at = -1;	/* -x drops once; the control file may end it */
		was = mode;
		fds[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < MAX_CONNS; i++) {
			if (!r[i].used)
				continue;
			/* A dead connection is read (and thrown away) even in a stall. */
			r[i].pfd = nfds;
			fds[nfds++] = (struct pollfd){ .fd = r[i].up.from,
			    .events = (short)(r[i].dead || !(r[i].up.eof || stalled) ? POLLIN : 0) };
			fds[nfds++] = (struct pollfd){ .fd = r[i].down.from,
			    .events = (short)(r[i].dead || !(r[i].down.eof || stalled) ? POLLIN : 0) };
		}
		if (poll(fds, (nfds_t)nfds, stalled ? 50 : next_due(r, now, control ? 100 : 1000)) < 0 &&
		    errno != EINTR)
			break;
		now = now_ms();
		if (fds[0].revents & POLLIN)
			relay_accept(r, lfd, mode == DROP);
		for (i = 0; i < MAX_CONNS; i++) {
			const struct pollfd *pu, *pd;
			if (!r[i].used || r[i].pfd < 0)
				continue;	/* a new one waits for the next round */
			pu = &fds[r[i].pfd];
			pd = &fds[r[i].pfd + 1];
			if (r[i].dead) {
				relay_swallow(&r[i], pu->revents, pd->revents);
				continue;
			}
			if (!stalled) {
				if ((pu->revents & (POLLIN | POLLHUP | POLLERR)) && !r[i].up.eof)
					counted_read(&r[i], 1, now);
				if ((pd->revents & (POLLIN | POLLHUP | POLLERR)) && !r[i].down.eof)
					counted_read(&r[i], 2, now);
				if (dir_write(&r[i], &r[i].up, now) != 0 ||
				    dir_write(&r[i], &r[i].down, now) != 0) {
					relay_close(&r[i]);
					continue;
				}
			}
			if (r[i].up.eof && r[i].down.eof && r[i].up.head == NULL && r[i].down.head == NULL)
				relay_close(&r[i]);
		}
		count_write();
	}
	close(lfd);
	return 0;
}

/*
 * The background agent (ssh/lend.h): the lender whose connections are its
 * own, one per target its clients name, made on the first hello. It holds
 * no secret: a one-time code a connection needs is asked in the terminal
 * of the client whose hello made it, and forgotten once answered.
 */
#include "util/compat.h"
#include "ssh/lend.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "util/log.h"
#include "util/xmalloc.h"

#define SLOTS_MAX	16	/* targets held at once */
#define PROBE_AFTER_MS	15000	/* a connection unused this long is probed, */
#define PROBE_EVERY_MS	30000	/* then this often while unused */
#define SFTP_STUCK_MS	60000

struct slot {
	char		*key;
	struct conn	*conn;
	pthread_mutex_t	 lock;		/* one client's request at a time */
	long long	 used_ms;
	long long	 probed_ms;
	unsigned long	 requests;
};

struct agent {
	pthread_mutex_t	 lock;		/* the table */
	struct slot	*slots[SLOTS_MAX];
	size_t		 n;
};

static void *agent_find(void *ctx, const char *key, const cJSON *target, char **why)
{
	struct agent *a = ctx;
	const char *home = lend_str(target, "home"), *mine = getenv("HOME");
	struct conn_target t;
	struct slot *s = NULL;
	size_t i;

	/* Unset paths are read from the home folder: another home is
	 * another target, which the client's own connection serves. */
	if ((home == NULL) != (mine == NULL) || (home != NULL && strcmp(home, mine) != 0)) {
		*why = xstrdup("the agent runs with another home folder");
		return NULL;
	}
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->n && s == NULL; i++)
		if (strcmp(a->slots[i]->key, key) == 0)
			s = a->slots[i];
	if (s == NULL && a->n == SLOTS_MAX)
		*why = xstrdup("the agent holds as many connections as it may");
	if (s == NULL && a->n < SLOTS_MAX && lend_str(target, "hosts") != NULL) {
		const cJSON *pa = cJSON_GetObjectItemCaseSensitive(target, "password_auth");
		const cJSON *to = cJSON_GetObjectItemCaseSensitive(target, "connect_timeout_s");
		memset(&t, 0, sizeof(t));
		t.hosts = lend_str(target, "hosts");
		t.user = lend_str(target, "user");
		t.key_path = lend_str(target, "key_path");
		t.known_hosts = lend_str(target, "known_hosts");
		t.ssh_config = lend_str(target, "ssh_config");
		t.jump = lend_str(target, "jump");
		t.password_auth = cJSON_IsNumber(pa) && pa->valuedouble != 0;
		t.connect_timeout_s = cJSON_IsNumber(to) ? (int)to->valuedouble : 0;
		t.ask = lend_ask_client;	/* the asking client's terminal */
		s = xcalloc(1, sizeof(*s));
		s->key = xstrdup(key);
		s->conn = conn_new(&t);
		s->used_ms = lend_now_ms();
		pthread_mutex_init(&s->lock, NULL);
		a->slots[a->n++] = s;
	}
	pthread_mutex_unlock(&a->lock);
	return s;
}

static int agent_run(void *ctx, void *handle, void (*fn)(struct conn *c, void *arg), void *arg)
{
	struct slot *s = handle;

	(void)ctx;
	pthread_mutex_lock(&s->lock);
	fn(s->conn, arg);
	s->used_ms = lend_now_ms();
	s->requests++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* A link that died while nobody used it is found by a probe between
 * commands (the agent's loop), not by the next command: that one then
 * connects again, or fails as a verb's own connect would, and a command
 * on a live link pays no probe. A slot in use is left alone. */
static void probe_idle(struct agent *a)
{
	long long now = lend_now_ms();
	size_t i;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->n; i++) {
		struct slot *s = a->slots[i];
		char *err = NULL;
		if (now - s->used_ms < PROBE_AFTER_MS || now - s->probed_ms < PROBE_EVERY_MS ||
		    pthread_mutex_trylock(&s->lock) != 0)
			continue;
		if (conn_is_connected(s->conn) && conn_probe(s->conn, 5000, &err) != CONN_OK) {
			log_msg(LOG_INFO, "agent: %s", err);
			free(err);
		}
		s->probed_ms = lend_now_ms();
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&a->lock);
}

/* What `taotop agent status` shows of each connection. */
static void agent_status(void *ctx, cJSON *out)
{
	struct agent *a = ctx;
	cJSON *list = cJSON_AddArrayToObject(out, "sessions");
	size_t i;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < a->n; i++) {
		struct slot *s = a->slots[i];
		cJSON *o = cJSON_CreateObject(), *k = cJSON_Parse(s->key);
		const char *host;
		/* trylock: a request running keeps its lock; it is connected */
		int busy = pthread_mutex_trylock(&s->lock) != 0;
		host = busy ? NULL : conn_host(s->conn);
		cJSON_AddStringToObject(o, "hosts", k != NULL && lend_str(k, "hosts") ? lend_str(k, "hosts") : "");
		if (k != NULL && lend_str(k, "user") != NULL)
			cJSON_AddStringToObject(o, "user", lend_str(k, "user"));
		cJSON_AddBoolToObject(o, "connected", busy || conn_is_connected(s->conn));
		if (host != NULL)
			cJSON_AddStringToObject(o, "host", host);
		cJSON_AddNumberToObject(o, "requests", (double)s->requests);
		if (!busy)
			pthread_mutex_unlock(&s->lock);
		cJSON_Delete(k);
		cJSON_AddItemToArray(list, o);
	}
	pthread_mutex_unlock(&a->lock);
}

int lend_agent_serve(const char *dir, const struct lend_agent_opts *o, char **err)
{
	struct agent a;
	struct lend_backend b = { .kind = "agent", .find = agent_find, .run = agent_run,
	    .ctx = &a };
	struct lender *l;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char *lockpath;
	int lockfd;
	size_t i;

	/* One agent per folder, for its whole life: two verbs starting one
	 * at once must not leave two, one of them unreachable. */
	lockpath = xasprintf("%s/agent.lock", dir);
	lockfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(lockpath);
	if (lockfd < 0 || fcntl(lockfd, F_SETLK, &fl) != 0) {
		*err = xstrdup("another agent runs in this folder");
		if (lockfd >= 0)
			close(lockfd);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	pthread_mutex_init(&a.lock, NULL);
	l = lender_start(dir, LEND_AGENT_SOCK, &b, err);
	if (l == NULL) {
		pthread_mutex_destroy(&a.lock);
		close(lockfd);
		return -1;
	}
	lender_on_status(l, agent_status, &a);
	if (o->ready_fd >= 0) {
		if (write(o->ready_fd, "1", 1) < 0)
			log_msg(LOG_WARN, "agent: cannot say it is ready");
		close(o->ready_fd);
	}
	for (;;) {
		compat_sleep_ms(250);
		if (lender_stop_asked(l)) {
			log_msg(LOG_INFO, "agent: asked to stop");
			break;
		}
		if (lend_now_ms() - lender_last_ms(l) >= (long long)o->idle_s * 1000) {
			log_msg(LOG_INFO, "agent: no client for %d s: ending", o->idle_s);
			break;
		}
		probe_idle(&a);
		/* libssh's SFTP waits for an answer without end: one nobody
		 * answers ends its connection (the client sees a drop). */
		pthread_mutex_lock(&a.lock);
		for (i = 0; i < a.n; i++)
			if (conn_sftp_waiting_ms(a.slots[i]->conn) > SFTP_STUCK_MS)
				conn_interrupt(a.slots[i]->conn);
		pthread_mutex_unlock(&a.lock);
	}
	lender_stop(l);
	for (i = 0; i < a.n; i++) {
		conn_free(a.slots[i]->conn);
		pthread_mutex_destroy(&a.slots[i]->lock);
		free(a.slots[i]->key);
		free(a.slots[i]);
	}
	pthread_mutex_destroy(&a.lock);
	return 0;
}

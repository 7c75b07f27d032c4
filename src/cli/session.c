#include "cli/session.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/share.h"
#include "cli/show.h"
#include "cli/ttyask.h"
#include "engine/slurm/duration.h"
#include "engine/store/jobref.h"
#include "engine/store/store.h"
#include "engine/track/tracker.h"
#include "ssh/conn.h"
#include "util/log.h"
#include "util/xmalloc.h"

int session_say(int rc, char *err)
{
	fprintf(stderr, "taotop: %s\n", show_err(err));
	free(err);
	return rc;
}

static int exit_for(enum conn_status st)
{
	switch (st) {
	case CONN_UNREACHABLE:
	case CONN_HOSTKEY_UNKNOWN:
	case CONN_HOSTKEY_CHANGED:
	case CONN_AUTH:
		return EXIT_CONNECT;
	default:
		return EXIT_FAILED;
	}
}

/* The shared session (ssh/lend.h): the folder a verb borrows from, set by
 * session_begin before any thread dials; the agent started once. */
static struct {
	char		*dir;
	int		 idle_s;
	pthread_mutex_t	 lock;
	int		 ensured;
	int		 ok;		/* the agent listens */
} share = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void share_begin(const struct config *cfg)
{
	pthread_mutex_lock(&share.lock);
	if (share.dir == NULL)
		share.dir = share_folder(cfg);
	share.idle_s = cfg->share_idle_s;
	pthread_mutex_unlock(&share.lock);
}

/* The agent started in the folder (conn_target.lend_start: when no
 * running monitor lends the target), once per process: a verb that could
 * not start it connects on its own, as it would without it. */
static int share_start(void *data)
{
	char *err = NULL;
	int started, rc = -1;

	(void)data;
	pthread_mutex_lock(&share.lock);
	if (share.dir != NULL && !share.ensured) {
		share.ensured = 1;
		share.ok = share_agent_ensure(share.dir, share.idle_s, &started, &err) == 0;
		if (!share.ok) {
			log_msg(LOG_WARN, "share: %s", err);
			free(err);
		}
	}
	/* Another thread's start (jobs dials each cluster at once) serves. */
	rc = share.ok ? 0 : -1;
	pthread_mutex_unlock(&share.lock);
	return rc;
}

struct conn *session_dial(const struct cluster_cfg *cl, int *rc, char **err)
{
	struct conn_target t;
	struct conn *c;
	enum conn_status st;

	cluster_target(cl, &t);
	tty_ask_target(&t);	/* a one-time code, asked on the terminal */
	t.lend_dir = share.dir;		/* set before any thread dials */
	t.lend_start = share_start;
	c = conn_new(&t);
	st = conn_connect(c, err);
	if (st != CONN_OK) {
		*rc = exit_for(st);
		conn_free(c);
		return NULL;
	}
	*rc = EXIT_OK;
	return c;
}

int session_begin(struct session *s)
{
	char *err = NULL;

	memset(s, 0, sizeof(*s));
	if (config_load(&s->cfg, &err) != 0)
		return session_say(EXIT_USAGE, err);
	share_begin(&s->cfg);
	s->store = store_open(NULL, &err);
	if (s->store == NULL) {
		config_free(&s->cfg);
		return session_say(EXIT_FAILED, err);
	}
	return EXIT_OK;
}

int session_cluster_of(struct session *s, const char *job, const char *flag,
    const char **cluster, char **owned, char **err)
{
	struct job_ref ref;
	int rc = 0;

	*owned = NULL;
	*cluster = flag;	/* a SLURM id, or a record of no cluster */
	if (job_ref_resolve(s->store, job, &ref, err) != 0)
		return 1;
	if (ref.rec != NULL && ref.rec->cluster != NULL) {
		if (flag != NULL && strcmp(flag, ref.rec->cluster) != 0) {
			*err = xasprintf("%s is a job of cluster '%s', not of --cluster %s", job,
			    ref.rec->cluster, flag);
			rc = -1;
		} else {
			*cluster = *owned = xstrdup(ref.rec->cluster);
		}
	}
	job_ref_free(&ref);
	return rc;
}

int session_unknown_cluster(const struct session *s, const char *name, const char *source)
{
	const char *env = getenv("TAOTOP_CLUSTER");
	size_t i;

	if (source == NULL)
		source = env != NULL && env[0] != '\0' ? "TAOTOP_CLUSTER" : "default_cluster";
	if (s->cfg.n == 0) {
		fprintf(stderr, "taotop: no cluster called '%s' (%s): no cluster is configured; "
		    "taotop init sets one up\n", show_err(name), source);
		return EXIT_USAGE;
	}
	fprintf(stderr, "taotop: no cluster called '%s' (%s); the configured cluster%s: ",
	    show_err(name), source, s->cfg.n == 1 ? " is" : "s are");
	for (i = 0; i < s->cfg.n; i++)
		fprintf(stderr, "%s%s", i == 0 ? "" : ", ", show_err(s->cfg.clusters[i].name));
	fputc('\n', stderr);
	return EXIT_USAGE;
}

static void hang_up(struct session *s)
{
	tracker_free(s->tracker);
	conn_free(s->conn);
	s->tracker = NULL;
	s->conn = NULL;
	s->cl = NULL;
}

int session_connect(struct session *s, const char *cluster, const char *job)
{
	const struct cluster_cfg *cl;
	char *err = NULL, *owned = NULL;
	int rc;

	/* A --cluster that names no cluster is a usage error, whatever the
	 * job (before a record's cluster is compared with it). */
	if (cluster != NULL && config_cluster(&s->cfg, cluster) == NULL)
		return session_unknown_cluster(s, cluster, "--cluster");
	/* A name that is no job's still goes to the cluster: status finds
	 * a job by the id squeue shows ("4242_[1-3]") as well. */
	if (job != NULL && session_cluster_of(s, job, cluster, &cluster, &owned, &err) < 0)
		return session_say(EXIT_FAILED, err);
	free(err);
	err = NULL;
	cl = config_cluster(&s->cfg, cluster);
	if (cl == NULL) {
		const char *env = getenv("TAOTOP_CLUSTER");
		rc = session_unknown_cluster(s, owned != NULL ? owned : cluster != NULL ? cluster
		    : env != NULL && env[0] != '\0' ? env : s->cfg.default_name ? s->cfg.default_name
		    : "", owned != NULL ? "its record's cluster" : NULL);
		free(owned);
		return rc;
	}
	free(owned);
	if (s->conn != NULL && s->cl == cl)
		return EXIT_OK;
	hang_up(s);
	if ((s->conn = session_dial(cl, &rc, &err)) == NULL)
		return session_say(rc, err);
	s->cl = cl;
	s->tracker = tracker_new(cl);
	return EXIT_OK;
}

int session_open(struct session *s, const char *cluster, const char *job)
{
	int rc = session_begin(s);

	if (rc == EXIT_OK && (rc = session_connect(s, cluster, job)) != EXIT_OK)
		session_close(s);
	return rc;
}

void session_close(struct session *s)
{
	hang_up(s);
	store_close(s->store);
	config_free(&s->cfg);
	memset(s, 0, sizeof(*s));
}

int session_poll(struct session *s, struct poll_result *res)
{
	char *err = NULL;

	if (tracker_poll(s->tracker, s->conn, s->store, res, &err) != 0) {
		session_say(0, err);
		return -1;
	}
	if (res->problem != NULL)
		fprintf(stderr, "taotop: %s: %s\n", s->cl->name, show_err(res->problem));
	return 0;
}

int session_begin_clusters(struct session *s, const struct cli_args *a, const char *dflt,
    long *since_s, size_t *n)
{
	const char *only = cli_val(a, "cluster"), *since = cli_val(a, "since");
	char *err = NULL;
	int rc;

	*since_s = 0;
	if (since == NULL)
		since = dflt;
	if (since != NULL && duration_since_parse(since, since_s, &err) != 0) {
		fprintf(stderr, "taotop: --since %s\n", show_err(err));
		free(err);
		return EXIT_USAGE;
	}
	if ((rc = session_begin(s)) != EXIT_OK)
		return rc;
	if (only != NULL && config_cluster(&s->cfg, only) == NULL) {
		rc = session_unknown_cluster(s, only, "--cluster");
		session_close(s);
		return rc;
	}
	*n = only != NULL ? 1 : s->cfg.n;
	return EXIT_OK;
}

const struct cluster_cfg *session_nth(const struct session *s, const struct cli_args *a,
    size_t k)
{
	const char *only = cli_val(a, "cluster");

	return only != NULL ? config_cluster(&s->cfg, only) : &s->cfg.clusters[k];
}

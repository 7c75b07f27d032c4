/*
 * What a verb needs to act on a cluster, opened and closed here for every
 * verb: the config, the records, and one connection to the cluster the
 * verb names (or the job it names is on). Each failure is said on stderr
 * and comes back as the verb's exit code (cli.h).
 */
#ifndef TAOTOP_CLI_SESSION_H
#define TAOTOP_CLI_SESSION_H

#include "engine/config/config.h"

struct conn;
struct poll_result;
struct record_store;
struct tracker;

struct session {
	struct config		 cfg;
	const struct cluster_cfg *cl;		/* connected to, or NULL */
	struct conn		*conn;
	struct record_store	*store;
	struct tracker		*tracker;
};

/* The config and the records, no connection yet. */
int session_begin(struct session *s);
/* Connected to cluster (NULL: the default) or, for job (NULL: none), to
 * its record's cluster: a taotop id goes where its record says, and a
 * --cluster that says otherwise is refused. An open connection to that
 * cluster is kept, one to another is closed first. */
int session_connect(struct session *s, const char *cluster, const char *job);
/* Both. */
int session_open(struct session *s, const char *cluster, const char *job);
void session_close(struct session *s);

/* The cluster job is on, in *cluster: its record's (then also *owned,
 * which the caller frees), else flag (a SLURM id, or a record of no
 * cluster). -1 with *err when the two disagree; 1 with *err when job is
 * no job's name at all (*cluster is flag then). */
int session_cluster_of(struct session *s, const char *job, const char *flag,
    const char **cluster, char **owned, char **err);
/* A connection to cl on this thread (a libssh session belongs to one),
 * or NULL with *rc and *err: for the verbs that reach several clusters. */
struct conn *session_dial(const struct cluster_cfg *cl, int *rc, char **err);
/* One poll of the session's cluster; its problem said. -1: the poll
 * failed, said. */
int session_poll(struct session *s, struct poll_result *res);

/* "no cluster called 'name' (source)" and the configured clusters, on
 * stderr; source NULL: TAOTOP_CLUSTER when it is set, else the config's
 * default_cluster. EXIT_USAGE. */
int session_unknown_cluster(const struct session *s, const char *name, const char *source);

struct cli_args;
/* For the verbs that go over clusters (jobs, report): --since's span in
 * *since_s (dflt when it is not given: NULL, 0), then session_begin with
 * --cluster checked; *n the clusters to go over, each session_nth's. An
 * EXIT_ code (the session closed again when not EXIT_OK). */
int session_begin_clusters(struct session *s, const struct cli_args *a, const char *dflt,
    long *since_s, size_t *n);
const struct cluster_cfg *session_nth(const struct session *s, const struct cli_args *a,
    size_t k);

/* "taotop: err" on stderr, err freed: rc. */
int session_say(int rc, char *err);

#endif

/*
 * The monitor's half of the engine: every configured cluster watched at
 * once, each through its own worker thread that owns the connection, so the
 * UI thread only hands over requests and takes back results, and never
 * waits on the network.
 *
 * Everything here is called on the UI thread. The UI polls the descriptors
 * of watch_fds() for reading, calls watch_dispatch() when one is readable
 * and watch_tick() when the time watch_tick() last returned has come; both
 * queue what happened as events (struct watch_event), which the UI takes
 * one at a time with watch_next(), so it redraws only what changed.
 *
 * Per cluster it keeps the link (connecting, up, reconnecting in N s, host
 * key refused, auth failed), the rows of the latest poll (kept when a poll
 * fails: stale, never blanked; before the first, taotop's jobs as their
 * records on disk say, queued as a WATCH_EV_JOBS by watch_new), and polls
 * on the schedule of
 * engine/track/schedule.h. It follows the logs of the one job the user looks at,
 * keeping the rings of the last few jobs looked at so switching back is
 * instant.
 */
#ifndef TAOTOP_ENGINE_WATCH_H
#define TAOTOP_ENGINE_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "engine/logs/logring.h"
#include "engine/watch/watch_event.h"
#include "engine/config/preflight.h"
#include "engine/submit/submit.h"
#include "engine/track/tracker.h"
#include "engine/track/usage.h"

struct buf;
struct config;
struct cluster_cfg;
struct conn_challenge;
struct record_store;

enum link_state {
	LINK_CONNECTING,
	LINK_UP,
	LINK_RECONNECTING,	/* retry_at says when */
	LINK_HOSTKEY_UNKNOWN,	/* waits for watch_trust() or watch_poll_now() */
	LINK_HOSTKEY_CHANGED,	/* refused for good: fix known_hosts */
	LINK_AUTH_FAILED,
	LINK_ASKING,		/* the server asks a question (a one-time code):
				 * ask holds it, watch_answer() answers */
};

/* One cluster as the UI sees it. */
struct watched {
	const struct cluster_cfg *cfg;
	enum link_state	 link;
	char		*host;		/* connected to, or the refused host */
	char		*fingerprint;	/* the refused key's SHA256 fingerprint */
	char		*error;		/* the last connection problem, or NULL */
	int64_t		 retry_at_ms;	/* LINK_RECONNECTING: monotonic ms */
	struct poll_result last;	/* the latest poll that ran (polls 0: the
					 * records on disk, tracker_rows_from_disk) */
	unsigned long	 polls;		/* polls come back (0: none yet); last.events
					 * are new when this moved */
	int64_t		 poll_started_ms;/* a poll in flight since (monotonic), or 0 */
	int64_t		 read_started_ms;/* a followed log's read in flight since, or 0 */
	int64_t		 next_poll_ms;	/* 0: none planned (waiting for the user) */
	int		 submitting;	/* a submit holds the connection: polls wait */
	struct conn_challenge *ask;	/* LINK_ASKING: the server's question, raw */
	/* live GPU use (engine/track/usage.h): sampled after a poll, when due */
	struct job_use	*use;		/* the jobs of the latest round */
	size_t		 nuse;
	unsigned long	 use_rounds;	/* rounds come back */
	char		*use_off;	/* why it cannot work on this cluster (then
					 * never tried again), or NULL */
};

/* One job's followed logs. */
struct watch_log {
	size_t		 cluster;
	char		*job;		/* record id or SLURM id */
	struct log_ring	 ring[2];	/* main.out, main.err */
	char		*path[2];	/* once known */
	char		*error;		/* why nothing can be shown yet, or NULL */
	int		 loaded;	/* the first tail arrived */
	int64_t		 read_ms;	/* the last good read (monotonic), or 0 */
	int64_t		 reading_ms;	/* a read in flight since, or 0 */
	uint64_t	 generation;	/* bumped when lines arrive */
};

struct watch;

struct watch *watch_new(const struct config *cfg, struct record_store *st);
/* Stops the workers (abandoning what runs) and frees everything. */
void watch_free(struct watch *w);

size_t watch_count(const struct watch *w);
const struct watched *watch_cluster(const struct watch *w, size_t i);
/* The descriptors to poll for reading; returns how many (<= max). */
size_t watch_fds(const struct watch *w, int *fds, size_t max);
/* Take every finished request and connection event from the workers into
 * the queue. */
void watch_dispatch(struct watch *w);
/* Start what is due at now_ms (monotonic); *next_ms gets when to call
 * again (-1: only when a descriptor wakes us). */
void watch_tick(struct watch *w, int64_t now_ms, int64_t *next_ms);
/* The oldest event not yet taken into *ev (the caller's until
 * watch_event_free, which a handler that keeps a pointer of it leaves
 * NULL): 1, or 0 when none waits. Events not taken are freed by
 * watch_free. */
int watch_next(struct watch *w, struct watch_event *ev);

/* The user scrolled past the end of the list: the cluster's next page of
 * finished jobs (TRACKER_PAGE older ones, from the records' index) comes
 * with a poll that starts now. 0, or -1 when none is left to show (its
 * last poll's finished_left). */
int watch_more_finished(struct watch *w, size_t cluster);

/* The user asked for fresh data: poll every cluster now. */
void watch_poll_now(struct watch *w);
/* The user is at the keyboard: back to the base poll rate (a quiet
 * cluster's polls back off to a minute; a user looking should not wait
 * that long to see a change, or a frozen server). */
void watch_user_active(struct watch *w);
/* Follow job's logs (a cached follower if it was followed lately). NULL
 * to stop following. The pointer stays valid until the next call. */
struct watch_log *watch_follow(struct watch *w, size_t cluster, const char *job);
/* Cancel jobs of one cluster; their outcomes come in one
 * WATCH_EV_OUTCOMES (free a list taken from it with watch_outcomes_free). */
void watch_cancel(struct watch *w, size_t cluster, char *const *jobs, size_t n);
/* Accept the refused host key of a cluster in LINK_HOSTKEY_UNKNOWN: written
 * to known_hosts, then connect. */
void watch_trust(struct watch *w, size_t cluster);

/* Answer the question of a cluster in LINK_ASKING: n answers, one per
 * prompt, taken from the caller's secret buffers and wiped there; NULL
 * declines (the cluster goes to LINK_AUTH_FAILED). */
void watch_answer(struct watch *w, size_t cluster, struct buf *answers, size_t n);

/* Read files of a cluster (paths: n of them); they come back in one
 * WATCH_EV_FILES (free a list taken from it with watch_files_free). A new
 * fetch makes an unanswered one's answer moot: it is not queued. */
void watch_fetch(struct watch *w, size_t cluster, char *const *paths, size_t n);
/* Retry a finished taotop job (engine/track/retry.h); the answer comes with
 * WATCH_EV_RETRY. */
void watch_retry(struct watch *w, size_t cluster, const char *job);

/* Why a pending job waits (engine/track/actions.h's job_explain_pending):
 * the answer comes with WATCH_EV_EXPLAIN. Only when the user asks: it
 * makes the scheduler plan the job. */
void watch_explain(struct watch *w, size_t cluster, const char *job);
/* A finished job's efficiency card from accounting (a job that is not
 * taotop's: taotop's keep theirs): its lines come with WATCH_EV_EXPLAIN. */
void watch_card(struct watch *w, size_t cluster, const char *slurm_id);
/* A taotop job's card completed with accounting's facts in its record
 * (once); WATCH_EV_EXPLAIN with no lines says it is there. */
void watch_card_record(struct watch *w, size_t cluster, const char *record_id);

/* Where the GPU hours went on a cluster over the last since_s seconds
 * (engine/store/report.h: one remote command); its lines come with
 * WATCH_EV_REPORT. */
void watch_report(struct watch *w, size_t cluster, long since_s);

/* An action of engine/track/actions.h on a job (arg: the signal or time limit);
 * its answer (a sentence, and whether the scheduler agreed) comes with
 * WATCH_EV_ANSWER. */
void watch_action(struct watch *w, size_t cluster, const char *job, int action, const char *arg);

/* Submit a job (the wizard's), through the same pipeline as `taotop
 * submit`, on the cluster's worker: its polls wait until it ends. Takes
 * spec's contents (left zeroed) and the secrets array (names and typed
 * values, wiped when done). One at a time: -1 while one runs. Its steps
 * come as WATCH_EV_STEP, one each, then its end as WATCH_EV_SUBMITTED. */
struct spec;
struct spec_kv;
int watch_submit(struct watch *w, size_t cluster, struct spec *spec, const char *bundle,
    struct spec_kv *secrets, size_t nsecrets, int dry_run);
int watch_submit_running(const struct watch *w);

/* Run the preflight (engine/config/preflight.h) on a cluster, for the first-run
 * form before it writes the cluster; it connects if need be. The checks
 * come with WATCH_EV_PREFLIGHT. */
void watch_preflight(struct watch *w, size_t cluster);

/* The live use of a job (its SLURM id) from its cluster's latest sampling
 * round, or NULL. */
const struct job_use *watch_use(const struct watch *w, size_t cluster, const char *slurm_id);
/* Sample a job that is not taotop's too (the user looks at it), from the
 * next round on: the newest few asked for are kept. */
void watch_use_request(struct watch *w, size_t cluster, const char *slurm_id);

/* Since when the cluster owes an answer: its oldest poll or followed-log
 * read in flight (monotonic ms), or 0. A silent link shows here first:
 * a read queued behind a hung one waits too. */
int64_t watch_waiting_since(const struct watched *c);

/* Monotonic milliseconds, the clock of this interface. */
int64_t watch_now_ms(void);

/* Lend the clusters' sessions to the user's other taotop processes
 * (ssh/lend.h) on the socket monitor-PID.sock in the user's private
 * folder, unless cfg's share: is false or TAOTOP_NO_SHARE is set: a
 * command whose target is one of these clusters' as configured runs on
 * the monitor's own connection, through its worker, between the monitor's
 * own requests. 0 lending, 1 off, -1 with *err (the monitor goes on
 * without lending). */
int watch_lend_start(struct watch *w, const struct config *cfg, char **err);
/* Stop lending (watch_free does it too). */
void watch_lend_stop(struct watch *w);
/* The commands borrowing a session now (0 when not lending). Any thread. */
unsigned watch_lent_clients(const struct watch *w);

#endif

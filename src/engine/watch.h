/*
 * The monitor's half of the engine: every configured cluster watched at
 * once, each through its own worker thread that owns the connection, so the
 * UI thread only hands over requests and takes back results, and never
 * waits on the network.
 *
 * Everything here is called on the UI thread. The UI polls the descriptors
 * of watch_fds() for reading, calls watch_dispatch() when one is readable
 * and watch_tick() when the time watch_tick() last returned has come; both
 * say what changed as WATCH_* bits, so the UI redraws only that.
 *
 * Per cluster it keeps the link (connecting, up, reconnecting in N s, host
 * key refused, auth failed), the rows of the latest poll (kept when a poll
 * fails: stale, never blanked), and polls on the schedule of
 * engine/schedule.h. It follows the logs of the one job the user looks at,
 * keeping the rings of the last few jobs looked at so switching back is
 * instant.
 */
#ifndef TAOTOP_ENGINE_WATCH_H
#define TAOTOP_ENGINE_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "engine/logring.h"
#include "engine/tracker.h"
#include "engine/usage.h"

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
	struct poll_result last;	/* the latest poll that ran */
	unsigned long	 polls;		/* polls come back (0: none yet); last.events
					 * are new when this moved */
	int64_t		 poll_started_ms;/* a poll in flight since (monotonic), or 0 */
	int64_t		 read_started_ms;/* a followed log's read in flight since, or 0 */
	int64_t		 next_poll_ms;	/* 0: none planned (waiting for the user) */
	int		 submitting;	/* a submit holds the connection: polls wait */
	struct conn_challenge *ask;	/* LINK_ASKING: the server's question, raw */
	/* live GPU use (engine/usage.h): sampled after a poll, when due */
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

/* An answer to watch_cancel(). */
struct watch_outcome {
	char	*cluster;
	char	*job;
	int	 ok;
	char	*message;	/* "cancelled", "had already ended", or why not */
};

/* Files fetched for the UI (a job's sbatch, its spec): text or why not. */
struct watch_file {
	char	*path;
	char	*text;		/* at most 256 KiB, raw: sanitise before showing */
	char	*error;
};

/* What a retry asked from the monitor did. */
struct watch_retry {
	char	*job;
	char	*new_id;	/* NULL when it failed */
	char	*message;
};

enum {
	WATCH_JOBS	= 1 << 0,	/* rows changed */
	WATCH_LINK	= 1 << 1,	/* a link changed */
	WATCH_LOG	= 1 << 2,	/* the followed log changed */
	WATCH_CANCEL	= 1 << 3,	/* a cancel request finished */
	WATCH_HOSTKEY	= 1 << 4,	/* a host key waits for the user */
	WATCH_FILES	= 1 << 5,	/* a fetch finished */
	WATCH_RETRY	= 1 << 6,	/* a retry finished */
	WATCH_ACTION	= 1 << 7,	/* an action's answer came */
	WATCH_SUBMIT	= 1 << 8,	/* a submit reported a step, or finished */
	WATCH_ASK	= 1 << 9,	/* a server's question waits for the user */
	WATCH_USE	= 1 << 10,	/* a sampling round came back */
};

/* A submit's step as it happens (engine/submit.h's progress). */
struct watch_step {
	int	 step;		/* enum submit_step */
	int	 state;		/* 0 started (again: progress), 1 done, -1 failed */
	char	*detail;
};

struct watch;

struct watch *watch_new(const struct config *cfg, struct record_store *st);
/* Stops the workers (abandoning what runs) and frees everything. */
void watch_free(struct watch *w);

size_t watch_count(const struct watch *w);
const struct watched *watch_cluster(const struct watch *w, size_t i);
/* The descriptors to poll for reading; returns how many (<= max). */
size_t watch_fds(const struct watch *w, int *fds, size_t max);
/* Take every finished request and connection event. */
unsigned watch_dispatch(struct watch *w);
/* Start what is due at now_ms (monotonic); *next_ms gets when to call
 * again (-1: only when a descriptor wakes us). */
unsigned watch_tick(struct watch *w, int64_t now_ms, int64_t *next_ms);

/* The user asked for fresh data: poll every cluster now. */
void watch_poll_now(struct watch *w);
/* The user is at the keyboard: back to the base poll rate (a quiet
 * cluster's polls back off to a minute; a user looking should not wait
 * that long to see a change, or a frozen server). */
void watch_user_active(struct watch *w);
/* Follow job's logs (a cached follower if it was followed lately). NULL
 * to stop following. The pointer stays valid until the next call. */
struct watch_log *watch_follow(struct watch *w, size_t cluster, const char *job);
/* Cancel jobs of one cluster; the outcomes come with WATCH_CANCEL. */
void watch_cancel(struct watch *w, size_t cluster, char *const *jobs, size_t n);
/* Outcomes gathered since the last call (caller frees with
 * watch_outcomes_free). */
size_t watch_take_outcomes(struct watch *w, struct watch_outcome **out);
void watch_outcomes_free(struct watch_outcome *o, size_t n);
/* Accept the refused host key of a cluster in LINK_HOSTKEY_UNKNOWN: written
 * to known_hosts, then connect. */
void watch_trust(struct watch *w, size_t cluster);

/* Answer the question of a cluster in LINK_ASKING: n answers, one per
 * prompt, taken from the caller's secret buffers and wiped there; NULL
 * declines (the cluster goes to LINK_AUTH_FAILED). */
void watch_answer(struct watch *w, size_t cluster, struct buf *answers, size_t n);

/* Read files of a cluster (paths: n of them); they come back with
 * WATCH_FILES, for watch_take_files. A new fetch replaces an unanswered
 * one's answer. */
void watch_fetch(struct watch *w, size_t cluster, char *const *paths, size_t n);
size_t watch_take_files(struct watch *w, struct watch_file **out);
void watch_files_free(struct watch_file *f, size_t n);
/* Retry a finished taotop job (engine/retry.h); the answer comes with
 * WATCH_RETRY, for watch_take_retry (caller frees with watch_retry_free). */
void watch_retry(struct watch *w, size_t cluster, const char *job);
int watch_take_retry(struct watch *w, struct watch_retry *out);
void watch_retry_free(struct watch_retry *r);

/* An action of engine/actions.h on a job (arg: the signal or time limit);
 * its answer (a sentence) comes with WATCH_ACTION, for watch_take_answer:
 * caller frees; *ok says whether the scheduler agreed. */
void watch_action(struct watch *w, size_t cluster, const char *job, int action, const char *arg);
char *watch_take_answer(struct watch *w, int *ok);

/* Submit a job (the wizard's), through the same pipeline as `taotop
 * submit`, on the cluster's worker: its polls wait until it ends. Takes
 * spec's contents (left zeroed) and the secrets array (names and typed
 * values, wiped when done). One at a time: -1 while one runs. Its steps
 * come with WATCH_SUBMIT, for watch_take_steps; then its end, for
 * watch_take_submit. */
struct spec;
struct spec_kv;
struct submit_result;
int watch_submit(struct watch *w, size_t cluster, struct spec *spec, const char *bundle,
    struct spec_kv *secrets, size_t nsecrets, int dry_run);
int watch_submit_running(const struct watch *w);
size_t watch_take_steps(struct watch *w, struct watch_step **out);
void watch_steps_free(struct watch_step *s, size_t n);
/* -1 while no submit has ended since the last call; else 1 (submitted, or
 * the dry run rendered: res) or 0 (failed: *err, caller frees). */
int watch_take_submit(struct watch *w, struct submit_result *res, char **err);

/* The live use of a job (its SLURM id) from its cluster's latest sampling
 * round, or NULL. */
const struct job_use *watch_use(const struct watch *w, size_t cluster, const char *slurm_id);
/* Sample a job that is not taotop's too (the user looks at it), from the
 * next round on: the newest few asked for are kept. */
void watch_use_request(struct watch *w, size_t cluster, const char *slurm_id);
/* Flags raised since the last call (GPUs idle, progress stopped), already
 * noted in their records' history; caller frees with watch_flags_free. */
struct watch_flag {
	size_t	 cluster;
	char	*job;		/* the record id, else the SLURM id */
	char	*text;
};
size_t watch_take_flags(struct watch *w, struct watch_flag **out);
void watch_flags_free(struct watch_flag *f, size_t n);

/* Since when the cluster owes an answer: its oldest poll or followed-log
 * read in flight (monotonic ms), or 0. A silent link shows here first:
 * a read queued behind a hung one waits too. */
int64_t watch_waiting_since(const struct watched *c);

/* Monotonic milliseconds, the clock of this interface. */
int64_t watch_now_ms(void);

#endif

/*
 * What the engine's watch tells the UI (watch.h), as data: the kinds of
 * event, their payloads, and what frees them. The queue (watch_queue.h) and
 * the UI's handler include this alone.
 */
#ifndef TAOTOP_ENGINE_WATCH_EVENT_H
#define TAOTOP_ENGINE_WATCH_EVENT_H

#include <stddef.h>

#include "engine/config/preflight.h"
#include "engine/submit/submit.h"

/* An answer to watch_cancel(), one per job. */
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

/* A submit's step as it happens (engine/submit/submit.h's progress). */
struct watch_step {
	int	 step;		/* enum submit_step */
	int	 state;		/* 0 started (again: progress), 1 done, -1 failed */
	char	*detail;
};

/* What the engine tells the UI, in the order it happened: one queue that
 * watch_dispatch() and watch_tick() fill and watch_next() empties.
 *
 * The first six say that a part of watch_cluster(cluster)'s state changed
 * (read it there, as it is now): one of a kind and cluster waits unread at
 * a time, since a second would say nothing the first does not. The others
 * carry an answer in their member of u, each one its own event: none is
 * merged, replaced or dropped. */
enum watch_kind {
	WATCH_EV_JOBS,		/* a poll came back: the rows changed */
	WATCH_EV_LINK,		/* the link changed, or a poll started */
	WATCH_EV_LOG,		/* the followed log changed */
	WATCH_EV_HOSTKEY,	/* a refused host key waits for the user */
	WATCH_EV_ASK,		/* a server's question waits (watched.ask) */
	WATCH_EV_USE,		/* a sampling round came back */
	WATCH_EV_OUTCOMES,	/* u.outcomes: a watch_cancel() finished */
	WATCH_EV_FILES,		/* u.files: a watch_fetch() finished */
	WATCH_EV_RETRY,		/* u.retry: a watch_retry() finished */
	WATCH_EV_ANSWER,	/* u.answer: a watch_action() finished */
	WATCH_EV_STEP,		/* u.step: a watch_submit() reports a step */
	WATCH_EV_SUBMITTED,	/* u.submitted: a watch_submit() ended */
	WATCH_EV_FLAG,		/* u.flag: a running job flagged by its sampling */
	WATCH_EV_PREFLIGHT,	/* u.preflight: a watch_preflight() finished */
	WATCH_EV_EXPLAIN,	/* u.explain: a watch_explain() finished */
	WATCH_EV_REPORT,	/* u.report: a watch_report() finished (one cluster's) */
};

struct watch_event {
	enum watch_kind	 kind;
	size_t		 cluster;	/* watch_cluster()'s index */
	union {
		struct { struct watch_outcome *v; size_t n; } outcomes;
		/* the newest fetch's only: an older fetch's answer is not
		 * queued once another is asked (it answers what is no longer
		 * looked at) */
		struct { struct watch_file *v; size_t n; } files;
		struct watch_retry retry;
		struct { char *text; int ok; } answer;	/* ok: the scheduler agreed */
		struct watch_step step;
		/* ok 1: submitted, or the dry run rendered (res); 0: failed (err) */
		struct { int ok; struct submit_result res; char *err; } submitted;
		/* already noted in the record's history */
		struct { char *job; char *text; } flag;	/* job: record id, else SLURM id */
		/* ok 1: it ran (p, whatever it found); 0: it could not (err) */
		struct { int ok; struct preflight p; char *err; } preflight;
		/* why job waits: n sanitised lines, or err (lines NULL) */
		struct { char *job; char **lines; size_t n; char *err; } explain;
		/* a cluster's report: n lines, or err (lines NULL) */
		struct { char **lines; size_t n; char *err; } report;
	} u;
};

/* What an event owns, freed; the payload's lists taken out of an event
 * (outcomes, files) are freed by these two. */
void watch_event_free(struct watch_event *ev);
void watch_outcomes_free(struct watch_outcome *o, size_t n);
void watch_files_free(struct watch_file *f, size_t n);

#endif

/*
 * An unclear submit settled by the decision table of NVIDIA's reference
 * (tao-skill-bank, skills/platform/tao-run-on-slurm/references/
 * slurm-container-execution.md, "Retry for infrastructure failures"; the
 * 2 s and 60 s are ../shared/notes/tao-contract.md section 5): when
 * sbatch's answer was lost (the connection cut after the command was sent,
 * or no id in what it printed) the job may exist, so it is looked for by
 * the user and its exact name, squeue and sacct, on every login host of
 * the cluster, every 2 s for up to 60 s:
 *
 *   one job found          adopted (the caller releases a held one)
 *   several found          a stop: the lowest id kept, the others are
 *                          duplicates the caller cancels
 *   none, and a lookup that worked (squeue answered) said so through the
 *   whole window           an infrastructure failure: the caller submits
 *                          once more, under a new record linked to this one
 *   none, and no lookup worked
 *                          unknown: the job may exist; never reported as
 *                          "nothing was submitted"
 *
 * An id, once any host's squeue or sacct named it, counts for the rest of
 * the window. What each host answered is kept as a sentence for the record.
 */
#ifndef TAOTOP_ENGINE_SETTLE_H
#define TAOTOP_ENGINE_SETTLE_H

#include <stddef.h>

#include "util/buf.h"

#define SETTLE_EVERY_MS		2000
#define SETTLE_WINDOW_MS	60000

struct conn;

enum settle_verdict {
	SETTLE_WAIT,		/* nothing found yet, the window still open */
	SETTLE_ADOPT,
	SETTLE_DUPLICATES,
	SETTLE_NONE,		/* a working lookup said none, window over */
	SETTLE_UNKNOWN,		/* no lookup worked, window over */
};

struct settle_found {
	char	 id[32];
	int	 held;		/* squeue's reason was JobHeldUser */
	char	 by[48];	/* "squeue on login1" */
};

struct settle_state {
	struct settle_found *found;	/* ascending by id, each once */
	size_t		 nfound;
	unsigned	 looks, failed;	/* lookups asked, and those that did not work */
	char		*first_error;	/* the first failed lookup's why */
};

void settle_init(struct settle_state *st);
void settle_free(struct settle_state *st);

/* The one command asking for name's jobs (both squeue, every state a
 * recent job may be in, and sacct, of the last 7 days), quoted. Caller
 * frees. */
char *settle_command(const char *name);

/* One host's answer to settle_command: ran is whether the command ran to
 * its end (its output read); the ids it names are added. Returns 1 when
 * the lookup worked (squeue answered), 0 when not (why is noted). */
int settle_read(struct settle_state *st, const char *host, int ran, const char *out,
    const char *why);

/* The table: what the lookups so far decide. */
enum settle_verdict settle_decide(const struct settle_state *st, int worked_once,
    int window_over);

/* "adopted", "duplicates", ... */
const char *settle_verdict_name(enum settle_verdict v);

struct settle_result {
	enum settle_verdict verdict;
	struct settle_state st;
	char		*hosts;		/* the login hosts asked, comma-separated */
	long		 waited_ms;
	int		 worked;	/* some lookup worked */
};

/* Run the table for the job named name over c and a connection of its own
 * to each other login host of c's list, window_ms long (0: the
 * reference's 60 s), a round every SETTLE_EVERY_MS. Never submits or
 * cancels anything. */
void settle_run(struct conn *c, const char *name, long window_ms, struct settle_result *out);
/* The evidence as one sentence for the record and the user: the hosts,
 * the lookups, what they found and how long it took. Caller frees. */
char *settle_evidence(const struct settle_result *r, const char *name);
void settle_result_free(struct settle_result *r);

#endif

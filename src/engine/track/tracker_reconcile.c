#include "engine/track/tracker_priv.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/store/store.h"
#include "engine/track/retry.h"
#include "engine/submit/secrets.h"
#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "util/log.h"
#include "util/xmalloc.h"

/* ---- COMPLETED: TAO's status.json decides ------------------------------------- */

/* TAO's progress as the record keeps it, or NULL when status.json
 * reported none. Caller frees with free_progress. */
static struct record_progress *progress_of(const struct tao_status *ts)
{
	struct record_progress *p;

	if (ts->epoch < 0 && ts->nseries == 0)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->epoch = ts->epoch;
	p->max_epoch = ts->max_epoch;
	snprintf(p->eta, sizeof(p->eta), "%s", ts->eta);
	snprintf(p->metric, sizeof(p->metric), "%s", ts->metric);
	if (ts->nseries > 0) {
		p->series = (void *)xmemdup(ts->series, ts->nseries * sizeof(*p->series));
		p->nseries = ts->nseries;
	}
	return p;
}

static void free_progress(struct record_progress *p)
{
	if (p != NULL)
		free(p->series);
	free(p);
}

/* Returns 0 with the verdict (and the progress status.json reported, or
 * NULL), or -1 when the file could not be read for a reason that may pass
 * (the connection): decide on a later poll. */
static int judge_completed(struct conn *c, const struct job_record *r, enum tao_state *to,
    char **message, struct record_progress **progress)
{
	struct conn_stat st;
	struct tao_status ts;
	struct buf b;
	char *path, *err = NULL;
	uint64_t off;
	enum conn_status rc;

	if (r->results_dir == NULL) {
		*to = TAO_ERROR;
		*message = xstrdup("COMPLETED, but the record names no results folder to read "
		    "status.json from");
		return 0;
	}
	path = xasprintf("%s/status.json", r->results_dir);
	rc = conn_stat(c, path, &st, &err);
	if (rc == CONN_NOTFOUND) {
		*to = TAO_ERROR;
		*message = xasprintf("COMPLETED, but %s does not exist: TAO wrote no final status", path);
		free(err);
		free(path);
		return 0;
	}
	if (rc != CONN_OK) {
		free(err);
		free(path);
		return -1;
	}
	off = st.size > STATUS_TAIL ? st.size - STATUS_TAIL : 0;
	buf_init(&b);
	rc = conn_read_at(c, path, off, STATUS_TAIL, &b, &err);
	if (rc != CONN_OK) {
		buf_free(&b);
		free(err);
		free(path);
		return -1;
	}
	tao_status_init(&ts);
	{
		/* Reading from the middle: the first line is partial. */
		const char *start = b.data;
		if (off > 0 && (start = memchr(b.data, '\n', b.len)) != NULL)
			start++;
		else if (off > 0)
			start = b.data + b.len;
		tao_status_feed(&ts, start, b.len - (size_t)(start - b.data));
	}
	*progress = progress_of(&ts);
	if (strcmp(ts.status, "SUCCESS") == 0 || strcmp(ts.status, "SKIPPED") == 0) {
		*to = TAO_DONE;
		*message = xasprintf("status.json: %s", ts.status);
	} else if (strcmp(ts.status, "FAILURE") == 0) {
		*to = TAO_ERROR;
		*message = xasprintf("status.json: FAILURE%s%s", ts.message ? ": " : "",
		    ts.message ? ts.message : "");
	} else {
		*to = TAO_ERROR;
		*message = ts.status[0] != '\0'
		    ? xasprintf("COMPLETED, but status.json last says %s", ts.status)
		    : xasprintf("COMPLETED, but %s holds no status", path);
	}
	tao_status_free(&ts);
	buf_free(&b);
	free(path);
	return 0;
}

/* ---- applying one job's native state to its record ------------------------------ */

struct change {
	enum tao_state	 from;		/* the state this was decided from */
	int		 applied;	/* set when the record was still in it */
	enum tao_state	 to;
	const char	*native;
	const char	*message;
	const struct record_progress *progress;	/* TAO's, at the end; NULL: none read */
	const struct slurm_job *job;	/* what SLURM said of it */
};

/* What SLURM says of the job, kept in the record; what this answer does
 * not know (accounting's GPUs, a word for a limit) stays as it was. */
static void keep_alloc(struct job_record *r, const struct slurm_job *j)
{
	struct record_alloc *al = &r->alloc;

	if (!r->has_alloc) {
		memset(al, 0, sizeof(*al));
		al->elapsed_s = al->limit_s = -1;
		r->has_alloc = 1;
	}
	if (j->partition != NULL && j->partition[0] != '\0')
		snprintf(al->partition, sizeof(al->partition), "%s", j->partition);
	if (j->nodes > 0)
		al->nodes = j->nodes;
	if (j->gpus_known && j->gpus > 0)
		al->gpus = j->gpus;
	if (j->elapsed_s >= 0)
		al->elapsed_s = j->elapsed_s;
	if (j->limit_s >= 0)
		al->limit_s = j->limit_s;
	if (j->exit_code[0] != '\0')
		snprintf(al->exit_code, sizeof(al->exit_code), "%s", j->exit_code);
}

static int apply_change(struct job_record *r, void *arg, char **err)
{
	struct change *ch = arg;
	(void)err;
	/* Decided from the record as this poll read it; another taotop (a
	 * cancel, its own poll) may have moved it since: then the next poll
	 * decides again from what is there, and a final state is never left
	 * for a stale one. */
	if (r->state != ch->from)
		return 0;
	ch->applied = 1;
	if (ch->progress != NULL)
		record_set_progress(r, ch->progress);
	if (ch->job != NULL)
		keep_alloc(r, ch->job);
	return record_transition(r, ch->to, ch->native, ch->message, "scheduler", time(NULL));
}

static char *message_for(const struct slurm_job *j, const struct native_state *ns)
{
	if (ns->state == TAO_UNKNOWN)
		return xasprintf("SLURM state %s is not in taotop's table: shown as it is", j->state);
	if (ns->scheduler_owned)
		return xasprintf("%s: still the scheduler's, it may resume", ns->word);
	if (ns->state == TAO_PENDING && j->reason[0] != '\0')
		return xstrdup(j->reason);
	if (ns->state == TAO_ERROR && j->exit_code[0] != '\0')
		return xasprintf("%s, exit code %s", ns->word, j->exit_code);
	return NULL;
}

/* What the job's state is now, from SLURM's word and, where the seed says
 * so, TAO's status.json: 0 with *to, *message and *progress (caller frees
 * both), -1 to decide on a later poll. */
static int decide(struct conn *c, const struct job_record *r, const struct slurm_job *j,
    const struct native_state *ns, enum tao_state *to, char **message,
    struct record_progress **progress)
{
	*to = native_state_next(ns, r->state);
	*message = message_for(j, ns);
	*progress = NULL;
	if (ns->check_status_json) {
		free(*message);
		*message = NULL;
		return judge_completed(c, r, to, message, progress);
	}
	if (*to == TAO_ERROR && ns->final && r->state != TAO_ERROR && r->results_dir != NULL) {
		/* A job that failed: when TAO said why in status.json, that
		 * is what the user needs next to SLURM's exit code. */
		enum tao_state said;
		char *why = NULL;
		if (judge_completed(c, r, &said, &why, progress) == 0 && why != NULL &&
		    strncmp(why, "status.json: FAILURE", 20) == 0) {
			char *both = xasprintf("%s; %s", *message ? *message : ns->word, why);
			free(*message);
			*message = both;
		}
		free(why);
	}
	return 0;
}

/* After a change was written: the sidecar's end and an automatic retry. */
static void after_change(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const struct job_record *r, const struct slurm_job *j, const struct native_state *ns,
    enum tao_state to, struct poll_result *res)
{
	/* The backstop of the sidecar's life: a job that ended without its
	 * own cleanup (cancelled pending, killed) leaves no secret behind;
	 * before any retry writes it again. */
	if (tao_state_final(to)) {
		char *serr = NULL;
		if (secrets_remove_sidecar(c, r, &serr) != 0)
			log_msg(LOG_WARN, "poll: %s: sidecar: %s", r->id, serr);
		free(serr);
	}
	/* A failure that may be the cluster's: classify, and retry within
	 * the budget (engine/track/retry.h). Once: on the poll that saw it end. */
	if (to == TAO_ERROR && ns->infra_candidate && r->retried_as == NULL) {
		char *nid = NULL, *rerr = NULL;
		if (retry_after_failure(c, st, cl, r->id, ns->word, j->exit_code, &nid, &rerr) < 0)
			log_msg(LOG_WARN, "poll: %s: retry: %s", r->id, rerr);
		else if (nid != NULL)
			res->waiting_for_accounting = 1;	/* poll again soon */
		free(nid);
		free(rerr);
	}
}

/* Write ch to r's record; when it was applied, the event and the same
 * change in memory (for the row built from r). Returns 1 then. */
static int write_change(struct record_store *st, struct job_record *r, struct change *ch,
    struct poll_result *res)
{
	struct state_change *ev;
	char *err = NULL;

	if (store_update(st, r->id, apply_change, ch, &err) != 0 || !ch->applied) {
		if (err != NULL)
			log_msg(LOG_ERROR, "poll: %s", err);
		free(err);
		return 0;
	}
	res->events = xreallocarray(res->events, res->changes + 1, sizeof(*res->events));
	ev = &res->events[res->changes];
	ev->record_id = xstrdup(r->id);
	snprintf(ev->slurm_id, sizeof(ev->slurm_id), "%s", r->backend_ref);
	ev->from = r->state;
	ev->to = ch->to;
	ev->native = xstrdup(ch->native);
	ev->at = time(NULL);
	if (ch->progress != NULL)
		record_set_progress(r, ch->progress);
	keep_alloc(r, ch->job);
	record_transition(r, ch->to, ch->native, ch->message, "scheduler", ev->at);
	return 1;
}

/* Decide and record what a tracked job's state is now. Returns 1 when the
 * record changed. */
int tracker_update_one(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r, const struct slurm_job *j, struct poll_result *res)
{
	struct native_state ns;
	struct change ch;
	char *message;
	struct record_progress *progress;
	enum tao_state to;
	int changed = 0;

	native_state_map(j->state, &ns);
	/* Accounting can lag the queue: a job it still calls live but the
	 * queue no longer lists has just ended. Wait for the final word. */
	if (j->from_sacct && !ns.final && res->scheduler_ok) {
		res->waiting_for_accounting = 1;
		return 0;
	}
	if (decide(c, r, j, &ns, &to, &message, &progress) != 0) {
		free(message);
		free_progress(progress);
		return 0;
	}
	if (to != r->state || !same(ns.word, r->native)) {
		ch.from = r->state;
		ch.applied = 0;
		ch.to = to;
		ch.native = ns.word;
		ch.message = message;
		ch.progress = progress;
		ch.job = j;
		if ((changed = write_change(st, r, &ch, res)) != 0)
			after_change(c, st, cl, r, j, &ns, to, res);
	}
	free(message);
	free_progress(progress);
	return changed;
}

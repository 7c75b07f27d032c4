#include "engine/track/tracker_priv.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/track/retry.h"
#include "engine/track/segments.h"
#include "engine/track/structured.h"
#include "engine/submit/secrets.h"
#include "engine/submit/submit.h"
#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/log.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

/* ---- COMPLETED: TAO's status.json decides ------------------------------------- */

/* What status.json reported as the job ended: the progress the record
 * keeps and every metric's series with it (its curves). The progress is
 * the first member: a change's progress pointer is one of these
 * (progress_of makes every one), and curves_of finds the curves from it. */
struct end_progress {
	struct record_progress	p;
	struct series_set	curves;
};

static const struct series_set *curves_of(const struct record_progress *p)
{
	return &((const struct end_progress *)(const void *)p)->curves;
}

/* TAO's progress as the record keeps it, or NULL when status.json
 * reported none. Caller frees with free_progress. */
static struct record_progress *progress_of(const struct tao_status *ts)
{
	struct end_progress *ep;
	struct record_progress *p;

	if (ts->epoch < 0 && ts->nseries == 0)
		return NULL;
	ep = xcalloc(1, sizeof(*ep));
	p = &ep->p;
	series_set_copy(&ep->curves, &ts->curves);
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
	struct end_progress *ep = (struct end_progress *)(void *)p;

	if (p == NULL)
		return;
	free(p->series);
	series_set_free(&ep->curves);
	free(ep);
}

/* Where a job's status file is: where it was found (the follower's, or
 * the record's), else the first of TAO's places there, else the first the
 * bounded search finds below the results folder. 0 with *path (NULL: none
 * there) and *expected (the first place: what a message names); -1 when
 * the connection did not say. */
static int locate(struct conn *c, const struct job_record *r, const char *found, char **path,
    char **expected)
{
	struct conn_exec x;
	struct conn_stat cs;
	char **places, *err = NULL, *cmd, *q;
	size_t n, i;
	int rc = 0;

	*path = NULL;
	places = tao_status_places(r->results_dir, r->action, r->image, r->tao_results_dir, &n);
	*expected = n > 0 ? xstrdup(places[0]) : NULL;
	if (found == NULL)
		found = r->status_path;
	if (found != NULL)
		*path = xstrdup(found);
	for (i = 0; i < n && *path == NULL && rc == 0; i++) {
		enum conn_status st = conn_stat(c, places[i], &cs, &err);
		if (st == CONN_OK && cs.is_reg)
			*path = xstrdup(places[i]);
		else if (st != CONN_NOTFOUND)
			rc = -1;
		free(err);
		err = NULL;
	}
	for (i = 0; i < n; i++)
		free(places[i]);
	free(places);
	if (*path != NULL || rc != 0 || r->results_dir == NULL)
		return rc;
	q = sh_quote(r->results_dir);
	cmd = xasprintf("find %s -maxdepth %d -name status.json -type f 2>/dev/null | head -n 1",
	    q, TAO_STATUS_SEARCH_DEPTH);
	conn_exec_init(&x, cmd);
	x.timeout_ms = POLL_TIMEOUT_MS;
	if (conn_exec(c, &x, &err) != CONN_OK) {
		rc = -1;
	} else if (x.out.len > 0) {
		size_t rl = strlen(r->results_dir), l = strcspn(x.out.data, "\n");
		if (l > rl && strncmp(x.out.data, r->results_dir, rl) == 0 &&
		    x.out.data[rl] == '/')
			*path = xstrndup(x.out.data, l);
	}
	conn_exec_free(&x);
	free(cmd);
	free(q);
	free(err);
	return rc;
}

enum judged { JUDGED = 0, NO_FINAL = 1, JUDGE_LATER = -1 };

/*
 * TAO's verdict on a job, from its status file (engine/track/taostatus.h
 * says which line decides): JUDGED with *to and *message, NO_FINAL with
 * *message naming the path where no final line was written, JUDGE_LATER
 * when the file could not be read for a reason that may pass (the
 * connection). *progress: what the file reported, or NULL. ts: the
 * follower's (its numbering carried over), or NULL.
 */
static enum judged judge_status(struct conn *c, const struct job_record *r,
    const struct tao_status *follower, const char *found, enum tao_state *to, char **message,
    struct record_progress **progress)
{
	struct conn_stat st;
	struct tao_status ts;
	struct buf b;
	char *path = NULL, *expected = NULL, *err = NULL;
	uint64_t off;
	enum judged res = NO_FINAL;

	*progress = NULL;
	if (r->results_dir == NULL && r->tao_results_dir == NULL && r->status_path == NULL) {
		*message = xstrdup("the record names no results folder to read TAO's status from");
		return NO_FINAL;
	}
	if (locate(c, r, found, &path, &expected) != 0) {
		free(expected);
		return JUDGE_LATER;
	}
	if (path == NULL) {
		*message = xasprintf("no final status was written to %s (no status.json there or "
		    "within %d levels of %s)", expected ? expected : "?", TAO_STATUS_SEARCH_DEPTH,
		    r->results_dir ? r->results_dir : "?");
		free(expected);
		return NO_FINAL;
	}
	free(expected);
	buf_init(&b);
	if (conn_stat(c, path, &st, &err) != CONN_OK) {
		res = JUDGE_LATER;
		goto out;
	}
	if (!st.is_reg) {
		/* Opened, a FIFO would hold the session's SFTP channel. */
		*message = xasprintf("%s is not a regular file (a FIFO, a device or a link to "
		    "one): not read", path);
		goto out;
	}
	off = st.size <= STATUS_WHOLE ? 0 : st.size - STATUS_TAIL;
	if (conn_read_at(c, path, off, off == 0 ? STATUS_WHOLE : STATUS_TAIL, &b, &err) != CONN_OK) {
		res = JUDGE_LATER;
		goto out;
	}
	tao_status_init(&ts);
	tao_status_set_task(&ts, r->action);
	ts.success_only = r->cosmos != NULL;
	if (follower != NULL) {
		/* Its epoch 0 may be before the tail. */
		ts.zero_based = follower->zero_based;
		ts.max_is_last = follower->max_is_last;
	}
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
	if (tao_status_judge(&ts, to, message))
		res = JUDGED;
	else
		*message = xasprintf("no final status was written to %s%s%s", path,
		    ts.status[0] ? ": its last line says " : "", ts.status);
	tao_status_free(&ts);
out:
	free(err);
	buf_free(&b);
	free(path);
	return res;
}

/*
 * The bundle's own verdict, from its structured status file (the record's
 * done_status_path and success_states, engine/track/structured.h), in
 * place of TAO's status rules: a success state is Done, any other state
 * Error; JUDGED with *to and *message, NO_FINAL (*message) when the file
 * is not there or says nothing yet, JUDGE_LATER when the connection did
 * not answer.
 */
static enum judged judge_structured(struct conn *c, const struct job_record *r,
    enum tao_state *to, char **message)
{
	struct conn_stat st;
	struct buf b;
	char state[64], *err = NULL, *why = NULL, *shown;
	uint64_t off;
	enum conn_status cs;
	enum judged res = NO_FINAL;

	cs = conn_stat(c, r->done_status_path, &st, &err);
	free(err);
	err = NULL;
	if (cs == CONN_NOTFOUND) {
		*message = xasprintf("the bundle's structured status file %s is missing (its "
		    "completion.structured_status_path): nothing says the run succeeded",
		    r->done_status_path);
		return NO_FINAL;
	}
	if (cs != CONN_OK)
		return JUDGE_LATER;
	if (!st.is_reg) {
		*message = xasprintf("%s is not a regular file: not read", r->done_status_path);
		return NO_FINAL;
	}
	buf_init(&b);
	off = st.size <= STATUS_WHOLE ? 0 : st.size - STATUS_TAIL;
	if (conn_read_at(c, r->done_status_path, off, off == 0 ? STATUS_WHOLE : STATUS_TAIL, &b,
	    &err) != CONN_OK) {
		free(err);
		buf_free(&b);
		return JUDGE_LATER;
	}
	{
		const char *start = b.data ? b.data : "";
		size_t len = b.len;
		if (off > 0) {
			const char *nl = memchr(start, '\n', len);
			len -= nl ? (size_t)(nl + 1 - start) : len;
			start = nl ? nl + 1 : start;
		}
		if (structured_last_state(start, len, state, sizeof(state), &why) != 0) {
			*message = xasprintf("the bundle's structured status file %s says no state: %s",
			    r->done_status_path, why);
			free(why);
			buf_free(&b);
			return NO_FINAL;
		}
	}
	buf_free(&b);
	buf_init(&b);
	buf_adds(&b, "");
	sanitize_append_line(&b, state, strlen(state));
	shown = buf_detach(&b);
	*to = structured_state_in(state, r->success_states) ? TAO_DONE : TAO_ERROR;
	if (*to == TAO_DONE) {
		*message = xasprintf("the bundle's status file says %s", shown);
	} else {
		char *states = xstrdup(r->success_states ? r->success_states : ""), *p;
		for (p = states; (p = strchr(p, '\n')) != NULL;)
			*p = ',';
		*message = xasprintf("the bundle's status file %s says %s, not a success state "
		    "(%s)", r->done_status_path, shown, states);
		free(states);
	}
	free(shown);
	res = JUDGED;
	return res;
}

/* When the record began waiting for TAO's final line after SLURM said
 * COMPLETED (its transition to that word), or 0. */
static time_t waiting_since(const struct job_record *r)
{
	size_t i;

	if (tao_state_final(r->state) || !same(r->native, "COMPLETED"))
		return 0;
	for (i = r->nhist; i-- > 0;)
		if (same(r->hist[i].native, "COMPLETED"))
			return r->hist[i].at;
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
	const char	*source;	/* "scheduler", or "taotop" for its own cancel */
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
	if (j->partition != NULL && j->partition[0] != '\0' &&
	    !slurm_partition_keep(al->partition, j->partition))
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
	if (ch->progress != NULL) {
		record_set_progress(r, ch->progress);
		if (curves_of(ch->progress)->n > 0)
			record_set_curves(r, curves_of(ch->progress));
	}
	if (ch->job != NULL)
		keep_alloc(r, ch->job);
	return record_transition(r, ch->to, ch->native, ch->message, ch->source, time(NULL));
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

/* What the job's state is now, from SLURM's word and TAO's status file
 * (COMPLETED: TAO's final line decides, checked again for STATUS_LAG_S
 * when there is none; a failure: TAO's words added, and TAO's success
 * over a teardown that failed after it): 0 with *to, *message and
 * *progress (caller frees both) and *tao_failed (TAO wrote FAILURE: the
 * program's fault), -1 to decide on a later poll. */
static int decide(struct conn *c, const struct job_record *r, const struct slurm_job *j,
    const struct native_state *ns, const struct tao_status *ts, const char *found,
    struct poll_result *res, enum tao_state *to, char **message,
    struct record_progress **progress, int *tao_failed)
{
	enum tao_state said;
	enum judged jd;
	char *why = NULL, *both;
	time_t since;

	*to = native_state_next(ns, r->state);
	*message = message_for(j, ns);
	*progress = NULL;
	*tao_failed = 0;
	if (*to == TAO_PENDING && record_requeued(r)) {
		/* Its child timeout requeued it: the next segment waits. */
		const struct record_segment *s = segments_last(r);
		both = xasprintf("requeued after segment %d (its child timeout): segment %d waits "
		    "in the queue%s%s%s", s->n, s->n + 1, *message ? " (" : "",
		    *message ? *message : "", *message ? ")" : "");
		free(*message);
		*message = both;
		return 0;
	}
	if (*to == TAO_ERROR && ns->final && segments_stopped(r) != NULL) {
		/* The script stopped the run at its child timeout, and said why. */
		both = xasprintf("%s (%s)", segments_stopped(r), *message ? *message : ns->word);
		free(*message);
		*message = both;
		return 0;
	}
	if (ns->check_status_json) {
		free(*message);
		*message = NULL;
		jd = r->done_status_path != NULL ? judge_structured(c, r, to, message)
		    : judge_status(c, r, ts, found, to, message, progress);
		if (jd == JUDGE_LATER)
			return -1;
		if (jd == JUDGED) {
			*tao_failed = *to == TAO_ERROR;
			return 0;
		}
		since = waiting_since(r);
		if (since == 0 || time(NULL) - since < STATUS_LAG_S) {
			/* Shared storage may show TAO's last write late. */
			both = xasprintf("COMPLETED: TAO's final status awaited for up to %d s "
			    "(%s so far)", STATUS_LAG_S, *message);
			*to = TAO_RUNNING;
			res->waiting_for_accounting = 1;	/* poll again soon */
		} else {
			both = xasprintf("COMPLETED, but %s", *message);
			*to = TAO_ERROR;
		}
		free(*message);
		*message = both;
		return 0;
	}
	if (*to != TAO_ERROR || !ns->final || r->state == TAO_ERROR || r->done_status_path != NULL)
		return 0;	/* a bundle's own status judges only a completed job */
	/* A job that failed: what TAO said is what the user needs next to
	 * SLURM's exit code; a success line before a teardown that failed
	 * (or hung to the wall) is TAO's verdict. */
	jd = judge_status(c, r, ts, found, &said, &why, progress);
	/* Not for Cosmos: its guardrails take SUCCESS only with the child's
	 * exit 0 and SLURM's COMPLETED (a role failing after it is a failure). */
	if (jd == JUDGED && said == TAO_DONE && r->cosmos == NULL)
		*to = TAO_DONE;
	*tao_failed = jd == JUDGED && said == TAO_ERROR;
	if (why != NULL) {
		both = xasprintf("%s; %s", *message ? *message : ns->word, why);
		free(*message);
		*message = both;
	}
	free(why);
	return 0;
}

static int apply_event(struct job_record *r, void *arg, char **err)
{
	(void)err;
	record_event(r, arg, "taotop", time(NULL));
	return 1;
}

/* A line in r's history (on disk). */
static void note(struct record_store *st, const char *id, const char *message)
{
	char *err = NULL;

	if (store_update(st, id, apply_event, (void *)message, &err) != 0) {
		log_msg(LOG_ERROR, "poll: %s: %s", id, err);
		free(err);
	}
}

/* SLURM refused a segment's requeue (a site's MaxBatchRequeue, a job or
 * partition that may not requeue): the run goes on as a linked record
 * running what was staged, its segments counted on (segments-base beside
 * the job, which the script reads) so its first one resumes; or the
 * record says why it cannot. */
static void continue_run(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const struct job_record *r, struct poll_result *res)
{
	char *dir = submit_job_dir(r), *path, *text, *nid = NULL, *sid = NULL, *err = NULL, *why;

	if (dir == NULL) {
		note(st, r->id, "SLURM refused the requeue, and the run has no staged job folder to "
		    "continue from: submit the bundle again with resume: true");
		return;
	}
	path = xasprintf("%s/segments-base", dir);
	text = xasprintf("%zu\n", r->nseg);
	why = xasprintf("continued after segment %zu: SLURM refused its requeue", r->nseg);
	if (conn_write_file(c, path, text, strlen(text), 0644, CONN_WRITE_ATOMIC, &err) != CONN_OK ||
	    retry_continue_run(c, st, cl, r->id, why, &nid, &sid, &err) != 0) {
		char *n = xasprintf("SLURM refused the requeue and the run could not go on as a new "
		    "job: %s; submit the bundle again with resume: true", err ? err : "?");
		note(st, r->id, n);
		free(n);
	} else {
		res->waiting_for_accounting = 1;	/* poll again soon */
	}
	free(dir), free(path), free(text), free(nid), free(sid), free(err), free(why);
}

/* After a change was written: the sidecar's end and an automatic retry. */
static void after_change(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const struct job_record *r, const struct slurm_job *j, const struct native_state *ns,
    enum tao_state to, int tao_failed, struct poll_result *res)
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
	if (to == TAO_ERROR && segments_last(r) != NULL &&
	    strcmp(segments_last(r)->outcome, "refused") == 0 && r->retried_as == NULL) {
		continue_run(c, st, cl, r, res);
		return;
	}
	if (to == TAO_ERROR && segments_stopped(r) != NULL) {
		char *n = xasprintf("not retried: %s", segments_stopped(r));
		note(st, r->id, n);
		free(n);
		return;
	}
	if (to == TAO_ERROR && tao_failed) {
		/* TAO caught it and named it (a configuration, parameter or
		 * file system error, an interruption): the program's. */
		retry_note_judged(st, r->id, RECORD_ERR_PROGRAM,
		    "failure: the program's, as TAO's status file says: not retried");
		return;
	}
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
	ev->what = NULL;
	if (ch->to == TAO_PENDING && record_requeued(r))
		ev->what = xasprintf("requeued after segment %d", segments_last(r)->n);
	else if (ch->to == TAO_RUNNING && r->state == TAO_PENDING && record_requeued(r))
		ev->what = xasprintf("resumed: segment %d", segments_last(r)->n + 1);
	if (ch->progress != NULL) {
		record_set_progress(r, ch->progress);
		if (curves_of(ch->progress)->n > 0)
			record_set_curves(r, curves_of(ch->progress));
	}
	keep_alloc(r, ch->job);
	record_transition(r, ch->to, ch->native, ch->message, ch->source, ev->at);
	return 1;
}

/* ---- TAO's final line while SLURM still runs the job ------------------------------ */

struct final_seen {
	enum tao_state	 from;
	enum tao_state	 verdict;	/* TAO_UNKNOWN: taken back */
	const char	*message;
	time_t		 at;
	const char	*event;		/* into the history, or NULL */
	int		 applied;
};

static int apply_final_seen(struct job_record *r, void *arg, char **err)
{
	struct final_seen *fs = arg;

	(void)err;
	if (r->state != fs->from)
		return 0;
	fs->applied = 1;
	r->tao_final = fs->verdict;
	record_set(&r->tao_final_message, fs->message);
	r->tao_final_at = fs->at;
	if (fs->event != NULL)
		record_event(r, fs->event, "taotop", fs->at);
	return 1;
}

/* r's tao_final set (or taken back: verdict TAO_UNKNOWN), on disk and in r. */
static void keep_final_seen(struct record_store *st, struct job_record *r, enum tao_state verdict,
    const char *message, const char *event)
{
	struct final_seen fs = { r->state, verdict, message, time(NULL), event, 0 };
	char *err = NULL;

	if (store_update(st, r->id, apply_final_seen, &fs, &err) != 0 || !fs.applied) {
		if (err != NULL)
			log_msg(LOG_ERROR, "poll: %s", err);
		free(err);
		return;
	}
	apply_final_seen(r, &fs, &err);	/* the same in memory, for its row */
}

/* Whether path is one of TAO's places for r (not only the search's find). */
static int placed_by_rule(const struct job_record *r, const char *path)
{
	size_t n, i;
	char **places = tao_status_places(r->results_dir, r->action, r->image, r->tao_results_dir,
	    &n);
	int hit = 0;

	for (i = 0; i < n; i++) {
		hit = hit || same(places[i], path);
		free(places[i]);
	}
	free(places);
	return hit;
}

/*
 * A job SLURM still runs whose status file has its final line (a shutdown
 * that hangs: a dataloader worker, NCCL's teardown): Ending from the
 * first poll that sees it; after the cluster's ending_grace_seconds it is
 * cancelled so its GPUs are freed, and its record takes TAO's verdict,
 * not "cancelled". Only a file at one of TAO's places is trusted that far:
 * one the search found below the results folder may be another run's, and
 * leaves the job Ending. A line after a FAILURE takes it back (a logged
 * error in a run that goes on). A Cosmos job is never cancelled for it
 * (its end decides: engine/submit/cosmos.h). Returns 1 when r's state
 * changed.
 */
static int final_while_running(struct conn *c, struct record_store *st,
    const struct cluster_cfg *cl, struct job_record *r, const struct slurm_job *j,
    const struct native_state *ns, const struct tao_status *ts, const char *found,
    struct poll_result *res)
{
	enum tao_state to;
	char *message = NULL, *event, *err = NULL;
	struct record_progress *progress;
	struct change ch;
	int changed;

	if (r->state != TAO_RUNNING || ts == NULL)
		return 0;	/* the file not read to its end: nothing known */
	if (r->done_status_path != NULL)
		return 0;	/* the bundle's own status judges its end, not TAO's */
	if (!tao_status_judge(ts, &to, &message)) {
		if (r->tao_final != TAO_UNKNOWN)
			keep_final_seen(st, r, TAO_UNKNOWN, NULL,
			    "TAO's status file goes on after its final line: no longer Ending");
		return 0;
	}
	if (r->tao_final != to || !same(r->tao_final_message, message)) {
		event = r->cosmos != NULL
		    ? xasprintf("%s while SLURM still runs the job: Ending; a Cosmos job is never "
		      "cancelled for it: its roles' exit codes and SLURM's end decide", message)
		    : xasprintf("%s while SLURM still runs the job: Ending; cancelled after %d s "
		      "if it does not end", message, cl->ending_grace_s);
		keep_final_seen(st, r, to, message, event);
		free(event);
		free(message);
		return 0;
	}
	/* Cosmos: SUCCESS counts only with the child's exit 0 and COMPLETED
	 * (the guardrails), so a teardown is waited for, never cut. */
	if (r->cosmos != NULL || strcmp(ns->word, "RUNNING") != 0 ||
	    time(NULL) - r->tao_final_at < cl->ending_grace_s || !placed_by_rule(r, found)) {
		free(message);
		return 0;
	}
	if (tracker_scancel(c, r, &err) != 0) {
		log_msg(LOG_WARN, "poll: %s: cancel after TAO's final line: %s", r->id, err);
		free(err);
		free(message);
		return 0;
	}
	event = xasprintf("%s; still running %d s after it: cancelled by taotop to free its GPUs",
	    message, cl->ending_grace_s);
	progress = progress_of(ts);
	ch = (struct change){ .from = r->state, .to = to, .native = ns->word, .message = event,
	    .progress = progress, .job = j, .source = "taotop" };
	if ((changed = write_change(st, r, &ch, res)) != 0) {
		tracker_make_card(c, st, cl, r, 0);
		after_change(c, st, cl, r, j, ns, to, to == TAO_ERROR, res);
	}
	free_progress(progress);
	free(event);
	free(message);
	return changed;
}

/* ---- accounting's last word on a job taotop ended ------------------------------------ */

struct settle {
	enum tao_state	 state;		/* the record as the poll read it */
	const char	*was;
	const char	*word;		/* SLURM's final word, or NULL: unknown */
	const struct slurm_job *job;	/* what accounting said, or NULL */
	const char	*event;		/* into the history, or NULL */
	int		 applied;
};

static int apply_settle(struct job_record *r, void *arg, char **err)
{
	struct settle *s = arg;

	(void)err;
	if (r->state != s->state || !same(r->native, s->was))
		return 0;
	s->applied = 1;
	if (s->job != NULL)
		keep_alloc(r, s->job);
	record_set(&r->native, s->word);
	if (s->event != NULL)
		record_event(r, s->event, "taotop", time(NULL));
	return 1;
}

/* When r was made final: its last transition. */
static time_t final_since(const struct job_record *r)
{
	return r->nhist > 0 ? r->hist[r->nhist - 1].at : r->updated;
}

/*
 * A cancel marks the record Canceled at once, with the word SLURM said
 * then (RUNNING); the job's end comes later, in accounting: its final
 * state, how long it ran and its exit code are taken from there as for any
 * other job, with no transition of its own (the state the user set and
 * the note stay). A job still in the queue (COMPLETING) is shown as the
 * queue says; one accounting does not know, SETTLE_GIVE_UP_S after, keeps
 * no word rather than RUNNING for good.
 */
int tracker_settle(struct record_store *st, struct job_record *r, const struct slurm_job *j,
    struct poll_result *res)
{
	struct settle s = { r->state, r->native, NULL, NULL, NULL, 0 };
	struct native_state ns;
	char *event = NULL, *err = NULL;
	time_t since = final_since(r);

	if (j != NULL) {
		native_state_map(j->state, &ns);
		if (!ns.final && (!j->from_sacct || time(NULL) - since < SETTLE_GIVE_UP_S)) {
			/* Still in the queue, or accounting lags it (asked again
			 * for SETTLE_GIVE_UP_S at most: accounting that keeps a
			 * job RUNNING, a runaway in slurmdbd, is not asked
			 * about on every poll for good). */
			if (j->from_sacct && time(NULL) - since < SETTLE_SOON_S)
				res->waiting_for_accounting = 1;
			return 0;
		}
		if (!ns.final) {
			event = xasprintf("accounting (sacct) still says %s of SLURM job %s, which "
			    "taotop ended: its final state and time are not known", j->state,
			    r->backend_ref);
			s.event = event;
		} else {
			s.word = ns.word;
		}
		s.job = j;
	} else if (!res->scheduler_ok || !res->accounting_ok) {
		return 0;
	} else if (time(NULL) - since < SETTLE_GIVE_UP_S) {
		if (time(NULL) - since < SETTLE_SOON_S)
			res->waiting_for_accounting = 1;
		return 0;
	} else {
		event = xasprintf("accounting (sacct) has no record of SLURM job %s: its final "
		    "state and time are not known", r->backend_ref);
		s.event = event;
	}
	if (store_update(st, r->id, apply_settle, &s, &err) != 0 || !s.applied) {
		if (err != NULL)
			log_msg(LOG_ERROR, "poll: %s", err);
		free(err);
		free(event);
		return 0;
	}
	s.state = r->state;	/* the same in memory, for its row */
	s.was = r->native;
	apply_settle(r, &s, &err);
	free(event);
	return 1;
}

/* ---- accounting's end before where the job ran ---------------------------------------- */

static void where_forget(struct tracker *t, size_t i)
{
	free(t->ww[i].record_id);
	t->ww[i] = t->ww[--t->nww];
	if (t->nww == 0) {
		free(t->ww);
		t->ww = NULL;
	}
}

int tracker_where_awaited(struct tracker *t, const struct job_record *r,
    const struct slurm_job *j, time_t now)
{
	struct native_state ns;
	const char *have = r->has_alloc ? r->alloc.partition : "";
	size_t i;
	int wait;

	for (i = 0; i < t->nww && strcmp(t->ww[i].record_id, r->id) != 0; i++)
		;
	native_state_map(j->state, &ns);
	/* A job cancelled before it started never had a partition of its own. */
	wait = j->from_sacct && ns.final && (j->partition == NULL || j->partition[0] == '\0') &&
	    (have[0] == '\0' || strchr(have, ',') != NULL) &&
	    !(strcmp(ns.word, "CANCELLED") == 0 && j->elapsed_s <= 0);
	if (wait && i == t->nww) {
		t->ww = xreallocarray(t->ww, t->nww + 1, sizeof(*t->ww));
		t->ww[t->nww++] = (struct where_wait){ xstrdup(r->id), now };
	}
	if (wait && now - t->ww[i].first < WHERE_LAG_S)
		return 1;
	if (i < t->nww)
		where_forget(t, i);
	return 0;
}

struct seg_merge {
	const char	*text;
	size_t		 len;
	int		 epoch;
};

static int merge_segments(struct job_record *r, void *arg, char **err)
{
	const struct seg_merge *m = arg;
	char *told = NULL;
	int changed;

	(void)err;
	changed = segments_merge(r, m->text, m->len, m->epoch, &told);
	if (told != NULL)
		record_event(r, told, "taotop", time(NULL));
	free(told);
	return changed;
}

int tracker_keep_segments(struct record_store *st, struct job_record *r, const char *text,
    size_t len, int epoch)
{
	struct seg_merge m = { text, len, epoch };
	char *err = NULL;

	/* On disk first: r follows only what was written, never ahead of it
	 * (store_update writes nothing when nothing is new). */
	if (store_update(st, r->id, merge_segments, &m, &err) != 0) {
		log_msg(LOG_ERROR, "poll: %s: segments: %s", r->id, err);
		free(err);
		return -1;
	}
	merge_segments(r, &m, &err);
	return 0;
}

static int keep_path(struct job_record *r, void *arg, char **err)
{
	(void)err;
	if (same(r->status_path, arg))
		return 0;
	record_set(&r->status_path, arg);
	return 1;
}

void tracker_keep_status_path(struct record_store *st, struct job_record *r, const char *path)
{
	char *err = NULL;

	if (store_update(st, r->id, keep_path, (void *)path, &err) != 0) {
		log_msg(LOG_ERROR, "poll: %s: %s", r->id, err);
		free(err);
		return;
	}
	record_set(&r->status_path, path);
}

/* Decide and record what a tracked job's state is now. Returns 1 when the
 * record changed. */
int tracker_update_one(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r, const struct slurm_job *j, const struct tao_status *ts,
    const char *found, struct poll_result *res)
{
	struct native_state ns;
	struct change ch;
	char *message;
	struct record_progress *progress;
	enum tao_state to;
	int changed = 0, tao_failed;

	native_state_map(j->state, &ns);
	/* Accounting can lag the queue: a job it still calls live but the
	 * queue no longer lists has just ended. Wait for the final word. */
	if (j->from_sacct && !ns.final && res->scheduler_ok) {
		res->waiting_for_accounting = 1;
		return 0;
	}
	if (ns.state == TAO_RUNNING && !ns.scheduler_owned &&
	    final_while_running(c, st, cl, r, j, &ns, ts, found, res))
		return 1;
	if (decide(c, r, j, &ns, ts, found, res, &to, &message, &progress, &tao_failed) != 0) {
		free(message);
		free_progress(progress);
		return 0;
	}
	if (to != r->state || !same(ns.word, r->native)) {
		ch = (struct change){ .from = r->state, .to = to, .native = ns.word,
		    .message = message, .progress = progress, .job = j, .source = "scheduler" };
		if ((changed = write_change(st, r, &ch, res)) != 0) {
			if (tao_state_final(to))
				tracker_make_card(c, st, cl, r, 0);
			after_change(c, st, cl, r, j, &ns, to, tao_failed, res);
		}
	}
	free(message);
	free_progress(progress);
	return changed;
}

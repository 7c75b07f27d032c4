#include "engine/tracker.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config.h"
#include "engine/duration.h"
#include "engine/jobref.h"
#include "engine/logtail.h"
#include "engine/record.h"
#include "engine/retry.h"
#include "engine/secrets.h"
#include "engine/slurm.h"
#include "engine/taostatus.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/log.h"
#include "util/xmalloc.h"

/* Above SLURM's MessageTimeout (10 s), so a slow controller is not a dead one. */
#define POLL_TIMEOUT_MS		30000
/* status.json can grow long; its last lines are all we need. */
#define STATUS_TAIL		(256u << 10)
#define STATUS_TICK_MAX		(1u << 20)	/* of a status.json read by one poll */

static int same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

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

/* Decide and record what a tracked job's state is now. Returns 1 when the
 * record changed. */
static int update_one(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r, const struct slurm_job *j, struct poll_result *res)
{
	struct native_state ns;
	struct change ch;
	char *message, *err = NULL;
	struct record_progress *progress = NULL;
	enum tao_state to;
	int changed = 0;

	native_state_map(j->state, &ns);
	/* Accounting can lag the queue: a job it still calls live but the
	 * queue no longer lists has just ended. Wait for the final word. */
	if (j->from_sacct && !ns.final && res->scheduler_ok) {
		res->waiting_for_accounting = 1;
		return 0;
	}
	to = native_state_next(&ns, r->state);
	message = message_for(j, &ns);
	if (ns.check_status_json) {
		free(message);
		message = NULL;
		if (judge_completed(c, r, &to, &message, &progress) != 0)
			return 0;
	} else if (to == TAO_ERROR && ns.final && r->state != TAO_ERROR && r->results_dir != NULL) {
		/* A job that failed: when TAO said why in status.json, that
		 * is what the user needs next to SLURM's exit code. */
		enum tao_state said;
		char *why = NULL;
		if (judge_completed(c, r, &said, &why, &progress) == 0 && why != NULL &&
		    strncmp(why, "status.json: FAILURE", 20) == 0) {
			char *both = xasprintf("%s; %s", message ? message : ns.word, why);
			free(message);
			message = both;
		}
		free(why);
	}
	if (to != r->state || !same(ns.word, r->native)) {
		ch.from = r->state;
		ch.applied = 0;
		ch.to = to;
		ch.native = ns.word;
		ch.message = message;
		ch.progress = progress;
		ch.job = j;
		if (store_update(st, r->id, apply_change, &ch, &err) == 0 && ch.applied) {
			struct state_change *ev;
			res->events = xreallocarray(res->events, res->changes + 1, sizeof(*res->events));
			ev = &res->events[res->changes];
			ev->record_id = xstrdup(r->id);
			snprintf(ev->slurm_id, sizeof(ev->slurm_id), "%s", r->backend_ref);
			ev->from = r->state;
			ev->to = to;
			ev->native = xstrdup(ns.word);
			ev->at = time(NULL);
			changed = 1;
			/* The same change in memory, for the row built from r. */
			if (progress != NULL)
				record_set_progress(r, progress);
			keep_alloc(r, j);
			record_transition(r, to, ns.word, message, "scheduler", ev->at);
			/* The backstop of the sidecar's life: a job that ended
			 * without its own cleanup (cancelled pending, killed)
			 * leaves no secret behind; before any retry writes it
			 * again. */
			if (tao_state_final(to)) {
				char *serr = NULL;
				if (secrets_remove_sidecar(c, r, &serr) != 0)
					log_msg(LOG_WARN, "poll: %s: sidecar: %s", r->id, serr);
				free(serr);
			}
			/* A failure that may be the cluster's: classify, and retry
			 * within the budget (engine/retry.h). Once: on the poll that
			 * saw it end. */
			if (to == TAO_ERROR && ns.infra_candidate && r->retried_as == NULL) {
				char *nid = NULL, *rerr = NULL;
				if (retry_after_failure(c, st, cl, r->id, ns.word, j->exit_code, &nid,
				    &rerr) < 0)
					log_msg(LOG_WARN, "poll: %s: retry: %s", r->id, rerr);
				else if (nid != NULL)
					res->waiting_for_accounting = 1;	/* poll again soon */
				free(nid);
				free(rerr);
			}
		} else if (err != NULL) {
			log_msg(LOG_ERROR, "poll: %s", err);
		}
	}
	free(message);
	free_progress(progress);
	free(err);
	return changed;
}

/* ---- rows ----------------------------------------------------------------------------- */

static struct job_row *add_row(struct poll_result *res)
{
	res->rows = xreallocarray(res->rows, res->n + 1, sizeof(*res->rows));
	memset(&res->rows[res->n], 0, sizeof(res->rows[0]));
	res->rows[res->n].elapsed_s = res->rows[res->n].limit_s = -1;
	return &res->rows[res->n++];
}

/* What SLURM said over what the row knew; what this answer leaves out
 * stays: GPUs only when it said them (sacct's id batch does not), and
 * accounting's first word on a job cancelled while pending has no
 * partition or limit yet (22.05 records it as "allocation", no limit). */
static void fill_from_slurm(struct job_row *row, const struct slurm_job *j)
{
	snprintf(row->slurm_id, sizeof(row->slurm_id), "%s", j->id);
	snprintf(row->shown_id, sizeof(row->shown_id), "%s", j->shown_id);
	if (j->partition[0] != '\0' || row->partition == NULL)
		record_set(&row->partition, j->partition);
	if (j->nodes > 0 || row->nodes == 0)
		row->nodes = j->nodes;
	if (j->gpus_known || !row->gpus_known) {
		row->gpus = j->gpus;
		row->gpus_known = j->gpus_known;
	}
	if (j->elapsed_s >= 0 || row->elapsed_s < 0) {
		snprintf(row->elapsed, sizeof(row->elapsed), "%s", j->elapsed);
		row->elapsed_s = j->elapsed_s;
	}
	if (j->limit_s >= 0 || row->limit_s < 0) {
		snprintf(row->limit, sizeof(row->limit), "%s", j->limit);
		row->limit_s = j->limit_s;
	}
	if (j->exit_code[0] != '\0')
		snprintf(row->exit_code, sizeof(row->exit_code), "%s", j->exit_code);
}

/* What the record kept of its allocation. */
static void fill_from_record(struct job_row *row, const struct job_record *r)
{
	const struct record_alloc *al = &r->alloc;

	row->elapsed_s = row->limit_s = -1;
	if (!r->has_alloc)
		return;
	record_set(&row->partition, al->partition[0] ? al->partition : NULL);
	row->nodes = al->nodes;
	row->gpus = al->gpus;
	row->gpus_known = al->gpus > 0;
	row->elapsed_s = al->elapsed_s;
	row->limit_s = al->limit_s;
	duration_format(al->elapsed_s, row->elapsed, sizeof(row->elapsed));
	duration_format(al->limit_s, row->limit, sizeof(row->limit));
	snprintf(row->exit_code, sizeof(row->exit_code), "%s", al->exit_code);
}

static void row_of_record(struct poll_result *res, const struct job_record *r,
    const struct slurm_job *j, const struct tao_status *ts)
{
	struct job_row *row = add_row(res);

	row->epoch = row->max_epoch = -1;
	if (ts != NULL) {
		row->epoch = ts->epoch;
		row->max_epoch = ts->max_epoch;
		snprintf(row->eta, sizeof(row->eta), "%s", ts->eta);
		snprintf(row->metric, sizeof(row->metric), "%s", ts->metric);
		if (ts->nseries > 0) {
			row->series = xcalloc(ts->nseries, sizeof(*row->series));
			memcpy(row->series, ts->series, ts->nseries * sizeof(*row->series));
			row->nseries = ts->nseries;
		}
	}
	if (ts == NULL && r->progress != NULL) {
		/* A finished job: what its record kept. */
		const struct record_progress *p = r->progress;
		row->epoch = p->epoch;
		row->max_epoch = p->max_epoch;
		snprintf(row->eta, sizeof(row->eta), "%s", p->eta);
		snprintf(row->metric, sizeof(row->metric), "%s", p->metric);
		if (p->nseries > 0) {
			row->series = (void *)xmemdup(p->series, p->nseries * sizeof(*row->series));
			row->nseries = p->nseries;
		}
	}
	row->record_id = xstrdup(r->id);
	/* What it is ("classification_pyt train"): the id has its own column. */
	if (r->network_arch != NULL && r->action != NULL)
		row->name = xasprintf("%s %s", r->network_arch, r->action);
	else
		row->name = xstrdup(r->id);
	row->state = r->state;
	row->native = r->native != NULL ? xstrdup(r->native) : NULL;
	row->created = r->created;
	if (r->nhist > 0 && r->hist[r->nhist - 1].message != NULL)
		row->message = xstrdup(r->hist[r->nhist - 1].message);
	if (r->backend_ref != NULL)
		snprintf(row->slurm_id, sizeof(row->slurm_id), "%s", r->backend_ref);
	fill_from_record(row, r);
	if (j != NULL)
		fill_from_slurm(row, j);
}

/* A job of the user's that is not taotop's; prev: its state as last seen
 * (TAO_UNKNOWN: never). */
static void row_of_foreign(struct job_row *row, const struct slurm_job *j, enum tao_state prev)
{
	struct native_state ns;

	native_state_map(j->state, &ns);
	fill_from_slurm(row, j);
	/* The name the queue showed stands: accounting may not have it yet. */
	if (row->name == NULL || !j->from_sacct)
		record_set(&row->name, j->name);
	row->state = native_state_next(&ns, prev);
	record_set(&row->native, ns.word);
	if (j->reason[0] != '\0' && !ns.final)
		record_set(&row->message, j->reason);
	else if (ns.final && j->exit_code[0] != '\0' && strcmp(j->exit_code, "0:0") != 0) {
		free(row->message);
		row->message = xasprintf("exit code %s", j->exit_code);
	}
	else
		record_set(&row->message, NULL);
	row->epoch = row->max_epoch = -1;
}

static void row_clear(struct job_row *r)
{
	free(r->record_id);
	free(r->name);
	free(r->partition);
	free(r->native);
	free(r->message);
	free(r->series);
	memset(r, 0, sizeof(*r));
}

static void row_copy(struct job_row *dst, const struct job_row *src)
{
	*dst = *src;
	dst->record_id = src->record_id ? xstrdup(src->record_id) : NULL;
	dst->name = src->name ? xstrdup(src->name) : NULL;
	dst->partition = src->partition ? xstrdup(src->partition) : NULL;
	dst->native = src->native ? xstrdup(src->native) : NULL;
	dst->message = src->message ? xstrdup(src->message) : NULL;
	dst->series = NULL;
	dst->nseries = 0;
	if (src->nseries > 0) {
		dst->series = xcalloc(src->nseries, sizeof(*dst->series));
		memcpy(dst->series, src->series, src->nseries * sizeof(*dst->series));
		dst->nseries = src->nseries;
	}
}

/* ---- the poll --------------------------------------------------------------------------- */

/* A running job's status.json, followed by offset from poll to poll. */
struct progress {
	char			*record_id;
	struct log_follow	 follow;
	struct tao_status	 ts;
};

/* A job of the user's that taotop did not launch, seen in the queue: kept
 * after it leaves, with its final state from accounting, as history that
 * outlives SLURM's MinJobAge. */
struct seen_job {
	struct job_row	 row;
	int		 ended;	/* accounting gave its final state */
};

#define SEEN_MAX	5000	/* ended jobs beyond this are forgotten, oldest first */

struct tracker {
	const struct cluster_cfg *cl;
	struct seen_job	 *seen;
	size_t		  nseen;
	struct progress	 *prog;
	size_t		  nprog;
	char	**live;		/* ids the queue listed at the last good poll */
	size_t	  nlive;
	int	  primed;	/* a poll has succeeded: live means something */
	time_t	  last_ok;
	/* The history window (tracker_set_history). */
	long	  hist_window, hist_every;
	unsigned  hist_max;
	time_t	  hist_next;	/* when to ask next; 0: at the next poll */
	int	  hist_asked;	/* in the last poll */
};

struct tracker *tracker_new(const struct cluster_cfg *cl)
{
	struct tracker *t = xcalloc(1, sizeof(*t));
	t->cl = cl;
	return t;
}

void tracker_set_history(struct tracker *t, long window_s, long every_s, unsigned max)
{
	t->hist_window = window_s > 0 ? window_s : 0;
	t->hist_every = every_s > 0 ? every_s : 300;
	t->hist_max = max;
	t->hist_next = 0;
}

static void forget_live(struct tracker *t)
{
	size_t i;

	for (i = 0; i < t->nlive; i++)
		free(t->live[i]);
	free(t->live);
	t->live = NULL;
	t->nlive = 0;
}

static void progress_free(struct progress *p)
{
	free(p->record_id);
	log_follow_free(&p->follow);
	tao_status_free(&p->ts);
}

void tracker_free(struct tracker *t)
{
	size_t i;

	if (t == NULL)
		return;
	forget_live(t);
	for (i = 0; i < t->nprog; i++)
		progress_free(&t->prog[i]);
	free(t->prog);
	for (i = 0; i < t->nseen; i++)
		row_clear(&t->seen[i].row);
	free(t->seen);
	free(t);
}

/* A running job's status.json follower, made the first time. */
static size_t progress_index(struct tracker *t, const struct job_record *r)
{
	struct progress *p;
	char *path;
	size_t i;

	for (i = 0; i < t->nprog; i++)
		if (strcmp(t->prog[i].record_id, r->id) == 0)
			return i;
	path = xasprintf("%s/status.json", r->results_dir);
	t->prog = xreallocarray(t->prog, t->nprog + 1, sizeof(*t->prog));
	p = &t->prog[t->nprog];
	p->record_id = xstrdup(r->id);
	log_follow_init(&p->follow, path, 0);
	tao_status_init(&p->ts);
	free(path);
	return t->nprog++;
}

/* What TAO reported so far for a job whose status.json is followed. */
static const struct tao_status *reported(struct tracker *t, const struct job_record *r)
{
	size_t i;

	for (i = 0; i < t->nprog; i++)
		if (strcmp(t->prog[i].record_id, r->id) == 0)
			return &t->prog[i].ts;
	return NULL;
}

/*
 * The running jobs' status.json, read by the poll's own command from where
 * the last poll stopped: one round trip for the queue, accounting and
 * every job's progress. A file that shrank (a requeued run starting over)
 * is read again from its start; one not there yet says nothing.
 */
static void status_sections(struct buf *cmd, const struct tracker *t, const size_t *which,
    size_t n, const char *nonce)
{
	size_t k;

	for (k = 0; k < n; k++) {
		const struct log_follow *f = &t->prog[which[k]].follow;
		buf_adds(cmd, "; f=");
		sh_quote_buf(cmd, f->path, strlen(f->path));
		buf_addf(cmd, "; if s=$(wc -c < \"$f\" 2>/dev/null); then o=%llu; "
		    "[ \"$s\" -lt \"$o\" ] && o=0; printf '\\n@@%s:json %zu %%s\\n' \"$o\"; "
		    "tail -c +$((o + 1)) \"$f\" | head -c %u; printf '\\n@@%s:jend %zu\\n'; fi",
		    (unsigned long long)f->offset, nonce, k, STATUS_TICK_MAX, nonce, k);
	}
}

/* needle in the len bytes at hay, or NULL. */
static const char *find_bytes(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= len; i++)
		if (hay[i] == needle[0] && memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

/* Feed what the command read of each status.json to its follower. */
static void status_take(struct tracker *t, const size_t *which, size_t n, const char *out,
    size_t len, const char *nonce)
{
	size_t k;

	for (k = 0; k < n; k++) {
		struct progress *p = &t->prog[which[k]];
		char *head = xasprintf("\n@@%s:json %zu ", nonce, k), *end;
		const char *at = find_bytes(out, len, head), *body, *stop = NULL;
		unsigned long long from;

		end = xasprintf("\n@@%s:jend %zu\n", nonce, k);
		if (at != NULL && sscanf(at + strlen(head), "%llu", &from) == 1 &&
		    (body = memchr(at + 1, '\n', len - (size_t)(at + 1 - out))) != NULL)
			stop = find_bytes(body + 1, len - (size_t)(body + 1 - out), end);
		if (stop != NULL) {
			struct buf lines;
			buf_init(&lines);
			p->follow.restarted = 0;
			log_follow_feed(&p->follow, from, body + 1, (size_t)(stop - (body + 1)), &lines);
			if (p->follow.restarted)
				tao_status_free(&p->ts);	/* a requeued run starts over */
			tao_status_feed(&p->ts, lines.data ? lines.data : "", lines.len);
			buf_free(&lines);
		}
		free(head);
		free(end);
	}
}

/* Forget the progress of jobs no longer running. */
static void prune_progress(struct tracker *t, struct job_record **recs, size_t nrec)
{
	size_t i = 0, k;

	while (i < t->nprog) {
		int running = 0;
		for (k = 0; k < nrec && !running; k++)
			running = strcmp(recs[k]->id, t->prog[i].record_id) == 0 &&
			    recs[k]->state == TAO_RUNNING;
		if (running) {
			i++;
			continue;
		}
		progress_free(&t->prog[i]);
		t->prog[i] = t->prog[--t->nprog];
	}
}

static int was_live(const struct tracker *t, const char *id)
{
	size_t i;

	for (i = 0; i < t->nlive; i++)
		if (strcmp(t->live[i], id) == 0)
			return 1;
	return 0;
}

static int cmp_ref(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The SLURM ids records know, sorted once per poll: asked for every job of
 * the queue and of the history, against possibly thousands of records. */
static const char **ref_index(struct job_record **recs, size_t nrec, size_t *n)
{
	const char **v = xcalloc(nrec + 1, sizeof(*v));
	size_t i;

	*n = 0;
	for (i = 0; i < nrec; i++)
		if (recs[i]->backend_ref != NULL)
			v[(*n)++] = recs[i]->backend_ref;
	qsort(v, *n, sizeof(*v), cmp_ref);
	return v;
}

static int known_to_records(const char **refs, size_t nrefs, const char *id)
{
	return nrefs > 0 && bsearch(&id, refs, nrefs, sizeof(*refs), cmp_ref) != NULL;
}

/* id in the queue's answer (from_sacct 0) or accounting's (1). */
static const struct slurm_job *find_job(const struct slurm_poll *p, const char *id, int from_sacct)
{
	size_t k;

	for (k = 0; k < p->n; k++)
		if (p->jobs[k].from_sacct == from_sacct && strcmp(p->jobs[k].id, id) == 0)
			return &p->jobs[k];
	return NULL;
}

static struct seen_job *seen_note(struct tracker *t, const struct job_row *row);

/* The job of the user's other jobs seen as id, or NULL. */
static struct seen_job *seen_find(struct tracker *t, const char *id)
{
	size_t i;

	for (i = 0; i < t->nseen; i++)
		if (strcmp(t->seen[i].row.slurm_id, id) == 0)
			return &t->seen[i];
	return NULL;
}

/* Accounting's finished jobs of the history window the user's other jobs
 * do not hold yet (or hold as not ended): kept as ended, like the ones
 * seen leaving the queue. Live ones come from the queue, taotop's own
 * from their records. */
static void seen_from_history(struct tracker *t, const struct slurm_poll *p, const char **refs,
    size_t nrefs)
{
	size_t k;

	for (k = 0; k < p->n; k++) {
		const struct slurm_job *j = &p->jobs[k];
		struct native_state ns;
		struct seen_job *sj;
		struct job_row row;

		if (!j->from_history || known_to_records(refs, nrefs, j->id) ||
		    find_job(p, j->id, 0) != NULL)
			continue;
		native_state_map(j->state, &ns);
		if (!ns.final)
			continue;	/* live, or accounting lags: the queue says */
		sj = seen_find(t, j->id);
		if (sj != NULL && sj->ended)
			continue;
		memset(&row, 0, sizeof(row));
		row.elapsed_s = row.limit_s = -1;
		if (sj != NULL)
			row_copy(&row, &sj->row);	/* keeps the GPUs the queue said */
		row_of_foreign(&row, j, row.state);
		seen_note(t, &row)->ended = 1;
		row_clear(&row);
	}
}

/* Remember (or refresh) a job of the user's other jobs. */
static struct seen_job *seen_note(struct tracker *t, const struct job_row *row)
{
	size_t i;

	for (i = 0; i < t->nseen; i++) {
		if (strcmp(t->seen[i].row.slurm_id, row->slurm_id) == 0) {
			row_clear(&t->seen[i].row);
			row_copy(&t->seen[i].row, row);
			return &t->seen[i];
		}
	}
	t->seen = xreallocarray(t->seen, t->nseen + 1, sizeof(*t->seen));
	t->seen[t->nseen].ended = 0;
	row_copy(&t->seen[t->nseen].row, row);
	return &t->seen[t->nseen++];
}

/* Forget the oldest ended jobs beyond SEEN_MAX. */
static void seen_prune(struct tracker *t)
{
	size_t i, out = 0, excess = t->nseen > SEEN_MAX ? t->nseen - SEEN_MAX : 0;

	for (i = 0; i < t->nseen; i++) {
		if (excess > 0 && t->seen[i].ended) {
			row_clear(&t->seen[i].row);
			excess--;
			continue;
		}
		t->seen[out++] = t->seen[i];
	}
	t->nseen = out;
}

int tracker_poll(struct tracker *t, struct conn *c, struct record_store *st,
    struct poll_result *res, char **err)
{
	const struct cluster_cfg *cl = t->cl;
	struct job_record **recs = NULL;
	struct slurm_poll p;
	struct conn_exec x;
	const char **ids;
	char *cmd, *warn = NULL, nonce[SLURM_NONCE_LEN + 1];
	size_t nrec = 0, nids = 0, i, k, nrefs, *which, nwhich = 0;
	const char **refs;
	enum conn_status cst;
	struct slurm_history hist;
	struct buf full;

	memset(res, 0, sizeof(*res));
	store_list(st, &recs, &nrec, &warn);
	if (warn != NULL)
		log_msg(LOG_WARN, "poll: %s", warn);
	free(warn);
	/* Accounting is asked only about tracked jobs the queue did not list
	 * last time: the ones that may have ended. */
	ids = xcalloc(nrec + t->nseen + 1, sizeof(*ids));
	for (i = 0; i < nrec; i++)
		if (same(recs[i]->cluster, cl->name) && recs[i]->backend_ref != NULL &&
		    !tao_state_final(recs[i]->state) &&
		    (!t->primed || !was_live(t, recs[i]->backend_ref)))
			ids[nids++] = recs[i]->backend_ref;
	for (i = 0; i < t->nseen; i++)
		if (!t->seen[i].ended && !was_live(t, t->seen[i].row.slurm_id))
			ids[nids++] = t->seen[i].row.slurm_id;

	slurm_nonce(nonce);
	/* The history window rides along in this poll's command when due:
	 * never a command, or a round trip, of its own. */
	t->hist_asked = t->hist_window > 0 && time(NULL) >= t->hist_next;
	hist.since_s = t->hist_window;
	hist.max = t->hist_max;
	cmd = slurm_poll_command(ids, nids, t->hist_asked ? &hist : NULL, nonce);
	/* The running jobs' progress, read by the same command. */
	which = xcalloc(nrec + 1, sizeof(*which));
	for (i = 0; i < nrec; i++)
		if (same(recs[i]->cluster, cl->name) && recs[i]->state == TAO_RUNNING &&
		    recs[i]->results_dir != NULL)
			which[nwhich++] = progress_index(t, recs[i]);
	buf_init(&full);
	buf_adds(&full, cmd);
	status_sections(&full, t, which, nwhich, nonce);
	free(cmd);
	conn_exec_init(&x, full.data);
	x.timeout_ms = POLL_TIMEOUT_MS;
	cst = conn_exec(c, &x, err);
	buf_free(&full);
	free(ids);
	if (cst != CONN_OK) {
		conn_exec_free(&x);
		store_list_free(recs, nrec);
		free(which);
		return -1;
	}
	{
		/* The scheduler's part ends where the first status.json starts. */
		char *mark = xasprintf("\n@@%s:json ", nonce);
		const char *at = x.out.data ? find_bytes(x.out.data, x.out.len, mark) : NULL;
		if (at != NULL) {
			status_take(t, which, nwhich, at, x.out.len - (size_t)(at - x.out.data), nonce);
			x.out.data[at - x.out.data] = '\0';
		}
		free(mark);
	}
	free(which);
	slurm_poll_parse(x.out.data, x.err.data, nonce, &p);
	conn_exec_free(&x);
	res->at = time(NULL);
	res->scheduler_ok = p.squeue_rc == 0;
	res->accounting_ok = nids == 0 || p.sacct_rc == 0;
	if (!res->scheduler_ok)
		res->problem = xasprintf("the scheduler does not answer%s%s: last known states kept",
		    p.squeue_err ? ": " : "", p.squeue_err ? p.squeue_err : "");
	else if (!res->accounting_ok)
		res->problem = xstrdup("accounting (sacct) does not answer: finished jobs wait "
		    "for it");
	if (p.skipped > 0)
		log_msg(LOG_WARN, "poll: %s: %zu lines of scheduler output did not parse",
		    cl->name, p.skipped);
	if (t->hist_asked) {
		/* Asked again after every_s; after a failure, within a minute. */
		long again = p.history_rc == 0 || t->hist_every < 60 ? t->hist_every : 60;
		t->hist_next = res->at + again;
		if (p.history_rc != 0)
			log_msg(LOG_WARN, "poll: %s: accounting's history did not answer (rc %d)",
			    cl->name, p.history_rc);
	}
	if (res->scheduler_ok) {
		forget_live(t);
		for (k = 0; k < p.n; k++) {
			if (p.jobs[k].from_sacct)
				continue;
			t->live = xreallocarray(t->live, t->nlive + 1, sizeof(*t->live));
			t->live[t->nlive++] = xstrdup(p.jobs[k].id);
		}
		t->primed = 1;
		t->last_ok = res->at;
	}
	res->last_ok = t->last_ok;

	for (i = 0; i < nrec; i++) {
		struct job_record *r = recs[i];
		const struct slurm_job *j;

		if (!same(r->cluster, cl->name))
			continue;
		j = r->backend_ref != NULL ? slurm_poll_find(&p, r->backend_ref) : NULL;
		if (!tao_state_final(r->state) && r->backend_ref != NULL) {
			if (j == NULL) {
				/* Left the queue, not yet in accounting (it
				 * lags a few seconds after submit and end). */
				if (res->scheduler_ok)
					res->waiting_for_accounting = 1;
			} else if ((j->from_sacct ? res->accounting_ok : res->scheduler_ok) &&
			    update_one(c, st, cl, r, j, res)) {
				res->changes++;	/* update_one added its event */
			}
		}
		row_of_record(res, r, j, r->state == TAO_RUNNING && r->results_dir != NULL
		    ? reported(t, r) : NULL);
	}
	prune_progress(t, recs, nrec);
	/* The user's other jobs: live ones the records do not know, then the
	 * ones seen earlier that left the queue. */
	refs = ref_index(recs, nrec, &nrefs);
	for (k = 0; k < p.n; k++) {
		struct job_row *row;
		struct seen_job *was;
		if (p.jobs[k].from_sacct || known_to_records(refs, nrefs, p.jobs[k].id))
			continue;
		was = seen_find(t, p.jobs[k].id);
		row = add_row(res);
		row_of_foreign(row, &p.jobs[k], was != NULL ? was->row.state : TAO_UNKNOWN);
		seen_note(t, row);
	}
	if (t->hist_asked && p.history_rc == 0 && res->scheduler_ok)
		seen_from_history(t, &p, refs, nrefs);
	for (i = 0; i < t->nseen; i++) {
		struct seen_job *sj = &t->seen[i];
		if (known_to_records(refs, nrefs, sj->row.slurm_id))
			continue;
		if (res->scheduler_ok && find_job(&p, sj->row.slurm_id, 0) != NULL)
			continue;	/* live: shown above */
		if (!sj->ended && res->scheduler_ok) {
			const struct slurm_job *j = find_job(&p, sj->row.slurm_id, 1);
			if (j != NULL && res->accounting_ok) {
				struct native_state ns;
				row_of_foreign(&sj->row, j, sj->row.state);
				native_state_map(j->state, &ns);
				sj->ended = ns.final;
			} else {
				res->waiting_for_accounting = 1;
			}
		}
		row_copy(add_row(res), &sj->row);
	}
	seen_prune(t);
	free(refs);
	slurm_poll_free(&p);
	store_list_free(recs, nrec);
	return 0;
}

void poll_result_free(struct poll_result *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		row_clear(&p->rows[i]);
	free(p->rows);
	for (i = 0; i < p->changes; i++) {
		free(p->events[i].record_id);
		free(p->events[i].native);
	}
	free(p->events);
	free(p->problem);
	memset(p, 0, sizeof(*p));
}

/* ---- cancel ------------------------------------------------------------------------------ */

static int mark_canceled(struct job_record *r, void *arg, char **err)
{
	(void)arg, (void)err;
	if (tao_state_final(r->state))
		return 0;
	return record_transition(r, TAO_CANCELED, r->native, "cancelled by the user", "user",
	    time(NULL));
}

int tracker_cancel(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *job, char **msg, char **err)
{
	struct job_ref ref;
	struct job_record *r;
	struct conn_exec x;
	char *cmd, *id;
	int rc = -1, was_live;

	*msg = NULL;
	if (job_ref_resolve(st, job, &ref, err) != 0)
		return -1;
	if (ref.rec != NULL && ref.rec->cluster != NULL && strcmp(ref.rec->cluster, cl->name) != 0) {
		/* Its SLURM id means another job here. */
		*err = xasprintf("a job of cluster '%s', not of '%s': cancel it there",
		    ref.rec->cluster, cl->name);
		job_ref_free(&ref);
		return -1;
	}
	if (ref.slurm_id == NULL) {
		/* Opened but never launched: nothing to tell SLURM. */
		rc = store_update(st, ref.rec->id, mark_canceled, NULL, err);
		if (rc == 0)
			*msg = xstrdup("never launched; marked Canceled");
		job_ref_free(&ref);
		return rc;
	}
	/* A SLURM id of a job taotop launched cancels its record too. */
	job_ref_adopt(st, cl->name, &ref);
	id = xstrdup(ref.slurm_id);
	r = ref.rec;
	ref.rec = NULL;
	job_ref_free(&ref);

	/*
	 * scancel of a job that already ended exits 0 without a word on SLURM
	 * 22.05 (within MinJobAge), so ask the queue first, in the same
	 * command: a job it no longer lists had ended, and keeps its state.
	 */
	{
		/* A pending job never ran its cleanup: its secrets go with a
		 * cancel that worked, in the same command (one round trip). */
		char *q = sh_quote(id), *side = r != NULL ? secrets_sidecar_of(r) : NULL;
		char *qs = side != NULL ? sh_quote(side) : NULL;
		cmd = xasprintf("squeue -h -j %s -o %%T 2>/dev/null; scancel %s%s%s%s", q, q,
		    qs ? " && { rm -f -- " : "", qs ? qs : "", qs ? "; true; }" : "");
		free(q), free(side), free(qs);
	}
	conn_exec_init(&x, cmd);
	x.timeout_ms = POLL_TIMEOUT_MS;
	if (conn_exec(c, &x, err) != CONN_OK)
		goto out;
	was_live = x.out.len > 0 && x.out.data[0] != '\n';
	if (x.exit_status == 0 && was_live) {
		*msg = xstrdup("cancelled");
		rc = 0;
	} else if (x.exit_status == 0 || strstr(x.err.data ? x.err.data : "", "already completing or completed") ||
	    strstr(x.err.data ? x.err.data : "", "Invalid job id")) {
		/* The seed's rule: an ended job is a successful cancel. */
		*msg = xstrdup("had already ended");
		rc = 0;
		goto out;
	} else {
		const char *e = x.err.data ? x.err.data : "";
		*err = xasprintf("scancel refused: %.*s", (int)strcspn(e, "\n"), e);
		goto out;
	}
	if (r != NULL && store_update(st, r->id, mark_canceled, NULL, err) != 0)
		rc = -1;
out:
	conn_exec_free(&x);
	record_free(r);
	free(cmd);
	free(id);
	return rc;
}

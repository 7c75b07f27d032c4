#include "engine/track/tracker.h"

#include <cJSON.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/config/config.h"
#include "engine/slurm/duration.h"
#include "engine/store/jobref.h"
#include "engine/logs/logtail.h"
#include "engine/store/recindex.h"
#include "engine/store/store.h"
#include "engine/track/retry.h"
#include "engine/submit/secrets.h"
#include "engine/slurm/slurm.h"
#include "engine/track/taostatus.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/log.h"
#include "util/strmap.h"
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

/* src into a row's field, cut to fit (snprintf's "%s" without its cost:
 * a poll fills half a dozen of these for each of a thousand rows). */
static void set_text(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
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
	 * the budget (engine/retry.h). Once: on the poll that saw it end. */
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
static int update_one(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
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

/* ---- rows ----------------------------------------------------------------------------- */

static struct job_row *add_row(struct poll_result *res)
{
	/* Doubling: ten thousand rows grown one at a time is ten thousand
	 * reallocations of megabytes. */
	if (res->n == res->rows_cap) {
		res->rows_cap = res->rows_cap ? res->rows_cap * 2 : 64;
		res->rows = xreallocarray(res->rows, res->rows_cap, sizeof(*res->rows));
	}
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
	set_text(row->slurm_id, sizeof(row->slurm_id), j->id);
	set_text(row->shown_id, sizeof(row->shown_id), j->shown_id);
	if (j->partition[0] != '\0' || row->partition == NULL)
		record_set(&row->partition, j->partition);
	if (j->nodes > 0 || row->nodes == 0)
		row->nodes = j->nodes;
	if (j->gpus_known || !row->gpus_known) {
		row->gpus = j->gpus;
		row->gpus_known = j->gpus_known;
	}
	if (j->elapsed_s >= 0 || row->elapsed_s < 0) {
		set_text(row->elapsed, sizeof(row->elapsed), j->elapsed);
		row->elapsed_s = j->elapsed_s;
	}
	if (j->limit_s >= 0 || row->limit_s < 0) {
		set_text(row->limit, sizeof(row->limit), j->limit);
		row->limit_s = j->limit_s;
	}
	if (j->exit_code[0] != '\0')
		set_text(row->exit_code, sizeof(row->exit_code), j->exit_code);
}

/* What the record kept of its allocation (NULL: nothing). */
static void fill_from_alloc(struct job_row *row, const struct record_alloc *al)
{
	row->elapsed_s = row->limit_s = -1;
	if (al == NULL)
		return;
	record_set(&row->partition, al->partition[0] ? al->partition : NULL);
	row->nodes = al->nodes;
	row->gpus = al->gpus;
	row->gpus_known = al->gpus > 0;
	row->elapsed_s = al->elapsed_s;
	row->limit_s = al->limit_s;
	duration_format(al->elapsed_s, row->elapsed, sizeof(row->elapsed));
	duration_format(al->limit_s, row->limit, sizeof(row->limit));
	set_text(row->exit_code, sizeof(row->exit_code), al->exit_code);
}

/* TAO's progress in a row (status.json's so far, or what a finished
 * job's record kept: the same fields in two structs). */
static void row_progress(struct job_row *row, int epoch, int max_epoch, const char *eta,
    const char *metric, const double *series, size_t n)
{
	row->epoch = epoch;
	row->max_epoch = max_epoch;
	snprintf(row->eta, sizeof(row->eta), "%s", eta);
	snprintf(row->metric, sizeof(row->metric), "%s", metric);
	if (n > 0) {
		row->series = (void *)xmemdup(series, n * sizeof(*row->series));
		row->nseries = n;
	}
}

/* A record's row as the index (or its parsed file: rec_meta_of) has it;
 * row is overwritten. */
static void row_of_meta(struct job_row *row, const struct rec_meta *m)
{
	const struct record_progress *p = m->progress;

	memset(row, 0, sizeof(*row));
	row->epoch = row->max_epoch = -1;
	if (p != NULL)
		row_progress(row, p->epoch, p->max_epoch, p->eta, p->metric, p->series, p->nseries);
	row->record_id = xstrdup(m->id);
	/* What it is ("classification_pyt train"): the id has its own column. */
	if (m->network_arch != NULL && m->action != NULL)
		row->name = xasprintf("%s %s", m->network_arch, m->action);
	else
		row->name = xstrdup(m->id);
	row->state = m->state;
	row->native = m->native != NULL ? xstrdup(m->native) : NULL;
	row->created = m->created;
	if (m->message != NULL)
		row->message = xstrdup(m->message);
	if (m->backend_ref != NULL)
		set_text(row->slurm_id, sizeof(row->slurm_id), m->backend_ref);
	fill_from_alloc(row, m->alloc);
}

/* A parsed record's row, with TAO's progress so far (ts, or NULL) and
 * what SLURM says of it now (j, or NULL); row is overwritten. */
static void row_fill(struct job_row *row, const struct job_record *r,
    const struct slurm_job *j, const struct tao_status *ts)
{
	struct rec_meta m;

	rec_meta_of(r, &m);
	if (ts != NULL)
		m.progress = NULL;	/* a running job: what status.json says */
	row_of_meta(row, &m);
	if (ts != NULL)
		row_progress(row, ts->epoch, ts->max_epoch, ts->eta, ts->metric, ts->series,
		    ts->nseries);
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
	if (r->shared) {
		memset(r, 0, sizeof(*r));	/* its page's */
		return;
	}
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
	dst->shared = 0;
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

/* *dst, a string a row owns, set to src: kept when it says the same. */
static void keep_or_set(char **dst, const char *src)
{
	if (!same(*dst, src))
		record_set(dst, src);
}

/* dst (an owned row) made what src is, its strings and series kept where
 * they are the same: the user's other jobs are noted again at every poll,
 * and most of them say what they said (a queue of held jobs). */
static void row_assign(struct job_row *dst, const struct job_row *src)
{
	struct job_row was = *dst;

	if (src->shared || dst->shared) {
		row_clear(dst);
		row_copy(dst, src);
		return;
	}
	*dst = *src;
	dst->record_id = was.record_id;
	dst->name = was.name;
	dst->partition = was.partition;
	dst->native = was.native;
	dst->message = was.message;
	keep_or_set(&dst->record_id, src->record_id);
	keep_or_set(&dst->name, src->name);
	keep_or_set(&dst->partition, src->partition);
	keep_or_set(&dst->native, src->native);
	keep_or_set(&dst->message, src->message);
	dst->series = was.series;
	dst->nseries = was.nseries;
	if (src->nseries != was.nseries || (src->nseries > 0 &&
	    memcmp(src->series, was.series, src->nseries * sizeof(*src->series)) != 0)) {
		free(dst->series);
		dst->series = src->nseries > 0 ? (void *)xmemdup(src->series,
		    src->nseries * sizeof(*src->series)) : NULL;
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

/* A live record as the tracker keeps it between polls, parsed whole (the
 * poll decides from it), read again only when the index says its file
 * changed (gen). */
struct cached {
	char		*id;
	unsigned long	 gen;
	struct job_record *r;
	unsigned long	 mark;		/* the selection that last held it */
};

/*
 * The finished records' rows, from the index (never their files), made
 * again only when one of them changed, came or went (their ids and gens
 * tell): an unchanged page is neither rebuilt nor copied, each poll's
 * result borrows it (job_row.shared) and holds a reference. With a year of
 * records that is 10 000 rows a poll did not copy, and their 50 000
 * strings not allocated and freed again, at every tick.
 */
struct row_page {
	atomic_int	 refs;
	struct job_row	*rows;		/* strings owned here */
	unsigned long	*gens;		/* each row's record's, as the index had it */
	size_t		 n;
};

/* What the index says of a record, taken when it changed. */
struct pick {
	char		*id;
	time_t		 created;
	unsigned long	 gen;
	int		 final;
	struct cached	*c;		/* a live one's, this poll's */
	size_t		 at;		/* a finished one's row in the page; SIZE_MAX: none */
};

struct tracker {
	const struct cluster_cfg *cl;
	struct seen_job	 *seen;
	size_t		  nseen;
	struct strmap	 *seen_ix;	/* SLURM id -> index in seen, plus one */
	struct progress	**prog;
	size_t		  nprog;
	struct strmap	 *prog_ix;	/* record id -> progress */
	struct strmap	 *live;		/* ids the queue listed at the last good poll */
	int	  primed;	/* a poll has succeeded: live means something */
	time_t	  last_ok;
	/* The history window (tracker_set_history). */
	long	  hist_window, hist_every;
	unsigned  hist_max;
	time_t	  hist_next;	/* when to ask next; 0: at the next poll */
	int	  hist_asked;	/* in the last poll */
	/* The records: the ones shown (sel, oldest first), taken again from
	 * the index when its version moves; their cache by id. */
	size_t		  page;		/* finished records shown, newest; 0: all */
	size_t		  left;		/* finished ones older than the page */
	unsigned long	  ix_version, marks;
	int		  selected;
	struct pick	 *sel;
	size_t		  nsel;
	struct cached	**cache;
	size_t		  ncache;
	struct strmap	 *cache_ix;	/* id -> cached */
	struct row_page	 *pg;		/* the finished ones' rows (a reference) */
	struct job_row	 *spare;	/* the next poll's rows array (tracker_reuse_rows) */
	size_t		  spare_cap;
};

struct tracker *tracker_new(const struct cluster_cfg *cl)
{
	struct tracker *t = xcalloc(1, sizeof(*t));
	t->cl = cl;
	t->seen_ix = strmap_new();
	t->prog_ix = strmap_new();
	t->live = strmap_new();
	t->cache_ix = strmap_new();
	return t;
}

void tracker_set_history(struct tracker *t, long window_s, long every_s, unsigned max)
{
	t->hist_window = window_s > 0 ? window_s : 0;
	t->hist_every = every_s > 0 ? every_s : 300;
	t->hist_max = max;
	t->hist_next = 0;
}

void tracker_set_page(struct tracker *t, size_t max_finished)
{
	if (t->page != max_finished)
		t->selected = 0;	/* taken again from the index */
	t->page = max_finished;
}

static void progress_free(struct progress *p)
{
	free(p->record_id);
	log_follow_free(&p->follow);
	tao_status_free(&p->ts);
	free(p);
}

static void cached_free(struct cached *c)
{
	free(c->id);
	record_free(c->r);
	free(c);
}

static struct row_page *page_ref(struct row_page *pg)
{
	if (pg != NULL)
		atomic_fetch_add(&pg->refs, 1);
	return pg;
}

/* Drop a reference: the last one frees the page. */
static void page_unref(struct row_page *pg)
{
	size_t i;

	if (pg == NULL || atomic_fetch_sub(&pg->refs, 1) != 1)
		return;
	for (i = 0; i < pg->n; i++)
		row_clear(&pg->rows[i]);
	free(pg->rows);
	free(pg->gens);
	free(pg);
}

static void sel_free(struct tracker *t)
{
	size_t i;

	for (i = 0; i < t->nsel; i++)
		free(t->sel[i].id);
	free(t->sel);
	t->sel = NULL;
	t->nsel = 0;
}

void tracker_free(struct tracker *t)
{
	size_t i;

	if (t == NULL)
		return;
	strmap_free(t->live);
	for (i = 0; i < t->nprog; i++)
		progress_free(t->prog[i]);
	free(t->prog);
	strmap_free(t->prog_ix);
	for (i = 0; i < t->nseen; i++)
		row_clear(&t->seen[i].row);
	free(t->seen);
	strmap_free(t->seen_ix);
	sel_free(t);
	for (i = 0; i < t->ncache; i++)
		cached_free(t->cache[i]);
	free(t->cache);
	strmap_free(t->cache_ix);
	page_unref(t->pg);
	free(t->spare);
	free(t);
}

/* A running job's status.json follower, made the first time. */
static struct progress *progress_of_job(struct tracker *t, const struct job_record *r)
{
	struct progress *p = strmap_get(t->prog_ix, r->id);
	char *path;

	if (p != NULL)
		return p;
	path = xasprintf("%s/status.json", r->results_dir);
	p = xcalloc(1, sizeof(*p));
	p->record_id = xstrdup(r->id);
	log_follow_init(&p->follow, path, 0);
	tao_status_init(&p->ts);
	free(path);
	t->prog = xreallocarray(t->prog, t->nprog + 1, sizeof(*t->prog));
	t->prog[t->nprog++] = p;
	strmap_put(t->prog_ix, r->id, p);
	return p;
}

/* What TAO reported so far for a job whose status.json is followed. */
static const struct tao_status *reported(struct tracker *t, const struct job_record *r)
{
	const struct progress *p = strmap_get(t->prog_ix, r->id);

	return p != NULL ? &p->ts : NULL;
}

/*
 * The running jobs' status.json, read by the poll's own command from where
 * the last poll stopped: one round trip for the queue, accounting and
 * every job's progress. A file that shrank (a requeued run starting over)
 * is read again from its start; one not there yet says nothing.
 */
static void status_sections(struct buf *cmd, struct progress *const *which, size_t n,
    const char *nonce)
{
	size_t k;

	for (k = 0; k < n; k++) {
		const struct log_follow *f = &which[k]->follow;
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
static void status_take(struct progress *const *which, size_t n, const char *out, size_t len,
    const char *nonce)
{
	size_t k;

	for (k = 0; k < n; k++) {
		struct progress *p = which[k];
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
static void prune_progress(struct tracker *t)
{
	size_t i = 0;

	while (i < t->nprog) {
		const struct cached *c = strmap_get(t->cache_ix, t->prog[i]->record_id);
		if (c != NULL && c->r != NULL && c->r->state == TAO_RUNNING) {
			i++;
			continue;
		}
		strmap_del(t->prog_ix, t->prog[i]->record_id);
		progress_free(t->prog[i]);
		t->prog[i] = t->prog[--t->nprog];
	}
}

static int was_live(const struct tracker *t, const char *id)
{
	return strmap_get(t->live, id) != NULL;
}

/* ---- the records shown ------------------------------------------------------------------- */

struct gather {
	struct pick	*v;
	size_t		 n, cap;
};

static void gather_one(const struct rec_meta *m, void *arg)
{
	struct gather *g = arg;
	struct pick *p;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		g->v = xreallocarray(g->v, g->cap, sizeof(*g->v));
	}
	p = &g->v[g->n++];
	p->id = xstrdup(m->id);
	p->created = m->created;
	p->gen = m->gen;
	p->final = tao_state_final(m->state);
	p->c = NULL;
	p->at = SIZE_MAX;
}

static int by_created(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->id, y->id);
}

static void swap_picks(struct pick *a, struct pick *b)
{
	struct pick t = *a;

	*a = *b;
	*b = t;
}

/* The k newest of v[0..n) put first, in no order: Hoare's selection,
 * linear on average, where sorting 100 000 picks to keep 10 000 was a
 * fifth of the monitor's start. No two picks are equal (their ids
 * differ), so the median-of-three pivot keeps the parts balanced. */
static void newest_first(struct pick *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;

	while (k > lo && k < hi && hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, i, at = lo;
		/* The median of v[lo], v[mid], v[hi - 1], moved to hi - 1. */
		if (by_created(&v[mid], &v[lo]) > 0)
			swap_picks(&v[mid], &v[lo]);
		if (by_created(&v[hi - 1], &v[lo]) > 0)
			swap_picks(&v[hi - 1], &v[lo]);
		if (by_created(&v[mid], &v[hi - 1]) > 0)
			swap_picks(&v[mid], &v[hi - 1]);
		for (i = lo; i < hi - 1; i++)
			if (by_created(&v[i], &v[hi - 1]) > 0)
				swap_picks(&v[i], &v[at++]);
		swap_picks(&v[at], &v[hi - 1]);
		/* v[lo..at) newer than v[at], v[at + 1..hi) older. */
		if (k <= at)
			hi = at;
		else
			lo = at + 1;
	}
}

/* The live picks of v[0..n) put first; returns how many. */
static size_t live_first(struct pick *v, size_t n)
{
	size_t i, live = 0;

	for (i = 0; i < n; i++)
		if (!v[i].final)
			swap_picks(&v[i], &v[live++]);
	return live;
}

/* Take the records to show from the index: every live one, and the
 * newest page of the finished ones, oldest first as rows are. */
static void select_records(struct tracker *t, struct rec_index *ix)
{
	struct gather g = { NULL, 0, 0 };
	size_t i, live = 0;

	recindex_each(ix, t->cl->name, gather_one, &g);
	live = live_first(g.v, g.n);
	t->left = t->page > 0 && g.n - live > t->page ? g.n - live - t->page : 0;
	if (t->left > 0) {
		newest_first(g.v + live, g.n - live, t->page);
		for (i = live + t->page; i < g.n; i++)
			free(g.v[i].id);
		g.n = live + t->page;
	}
	if (g.n > 1)
		qsort(g.v, g.n, sizeof(*g.v), by_created);
	sel_free(t);
	t->sel = g.v;
	t->nsel = g.n;
	t->selected = 1;
}

/* The selection's live records in the cache, read where the index says
 * they changed; the cache's others dropped. */
static void cache_records(struct tracker *t, struct record_store *st)
{
	size_t i;

	t->marks++;
	for (i = 0; i < t->nsel; i++) {
		struct pick *p = &t->sel[i];
		struct cached *c;
		char *err = NULL;

		if (p->final)
			continue;	/* the page's */
		if ((c = strmap_get(t->cache_ix, p->id)) == NULL) {
			c = xcalloc(1, sizeof(*c));
			c->id = xstrdup(p->id);
			t->cache = xreallocarray(t->cache, t->ncache + 1, sizeof(*t->cache));
			t->cache[t->ncache++] = c;
			strmap_put(t->cache_ix, c->id, c);
		}
		c->mark = t->marks;
		p->c = c;
		if (c->gen == p->gen)
			continue;
		record_free(c->r);
		c->r = NULL;
		c->gen = 0;
		if (store_load(st, p->id, &c->r, &err) != 0) {
			/* Changed since the index read it: the next poll. */
			log_msg(LOG_WARN, "poll: %s", err);
			free(err);
			p->c = NULL;
			continue;
		}
		c->gen = p->gen;
	}
	for (i = t->ncache; i > 0; i--) {
		struct cached *c = t->cache[i - 1];
		if (c->mark == t->marks)
			continue;
		strmap_del(t->cache_ix, c->id);
		cached_free(c);
		t->cache[i - 1] = t->cache[--t->ncache];
	}
}

struct page_fill {
	struct row_page	*pg;
	size_t		 k;
};

static void page_row(const struct rec_meta *m, void *arg)
{
	struct page_fill *f = arg;

	row_of_meta(&f->pg->rows[f->k], m);
	f->pg->gens[f->k] = m->gen;
}

/* Whether the page holds the selection's finished records as the index
 * has them now, each at its pick's place. */
static int page_current(const struct tracker *t)
{
	const struct row_page *pg = t->pg;
	size_t i, k = 0;

	if (pg == NULL)
		return 0;
	for (i = 0; i < t->nsel; i++) {
		const struct pick *p = &t->sel[i];
		if (!p->final)
			continue;
		if (k >= pg->n || pg->gens[k] != p->gen || strcmp(pg->rows[k].record_id, p->id) != 0)
			return 0;
		k++;
	}
	return k == pg->n;
}

/* The selection's finished records' rows: the page kept when none of
 * them changed (the picks pointed at their rows), else made again from
 * the index. */
static void page_update(struct tracker *t, struct rec_index *ix)
{
	struct page_fill f;
	size_t i, n = 0;

	if (!page_current(t)) {
		for (i = 0; i < t->nsel; i++)
			n += t->sel[i].final;
		f.pg = xcalloc(1, sizeof(*f.pg));
		atomic_init(&f.pg->refs, 1);
		f.pg->rows = xcalloc(n + 1, sizeof(*f.pg->rows));
		f.pg->gens = xcalloc(n + 1, sizeof(*f.pg->gens));
		for (f.k = 0, i = 0; i < t->nsel; i++)
			if (t->sel[i].final && recindex_get(ix, t->sel[i].id, page_row, &f) == 0)
				f.k++;
		f.pg->n = f.k;
		page_unref(t->pg);
		t->pg = f.pg;
		/* A record gone since the selection: the next refresh drops it. */
	}
	for (i = 0, n = 0; i < t->nsel; i++) {
		struct pick *p = &t->sel[i];
		if (!p->final)
			continue;
		p->at = n < t->pg->n && strcmp(t->pg->rows[n].record_id, p->id) == 0 ? n++
		    : SIZE_MAX;
	}
}

/* ---- the scheduler's answer -------------------------------------------------------------- */

/* The answer's jobs by id: the queue's, and accounting's (the last line
 * of an id wins, as slurm_poll_find has it). */
struct jobmap {
	struct strmap	*queue, *acct;
};

static void jobmap_build(struct jobmap *m, const struct slurm_poll *p)
{
	size_t k;

	m->queue = strmap_new();
	m->acct = strmap_new();
	for (k = 0; k < p->n; k++) {
		const struct slurm_job *j = &p->jobs[k];
		if (j->from_sacct)
			strmap_put(m->acct, j->id, (void *)j);
		else if (strmap_get(m->queue, j->id) == NULL)
			strmap_put(m->queue, j->id, (void *)j);
	}
}

static void jobmap_free(struct jobmap *m)
{
	strmap_free(m->queue);
	strmap_free(m->acct);
}

/* id in the queue's answer (from_sacct 0) or accounting's (1). */
static const struct slurm_job *find_job(const struct jobmap *m, const char *id, int from_sacct)
{
	return strmap_get(from_sacct ? m->acct : m->queue, id);
}

/* The queue's word on id, else accounting's. */
static const struct slurm_job *find_any(const struct jobmap *m, const char *id)
{
	const struct slurm_job *j = find_job(m, id, 0);

	return j != NULL ? j : find_job(m, id, 1);
}

/* ---- the user's other jobs --------------------------------------------------------------- */

static struct seen_job *seen_note(struct tracker *t, const struct job_row *row);

/* The job of the user's other jobs seen as id, or NULL. */
static struct seen_job *seen_find(struct tracker *t, const char *id)
{
	size_t at = (size_t)(uintptr_t)strmap_get(t->seen_ix, id);

	return at > 0 ? &t->seen[at - 1] : NULL;
}

/* Accounting's finished jobs of the history window the user's other jobs
 * do not hold yet (or hold as not ended): kept as ended, like the ones
 * seen leaving the queue. Live ones come from the queue, taotop's own
 * from their records. */
static void seen_from_history(struct tracker *t, const struct slurm_poll *p,
    const struct jobmap *jm, struct rec_index *ix)
{
	size_t k;

	for (k = 0; k < p->n; k++) {
		const struct slurm_job *j = &p->jobs[k];
		struct native_state ns;
		struct seen_job *sj;
		struct job_row row;

		if (!j->from_history || find_job(jm, j->id, 0) != NULL || recindex_has_ref(ix, j->id))
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
	struct seen_job *sj = seen_find(t, row->slurm_id);

	if (sj != NULL) {
		row_assign(&sj->row, row);
		return sj;
	}
	t->seen = xreallocarray(t->seen, t->nseen + 1, sizeof(*t->seen));
	t->seen[t->nseen].ended = 0;
	row_copy(&t->seen[t->nseen].row, row);
	strmap_put(t->seen_ix, row->slurm_id, (void *)(uintptr_t)(t->nseen + 1));
	return &t->seen[t->nseen++];
}

/* Forget the oldest ended jobs beyond SEEN_MAX. */
static void seen_prune(struct tracker *t)
{
	size_t i, out = 0, excess = t->nseen > SEEN_MAX ? t->nseen - SEEN_MAX : 0;

	if (excess == 0)
		return;
	strmap_clear(t->seen_ix);
	for (i = 0; i < t->nseen; i++) {
		if (excess > 0 && t->seen[i].ended) {
			row_clear(&t->seen[i].row);
			excess--;
			continue;
		}
		t->seen[out] = t->seen[i];
		strmap_put(t->seen_ix, t->seen[out].row.slurm_id, (void *)(uintptr_t)(out + 1));
		out++;
	}
	t->nseen = out;
}

/* The user's other jobs: live ones the records do not know, then the
 * ones seen earlier that left the queue. */
static void foreign_rows(struct tracker *t, struct poll_result *res, const struct slurm_poll *p,
    const struct jobmap *jm, struct rec_index *ix)
{
	size_t i, k;

	for (k = 0; k < p->n; k++) {
		struct job_row *row;
		struct seen_job *was;
		if (p->jobs[k].from_sacct || recindex_has_ref(ix, p->jobs[k].id))
			continue;
		was = seen_find(t, p->jobs[k].id);
		row = add_row(res);
		row_of_foreign(row, &p->jobs[k], was != NULL ? was->row.state : TAO_UNKNOWN);
		seen_note(t, row);
	}
	if (t->hist_asked && p->history_rc == 0 && res->scheduler_ok)
		seen_from_history(t, p, jm, ix);
	for (i = 0; i < t->nseen; i++) {
		struct seen_job *sj = &t->seen[i];
		if (recindex_has_ref(ix, sj->row.slurm_id))
			continue;
		if (res->scheduler_ok && find_job(jm, sj->row.slurm_id, 0) != NULL)
			continue;	/* live: shown above */
		if (!sj->ended && res->scheduler_ok) {
			const struct slurm_job *j = find_job(jm, sj->row.slurm_id, 1);
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
}

/* ---- one poll, step by step -------------------------------------------------------------- */

/* The live record of pick p, or NULL (finished, or not read). */
static struct job_record *live_of(const struct pick *p)
{
	return !p->final && p->c != NULL ? p->c->r : NULL;
}

/* The command: the queue, accounting for the tracked jobs the queue did
 * not list last time (the ones that may have ended), the history window
 * when due (never a command, or a round trip, of its own), and the
 * running jobs' progress. *which: the followers whose sections it has. */
static char *poll_command(struct tracker *t, const char *nonce, size_t *nids,
    struct progress ***which, size_t *nwhich)
{
	const char **ids = xcalloc(t->nsel + t->nseen + 1, sizeof(*ids));
	struct slurm_history hist;
	struct buf full;
	char *cmd;
	size_t i;

	*nids = 0;
	for (i = 0; i < t->nsel; i++) {
		const struct job_record *r = live_of(&t->sel[i]);
		if (r != NULL && r->backend_ref != NULL && !tao_state_final(r->state) &&
		    (!t->primed || !was_live(t, r->backend_ref)))
			ids[(*nids)++] = r->backend_ref;
	}
	for (i = 0; i < t->nseen; i++)
		if (!t->seen[i].ended && !was_live(t, t->seen[i].row.slurm_id))
			ids[(*nids)++] = t->seen[i].row.slurm_id;
	t->hist_asked = t->hist_window > 0 && time(NULL) >= t->hist_next;
	hist.since_s = t->hist_window;
	hist.max = t->hist_max;
	cmd = slurm_poll_command(ids, *nids, t->hist_asked ? &hist : NULL, nonce);
	free(ids);
	*which = xcalloc(t->nsel + 1, sizeof(**which));
	*nwhich = 0;
	for (i = 0; i < t->nsel; i++) {
		const struct job_record *r = live_of(&t->sel[i]);
		if (r != NULL && r->state == TAO_RUNNING && r->results_dir != NULL)
			(*which)[(*nwhich)++] = progress_of_job(t, r);
	}
	buf_init(&full);
	buf_adds(&full, cmd);
	free(cmd);
	status_sections(&full, *which, *nwhich, nonce);
	return buf_detach(&full);
}

/* Run the command; its answer parsed into p, the progress sections fed
 * to their followers. -1 when it could not run. */
static int poll_run(struct conn *c, const char *cmd, const char *nonce,
    struct progress *const *which, size_t nwhich, struct slurm_poll *p, long *remote_us,
    char **err)
{
	struct conn_exec x;
	struct timespec t0, t1;
	char *mark;
	const char *at;

	conn_exec_init(&x, cmd);
	x.timeout_ms = POLL_TIMEOUT_MS;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (conn_exec(c, &x, err) != CONN_OK) {
		conn_exec_free(&x);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*remote_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
	/* The scheduler's part ends where the first status.json starts. */
	mark = xasprintf("\n@@%s:json ", nonce);
	at = x.out.data ? find_bytes(x.out.data, x.out.len, mark) : NULL;
	if (at != NULL) {
		status_take(which, nwhich, at, x.out.len - (size_t)(at - x.out.data), nonce);
		x.out.data[at - x.out.data] = '\0';
	}
	free(mark);
	slurm_poll_parse(x.out.data, x.err.data, nonce, p);
	conn_exec_free(&x);
	return 0;
}

/* What the answer says of the scheduler and accounting, the next history
 * window, and the queue's ids for the next poll. */
static void poll_note(struct tracker *t, struct poll_result *res, const struct slurm_poll *p,
    size_t nids)
{
	size_t k;

	res->at = time(NULL);
	res->scheduler_ok = p->squeue_rc == 0;
	res->accounting_ok = nids == 0 || p->sacct_rc == 0;
	if (!res->scheduler_ok)
		res->problem = xasprintf("the scheduler does not answer%s%s: last known states kept",
		    p->squeue_err ? ": " : "", p->squeue_err ? p->squeue_err : "");
	else if (!res->accounting_ok)
		res->problem = xstrdup("accounting (sacct) does not answer: finished jobs wait "
		    "for it");
	if (p->skipped > 0)
		log_msg(LOG_WARN, "poll: %s: %zu lines of scheduler output did not parse",
		    t->cl->name, p->skipped);
	if (t->hist_asked) {
		/* Asked again after every_s; after a failure, within a minute. */
		long again = p->history_rc == 0 || t->hist_every < 60 ? t->hist_every : 60;
		t->hist_next = res->at + again;
		if (p->history_rc != 0)
			log_msg(LOG_WARN, "poll: %s: accounting's history did not answer (rc %d)",
			    t->cl->name, p->history_rc);
	}
	if (res->scheduler_ok) {
		strmap_clear(t->live);
		for (k = 0; k < p->n; k++)
			if (!p->jobs[k].from_sacct)
				strmap_put(t->live, p->jobs[k].id, (void *)1);
		t->primed = 1;
		t->last_ok = res->at;
	}
	res->last_ok = t->last_ok;
}

/* A finished record's row: its page's, borrowed; a copy of its own
 * when SLURM still says something of it (jm, NULL: nothing asked). */
static void finished_row(struct poll_result *res, const struct job_row *src,
    const struct jobmap *jm)
{
	struct job_row *row = add_row(res);
	const struct slurm_job *j = src->slurm_id[0] != '\0' && jm != NULL
	    ? find_any(jm, src->slurm_id) : NULL;

	if (j != NULL) {
		row_copy(row, src);
		fill_from_slurm(row, j);
	} else {
		*row = *src;
		row->shared = 1;
	}
}

/* Room for every row a poll can give at once: ten thousand rows grown by
 * doubling is a dozen reallocations of megabytes, every poll. */
static void rows_reserve(struct poll_result *res, size_t n)
{
	if (n > res->rows_cap) {
		res->rows = xreallocarray(res->rows, n, sizeof(*res->rows));
		res->rows_cap = n;
	}
}

/* taotop's own rows: each live record decided from the answer (and
 * written when it changed), each finished one its page's. */
static void own_rows(struct tracker *t, struct conn *c, struct record_store *st,
    struct poll_result *res, const struct jobmap *jm)
{
	size_t i;

	res->page = page_ref(t->pg);
	res->finished_left = t->left;
	for (i = 0; i < t->nsel; i++) {
		const struct pick *pk = &t->sel[i];
		struct job_record *r = live_of(pk);
		const struct slurm_job *j;

		if (pk->final) {
			if (pk->at != SIZE_MAX)
				finished_row(res, &t->pg->rows[pk->at], jm);
			continue;
		}
		if (r == NULL)
			continue;	/* not read: the next poll */
		j = r->backend_ref != NULL ? find_any(jm, r->backend_ref) : NULL;
		if (!tao_state_final(r->state) && r->backend_ref != NULL) {
			if (j == NULL) {
				/* Left the queue, not yet in accounting (it
				 * lags a few seconds after submit and end). */
				if (res->scheduler_ok)
					res->waiting_for_accounting = 1;
			} else if ((j->from_sacct ? res->accounting_ok : res->scheduler_ok) &&
			    update_one(c, st, t->cl, r, j, res)) {
				res->changes++;	/* update_one added its event */
			}
		}
		row_fill(add_row(res), r, j, r->state == TAO_RUNNING && r->results_dir != NULL
		    ? reported(t, r) : NULL);
	}
}

/* The records shown, taken again from the index when it moved, and the
 * page of the finished ones with them. */
static void take_records(struct tracker *t, struct rec_index *ix)
{
	if (t->selected && recindex_version(ix) == t->ix_version && t->pg != NULL)
		return;
	t->ix_version = recindex_version(ix);
	select_records(t, ix);
	page_update(t, ix);
}

static void disk_row(const struct rec_meta *m, void *arg)
{
	row_of_meta(arg, m);
}

void tracker_rows_from_disk(struct tracker *t, struct record_store *st, struct poll_result *res)
{
	struct rec_index *ix = recindex_of(st);
	char *warn = NULL;
	size_t i;

	memset(res, 0, sizeof(*res));
	recindex_refresh(ix, &warn);
	if (warn != NULL)
		log_msg(LOG_WARN, "records: %s", warn);
	free(warn);
	take_records(t, ix);
	rows_reserve(res, t->nsel + 1);
	res->page = page_ref(t->pg);
	for (i = 0; i < t->nsel; i++) {
		const struct pick *pk = &t->sel[i];
		if (pk->final && pk->at != SIZE_MAX)
			finished_row(res, &t->pg->rows[pk->at], NULL);
		else if (!pk->final && recindex_get(ix, pk->id, disk_row, &res->rows[res->n]) == 0)
			res->n++;
	}
	res->at = time(NULL);
	res->accounting_ok = 1;
	res->finished_left = t->left;
}

int tracker_poll(struct tracker *t, struct conn *c, struct record_store *st,
    struct poll_result *res, char **err)
{
	struct rec_index *ix = recindex_of(st);
	struct timespec t0, t1;
	struct progress **which;
	struct slurm_poll p;
	struct jobmap jm;
	char *cmd, *warn = NULL, nonce[SLURM_NONCE_LEN + 1];
	size_t nids, nwhich;
	long remote_us = 0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(res, 0, sizeof(*res));
	res->rows = t->spare;	/* tracker_reuse_rows's, or NULL */
	res->rows_cap = t->spare_cap;
	t->spare = NULL;
	t->spare_cap = 0;
	/* Only what changed since the last poll is read again. */
	recindex_refresh(ix, &warn);
	if (warn != NULL)
		log_msg(LOG_WARN, "poll: %s", warn);
	free(warn);
	take_records(t, ix);
	cache_records(t, st);
	slurm_nonce(nonce);
	cmd = poll_command(t, nonce, &nids, &which, &nwhich);
	rc = poll_run(c, cmd, nonce, which, nwhich, &p, &remote_us, err);
	free(cmd);
	free(which);
	if (rc != 0)
		return -1;
	poll_note(t, res, &p, nids);
	jobmap_build(&jm, &p);
	rows_reserve(res, t->nsel + t->nseen + p.n + 1);
	own_rows(t, c, st, res, &jm);
	prune_progress(t);
	foreign_rows(t, res, &p, &jm, ix);
	jobmap_free(&jm);
	slurm_poll_free(&p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->engine_us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000 -
	    remote_us;
	return 0;
}

struct job_row *poll_result_take_rows(struct poll_result *p, size_t *cap)
{
	struct job_row *rows = p->rows;
	size_t i;

	for (i = 0; i < p->n; i++)
		row_clear(&p->rows[i]);
	*cap = rows != NULL ? p->rows_cap : 0;
	p->n = 0;
	p->rows = NULL;
	poll_result_free(p);
	return rows;
}

void tracker_reuse_rows(struct tracker *t, struct job_row *rows, size_t cap)
{
	free(t->spare);
	t->spare = rows;
	t->spare_cap = rows != NULL ? cap : 0;
}

void poll_result_free(struct poll_result *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		row_clear(&p->rows[i]);
	free(p->rows);
	page_unref(p->page);
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

/* What job (a taotop id or a SLURM id) cancels: 0 with the SLURM id in *id
 * and the record taotop launched it as in *r (or NULL); 1 when done without
 * SLURM (never launched: marked Canceled, *msg says so); -1 with *err. */
static int cancel_target(struct record_store *st, const struct cluster_cfg *cl,
    const char *job, struct job_record **r, char **id, char **msg, char **err)
{
	struct job_ref ref;
	int rc = 0;

	*r = NULL;
	if (job_ref_resolve(st, job, &ref, err) != 0)
		return -1;
	if (ref.rec != NULL && ref.rec->cluster != NULL && strcmp(ref.rec->cluster, cl->name) != 0) {
		/* Its SLURM id means another job here. */
		*err = xasprintf("a job of cluster '%s', not of '%s': cancel it there",
		    ref.rec->cluster, cl->name);
		rc = -1;
	} else if (ref.slurm_id == NULL) {
		/* Opened but never launched: nothing to tell SLURM. */
		rc = store_update(st, ref.rec->id, mark_canceled, NULL, err) == 0 ? 1 : -1;
		if (rc == 1)
			*msg = xstrdup("never launched; marked Canceled");
	} else {
		/* A SLURM id of a job taotop launched cancels its record too. */
		job_ref_adopt(st, cl->name, &ref);
		*id = xstrdup(ref.slurm_id);
		*r = ref.rec;
		ref.rec = NULL;
	}
	job_ref_free(&ref);
	return rc;
}

/*
 * scancel of a job that already ended exits 0 without a word on SLURM
 * 22.05 (within MinJobAge), so ask the queue first, in the same command: a
 * job it no longer lists had ended, and keeps its state. A pending job
 * never ran its cleanup: its secrets go with a cancel that worked, in the
 * same command (one round trip).
 */
static char *cancel_command(const char *id, const struct job_record *r)
{
	char *q = sh_quote(id), *side = r != NULL ? secrets_sidecar_of(r) : NULL;
	char *qs = side != NULL ? sh_quote(side) : NULL, *cmd;

	cmd = xasprintf("squeue -h -j %s -o %%T 2>/dev/null; scancel %s%s%s%s", q, q,
	    qs ? " && { rm -f -- " : "", qs ? qs : "", qs ? "; true; }" : "");
	free(q), free(side), free(qs);
	return cmd;
}

int tracker_cancel(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *job, char **msg, char **err)
{
	struct job_record *r = NULL;
	struct conn_exec x;
	char *cmd, *id = NULL;
	const char *e;
	int rc;

	*msg = NULL;
	rc = cancel_target(st, cl, job, &r, &id, msg, err);
	if (rc != 0)
		return rc > 0 ? 0 : -1;
	cmd = cancel_command(id, r);
	conn_exec_init(&x, cmd);
	x.timeout_ms = POLL_TIMEOUT_MS;
	rc = -1;
	if (conn_exec(c, &x, err) != CONN_OK)
		goto out;
	e = x.err.data ? x.err.data : "";
	if (x.exit_status == 0 && x.out.len > 0 && x.out.data[0] != '\n') {
		*msg = xstrdup("cancelled");
		rc = r != NULL && store_update(st, r->id, mark_canceled, NULL, err) != 0 ? -1 : 0;
	} else if (x.exit_status == 0 || strstr(e, "already completing or completed") ||
	    strstr(e, "Invalid job id")) {
		/* The seed's rule: an ended job is a successful cancel. */
		*msg = xstrdup("had already ended");
		rc = 0;
	} else {
		*err = xasprintf("scancel refused: %.*s", (int)strcspn(e, "\n"), e);
	}
out:
	conn_exec_free(&x);
	record_free(r);
	free(cmd);
	free(id);
	return rc;
}

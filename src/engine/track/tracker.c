#include "engine/track/tracker_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/config/config.h"
#include "engine/store/recindex.h"
#include "engine/store/store.h"
#include "engine/slurm/slurm.h"
#include "engine/submit/probe.h"
#include "engine/track/segments.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/log.h"
#include "util/strmap.h"
#include "util/xmalloc.h"

/* ---- the tracker ------------------------------------------------------------------------ */

struct tracker *tracker_new(const struct cluster_cfg *cl)
{
	struct tracker *t = xcalloc(1, sizeof(*t));
	t->cl = cl;
	t->seen_ix = strmap_new();
	t->prog_ix = strmap_new();
	t->live = strmap_new();
	t->cache_ix = strmap_new();
	t->seg_ix = strmap_new();
	return t;
}

static void seg_follow_free(struct seg_follow *f)
{
	free(f->record_id);
	log_follow_free(&f->follow);
	buf_free(&f->lines);
	free(f);
}

/* Forget the followers of records this poll did not ask about (finished,
 * or no longer shown). */
static void prune_segments(struct tracker *t)
{
	size_t i = 0;

	while (i < t->nsegf) {
		if (t->segf[i]->mark == t->seg_polls) {
			i++;
			continue;
		}
		strmap_del(t->seg_ix, t->segf[i]->record_id);
		seg_follow_free(t->segf[i]);
		t->segf[i] = t->segf[--t->nsegf];
	}
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
	size_t i;

	free(p->record_id);
	free(p->found);
	for (i = 0; i < p->nplaces; i++)
		free(p->places[i]);
	free(p->places);
	free(p->search_root);
	log_follow_free(&p->follow);
	tao_status_free(&p->ts);
	series_shared_unref(p->curves);
	free(p);
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
		tracker_row_clear(&t->seen[i].row);
	free(t->seen);
	strmap_free(t->seen_ix);
	tracker_sel_free(t);
	for (i = 0; i < t->ncache; i++)
		tracker_cached_free(t->cache[i]);
	free(t->cache);
	strmap_free(t->cache_ix);
	for (i = 0; i < t->nsegf; i++)
		seg_follow_free(t->segf[i]);
	free(t->segf);
	free(t->segq);
	strmap_free(t->seg_ix);
	tracker_page_unref(t->pg);
	free(t->spare);
	for (i = 0; i < t->nww; i++)
		free(t->ww[i].record_id);
	free(t->ww);
	free(t);
}

/* A running job's status file follower, made the first time: at the
 * place its record says it was found, else looking for it. */
static struct progress *progress_of_job(struct tracker *t, const struct job_record *r)
{
	struct progress *p = strmap_get(t->prog_ix, r->id);

	if (p != NULL)
		return p;
	p = xcalloc(1, sizeof(*p));
	p->record_id = xstrdup(r->id);
	p->places = tao_status_places(r->results_dir, r->action, r->image, r->tao_results_dir,
	    &p->nplaces);
	p->search_root = xstrdup(r->results_dir);
	if (r->status_path != NULL)
		p->found = xstrdup(r->status_path);
	log_follow_init(&p->follow, p->found != NULL ? p->found : "", 0);
	tao_status_init(&p->ts);
	tao_status_set_task(&p->ts, r->action);
	p->ts.success_only = r->cosmos != NULL;
	t->prog = xreallocarray(t->prog, t->nprog + 1, sizeof(*t->prog));
	t->prog[t->nprog++] = p;
	strmap_put(t->prog_ix, r->id, p);
	return p;
}

/* Every metric TAO reported so far for a running job, a reference for
 * its row (NULL: none yet): copied again only when lines came since. */
static struct series_shared *curves_of_job(struct tracker *t, const struct job_record *r)
{
	struct progress *p = strmap_get(t->prog_ix, r->id);

	if (p == NULL)
		return NULL;
	if (p->fresh || (p->curves == NULL && p->ts.curves.n > 0)) {
		series_shared_unref(p->curves);
		p->curves = p->ts.curves.n > 0 ? series_shared_new(&p->ts.curves) : NULL;
		p->fresh = 0;
	}
	return series_shared_ref(p->curves);
}

/* What TAO reported so far for a job whose status.json is followed. */
static const struct tao_status *reported(struct tracker *t, const struct job_record *r)
{
	const struct progress *p = strmap_get(t->prog_ix, r->id);

	return p != NULL ? &p->ts : NULL;
}

/*
 * The running jobs' status files, read by the poll's own command from
 * where the last poll stopped: one round trip for the queue, accounting
 * and every job's progress. A file not found yet is looked for in TAO's
 * places (a test each) and, at most every STATUS_SEARCH_EVERY_S, below the
 * results folder (find -maxdepth 3, the first one); its section names
 * where it was read. A file that shrank (a requeued run starting over) is
 * read again from its start; one not there yet says nothing.
 */
static void status_sections(struct buf *cmd, struct progress *const *which, size_t n,
    const char *nonce, time_t now)
{
	size_t k, i;

	for (k = 0; k < n; k++) {
		struct progress *p = which[k];
		if (p->found != NULL) {
			buf_adds(cmd, "; f=");
			sh_quote_buf(cmd, p->found, strlen(p->found));
			buf_addf(cmd, "; o=%llu", (unsigned long long)p->follow.offset);
		} else {
			buf_adds(cmd, "; f=; o=0; for c in");
			for (i = 0; i < p->nplaces; i++) {
				buf_addc(cmd, ' ');
				sh_quote_buf(cmd, p->places[i], strlen(p->places[i]));
			}
			buf_adds(cmd, "; do [ -f \"$c\" ] && { f=$c; break; }; done");
			if (p->search_root != NULL && now >= p->next_search) {
				buf_adds(cmd, "; [ -n \"$f\" ] || f=$(find ");
				sh_quote_buf(cmd, p->search_root, strlen(p->search_root));
				buf_addf(cmd, " -maxdepth %d -name status.json -type f 2>/dev/null | "
				    "head -n 1)", TAO_STATUS_SEARCH_DEPTH);
				p->next_search = now + STATUS_SEARCH_EVERY_S;
			}
		}
		/* Only a regular file is read: a FIFO (or a link to one, or
		 * to /dev/zero) put at a status file's path would hold the
		 * poll's one command, and every job of the cluster with it. */
		buf_addf(cmd, "; if [ -n \"$f\" ] && [ -f \"$f\" ] && s=$(wc -c < \"$f\" 2>/dev/null); then "
		    "[ \"$s\" -lt \"$o\" ] && o=0; "
		    "printf '\\n@@%s:json %zu %%s %%s %%s\\n' \"$o\" \"$s\" \"$f\"; "
		    "tail -c +$((o + 1)) \"$f\" | head -c %u; printf '\\n@@%s:jend %zu\\n'; fi",
		    nonce, k, STATUS_TICK_MAX, nonce, k);
	}
}

/* A path the command answered, fit to follow: one of p's places, or one
 * line below its results folder with no control characters (the search's). */
static int found_ok(const struct progress *p, const char *path, size_t len)
{
	const char *root = p->search_root;
	size_t rl = root != NULL ? strlen(root) : 0, i;

	for (i = 0; i < p->nplaces; i++)
		if (strlen(p->places[i]) == len && memcmp(p->places[i], path, len) == 0)
			return 1;
	if (rl == 0 || len > 4096 || len <= rl || memcmp(path, root, rl) != 0 || path[rl] != '/')
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
			return 0;
	return 1;
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

/* Feed what the command read of each status file to its follower; a
 * file found by this command is followed from now on. */
static void status_take(struct progress *const *which, size_t n, const char *out, size_t len,
    const char *nonce)
{
	size_t k;

	for (k = 0; k < n; k++) {
		struct progress *p = which[k];
		char *head = xasprintf("\n@@%s:json %zu ", nonce, k), *end;
		const char *at = find_bytes(out, len, head), *body, *stop = NULL;
		unsigned long long from, size = 0;

		end = xasprintf("\n@@%s:jend %zu\n", nonce, k);
		const char *where = NULL;
		char *e = NULL;

		if (at != NULL && (from = strtoull(at + strlen(head), &e, 10), *e == ' ') &&
		    (size = strtoull(e + 1, &e, 10), *e == ' ') &&
		    (body = memchr(at + 1, '\n', len - (size_t)(at + 1 - out))) != NULL) {
			where = e + 1;
			stop = find_bytes(body + 1, len - (size_t)(body + 1 - out), end);
		}
		if (stop != NULL && p->found == NULL) {
			size_t wl = (size_t)(body - where);
			if (found_ok(p, where, wl)) {
				p->found = xstrndup(where, wl);
				log_follow_free(&p->follow);
				log_follow_init(&p->follow, p->found, 0);
				tao_status_reset(&p->ts);
				p->fresh = 1;
			} else {
				stop = NULL;
			}
		} else if (stop != NULL && (strlen(p->found) != (size_t)(body - where) ||
		    memcmp(p->found, where, (size_t)(body - where)) != 0)) {
			stop = NULL;	/* not the file followed */
		}
		if (stop != NULL) {
			struct buf lines;
			buf_init(&lines);
			p->follow.restarted = 0;
			log_follow_feed(&p->follow, from, body + 1, (size_t)(stop - (body + 1)), &lines);
			if (p->follow.restarted)
				tao_status_reset(&p->ts);	/* a requeued run starts over */
			tao_status_feed(&p->ts, lines.data ? lines.data : "", lines.len);
			p->fresh |= lines.len > 0 || p->follow.restarted;
			buf_free(&lines);
			p->caught_up = from + (unsigned long long)(stop - (body + 1)) >= size;
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

/* ---- one poll, step by step -------------------------------------------------------------- */

/* The live records' segments files (engine/track/segments.h), after
 * the status files' sections, each read from where the last poll stopped
 * (from its start again when it shrank), as status_sections does. */
static void segment_sections(struct tracker *t, struct buf *cmd, const char *nonce)
{
	size_t i;

	t->seg_polls++;
	t->nsegq = 0;
	free(t->segq);
	t->segq = xcalloc(t->nsel + 1, sizeof(*t->segq));
	for (i = 0; i < t->nsel; i++) {
		const struct job_record *r = !t->sel[i].final && t->sel[i].c != NULL
		    ? t->sel[i].c->r : NULL;
		struct seg_follow *f;
		char *path;

		if (r == NULL || tao_state_final(r->state) || (path = segments_path(r)) == NULL)
			continue;
		f = strmap_get(t->seg_ix, r->id);
		if (f == NULL) {
			f = xcalloc(1, sizeof(*f));
			f->record_id = xstrdup(r->id);
			log_follow_init(&f->follow, path, 0);
			buf_init(&f->lines);
			t->segf = xreallocarray(t->segf, t->nsegf + 1, sizeof(*t->segf));
			t->segf[t->nsegf++] = f;
			strmap_put(t->seg_ix, r->id, f);
		}
		f->mark = t->seg_polls;
		buf_reset(&f->lines);
		buf_adds(cmd, "; f=");
		sh_quote_buf(cmd, path, strlen(path));
		buf_addf(cmd, "; o=%llu", (unsigned long long)f->follow.offset);
		buf_addf(cmd, "; if [ -f \"$f\" ] && s=$(wc -c < \"$f\" 2>/dev/null); then "
		    "[ \"$s\" -lt \"$o\" ] && o=0; "
		    "printf '\\n@@%s:seg %zu %%s\\n' \"$o\"; "
		    "tail -c +$((o + 1)) \"$f\" | head -c %u; printf '\\n@@%s:send %zu\\n'; fi",
		    nonce, t->nsegq, SEGMENTS_TICK_MAX, nonce, t->nsegq);
		t->segq[t->nsegq++] = f;
		free(path);
	}
	prune_segments(t);
}

/* The segments sections of the answer (from `at` on) to their followers,
 * each section looked for after the one before it (they come in order). */
static void segment_take(struct tracker *t, const char *out, size_t len, const char *nonce)
{
	const char *from = out, *end_all = out + len;
	size_t k;

	for (k = 0; k < t->nsegq; k++) {
		struct seg_follow *f = t->segq[k];
		char *head = xasprintf("\n@@%s:seg %zu ", nonce, k);
		char *end = xasprintf("\n@@%s:send %zu\n", nonce, k);
		const char *a = find_bytes(from, (size_t)(end_all - from), head), *body, *b;
		unsigned long long off;
		char *e = NULL;

		if (a != NULL && (off = strtoull(a + strlen(head), &e, 10), *e == '\n')) {
			body = e + 1;
			b = find_bytes(body, (size_t)(end_all - body), end);
			if (b != NULL) {
				log_follow_feed(&f->follow, off, body, (size_t)(b - body),
				    &f->lines);
				f->follow.restarted = 0;
				from = b + strlen(end);
			}
		}
		free(head);
		free(end);
	}
}

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
		if (r != NULL && r->backend_ref != NULL && (!tao_state_final(r->state) ||
		    awaits_accounting(r->state, r->native, r->backend_ref)) &&
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
	status_sections(&full, *which, *nwhich, nonce, time(NULL));
	segment_sections(t, &full, nonce);
	return buf_detach(&full);
}

/* Run the command; its answer parsed into p, the progress sections fed
 * to their followers. -1 when it could not run. */
static int poll_run(struct tracker *t, struct conn *c, const char *cmd, const char *nonce,
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
	/* The segments files' sections come last. */
	mark = xasprintf("\n@@%s:seg ", nonce);
	at = x.out.data ? find_bytes(x.out.data, x.out.len, mark) : NULL;
	if (at != NULL) {
		segment_take(t, at, x.out.len - (size_t)(at - x.out.data), nonce);
		x.out.len = (size_t)(at - x.out.data);
		x.out.data[x.out.len] = '\0';
	}
	free(mark);
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
	struct job_row *row = tracker_row_add(res);
	const struct slurm_job *j = src->slurm_id[0] != '\0' && jm != NULL
	    ? tracker_jobmap_any(jm, src->slurm_id) : NULL;

	if (j != NULL) {
		tracker_row_copy(row, src);
		tracker_row_from_slurm(row, j);
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

/* The record's history line for a cached probe answer, once: every new
 * tracker (each `taotop status`, each start of the monitor) reads the
 * segments file from its start and finds the answer again. */
static int note_probe(struct job_record *r, void *arg, char **err)
{
	size_t i;

	(void)err;
	for (i = 0; i < r->nhist; i++)
		if (r->hist[i].message != NULL && strcmp(r->hist[i].message, arg) == 0)
			return 0;
	record_event(r, arg, "taotop", time(NULL));
	return 1;
}

/* The NCCL probe the job ran as its first step passed (its line in the
 * segments file): its knobs cached for the cluster, as a probe of its
 * shape, so later jobs that shape covers skip it. Only a set of the
 * cluster's own ladder is taken (the file is the job's to write). */
static void cache_probe(const struct tracker *t, struct record_store *st,
    const struct job_record *r, const char *lines, size_t len)
{
	char *env = NULL, *shape = NULL, **rungs = NULL, *err = NULL, *msg, clean[32];
	size_t n = 0, i;
	int nodes = 0, gpus = 0, used = 0, ok = 0;

	if (!segments_probe_answer(lines, len, &env, &shape))
		return;
	if (strcmp(env, "none") == 0)
		env[0] = '\0';
	if (sscanf(shape, "%dx%d%n", &nodes, &gpus, &used) == 2 && shape[used] == '\0' &&
	    nodes >= 1 && gpus >= 1 && probe_ladder(t->cl->nccl_ladder, NULL, &rungs, &n,
	    &err) == 0) {
		for (i = 0; i < n; i++) {
			ok = ok || strcmp(rungs[i], env) == 0;
			free(rungs[i]);
		}
		free(rungs);
	}
	free(err);
	err = NULL;
	/* The shape as taotop writes it, whatever spelling parsed. */
	snprintf(clean, sizeof(clean), "%dx%d", nodes, gpus);
	if (!ok) {
		log_msg(LOG_WARN, "poll: %s: the NCCL probe's answer is not a set of the ladder: "
		    "not cached", r->id);
	} else if (t->cl->nccl_env != NULL && strcmp(t->cl->nccl_env, env) == 0 &&
	    t->cl->nccl_env_shape != NULL && strcmp(t->cl->nccl_env_shape, clean) == 0) {
		/* Cached already (by an earlier look at this run): no write. */
	} else if (config_save_nccl_env(t->cl->name, env, clean, &err) != 0) {
		log_msg(LOG_WARN, "poll: %s: the NCCL knobs passed but were not cached: %s", r->id,
		    err);
		free(err);
	} else {
		msg = xasprintf("the NCCL probe passed on %s with %s: cached for cluster %s",
		    clean, env[0] ? env : "no NCCL knobs", t->cl->name);
		if (store_update(st, r->id, note_probe, msg, &err) != 0) {
			log_msg(LOG_WARN, "poll: %s: %s", r->id, err);
			free(err);
		}
		free(msg);
	}
	free(env), free(shape);
}

/* taotop's own rows: each live record decided from the answer (and
 * written when it changed), each finished one its page's. */
static void own_rows(struct tracker *t, struct conn *c, struct record_store *st,
    struct poll_result *res, const struct jobmap *jm)
{
	size_t i;

	res->page = tracker_page_ref(t->pg);
	res->finished_left = t->left;
	for (i = 0; i < t->nsel; i++) {
		const struct pick *pk = &t->sel[i];
		struct job_record *r = live_of(pk);
		const struct slurm_job *j;
		const struct progress *p;
		struct job_row *row;

		if (pk->final) {
			if (pk->at != SIZE_MAX)
				finished_row(res, &t->pg->rows[pk->at], jm);
			continue;
		}
		if (r == NULL)
			continue;	/* not read: the next poll */
		j = r->backend_ref != NULL ? tracker_jobmap_any(jm, r->backend_ref) : NULL;
		p = strmap_get(t->prog_ix, r->id);
		if (p != NULL && p->found != NULL && !same(p->found, r->status_path))
			tracker_keep_status_path(st, r, p->found);
		if (!tao_state_final(r->state) && r->backend_ref != NULL) {
			struct seg_follow *sf = strmap_get(t->seg_ix, r->id);
			if (sf != NULL && sf->lines.len > 0)
				cache_probe(t, st, r, sf->lines.data, sf->lines.len);
			if (sf != NULL && sf->lines.len > 0 &&
			    tracker_keep_segments(st, r, sf->lines.data, sf->lines.len,
			    p != NULL ? p->ts.epoch : -1) != 0) {
				/* Not written: the next poll reads the file
				 * again from its start (merging is idempotent). */
				char *path = xstrdup(sf->follow.path);
				log_follow_free(&sf->follow);
				log_follow_init(&sf->follow, path, 0);
				free(path);
			}
			if (j == NULL) {
				/* Left the queue, not yet in accounting (it
				 * lags a few seconds after submit and end). */
				if (res->scheduler_ok)
					res->waiting_for_accounting = 1;
			} else if (j->from_sacct && res->accounting_ok &&
			    tracker_where_awaited(t, r, j, time(NULL))) {
				res->waiting_for_accounting = 1;	/* poll again soon */
			} else if ((j->from_sacct ? res->accounting_ok : res->scheduler_ok) &&
			    tracker_update_one(c, st, t->cl, r, j, p != NULL && p->caught_up
			    ? &p->ts : NULL, p != NULL ? p->found : NULL, res)) {
				res->changes++;	/* tracker_update_one added its event */
			}
		} else if (awaits_accounting(r->state, r->native, r->backend_ref) &&
		    (j == NULL || (j->from_sacct ? res->accounting_ok : res->scheduler_ok))) {
			/* A cancel's card once accounting has its end. */
			if (tracker_settle(st, r, j, res) && !awaits_accounting(r->state, r->native,
			    r->backend_ref))
				tracker_make_card(c, st, t->cl, r, 0);
		}
		row = tracker_row_add(res);
		tracker_row_fill(row, r, j, r->state == TAO_RUNNING && r->results_dir != NULL
		    ? reported(t, r) : NULL);
		if (r->state == TAO_RUNNING && r->results_dir != NULL)
			row->curves = curves_of_job(t, r);
		if (j == NULL && r->state == TAO_RUNNING && r->backend_ref != NULL &&
		    res->scheduler_ok && t->primed) {
			/* Gone from the queue, not yet in accounting: the job is
			 * ending. Its time at the last change is not its time now,
			 * and its nodes are no longer its own to sample. */
			row->ending = 1;
			row->elapsed[0] = '\0';
			row->elapsed_s = -1;
			free(row->message);
			row->message = xstrdup("SLURM has ended the job: its end awaits accounting");
		}
	}
}

/* The records shown, taken again from the index when it moved, and the
 * page of the finished ones with them. */
static void take_records(struct tracker *t, struct rec_index *ix)
{
	if (t->selected && recindex_version(ix) == t->ix_version && t->pg != NULL)
		return;
	t->ix_version = recindex_version(ix);
	tracker_select_records(t, ix);
	tracker_page_update(t, ix);
}

static void disk_row(const struct rec_meta *m, void *arg)
{
	tracker_row_of_meta(arg, m);
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
	res->page = tracker_page_ref(t->pg);
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
	tracker_cache_records(t, st);
	slurm_nonce(nonce);
	cmd = poll_command(t, nonce, &nids, &which, &nwhich);
	rc = poll_run(t, c, cmd, nonce, which, nwhich, &p, &remote_us, err);
	free(cmd);
	free(which);
	if (rc != 0)
		return -1;
	poll_note(t, res, &p, nids);
	tracker_jobmap_build(&jm, &p);
	rows_reserve(res, t->nsel + t->nseen + p.n + 1);
	own_rows(t, c, st, res, &jm);
	prune_progress(t);
	tracker_foreign_rows(t, res, &p, &jm, ix);
	tracker_jobmap_free(&jm);
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
		tracker_row_clear(&p->rows[i]);
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
		tracker_row_clear(&p->rows[i]);
	free(p->rows);
	tracker_page_unref(p->page);
	for (i = 0; i < p->changes; i++) {
		free(p->events[i].record_id);
		free(p->events[i].native);
		free(p->events[i].what);
	}
	free(p->events);
	free(p->problem);
	memset(p, 0, sizeof(*p));
}

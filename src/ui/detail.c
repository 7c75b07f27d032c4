#include "ui/detail.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/logs/roles.h"
#include "engine/slurm/duration.h"
#include "engine/store/record.h"
#include "engine/slurm/state.h"
#include "engine/submit/submit.h"
#include "engine/track/tracker.h"
#include "engine/track/usage.h"
#include "engine/watch/watch.h"
#include "ui/logpane.h"
#include "util/buf.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

#define FILE_LINES_MAX	400	/* of one file shown */

/* A Cosmos-RL job's roles' exit-code files (engine/logs/roles.h), added
 * to *v after its two files: each ended role left one. */
static size_t role_codes(const struct job_record *r, char ***v)
{
	struct role_state *rs;
	size_t n = roles_of(r, &rs), i, k = 0;

	for (i = 0; i < n; i++) {
		if (rs[i].log == NULL)
			continue;
		*v = xreallocarray(*v, 2 + k + 1, sizeof(**v));
		(*v)[2 + k++] = xasprintf("%.*s.rc", (int)(strlen(rs[i].log) - 4), rs[i].log);
	}
	roles_free(rs, n);
	return k;
}

/* Whether path is a role's exit-code file (shown as the role's state, not
 * as a file). */
static int is_role_code(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && strcmp(path + n - 3, ".rc") == 0;
}

size_t detail_paths(const struct job_record *r, char ***out)
{
	char *job_dir = r != NULL ? submit_job_dir(r) : NULL, **v;

	*out = NULL;
	if (job_dir == NULL)
		return 0;
	/* A retry runs the sbatch its chain's first job staged. */
	v = xcalloc(2, sizeof(*v));
	v[0] = submit_staged_sbatch(r);
	v[1] = xasprintf("%s/specs/spec.yaml", job_dir);
	free(job_dir);
	*out = v;
	return 2 + role_codes(r, out);
}

/* Scaled to the values shown, or (percent) to 0..100 itself: an idle
 * stretch then stays low however busy the rest was. A NaN or an infinity
 * (a diverging loss as TAO writes it) is a gap. */
static char *sparkline(const double *v, size_t n, size_t width, int utf8, int percent)
{
	static const char *const blocks[] = { "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
	    "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88" };
	static const char ascii[] = "_.:-=+*#";
	size_t from = n > width ? n - width : 0, i;
	double lo = 0, hi = 0;
	int seen = 0;
	struct buf b;

	buf_init(&b);
	for (i = from; i < n && !percent; i++) {
		if (!isfinite(v[i]))
			continue;
		if (!seen || v[i] < lo)
			lo = v[i];
		if (!seen || v[i] > hi)
			hi = v[i];
		seen = 1;
	}
	if (percent)
		hi = 100;
	for (i = from; i < n; i++) {
		int k;
		if (!isfinite(v[i])) {
			buf_addc(&b, ' ');
			continue;
		}
		k = hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7.0 + 0.5) : 3;
		if (k < 0)
			k = 0;
		if (k > 7)
			k = 7;
		if (utf8)
			buf_adds(&b, blocks[k]);
		else
			buf_addc(&b, ascii[k]);
	}
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_detach(&b);
}

char *detail_sparkline(const double *v, size_t n, size_t width, int utf8)
{
	return sparkline(v, n, width, utf8, 0);
}

struct lines {
	char	**v;
	size_t	  n;
};

static void add(struct lines *l, char *line)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = line;
}

static void stamp(time_t t, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

/* The file's lines, sanitised: it comes from the cluster. */
static void add_file(struct lines *l, const struct watch_file *f)
{
	struct buf clean;
	char *p;
	size_t shown = 0;

	add(l, xstrdup(""));
	add(l, xasprintf("--- %s", f->path));
	if (f->text == NULL) {
		add(l, xasprintf("    (%s)", f->error ? f->error : "not read"));
		return;
	}
	buf_init(&clean);
	sanitize_append(&clean, f->text, strlen(f->text));
	if (clean.data == NULL)
		buf_adds(&clean, "");
	/* Line by line, blank lines kept. */
	for (p = clean.data; *p != '\0' || p == clean.data; ) {
		size_t len = strcspn(p, "\n");
		if (shown++ == FILE_LINES_MAX) {
			add(l, xstrdup("    ... (cut)"));
			break;
		}
		add(l, xasprintf("    %.*s", (int)len, p));
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	buf_free(&clean);
}

char *detail_percent_sparkline(const unsigned char *v, size_t n, size_t width, int utf8)
{
	double d[USE_HIST];
	size_t i, from = n > width ? n - width : 0;

	if (n - from > USE_HIST)
		from = n - USE_HIST;
	for (i = from; i < n; i++)
		d[i - from] = v[i];
	return sparkline(d, n - from, width, utf8, 1);
}

/* "used/total GiB" of one GPU, "n/a" for what nvidia-smi cannot read. */
static void detail_gib(char *buf, size_t len, int used, int total)
{
	char a[16] = "n/a", b[16] = "n/a";

	if (used != USE_UNKNOWN)
		snprintf(a, sizeof(a), "%.1f", used / 1024.0);
	if (total != USE_UNKNOWN)
		snprintf(b, sizeof(b), "%.1f", total / 1024.0);
	snprintf(buf, len, "%s/%s GiB", a, b);
}

/* GPU use: a bar per GPU, the sparkline of the rounds, the node's CPU. */
static void add_use(struct lines *l, const struct job_use *u, int utf8)
{
	struct buf e;
	char when[32], mem[32], pct[64];
	int g;

	if (!u->ok && u->ngpu == 0) {
		buf_init(&e);
		sanitize_append_line(&e, u->error, strlen(u->error));
		add(l, xasprintf("GPU use: not read yet: %s", e.data ? e.data : "?"));
		buf_free(&e);
		return;
	}
	stamp(u->at, when, sizeof(when));
	use_mem_text(u, mem, sizeof(mem));
	if (use_mean_util(u) == USE_UNKNOWN)
		snprintf(pct, sizeof(pct), "n/a (nvidia-smi cannot read it here: MIG?)");
	else
		snprintf(pct, sizeof(pct), "%d %% mean", use_mean_util(u));
	add(l, xasprintf("GPU use: %s over %d GPU%s, memory %s, at %s%s%s", pct,
	    u->ngpu, u->ngpu == 1 ? "" : "s", mem, when, u->idle ? "  IDLE" : "",
	    u->stalled ? "  PROGRESS STOPPED" : ""));
	for (g = 0; g < u->ngpu; g++) {
		const struct gpu_reading *r = &u->gpu[g];
		char bar[21], node[40], one[8], m[40];
		int i, fill = r->util == USE_UNKNOWN ? 0 : r->util * 20 / 100;
		struct buf n;
		for (i = 0; i < 20; i++)
			bar[i] = r->util == USE_UNKNOWN ? '?' : i < fill ? '#' : '.';
		bar[20] = '\0';
		buf_init(&n);
		sanitize_append_line(&n, r->node, strnlen(r->node, sizeof(r->node)));
		snprintf(node, sizeof(node), "%s", n.data ? n.data : "");
		buf_free(&n);
		if (r->util == USE_UNKNOWN)
			snprintf(one, sizeof(one), "n/a");
		else
			snprintf(one, sizeof(one), "%3d %%", r->util);
		detail_gib(m, sizeof(m), r->mem_used, r->mem_total);
		add(l, xasprintf("  gpu%-2d %-10s [%s] %5s  %s", r->index, node, bar, one, m));
	}
	if (u->nhist > 0) {
		char *spark = detail_percent_sparkline(u->hist, u->nhist, 60, utf8);
		add(l, xasprintf("GPU %% per round: %s  (last %d %%)", spark, u->hist[u->nhist - 1]));
		free(spark);
	}
	add(l, xasprintf("CPU: load %.2f, %.1f GiB resident", u->load, u->rss_kib / 1048576.0));
	if (!u->ok) {
		buf_init(&e);
		sanitize_append_line(&e, u->error, strlen(u->error));
		add(l, xasprintf("  (not read this round: %s)", e.data ? e.data : "?"));
		buf_free(&e);
	}
}

/* What the jobs list knows of the job: state, resources, progress. */
static void add_row(struct lines *l, const struct job_record *r, const struct job_row *row,
    const char *cluster, int utf8)
{
	add(l, xasprintf("%s   cluster %s   SLURM job %s", r ? r->id : (row->shown_id[0] ?
	    row->shown_id : row->slurm_id), cluster, row->slurm_id[0] ? row->slurm_id : "-"));
	add(l, xasprintf("state: %s%s%s%s", tracker_row_label(row), row->native ? " (" : "",
	    row->native ? row->native : "", row->native ? ")" : ""));
	if (r != NULL && r->name != NULL)
		add(l, xasprintf("name: %s   what: %s %s", r->name, r->network_arch ?
		    r->network_arch : "-", r->action ? r->action : "-"));
	else if (row->name != NULL)
		add(l, xasprintf("what: %s", row->name));
	if (row->partition != NULL || row->nodes > 0) {
		char gpus[32];
		if (row->gpus_known && row->nodes > 0)
			snprintf(gpus, sizeof(gpus), "%d GPU%s", row->gpus / row->nodes,
			    row->gpus / row->nodes == 1 ? "" : "s");
		else
			snprintf(gpus, sizeof(gpus), "? GPUs");
		add(l, xasprintf("resources: %s, %d node%s x %s, used %s of %s%s%s",
		    row->partition ? row->partition : "?", row->nodes, row->nodes == 1 ? "" : "s",
		    gpus, row->elapsed[0] ? row->elapsed : "-", row->limit[0] ? row->limit : "-",
		    row->exit_code[0] ? ", exit code " : "", row->exit_code));
	}
	if (row->message != NULL)
		add(l, xasprintf("latest: %s", row->message));
	if (row->epoch >= 0 && row->max_epoch > 0) {
		char seg[32] = "";
		/* As the row and status say it: only a run of segments. */
		if (row->segments > 1)
			snprintf(seg, sizeof(seg), ", segment %d", row->segments);
		add(l, xasprintf("progress: epoch %d of %d%s%s%s", row->epoch, row->max_epoch, seg,
		    row->eta[0] ? ", ETA " : "", row->eta));
		if (row->segments_more > 0) {
			char eta[32];
			duration_format(row->eta_total_s, eta, sizeof(eta));
			add(l, xasprintf("segments: about %d more after this one; ETA over them %s "
			    "(TAO's, plus the queue's mean wait between segments)", row->segments_more,
			    eta));
		}
		if (row->nseries > 0) {
			char *spark = detail_sparkline(row->series, row->nseries, 60, utf8);
			add(l, xasprintf("%s per epoch: %s  (last %g)", row->metric[0] ? row->metric
			    : "metric", spark, row->series[row->nseries - 1]));
			free(spark);
		}
	}
}

/* What only the record knows: where things are, the retry chain, the
 * failure's verdict, every transition. */
static void add_record(struct lines *l, const struct job_record *r)
{
	char when[32];
	size_t i;

	if (r->image != NULL)
		add(l, xasprintf("image: %s", r->image));
	if (r->results_dir != NULL)
		add(l, xasprintf("results: %s", r->results_dir));
	if (r->log_dir != NULL)
		add(l, xasprintf("logs: %s/%s-%s/", r->log_dir, r->id, r->backend_ref ?
		    r->backend_ref : "<id>"));
	/* A run that requeued itself at its child timeout: each segment, and
	 * its time in the queue after the one before. */
	for (i = 0; r->nseg > 1 && i < r->nseg; i++) {
		const struct record_segment *s = &r->seg[i];
		char from[16] = "-", to[16] = "-", queued[32] = "", epochs[48] = "";
		struct tm tm;
		if (s->start != 0 && localtime_r(&s->start, &tm) != NULL)
			strftime(from, sizeof(from), "%H:%M:%S", &tm);
		if (s->end != 0 && localtime_r(&s->end, &tm) != NULL)
			strftime(to, sizeof(to), "%H:%M:%S", &tm);
		if (i > 0 && s->start != 0 && r->seg[i - 1].end != 0 && s->start >= r->seg[i - 1].end)
			snprintf(queued, sizeof(queued), ", queued %lds",
			    (long)(s->start - r->seg[i - 1].end));
		if (s->epoch_end >= 0)
			snprintf(epochs, sizeof(epochs), ", to epoch %d", s->epoch_end);
		add(l, xasprintf("segment %d: %s..%s %s%s%s%s%s", s->n, from, to,
		    s->outcome[0] ? s->outcome : "running", epochs, queued,
		    s->resumed_from ? ", from " : "", s->resumed_from ? s->resumed_from : ""));
	}
	if (r->retry_of != NULL || r->retried_as != NULL)
		add(l, xasprintf("retry chain: %s%s%s%s%s", r->retry_of ? r->retry_of : "",
		    r->retry_of ? " -> " : "", r->id, r->retried_as ? " -> " : "",
		    r->retried_as ? r->retried_as : ""));
	/* A retry: the checkpoint of the run it retries that it resumes from. */
	if (r->retry_of != NULL && r->resume_dir != NULL)
		add(l, r->resume_checkpoint != NULL
		    ? xasprintf("resumes from %s (the newest checkpoint in %s)", r->resume_checkpoint,
		    r->resume_dir)
		    : xasprintf("starts from the start: no checkpoint in %s", r->resume_dir));
	/* The nodes its sbatch kept away from, and why. */
	for (i = 0; i < r->nexclude; i++)
		add(l, xasprintf("excluded node %s%s%s%s%s", r->exclude[i].node,
		    r->exclude[i].from ? ": " : "", r->exclude[i].from ? r->exclude[i].from : "",
		    r->exclude[i].evidence ? " failed there: " : "",
		    r->exclude[i].evidence ? r->exclude[i].evidence : ""));
	/* The failure's verdict, when the engine wrote one. */
	for (i = r->nhist; i-- > 0;) {
		const char *m = r->hist[i].message;
		if (m != NULL && strncmp(m, "failure: ", 9) == 0) {
			add(l, xasprintf("failure: %s", m + 9));
			break;
		}
	}
	add(l, xstrdup(""));
	add(l, xstrdup("Transitions:"));
	for (i = 0; i < r->nhist; i++) {
		const struct transition *t = &r->hist[i];
		stamp(t->at, when, sizeof(when));
		if (t->from != t->to)
			add(l, xasprintf("  %s  %s -> %s%s%s%s  %s", when, tao_state_name(t->from),
			    tao_state_name(t->to), t->native ? " (" : "", t->native ? t->native : "",
			    t->native ? ")" : "", t->message ? t->message : ""));
		else
			add(l, xasprintf("  %s  %s", when, t->message ? t->message : ""));
	}
}

/* A Cosmos job's backend and status file; a Cosmos-RL job's roles, each
 * its state (an ended role's exit code, from the files fetched) and log. */
static void add_roles(struct lines *l, const struct job_record *r, const struct watch_file *files,
    size_t nfiles)
{
	struct role_state *rs;
	size_t n, i, k;

	if (r->cosmos == NULL)
		return;
	{
		/* Its status file, named from the results folder above. */
		const char *sd = r->tao_results_dir;
		size_t rl = r->results_dir ? strlen(r->results_dir) : 0;
		if (sd != NULL && rl > 0 && strncmp(sd, r->results_dir, rl) == 0 && sd[rl] == '/')
			sd += rl + 1;
		add(l, xasprintf("cosmos: %s; its status: %s/status.json%s",
		    strcmp(r->cosmos, "rl") == 0 ? "Cosmos-RL (a controller and replicas)"
		    : "Cosmos Framework (torchrun per node)", sd ? sd : "?",
		    sd != r->tao_results_dir ? " in the results folder" : ""));
	}
	n = roles_of(r, &rs);
	for (i = 0; i < n; i++) {
		char state[48];
		snprintf(state, sizeof(state), "%s", rs[i].state);
		for (k = 0; rs[i].log != NULL && k < nfiles; k++) {
			size_t ll = strlen(rs[i].log) - 4;
			if (files[k].text == NULL || strncmp(files[k].path, rs[i].log, ll) != 0 ||
			    strcmp(files[k].path + ll, ".rc") != 0)
				continue;
			rs[i].rc = atoi(files[k].text);
			if (rs[i].rc == 0)
				snprintf(state, sizeof(state), "done");
			else
				snprintf(state, sizeof(state), "failed, exit code %d", rs[i].rc);
		}
		/* The file's name: the logs line above has its folder. */
		add(l, xasprintf("role %-12s %-22s %s", rs[i].name, state, rs[i].log
		    ? strrchr(rs[i].log, '/') + 1 : "(its log once launched)"));
	}
	if (n > 0)
		add(l, xstrdup("  (each role's log is in the logs folder: taotop logs --role NAME "
		    "JOB)"));
	roles_free(rs, n);
}

size_t detail_lines(const struct job_record *r, const struct job_row *row, const char *cluster,
    const struct job_use *use, const struct watch_file *files, size_t nfiles,
    long long fetching_ms, int utf8, char ***out)
{
	struct lines l = { NULL, 0 };
	size_t i;

	add_row(&l, r, row, cluster, utf8);
	if (use != NULL)
		add_use(&l, use, utf8);
	if (r != NULL && r->has_card) {
		/* What the allocation was worth, once it ended. */
		char **cl;
		size_t ncl = card_lines(&r->card, &cl);
		add(&l, xstrdup("Efficiency:"));
		for (i = 0; i < ncl; i++)
			add(&l, cl[i]);
		free(cl);
	}
	if (r == NULL) {
		add(&l, xstrdup(""));
		add(&l, xstrdup("Not a taotop job: no record, no staged files."));
		*out = l.v;
		return l.n;
	}
	add_record(&l, r);
	if (fetching_ms >= LOGPANE_SLOW_MS)
		add(&l, xasprintf("\n(reading the staged sbatch and spec from the cluster %s %lld s)",
		    logpane_spinner(fetching_ms), fetching_ms / 1000));
	else if (fetching_ms >= 0)
		add(&l, xstrdup("\n(reading the staged sbatch and spec from the cluster...)"));
	add_roles(&l, r, files, nfiles);
	for (i = 0; i < nfiles; i++)
		if (!is_role_code(files[i].path))
			add_file(&l, &files[i]);
	*out = l.v;
	return l.n;
}

#include "engine/track/usage.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/store.h"
#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/xmalloc.h"

/* What runs on each of a job's nodes, inside its allocation: GPU lines
 * ("G node idx, util, used, total"), or "X node" without nvidia-smi; then
 * "C node load rss_kib when" (when: the node's clock, seconds). The GPUs
 * asked about are the job's own (-i: the step's CUDA_VISIBLE_DEVICES,
 * which SLURM sets from the job's allocation): nvidia-smi lists every GPU
 * of the node unless the site constrains devices, and a neighbour's busy
 * GPU is not this job's use. */
static const char probe[] =
	"h=${SLURMD_NODENAME:-$(hostname)}\n"
	"if command -v nvidia-smi >/dev/null 2>&1; then\n"
	"  nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total"
	" --format=csv,noheader,nounits ${CUDA_VISIBLE_DEVICES:+-i \"$CUDA_VISIBLE_DEVICES\"}"
	" 2>&1 | sed \"s/^/G $h /\"\n"
	"else echo \"X $h\"; fi\n"
	"echo \"C $h $(cut -d' ' -f1 /proc/loadavg) $(ps -u \"$(id -u)\" -o rss= | "
	"awk '{s+=$1} END {print s+0}') $(date +%s)\"\n";

#define USE_AT_ONCE	10	/* jobs' steps started together */
#define USE_RSS_MAX	(1L << 50)	/* KiB: an exbibyte, more than any job */

int use_id_ok(const char *id)
{
	size_t i;

	if (id == NULL || id[0] == '\0' || strlen(id) > 20)
		return 0;
	for (i = 0; id[i] != '\0'; i++)
		if (!isdigit((unsigned char)id[i]))
			return 0;
	return 1;
}

char *use_command(const struct use_job *jobs, size_t n, const char *nonce)
{
	struct buf b;
	size_t i, k;

	buf_init(&b);
	buf_addf(&b, "n=%s; d=$(mktemp -d) || exit 1\np=", nonce);
	sh_quote_buf(&b, probe, strlen(probe));
	/* Every job at once, each into its own file: a slow node costs one
	 * timeout, not one per job, and the answers never interleave. */
	buf_addf(&b, "\ns() { timeout %d srun --overlap --jobid=\"$1\" -N \"$2\" "
	    "--ntasks-per-node=1 --quiet sh -c \"$p\" > \"$d/$1\" 2>&1; echo \"R $?\" >> \"$d/$1\"; }\n",
	    USE_STEP_TIMEOUT_S);
	for (i = 0, k = 0; i < n; i++) {
		if (!use_id_ok(jobs[i].slurm_id))
			continue;
		/* USE_AT_ONCE steps at a time: fifty sruns at once would load
		 * the login node and slurmctld in a burst. */
		if (k++ > 0 && k % USE_AT_ONCE == 1)
			buf_adds(&b, "wait\n");
		buf_addf(&b, "s %s %d &\n", jobs[i].slurm_id, jobs[i].nodes > 0 ? jobs[i].nodes : 1);
	}
	buf_adds(&b, "wait\nfor j in");
	for (i = 0; i < n; i++)
		if (use_id_ok(jobs[i].slurm_id))
			buf_addf(&b, " %s", jobs[i].slurm_id);
	buf_adds(&b, "; do sed \"s/^/$n $j /\" \"$d/$j\"; done\nrm -rf \"$d\"\n");
	return buf_detach(&b);
}

#define BEHIND_MARK "@@taotop-gpu-started"

char *use_command_behind(const struct use_job *jobs, size_t n, const char *nonce, const char *key)
{
	char *round = use_command(jobs, n, nonce);
	struct buf b;

	/* Print the answer the last round left, then start this one in the
	 * background, detached from the channel (every descriptor elsewhere),
	 * one at a time: while one still runs (flock, where there is one),
	 * none is started, and the marker line says whether one was. The
	 * files are in the user's own folder, not a shared /tmp; those of
	 * monitors gone for a day are removed. The round runs niced: the
	 * login node is shared, and the next poll's squeue goes first. */
	buf_init(&b);
	buf_addf(&b, "umask 077; d0=\"$HOME/.cache/taotop\"; mkdir -p \"$d0\" || exit 1\n"
	    "f=\"$d0/gpu-%s\"\n"
	    "find \"$d0\" -maxdepth 1 -name 'gpu-*' -mmin +1440 -exec rm -f {} + 2>/dev/null\n"
	    "cat \"$f.out\" 2>/dev/null; rm -f \"$f.out\"\nr=", key);
	sh_quote_buf(&b, round, strlen(round));
	buf_addf(&b, "\nexec 9>>\"$f.lock\"; touch \"$f.lock\"\n"
	    "if ! command -v flock >/dev/null 2>&1 || flock -n 9; then\n"
	    "  ( nice -n 10 sh -c \"$r\" > \"$f.tmp\" 2>/dev/null && mv -f \"$f.tmp\" \"$f.out\" ) "
	    "</dev/null >/dev/null 2>&1 &\n  echo \"" BEHIND_MARK " %s\"\nfi\n", nonce);
	free(round);
	return buf_detach(&b);
}

void use_round_free(struct use_round *r)
{
	free(r->jobs);
	free(r->unavailable);
	memset(r, 0, sizeof(*r));
}

static void set_error(struct job_use *u, const char *text, size_t len)
{
	if (u->error[0] != '\0')
		return;
	if (len >= sizeof(u->error))
		len = sizeof(u->error) - 1;
	memcpy(u->error, text, len);
	u->error[len] = '\0';
}

/* What use_parse counts per job while it reads the lines, then judges. */
struct tally {
	int	*gpu_lines;	/* readings per job */
	int	*smi_missing;	/* the job's node has no nvidia-smi */
	int	*rc;		/* srun's exit code per job, -1: none came */
	char	*no_smi_node;	/* a node without it, for the status bar */
	int	 no_overlap;	/* srun has no --overlap */
};

/* The text after a line's two-letter tag, cut to fit rest. */
static void tag_rest(const char *p, const char *end, char *rest, size_t cap)
{
	size_t k = (size_t)(end - p - 2) < cap - 1 ? (size_t)(end - p - 2) : cap - 1;

	memcpy(rest, p + 2, k);
	rest[k] = '\0';
}

/* One CSV field of nvidia-smi's: a number in [0, max], or USE_UNKNOWN for
 * the words it prints where a device cannot say ("[N/A]", "[Not
 * Supported]", with nounits as without). -2: neither. */
static int gpu_field(const char *s, int max)
{
	char *e;
	long v;

	while (*s == ' ')
		s++;
	if (strcmp(s, "[N/A]") == 0 || strcmp(s, "[Not Supported]") == 0 || strcmp(s, "N/A") == 0)
		return USE_UNKNOWN;
	if (*s < '0' || *s > '9')
		return -2;
	v = strtol(s, &e, 10);
	while (*e == ' ')
		e++;
	return *e == '\0' && v <= max ? (int)v : -2;
}

/* "index, util, mem_used, mem_total" into g; -1 when it is not that. */
static int gpu_csv(char *csv, struct gpu_reading *g)
{
	int *to[4] = { &g->index, &g->util, &g->mem_used, &g->mem_total };
	static const int max[4] = { 1023, 100, 1 << 30, 1 << 30 };
	char *f = csv;
	int k;

	for (k = 0; k < 4; k++) {
		char *comma = strchr(f, ',');
		if ((comma == NULL) != (k == 3))
			return -1;
		if (comma != NULL)
			*comma = '\0';
		*to[k] = gpu_field(f, max[k]);
		if (*to[k] == -2 || (k == 0 && *to[k] < 0))
			return -1;
		f = comma != NULL ? comma + 1 : f;
	}
	return 0;
}

/* "G node index, util, mem_used, mem_total", or nvidia-smi's complaint. */
static void parse_gpu(struct job_use *u, const char *p, const char *end, int *lines)
{
	char node[32] = "", rest[96], csv[96];
	struct gpu_reading g;
	int at = 0;

	tag_rest(p, end, rest, sizeof(rest));
	memset(&g, 0, sizeof(g));
	if (sscanf(rest, "%31s %n", node, &at) == 1 && at > 0 &&
	    snprintf(csv, sizeof(csv), "%s", rest + at) < (int)sizeof(csv) && gpu_csv(csv, &g) == 0) {
		memcpy(g.node, node, sizeof(g.node));
		if (u->ngpu < USE_MAX_GPUS)
			u->gpu[u->ngpu++] = g;
		(*lines)++;
	} else {
		/* nvidia-smi's own complaint ("No devices were
		 * found", a driver mismatch): the job's error. */
		const char *s = strchr(rest, ' ');
		s = s != NULL ? s + 1 : rest;
		set_error(u, s, strlen(s));
	}
}

/* A host name from an "X node" line, for the status bar: nothing else. */
static char *node_name(const char *p, const char *end)
{
	size_t k, o = 0;
	char *name = xstrndup(p + 2, (size_t)(end - p - 2) > 64 ? 64 : (size_t)(end - p - 2));

	for (k = 0; name[k] != '\0'; k++)
		if (isalnum((unsigned char)name[k]) || strchr("._-", name[k]) != NULL)
			name[o++] = name[k];
	name[o] = '\0';
	return name;
}

/* "C node load rss_kib [when]": the job's CPU load and memory. */
static void parse_cpu(struct job_use *u, const char *p, const char *end)
{
	char node[32], rest[96];
	double load = 0;
	long rss = 0;
	long long when = 0;
	int got;

	tag_rest(p, end, rest, sizeof(rest));
	got = sscanf(rest, "%31s %lf %ld %lld", node, &load, &rss, &when);
	if (got >= 3 && load >= 0 && rss >= 0) {
		if (u->rss_kib == 0 && u->load == 0)
			u->load = load;
		/* Saturating: a node's answer is not trusted to add up. */
		u->rss_kib = rss > USE_RSS_MAX - u->rss_kib ? USE_RSS_MAX : u->rss_kib + rss;
		/* When it was read (a round behind is that old), if
		 * the node's clock says something sane. */
		if (got == 4 && when > 1000000000LL && when < 32503680000LL)
			u->at = (time_t)when;
	}
}

/* One line "NONCE slurm_id TAG ..." (p to end) into its job's use. */
static void parse_line(const char *p, const char *end, const char *nonce,
    const struct use_job *jobs, size_t n, struct use_round *r, struct tally *ty)
{
	size_t nl = strlen(nonce), idl, i;
	struct job_use *u;

	if ((size_t)(end - p) <= nl + 1 || strncmp(p, nonce, nl) != 0 || p[nl] != ' ')
		return;
	p += nl + 1;
	idl = strcspn(p, " ");
	for (i = 0; i < n; i++)
		if (strlen(jobs[i].slurm_id) == idl && strncmp(jobs[i].slurm_id, p, idl) == 0)
			break;
	if (i == n || p + idl >= end)
		return;
	u = &r->jobs[i];
	p += idl + 1;
	if (end - p > 2 && p[0] == 'G' && p[1] == ' ') {
		parse_gpu(u, p, end, &ty->gpu_lines[i]);
	} else if (end - p >= 1 && p[0] == 'X') {
		ty->smi_missing[i] = 1;
		if (ty->no_smi_node == NULL && end - p > 2)
			ty->no_smi_node = node_name(p, end);
	} else if (end - p > 2 && p[0] == 'C' && p[1] == ' ') {
		parse_cpu(u, p, end);
	} else if (end - p > 2 && p[0] == 'R' && p[1] == ' ') {
		ty->rc[i] = atoi(p + 2);
	} else {
		/* srun's own words. */
		if (strstr(p, "unrecognized option") != NULL && strstr(p, "overlap") != NULL)
			ty->no_overlap = 1;
		set_error(u, p, (size_t)(end - p));
	}
}

/* A job that gave no reading: its error, from what srun said or did. */
static void explain(struct job_use *u, int rc, int smi_missing)
{
	char why[80];

	if (u->error[0] == '\0') {
		if (rc == 124)
			snprintf(why, sizeof(why), "no answer from its nodes in %d s",
			    USE_STEP_TIMEOUT_S);
		else if (smi_missing)
			snprintf(why, sizeof(why), "nvidia-smi is not on its node");
		else if (rc < 0)
			snprintf(why, sizeof(why), "no answer");
		else
			snprintf(why, sizeof(why), "srun exited %d", rc);
		set_error(u, why, strlen(why));
	}
	u->error[strcspn(u->error, "\r")] = '\0';
}

/* Each job's verdict, then the round's: a cause shared by every job asked. */
static void judge(const struct use_job *jobs, size_t n, struct use_round *r,
    const struct tally *ty)
{
	size_t i, no_smi = 0, asked = 0, missing_tool = 0;

	for (i = 0; i < n; i++) {
		struct job_use *u = &r->jobs[i];
		if (!use_id_ok(jobs[i].slurm_id)) {
			set_error(u, "not a plain job id", 18);
			continue;
		}
		asked++;
		u->ok = ty->gpu_lines[i] > 0;
		if (ty->smi_missing[i] && !u->ok)
			no_smi++;
		if (ty->rc[i] == 127 && !u->ok)
			missing_tool++;
		if (!u->ok)
			explain(u, ty->rc[i], ty->smi_missing[i]);
	}
	if (ty->no_overlap)
		r->unavailable = xstrdup("srun has no --overlap here (SLURM before 20.11): "
		    "the jobs' nodes cannot be asked");
	else if (asked > 0 && no_smi == asked)
		r->unavailable = xasprintf("nvidia-smi is not on the nodes' PATH (%s)",
		    ty->no_smi_node != NULL ? ty->no_smi_node : "?");
	else if (asked > 0 && missing_tool == asked)
		r->unavailable = xstrdup("srun or timeout is not on the login node's PATH");
}

void use_parse(const char *out, const char *nonce, const struct use_job *jobs, size_t n,
    struct use_round *r)
{
	struct tally ty = {
		.gpu_lines = xcalloc(n + 1, sizeof(int)),
		.smi_missing = xcalloc(n + 1, sizeof(int)),
		.rc = xcalloc(n + 1, sizeof(int)),
	};
	const char *l;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->jobs = xcalloc(n + 1, sizeof(*r->jobs));
	r->n = n;
	for (i = 0; i < n; i++) {
		snprintf(r->jobs[i].slurm_id, sizeof(r->jobs[i].slurm_id), "%s", jobs[i].slurm_id);
		ty.rc[i] = -1;
		r->jobs[i].at = time(NULL);
	}
	for (l = out != NULL ? out : ""; *l != '\0';) {
		size_t len = strcspn(l, "\n");

		parse_line(l, l + len, nonce, jobs, n, r, &ty);
		l += len + (l[len] == '\n');
	}
	judge(jobs, n, r, &ty);
	free(ty.no_smi_node);
	free(ty.gpu_lines);
	free(ty.smi_missing);
	free(ty.rc);
}

int use_sample(struct conn *c, const struct use_job *jobs, size_t n, struct use_round *r,
    char **err)
{
	char nonce[SLURM_NONCE_LEN + 1], *cmd;
	struct conn_exec x;

	memset(r, 0, sizeof(*r));
	slurm_nonce(nonce);
	cmd = use_command(jobs, n, nonce);
	conn_exec_init(&x, cmd);
	/* The steps run at once, each bounded: the whole round too. */
	x.timeout_ms = (USE_STEP_TIMEOUT_S + 10) * 1000;
	x.out_cap = 4u << 20;
	if (conn_exec(c, &x, err) != CONN_OK) {
		conn_exec_free(&x);
		free(cmd);
		return -1;
	}
	use_parse(x.out.data, nonce, jobs, n, r);
	if (x.exit_status != 0 && r->unavailable == NULL)
		log_msg(LOG_WARN, "usage: the sampling command exited %d", x.exit_status);
	conn_exec_free(&x);
	free(cmd);
	return 0;
}

int use_mean_util(const struct job_use *u)
{
	int i, sum = 0, n = 0;

	for (i = 0; i < u->ngpu; i++) {
		if (u->gpu[i].util == USE_UNKNOWN)
			continue;
		sum += u->gpu[i].util;
		n++;
	}
	if (n == 0)
		return u->ngpu > 0 ? USE_UNKNOWN : 0;
	return (sum + n / 2) / n;
}

void use_mem_text(const struct job_use *u, char *buf, size_t len)
{
	int i, used = USE_UNKNOWN, total = USE_UNKNOWN;
	char a[16] = "n/a", b[16] = "n/a";

	buf[0] = '\0';
	if (u->ngpu <= 0)
		return;
	for (i = 0; i < u->ngpu; i++) {
		if (u->gpu[i].mem_used > used)
			used = u->gpu[i].mem_used;
		if (u->gpu[i].mem_total > total)
			total = u->gpu[i].mem_total;
	}
	if (used != USE_UNKNOWN)
		snprintf(a, sizeof(a), "%.1f", used / 1024.0);
	if (total != USE_UNKNOWN)
		snprintf(b, sizeof(b), "%.1f", total / 1024.0);
	snprintf(buf, len, "%s/%sG", a, b);
}

/* ---- history and flags --------------------------------------------------------------------- */

struct track {
	struct job_use	 u;
	char		*record_id;
	int64_t		 low_since;	/* ms: every GPU below the threshold since; 0 not */
	int		 epoch;		/* the last epoch seen, -1 none */
	int64_t		 epoch_since;	/* ms: that epoch first seen */
};

struct use_tracker {
	struct track	*t;
	size_t		 n;
	char		 key[SLURM_NONCE_LEN + 1];	/* its files on the login node */
	char		 last[SLURM_NONCE_LEN + 1];	/* the round running behind */
};

struct use_tracker *use_tracker_new(void)
{
	struct use_tracker *t = xcalloc(1, sizeof(struct use_tracker));

	slurm_nonce(t->key);
	return t;
}

int use_sample_behind(struct conn *c, struct use_tracker *t, const struct use_job *jobs, size_t n,
    struct use_round *r, int *have, char **err)
{
	char nonce[SLURM_NONCE_LEN + 1], *cmd;
	struct conn_exec x;

	memset(r, 0, sizeof(*r));
	*have = 0;
	slurm_nonce(nonce);
	cmd = use_command_behind(jobs, n, nonce, t->key);
	conn_exec_init(&x, cmd);
	x.timeout_ms = 15000;
	x.out_cap = 4u << 20;
	if (conn_exec(c, &x, err) != CONN_OK) {
		conn_exec_free(&x);
		free(cmd);
		return -1;
	}
	if (t->last[0] != '\0' && x.out.data != NULL && strstr(x.out.data, t->last) != NULL) {
		/* The last round's answer, read against the jobs watched now
		 * (one that ended since is dropped, one new has none yet). */
		use_parse(x.out.data, t->last, jobs, n, r);
		*have = 1;
	}
	{
		/* Started (a line of its own: the answer's lines all begin
		 * with the old nonce), else the last still runs: keep its. */
		char *mark = xasprintf(BEHIND_MARK " %s\n", nonce);
		const char *at = x.out.data != NULL ? strstr(x.out.data, mark) : NULL;
		if (at != NULL && (at == x.out.data || at[-1] == '\n'))
			memcpy(t->last, nonce, sizeof(t->last));
		free(mark);
	}
	conn_exec_free(&x);
	free(cmd);
	return 0;
}

void use_tracker_free(struct use_tracker *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free(t->t[i].record_id);
	free(t->t);
	free(t);
}

void use_events_free(struct use_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(ev[i].record_id);
		free(ev[i].text);
	}
	free(ev);
}

/* "10 min", "45 s", "2 h 5 min". */
static void span_text(long s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%ld s", s);
	else if (s < 3600)
		snprintf(buf, len, "%ld min", s / 60);
	else
		snprintf(buf, len, "%ld h %ld min", s / 3600, s % 3600 / 60);
}

static void add_event(struct use_event **ev, size_t *nev, const struct track *t, char *text)
{
	*ev = xreallocarray(*ev, *nev + 1, sizeof(**ev));
	snprintf((*ev)[*nev].slurm_id, sizeof((*ev)[*nev].slurm_id), "%s", t->u.slurm_id);
	(*ev)[*nev].record_id = t->record_id != NULL ? xstrdup(t->record_id) : NULL;
	(*ev)[*nev].text = text;
	(*nev)++;
}

/* job's track carried over from t (taken there), or a new one. */
static void carry_track(struct use_tracker *t, const struct use_job *job, struct track *tr)
{
	size_t k;

	for (k = 0; k < t->n; k++) {
		if (t->t[k].u.slurm_id[0] != '\0' && strcmp(t->t[k].u.slurm_id, job->slurm_id) == 0) {
			*tr = t->t[k];
			t->t[k].record_id = NULL;
			t->t[k].u.slurm_id[0] = '\0';	/* taken */
			return;
		}
	}
	snprintf(tr->u.slurm_id, sizeof(tr->u.slurm_id), "%s", job->slurm_id);
	tr->record_id = job->record_id != NULL ? xstrdup(job->record_id) : NULL;
	tr->epoch = -1;
}

/* This round's readings into tr (the history and flags stay), the mean
 * utilisation into the history, and when the GPUs went low or came back. */
static void take_readings(struct track *tr, const struct job_use *got,
    const struct use_limits *lim, int64_t now_ms)
{
	int top = USE_UNKNOWN, g, mean;

	tr->u.ok = got->ok;
	memcpy(tr->u.error, got->error, sizeof(tr->u.error));
	tr->u.at = got->at;
	if (!got->ok)
		return;
	tr->u.ngpu = got->ngpu;
	memcpy(tr->u.gpu, got->gpu, sizeof(tr->u.gpu));
	tr->u.load = got->load;
	tr->u.rss_kib = got->rss_kib;
	if (got->ngpu <= 0)
		return;
	for (g = 0; g < got->ngpu; g++)
		if (got->gpu[g].util > top)
			top = got->gpu[g].util;
	/* No GPU's use readable (MIG): no history and no idle judgement,
	 * rather than a 0 % that would call a busy job idle. */
	mean = use_mean_util(got);
	if (mean == USE_UNKNOWN) {
		tr->low_since = 0;
		tr->u.idle = 0;
		return;
	}
	if (tr->u.nhist == USE_HIST) {
		memmove(tr->u.hist, tr->u.hist + 1, USE_HIST - 1);
		tr->u.nhist--;
	}
	tr->u.hist[tr->u.nhist++] = (unsigned char)mean;
	if (top < lim->idle_percent) {
		if (tr->low_since == 0)
			tr->low_since = now_ms;
	} else {
		tr->low_since = 0;
		tr->u.idle = 0;
	}
}

/* The idle and stalled flags from how long the GPUs were low and the epoch
 * stood still; an event when one is raised. */
static void raise_flags(struct track *tr, int epoch, const struct use_limits *lim,
    int64_t now_ms, struct use_event **ev, size_t *nev)
{
	char span[32];

	tr->u.idle_for_s = tr->low_since ? (long)((now_ms - tr->low_since) / 1000) : 0;
	if (tr->low_since != 0 && !tr->u.idle && now_ms - tr->low_since >= lim->idle_s * 1000LL) {
		tr->u.idle = 1;
		span_text(tr->u.idle_for_s, span, sizeof(span));
		add_event(ev, nev, tr, xasprintf("GPUs idle: every GPU below %d %% for %s",
		    lim->idle_percent, span));
	}
	/* Progress: TAO's epoch, as the poll last read it. */
	if (epoch < 0) {
		tr->epoch = -1;
		tr->epoch_since = 0;
		tr->u.stalled = 0;
	} else if (epoch != tr->epoch) {
		tr->epoch = epoch;
		tr->epoch_since = now_ms;
		tr->u.stalled = 0;
	}
	tr->u.stalled_for_s = tr->epoch_since ? (long)((now_ms - tr->epoch_since) / 1000) : 0;
	if (tr->epoch >= 0 && !tr->u.stalled && now_ms - tr->epoch_since >= lim->stall_s * 1000LL) {
		tr->u.stalled = 1;
		span_text(tr->u.stalled_for_s, span, sizeof(span));
		add_event(ev, nev, tr, xasprintf("progress stopped: epoch %d for %s", tr->epoch,
		    span));
	}
}

void use_tracker_fold(struct use_tracker *t, const struct use_round *r,
    const struct use_job *jobs, size_t n, const struct use_limits *lim, int64_t now_ms,
    struct job_use **out, size_t *nout, struct use_event **ev, size_t *nev)
{
	struct track *next = xcalloc(n + 1, sizeof(*next));
	size_t i, k;

	*ev = NULL;
	*nev = 0;
	for (i = 0; i < n; i++) {
		carry_track(t, &jobs[i], &next[i]);
		if (i < r->n)
			take_readings(&next[i], &r->jobs[i], lim, now_ms);
		raise_flags(&next[i], jobs[i].epoch, lim, now_ms, ev, nev);
	}
	/* Jobs no longer watched are forgotten. */
	for (k = 0; k < t->n; k++)
		free(t->t[k].record_id);
	free(t->t);
	t->t = next;
	t->n = n;
	*out = xcalloc(n + 1, sizeof(**out));
	for (i = 0; i < n; i++)
		(*out)[i] = next[i].u;
	*nout = n;
}

static int add_note(struct job_record *r, void *arg, char **err)
{
	(void)err;
	if (tao_state_final(r->state))
		return 0;
	record_event(r, arg, "taotop", time(NULL));
	return 1;
}

void use_note_events(struct record_store *st, const struct use_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char *err = NULL;
		if (ev[i].record_id == NULL)
			continue;
		if (store_update(st, ev[i].record_id, add_note, ev[i].text, &err) != 0)
			log_msg(LOG_WARN, "usage: %s: %s", ev[i].record_id, err ? err : "?");
		free(err);
	}
}

struct fold {
	const struct job_use	*u;
	int			 idle_pct;
};

static int add_samples(struct job_record *r, void *arg, char **err)
{
	const struct fold *f = arg;
	int util[CARD_MAX_GPUS], used[CARD_MAX_GPUS], total[CARD_MAX_GPUS], i, n;

	(void)err;
	if (tao_state_final(r->state))
		return 0;
	n = f->u->ngpu < CARD_MAX_GPUS ? f->u->ngpu : CARD_MAX_GPUS;
	for (i = 0; i < n; i++) {
		util[i] = f->u->gpu[i].util;
		used[i] = f->u->gpu[i].mem_used;
		total[i] = f->u->gpu[i].mem_total;
	}
	card_samples_fold(&r->samples, util, used, total, n, f->idle_pct, f->u->at);
	return 1;
}

void use_fold_records(struct record_store *st, const struct job_use *use, size_t nuse,
    const struct use_job *jobs, size_t njobs, int idle_pct)
{
	size_t i, k;

	for (i = 0; i < nuse; i++) {
		const char *rid = NULL;
		struct fold f = { &use[i], idle_pct };
		char *err = NULL;

		if (!use[i].ok || use[i].ngpu == 0)
			continue;
		for (k = 0; k < njobs && rid == NULL; k++)
			if (strcmp(jobs[k].slurm_id, use[i].slurm_id) == 0)
				rid = jobs[k].record_id;
		if (rid == NULL)
			continue;	/* not taotop's: nothing kept */
		if (store_update(st, rid, add_samples, &f, &err) != 0)
			log_msg(LOG_WARN, "usage: %s: %s", rid, err ? err : "?");
		free(err);
	}
}

#include "util/compat.h"
#include "engine/slurm/slurm.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/duration.h"
#include "util/buf.h"
#include "util/xmalloc.h"

#define US "\x1f"
#define MARK "@@taotop-"	/* then the nonce, a space, a word */

/*
 * squeue -o fields: %A own job id, %i id as shown, %F array job id, %K
 * array task id, %j name, %T state, %r reason, %P partition, %D nodes, %b
 * gres per node, %M time used, %l time limit. Each is followed by the
 * delimiter (US and the poll's nonce): a record ends with it and a newline.
 */
static const char *const squeue_fields[] = { "%A", "%i", "%F", "%K", "%j", "%T", "%r", "%P",
	"%D", "%b", "%M", "%l" };
#define SQUEUE_FIELDS 12
/* No AllocTRES: it doubles sacct's time (90 -> 180 ms on the test cluster)
 * by loading the TRES table; a finished job's GPUs come from its record. */
#define SACCT_FIELDS "JobIDRaw,JobID,JobName,State,Reason,Partition,NNodes," \
	"Elapsed,Timelimit,ExitCode"
#define SACCT_NFIELDS 10
/* The history window's: the same and the GPUs, for jobs never seen in the
 * queue. It runs once every few minutes, so AllocTRES's cost is paid
 * rarely (measured in make bench). */
#define HISTORY_FIELDS SACCT_FIELDS ",AllocTRES"
#define HISTORY_NFIELDS 11
#define HISTORY_MAX	5000
#define HISTORY_SPAN	(366L * 86400)

int slurm_name_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || s[0] == '-')
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (i >= SLURM_NAME_MAX ||
		    (!isalnum((unsigned char)s[i]) && strchr("_.-", s[i]) == NULL))
			return 0;
	return 1;
}

int slurm_name_check(const char *field, const char *value, const char *from, char **err)
{
	if (slurm_name_ok(value))
		return 0;
	*err = value[0] == '\0'
	    ? xasprintf("%s (from %s) is empty: name one", field, from)
	    : xasprintf("%s '%.60s' (from %s) is not one SLURM name: letters, digits, _ . and - "
		"only, not starting with -, at most %d characters (a comma would ask for a list, "
		"a newline or # would write another line of the script); nothing was written on "
		"the cluster", field, value, from, SLURM_NAME_MAX);
	return -1;
}

int slurm_partition_keep(const char *have, const char *said)
{
	size_t n;
	const char *p;

	if (have == NULL || have[0] == '\0' || strchr(have, ',') != NULL || said == NULL ||
	    strchr(said, ',') == NULL)
		return 0;
	n = strlen(have);
	for (p = said; *p != '\0'; p += strcspn(p, ","), p += *p == ',') {
		if (strncmp(p, have, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
	}
	return 0;
}

int slurm_id_ok(const char *id)
{
	size_t i, under = 0;

	if (id == NULL || !isdigit((unsigned char)id[0]) || strlen(id) > 30)
		return 0;
	for (i = 0; id[i] != '\0'; i++) {
		if (id[i] == '_' && under++ == 0 && isdigit((unsigned char)id[i + 1]))
			continue;
		if (!isdigit((unsigned char)id[i]))
			return 0;
	}
	return 1;
}

int slurm_nonce_ok(const char *nonce)
{
	size_t i;

	for (i = 0; nonce != NULL && nonce[i] != '\0'; i++)
		if (!isxdigit((unsigned char)nonce[i]))
			return 0;
	return nonce != NULL && i == SLURM_NONCE_LEN;
}

void slurm_nonce(char out[SLURM_NONCE_LEN + 1])
{
	unsigned char rnd[SLURM_NONCE_LEN / 2];
	size_t i;

	if (compat_random_bytes(rnd, sizeof(rnd)) != 0)
		abort();
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(out + 2 * i, 3, "%02x", rnd[i]);
}

char *slurm_poll_command(const char *const *ids, size_t n, const struct slurm_history *hist,
    const char *nonce)
{
	struct buf b;
	size_t i, added = 0;

	if (!slurm_nonce_ok(nonce))
		abort();	/* a broken invariant: the caller made it */
	buf_init(&b);
	/* The delimiters are bytes inside single quotes: nothing to expand. */
	buf_addf(&b, "echo '" MARK "%s squeue'; squeue --me -h -o '", nonce);
	for (i = 0; i < SQUEUE_FIELDS; i++)
		buf_addf(&b, "%s" US "%s", squeue_fields[i], nonce);
	buf_addf(&b, "'; echo \"" MARK "%s rc $?\"", nonce);
	if (n > 0) {
		buf_addf(&b, "; echo '" MARK "%s sacct'; sacct -X -n -p --delimiter='" US "%s' -o "
		    SACCT_FIELDS " -j ", nonce, nonce);
		for (i = 0; i < n; i++) {
			if (!slurm_id_ok(ids[i]))
				continue;	/* never a word we did not check */
			buf_addf(&b, "%s%s", added++ ? "," : "", ids[i]);
		}
		if (added == 0)
			buf_adds(&b, "0");
		buf_addf(&b, "; echo \"" MARK "%s rc $?\"", nonce);
	}
	if (hist != NULL && hist->since_s > 0 && hist->max > 0) {
		long since = hist->since_s < HISTORY_SPAN ? hist->since_s : HISTORY_SPAN;
		unsigned max = hist->max < HISTORY_MAX ? hist->max : HISTORY_MAX;
		/* The user's own (-u, as --me for squeue), allocations only (-X);
		 * sacct lists oldest first, so tail keeps the newest lines, and
		 * the rc mark, echoed inside the pipe, comes out last. A record
		 * tail cuts in two is skipped by the parser like any garbage. */
		buf_addf(&b, "; echo '" MARK "%s history'; { sacct -X -n -p --delimiter='" US "%s' -o "
		    HISTORY_FIELDS " -u \"$(id -un)\" -S now-%ldseconds -E now; echo \"" MARK
		    "%s rc $?\"; } | tail -n %u", nonce, nonce, since, nonce, max + 1);
	}
	return buf_detach(&b);
}

/* Split a record at the delimiter into at most max fields; returns how
 * many. */
static size_t split(char *line, const char *delim, char **f, size_t max)
{
	size_t n = 0, dlen = strlen(delim);
	char *p = line;

	while (n < max) {
		char *sep = strstr(p, delim);
		f[n++] = p;
		if (sep == NULL)
			break;
		*sep = '\0';
		p = sep + dlen;
	}
	return n;
}

/* src into dst, cut to fit (as snprintf "%s" would, at a tenth of the
 * cost: a poll copies a dozen fields of each of a thousand jobs). */
static void copy(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static const char *na(const char *s)
{
	return strcmp(s, "N/A") == 0 || strcmp(s, "(null)") == 0 ? "" : s;
}

/* A GPU count as SLURM prints it; garbage and absurd sizes stay bounded
 * (no overflow whatever the text). */
#define GPU_MAX	1000000

static long gpu_number(const char *s)
{
	long v = strtol(s, NULL, 10);

	return v < 0 ? 0 : v > GPU_MAX ? GPU_MAX : v;
}

int slurm_count_gpus(const char *s, int nodes, int per_node)
{
	const char *p = s;
	long total = 0;

	/* Entries are comma-separated: gres:gpu:4, gres/gpu=8, gpu:a100:2,
	 * gres/gpu:a100=2 (TRES also lists typed GPUs; count untyped only).
	 * squeue's %b (GRES per node) is gres:gpu:4 up to SLURM 22.05 and
	 * gres/gpu:4 (gres/gpu:a100:4) from 23.02 on, the TRES name. */
	while (p != NULL && *p != '\0') {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[128];
		long count = 0;

		copy(item, sizeof(item) < len + 1 ? sizeof(item) : len + 1, p);
		if (strncmp(item, "gres/gpu=", 9) == 0) {
			count = gpu_number(item + 9);
		} else if (strncmp(item, "gres:gpu", 8) == 0 || strncmp(item, "gres/gpu:", 9) == 0 ||
		    strncmp(item, "gpu", 3) == 0) {
			const char *last = strrchr(item, ':');
			if (last != NULL && isdigit((unsigned char)last[1]))
				count = gpu_number(last + 1);
			else if (strcmp(item, "gpu") == 0 || strcmp(item, "gres:gpu") == 0)
				count = 1;
			if (per_node)
				count *= nodes > 0 ? nodes : 1;
		}
		total += count;
		if (total > GPU_MAX)
			total = GPU_MAX;
		p = end ? end + 1 : NULL;
	}
	return (int)total;
}

static int parse_squeue(char *line, const char *delim, struct slurm_job *j)
{
	char *f[SQUEUE_FIELDS + 1];

	if (split(line, delim, f, SQUEUE_FIELDS + 1) != SQUEUE_FIELDS || !slurm_id_ok(f[0]))
		return -1;
	memset(j, 0, sizeof(*j));
	copy(j->id, sizeof(j->id), f[0]);
	copy(j->shown_id, sizeof(j->shown_id), f[1]);
	copy(j->array_job, sizeof(j->array_job), na(f[2]));
	copy(j->array_task, sizeof(j->array_task), na(f[3]));
	/* %F is the job's own id for jobs that are not arrays. */
	if (strcmp(j->array_job, j->id) == 0 && j->array_task[0] == '\0')
		j->array_job[0] = '\0';
	j->name = xstrdup(f[4]);
	j->state = xstrdup(f[5]);
	j->reason = xstrdup(strcmp(f[6], "None") == 0 ? "" : na(f[6]));
	j->partition = xstrdup(f[7]);
	j->nodes = atoi(f[8]);
	j->gpus = slurm_count_gpus(na(f[9]), j->nodes, 1);
	j->gpus_known = 1;
	duration_normalise(f[10], j->elapsed, sizeof(j->elapsed), &j->elapsed_s);
	duration_normalise(f[11], j->limit, sizeof(j->limit), &j->limit_s);
	return 0;
}

/* sacct's line, and with history its AllocTRES. */
static int parse_sacct(char *line, const char *delim, struct slurm_job *j, int history)
{
	char *f[HISTORY_NFIELDS + 1];
	size_t want = history ? HISTORY_NFIELDS : SACCT_NFIELDS;
	char *under;

	if (split(line, delim, f, want + 1) != want || !slurm_id_ok(f[0]))
		return -1;
	memset(j, 0, sizeof(*j));
	copy(j->id, sizeof(j->id), f[0]);
	copy(j->shown_id, sizeof(j->shown_id), f[1]);
	under = strchr(f[1], '_');
	if (under != NULL) {
		*under = '\0';
		copy(j->array_job, sizeof(j->array_job), f[1]);
		copy(j->array_task, sizeof(j->array_task), under + 1);
	}
	j->name = xstrdup(f[2]);
	j->state = xstrdup(f[3]);
	j->reason = xstrdup(strcmp(f[4], "None") == 0 ? "" : na(f[4]));
	j->partition = xstrdup(f[5]);
	j->nodes = atoi(f[6]);
	duration_normalise(f[7], j->elapsed, sizeof(j->elapsed), &j->elapsed_s);
	/* A job without a time limit of its own: 22.05's sacct prints
	 * nothing, 24.11's "Partition_Limit"; either is "not known here". */
	duration_normalise(strcmp(f[8], "Partition_Limit") == 0 ? "" : f[8], j->limit,
	    sizeof(j->limit), &j->limit_s);
	copy(j->exit_code, sizeof(j->exit_code), f[9]);
	j->from_sacct = 1;
	if (history) {
		/* AllocTRES counts the whole allocation, not per node. */
		j->gpus = slurm_count_gpus(f[10], j->nodes, 0);
		j->gpus_known = 1;
		j->from_history = 1;
	}
	return 0;
}

enum poll_section { NONE, SQUEUE, SACCT, HISTORY };

/* A mark's line (what follows the nonce): a section starts, or the one
 * running says its exit status. Returns where the line ends. */
static const char *take_mark(const char *what, enum poll_section *section, struct slurm_poll *p)
{
	size_t wlen = strcspn(what, "\r\n");

	if (wlen == 6 && strncmp(what, "squeue", 6) == 0)
		*section = SQUEUE;
	else if (wlen == 5 && strncmp(what, "sacct", 5) == 0)
		*section = SACCT;
	else if (wlen == 7 && strncmp(what, "history", 7) == 0)
		*section = HISTORY;
	else if (strncmp(what, "rc ", 3) == 0 && *section == SQUEUE)
		p->squeue_rc = atoi(what + 3);
	else if (strncmp(what, "rc ", 3) == 0 && *section == SACCT)
		p->sacct_rc = atoi(what + 3);
	else if (strncmp(what, "rc ", 3) == 0 && *section == HISTORY)
		p->history_rc = atoi(what + 3);
	return what + wlen;
}

/*
 * Records are found by their end, the delimiter and a newline, never by
 * newlines alone: a job's name may hold newlines and US bytes, but not the
 * nonce it has never seen, so it can neither forge a record nor a mark.
 * Both commands end every field with the delimiter (squeue by its format,
 * sacct by -p); the fields are split at it too.
 */
/* Whether the len bytes at p hold the n bytes of s (memmem is not POSIX). */
static int holds(const char *p, size_t len, const char *s, size_t n)
{
	const char *c;

	while (len >= n && (c = memchr(p, s[0], len - n + 1)) != NULL) {
		if (memcmp(c, s, n) == 0)
			return 1;
		len -= (size_t)(c + 1 - p);
		p = c + 1;
	}
	return 0;
}

void slurm_poll_parse(const char *out, const char *err, const char *nonce, struct slurm_poll *p)
{
	enum poll_section section = NONE;
	char mark[64], delim[64], term[64], nlmark[64];
	const char *q = out != NULL ? out : "", *next = NULL, *term_at = NULL;
	size_t mlen, dlen, cap = 0;
	int no_more = 0, no_term = 0;

	memset(p, 0, sizeof(*p));
	p->squeue_rc = p->sacct_rc = p->history_rc = -1;
	if (!slurm_nonce_ok(nonce)) {
		q = "";		/* nothing can be told apart from a forgery */
		nonce = "";
	}
	snprintf(mark, sizeof(mark), MARK "%.16s ", nonce);
	snprintf(nlmark, sizeof(nlmark), "\n" MARK "%.16s ", nonce);
	snprintf(delim, sizeof(delim), US "%.16s", nonce);
	snprintf(term, sizeof(term), US "%.16s\n", nonce);
	mlen = strlen(mark);
	dlen = strlen(delim);
	while (*q != '\0') {
		const char *end, *nl;
		struct slurm_job j;
		char *rec;
		int ok;

		if (*q == '\n' || *q == '\r') {
			q++;
			continue;
		}
		if (strncmp(q, mark, mlen) == 0) {
			q = take_mark(q + mlen, &section, p);
			continue;
		}
		/* The next record's end and the next mark, each searched again
		 * only once passed: searching from every line would read the
		 * rest of the answer each time (quadratic: most of a 1 000-job
		 * poll's time, and hours over 64 MiB of lines that never end a
		 * record). The first found from an earlier place is still the
		 * first from here while it lies ahead. */
		if (term_at == NULL ? !no_term : term_at < q) {
			term_at = strstr(q, term);
			no_term = term_at == NULL;
		}
		end = term_at;
		if (next == NULL ? !no_more : next < q) {
			next = strstr(q, nlmark);
			no_more = next == NULL;
		}
		if (section == NONE || end == NULL || (next != NULL && next < end)) {
			/* No record ends before the next mark: this line is
			 * garbage (or a record cut short), skipped alone. */
			p->skipped++;
			nl = strchr(q, '\n');
			q = nl != NULL ? nl + 1 : q + strlen(q);
			continue;
		}
		/* A line before the record's first field ends is not part of
		 * it (an id never holds a newline): garbage, skipped alone. */
		nl = memchr(q, '\n', (size_t)(end - q));
		if (nl != NULL && !holds(q, (size_t)(nl - q), delim, dlen)) {
			p->skipped++;
			q = nl + 1;
			continue;
		}
		rec = xstrndup(q, (size_t)(end - q));
		ok = (section == SQUEUE ? parse_squeue(rec, delim, &j)
		    : parse_sacct(rec, delim, &j, section == HISTORY)) == 0;
		free(rec);
		q = end + strlen(term);
		if (!ok) {
			p->skipped++;
			continue;
		}
		if (p->n == cap) {
			cap = cap ? cap * 2 : 64;
			p->jobs = xreallocarray(p->jobs, cap, sizeof(*p->jobs));
		}
		p->jobs[p->n++] = j;
	}
	if (err != NULL && err[0] != '\0') {
		size_t l = strcspn(err, "\n");
		p->squeue_err = xstrndup(err, l);
	}
}

void slurm_poll_free(struct slurm_poll *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->jobs[i].name);
		free(p->jobs[i].state);
		free(p->jobs[i].reason);
		free(p->jobs[i].partition);
	}
	free(p->jobs);
	free(p->squeue_err);
	memset(p, 0, sizeof(*p));
}

const struct slurm_job *slurm_poll_find(const struct slurm_poll *p, const char *id)
{
	const struct slurm_job *found = NULL;
	size_t i;

	for (i = 0; i < p->n; i++) {
		if (strcmp(p->jobs[i].id, id) != 0)
			continue;
		if (!p->jobs[i].from_sacct)
			return &p->jobs[i];	/* live beats accounting */
		found = &p->jobs[i];
	}
	return found;
}

char *slurm_expand_pattern(const char *pattern, const struct slurm_pattern_vars *v)
{
	struct buf b;
	const char *p = pattern;

	buf_init(&b);
	while (*p != '\0') {
		const char *val;
		int width = 0, numeric = 1;

		if (*p != '%') {
			buf_addc(&b, *p++);
			continue;
		}
		p++;
		/* slurmd caps a width at 10; more digits only must not overflow. */
		while (isdigit((unsigned char)*p)) {
			if (width < 1000)
				width = width * 10 + (*p - '0');
			p++;
		}
		switch (*p) {
		case '%': val = "%"; numeric = 0; break;
		case 'A': val = v->array_job && v->array_job[0] ? v->array_job : v->job_id; break;
		case 'a': val = v->array_task && v->array_task[0] ? v->array_task : "4294967294"; break;
		case 'j':
		case 'J': val = v->job_id; break;
		case 'N': val = v->node ? v->node : ""; numeric = 0; break;
		case 'n':
		case 't': val = "0"; break;
		case 's': val = "batch"; numeric = 0; break;
		case 'u': val = v->user ? v->user : ""; numeric = 0; break;
		case 'x': val = v->name ? v->name : ""; numeric = 0; break;
		case '\0':
			buf_addc(&b, '%');	/* a lone '%' at the end stays */
			continue;
		default:
			/* Not a pattern slurmd knows: kept as written. */
			buf_addc(&b, '%');
			continue;
		}
		p++;
		if (val == NULL)
			val = "";
		if (numeric && width > 10)
			width = 10;
		for (size_t len = strlen(val); numeric && (size_t)width > len; width--)
			buf_addc(&b, '0');
		buf_adds(&b, val);
	}
	return buf_detach(&b);
}

/* squeue -O fields for a job's log paths; the name last only by habit:
 * every field ends with the delimiter, so none can move another. */
static const char *const paths_fields[] = { "JobID", "ArrayJobID", "ArrayTaskID", "UserName",
	"BatchHost", "STDOUT", "STDERR", "Name" };
#define PATHS_FIELDS 8

char *slurm_paths_command(const char *id, const char *nonce)
{
	struct buf b;
	size_t i;

	if (!slurm_id_ok(id) || !slurm_nonce_ok(nonce))
		abort();	/* broken invariants: the caller checks */
	buf_init(&b);
	buf_addf(&b, "squeue -h -t all -j %s -O '", id);
	for (i = 0; i < PATHS_FIELDS; i++)
		buf_addf(&b, "%s%s:" US "%s", i ? "," : "", paths_fields[i], nonce);
	buf_adds(&b, "'");
	return buf_detach(&b);
}

/* squeue's words for nothing. */
static char *value_or_empty(const char *s)
{
	return xstrdup(strcmp(s, "N/A") == 0 || strcmp(s, "n/a") == 0 ||
	    strcmp(s, "(null)") == 0 || strcmp(s, "None") == 0 ? "" : s);
}

int slurm_paths_parse(const char *out, const char *nonce, struct slurm_paths *p)
{
	char delim[64], *rec, *f[PATHS_FIELDS + 1];
	const char *end;
	size_t n;

	memset(p, 0, sizeof(*p));
	if (out == NULL || !slurm_nonce_ok(nonce))
		return -1;
	snprintf(delim, sizeof(delim), US "%.16s", nonce);
	/* The first record: all fields, each with its delimiter. squeue
	 * ends the record with a newline; an array's other tasks follow. */
	end = out;
	for (n = 0; n < PATHS_FIELDS && (end = strstr(end, delim)) != NULL; n++)
		end += strlen(delim);
	if (end == NULL)
		return -1;
	rec = xstrndup(out, (size_t)(end - out));
	n = split(rec, delim, f, PATHS_FIELDS + 1);
	if (n != PATHS_FIELDS + 1 || f[PATHS_FIELDS][0] != '\0' || !slurm_id_ok(f[0])) {
		free(rec);
		return -1;
	}
	p->job_id = xstrdup(f[0]);
	p->array_job = value_or_empty(f[1]);
	p->array_task = value_or_empty(f[2]);
	p->user = value_or_empty(f[3]);
	p->node = value_or_empty(f[4]);
	p->out = value_or_empty(f[5]);
	p->err = value_or_empty(f[6]);
	p->name = xstrdup(f[7]);
	free(rec);
	/* A plain job's "array job" is itself; a plain job has no task. */
	if (p->array_task[0] == '\0' && strcmp(p->array_job, p->job_id) == 0)
		p->array_job[0] = '\0';
	return 0;
}

void slurm_paths_free(struct slurm_paths *p)
{
	free(p->job_id), free(p->array_job), free(p->array_task), free(p->user);
	free(p->node), free(p->out), free(p->err), free(p->name);
	memset(p, 0, sizeof(*p));
}

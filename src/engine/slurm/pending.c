#include "engine/slurm/pending.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/slurm/slurm.h"
#include "util/buf.h"
#include "util/compat.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

#define MARK	"taotop-why-"

/*
 * Four sections, each after a mark with the nonce (what SLURM prints is
 * read only between its own marks). No field here is a user's free text
 * (the job's name is not asked), so '|' separates them. Each tool's
 * errors come with its output: sprio on a cluster without
 * priority/multifactor says so, and that is the answer.
 */
char *pending_command(const char *id, const char *nonce)
{
	if (!slurm_id_ok(id) || !slurm_nonce_ok(nonce))
		abort();	/* broken invariants: the caller checks */
	return xasprintf(
	    "echo '" MARK "%1$s queue'; squeue -h -j %2$s -o '%%T|%%r|%%P|%%l|%%D|%%C|%%b|%%V|%%a' 2>&1; "
	    "echo '" MARK "%1$s start'; squeue --start -h -j %2$s -o '%%S|%%Y' 2>&1; "
	    "echo '" MARK "%1$s sprio'; sprio -h -j %2$s -o '%%Y|%%A|%%F|%%J|%%P|%%Q|%%N' 2>&1; "
	    "echo '" MARK "%1$s sshare'; sshare -U -P -n -o Account,NormShares,EffectvUsage,FairShare "
	    "2>&1; echo '" MARK "%1$s end'", nonce, id);
}

/* The text between "MARK nonce name\n" and the next mark, or NULL. */
static char *section(const char *out, const char *nonce, const char *name)
{
	char *head = xasprintf(MARK "%s %s\n", nonce, name), *mark = xasprintf(MARK "%s ", nonce);
	const char *at = strstr(out, head), *end;
	char *text = NULL;

	if (at != NULL) {
		at += strlen(head);
		end = strstr(at, mark);
		if (end != NULL)
			text = xstrndup(at, (size_t)(end - at));
	}
	free(head), free(mark);
	return text;
}

/* Its first line, without the newline. */
static char *first_line(const char *s)
{
	return xstrndup(s, strcspn(s, "\n"));
}

/* SLURM's words for nothing. */
static char *value(const char *s)
{
	if (strcmp(s, "N/A") == 0 || strcmp(s, "n/a") == 0 || strcmp(s, "(null)") == 0 ||
	    strcmp(s, "None") == 0 || strcmp(s, "Unknown") == 0)
		return xstrdup("");
	return xstrdup(s);
}

/* Split line at '|' into n fields (each set, "" past the end). Returns
 * how many the line had. */
static size_t fields(const char *line, char **f, size_t n)
{
	const char *p = line;
	size_t i, had = 0;

	for (i = 0; i < n; i++) {
		size_t len = strcspn(p, "|");
		char *one = xstrndup(p, len);
		f[i] = value(one);
		free(one);
		if (*p != '\0' || i == 0)
			had = i + 1;
		p += len;
		if (*p == '|')
			p++;
	}
	return had;
}

/* A line that is a tool's complaint, not its answer: the first line, or
 * "said nothing". */
static char *complaint(const char *text)
{
	char *l;
	struct buf b;

	if (text == NULL || text[strspn(text, " \n")] == '\0')
		return xstrdup("it said nothing");
	/* sprio's is two lines: "You are not running a supported priority
	 * plugin\n(priority/basic)." Read as one sentence. */
	buf_init(&b);
	for (l = (char *)text; *l != '\0';) {
		size_t len = strcspn(l, "\n");
		if (b.len > 0 && len > 0)
			buf_addc(&b, ' ');
		buf_add(&b, l, len);
		l += len;
		if (*l == '\n')
			l++;
		if (b.len > 200)
			break;
	}
	return buf_detach(&b);
}

static int numeric_first(const char *line)
{
	while (*line == ' ')
		line++;
	return *line >= '0' && *line <= '9';
}

/* sshare's line (one per association of the user) for the job's account,
 * else its first; NULL when it printed none (an error). */
static char *share_line(const char *text, const char *account)
{
	const char *p = text;
	char *first = NULL;
	size_t alen = strlen(account);

	while (*p != '\0') {
		size_t len = strcspn(p, "\n");
		if (memchr(p, '|', len) != NULL) {
			if (alen > 0 && len > alen && strncmp(p, account, alen) == 0 && p[alen] == '|') {
				free(first);
				return xstrndup(p, len);
			}
			if (first == NULL)
				first = xstrndup(p, len);
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	return first;
}

int pending_parse(const char *out, const char *nonce, struct pending_why *w)
{
	char *q, *st, *pr, *sh, *end, *l;
	char *f[9];

	memset(w, 0, sizeof(*w));
	if (out == NULL || !slurm_nonce_ok(nonce))
		return -1;
	end = section(out, nonce, "sshare");	/* all four closed by a mark */
	q = section(out, nonce, "queue");
	st = section(out, nonce, "start");
	pr = section(out, nonce, "sprio");
	if (q == NULL || st == NULL || pr == NULL || end == NULL) {
		free(q), free(st), free(pr), free(end);
		return -1;
	}
	l = first_line(q);
	fields(l, f, 9);
	w->state = f[0], w->reason = f[1], w->partition = f[2], w->time_limit = f[3];
	w->nodes = f[4], w->cpus = f[5], w->tres = f[6], w->submitted = f[7];
	w->job_account = f[8];
	if (strchr(l, '|') == NULL) {	/* an error (the job is gone), not a line */
		free(w->state);
		w->state = xstrdup("");
	}
	free(l);
	l = first_line(st);
	fields(l, f, 2);
	w->start = f[0], w->sched_nodes = f[1];
	if (strchr(l, '|') == NULL)
		w->start[0] = w->sched_nodes[0] = '\0';
	free(l);
	l = first_line(pr);
	if (numeric_first(l)) {
		fields(l, f, 7);
		w->priority = f[0], w->age = f[1], w->fairshare = f[2], w->jobsize = f[3];
		w->part_factor = f[4], w->qos = f[5], w->nice = f[6];
		w->priority_error = xstrdup("");
	} else {
		w->priority = xstrdup(""), w->age = xstrdup(""), w->fairshare = xstrdup("");
		w->jobsize = xstrdup(""), w->part_factor = xstrdup(""), w->qos = xstrdup("");
		w->nice = xstrdup("");
		w->priority_error = complaint(pr);
	}
	free(l);
	sh = end;
	l = share_line(sh, w->job_account);
	if (l != NULL) {
		fields(l, f, 4);
		w->account = f[0], w->norm_shares = f[1], w->eff_usage = f[2], w->fs_factor = f[3];
		w->share_error = xstrdup("");
	} else {
		w->account = xstrdup(""), w->norm_shares = xstrdup(""), w->eff_usage = xstrdup("");
		w->fs_factor = xstrdup("");
		w->share_error = complaint(sh);
	}
	free(l);
	free(q), free(st), free(pr), free(sh);
	return 0;
}

void pending_free(struct pending_why *w)
{
	free(w->state), free(w->reason), free(w->partition), free(w->time_limit);
	free(w->nodes), free(w->cpus), free(w->tres), free(w->submitted), free(w->job_account);
	free(w->start), free(w->sched_nodes);
	free(w->priority), free(w->age), free(w->fairshare), free(w->jobsize);
	free(w->part_factor), free(w->qos), free(w->nice), free(w->priority_error);
	free(w->account), free(w->norm_shares), free(w->eff_usage), free(w->fs_factor);
	free(w->share_error);
	memset(w, 0, sizeof(*w));
}

/* ---- the reasons, in words (SLURM's "Job Reason Codes") ----------------------------- */

static const char ADV_WAIT[] = "a shorter time limit lets the backfill scheduler start it in a gap "
    "before the jobs ahead; another partition of the list may be free sooner; fewer GPUs or nodes "
    "fit in more places";

static const struct {
	const char	*code;
	int		 prefix;	/* matches any code that begins with it */
	const char	*words, *advice;
} reasons[] = {
	{ "Priority", 0, "jobs of higher priority are ahead of it in the queue", ADV_WAIT },
	{ "Resources", 0, "it is next in line and waits for enough free GPUs, CPUs or nodes",
	  ADV_WAIT },
	{ "None", 0, "the scheduler has not looked at it yet (just submitted, or between "
	  "scheduling passes)", NULL },
	{ "Dependency", 0, "it waits for a job it depends on (--dependency) to end", NULL },
	{ "DependencyNeverSatisfied", 0, "a job it depends on ended in a way that never satisfies "
	  "the dependency: it will never start", "cancel it and submit again without the "
	  "dependency" },
	{ "BeginTime", 0, "its start time (--begin) has not come yet", NULL },
	{ "JobHeldUser", 0, "it is held by you (scontrol hold, or the hold action)",
	  "release it (the actions menu's release, or scontrol release)" },
	{ "JobHeldAdmin", 0, "it is held by an administrator", "ask your cluster's administrators" },
	{ "launch failed requeued held", 0, "SLURM could not launch it, requeued it and held it",
	  "look at why in the scheduler's log or ask the administrators, then release it" },
	{ "ReqNodeNotAvail", 1, "a node it needs is down, drained or reserved (SLURM names them "
	  "after the reason)", "another partition of the list; fewer nodes" },
	{ "PartitionTimeLimit", 0, "its time limit is above the partition's MaxTime: it will never "
	  "start there", "a time limit within the partition's (the actions menu's time limit)" },
	{ "PartitionNodeLimit", 0, "it asks for more nodes than the partition allows a job",
	  "fewer nodes, or another partition" },
	{ "PartitionDown", 0, "the partition is down", "another partition of the list" },
	{ "PartitionInactive", 0, "the partition does not take jobs now",
	  "another partition of the list" },
	{ "NodeDown", 0, "a node it needs is down", "another partition; fewer nodes" },
	{ "BadConstraints", 0, "its constraints (--constraint, GPUs per node) can never be met",
	  "cancel it and ask for what the nodes have" },
	{ "Reservation", 0, "it waits for its advanced reservation to begin", NULL },
	{ "Licenses", 0, "it waits for a license it asked for", NULL },
	{ "InvalidAccount", 0, "its account is not valid (it will never start)",
	  "cancel it and submit with an account you belong to" },
	{ "InvalidQOS", 0, "its QOS is not valid (it will never start)",
	  "cancel it and submit with a QOS you may use" },
	{ "QOSMaxWallDurationPerJobLimit", 0, "its time limit is above its QOS's maximum: it will "
	  "never start", "a shorter time limit (the actions menu's time limit)" },
	{ "AssocMaxWallDurationPerJobLimit", 0, "its time limit is above what your account may "
	  "ask: it will never start", "a shorter time limit (the actions menu's time limit)" },
	{ "QOSMaxJobsPerUserLimit", 0, "you run as many jobs as its QOS allows one user at once",
	  "it starts as one of your running jobs ends" },
	{ "QOSMaxGRESPerUser", 0, "your running jobs hold as many GPUs as its QOS allows one user",
	  "it starts as your other jobs end; fewer GPUs fit sooner" },
	{ "QOSMaxTRESPerUser", 0, "your running jobs hold as much as its QOS allows one user",
	  "it starts as your other jobs end; fewer GPUs fit sooner" },
	{ "QOSGrp", 1, "its QOS's group limit (everyone sharing the QOS) is reached",
	  "it starts as jobs under the QOS end" },
	{ "QOS", 1, "a limit of its QOS (quality of service) is reached",
	  "it starts as jobs under the QOS end" },
	{ "AssocGrpBilling", 1, "your account's budget (billing minutes) is used up",
	  "ask the account's owner or the administrators" },
	{ "AssocGrpCPUMinutesLimit", 0, "your account's CPU minutes are used up",
	  "ask the account's owner or the administrators" },
	{ "AssocGrp", 1, "your account's group limit (everyone charging the account) is reached",
	  "it starts as the account's other jobs end" },
	{ "AssocMaxJobsLimit", 0, "you run as many jobs as your account allows at once",
	  "it starts as one of your running jobs ends" },
	{ "AssociationJobLimit", 0, "you run as many jobs as your account allows at once",
	  "it starts as one of your running jobs ends" },
	{ "Assoc", 1, "a limit of your account (association) is reached",
	  "it starts as the account's other jobs end" },
};

const char *pending_reason_words(const char *reason, const char **advice)
{
	size_t i, len;

	*advice = NULL;
	if (reason == NULL || reason[0] == '\0')
		return "SLURM gave no reason";
	len = strcspn(reason, ",( ");
	if (strncmp(reason, "launch failed requeued held", 27) == 0)
		len = strlen(reason);
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		size_t cl = strlen(reasons[i].code);
		if (reasons[i].prefix ? len >= cl && strncmp(reason, reasons[i].code, cl) == 0
		    : len == cl && strncmp(reason, reasons[i].code, cl) == 0) {
			*advice = reasons[i].advice;
			return reasons[i].words;
		}
	}
	return "a reason taotop does not know (see SLURM's squeue documentation)";
}

/* ---- the lines ---------------------------------------------------------------------- */

static void add(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add(char ***v, size_t *n, const char *fmt, ...)
{
	va_list ap;
	char *raw;
	struct buf b;

	va_start(ap, fmt);
	raw = xvasprintf(fmt, ap);
	va_end(ap);
	buf_init(&b);
	sanitize_append_line(&b, raw, strlen(raw));
	free(raw);
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = b.data != NULL ? buf_detach(&b) : xstrdup("");
}

/* "in 2 h 05 min" from now to SLURM's local time stamp, or "". */
static void until(const char *stamp, long now, char *out, size_t size)
{
	time_t t;
	long d;

	out[0] = '\0';
	if (compat_parse_local(stamp, &t) != 0)
		return;
	d = (long)t - now;
	if (d <= 0)
		snprintf(out, size, " (now: it may start at the next scheduling pass)");
	else if (d < 3600)
		snprintf(out, size, " (in %ld min)", (d + 59) / 60);
	else if (d < 86400)
		snprintf(out, size, " (in %ld h %02ld min)", d / 3600, d % 3600 / 60);
	else
		snprintf(out, size, " (in %ld d %ld h)", d / 86400, d % 86400 / 3600);
}

size_t pending_lines(const struct pending_why *w, long now, char ***out)
{
	const char *advice, *words;
	char in[64];
	size_t n = 0;

	*out = NULL;
	if (w->state[0] == '\0') {
		add(out, &n, "Why it waits: the queue no longer lists it (it started or ended)");
		return n;
	}
	if (strcmp(w->state, "PENDING") != 0) {
		add(out, &n, "Why it waits: it does not: SLURM says %s", w->state);
		return n;
	}
	words = pending_reason_words(w->reason, &advice);
	add(out, &n, "Why it waits: %s (SLURM: %s)", words,
	    w->reason[0] ? w->reason : "no reason");
	add(out, &n, "  asked: %s node%s, %s CPU%s, %s, time limit %s, partition%s %s",
	    w->nodes[0] ? w->nodes : "?", strcmp(w->nodes, "1") == 0 ? "" : "s",
	    w->cpus[0] ? w->cpus : "?", strcmp(w->cpus, "1") == 0 ? "" : "s",
	    w->tres[0] ? w->tres : "no GPUs",
	    w->time_limit[0] ? w->time_limit : "?", strchr(w->partition, ',') ? "s" : "",
	    w->partition[0] ? w->partition : "?");
	if (w->start[0] != '\0') {
		until(w->start, now, in, sizeof(in));
		add(out, &n, "  estimated start: %s%s%s%s (the scheduler's backfill plan: it moves as "
		    "jobs end early or others come)", w->start, in, w->sched_nodes[0] ? ", on " : "",
		    w->sched_nodes);
	} else {
		add(out, &n, "  estimated start: none yet (the scheduler has not planned it: the "
		    "jobs ahead have no end it can count on, or it was just submitted)");
	}
	if (w->priority[0] != '\0')
		add(out, &n, "  priority %s = age %s + fair-share %s + job size %s + partition %s "
		    "+ QOS %s (nice %s)", w->priority, w->age[0] ? w->age : "0",
		    w->fairshare[0] ? w->fairshare : "0", w->jobsize[0] ? w->jobsize : "0",
		    w->part_factor[0] ? w->part_factor : "0", w->qos[0] ? w->qos : "0",
		    w->nice[0] ? w->nice : "0");
	else if (strstr(w->priority_error, "priority/basic") != NULL)
		add(out, &n, "  priority: this cluster starts jobs first come, first served "
		    "(priority/basic): no factors to show");
	else
		add(out, &n, "  priority: sprio gave none: %s", w->priority_error);
	if (w->fs_factor[0] != '\0')
		add(out, &n, "  your fair-share: %s (account %s, share %s, usage %s; 1 is best, 0 "
		    "has used more than its share)", w->fs_factor, w->account[0] ? w->account : "?",
		    w->norm_shares[0] ? w->norm_shares : "?", w->eff_usage[0] ? w->eff_usage : "?");
	else
		add(out, &n, "  your fair-share: sshare gave none: %s", w->share_error);
	if (advice != NULL)
		add(out, &n, "  you could: %s", advice);
	return n;
}

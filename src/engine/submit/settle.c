#include "engine/submit/settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/compat.h"
#include "util/log.h"
#include "util/xmalloc.h"

/* A lookup that waits longer than this on one host is a failed lookup. */
#define LOOK_TIMEOUT_MS	15000

#define SQUEUE_MARK	"@@squeue "
#define SACCT_MARK	"@@sacct "

void settle_init(struct settle_state *st)
{
	memset(st, 0, sizeof(*st));
}

void settle_free(struct settle_state *st)
{
	free(st->found);
	free(st->first_error);
	memset(st, 0, sizeof(*st));
}

char *settle_command(const char *name)
{
	char *q = sh_quote(name), *cmd;

	/* --me and -u: another user's job of the same name is not ours. -t all:
	 * a job that already ended stays in squeue for MinJobAge (300 s by
	 * default), while sacct may lag behind the controller. */
	cmd = xasprintf("squeue --me -h -t all --name=%s -o '%%A %%r'; echo \"" SQUEUE_MARK "$?\"; "
	    "sacct -n -X -P -u \"$(id -un)\" --name=%s -S now-7days -o JobIDRaw; "
	    "echo \"" SACCT_MARK "$?\"", q, q);
	free(q);
	return cmd;
}

static int id_cmp(const char *a, const char *b)
{
	size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");

	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a, b);
}

static void add_found(struct settle_state *st, const char *id, int held, const char *by)
{
	size_t i;

	for (i = 0; i < st->nfound; i++) {
		int c = id_cmp(id, st->found[i].id);
		if (c == 0) {
			/* squeue's latest answer; sacct knows no reasons. */
			if (strncmp(by, "squeue", 6) == 0)
				st->found[i].held = held;
			return;
		}
		if (c < 0)
			break;
	}
	st->found = xreallocarray(st->found, st->nfound + 1, sizeof(*st->found));
	memmove(st->found + i + 1, st->found + i, (st->nfound - i) * sizeof(*st->found));
	memset(&st->found[i], 0, sizeof(st->found[i]));
	snprintf(st->found[i].id, sizeof(st->found[i].id), "%s", id);
	snprintf(st->found[i].by, sizeof(st->found[i].by), "%s", by);
	st->found[i].held = held;
	st->nfound++;
}

static void note_failure(struct settle_state *st, const char *host, const char *why)
{
	st->failed++;
	if (st->first_error == NULL)
		st->first_error = xasprintf("%s: %.*s", host, (int)strcspn(why ? why : "", "\n"),
		    why && why[0] ? why : "no answer");
}

int settle_read(struct settle_state *st, const char *host, int ran, const char *out,
    const char *why)
{
	char *copy, *line, *save = NULL, by[48];
	int part = 0, squeue_ok = 0, squeue_rc = -1;

	st->looks++;
	if (!ran || out == NULL) {
		note_failure(st, host, why);
		return 0;
	}
	copy = xstrdup(out);
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char id[32], reason[64] = "";
		if (strncmp(line, SQUEUE_MARK, sizeof(SQUEUE_MARK) - 1) == 0) {
			squeue_rc = atoi(line + sizeof(SQUEUE_MARK) - 1);
			part = 1;
			continue;
		}
		if (strncmp(line, SACCT_MARK, sizeof(SACCT_MARK) - 1) == 0) {
			part = 2;
			continue;
		}
		if (part == 2 || sscanf(line, "%31s %63s", id, reason) < 1 || !slurm_id_ok(id))
			continue;
		snprintf(by, sizeof(by), "%s on %s", part == 0 ? "squeue" : "sacct", host);
		add_found(st, id, part == 0 && strcmp(reason, "JobHeldUser") == 0, by);
	}
	free(copy);
	squeue_ok = squeue_rc == 0;
	if (!squeue_ok) {
		char *w = xasprintf("squeue %s", squeue_rc < 0 ? "gave no answer" : "failed");
		note_failure(st, host, w);
		free(w);
	}
	return squeue_ok;
}

enum settle_verdict settle_decide(const struct settle_state *st, int worked_once, int window_over)
{
	if (st->nfound == 1)
		return SETTLE_ADOPT;
	if (st->nfound > 1)
		return SETTLE_DUPLICATES;
	if (!window_over)
		return SETTLE_WAIT;
	return worked_once ? SETTLE_NONE : SETTLE_UNKNOWN;
}

const char *settle_verdict_name(enum settle_verdict v)
{
	static const char *const names[] = { "waiting", "adopted", "duplicates", "none", "unknown" };

	return names[v];
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One lookup on one connection; whether it worked. */
static int look(struct conn *c, const char *cmd, const char *host, long budget_ms,
    struct settle_state *st)
{
	struct conn_exec x;
	char *err = NULL;
	int ok;

	conn_exec_init(&x, cmd);
	x.timeout_ms = (int)(budget_ms < LOOK_TIMEOUT_MS ? (budget_ms > 2000 ? budget_ms : 2000)
	    : LOOK_TIMEOUT_MS);
	if (conn_exec(c, &x, &err) == CONN_OK)
		ok = settle_read(st, host, 1, x.out.data ? x.out.data : "", NULL);
	else
		ok = settle_read(st, host, 0, NULL, err);
	if (!ok)
		log_msg(LOG_WARN, "submit: lookup on %s failed: %s", host,
		    err ? err : (x.err.data ? x.err.data : "squeue failed"));
	free(err);
	conn_exec_free(&x);
	return ok;
}

void settle_run(struct conn *c, const char *name, long window_ms, struct settle_result *out)
{
	size_t n = conn_nhosts(c), i;
	struct conn **others = xcalloc(n + 1, sizeof(*others));
	const char *on = conn_host(c);
	char *cmd = settle_command(name);
	struct buf hosts;
	long start = now_ms(), round_at;

	memset(out, 0, sizeof(*out));
	settle_init(&out->st);
	if (window_ms <= 0)
		window_ms = SETTLE_WINDOW_MS;
	/* c reconnects over the whole list (the first host that answers); a
	 * connection of its own asks each other host: every host but the one
	 * c is on (after a failover, not the first), or but the first when c
	 * is on none yet. */
	buf_init(&hosts);
	for (i = 0; i < n; i++) {
		buf_addf(&hosts, "%s%s", i ? ", " : "", conn_host_at(c, i));
		if (on != NULL ? strcmp(on, conn_host_at(c, i)) != 0 : i > 0)
			others[i] = conn_new_one(c, i);
	}
	out->hosts = buf_detach(&hosts);
	for (;;) {
		round_at = now_ms();
		long left = window_ms - (round_at - start);
		out->worked |= look(c, cmd, conn_host(c) ? conn_host(c) : conn_host_at(c, 0),
		    left, &out->st);
		for (i = 0; i < n; i++)
			if (others[i] != NULL)
				out->worked |= look(others[i], cmd, conn_host_at(c, i), left, &out->st);
		out->verdict = settle_decide(&out->st, out->worked,
		    now_ms() - start + SETTLE_EVERY_MS > window_ms);
		if (out->verdict != SETTLE_WAIT)
			break;
		long wait = SETTLE_EVERY_MS - (now_ms() - round_at);
		if (wait > 0)
			compat_sleep_ms((unsigned)wait);
	}
	out->waited_ms = now_ms() - start;
	for (i = 0; i < n; i++)
		conn_free(others[i]);
	free(others);
	free(cmd);
}

char *settle_evidence(const struct settle_result *r, const char *name)
{
	struct buf b;
	size_t i;

	buf_init(&b);
	buf_addf(&b, "looked for jobs named %s (squeue and sacct, by user and exact name) on %s: "
	    "%u lookup%s in %ld s, %u failed", name, r->hosts, r->st.looks,
	    r->st.looks == 1 ? "" : "s", (r->waited_ms + 500) / 1000, r->st.failed);
	if (r->st.first_error != NULL)
		buf_addf(&b, " (first: %s)", r->st.first_error);
	if (r->st.nfound == 0)
		buf_addf(&b, "; none found%s", r->worked ? " by the lookups that worked"
		    : ", and no lookup worked");
	for (i = 0; i < r->st.nfound; i++)
		buf_addf(&b, "%s SLURM job %s (%s%s)", i ? "," : "; found", r->st.found[i].id,
		    r->st.found[i].by, r->st.found[i].held ? ", held" : "");
	return buf_detach(&b);
}

void settle_result_free(struct settle_result *r)
{
	settle_free(&r->st);
	free(r->hosts);
	memset(r, 0, sizeof(*r));
}

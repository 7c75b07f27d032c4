#include "engine/track/actions.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/slurm/duration.h"
#include "engine/slurm/acctcard.h"
#include "engine/slurm/pending.h"
#include "engine/store/card.h"
#include "engine/store/jobref.h"
#include "engine/slurm/slurm.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/xmalloc.h"

#define ACTION_TIMEOUT_MS	30000

const char *const job_signals[] = { "USR1", "USR2", "TERM", "INT", "HUP", "CONT", "STOP",
	"KILL", NULL };

const char *job_action_name(enum job_action a)
{
	static const char *const names[] = { "requeue", "hold", "release", "signal",
	    "time limit" };
	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

int job_time_limit_parse(const char *text, char *out, unsigned size, char **err)
{
	long d = 0, h = 0, m = 0, s = 0;
	const char *p = text;
	char tail;

	while (*p == ' ')
		p++;
	if (sscanf(p, "%ld-%ld:%ld:%ld%c", &d, &h, &m, &s, &tail) == 4 ||
	    (d = 0, sscanf(p, "%ld:%ld:%ld%c", &h, &m, &s, &tail) == 3) ||
	    (h = 0, s = 0, sscanf(p, "%ld:%ld%c", &m, &s, &tail) == 2) ||
	    (m = 0, s = 0, sscanf(p, "%ld%c", &m, &tail) == 1)) {
		if (d >= 0 && h >= 0 && m >= 0 && s >= 0 && s < 60 && (d || h || m || s) &&
		    d < 366 && h < 100000 && m < 10000000) {
			long total = ((d * 24 + h) * 60 + m) * 60 + s;
			snprintf(out, size, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
			return 0;
		}
	}
	*err = xasprintf("'%s' is not a time limit: minutes (90), H:MM:SS (2:00:00) or "
	    "D-HH:MM:SS (1-00:00:00)", text);
	return -1;
}

static int signal_ok(const char *sig)
{
	size_t i;

	for (i = 0; job_signals[i] != NULL; i++)
		if (strcmp(job_signals[i], sig) == 0)
			return 1;
	return 0;
}

/* The SLURM id of a job as the user names it. */
static char *slurm_id_of(struct record_store *st, const char *job, char **err)
{
	struct job_ref ref;
	char *id = NULL;

	if (job_ref_resolve(st, job, &ref, err) != 0)
		return NULL;
	if (ref.slurm_id == NULL)
		*err = xasprintf("%s has not been launched: nothing to act on", job);
	else
		id = xstrdup(ref.slurm_id);
	job_ref_free(&ref);
	return id;
}

/* The first line of text, trimmed, or "". */
static char *first_line(const char *text)
{
	return xstrndup(text ? text : "", strcspn(text ? text : "", "\n"));
}

int job_action_run(struct conn *c, struct record_store *st, const char *job, enum job_action a,
    const char *arg, char **answer, char **err)
{
	char limit[32], *id, *qid, *qarg = NULL, *cmd = NULL, *why = NULL;
	struct conn_exec x;
	int rc = -1;

	*answer = NULL;
	if ((id = slurm_id_of(st, job, err)) == NULL)
		return -1;
	qid = sh_quote(id);
	switch (a) {
	case ACTION_REQUEUE:
		cmd = xasprintf("scontrol requeue %s", qid);
		break;
	case ACTION_HOLD:
		cmd = xasprintf("scontrol hold %s", qid);
		break;
	case ACTION_RELEASE:
		cmd = xasprintf("scontrol release %s", qid);
		break;
	case ACTION_SIGNAL:
		if (arg == NULL || !signal_ok(arg)) {
			*err = xasprintf("'%s' is not a signal taotop sends", arg ? arg : "");
			goto out;
		}
		qarg = sh_quote(arg);
		cmd = xasprintf("scancel --signal=%s --full %s", qarg, qid);
		break;
	case ACTION_TIME_LIMIT:
		if (arg == NULL || job_time_limit_parse(arg, limit, sizeof(limit), err) != 0)
			goto out;
		qarg = sh_quote(limit);
		cmd = xasprintf("scontrol update JobId=%s TimeLimit=%s", qid, qarg);
		break;
	}
	conn_exec_init(&x, cmd);
	x.timeout_ms = ACTION_TIMEOUT_MS;
	if (conn_exec(c, &x, &why) != CONN_OK) {
		*err = xasprintf("%s of %s: %s", job_action_name(a), id, why);
	} else if (x.exit_status != 0) {
		char *l = first_line(x.err.data && x.err.data[0] ? x.err.data : x.out.data);
		*err = xasprintf("%s of %s refused: %s", job_action_name(a), id,
		    l[0] ? l : "the scheduler said no more");
		free(l);
	} else {
		char *l = first_line(x.out.data);
		if (a == ACTION_SIGNAL)
			*answer = xasprintf("%s: sent SIG%s%s%s", id, arg, l[0] ? ": " : "", l);
		else if (a == ACTION_TIME_LIMIT) {
			/* Said in the one time format the list shows it in. */
			char shown[24];
			long secs;
			duration_normalise(limit, shown, sizeof(shown), &secs);
			*answer = xasprintf("%s: time limit now %s%s%s", id, shown, l[0] ? ": " : "", l);
		}
		else
			*answer = xasprintf("%s: %s done%s%s", id, job_action_name(a), l[0] ? ": " : "", l);
		free(l);
		rc = 0;
	}
	conn_exec_free(&x);
out:
	free(why), free(cmd), free(qarg), free(qid), free(id);
	return rc;
}

int job_explain_pending(struct conn *c, struct record_store *st, const char *job, char ***lines,
    size_t *n, char **err)
{
	char nonce[SLURM_NONCE_LEN + 1], *id, *cmd, *why = NULL;
	struct pending_why w;
	struct conn_exec x;
	int rc = -1;

	*lines = NULL;
	*n = 0;
	if ((id = slurm_id_of(st, job, err)) == NULL)
		return -1;
	slurm_nonce(nonce);
	cmd = pending_command(id, nonce);	/* the id checked: digits and '_' */
	conn_exec_init(&x, cmd);
	x.timeout_ms = ACTION_TIMEOUT_MS;
	if (conn_exec(c, &x, &why) != CONN_OK) {
		*err = xasprintf("why %s waits: %s", id, why);
	} else if (pending_parse(x.out.data, nonce, &w) != 0) {
		*err = xasprintf("why %s waits: the scheduler's answer was not understood", id);
	} else {
		*n = pending_lines(&w, (long)time(NULL), lines);
		pending_free(&w);
		rc = 0;
	}
	conn_exec_free(&x);
	free(why), free(cmd), free(id);
	return rc;
}

int job_card_lines(struct conn *c, const char *slurm_id, int idle_pct, char ***lines, size_t *n,
    char **err)
{
	struct acct_facts f;
	struct card card;
	struct conn_exec x;
	char *cmd, *why = NULL, **cl;
	size_t ncl, i;
	int rc = -1;

	*lines = NULL;
	*n = 0;
	if (!slurm_id_ok(slurm_id)) {
		*err = xasprintf("'%s' is not a SLURM job id", slurm_id);
		return -1;
	}
	cmd = acct_card_command(slurm_id);
	conn_exec_init(&x, cmd);
	x.timeout_ms = ACTION_TIMEOUT_MS;
	if (conn_exec(c, &x, &why) != CONN_OK) {
		*err = xasprintf("efficiency of %s: %s", slurm_id, why);
	} else if (acct_card_parse(x.out.data, slurm_id, &f) != 0) {
		*err = xasprintf("efficiency of %s: accounting (sacct) has no record of it", slurm_id);
	} else {
		card_make(&card, &f, NULL, 0, idle_pct);
		ncl = card_lines(&card, &cl);
		*lines = xcalloc(ncl + 1, sizeof(**lines));
		(*lines)[(*n)++] = xstrdup("Efficiency (from accounting; taotop keeps no samples of "
		    "jobs it did not submit):");
		for (i = 0; i < ncl; i++)
			(*lines)[(*n)++] = cl[i];
		free(cl);
		rc = 0;
	}
	conn_exec_free(&x);
	free(cmd), free(why);
	return rc;
}

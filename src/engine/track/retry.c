#include "engine/track/retry.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/track/classify.h"
#include "engine/config/config.h"
#include "engine/logs/logtail.h"
#include "engine/store/store.h"
#include "engine/submit/secrets.h"
#include "engine/submit/submit.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/share.h"
#include "util/xmalloc.h"

#define TAIL_LINES	60	/* of main.out and main.err, for the classifier */

/* ---- history ----------------------------------------------------------------------------- */

static int add_event(struct job_record *r, void *arg, char **err)
{
	(void)err;
	record_event(r, arg, "taotop", time(NULL));
	return 1;
}

static void note(struct record_store *st, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(struct record_store *st, const char *id, const char *fmt, ...)
{
	va_list ap;
	char *msg, *err = NULL;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (store_update(st, id, add_event, msg, &err) != 0) {
		log_msg(LOG_ERROR, "retry: %s: %s", id, err);
		free(err);
	}
	free(msg);
}

struct claim {
	const char	*new_id;
	int		 done_too;	/* a job that succeeded may run again */
};

/* Claim the retry of a record: set retried_as unless another taotop (or
 * an earlier poll) already did, under the store's lock. */
static int claim(struct job_record *r, void *arg, char **err)
{
	const struct claim *cl = arg;

	if (r->retried_as != NULL) {
		*err = xasprintf("%s was already retried as %s: retry that one", r->id, r->retried_as);
		return -1;
	}
	if (!tao_state_final(r->state)) {
		*err = xasprintf("%s is %s: cancel it first, or wait for it to end", r->id,
		    tao_state_name(r->state));
		return -1;
	}
	if (r->state == TAO_DONE && !cl->done_too) {
		*err = xasprintf("%s succeeded (Done): a retry would train it again from the start; "
		    "taotop retry --force %s does that", r->id, r->id);
		return -1;
	}
	record_set(&r->retried_as, cl->new_id);
	return 1;
}

static int not_launched(struct job_record *r, void *arg, char **err)
{
	(void)err;
	return record_transition(r, TAO_ERROR, NULL, arg, "taotop", time(NULL));
}

/* ---- the retry ----------------------------------------------------------------------------- */

/* Write the secrets' sidecar again (its job's end removed it), 0600 from
 * its first byte, from the same sources as the first submit: the
 * environment, then the .env beside the bundle (engine/submit/secrets.h). */
static int restage_sidecar(struct conn *c, const struct job_record *r, const char *job_dir,
    const char *first_id, char **err)
{
	struct buf text;
	char *path, *why = NULL;
	int rc;

	if (r->secrets == NULL || r->secrets[0] == '\0')
		return 0;
	buf_init(&text);
	if (secrets_sidecar_text(r->secrets, NULL, 0, r->bundle, &text, &why) != 0) {
		*err = xasprintf("%s: the retry needs it for the job's sidecar; then run taotop "
		    "retry %s", why, r->id);
		free(why);
		return -1;
	}
	path = secrets_sidecar_path(job_dir, first_id);
	rc = conn_write_file(c, path, text.data, text.len, 0600, CONN_WRITE_ATOMIC, err) == CONN_OK
	    ? 0 : -1;
	free(path);
	secrets_wipe(&text);
	return rc;
}

int retry_job(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *why, int done_too, char **new_id, char **slurm_id, char **err)
{
	struct claim how;
	struct job_record *old = NULL, *r = NULL;
	struct conn_stat cs;
	char *job_dir = NULL, *first_id, *sbatch = NULL, *nid = NULL, *msg;
	int adopted = 0, rc = -1;

	*new_id = *slurm_id = NULL;
	if (store_load(st, id, &old, err) != 0)
		return -1;
	if (old->cluster != NULL && strcmp(old->cluster, cl->name) != 0) {
		*err = xasprintf("%s ran on cluster %s, not %s", id, old->cluster, cl->name);
		goto out;
	}
	job_dir = submit_job_dir(old);
	if (job_dir == NULL) {
		*err = xasprintf("%s has no staged job folder to run again (it was never staged)", id);
		goto out;
	}
	first_id = strrchr(job_dir, '/') + 1;
	sbatch = submit_staged_sbatch(old);
	if (conn_stat(c, sbatch, &cs, err) != CONN_OK) {
		char *why2 = *err;
		*err = xasprintf("%s: the staged sbatch is gone (%s): submit the bundle again", id, why2);
		free(why2);
		goto out;
	}
	nid = store_mint_id(st);
	how.new_id = nid;
	how.done_too = done_too;
	if (store_update(st, id, claim, &how, err) != 0)
		goto out;
	/* The new record: the same workload, its own name and history. */
	r = record_new(nid);
	record_set(&r->platform, old->platform);
	record_set(&r->cluster, cl->name);
	record_set(&r->image, old->image);
	record_set(&r->network_arch, old->network_arch);
	record_set(&r->action, old->action);
	record_set(&r->storage_tier, old->storage_tier);
	record_set(&r->results_dir, old->results_dir);
	record_set(&r->log_dir, old->log_dir);
	record_set(&r->secrets, old->secrets);
	record_set(&r->bundle, old->bundle);
	record_set(&r->retry_of, id);
	msg = xasprintf("opened: a retry of %s (%s), running its staged %s", id, why, sbatch);
	record_event(r, msg, "taotop", time(NULL));
	free(msg);
	if (store_create(st, r, err) != 0)
		goto out;
	if (restage_sidecar(c, old, job_dir, first_id, err) != 0 ||
	    submit_launch_staged(c, st, nid, job_dir, sbatch, old->log_dir, slurm_id, &adopted,
	    err) != 0) {
		char *e2 = NULL;
		msg = xasprintf("not launched: %s", *err);
		if (store_update(st, nid, not_launched, msg, &e2) != 0)
			free(e2);
		free(msg);
		note(st, id, "retry %s failed: %s", nid, *err);
		goto out;
	}
	/* A job that succeeded keeps its verdict first in its note (the last
	 * event is what its row says): the retry comes after it. */
	if (old->state == TAO_DONE)
		note(st, id, "%s; retried as %s, SLURM job %s (%s)", old->nhist > 0 &&
		    old->hist[old->nhist - 1].message != NULL ? old->hist[old->nhist - 1].message
		    : "Done", nid, *slurm_id, why);
	else
		note(st, id, "retried as %s, SLURM job %s (%s)", nid, *slurm_id, why);
	log_msg(LOG_INFO, "retry: %s retried as %s (SLURM job %s): %s", id, nid, *slurm_id, why);
	*new_id = nid;
	nid = NULL;
	rc = 0;
out:
	record_free(old);
	record_free(r);
	free(job_dir), free(sbatch), free(nid);
	return rc;
}

/* ---- the automatic retry -------------------------------------------------------------------- */

/* How many retries came before this record in its chain. */
static int attempts_before(struct record_store *st, const struct job_record *r)
{
	char *at = r->retry_of ? xstrdup(r->retry_of) : NULL;
	int n = 0;

	while (at != NULL && n < 100) {
		struct job_record *p = NULL;
		char *err = NULL;
		n++;
		if (store_load(st, at, &p, &err) != 0) {
			free(err);
			break;
		}
		free(at);
		at = p->retry_of ? xstrdup(p->retry_of) : NULL;
		record_free(p);
	}
	free(at);
	return n;
}

static char *tail_of(struct conn *c, const struct job_record *r, const char *name)
{
	struct buf b;
	uint64_t end;
	int missing;
	char *path, *err = NULL;

	buf_init(&b);
	if (r->log_dir != NULL && r->backend_ref != NULL) {
		path = xasprintf("%s/%s-%s/%s", r->log_dir, r->id, r->backend_ref, name);
		if (log_tail(c, path, TAIL_LINES, 0, &b, &end, &missing, &err) != 0)
			free(err);
		free(path);
	}
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_detach(&b);
}

int retry_after_failure(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *native, const char *exit_code, char **new_id, char **err)
{
	struct job_record *r = NULL;
	struct patterns *pat = NULL;
	struct verdict v;
	char *dir = share_dir("templates"), *path = xasprintf("%s/failure-patterns.conf", dir);
	char *out = NULL, *errt = NULL, *why = NULL, *slurm_id = NULL;
	int rc = 0, before;

	*new_id = NULL;
	if (patterns_load(path, &pat, err) != 0) {
		note(st, id, "failure not classified: %s", *err);
		rc = -1;
		goto done;
	}
	if (store_load(st, id, &r, err) != 0) {
		rc = -1;
		goto done;
	}
	out = tail_of(c, r, "main.out");
	errt = tail_of(c, r, "main.err");
	classify_failure(pat, native, exit_code, out, errt, &v);
	if (v.kind == FAILURE_PROGRAM) {
		note(st, id, "failure: the program's (%s)%s%s: not retried", v.reason,
		    v.evidence[0] ? ": " : "", v.evidence);
		goto done;
	}
	before = attempts_before(st, r);
	if (before >= cl->retry_budget) {
		note(st, id, "failure: the infrastructure's (%s)%s%s; the retry budget (%d) is used up: "
		    "not retried", v.reason, v.evidence[0] ? ": " : "", v.evidence, cl->retry_budget);
		goto done;
	}
	note(st, id, "failure: the infrastructure's (%s)%s%s: retry %d of %d", v.reason,
	    v.evidence[0] ? ": " : "", v.evidence, before + 1, cl->retry_budget);
	why = xasprintf("infrastructure failure: %s", v.reason);
	if (retry_job(c, st, cl, id, why, 0, new_id, &slurm_id, err) != 0)
		rc = -1;
	else
		rc = 1;
done:
	free(slurm_id), free(why), free(out), free(errt), free(dir), free(path);
	record_free(r);
	patterns_free(pat);
	return rc;
}

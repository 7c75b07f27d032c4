#include "engine/track/tracker_priv.h"

#include <stdlib.h>

#include "engine/config/config.h"
#include "engine/store/jobref.h"
#include "engine/store/store.h"
#include "engine/submit/secrets.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/xmalloc.h"

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

int tracker_scancel(struct conn *c, const struct job_record *r, char **err)
{
	struct conn_exec x;
	char *cmd = cancel_command(r->backend_ref, r);
	const char *e;
	int rc = -1;

	conn_exec_init(&x, cmd);
	x.timeout_ms = POLL_TIMEOUT_MS;
	if (conn_exec(c, &x, err) == CONN_OK) {
		e = x.err.data ? x.err.data : "";
		if (x.exit_status == 0 || strstr(e, "already completing or completed") ||
		    strstr(e, "Invalid job id"))
			rc = 0;
		else
			*err = xasprintf("scancel refused: %.*s", (int)strcspn(e, "\n"), e);
	}
	conn_exec_free(&x);
	free(cmd);
	return rc;
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

/*
 * A taotop job's efficiency card (engine/store/card.h). Made as it ends by
 * the poll from what it has (the allocation's time and GPUs, the samples
 * of its GPUs the record kept while it ran): no command of its own, so a
 * poll stays one remote command however many jobs end in it. Accounting's
 * facts (CPU efficiency, host memory, the queue wait, a site's GPU TRES)
 * are asked once, in one command, when a user looks at the job (status,
 * the detail view), and kept.
 */
#include "engine/track/tracker_priv.h"

#include <stdlib.h>

#include "engine/config/config.h"
#include "engine/slurm/acctcard.h"
#include "engine/slurm/slurm.h"
#include "engine/store/store.h"
#include "ssh/conn.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define CARD_TIMEOUT_MS	30000

struct card_put {
	const struct acct_facts	*f;	/* NULL: accounting gave none */
	int			 idle_pct;
	int			 applied;
};

static int put_card(struct job_record *r, void *arg, char **err)
{
	struct card_put *p = arg;
	int gpus = r->has_alloc ? r->alloc.gpus : 0;

	(void)err;
	if ((r->has_card && (r->card.acct || p->f == NULL)) || !tao_state_final(r->state))
		return 0;
	card_make(&r->card, p->f, &r->samples, gpus, p->idle_pct);
	if (p->f == NULL && r->has_alloc) {
		/* No word from accounting: the poll's own view of the time. */
		r->card.elapsed_s = r->alloc.elapsed_s;
		r->card.limit_s = r->alloc.limit_s;
		if (r->card.gpus > 0 && r->card.elapsed_s >= 0) {
			r->card.gpu_hours = r->card.gpus * (double)r->card.elapsed_s / 3600.0;
			if (r->card.util_mean >= 0)
				r->card.gpu_hours_used = r->card.gpu_hours * r->card.util_mean / 100.0;
		}
	}
	r->has_card = 1;
	p->applied = 1;
	return 1;
}

void tracker_make_card(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r, int ask)
{
	struct acct_facts f;
	struct card_put p = { NULL, cl->idle_percent, 0 };
	struct conn_exec x;
	char *cmd, *why = NULL, *err = NULL;

	if (!tao_state_final(r->state) || (r->has_card && (r->card.acct || !ask)))
		return;
	if (!ask || r->backend_ref == NULL || !slurm_id_ok(r->backend_ref)) {
		if (store_update(st, r->id, put_card, &p, &err) != 0) {
			log_msg(LOG_WARN, "poll: %s: efficiency: %s", r->id, err ? err : "?");
			free(err);
		} else if (p.applied) {
			p.applied = 0;
			put_card(r, &p, &err);
		}
		return;
	}
	cmd = acct_card_command(r->backend_ref);
	conn_exec_init(&x, cmd);
	x.timeout_ms = CARD_TIMEOUT_MS;
	if (conn_exec(c, &x, &why) != CONN_OK)
		log_msg(LOG_WARN, "poll: %s: efficiency: %s", r->id, why);
	else if (acct_card_parse(x.out.data, r->backend_ref, &f) == 0)
		p.f = &f;
	conn_exec_free(&x);
	free(cmd), free(why);
	if (store_update(st, r->id, put_card, &p, &err) != 0) {
		log_msg(LOG_WARN, "poll: %s: efficiency: %s", r->id, err ? err : "?");
		free(err);
		return;
	}
	if (p.applied) {
		/* The same in memory, for the row built from r. */
		p.applied = 0;
		put_card(r, &p, &err);
	}
}

void tracker_card_complete(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    struct job_record *r)
{
	tracker_make_card(c, st, cl, r, 1);
}

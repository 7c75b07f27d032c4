#include "engine/submit/request.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/config/config.h"
#include "engine/submit/policy.h"
#include "engine/slurm/slurm.h"
#include "engine/submit/spec.h"
#include "engine/submit/submit.h"
#include "util/xmalloc.h"

static const char *env_value(const char *name)
{
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* A partition or a list of them: the list goes whole into --partition
 * (SLURM starts the job on the first that can run it). */
static void resolve_partition(const struct submit_opts *o, const struct spec *spec,
    const struct cluster_cfg *cl, struct request *rq)
{
	const char *v;

	if (o->partition != NULL) {
		rq->partition = o->partition, rq->partition_from = "--partition";
	} else if ((v = env_value("SLURM_PARTITION")) != NULL) {
		rq->partition = v, rq->partition_from = "SLURM_PARTITION";
	} else if (spec->partition != NULL) {
		rq->partition = spec->partition, rq->partition_from = "the bundle";
	} else if (cl->partitions != NULL) {
		rq->partition = cl->partitions, rq->partition_from = "the cluster's partitions";
	} else {
		rq->partition = seed_defaults.partitions, rq->partition_from = "the seed's default";
	}
}

/* Each entry of a comma-separated list one SLURM name; none empty. */
static int list_check(const char *field, const char *value, const char *from, char **err)
{
	const char *p = value;

	if (strlen(value) >= sizeof(((struct request *)0)->kept)) {
		*err = xasprintf("%s (from %s) is %zu bytes: name fewer partitions", field, from,
		    strlen(value));
		return -1;
	}
	for (;;) {
		size_t len = strcspn(p, ",");
		char one[128];
		if (len == 0 || len >= sizeof(one)) {
			*err = xasprintf("%s '%.60s' (from %s) has an empty or overlong entry: write "
			    "names separated by single commas", field, value, from);
			return -1;
		}
		snprintf(one, sizeof(one), "%.*s", (int)len, p);
		if (slurm_name_check(field, one, from, err) != 0)
			return -1;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

static void resolve_account(const struct submit_opts *o, const struct spec *spec,
    const struct cluster_cfg *cl, struct request *rq)
{
	const char *v;

	if (o->account != NULL)
		rq->account = o->account, rq->account_from = "--account";
	else if ((v = env_value("SLURM_ACCOUNT")) != NULL)
		rq->account = v, rq->account_from = "SLURM_ACCOUNT";
	else if (spec->account != NULL)
		rq->account = spec->account, rq->account_from = "the bundle";
	else if (cl->account != NULL)
		rq->account = cl->account, rq->account_from = "the cluster's config";
	else
		rq->account = NULL, rq->account_from = "none asked";
}

static int resolve_requeue(const struct submit_opts *o, struct spec *spec, struct request *rq,
    char **err)
{
	const char *v;

	if (o->requeue != REQUEUE_UNSAID) {
		spec->requeue = o->requeue == REQUEUE_YES;
		rq->requeue_from = spec->requeue ? "--requeue" : "--no-requeue";
	} else if ((v = env_value("SLURM_USE_REQUEUE")) != NULL) {
		if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0)
			spec->requeue = 1;
		else if (strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0 ||
		    strcasecmp(v, "no") == 0)
			spec->requeue = 0;
		else {
			*err = xasprintf("SLURM_USE_REQUEUE is '%.40s': write true or false", v);
			return -1;
		}
		rq->requeue_from = "SLURM_USE_REQUEUE";
	} else {
		rq->requeue_from = spec->requeue >= 0 ? "the bundle" : "the seed's default";
	}
	return 0;
}

int request_resolve(const struct submit_opts *o, struct spec *spec, const struct cluster_cfg *cl,
    struct request *rq, char **err)
{
	memset(rq, 0, sizeof(*rq));
	rq->gpus_from = o->gpus >= 0 ? "--gpus" : spec->gpus >= 0 || spec->gpus_per_node > 0
	    ? "the bundle" : "the seed's default";
	rq->nodes_from = o->nodes > 0 ? "--nodes" : spec->nodes > 0 || spec->gpus_per_node > 0
	    ? "the bundle" : "the seed's default";
	rq->time_from = o->time_hours > 0 ? "--time" : spec->time_hours > 0 ? "the bundle"
	    : "the seed's default";
	if (o->gpus >= 0)
		spec->gpus = o->gpus;
	if (o->nodes > 0)
		spec->nodes = o->nodes;
	if (o->time_hours > 0)
		spec->time_hours = o->time_hours;
	resolve_partition(o, spec, cl, rq);
	resolve_account(o, spec, cl, rq);
	if (resolve_requeue(o, spec, rq, err) != 0)
		return -1;
	if (list_check("partition", rq->partition, rq->partition_from, err) != 0)
		return -1;
	if (rq->account != NULL && slurm_name_check("account", rq->account, rq->account_from,
	    err) != 0)
		return -1;
	return 0;
}

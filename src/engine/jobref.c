#include "engine/jobref.h"

#include <stdlib.h>
#include <string.h>

#include "engine/record.h"
#include "engine/slurm.h"
#include "util/xmalloc.h"

int job_ref_resolve(struct record_store *st, const char *job, struct job_ref *ref, char **err)
{
	char *why = NULL;

	memset(ref, 0, sizeof(*ref));
	if (store_load(st, job, &ref->rec, &why) == 0) {
		free(why);
		if (ref->rec->backend_ref == NULL)
			return 0;	/* opened, never launched */
		if (!slurm_id_ok(ref->rec->backend_ref)) {
			/* Checked on load too; never a word we did not check. */
			*err = xasprintf("%s: its record's SLURM id is not one: refused", job);
			job_ref_free(ref);
			return -1;
		}
		ref->slurm_id = ref->rec->backend_ref;
		return 0;
	}
	free(why);
	if (!slurm_id_ok(job)) {
		*err = xasprintf("%s is neither a taotop job id nor a SLURM job id", job);
		return -1;
	}
	ref->slurm_id = job;
	return 0;
}

static int same(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

void job_ref_adopt(struct record_store *st, const char *cluster, struct job_ref *ref)
{
	struct job_record **recs;
	size_t n, i;

	if (ref->rec != NULL || ref->slurm_id == NULL || store_list(st, &recs, &n, NULL) != 0)
		return;
	for (i = 0; i < n && ref->rec == NULL; i++) {
		if (same(recs[i]->backend_ref, ref->slurm_id) && same(recs[i]->cluster, cluster)) {
			ref->rec = recs[i];
			recs[i] = NULL;
		}
	}
	store_list_free(recs, n);
}

void job_ref_free(struct job_ref *ref)
{
	record_free(ref->rec);
	memset(ref, 0, sizeof(*ref));
}

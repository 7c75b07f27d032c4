#include "engine/store/jobref.h"

#include <stdlib.h>
#include <string.h>

#include "engine/store/recindex.h"
#include "engine/store/store.h"
#include "engine/slurm/slurm.h"
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

/* By the records' index: a hash lookup, not every record read (a cancel by
 * SLURM id runs on the cluster's worker, ahead of its polls). */
void job_ref_adopt(struct record_store *st, const char *cluster, struct job_ref *ref)
{
	struct rec_index *x;
	char *id, *why = NULL;

	if (ref->rec != NULL || ref->slurm_id == NULL || cluster == NULL)
		return;
	x = recindex_of(st);
	recindex_refresh(x, NULL);
	id = recindex_find_ref(x, cluster, ref->slurm_id);
	if (id != NULL && store_load(st, id, &ref->rec, &why) != 0)
		ref->rec = NULL;	/* gone since: nothing to adopt */
	free(why);
	free(id);
}

void job_ref_free(struct job_ref *ref)
{
	record_free(ref->rec);
	memset(ref, 0, sizeof(*ref));
}

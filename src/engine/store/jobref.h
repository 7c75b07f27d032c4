/*
 * A job as the user names it, resolved in one place for every verb and
 * key that acts on one: a taotop id (its record, and the SLURM job that
 * record launched), a SLURM job id ("4242") or an array task ("4242_7").
 * From the records and the name's form alone: nothing remote.
 */
#ifndef TAOTOP_ENGINE_JOBREF_H
#define TAOTOP_ENGINE_JOBREF_H

struct job_record;
struct record_store;

struct job_ref {
	struct job_record	*rec;		/* the record the name is (or, after
						 * job_ref_adopt, the one that launched
						 * it), or NULL */
	const char		*slurm_id;	/* what to give SLURM: the record's
						 * job or the name itself, checked by
						 * slurm_id_ok; NULL for a record never
						 * launched */
};

/* 0 with *ref (job_ref_free frees it); -1 with a sentence naming job in
 * *err when it is neither a record nor a SLURM id. */
int job_ref_resolve(struct record_store *st, const char *job, struct job_ref *ref, char **err);
/* A SLURM id given as itself: the record taotop launched it as on cluster,
 * if there is one (cancelling the job marks its record too). */
void job_ref_adopt(struct record_store *st, const char *cluster, struct job_ref *ref);
void job_ref_free(struct job_ref *ref);

#endif

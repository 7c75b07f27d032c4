/*
 * What a submit asks for, resolved once for the CLI, the wizard, retries and
 * the NCCL probe alike, each value with where it came from:
 *
 *   flags (submit_opts) > the seed's environment (SLURM_PARTITION, a list
 *   that goes whole into --partition, as NVIDIA's references pass it;
 *   SLURM_ACCOUNT; SLURM_USE_REQUEUE) > the bundle > the cluster's config >
 *   the seed's defaults.
 *
 * The GPUs, nodes and hours from flags are written into the spec (the
 * policy reads them there). A partition is one SLURM name or a list of
 * them, comma-separated (SLURM starts the job on the first that can run
 * it); an account is one name: a newline or '#' would write another #SBATCH
 * line; refused before anything is written, naming the field, the value and
 * its origin.
 */
#ifndef TAOTOP_ENGINE_REQUEST_H
#define TAOTOP_ENGINE_REQUEST_H

struct submit_opts;
struct spec;
struct cluster_cfg;

struct request {
	const char	*partition, *partition_from;
	const char	*account, *account_from;	/* account NULL: none asked */
	const char	*requeue_from, *gpus_from, *nodes_from, *time_from;
	char		 kept[512];	/* a list's partitions that can run the job
					 * (the checks' judgement), partition then */
};

/* Resolve into rq (which points into o, spec, cl and the environment: they
 * must outlive it) and write the flags' resources and requeue into spec.
 * -1 with *err for a value that is not one SLURM name or an unreadable
 * SLURM_USE_REQUEUE. */
int request_resolve(const struct submit_opts *o, struct spec *spec, const struct cluster_cfg *cl,
    struct request *rq, char **err);


#endif

/*
 * The seed's submit verb as one pipeline, used by `taotop submit` and (later)
 * the monitor's wizard. Steps, each reported as it runs:
 *
 *   preflight  the spec parses; the policy allows it (time, GPUs)
 *   dataset    one remote command checks every dataset path (test -e), the
 *              image's squashfs magic, the partition's MaxTime and shape
 *              (engine/submit/checks.h); with the image cached, no probe to run and
 *              a time any partition allows, the checks instead run first in
 *              the launch's own script, which stops before its first write
 *              when one fails: then the record opened for it is withdrawn
 *              and the same words say why (a whole submit is one command)
 *   image      a registry image is converted once on the CPU partition
 *              (enroot import to a temp name, then its hsqs magic checked;
 *              its pending reason told while it waits, QOSGrpMemLimit
 *              retried once with the explicit profile: engine/submit/convert.h);
 *              a failed or truncated conversion is fatal, never replaced by
 *              the registry URI
 *   probe      a job with more than one node, or more than one GPU on a
 *              node, needs the cluster's NCCL knobs: cached in the config,
 *              else found by the NCCL probe (engine/submit/probe.h) and cached
 *   record     the record is opened: id minted, results folder bound
 *   spec       spec.yaml (libyaml's emitter), env and meta JSON staged
 *   sidecar    secrets named by the bundle, from the environment, written
 *              0600 from their first byte, never on a command line
 *   lint       the sbatch rendered (no placeholder left), linted for
 *              secrets and waste, and checked with bash -n
 *   submit     a job of the same name refuses it, sbatch --test-only asks
 *              the controller, then sbatch --hold, the %x-%j log folder
 *              made, scontrol release: one remote command; an unclear
 *              answer is settled by the decision table
 *              (engine/submit/settle.h): a job found is adopted,
 *              duplicates cancelled, none found submitted once more under
 *              a new linked record, never blindly
 *
 * Nothing is written on the cluster before the checks pass; a dry run stops
 * after rendering and lists the commands it would have run. The steps after
 * folded checks are told once their answer says they passed.
 */
#ifndef TAOTOP_ENGINE_SUBMIT_H
#define TAOTOP_ENGINE_SUBMIT_H

#include <stdatomic.h>
#include <stddef.h>

struct conn;
struct record_store;
struct cluster_cfg;
struct job_record;

enum submit_step {
	STEP_PREFLIGHT, STEP_DATASET, STEP_IMAGE, STEP_PROBE, STEP_RECORD, STEP_SPEC,
	STEP_SIDECAR, STEP_LINT, STEP_SUBMIT,
};

/* "preflight", "checks" (datasets, image, partition, results folder), ... */
const char *submit_step_name(enum submit_step step);

/* state: 0 started (again with a detail: progress, like the probe's), 1
 * done, -1 failed; detail may be NULL. */
typedef void submit_progress_fn(enum submit_step step, int state, const char *detail,
    void *data);

struct spec;
struct spec_kv;

struct submit_opts {
	const char	*spec_path;	/* the bundle; with spec set, where its relative
					 * supporting files and .env are (NULL: none) */
	const struct spec *spec;	/* the job as given (the monitor's wizard), or
					 * NULL: read from spec_path */
	/* Secret values typed by the user (the wizard, masked): taken before
	 * the environment and .env. Never copied anywhere but the sidecar. */
	const struct spec_kv *secrets;
	size_t		 nsecrets;
	int		 gpus, nodes;	/* -1: from the spec or defaults */
	double		 time_hours;	/* -1: likewise */
	const char	*partition;	/* NULL: likewise */
	const char	*account;	/* NULL: likewise */
	const char	*name;		/* the run's name (--name), over the bundle's
					 * name:; NULL: the bundle's, or none */
	enum { REQUEUE_UNSAID, REQUEUE_YES, REQUEUE_NO } requeue;	/* --[no-]requeue */
	int		 dry_run;
	int		 force_reconvert;	/* reconvert a cached :latest image */
	const char	*template_dir;	/* NULL: taotop's installed templates */
	atomic_int	*cancel;	/* set to cut the remote commands short (the
					 * monitor quitting), or NULL */
};

struct submit_result {
	char	*record_id;
	char	*slurm_id;
	int	 adopted;	/* found by name after an unclear submit */
	char	*settled;	/* an unclear submit: what the lookups found and
				 * what was done (engine/submit/settle.h), or NULL */
	char	*resubmit_of;	/* no job was found: record_id submits once more
				 * for this record, now an infrastructure failure */
	int	 converted;	/* the image was converted this time */
	char	*dry_run;	/* the rendered sbatch and the commands, for --dry-run */
};

int submit_run(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const struct submit_opts *o, submit_progress_fn *progress, void *data,
    struct submit_result *res, char **err);
void submit_result_free(struct submit_result *r);

/* Submit an sbatch already staged on the cluster as record id's job: held,
 * its %x-%j log folder made, released; an ambiguous answer is reconciled by
 * the job's name, never submitted twice. The record gets the SLURM id. Used
 * by submit_run and by retries (which run the staged sbatch of the job they
 * retry under their own name). exclude: sbatch's --exclude (a retry's
 * nodes to keep away from, comma-separated), or NULL. */
int submit_launch_staged(struct conn *c, struct record_store *st, const char *id,
    const char *job_dir, const char *sbatch_path, const char *log_dir, const char *exclude,
    char **slurm_id, int *adopted, char **err);

/* A staged job's folder on the cluster, from its record: <root>/<id of the
 * chain's first job>/ (log_dir is its slurm-logs/). NULL for a record that
 * was never staged. Caller frees. */
char *submit_job_dir(const struct job_record *r);
/* The sbatch staged there, which the chain's every retry runs again. */
char *submit_staged_sbatch(const struct job_record *r);


/* Where templates are: $TAOTOP_SHARE/templates, else next to the binary
 * (../share/taotop/templates, or ../../templates in the source tree), else
 * the build-time data folder. */
char *submit_template_dir(void);

#endif

/*
 * The spec bundle: a YAML file describing one job (templates/example.spec.yaml
 * shows every field). Parsed with libyaml; a syntax error or a wrong field is
 * reported as file:line:column with the field's name and what it should be.
 *
 * Fields left out stay unset here (-1 or NULL): the seed's defaults and the
 * cluster's config fill them later, so that a spec says only what it means.
 */
#ifndef TAOTOP_ENGINE_SPEC_H
#define TAOTOP_ENGINE_SPEC_H

#include <stddef.h>

#include "engine/submit/execution.h"

struct spec_kv {
	char	*key;
	char	*value;
};

struct spec_file {
	char	*path;		/* local path of a supporting file */
	char	*sha256;	/* its expected checksum, hex */
};

/* A declared input of the skill bank's bundle (docs/bank-bundles.md). */
struct spec_input {
	char	*spec_key;	/* where its path goes: a.b[0].c */
	char	*uri;		/* as the bundle wrote it */
	char	*path;		/* on the cluster; NULL: not on shared storage (s3://...) */
	int	 folder;	/* type: folder (else file) */
	int	 optional;
	int	 skipped;	/* optional and missing: its spec key left as it is */
};

/* A declared output: its path (the spec's value, or one under the
 * results folder bound at submit) made before the job runs. */
struct spec_output {
	char	*spec_key;
	char	*path;		/* NULL until bound */
	int	 folder;
	int	 bound;		/* the path is taotop's choice, written into the spec */
	int	 left;		/* the spec's own value, not a path (${results_dir}/x):
				 * left to TAO, path NULL, nothing made */
	char	*under;		/* the spec said "{results_dir}" or "{results_dir}/REST"
				 * (the bank's placeholder, which its platform fills):
				 * "" or "/REST", bound to the job's results folder */
};

enum spec_format { SPEC_FORMAT_TAOTOP, SPEC_FORMAT_BANK };

struct spec {
	/* Which format the bundle was written in: taotop's own, or the skill
	 * bank's spec bundle (spec_bundle.schema.json), read into this same
	 * form (engine/submit/bank.h). */
	enum spec_format format;
	char		*mode;		/* the bank's "config" or "args"; NULL: taotop's */
	/* How TAO's spec is staged: yaml (NULL too), json or toml. */
	char		*config_format;
	struct spec_input *inputs;
	size_t		 ninputs;
	struct spec_output *outputs;
	size_t		 noutputs;
	/* The bank's spec as the bundle gave it: bank_bind starts from it each
	 * time (a submit may bind twice, an optional input left out between). */
	char		*tao_spec_read;
	/* The run's own name (name:, or --name), told apart from its sweep's
	 * other runs in the lists; NULL: none (spec_name_problem's rules). */
	char		*name;
	char		*image;		/* any of the four image forms */
	char		*network_arch;
	char		*action;
	char		*command;	/* for display: the words joined by spaces */
	/* Run in the container as these words, with no shell between: a list
	 * gives them exactly, a text is split at white space. So "$(...)" or
	 * backticks in a command are text, never run by taotop's doing. The
	 * words may name {spec}, {results_dir}, {job_dir} and {job_id}
	 * (engine/submit/command.h); with no command: field, they are TAO's own
	 * (network_arch action -e {spec} results_dir={results_dir}). */
	char		**argv;
	size_t		 argc;
	int		 command_is_taos;	/* argv is TAO's own: no command: field */
	char		**datasets;	/* lustre:/// or slurm:// URIs */
	size_t		 ndatasets;
	char		*results_dir;
	/* 1: the run continues one already in results_dir (its folder is not
	 * refused for holding a run; TAO resumes from its checkpoint); -1 unset. */
	int		 resume;
	/* Where TAO's spec takes the GPUs per node ("train.num_gpus"; the
	 * nodes go to its sibling num_nodes), NULL: from the action
	 * (engine/submit/gpuspec.h); gpu_spec_none: the bundle said null. */
	char		*gpu_spec_key;
	int		 gpu_spec_none;
	/* Segments (docs/segments.md): at the child timeout the job requeues
	 * itself and TAO resumes from the newest checkpoint, passed as
	 * resume_key (NULL: the action's, train.resume_training_checkpoint_path;
	 * resume_key_none: the bundle said null, none passed). */
	int		 auto_resume;	/* -1: unset (on), 0 or 1 */
	char		*resume_key;
	int		 resume_key_none;
	double		 child_timeout_hours;	/* -1: unset (0.95 of the wall) */
	int		 max_segments;	/* -1: unset (the cluster's) */
	int		 gpus, nodes, cpus_per_task;	/* -1: unset */
	int		 gpus_per_node;	/* -1: unset; with nodes, says the shape outright */
	double		 time_hours;			/* -1: unset */
	char		*partition;
	char		*account;
	int		 requeue;	/* -1: unset, 0 or 1 */
	struct spec_kv	*extra_env;	/* name -> value (no secrets: lint checks) */
	size_t		 nextra_env;
	char		**secrets;	/* names of secrets passed by name */
	size_t		 nsecrets;
	struct spec_file *files;
	size_t		 nfiles;
	char		*tao_spec;	/* the "spec:" mapping, as YAML text, or NULL */
	/* The execution: block (engine/submit/execution.h); exec.given 0:
	 * none. */
	struct spec_exec exec;
	/* The cosmos: mapping (engine/submit/cosmos.h): its backend, "rl" or
	 * "framework", NULL when the bundle has none; the nodes given to
	 * Cosmos-RL's rollout replicas (the last ones), 0 none. */
	char		*cosmos_backend;
	int		 cosmos_rollout_nodes;
};

/* TAO's spec (the "spec:" mapping) written out by libyaml's emitter, then
 * read back and compared: -1 with *err if it does not survive the trip. */
int spec_emit_tao(const struct spec *s, char **yaml, char **err);

/* Parse text (named `file` in messages). -1 with *err as
 * "file:line:column: ..." when it is not a valid spec bundle. */
int spec_parse(const char *file, const char *text, size_t len, struct spec *out, char **err);
/* Read and parse a file. */
int spec_load(const char *path, struct spec *out, char **err);
void spec_free(struct spec *s);

/* What TAO's spec holds at a dotted key ("train.results_dir"): a
 * scalar's text as written (caller frees), else NULL (not set, not a
 * scalar, no spec) with a list's length in *list_len (-1 when it is no
 * list; list_len may be NULL). */
char *spec_tao_value(const struct spec *s, const char *dotted, int *list_len);

/* argv joined by single spaces, for display (caller frees). */
char *spec_join_words(char *const *argv, size_t argc);

/* A run's name (the bundle's name:, --name): 1 to SPEC_NAME_MAX letters,
 * digits and - _ . + = @ , : (no spaces, so `taotop jobs` stays one word a
 * column; shown whole in the lists and kept in the record and SLURM's
 * comment). NULL when it is one, else why not (caller frees). */
#define SPEC_NAME_MAX	40
char *spec_name_problem(const char *name);

/* An environment variable's name as the bundle takes it: upper case,
 * digits and '_', not starting with a digit (extra_env, secrets). */
int spec_env_name_ok(const char *name);

#endif

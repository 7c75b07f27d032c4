/*
 * A bundle's `execution` block: the lifecycle the skill bank's spec bundle
 * declares around the primary command (skills/core/tao-artifacts/references/
 * spec_bundle.schema.json, executionContract; its platform's reading in
 * skills/platform/tao-run-on-slurm/references/slurm-container-execution.md):
 *
 *   environment        NAME: value, non-secret (the sbatch lint still
 *                      refuses secrets); values may name the command's
 *                      placeholders ({job_id}, {results_dir},
 *                      {config_path}/{spec}, ...), filled once the record
 *                      is open
 *   pre_commands       shell commands run in order in the job's container,
 *                      before the primary command, on every task; one
 *                      failing ends the task with its code, the primary
 *                      not run
 *   post_commands      run only after the primary command succeeded, on
 *                      task 0 (post_scope: leader, the default) or on every
 *                      task (all)
 *   distributed        launcher direct|torchrun, processes_per_node,
 *                      tasks_per_node (1 only): torchrun runs in front of
 *                      the primary command's words, one Pyxis task a node
 *   supporting_files   {source, destination, sha256}: relative paths, no
 *                      "..", staged under <job_dir>/inputs/action-helpers/
 *   completion         child_exit_code_path (required in it),
 *                      structured_status_path, success_states
 *
 * Parsing is shared by every bundle format taotop reads: a reader hands
 * the `execution` node to exec_parse.
 */
#ifndef TAOTOP_ENGINE_EXECUTION_H
#define TAOTOP_ENGINE_EXECUTION_H

#include <stddef.h>
#include <yaml.h>

struct spec_kv;

struct exec_file {
	char	*source;	/* relative to the bundle's folder */
	char	*destination;	/* relative to <job_dir>/inputs/action-helpers */
	char	*sha256;	/* 64 lower-case hex digits */
};

enum exec_launcher { EXEC_DIRECT = 0, EXEC_TORCHRUN = 1 };

struct spec_exec {
	int		 given;		/* the bundle has an execution block */
	struct spec_kv	*env;
	size_t		 nenv;
	char		**pre;
	size_t		 npre;
	char		**post;
	size_t		 npost;
	int		 post_all;	/* post_scope: all (0: leader, task 0) */
	enum exec_launcher launcher;
	int		 procs_per_node;	/* torchrun's --nproc_per_node; -1: none */
	struct exec_file *files;
	size_t		 nfiles;
	char		*exit_code_path;	/* completion.child_exit_code_path, or NULL */
	char		*status_path;	/* completion.structured_status_path, or NULL */
	char		**success_states;
	size_t		 nsuccess;
};

/* Where supporting files go below the job's folder, and their manifest
 * (beside the folder, so the folder holds only the declared files). */
#define EXEC_HELPERS_DIR	"inputs/action-helpers"
#define EXEC_HELPERS_MANIFEST	"inputs/action-helpers.manifest.json"

/* Read the execution node n of doc (from `file`) into *out (zeroed
 * first). -1 with *err as "file:line:column: field 'execution.X' ...". */
int exec_parse(const char *file, yaml_document_t *doc, const yaml_node_t *n,
    struct spec_exec *out, char **err);
void exec_free(struct spec_exec *e);

/* Whether p is a path the schema allows for a supporting file: relative,
 * no ".." part, no white space, not empty. */
int exec_relpath_ok(const char *p);

/* NULL when no two of the n destinations name one file (or one a folder
 * the other is in, "a" and "a/b"), else a message naming both (caller
 * frees). Compared with "." parts and repeated slashes left out. */
char *exec_destination_clash(char *const *dest, size_t n);

/* A path of the completion block with its placeholders filled (v as the
 * command's, engine/submit/command.h) and, when relative, under
 * results_dir (caller frees); NULL with *err. */
struct command_vars;
char *exec_completion_path(const char *path, const struct command_vars *v, char **err);

#endif

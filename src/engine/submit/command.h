/*
 * The command a job runs in its container, as words.
 *
 * A bundle's command cannot know, when it is written, where taotop will
 * stage its spec or bind its results: the job folder is named at submit
 * time. So its words may name them as placeholders, expanded in each word
 * before the word is quoted (the value stays inside that one word, however
 * many spaces, quotes or "$(...)" it holds):
 *
 *   {spec}          the staged TAO spec, <job_dir>/specs/spec.yaml
 *   {config_path}   the same (the skill bank's name; its spec.json or
 *                   spec.toml for a bank bundle's config_format)
 *   {results_dir}   the results folder, where TAO writes (status.json in
 *                   its task folder: engine/track/taostatus.h)
 *   {job_dir}       the job's folder on shared storage
 *   {job_id}        taotop's id of the job (the SLURM job name)
 *   {num_gpus}      the job's GPUs per node, {num_nodes} its nodes (for
 *                   TAO's train.num_gpus={num_gpus}: engine/submit/gpuspec.h)
 *
 * "{{" and "}}" stand for literal braces; a brace pair around anything that
 * is not a name (Hydra's "{a: 1}") is left as it is. An unknown {name} is an
 * error that names it.
 *
 * A bundle with no command runs TAO's own entry point:
 *   <network_arch> <action> -e {spec} results_dir={results_dir}
 * and the job's count as overrides after it (engine/submit/gpuspec.h).
 * Multi-node jobs need nothing more on the command line: TAO's entry points
 * read the rendezvous (WORLD_SIZE, NUM_GPU_PER_NODE, NODE_RANK, MASTER_ADDR,
 * MASTER_PORT) that the multi-node template exports.
 */
#ifndef TAOTOP_ENGINE_COMMAND_H
#define TAOTOP_ENGINE_COMMAND_H

#include <stddef.h>

struct command_vars {
	const char	*spec;
	const char	*results_dir;
	const char	*job_dir;
	const char	*job_id;
	const char	*num_gpus;	/* per node, as text */
	const char	*num_nodes;
};

/* 0 when every placeholder of word is known; else -1 with *err naming the
 * first unknown one and listing those there are. */
int command_check_word(const char *word, char **err);

/* word with its placeholders replaced (caller frees), or NULL with *err. */
char *command_expand_word(const char *word, const struct command_vars *v, char **err);

/* The same in shell text (an execution block's pre- or post-command, as
 * the skill bank's platform fills them): the values as they are, braces
 * that are no placeholder of ours left to the shell, and a value the
 * shell would read (a character beyond taotop's folders' and ids') refused
 * rather than quoted into text whose quoting is the author's. */
char *command_expand_shell(const char *text, const struct command_vars *v, char **err);

/* TAO's own command for a bundle without one, as words with placeholders
 * (caller frees each and the array); -1 with *err naming the missing field. */
int command_default(const char *network_arch, const char *action, char ***argv, size_t *argc,
    char **err);

#endif

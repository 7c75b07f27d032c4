/* A user of taotop on the test cluster, for tests written from the user's
 * side: a local folder (records, config, bundles), a remote one standing for
 * their project folder on Lustre, and the environment taotop runs with; the
 * CLI verbs as they would type them. */
#ifndef TAOTOP_TESTS_HELPER_USER_H
#define TAOTOP_TESTS_HELPER_USER_H

#include <cJSON.h>

#define USER_TOKEN	"hf_exampleTokenForTheTaoTests0123456789"
#define USER_NGC_KEY	"nvapi-taotop-test-key-0123456789"

struct user {
	char	*local;		/* config.yaml, state/, bundles */
	char	*remote;	/* datasets/imagenet/{train,val}, jobs/ (the results root) */
	char	*env;		/* VAR=value words for rig_taotop */
};

/* A fresh user named name, with config (YAML text, or NULL for none) as
 * their config.yaml; NGC credentials installed as the README says. */
void user_open(struct user *u, const char *name, const char *config);
void user_close(struct user *u);

/* u's config.yaml names two clusters, alpha (the default) and beta, both
 * the rig's login node unless alpha_reachable is 0 (then a port where
 * nothing answers); the environment for them, naming no host or cluster
 * itself (caller frees). */
char *user_two_clusters(struct user *u, int alpha_reachable);

/* `taotop submit BUNDLE --json`, which must succeed: the record id (caller
 * frees); *out the output (caller frees). */
char *user_submit(struct user *u, const char *bundle, char **out);
/* `taotop status ID --json` every 2 s until the job is final, or timeout_s;
 * the last answer (caller deletes). */
cJSON *user_wait_final(struct user *u, const char *id, int timeout_s);
/* The same, with each answer (the last too) shown to each(status, arg). */
cJSON *user_wait_final_each(struct user *u, const char *id, int timeout_s,
    void (*each)(const cJSON *status, void *arg), void *arg);
/* A file of job id's folder on the cluster, whole ("" when missing; a glob
 * in `file` is the shell's, such as a star for the log folder; caller frees). */
char *user_job_file(struct user *u, const char *id, const char *file);
/* A one-GPU TAO bundle for u as u.local/NAME.yaml: TAO's own command
 * unless `command` (YAML lines) is given, HF_TOKEN as a secret, `extra`
 * YAML lines, one epoch. Its path (caller frees). */
char *user_bundle(struct user *u, const char *name, const char *command, const char *extra);
/* templates/example.spec.yaml as a user copies it: its /lustre/ paths
 * pointed at u's folder on the cluster, then each (from, to) of edits
 * applied; labels.txt beside it with the content its sha256 names. Its
 * path, u.local/example.spec.yaml (caller frees). */
char *user_example_bundle(struct user *u, const char *const edits[][2], size_t nedits);
/* The line of text that holds needle, or NULL (caller frees). */
char *text_line_with(const char *text, const char *needle);
/* `taotop ARGS` as u (ARGS printing a JSON array), which must succeed: the
 * array (caller deletes); *out the output (caller frees). */
cJSON *user_json_array(struct user *u, const char *args, char **out);
/* The object of a JSON array whose string member `key` is value, or NULL. */
cJSON *json_find(cJSON *arr, const char *key, const char *value);
/* A string member of o, or "". */
const char *json_str(const cJSON *o, const char *name);
/* Whether any transition of a status's record says `what`. */
int user_history_says(const cJSON *status, const char *what);

#endif

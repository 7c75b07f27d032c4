/*
 * The first-run setup, shared by `taotop init` and the monitor's setup
 * form: the few things a new user must say about a cluster (its login
 * hosts; the user, key, results root, partitions and account when ssh's
 * own config and the seed's defaults do not say them), each checked as it
 * is given with the words the rest of taotop uses, and the cluster they
 * make. Nothing here connects or writes: the caller connects with
 * setup_cluster()'s target, runs the preflight, and, once the user has
 * confirmed, writes it with config_add_cluster().
 */
#ifndef TAOTOP_ENGINE_SETUP_H
#define TAOTOP_ENGINE_SETUP_H

#include <stddef.h>

struct config;
struct cluster_cfg;

enum setup_field {
	SF_HOSTS, SF_NAME, SF_USER, SF_KEY, SF_RESULTS, SF_PARTITIONS, SF_ACCOUNT, SF_COUNT
};

struct setup_draft {
	char	*value[SF_COUNT];	/* as typed, "" when not */
};

void setup_draft_init(struct setup_draft *d);
void setup_draft_free(struct setup_draft *d);
void setup_set(struct setup_draft *d, enum setup_field f, const char *value);

/* The field's label ("login hosts") and its option in `taotop init`
 * ("hosts"). */
const char *setup_label(enum setup_field f);
const char *setup_option(enum setup_field f);
/* One line saying what the field is and what an empty one means, for the
 * hosts and user ones from what ~/.ssh/config says of the hosts typed
 * (caller frees). */
char *setup_hint(const struct setup_draft *d, enum setup_field f);

/* The cluster name an empty name field stands for: the first login host's
 * alias up to its first dot ("login1.ord.example" -> "login1"). Caller
 * frees; "" when there are no hosts. */
char *setup_default_name(const struct setup_draft *d);

/* What is wrong with a field, in a sentence naming it and what to do, or
 * NULL (caller frees). existing: the clusters configured already (a name
 * must be new), may be NULL. */
char *setup_problem(const struct setup_draft *d, enum setup_field f,
    const struct config *existing);
/* The first field with a problem, or -1; *msg gets it. */
int setup_first_problem(const struct setup_draft *d, const struct config *existing, char **msg);

/* The cluster the draft describes, with taotop's defaults for the rest
 * (free with config_cluster_free). */
void setup_cluster(const struct setup_draft *d, struct cluster_cfg *out);

/* Add the draft's cluster, as typed, to the config file
 * (config_add_cluster); *name gets the name it has there (caller frees). */
int setup_write(const struct setup_draft *d, char **name, char **err);

#endif

/*
 * Which clusters taotop talks to and how: the config file
 * ($TAOTOP_CONFIG, else $XDG_CONFIG_HOME/taotop/config.yaml, else
 * ~/.config/taotop/config.yaml) names clusters; the seed's environment
 * variables override every cluster's fields (DESIGN.md: the environment
 * overrides the file), and a verb's flags override both. With no file, the
 * environment describes one cluster. A wrong field in the file is an error
 * with file:line:column; templates/config.example.yaml shows every field.
 *
 *   SLURM_HOSTNAME  login hosts, comma-separated, tried in order (required)
 *   SLURM_USER      the user on the cluster (default: as ssh takes it:
 *                   user@ in hosts, ~/.ssh/config's User, the local user)
 *   SSH_KEY_PATH    the private key, tried first (default: the agent and
 *                   ~/.ssh/config's IdentityFile, then ssh's usual keys)
 *   TAOTOP_SSH_CONFIG  the ssh client config read for every host
 *                   (default ~/.ssh/config)
 *   TAOTOP_KNOWN_HOSTS  known_hosts to check host keys against
 *                   (default ~/.ssh/known_hosts)
 *   TAOTOP_CLUSTER  the cluster's name in records (default "default")
 *   TAOTOP_POLL_S   seconds between status polls (default 10)
 *
 * and for submitting:
 *   SLURM_PARTITION         GPU partitions, comma-separated, given to a job
 *                           whole (default polar,polar3,polar4,grizzly)
 *   SLURM_ACCOUNT           #SBATCH --account (optional)
 *   SLURM_BASE_RESULTS_DIR  shared-storage root for job folders (required to
 *                           submit: lustre:///path or /path on the cluster)
 *   TAOTOP_IMAGE_CACHE      where converted images are kept
 *                           (default <results root>/images)
 *   TAOTOP_CPU_PARTITION    where images are converted (default cpu_long)
 *   TAOTOP_RETRY_BUDGET     retries of an infrastructure failure (default 2)
 */
#ifndef TAOTOP_ENGINE_CONFIG_H
#define TAOTOP_ENGINE_CONFIG_H

#include <stddef.h>

struct conn_target;

struct cluster_cfg {
	char	*name;
	char	*hosts;
	char	*user;
	char	*key_path;
	char	*known_hosts;
	char	*jump;		/* jump hosts, "[user@]host[:port]" comma-separated,
				 * connected by taotop; NULL: ~/.ssh/config's
				 * ProxyJump; "none": no jump host */
	int	 password_auth;	/* answer a server's password request (asked
				 * like a one-time code); off unless set */
	int	 poll_s;
	char	*partitions;
	char	*account;
	char	*results_root;	/* NULL: not set (submit refuses) */
	char	*image_cache;	/* NULL: <results_root>/images */
	char	*cpu_partition;
	/* multi-node: the NCCL probe and retries */
	char	*nccl_env;	/* knobs that passed the probe, cached by taotop
				 * ("" passed without any); NULL: never probed */
	char	*nccl_env_shape; /* the probe's shape that passed with them, "NxG"
				 * (nodes x GPUs per node); NULL: set by hand,
				 * trusted for every shape */
	char	*nccl_ladder;	/* knob sets to try, one per line; NULL: the
				 * shipped templates/nccl-ladder.conf */
	int	 nccl_probe_timeout_s;	/* a probe that runs longer hangs: 120 */
	int	 retry_budget;	/* retries of an infrastructure failure: 10 (tao-core, the skill bank) */
	/* The monitor's history from accounting: finished jobs of the last
	 * history_days (0: none; default 7), asked in one poll's command every
	 * history_every_seconds (300), the newest history_max (1000). */
	int	 history_days;
	int	 history_every_s;
	int	 history_max;
	/* live GPU use (engine/track/usage.h), in the monitor */
	int	 use_s;		/* seconds between sampling rounds: 60 (0: never) */
	int	 idle_percent;	/* GPUs below this count as idle: 5 */
	int	 idle_s;	/* idle this long: flagged (600) */
	int	 stall_s;	/* TAO's epoch unchanged this long: flagged (1800) */
	/* TAO's final line written while SLURM still runs the job: Ending,
	 * cancelled (GPUs freed, TAO's verdict kept) after this long (120). */
	int	 ending_grace_s;
	/* Segments (docs/segments.md): the training step's child timeout as a
	 * share of the wall (95: the seed's 3.8 h of 4), and the most segments
	 * a run may take before it stops (20). A bundle may say its own. */
	int	 child_timeout_pct;
	int	 max_segments;
};

/* One entry of the file's keys: or columns:, with its place in the file:
 * the monitor knows the actions, keys and columns, checks them, and names
 * the place of one it refuses. */
struct config_entry {
	unsigned	 line, col;	/* 1-based */
	char		*name;		/* the action, or the column */
	char		*key;		/* the action's key; NULL for a column */
};

enum { NOTIFY_BELL = 1, NOTIFY_OSC9 = 2, NOTIFY_OSC777 = 4 };

/* The agent's idle time unless the config says: a working day, so a
 * cluster with one-time codes asks once a day. */
#define CONFIG_SHARE_IDLE_S	(8 * 3600)

struct config {
	struct cluster_cfg	*clusters;
	size_t			 n;
	char			*default_name;	/* the file's default_cluster */
	char			*theme;		/* the monitor's theme, or NULL */
	int			 log_colors;	/* 1 render the logs' colours, 0 strip
						 * them, -1 not set */
	unsigned		 notify;	/* NOTIFY_* bits: how the monitor tells of
						 * a state change of taotop's jobs */
	struct config_entry	*columns;	/* the jobs list's columns in order */
	size_t			 ncolumns;
	struct config_entry	*keys;		/* the monitor's own keys */
	size_t			 nkeys;
	/* One SSH session for every taotop of the user (ssh/lend.h): the
	 * monitor and the agent lend theirs, the verbs borrow. share: false
	 * (or TAOTOP_NO_SHARE=1) turns it off; the agent ends after
	 * share_idle_minutes without a client. */
	int			 share;		/* 1 on, 0 off */
	int			 share_idle_s;
};

/* A cluster's name: what it may hold, wherever it is read (the config
 * file, TAOTOP_CLUSTER, taotop init), since it reaches file names, shell
 * completion and the NCCL probe's cached answer. */
#define CONFIG_NAME_RULE "a cluster's name holds only letters, digits, '-', '_' and '.', " \
	"starts with a letter or digit and has at most 64 characters"
int config_name_ok(const char *s);

/* -1 with a sentence naming the wrong or missing input and where to set
 * it; CONFIG_NONE (and a sentence saying how to set one up) when no
 * cluster is configured at all: no file, or none in it, and no
 * SLURM_HOSTNAME. */
enum { CONFIG_NONE = 1 };
int config_load(struct config *cfg, char **err);
void config_free(struct config *cfg);
/* What a cluster's unset fields mean (partitions, cpu_partition, poll,
 * retry budget, probe timeout): for a cluster made outside config_load,
 * such as the first-run setup's draft; retry_budget -1 means unset. */
void config_cluster_defaults(struct cluster_cfg *cl);
void config_cluster_free(struct cluster_cfg *cl);
/* The config file's text alone (named file in messages): no environment,
 * no check that a cluster can be reached. For tests and fuzzing. */
int config_parse(const char *file, const char *text, size_t len, struct config *cfg, char **err);
/* The cluster called name; with NULL, $TAOTOP_CLUSTER, else the file's
 * default_cluster, else the first; NULL if none. */
const struct cluster_cfg *config_cluster(const struct config *cfg, const char *name);
/* Remember the NCCL knobs that passed the probe on cluster `name` in the
 * config file (created if there is none), as its nccl_env field, and the
 * probe's shape ("1x4": one node, 4 GPUs) as nccl_env_shape unless NULL:
 * the rest of the file, comments included, stays as it was; written
 * atomically. */
int config_save_nccl_env(const char *name, const char *env, const char *shape, char **err);
/* Add cluster c (its name, hosts, and user, key, partitions, account and
 * results_root where set) to the config file, created if there is none;
 * the rest of the file stays as it was; written atomically. A name the
 * file has already is refused. */
int config_add_cluster(const struct cluster_cfg *c, char **err);
/* The jobs list's columns, in order, as config.yaml's top-level columns:
 * (one line, in place of what was there); none: the field goes, and the
 * monitor chooses for the width again. The rest of the file stays as it
 * was; written atomically. */
int config_save_columns(const char *const *names, size_t n, char **err);
/* The file config_load reads (caller frees). */
char *config_file_path(void);

/* How to reach it (the strings stay the config's). */
void cluster_target(const struct cluster_cfg *cl, struct conn_target *t);

#endif

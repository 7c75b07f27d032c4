/* What integration tests need from the test cluster of tests/cluster/: its
 * coordinates (read from the env file `up` writes) and ways to run commands.
 * A missing cluster fails the test: it is never a skip. */
#ifndef TAOTOP_TESTS_HELPER_RIG_H
#define TAOTOP_TESTS_HELPER_RIG_H

struct rig {
	char	*state;		/* RIG_STATE */
	char	*host;		/* 127.0.0.1 */
	int	 port;		/* sshd port */
	char	*user;		/* unprivileged test user */
	int	 uid;
	char	*home;
	char	*key;		/* client private key */
	char	*known_hosts;	/* holds only the rig's host key */
	char	*shared;	/* the folder standing for Lustre */
	char	*sshd_config;
	char	*slurm_conf;
	/* one-time codes and bastions (tests/cluster/up) */
	char	*totp_secret;	/* hex, for oathtool --totp */
	char	*totp_users;	/* pam_oath's users file of slot N ("N" in it) */
	char	*totp_sshd;	/* sshd under the name of slot N's PAM service */
	char	*netns;		/* the bastion's network namespace */
	char	*bastion_addr;	/* the bastion listens here, inside it */
	char	*inner_addr;	/* a login host behind the bastion listens here */
};

/* The rig's coordinates; fails the calling test when the cluster is not up. */
const struct rig *rig_get(void);

/* Run argv (NULL-terminated) locally; stdout+stderr into *out (caller frees,
 * may be NULL). Returns the exit status, or 128+signal. */
int rig_run(const char *const argv[], char **out);

/* Run a command on the login node with the system's OpenSSH client as the
 * test user. Returns the remote exit status (255 for ssh's own failures). */
int rig_ssh(const char *cmd, char **out);

/* Like rig_ssh, but fails the test unless it exits 0; returns the output
 * with trailing newlines trimmed (caller frees). */
char *rig_ssh_ok(const char *cmd);

/* sbatch --parsable OPTS --wrap SCRIPT as the test user (SCRIPT quoted by
 * the caller for the login shell); the job id, checked (caller frees). */
char *rig_sbatch(const char *opts, const char *script);

/* Poll `sacct -j ID -X -n -P -o State` until the first word of the state is
 * one of the space-separated words in `want`, or timeout_s passes. Returns the
 * full state line (caller frees); fails the test on timeout. */
char *rig_wait_state(const char *jobid, const char *want, int timeout_s);

struct conn_target;
/* A conn_target for the rig's sshd as its test user, with the rig's
 * known_hosts and no ssh config. The strings are the rig's. */
void rig_target(struct conn_target *t);

/* A private sshd for tests that kill, restart or freeze the server, so they
 * never disturb the rig's own sshd that other tests use at the same time. */
struct rig_sshd {
	int	 port;
	char	*dir;		/* its config, pidfile, host key */
	char	*hosts;		/* "127.0.0.1:PORT" */
	char	*known_hosts;	/* a known_hosts holding its key */
	char	*fingerprint;	/* "SHA256:..." of its host key */
	char	*addr;		/* where it listens: 127.0.0.1 unless set */
	char	*netns;		/* run in this network namespace, or NULL */
	char	*prog;		/* the sshd binary (an absolute path), or NULL */
};
/* Start one on port (shifted by the rig's sshd port minus 2222, so a
 * second rig's tests use their own; d->port is the real one); new_key: generate a fresh host key instead of the
 * rig's. Fails the test if it does not come up. */
void rig_sshd_start(struct rig_sshd *d, int port, int new_key);
/* A private sshd whose config is the rig's changed by sed expressions
 * ("-e 's|...|...|'"), with the rig's host key. */
void rig_sshd_start_conf(struct rig_sshd *d, int port, const char *sed);
/* A private sshd that wants the rig's key and then a TOTP code (PAM,
 * libpam-oath), through PAM slot 1-3 (tests/cluster/up): one per test that
 * may run at the same time as another, since the slot's users file, written
 * afresh here, records the last code used (pam_oath refuses it and older
 * ones). */
void rig_sshd_start_totp(struct rig_sshd *d, int port, int slot);
/* The TOTP code for now + steps x 30 s (oathtool): each login of a test
 * uses a later step, since a code is good once. Caller frees. */
char *rig_totp(int steps);
/* A bastion (in the rig's network namespace; key only, or key and a TOTP
 * code through PAM slot totp_slot when not 0) and a login sshd behind it
 * that lets in only connections from the bastion; both with the rig's host
 * key unless bastion_new_key. Their hosts are "ADDR:PORT". */
void rig_sshd_start_bastion(struct rig_sshd *bastion, int bastion_port, int bastion_new_key,
    int totp_slot, struct rig_sshd *login, int login_port);
/* (Re)start after rig_sshd_stop, with the same key and port. */
void rig_sshd_restart(struct rig_sshd *d);
void rig_sshd_stop(struct rig_sshd *d);
/* Send sig to the processes serving connections (not the listener). */
void rig_sshd_signal_sessions(struct rig_sshd *d, int sig);
void rig_sshd_free(struct rig_sshd *d);

/* The rig's slowlink relay (tests/cluster/slowlink.c, built by `up`) in
 * front of its sshd: the cluster as if far away, and a link a test changes
 * while taotop works through it. */
struct rig_relay {
	int	 port;		/* it listens on 127.0.0.1:port */
	int	 pid;
	char	*dir;		/* its control file and log */
	char	*hosts;		/* "127.0.0.1:PORT", for SLURM_HOSTNAME */
	char	*known_hosts;	/* the rig's host key at that port */
};
/* Start one on port (shifted as rig_sshd_start's), one_way_ms each way. */
void rig_relay_start(struct rig_relay *l, int port, int one_way_ms);
/* "pass", "stall" (hold everything, connections kept) or "drop" (silent:
 * no FIN, no RST, nothing forwarded; the connections stay dead). */
void rig_relay_set(struct rig_relay *l, const char *mode);
/* A number for this test process's names (folders on the rig's shared
 * storage, job names, sockets), random and the same for the life of the
 * process. Not the pid: the machine's pids wrap at 32768, and a rig's
 * shared folders outlive a run (make repeat runs a suite a hundred times
 * on one rig), so a pid comes round to a folder an earlier test left. */
int rig_uniq(void);
/* Whether s matches the extended regular expression re. */
int rig_matches(const char *s, const char *re);

/* The round trips the relay has counted so far (slowlink -r: a question
 * written to the server, then bytes from it; its identification line
 * never counts). */
long long rig_relay_round_trips(const struct rig_relay *l);
/* What crossed the relay, a line per chunk and how it was counted
 * (slowlink -v), for a failed count's message; the caller frees it. */
char *rig_relay_chunks(const struct rig_relay *l);
void rig_relay_stop(struct rig_relay *l);

/* Run the taotop binary under test (TAOTOP_BIN) as a user would, against
 * the rig: its coordinates in the environment, no config file, then env
 * (more VAR=value words, which win) and args, through sh. stdout+stderr
 * into *out (caller frees). Returns its exit status. */
int rig_taotop(const char *env, const char *args, char **out);
/* A run of taotop whose output (out) holds a sanitizer's report, or that
 * exited with the sanitizers' code: the report printed on the suite's
 * stderr and the test failed, whatever it expected of the run. */
#define RIG_SANITIZER_EXIT 86
void rig_check_sanitizer(int rc, const char *out, const char *what);
/* Write a one-GPU bundle as local_dir/ARCH.yaml: network_arch arch,
 * command (a YAML list), a dataset under remote_dir on the cluster (made
 * there), and extra YAML lines (or NULL); no results_dir, so each of its
 * jobs has its own (a command writes there through {results_dir}). Its
 * path (caller frees). */
char *rig_bundle(const char *local_dir, const char *remote_dir, const char *arch,
    const char *command, const char *extra);
/* A local file's text once it holds text (a process writing it has got
 * that far), or as it is after timeout_s (NULL: no such file); the caller
 * frees it and asserts what it wants of it. */
char *rig_wait_file(const char *path, const char *text, int timeout_s);
/* Run a local shell command line; returns its exit status. */
int rig_local(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

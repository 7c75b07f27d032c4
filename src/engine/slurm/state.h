/*
 * TAO states and the one table that maps SLURM's native states to them, as
 * the seed's procedure lays it down. SLURM prints states annotated ("CANCELLED
 * by 1001") and, at the default width, truncated ("CANCELLED+"): only the
 * first word, without '+', is read. "by UID" and the exit code of a cancelled
 * job are never trusted (a slurmctld restart rewrites recent ones).
 */
#ifndef TAOTOP_ENGINE_STATE_H
#define TAOTOP_ENGINE_STATE_H

enum tao_state {
	TAO_UNKNOWN = 0,	/* a native state the table does not know: shown verbatim */
	TAO_PENDING,
	TAO_RUNNING,
	TAO_DONE,
	TAO_ERROR,
	TAO_CANCELED,
};

/* "Pending", "Running", "Done", "Error", "Canceled", "Unknown". */
const char *tao_state_name(enum tao_state st);
/* Parse a name back (case-insensitive); -1 if it is none. */
int tao_state_parse(const char *name, enum tao_state *st);
/* Done, Error and Canceled are final. */
int tao_state_final(enum tao_state st);

/* Whether SLURM's word native (NULL: none) is one of the table's for a job
 * it has not ended yet: a record taotop made final (a cancel, TAO's final
 * line) while SLURM said this still waits for accounting's final word. */
int native_state_live(const char *native);
/* What a native state means for a job. */
struct native_state {
	char		word[32];	/* the first word, '+' dropped: "CANCELLED" */
	enum tao_state	state;		/* TAO_UNKNOWN for a state not in the table */
	int		check_status_json; /* COMPLETED: TAO's status.json decides */
	int		infra_candidate;   /* a failure the retry logic may call infrastructure */
	int		scheduler_owned;   /* SUSPENDED, STOPPED: may resume; say so */
	int		final;		/* SLURM will not change it again */
	int		ending;		/* COMPLETING, STAGE_OUT: the job is ending */
};

/* Map SLURM's state as printed by squeue or sacct. */
void native_state_map(const char *printed, struct native_state *ns);

/* The state a job moves to from `prev` (TAO_UNKNOWN: never seen): the
 * table's, except that a job ending before it ever ran (cancelled while
 * pending: SLURM says COMPLETING for a moment) stays Pending. */
enum tao_state native_state_next(const struct native_state *ns, enum tao_state prev);

/* What a job's STATE cell says: its TAO state's name, or "Ending" while
 * SLURM winds it up (native COMPLETING or STAGE_OUT) or has ended it and
 * TAO's final line is awaited (Running with a final native state):
 * neither running nor final. native may be NULL. */
const char *tao_state_label(enum tao_state st, const char *native);

#endif

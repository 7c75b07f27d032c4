#include "engine/slurm/state.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const names[] = {
	[TAO_UNKNOWN] = "Unknown",
	[TAO_PENDING] = "Pending",
	[TAO_RUNNING] = "Running",
	[TAO_DONE] = "Done",
	[TAO_ERROR] = "Error",
	[TAO_CANCELED] = "Canceled",
};

const char *tao_state_name(enum tao_state st)
{
	if ((unsigned)st < sizeof(names) / sizeof(names[0]))
		return names[st];
	return names[TAO_UNKNOWN];
}

int tao_state_parse(const char *name, enum tao_state *st)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(name, names[i]) == 0) {
			*st = (enum tao_state)i;
			return 0;
		}
	}
	return -1;
}

int tao_state_final(enum tao_state st)
{
	return st == TAO_DONE || st == TAO_ERROR || st == TAO_CANCELED;
}

/*
 * The seed's status mapping, one row per native state. Rows below the rule
 * are states the seed does not name; they map to what they mean for the
 * user's job: requeued and configuring jobs wait, signalling and staging-out
 * jobs still hold their nodes.
 */
static const struct row {
	const char	*native;
	enum tao_state	 state;
	unsigned	 flags;
} table[] = {
#define STATUS_JSON	1u
#define INFRA		2u
#define OWNED		4u
#define FINAL		8u
#define ENDING		16u
	{ "PENDING",		TAO_PENDING,	0 },
	{ "RUNNING",		TAO_RUNNING,	0 },
	{ "COMPLETING",		TAO_RUNNING,	ENDING },
	{ "COMPLETED",		TAO_DONE,	STATUS_JSON | FINAL },
	{ "FAILED",		TAO_ERROR,	INFRA | FINAL },
	{ "BOOT_FAIL",		TAO_ERROR,	INFRA | FINAL },
	{ "DEADLINE",		TAO_ERROR,	INFRA | FINAL },
	{ "OUT_OF_MEMORY",	TAO_ERROR,	INFRA | FINAL },
	{ "NODE_FAIL",		TAO_ERROR,	INFRA | FINAL },
	{ "CANCELLED",		TAO_CANCELED,	FINAL },
	{ "PREEMPTED",		TAO_CANCELED,	FINAL },
	{ "REVOKED",		TAO_CANCELED,	FINAL },
	{ "TIMEOUT",		TAO_ERROR,	FINAL },
	{ "SUSPENDED",		TAO_RUNNING,	OWNED },
	{ "STOPPED",		TAO_RUNNING,	OWNED },
	/* ---- not in the seed's table ---- */
	{ "REQUEUED",		TAO_PENDING,	0 },
	{ "REQUEUE_HOLD",	TAO_PENDING,	0 },
	{ "REQUEUE_FED",	TAO_PENDING,	0 },
	{ "RESV_DEL_HOLD",	TAO_PENDING,	0 },
	{ "CONFIGURING",	TAO_PENDING,	0 },
	{ "RESIZING",		TAO_RUNNING,	0 },
	{ "SIGNALING",		TAO_RUNNING,	0 },
	{ "STAGE_OUT",		TAO_RUNNING,	ENDING },
	{ "SPECIAL_EXIT",	TAO_ERROR,	FINAL },
};

void native_state_map(const char *printed, struct native_state *ns)
{
	size_t i = 0, n = 0;

	memset(ns, 0, sizeof(*ns));
	while (printed[i] != '\0' && isspace((unsigned char)printed[i]))
		i++;
	while (printed[i] != '\0' && !isspace((unsigned char)printed[i]) &&
	    printed[i] != '+' && n < sizeof(ns->word) - 1)
		ns->word[n++] = (char)toupper((unsigned char)printed[i++]);
	ns->word[n] = '\0';
	ns->state = TAO_UNKNOWN;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].native, ns->word) != 0)
			continue;
		ns->state = table[i].state;
		ns->check_status_json = (table[i].flags & STATUS_JSON) != 0;
		ns->infra_candidate = (table[i].flags & INFRA) != 0;
		ns->scheduler_owned = (table[i].flags & OWNED) != 0;
		ns->final = (table[i].flags & FINAL) != 0;
		ns->ending = (table[i].flags & ENDING) != 0;
		break;
	}
}

int native_state_live(const char *native)
{
	struct native_state ns;

	if (native == NULL || native[0] == '\0')
		return 0;
	native_state_map(native, &ns);
	return ns.state != TAO_UNKNOWN && !ns.final;
}

enum tao_state native_state_next(const struct native_state *ns, enum tao_state prev)
{
	if (ns->ending && prev == TAO_PENDING)
		return TAO_PENDING;
	return ns->state;
}

const char *tao_state_label(enum tao_state st, const char *native)
{
	struct native_state ns;

	if (native != NULL && !tao_state_final(st)) {
		native_state_map(native, &ns);
		/* A job SLURM has ended whose TAO state waits for TAO's
		 * final line (COMPLETED: engine/track/tracker_reconcile.c). */
		if (ns.ending || (ns.final && st == TAO_RUNNING))
			return "Ending";
	}
	return tao_state_name(st);
}

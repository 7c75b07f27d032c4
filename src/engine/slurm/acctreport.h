/*
 * The user's jobs in a window, as accounting lists them, for `taotop
 * report`: one `sacct` line per job (its allocation's, -X), with its state,
 * partition, when it was submitted and started, how long it ran and its
 * GPUs. No field is free text (the job's name is not asked). Pure: the
 * command and its parser.
 */
#ifndef TAOTOP_ENGINE_ACCTREPORT_H
#define TAOTOP_ENGINE_ACCTREPORT_H

#include <stddef.h>
#include <time.h>

struct acct_job {
	char	 id[32];
	char	 state[24];	/* the first word ("CANCELLED", not "CANCELLED by 1001") */
	char	 partition[64];
	time_t	 submit, start;	/* 0: unknown (never started) */
	long	 elapsed_s;
	int	 gpus;		/* gres/gpu of AllocTRES, 0 none */
};

/* The command for the jobs that ended or ran in the last since_s seconds
 * (sacct's -S now-N, -E now; the user's own jobs). */
char *acct_report_command(long since_s);
/* Its lines into *out (caller frees), n of them; lines that are not one
 * job's (a warning, a step) are skipped. */
void acct_report_parse(const char *out, struct acct_job **jobs, size_t *n);

#endif

/*
 * Infrastructure or program? From a failed job's final native state, its
 * exit code and the tails of main.out and main.err (the last 500 lines of
 * each, as NVIDIA's SLURM backend reads them), decide whether the failure
 * is the cluster's, worth a retry on a fresh allocation (away from the node
 * it names), or the program's own, surfaced at once and never spending the
 * retry budget. The rules are those of the references (tao-core's
 * RETRIABLE_ERROR_PATTERNS; the skill bank's failure-analysis-retry.md):
 *
 *   - NODE_FAIL and BOOT_FAIL are always the infrastructure's; DEADLINE,
 *     OUT_OF_MEMORY and TIMEOUT never are.
 *   - A root cause of the program's own (out of memory on the host or the
 *     GPU, a device-side assert, an illegal memory access, a CUBLAS/CUDNN
 *     status) decides for the program even when NCCL errors follow it.
 *   - Otherwise a line of the node's or the transport's (an Xid, a GPU off
 *     the bus, a driver too old, NCCL/InfiniBand/RDMA errors...) decides
 *     for the infrastructure: a traceback after an Xid is the node's.
 *   - Otherwise a traceback or an exit code is the program's.
 *   - Lines matching an `ignore` rule (NCCL's INFO debug lines, an
 *     environment echo such as "NCCL_IB_TIMEOUT set by environment to 22")
 *     are never evidence of anything.
 *
 * The rules are data (templates/failure-patterns.conf), so sites add theirs.
 */
#ifndef TAOTOP_ENGINE_CLASSIFY_H
#define TAOTOP_ENGINE_CLASSIFY_H

#include <stddef.h>

struct patterns;

/* Load patterns from text (named `file` in errors); -1 with *err naming the
 * line of a bad one. */
int patterns_parse(const char *file, const char *text, struct patterns **out, char **err);
int patterns_load(const char *path, struct patterns **out, char **err);
void patterns_free(struct patterns *p);

enum failure_kind { FAILURE_PROGRAM = 0, FAILURE_INFRA = 1 };

struct verdict {
	enum failure_kind kind;
	int	 node_tied;	/* the infrastructure's, on the node it ran on (an
				 * Xid, a lost GPU, NODE_FAIL): worth excluding */
	int	 no_retry;	/* the infrastructure's, but a fresh allocation
				 * fails the same way (the cluster's setup: every
				 * NCCL rung hung): surfaced, not retried */
	char	 reason[64];	/* the rule's name, or the native state */
	char	 source[16];	/* "main.err", "main.out", or "" (the state) */
	char	 evidence[256];	/* the line that decided it, or "" */
};

/* How many lines of each log the classifier reads (the references' 500). */
#define CLASSIFY_TAIL_LINES	500

/* Classify. native: SLURM's state word ("FAILED", "NODE_FAIL"...). */
void classify_failure(const struct patterns *p, const char *native, const char *exit_code,
    const char *out_tail, const char *err_tail, struct verdict *v);

/* The node a node-tied verdict names among the job's nodes (accounting's
 * NodeList, expanded): the one its evidence line names (a whole word), or
 * the only node the job had. NULL when it names none: nothing is excluded
 * on a guess. */
const char *classify_verdict_node(const struct verdict *v, const char *const *nodes, size_t n);

#endif

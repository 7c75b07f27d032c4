/*
 * Infrastructure or program? From a failed job's final native state, its
 * exit code and the tails of main.out and main.err, decide whether the
 * failure is the cluster's (NODE_FAIL, BOOT_FAIL, NCCL transport timeouts,
 * CUDA driver initialisation, GPU or InfiniBand link down, the OOM killer,
 * Xid errors, Pyxis/Enroot import failures on the node) and worth a retry on
 * a fresh allocation, or the program's own (a traceback, an assertion, a
 * non-zero exit), which is surfaced at once and never uses the retry budget.
 *
 * The patterns are data (templates/failure-patterns.conf), so sites can add
 * theirs.
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
	char	 reason[64];	/* the pattern's name, or the native state */
	char	 evidence[256];	/* the log line that decided it, or "" */
};

/* Classify. native: SLURM's state word ("FAILED", "NODE_FAIL"...). */
void classify_failure(const struct patterns *p, const char *native, const char *exit_code,
    const char *out_tail, const char *err_tail, struct verdict *v);

#endif

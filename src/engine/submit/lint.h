/*
 * The lint every rendered sbatch passes before it is sent (the seed's
 * redact_secrets.py lint, and its rules against wasting the allocation):
 *
 *  - secrets: Hugging Face tokens (hf_...), NGC keys (nvapi-...), AWS access
 *    keys (AKIA...), private key blocks, and KEY/TOKEN/SECRET/PASSWORD
 *    variables assigned a long random value;
 *  - waste: a --container-image that is not a .sqsh file (a registry URI
 *    pulls on the GPUs), and s3:// or http(s):// fetches in the script.
 *
 * Each finding names its line; a secret's value is never repeated in it.
 */
#ifndef TAOTOP_ENGINE_LINT_H
#define TAOTOP_ENGINE_LINT_H

#include <stddef.h>

/* Findings in text, "\n"-joined as "file:line: what" into *report (NULL when
 * clean; caller frees). Returns the number of findings. */
size_t lint_script(const char *file, const char *text, char **report);

/* The gate every script taotop sends passes (the job's and the NCCL
 * probe's): the lint above, then bash -n, run locally (no secret is in the
 * script to leak). 0, or -1 with *err saying which failed and why. */
int lint_gate(const char *file, const char *text, char **err);

#endif

/* What the submit, multi-node and retry tests share: a test's folder on
 * the rig, its records, a cluster config for the rig, bundles, waiting. */
#ifndef TAOTOP_TESTS_HELPER_SUBMIT_H
#define TAOTOP_TESTS_HELPER_SUBMIT_H

#include "engine/config/config.h"
#include "engine/slurm/state.h"

#define SUB_TOKEN "hf_TaoTopTestToken9f8e7d6c5b4a3928170"

struct submit_result;

struct sub_env {
	struct conn		*conn;
	struct record_store	*store;
	struct cluster_cfg	 cl;		/* nccl_env "" (probed), retry budget 0 */
	char			*base;		/* this test's folder on the shared storage */
	char			*local;		/* local temp folder (bundles, records) */
};

/* cache: the image cache folder, NULL for the test's own. */
void sub_open(struct sub_env *e, const char *name, const char *cache);
void sub_close(struct sub_env *e);
/* Write a bundle locally; %B in text stands for the test's base folder. */
char *sub_bundle(struct sub_env *e, const char *name, const char *text);
int sub_submit(struct sub_env *e, const char *spec, struct submit_result *res, char **err);
/* A file on the rig, whole, or NULL when it does not exist. */
char *sub_slurp(const char *path);
/* Poll until the record is final; its state. */
enum tao_state sub_wait_final(struct sub_env *e, const char *id, int timeout_s);

#endif

/* taotop's records in the skill bank's job-record form: every object
 * checked against a copy of the bank's schema (tests/bank_record_schema.h). */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/bankrecord.h"
#include "util/xmalloc.h"

#include "bank_record_schema.h"

static const char *str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *nth(const cJSON *o, int i)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "transitions"), i);
}

static struct job_record *submitted(const char *id)
{
	struct job_record *r = record_new(id);
	record_set(&r->cluster, "rig");
	record_set(&r->image, "/lustre/images/tao-5.5.0.sqsh");
	record_set(&r->network_arch, "classification_pyt");
	record_set(&r->action, "train");
	record_set(&r->results_dir, "/lustre/root/tao-20261205-0a1b2c/results");
	r->created = 1764900000;	/* 2025-12-05T02:00:00Z */
	record_event(r, "opened: staging", "taotop", 1764900000);
	record_event(r, "submitted as SLURM job 41", "taotop", 1764900003);
	record_set(&r->backend_ref, "41");
	return r;
}

/* A run that went PENDING (Resources), RUNNING, then COMPLETED with TAO's
 * success: three moves after the open, the sub-state in the message, the
 * events of taotop's own (the submit, a note after the end) left out. */
Test(bankrecord, a_done_job_reads_as_the_banks_record)
{
	struct job_record *r = submitted("tao-20261205-0a1b2c");
	record_transition(r, TAO_PENDING, "PENDING", "Resources", "scheduler", 1764900005);
	record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler", 1764900060);
	record_transition(r, TAO_DONE, "COMPLETED", NULL, "scheduler", 1764903600);
	record_event(r, "status.json: Train finished successfully.", "taotop", 1764903601);
	cJSON *o = bankrecord_json(r);

	validate(o);
	cr_expect_str_eq(str(o, "id"), "tao-20261205-0a1b2c");
	cr_expect_str_eq(str(o, "platform"), "slurm");
	cr_expect_str_eq(str(o, "backend_ref"), "41");
	cr_expect_str_eq(str(o, "submitted_at"), "2025-12-05T02:00:00+00:00",
	    "the bank's isoformat(timespec=seconds) in UTC");
	cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "transitions")), 4);
	cr_expect_str_eq(str(nth(o, 0), "state"), "PENDING", "the open comes first");
	cr_expect_str_eq(str(nth(o, 0), "message"), "opened: staging");
	cr_expect_str_eq(str(nth(o, 0), "source"), "agent");
	cr_expect_str_eq(str(nth(o, 1), "message"), "PENDING: Resources");
	cr_expect_str_eq(str(nth(o, 1), "source"), "poller");
	cr_expect_str_eq(str(nth(o, 2), "state"), "RUNNING");
	cr_expect_str_eq(str(nth(o, 3), "state"), "COMPLETE");
	cr_expect_str_eq(str(nth(o, 3), "ts"), "2025-12-05T03:00:00+00:00");
	cr_expect_str_eq(str(o, "terminal_state"), "COMPLETE");
	cr_expect_str_eq(str(o, "terminal_write_by"), "poller");
	cr_expect(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "err_class")));
	cJSON_Delete(o);
	record_free(r);
}

/* A failure taotop judged the cluster's, retried: its class and, in the
 * retry's record, what it retries. */
Test(bankrecord, a_failed_job_and_its_retry_carry_err_class_and_retry_of)
{
	struct job_record *r = submitted("tao-20261205-0a1b2c");
	record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler", 1764900060);
	record_transition(r, TAO_ERROR, "NODE_FAIL", "NODE_FAIL, exit code 0:0", "scheduler",
	    1764900600);
	record_set_err_class(r, RECORD_ERR_INFRA);
	record_event(r, "failure: the infrastructure's (NODE_FAIL): retry 1 of 2", "taotop",
	    1764900601);
	cJSON *o = bankrecord_json(r);
	validate(o);
	cr_expect_str_eq(str(o, "terminal_state"), "ERROR");
	cr_expect_str_eq(str(o, "err_class"), "ERR_INFRA");
	cr_expect_str_eq(str(nth(o, 2), "message"), "NODE_FAIL: NODE_FAIL, exit code 0:0");
	cJSON_Delete(o);

	struct job_record *retry = submitted("tao-20261205-3d4e5f");
	record_set(&retry->retry_of, "tao-20261205-0a1b2c");
	o = bankrecord_json(retry);
	validate(o);
	cr_expect_str_eq(str(o, "retry_of"), "tao-20261205-0a1b2c");
	cr_expect(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "terminal_state")),
	    "still pending: no terminal state");
	cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "transitions")), 1);
	cJSON_Delete(o);
	record_free(retry);
	record_free(r);
}

/* A cancel by the user is the agent's write; accounting's later word for
 * it (CANCELLED, refining RUNNING) is not a move after the terminal one. */
Test(bankrecord, a_cancel_is_the_agents_and_nothing_follows_the_terminal_state)
{
	struct job_record *r = submitted("tao-20261205-0a1b2c");
	record_transition(r, TAO_RUNNING, "RUNNING", NULL, "scheduler", 1764900060);
	record_transition(r, TAO_CANCELED, "RUNNING", "cancelled by the user", "user", 1764900100);
	record_transition(r, TAO_CANCELED, "CANCELLED", NULL, "scheduler", 1764900130);
	record_transition(r, TAO_DONE, "COMPLETED", NULL, "scheduler", 1764900140);
	cJSON *o = bankrecord_json(r);
	validate(o);
	cr_expect_str_eq(str(o, "terminal_state"), "CANCELED");
	cr_expect_str_eq(str(o, "terminal_write_by"), "agent");
	cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "transitions")), 3);
	cJSON_Delete(o);
	record_free(r);
}

/* Whatever a record lacks (an old one, one a submit failed early), the
 * bank's required fields are there and valid. */
Test(bankrecord, a_bare_record_still_validates)
{
	struct job_record *r = record_new("tao-20261205-000000");
	cJSON *o = bankrecord_json(r);
	validate(o);
	cr_expect(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "backend_ref")));
	cr_expect_str_eq(str(nth(o, 0), "state"), "PENDING");
	cJSON_Delete(o);
	record_free(r);
}

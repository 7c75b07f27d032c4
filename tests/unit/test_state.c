/* The seed's state table, row by row, and the ways SLURM prints states. */
#include <criterion/criterion.h>

#include "engine/slurm/state.h"

static enum tao_state map(const char *printed)
{
	struct native_state ns;
	native_state_map(printed, &ns);
	return ns.state;
}

Test(state, the_seeds_table)
{
	struct { const char *native; enum tao_state want; } rows[] = {
		{ "PENDING", TAO_PENDING },
		{ "RUNNING", TAO_RUNNING }, { "COMPLETING", TAO_RUNNING },
		{ "COMPLETED", TAO_DONE },
		{ "FAILED", TAO_ERROR }, { "BOOT_FAIL", TAO_ERROR }, { "DEADLINE", TAO_ERROR },
		{ "OUT_OF_MEMORY", TAO_ERROR }, { "NODE_FAIL", TAO_ERROR },
		{ "CANCELLED", TAO_CANCELED }, { "PREEMPTED", TAO_CANCELED }, { "REVOKED", TAO_CANCELED },
		{ "TIMEOUT", TAO_ERROR },
		{ "SUSPENDED", TAO_RUNNING }, { "STOPPED", TAO_RUNNING },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect_eq(map(rows[i].native), rows[i].want, "%s -> %s", rows[i].native,
		    tao_state_name(map(rows[i].native)));
}

Test(state, annotated_and_truncated_states_read_by_their_first_word)
{
	struct native_state ns;
	cr_expect_eq(map("CANCELLED by 1001"), TAO_CANCELED);
	cr_expect_eq(map("CANCELLED+"), TAO_CANCELED, "the default sacct width");
	cr_expect_eq(map("  CANCELLED by 0  "), TAO_CANCELED);
	cr_expect_eq(map("cancelled"), TAO_CANCELED);
	native_state_map("CANCELLED+ ", &ns);
	cr_expect_str_eq(ns.word, "CANCELLED");
	cr_expect(ns.final);
}

Test(state, completed_defers_to_status_json_and_failures_may_be_infrastructure)
{
	struct native_state ns;
	native_state_map("COMPLETED", &ns);
	cr_expect(ns.check_status_json);
	native_state_map("NODE_FAIL", &ns);
	cr_expect(ns.infra_candidate);
	native_state_map("TIMEOUT", &ns);
	cr_expect(!ns.infra_candidate, "a timeout is the job's own");
	native_state_map("SUSPENDED", &ns);
	cr_expect(ns.scheduler_owned && !ns.final);
}

Test(state, unknown_states_are_kept_verbatim_never_a_crash)
{
	struct native_state ns;
	native_state_map("WIBBLE_STATE extra", &ns);
	cr_expect_eq(ns.state, TAO_UNKNOWN);
	cr_expect_str_eq(ns.word, "WIBBLE_STATE");
	native_state_map("", &ns);
	cr_expect_eq(ns.state, TAO_UNKNOWN);
	native_state_map("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", &ns);
	cr_expect_eq(strlen(ns.word), sizeof(ns.word) - 1, "long words are cut, not overflowed");
}

Test(state, names_round_trip)
{
	for (int s = TAO_UNKNOWN; s <= TAO_CANCELED; s++) {
		enum tao_state back;
		cr_expect_eq(tao_state_parse(tao_state_name((enum tao_state)s), &back), 0);
		cr_expect_eq((int)back, s);
	}
	enum tao_state x;
	cr_expect_eq(tao_state_parse("Finished", &x), -1);
	cr_expect(tao_state_final(TAO_CANCELED) && !tao_state_final(TAO_PENDING));
}

Test(state, completing_is_ending_never_running_for_a_job_that_never_ran)
{
	struct native_state ns;
	native_state_map("COMPLETING", &ns);
	cr_expect(ns.ending && !ns.final);
	cr_expect_eq(native_state_next(&ns, TAO_RUNNING), TAO_RUNNING, "a job that ran winds up");
	cr_expect_eq(native_state_next(&ns, TAO_PENDING), TAO_PENDING,
	    "cancelled while pending: it never ran");
	cr_expect_eq(native_state_next(&ns, TAO_UNKNOWN), TAO_RUNNING);
	native_state_map("RUNNING", &ns);
	cr_expect(!ns.ending);
	cr_expect_eq(native_state_next(&ns, TAO_PENDING), TAO_RUNNING);
	cr_expect_str_eq(tao_state_label(TAO_RUNNING, "COMPLETING"), "Ending");
	cr_expect_str_eq(tao_state_label(TAO_PENDING, "COMPLETING"), "Ending",
	    "the cell never says Running for a cancelled pending job");
	cr_expect_str_eq(tao_state_label(TAO_RUNNING, "STAGE_OUT"), "Ending");
	cr_expect_str_eq(tao_state_label(TAO_RUNNING, "RUNNING"), "Running");
	cr_expect_str_eq(tao_state_label(TAO_RUNNING, NULL), "Running");
	cr_expect_str_eq(tao_state_label(TAO_CANCELED, "COMPLETING"), "Canceled",
	    "a final state is said as it is (marked by the user before SLURM's word)");
}

/* SLURM has ended the job (COMPLETED) and TAO's final line is awaited:
 * neither running nor final (engine/track/tracker_reconcile.c). */
Test(state, a_running_record_slurm_has_ended_is_ending)
{
	cr_expect_str_eq(tao_state_label(TAO_RUNNING, "COMPLETED"), "Ending");
	cr_expect_str_eq(tao_state_label(TAO_DONE, "COMPLETED"), "Done");
	cr_expect_str_eq(tao_state_label(TAO_PENDING, "PENDING"), "Pending");
}

#include <criterion/criterion.h>

#include "engine/track/schedule.h"

Test(schedule, backs_off_while_quiet_and_returns_on_change)
{
	struct poll_schedule s;
	schedule_init(&s, 10, 60);
	cr_expect_eq(s.next_s, 10);
	cr_expect_eq(schedule_after_poll(&s, 0, 0, 0), 20);
	cr_expect_eq(schedule_after_poll(&s, 0, 0, 0), 40);
	cr_expect_eq(schedule_after_poll(&s, 0, 0, 0), 60);
	cr_expect_eq(schedule_after_poll(&s, 0, 0, 0), 60, "capped, and never stops");
	cr_expect_eq(schedule_after_poll(&s, 3, 0, 0), 10, "a change brings the base back");
	cr_expect_eq(schedule_after_poll(&s, 0, 0, 0), 20);
	cr_expect_eq(schedule_user_action(&s), 10);
	cr_expect_eq(schedule_after_poll(&s, 0, 1, 0), 1, "a job just ended: ask again soon");
	cr_expect_eq(schedule_after_poll(&s, 1, 0, 0), 10);
	cr_expect_eq(schedule_after_poll(&s, 0, 1, 1), 20, "a failed poll backs off");
}

/* Accounting that never answers for a job that left the queue (slurmdbd
 * down): soon at first, then backing off like any quiet poll, never a
 * poll a second forever. */
Test(schedule, accounting_that_never_answers_backs_off)
{
	struct poll_schedule s;
	int waits[12], i;
	schedule_init(&s, 10, 60);
	for (i = 0; i < 12; i++)
		waits[i] = schedule_after_poll(&s, 0, 1, 0);
	cr_expect_eq(waits[0], 1);
	cr_expect_eq(waits[1], 1);
	cr_expect_eq(waits[2], 1);
	cr_expect_eq(waits[3], 2);
	cr_expect_eq(waits[4], 4);
	cr_expect_eq(waits[5], 8);
	cr_expect_geq(waits[6], 10, "past the base rate it backs off as a quiet poll");
	cr_expect_eq(waits[11], 60, "capped");
	cr_expect_eq(schedule_after_poll(&s, 1, 0, 0), 10, "an answer brings the base back");
	cr_expect_eq(schedule_after_poll(&s, 0, 1, 0), 1, "and the next wait starts soon again");
}

/* A one-second base (TAOTOP_POLL_S=1): a job that ends after a quiet
 * stretch (polls backed off to the cap) is asked about again in a second,
 * not after the quiet poll's minute. */
Test(schedule, a_one_second_base_asks_again_soon_after_a_quiet_stretch)
{
	struct poll_schedule s;
	int i;
	schedule_init(&s, 1, 60);
	for (i = 0; i < 8; i++)
		schedule_after_poll(&s, 0, 0, 0);
	cr_expect_eq(s.next_s, 60, "quiet: backed off to the cap");
	cr_expect_eq(schedule_after_poll(&s, 0, 1, 0), 1, "the job just left the queue");
	cr_expect_eq(schedule_after_poll(&s, 0, 1, 0), 1);
}

#include <criterion/criterion.h>

#include "engine/schedule.h"

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

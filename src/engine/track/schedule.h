/*
 * When to poll next: every base seconds (10 by default) while things change,
 * backing off by doubling up to a cap (60 s) while nothing does, back to the
 * base on any change or user action, and after 1 s when a job just left the
 * queue and accounting has not caught up. Never stops, however long a job
 * waits: a job pending for three days is still polled.
 */
#ifndef TAOTOP_ENGINE_SCHEDULE_H
#define TAOTOP_ENGINE_SCHEDULE_H

struct poll_schedule {
	int	base_s;
	int	max_s;
	int	next_s;
	int	acct_waits;	/* polls in a row that waited for accounting */
};

void schedule_init(struct poll_schedule *s, int base_s, int max_s);
/* After a poll: changes > 0, or waiting for accounting, or a failed poll. */
int schedule_after_poll(struct poll_schedule *s, unsigned changes, int waiting_for_accounting,
    int failed);
/* The user did something: poll at the base rate again. */
int schedule_user_action(struct poll_schedule *s);

#endif

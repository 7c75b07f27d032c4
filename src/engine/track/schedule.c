#include "engine/track/schedule.h"

void schedule_init(struct poll_schedule *s, int base_s, int max_s)
{
	s->base_s = base_s > 0 ? base_s : 10;
	s->max_s = max_s >= s->base_s ? max_s : 60;
	if (s->max_s < s->base_s)
		s->max_s = s->base_s;
	s->next_s = s->base_s;
	s->acct_waits = 0;
}

int schedule_after_poll(struct poll_schedule *s, unsigned changes, int waiting_for_accounting,
    int failed)
{
	/* Accounting lags the queue by a second or two: look again soon, but
	 * back off like everything else when it does not answer (slurmdbd
	 * down): 1, 1, 1, 2, 4, ... up to the base rate, then as a quiet poll. */
	if (waiting_for_accounting && !failed) {
		int wait = s->acct_waits < 3 ? 1 : 1 << (s->acct_waits - 2 < 10 ? s->acct_waits - 2 : 10);
		s->acct_waits++;
		/* At the base rate too (a base of 1 s: a quiet poll's 60 s
		 * backoff would follow the job's end otherwise). */
		if (wait <= s->base_s)
			return s->next_s = wait;
		s->next_s = s->next_s * 2 > s->max_s ? s->max_s : s->next_s < s->base_s ? s->base_s
		    : s->next_s * 2;
		return s->next_s;
	}
	s->acct_waits = 0;
	if (changes > 0)
		s->next_s = s->base_s;
	else if (s->next_s < s->base_s)
		s->next_s = s->base_s;	/* after a 1 s accounting wait */
	else
		s->next_s = s->next_s * 2 > s->max_s ? s->max_s : s->next_s * 2;
	return s->next_s;
}

int schedule_user_action(struct poll_schedule *s)
{
	return s->next_s = s->base_s;
}

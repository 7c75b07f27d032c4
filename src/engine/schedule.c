#include "engine/schedule.h"

void schedule_init(struct poll_schedule *s, int base_s, int max_s)
{
	s->base_s = base_s > 0 ? base_s : 10;
	s->max_s = max_s >= s->base_s ? max_s : 60;
	if (s->max_s < s->base_s)
		s->max_s = s->base_s;
	s->next_s = s->base_s;
}

int schedule_after_poll(struct poll_schedule *s, unsigned changes, int waiting_for_accounting,
    int failed)
{
	if (waiting_for_accounting && !failed)
		return s->next_s = 1;
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

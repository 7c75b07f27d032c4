#include "engine/watch/watch_event.h"

#include <stdlib.h>
#include <string.h>

void watch_event_free(struct watch_event *ev)
{
	switch (ev->kind) {
	case WATCH_EV_JOBS:
	case WATCH_EV_LINK:
	case WATCH_EV_LOG:
	case WATCH_EV_HOSTKEY:
	case WATCH_EV_ASK:
	case WATCH_EV_USE:
		break;
	case WATCH_EV_OUTCOMES:
		watch_outcomes_free(ev->u.outcomes.v, ev->u.outcomes.n);
		break;
	case WATCH_EV_FILES:
		watch_files_free(ev->u.files.v, ev->u.files.n);
		break;
	case WATCH_EV_RETRY:
		free(ev->u.retry.job);
		free(ev->u.retry.new_id);
		free(ev->u.retry.message);
		break;
	case WATCH_EV_ANSWER:
		free(ev->u.answer.text);
		break;
	case WATCH_EV_STEP:
		free(ev->u.step.detail);
		break;
	case WATCH_EV_SUBMITTED:
		submit_result_free(&ev->u.submitted.res);
		free(ev->u.submitted.err);
		break;
	case WATCH_EV_FLAG:
		free(ev->u.flag.job);
		free(ev->u.flag.text);
		break;
	case WATCH_EV_PREFLIGHT:
		if (ev->u.preflight.ok)
			preflight_free(&ev->u.preflight.p);
		free(ev->u.preflight.err);
		break;
	case WATCH_EV_REPORT:
		for (size_t i = 0; i < ev->u.report.n; i++)
			free(ev->u.report.lines[i]);
		free(ev->u.report.lines);
		free(ev->u.report.err);
		break;
	case WATCH_EV_EXPLAIN:
		for (size_t i = 0; i < ev->u.explain.n; i++)
			free(ev->u.explain.lines[i]);
		free(ev->u.explain.lines);
		free(ev->u.explain.job);
		free(ev->u.explain.err);
		break;
	}
	memset(&ev->u, 0, sizeof(ev->u));
}

void watch_outcomes_free(struct watch_outcome *o, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(o[i].cluster);
		free(o[i].job);
		free(o[i].message);
	}
	free(o);
}

void watch_files_free(struct watch_file *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(f[i].path);
		free(f[i].text);
		free(f[i].error);
	}
	free(f);
}

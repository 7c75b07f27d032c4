#include "cli/jobrow.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/show.h"

#include "engine/store/record.h"
#include "engine/slurm/state.h"
#include "engine/track/tracker.h"
#include "util/buf.h"
#include "util/sanitize.h"

const struct job_row *jobrow_find(const struct poll_result *res, const char *job)
{
	size_t i;

	for (i = 0; i < res->n; i++) {
		const struct job_row *r = &res->rows[i];
		if ((r->record_id && strcmp(r->record_id, job) == 0) ||
		    strcmp(r->slurm_id, job) == 0 || strcmp(r->shown_id, job) == 0)
			return r;
	}
	return NULL;
}

int cli_exit_for_end(enum tao_state st)
{
	return st == TAO_ERROR ? EXIT_JOB_ERROR : st == TAO_CANCELED ? EXIT_JOB_CANCELED : EXIT_OK;
}

void jobrow_time(const struct job_row *r, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", r->elapsed[0] ? r->elapsed : "-", r->limit[0] ? r->limit : "-");
}

void jobrow_size(const struct job_row *r, char *out, size_t len)
{
	if (r->nodes > 0 && r->gpus_known)
		snprintf(out, len, "%dx%d", r->nodes, r->gpus / r->nodes);
	else if (r->nodes > 0)
		snprintf(out, len, "%dx?", r->nodes);
	else if (len > 0)
		out[0] = '\0';
}

cJSON *jobrow_json(const struct job_row *r, const char *cluster)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "cluster", cluster);
	if (r->record_id != NULL)
		cJSON_AddStringToObject(o, "id", r->record_id);
	else
		cJSON_AddNullToObject(o, "id");
	cJSON_AddStringToObject(o, "slurm_id", r->shown_id[0] ? r->shown_id : r->slurm_id);
	cJSON_AddStringToObject(o, "name", r->name ? r->name : "");
	cJSON_AddStringToObject(o, "partition", r->partition ? r->partition : "");
	cJSON_AddNumberToObject(o, "nodes", r->nodes);
	/* gpus stays a number (0 when unknown, as it always was). */
	cJSON_AddNumberToObject(o, "gpus", r->gpus_known ? r->gpus : 0);
	cJSON_AddBoolToObject(o, "gpus_known", r->gpus_known);
	cJSON_AddStringToObject(o, "state", tao_state_name(r->state));
	/* What the STATE column says: "Ending" while SLURM completes it or
	 * TAO has written its final line (tracker_row_label). */
	cJSON_AddStringToObject(o, "shown_state", tracker_row_label(r));
	cJSON_AddStringToObject(o, "native_state", r->native ? r->native : "");
	/* The one format ("00:02:00", "1-00:00:00"), and seconds (null:
	 * unknown, or a limit SLURM gives as a word such as UNLIMITED). */
	cJSON_AddStringToObject(o, "elapsed", r->elapsed);
	if (r->elapsed_s >= 0)
		cJSON_AddNumberToObject(o, "elapsed_s", (double)r->elapsed_s);
	else
		cJSON_AddNullToObject(o, "elapsed_s");
	cJSON_AddStringToObject(o, "time_limit", r->limit);
	if (r->limit_s >= 0)
		cJSON_AddNumberToObject(o, "time_limit_s", (double)r->limit_s);
	else
		cJSON_AddNullToObject(o, "time_limit_s");
	cJSON_AddStringToObject(o, "exit_code", r->exit_code);
	cJSON_AddStringToObject(o, "message", r->message ? r->message : "");
	/* A run that requeues itself: its segments so far (the record's
	 * "segments" list says each). */
	cJSON_AddNumberToObject(o, "segments", r->segments);
	/* A finished job's efficiency card in one figure (the record's
	 * "efficiency" object has the card). */
	if (r->efficiency[0] != '\0')
		cJSON_AddStringToObject(o, "efficiency", r->efficiency);
	if (r->record_id != NULL && r->segments_more >= 0) {
		cJSON_AddNumberToObject(o, "segments_more", r->segments_more);
		cJSON_AddNumberToObject(o, "eta_total_s", (double)r->eta_total_s);
	}
	if (r->epoch >= 0) {
		struct record_progress p = { .epoch = r->epoch, .max_epoch = r->max_epoch,
		    .series = r->series, .nseries = r->nseries };
		snprintf(p.eta, sizeof(p.eta), "%s", r->eta);
		snprintf(p.metric, sizeof(p.metric), "%s", r->metric);
		record_progress_json(o, &p);
	}
	return o;
}

void jobrow_print_json(cJSON *o)
{
	char *text = cJSON_Print(o);
	struct buf b;

	/* Through the sanitiser's JSON form, on a terminal or not: what a
	 * JSON reader gets is the same, and a terminal never meets another
	 * user's C1 controls or bidirectional marks (cJSON passes them raw). */
	buf_init(&b);
	sanitize_append_json(&b, text, strlen(text));
	puts(b.data);
	buf_free(&b);
	cJSON_free(text);
	cJSON_Delete(o);
}


void jobrow_print_resume(const struct job_record *rec)
{
	if (rec == NULL || rec->retry_of == NULL || rec->resume_dir == NULL)
		return;
	printf("  results %s\n", show(rec->results_dir ? rec->results_dir : "-"));
	if (rec->resume_checkpoint != NULL)
		printf("  resumes from %s (the newest checkpoint in %s)\n",
		    show(rec->resume_checkpoint), show(rec->resume_dir));
	else
		printf("  starts from the start: no checkpoint in %s\n", show(rec->resume_dir));
}

/*
 * `taotop submit SPEC`: the engine's submit pipeline (engine/submit/submit.h)
 * with the options above the bundle's, each step printed as it runs, the
 * result as a sentence or JSON; --dry-run prints what would be sent.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/jobrow.h"
#include "cli/session.h"
#include "cli/show.h"
#include "engine/submit/spec.h"
#include "engine/submit/submit.h"

/* How the steps are printed, and whether a failure was said under its
 * step (then it is not said again). */
struct steps {
	int	utf8;
	int	failure_said;
};

/* Each step as it runs: "✓ dataset", "✗ image: why". */
static void print_step(enum submit_step step, int state, const char *detail, void *data)
{
	struct steps *st = data;
	const int *utf8 = &st->utf8;

	if (state == 0 && detail == NULL)
		return;
	if (state == 0) {
		/* Progress of a long step (the image conversion's). */
		printf("%s %s: %s\n", *utf8 ? "\xe2\x80\xa6" : "...", submit_step_name(step), show(detail));
		fflush(stdout);
		return;
	}
	if (state < 0)
		st->failure_said = 1;
	fprintf(state > 0 ? stdout : stderr, "%s %s%s%s\n",
	    state > 0 ? (*utf8 ? "\xe2\x9c\x93" : "ok") : (*utf8 ? "\xe2\x9c\x97" : "FAILED"),
	    submit_step_name(step), detail ? ": " : "", detail ? show_on(state > 0 ? stdout : stderr, detail) : "");
	fflush(stdout);
}

/* Option name as a whole number of at least min into *out, if given. */
static int int_option(const struct cli_args *a, const char *name, int min, int *out)
{
	const char *v = cli_val(a, name);
	char *end;
	long n;

	if (v == NULL)
		return 0;
	n = strtol(v, &end, 10);
	if (*v == '\0' || *end != '\0' || n < min || n > 1000000)
		return -1;
	*out = (int)n;
	return 0;
}

/* The options into o: -1 when one does not read, said on stderr. */
static int read_opts(const struct cli_args *a, struct submit_opts *o)
{
	const char *v;
	char *end;

	if (int_option(a, "nodes", 1, &o->nodes) != 0) {
		fprintf(stderr, "taotop submit: --nodes takes a whole number of nodes (1, 2, ...), "
		    "not '%s'\n", show_err(cli_val(a, "nodes")));
		return -1;
	}
	if (int_option(a, "gpus", 0, &o->gpus) != 0) {
		fprintf(stderr, "taotop submit: --gpus takes a whole number of GPUs in all (1, 8, "
		    "16, ...), not '%s'\n", show_err(cli_val(a, "gpus")));
		return -1;
	}
	if ((v = cli_val(a, "time")) != NULL) {
		o->time_hours = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || !(o->time_hours > 0)) {
			fprintf(stderr, "taotop submit: --time takes the limit in hours as a number "
			    "(0.5, 4, 12), not '%s'\n", show_err(v));
			return -1;
		}
	}
	o->partition = cli_val(a, "partition");
	o->account = cli_val(a, "account");
	o->name = cli_val(a, "name");
	if (o->name != NULL) {
		/* Said before any login, as the other options' values. */
		char *why = spec_name_problem(o->name);
		if (why != NULL) {
			fprintf(stderr, "taotop submit: --name %s\n", why);
			free(why);
			return -1;
		}
	}
	/* Of --requeue and --no-requeue, the later wins. */
	if (cli_at(a, "requeue") > cli_at(a, "no-requeue"))
		o->requeue = REQUEUE_YES;
	else if (cli_at(a, "no-requeue") > 0)
		o->requeue = REQUEUE_NO;
	o->dry_run = cli_val(a, "dry-run") != NULL;
	o->force_reconvert = cli_val(a, "force-reconvert") != NULL;
	o->spec_path = a->pos[0];
	return 0;
}

/* Whether the terminal takes UTF-8 marks, by the locale's variables. */
static int utf8_locale(void)
{
	const char *lang = getenv("LC_ALL");

	if (lang == NULL || *lang == '\0')
		lang = getenv("LC_CTYPE");
	if (lang == NULL || *lang == '\0')
		lang = getenv("LANG");
	return lang != NULL && (strstr(lang, "UTF-8") || strstr(lang, "utf8"));
}

static void print_result_json(const struct submit_result *res, int submitted, const char *err)
{
	cJSON *obj = cJSON_CreateObject();

	cJSON_AddBoolToObject(obj, "submitted", submitted);
	if (err != NULL) {
		cJSON_AddStringToObject(obj, "error", err);
		if (res->record_id)
			cJSON_AddStringToObject(obj, "id", res->record_id);
		jobrow_print_json(obj);
		return;
	}
	cJSON_AddStringToObject(obj, "id", res->record_id ? res->record_id : "");
	if (res->slurm_id)
		cJSON_AddStringToObject(obj, "slurm_id", res->slurm_id);
	cJSON_AddBoolToObject(obj, "adopted", res->adopted);
	if (res->settled)
		cJSON_AddStringToObject(obj, "settled", res->settled);
	if (res->resubmit_of)
		cJSON_AddStringToObject(obj, "resubmit_of", res->resubmit_of);
	cJSON_AddBoolToObject(obj, "image_converted", res->converted);
	if (res->dry_run)
		cJSON_AddStringToObject(obj, "dry_run", res->dry_run);
	jobrow_print_json(obj);
}

int cli_submit(const struct cli_args *a)
{
	struct submit_opts o = { .gpus = -1, .nodes = -1, .time_hours = -1 };
	struct submit_result res;
	struct session s;
	char *err = NULL;
	struct steps steps = { utf8_locale(), 0 };
	int rc, json = cli_val(a, "json") != NULL;

	if (read_opts(a, &o) != 0)
		return cli_usage_error(a->verb);
	if ((rc = session_open(&s, cli_val(a, "cluster"), NULL)) != EXIT_OK)
		return rc;
	if (submit_run(s.conn, s.store, s.cl, &o, json ? NULL : print_step, &steps, &res, &err) != 0) {
		if (json)
			print_result_json(&res, 0, err);
		else if (!steps.failure_said)	/* said once, under its step */
			fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		rc = EXIT_FAILED;
	} else if (json) {
		print_result_json(&res, !o.dry_run, NULL);
	} else if (o.dry_run) {
		fputs(res.dry_run, stdout);
	} else {
		printf("submitted %s as SLURM job %s%s\n", res.record_id, res.slurm_id,
		    res.adopted ? " (found by name after the answer was lost)" : "");
		if (res.resubmit_of != NULL)
			printf("  %s: the submit's answer was lost and no job of its name appeared "
			    "(an infrastructure failure); submitted once more as %s\n",
			    res.resubmit_of, res.record_id);
		if (res.settled != NULL)
			printf("  %s\n", show(res.settled));
	}
	submit_result_free(&res);
	session_close(&s);
	return rc;
}

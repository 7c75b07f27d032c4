/*
 * `taotop status JOB`: one poll of the job's cluster, the job's row, its
 * GPUs sampled once when it runs, and its record's history; --watch polls
 * on the engine's schedule until the job is final.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/jobrow.h"
#include "cli/session.h"
#include "cli/share.h"
#include "cli/show.h"
#include "engine/store/bankrecord.h"
#include "engine/logs/roles.h"
#include "engine/store/store.h"
#include "engine/track/actions.h"
#include "engine/track/schedule.h"
#include "engine/slurm/state.h"
#include "engine/track/tracker.h"
#include "engine/track/usage.h"
#include "util/xmalloc.h"

/* show_status's answer when the poll itself failed (the connection, the
 * login node): --watch rides it out, a single status reports it. */
#define STATUS_POLL_FAILED	(-2)

/* What one status shows: the row, its record, its GPUs. */
struct status {
	const struct job_row	*row;
	struct job_record	*rec;		/* or NULL: not taotop's */
	struct job_use		 use;
	int			 have_use;
	char			*use_why;	/* why not, or NULL */
	char			**why;		/* --why: why it waits (sanitised lines) */
	size_t			 nwhy;
	char			*why_error;	/* --why: why that is not known, or NULL */
	char			**card;		/* a finished job not taotop's: its card */
	size_t			 ncard;
};

/* A running job's GPUs, sampled once on its nodes (engine/track/usage.h): 0 and
 * u filled, or -1 when it is not running, sampling is off for the cluster,
 * or it could not be read (*why, caller frees). */
static int sample_row(struct session *s, const struct job_row *row, struct job_use *u, char **why)
{
	struct use_job j;
	struct use_round r;

	*why = NULL;
	if (row->state != TAO_RUNNING || row->ending ||
	    (row->native != NULL && strcmp(row->native, "RUNNING") != 0) ||
	    !use_id_ok(row->slurm_id) || s->cl->use_s <= 0)
		return -1;
	memset(&j, 0, sizeof(j));
	j.slurm_id = row->slurm_id;
	j.record_id = row->record_id;
	j.nodes = row->nodes > 0 ? row->nodes : 1;
	j.epoch = row->epoch;
	if (use_sample(s->conn, &j, 1, &r, why) != 0)
		return -1;
	if (r.unavailable != NULL || r.n != 1 || !r.jobs[0].ok) {
		*why = xstrdup(r.unavailable ? r.unavailable : r.n == 1 ? r.jobs[0].error : "no answer");
		use_round_free(&r);
		return -1;
	}
	*u = r.jobs[0];
	if (u->at == 0)
		u->at = time(NULL);
	/* Kept for the job's efficiency card, as the monitor's rounds are. */
	use_fold_records(s->store, u, 1, &j, 1, s->cl->idle_percent);
	use_round_free(&r);
	return 0;
}

/* A reading, or null where nvidia-smi could not read it ("[N/A]"). */
static void use_json_number(cJSON *o, const char *key, int v)
{
	if (v == USE_UNKNOWN)
		cJSON_AddNullToObject(o, key);
	else
		cJSON_AddNumberToObject(o, key, v);
}

static cJSON *use_json(const struct job_use *u)
{
	cJSON *o = cJSON_CreateObject(), *gpus = cJSON_AddArrayToObject(o, "gpus");
	int g;

	use_json_number(o, "util_mean", use_mean_util(u));
	for (g = 0; g < u->ngpu; g++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "node", show(u->gpu[g].node));
		cJSON_AddNumberToObject(e, "index", u->gpu[g].index);
		use_json_number(e, "util", u->gpu[g].util);
		use_json_number(e, "mem_used_mib", u->gpu[g].mem_used);
		use_json_number(e, "mem_total_mib", u->gpu[g].mem_total);
		cJSON_AddItemToArray(gpus, e);
	}
	cJSON_AddNumberToObject(o, "cpu_load", u->load);
	cJSON_AddNumberToObject(o, "rss_kib", (double)u->rss_kib);
	return o;
}

static void print_status_json(const struct status *st, const char *cluster)
{
	cJSON *o = jobrow_json(st->row, cluster);

	if (st->rec != NULL) {
		char *text = record_to_json(st->rec);
		cJSON_AddItemToObject(o, "record", cJSON_Parse(text));
		free(text);
	}
	if (st->have_use)
		cJSON_AddItemToObject(o, "use", use_json(&st->use));
	else if (st->use_why != NULL)
		cJSON_AddStringToObject(o, "use_error", show(st->use_why));
	if (st->ncard > 0)
		cJSON_AddItemToObject(o, "efficiency_lines", cJSON_CreateStringArray(
		    (const char *const *)st->card, (int)st->ncard));
	if (st->nwhy > 0)
		cJSON_AddItemToObject(o, "why_waiting", cJSON_CreateStringArray(
		    (const char *const *)st->why, (int)st->nwhy));
	else if (st->why_error != NULL)
		cJSON_AddStringToObject(o, "why_waiting_error", show(st->why_error));
	jobrow_print_json(o);
}

/* The first lines: the state, then what it ran on and for how long, in
 * the one time format. */
static void print_head(const struct job_row *row)
{
	char nxg[32], tl[64];

	printf("%s  %s  (SLURM %s, %s)%s%s\n", show(row->record_id ? row->record_id : row->name),
	    tracker_row_label(row),
	    show(row->shown_id[0] ? row->shown_id : row->slurm_id),
	    show(row->native ? row->native : "not seen yet"), row->message ? ": " : "",
	    show(row->message ? row->message : ""));
	jobrow_size(row, nxg, sizeof(nxg));
	jobrow_time(row, tl, sizeof(tl));
	if (row->partition != NULL || nxg[0] != '\0' || row->elapsed[0] || row->limit[0])
		printf("  partition %s, nodes x GPUs %s, time %s%s%s\n",
		    show(row->partition && row->partition[0] ? row->partition : "-"),
		    nxg[0] ? nxg : "-", show(tl), row->exit_code[0] ? ", exit code " : "",
		    show(row->exit_code));
}

/* TAO's progress: the epoch, its eta, the metric's series. */
static void print_progress(const struct job_row *row)
{
	size_t i;

	if (row->epoch < 0)
		return;
	printf("  epoch %d", row->epoch);
	if (row->max_epoch > 0)
		printf("/%d", row->max_epoch);
	if (row->eta[0] != '\0')
		printf(", eta %s", show(row->eta));
	if (row->nseries > 0) {
		printf(", %s:", show(row->metric));
		for (i = 0; i < row->nseries; i++)
			printf(" %g", row->series[i]);
	}
	printf("\n");
}

static void print_use(const struct status *st)
{
	char mem[32];
	int g;

	if (!st->have_use) {
		if (st->use_why != NULL)
			printf("  GPU use not read: %s\n", show(st->use_why));
		return;
	}
	use_mem_text(&st->use, mem, sizeof(mem));
	if (use_mean_util(&st->use) == USE_UNKNOWN)
		printf("  GPU use n/a (nvidia-smi cannot read it on these GPUs), memory %s:", mem);
	else
		printf("  GPU use %d %% mean, memory %s:", use_mean_util(&st->use), mem);
	for (g = 0; g < st->use.ngpu; g++) {
		if (st->use.gpu[g].util == USE_UNKNOWN)
			printf(" %s/gpu%d n/a", show(st->use.gpu[g].node), st->use.gpu[g].index);
		else
			printf(" %s/gpu%d %d %%", show(st->use.gpu[g].node), st->use.gpu[g].index,
			    st->use.gpu[g].util);
	}
	printf("; CPU load %.2f, %.1f GiB resident\n", st->use.load, st->use.rss_kib / 1048576.0);
}

/* The nodes its sbatch excluded (a retry's), each with why. */
static void print_exclude(const struct job_record *rec)
{
	size_t i;

	for (i = 0; rec != NULL && i < rec->nexclude; i++)
		printf("  excluded node %s%s%s%s%s\n", show(rec->exclude[i].node),
		    rec->exclude[i].from ? ": " : "", show(rec->exclude[i].from ? rec->exclude[i].from
		    : ""), rec->exclude[i].evidence ? " failed there: " : "",
		    show(rec->exclude[i].evidence ? rec->exclude[i].evidence : ""));
}

/* A Cosmos-RL job's roles: each one's state and its own log (one remote
 * read of the exit codes the ended ones left). */
static void print_roles(struct session *s, const struct job_record *rec)
{
	struct role_state *v;
	size_t n, i;
	char *err = NULL;

	if (rec == NULL || rec->roles == NULL)
		return;
	if (roles_read(s->conn, rec, &v, &n, &err) != 0) {
		printf("  roles: %s\n", show(err));
		free(err);
	}
	for (i = 0; i < n; i++) {
		char rc[32] = "";
		if (v[i].rc > 0)
			snprintf(rc, sizeof(rc), ", exit code %d", v[i].rc);
		printf("  role %-12s %s%s  %s\n", show(v[i].name), v[i].state, rc,
		    v[i].log ? show(v[i].log) : "(no log before the launch)");
	}
	roles_free(v, n);
}

/* A run's segments (one SLURM start each, requeued at its child timeout). */
static void print_segments(const struct job_record *rec)
{
	size_t i;

	for (i = 0; rec != NULL && rec->nseg > 1 && i < rec->nseg; i++) {
		const struct record_segment *s = &rec->seg[i];
		char from[32] = "-", to[32] = "-";
		struct tm tm;
		if (s->start != 0 && localtime_r(&s->start, &tm) != NULL)
			strftime(from, sizeof(from), "%Y-%m-%d %H:%M:%S", &tm);
		if (s->end != 0 && localtime_r(&s->end, &tm) != NULL)
			strftime(to, sizeof(to), "%H:%M:%S", &tm);
		printf("  segment %d  %s .. %s  %s", s->n, from, to, s->outcome[0] ? show(s->outcome)
		    : "running");
		if (s->epoch_end >= 0)
			printf(", epoch %d", s->epoch_end);
		if (s->resumed_from != NULL)
			printf(", resumed from %s", show(s->resumed_from));
		printf("\n");
	}
}

/* The record's transitions, oldest first. */
static void print_history(const struct job_record *rec)
{
	size_t i;

	for (i = 0; rec != NULL && i < rec->nhist; i++) {
		const struct transition *t = &rec->hist[i];
		char when[32];
		struct tm tm;
		localtime_r(&t->at, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("  %s  %-8s -> %-8s %-10s %-9s %s\n", when, tao_state_name(t->from),
		    tao_state_name(t->to), show(t->native ? t->native : ""), show(t->source),
		    show(t->message ? t->message : ""));
	}
}

/* One poll and the job's status printed; *final and *state say where it
 * is. */
static int show_status(struct session *s, const char *job, int json, int bank, int why,
    int *final,
    enum tao_state *state, struct poll_schedule *sched, int *asked_history)
{
	struct poll_result res;
	struct status st;
	char *err = NULL;

	if (session_poll(s, &res) != 0) {
		schedule_after_poll(sched, 0, 0, 1);
		return STATUS_POLL_FAILED;
	}
	schedule_after_poll(sched, (unsigned)res.changes, res.waiting_for_accounting,
	    !res.scheduler_ok);
	memset(&st, 0, sizeof(st));
	if ((st.row = jobrow_find(&res, job)) == NULL && !*asked_history && s->cl->history_days > 0) {
		/* A job that ended, not taotop's: accounting's history window
		 * has it, as `taotop jobs --since` lists it (asked once). */
		poll_result_free(&res);
		*asked_history = 1;
		tracker_set_history(s->tracker, s->cl->history_days * 86400L, 86400L,
		    (unsigned)s->cl->history_max);
		if (session_poll(s, &res) != 0)
			return STATUS_POLL_FAILED;
		st.row = jobrow_find(&res, job);
	}
	if (st.row == NULL && *asked_history) {
		fprintf(stderr, "taotop: no job %s on %s: not a taotop record, not a live job of "
		    "yours, and not one of yours that accounting lists for the last %d days\n",
		    show_err(job), s->cl->name, s->cl->history_days);
		poll_result_free(&res);
		return EXIT_FAILED;
	}
	if (st.row == NULL) {
		fprintf(stderr, "taotop: no job %s on %s: not a taotop record, and not a live job "
		    "of yours\n", show_err(job), s->cl->name);
		poll_result_free(&res);
		return EXIT_FAILED;
	}
	*final = tao_state_final(st.row->state);
	*state = st.row->state;
	if (st.row->record_id != NULL && store_load(s->store, st.row->record_id, &st.rec, &err) != 0)
		session_say(0, err);
	/* A finished job's card with accounting's facts, asked once. */
	if (st.rec != NULL && tao_state_final(st.rec->state) &&
	    !(st.rec->has_card && st.rec->card.acct))
		tracker_card_complete(s->conn, s->store, s->cl, st.rec);
	if (bank) {
		if (st.rec == NULL) {
			fprintf(stderr, "taotop: job %s is not one of taotop's (no record of it on "
			    "this machine): only taotop's own jobs have a job record to print\n",
			    show_err(job));
			poll_result_free(&res);
			return EXIT_FAILED;
		}
		jobrow_print_json(bankrecord_json(st.rec));
		record_free(st.rec);
		poll_result_free(&res);
		return EXIT_OK;
	}
	st.have_use = sample_row(s, st.row, &st.use, &st.use_why) == 0;
	if (why && st.row->state == TAO_PENDING) {
		char *werr = NULL;
		if (job_explain_pending(s->conn, s->store, st.row->slurm_id[0] ? st.row->slurm_id :
		    job, &st.why, &st.nwhy, &werr) != 0) {
			st.why_error = werr;
		}
	} else if (why) {
		st.why_error = xasprintf("it is not pending (%s): nothing waits",
		    tracker_row_label(st.row));
	}
	if (st.rec == NULL && tao_state_final(st.row->state) && st.row->slurm_id[0] != '\0') {
		/* Not taotop's: its efficiency card from accounting alone. */
		char *cerr = NULL;
		if (job_card_lines(s->conn, st.row->slurm_id, s->cl->idle_percent, &st.card,
		    &st.ncard, &cerr) != 0)
			free(cerr);
	}
	if (json) {
		print_status_json(&st, s->cl->name);
	} else {
		print_head(st.row);
		if (st.rec != NULL && st.rec->name != NULL)
			printf("  name %s (%s %s)\n", show(st.rec->name),
			    show(st.rec->network_arch ? st.rec->network_arch : "-"),
			    show(st.rec->action ? st.rec->action : "-"));
		print_progress(st.row);
		print_use(&st);
		if (st.rec != NULL && st.rec->has_card) {
			char **cl;
			size_t ncl = card_lines(&st.rec->card, &cl);
			printf("  efficiency:\n");
			for (size_t i = 0; i < ncl; i++) {
				printf("  %s\n", cl[i]);
				free(cl[i]);
			}
			free(cl);
		}
		print_exclude(st.rec);
		jobrow_print_resume(st.rec);
		print_segments(st.rec);
		print_roles(s, st.rec);
		print_history(st.rec);
		for (size_t i = 0; i < st.ncard; i++)
			printf("  %s\n", show(st.card[i]));
		for (size_t i = 0; i < st.nwhy; i++)
			printf("%s\n", st.why[i]);
		if (st.why_error != NULL)
			printf("Why it waits: %s\n", show(st.why_error));
	}
	for (size_t i = 0; i < st.ncard; i++)
		free(st.card[i]);
	free(st.card);
	for (size_t i = 0; i < st.nwhy; i++)
		free(st.why[i]);
	free(st.why), free(st.why_error);
	free(st.use_why);
	record_free(st.rec);
	poll_result_free(&res);
	return EXIT_OK;
}

/* A bare `taotop status`: the sessions lent on this machine (ssh/lend.h),
 * and to how many of the user's commands. */
static int sessions_status(const struct cli_args *a)
{
	int json = cli_val(a, "json") != NULL, n;
	struct config cfg;
	char *err = NULL, *dir;

	if (cli_val(a, "watch") || cli_val(a, "why") || cli_val(a, "bank-record") ||
	    cli_val(a, "cluster")) {
		fprintf(stderr, "taotop status: --watch, --why, --bank-record and --cluster are "
		    "about a JOB: name one\n");
		return cli_usage_error(a->verb);
	}
	if (config_load(&cfg, &err) != 0) {
		free(err);
		err = NULL;
		memset(&cfg, 0, sizeof(cfg));
		cfg.share = 1;
	}
	dir = share_folder(&cfg);
	config_free(&cfg);
	if (dir == NULL) {
		if (json)
			printf("[]\n");
		else
			printf("sessions are not shared: each command connects on its own "
			    "(share: false in the config, TAOTOP_NO_SHARE or --no-share)\n");
		return EXIT_OK;
	}
	n = share_print_lenders(stdout, dir, json);
	if (n == 0 && !json)
		printf("no taotop agent or monitor lends a session now: the next command starts "
		    "the agent\n");
	free(dir);
	return EXIT_OK;
}

int cli_status(const struct cli_args *a)
{
	struct session s;
	struct poll_schedule sched;
	const char *job = a->npos > 0 ? a->pos[0] : NULL;
	int json = cli_val(a, "json") != NULL, watch = cli_val(a, "watch") != NULL;
	int bank = cli_val(a, "bank-record") != NULL, why = cli_val(a, "why") != NULL;
	int rc, final = 0, asked_history = 0;
	enum tao_state state = TAO_UNKNOWN;

	/* A script or a log file reading through a pipe sees each update as
	 * it is printed, as a terminal does. */
	if (job == NULL)
		return sessions_status(a);
	if (watch)
		setvbuf(stdout, NULL, _IOLBF, 0);
	if ((rc = session_open(&s, cli_val(a, "cluster"), job)) != EXIT_OK)
		return rc;
	/* --watch polls until the job ends, however long it waits: a job
	 * pending for days is normal on a shared cluster. */
	schedule_init(&sched, s.cl->poll_s, 60);
	do {
		rc = show_status(&s, job, json, bank, why, &final, &state, &sched, &asked_history);
		fflush(stdout);
		if (rc == STATUS_POLL_FAILED && watch) {
			/* Monitoring never stops on a failure: say it and go on. */
			char at[16];
			time_t now = time(NULL);
			strftime(at, sizeof(at), "%H:%M:%S", localtime(&now));
			fprintf(stderr, "taotop: %s: the poll failed at %s; trying again in %d s\n",
			    s.cl->name, at, sched.next_s);
			rc = EXIT_OK;
		}
		if (watch && !final && rc == EXIT_OK)
			sleep((unsigned)sched.next_s);
	} while (watch && !final && rc == EXIT_OK);
	session_close(&s);
	if (rc == STATUS_POLL_FAILED)
		return EXIT_FAILED;
	/* How the watched job ended, for a script: 0 Done, 4 Error, 5 Canceled. */
	return watch && rc == EXIT_OK && final ? cli_exit_for_end(state) : rc;
}

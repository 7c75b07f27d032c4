#include "util/compat.h"
#include "cli/cli.h"

#include <cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/duration.h"
#include "engine/logpath.h"
#include "engine/logtail.h"
#include "engine/preflight.h"
#include "engine/record.h"
#include "engine/retry.h"
#include "engine/schedule.h"
#include "engine/submit.h"
#include "engine/tracker.h"
#include "engine/usage.h"
#include "ssh/conn.h"
#include "cli/show.h"
#include "cli/ttyask.h"
#include "util/sanitize.h"
#include "util/xmalloc.h"

/* What every verb needs: the cluster, its connection, the records. */
struct session {
	struct config		 cfg;
	const struct cluster_cfg *cl;
	struct conn		*conn;
	struct record_store	*store;
	struct tracker		*tracker;
};

static int exit_for(enum conn_status st)
{
	switch (st) {
	case CONN_UNREACHABLE:
	case CONN_HOSTKEY_UNKNOWN:
	case CONN_HOSTKEY_CHANGED:
	case CONN_AUTH:
		return EXIT_CONNECT;
	default:
		return EXIT_FAILED;
	}
}

/* The cluster a job named on the command line belongs to: a taotop id's
 * record says; a SLURM id is the --cluster's (or the default's). NULL
 * with *err when the two disagree. */
static const char *cluster_of_job(struct record_store *st, const char *job, const char *flag,
    char **owned, char **err)
{
	struct job_record *r = NULL;
	char *why = NULL;

	*owned = NULL;
	if (store_load(st, job, &r, &why) != 0 || r->cluster == NULL) {
		free(why);
		record_free(r);
		return flag;	/* a SLURM id, or a record of no cluster */
	}
	if (flag != NULL && strcmp(flag, r->cluster) != 0) {
		*err = xasprintf("%s is a job of cluster '%s', not of --cluster %s", job,
		    r->cluster, flag);
		record_free(r);
		return NULL;
	}
	*owned = xstrdup(r->cluster);
	record_free(r);
	return *owned;
}

/* Open the session of cluster (NULL: the default), or, for job (a taotop
 * id, or NULL), of its record's cluster: see cluster_of_job. */
static int session_open(struct session *s, const char *cluster, const char *job)
{
	struct conn_target t;
	char *err = NULL, *owned = NULL;
	enum conn_status st;

	memset(s, 0, sizeof(*s));
	if (config_load(&s->cfg, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		return EXIT_USAGE;
	}
	s->store = store_open(NULL, &err);
	if (s->store == NULL) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		config_free(&s->cfg);
		return EXIT_FAILED;
	}
	if (job != NULL && (cluster = cluster_of_job(s->store, job, cluster, &owned, &err)) == NULL &&
	    err != NULL) {
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		store_close(s->store);
		config_free(&s->cfg);
		return EXIT_FAILED;
	}
	s->cl = config_cluster(&s->cfg, cluster);
	if (s->cl == NULL) {
		fprintf(stderr, "taotop: no cluster called '%s' (TAOTOP_CLUSTER)\n", cluster);
		free(owned);
		store_close(s->store);
		config_free(&s->cfg);
		return EXIT_USAGE;
	}
	free(owned);
	cluster_target(s->cl, &t);
	tty_ask_target(&t);
	s->conn = conn_new(&t);
	st = conn_connect(s->conn, &err);
	if (st != CONN_OK) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		conn_free(s->conn);
		store_close(s->store);
		config_free(&s->cfg);
		return exit_for(st);
	}
	s->tracker = tracker_new(s->cl);
	return EXIT_OK;
}

static void session_close(struct session *s)
{
	tracker_free(s->tracker);
	conn_free(s->conn);
	store_close(s->store);
	config_free(&s->cfg);
}

static int poll_or_say(struct session *s, struct poll_result *res)
{
	char *err = NULL;

	if (tracker_poll(s->tracker, s->conn, s->store, res, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		return -1;
	}
	if (res->problem != NULL)
		fprintf(stderr, "taotop: %s: %s\n", s->cl->name, show_err(res->problem));
	return 0;
}

static cJSON *row_json(const struct job_row *r, const char *cluster)
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
	/* What the STATE column says: "Ending" while SLURM completes it. */
	cJSON_AddStringToObject(o, "shown_state", tao_state_label(r->state, r->native));
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
	if (r->epoch >= 0) {
		cJSON *prog = cJSON_AddObjectToObject(o, "progress");
		cJSON_AddNumberToObject(prog, "epoch", r->epoch);
		cJSON_AddNumberToObject(prog, "max_epoch", r->max_epoch);
		cJSON_AddStringToObject(prog, "eta", r->eta);
		if (r->nseries > 0) {
			cJSON_AddStringToObject(prog, "metric", r->metric);
			cJSON_AddItemToObject(prog, "series", cJSON_CreateDoubleArray(r->series, (int)r->nseries));
		}
	}
	return o;
}

static void print_json(cJSON *o)
{
	char *text = cJSON_Print(o);
	puts(text);
	cJSON_free(text);
	cJSON_Delete(o);
}

/* One cluster's part of `taotop jobs`: its own connection, tracker and
 * poll, on a thread of its own (a libssh session belongs to one thread).
 * The record store is shared: its lock serialises the writers, and each
 * tracker writes only its own cluster's records. */
struct cluster_poll {
	const struct cluster_cfg *cl;
	long			 since_s;	/* --since: accounting's window; 0: none */
	struct record_store	*store;
	pthread_t		 thread;
	struct poll_result	 res;
	int			 polled;	/* res is filled */
	int			 rc;		/* EXIT_* */
	char			*err;
};

static void *poll_cluster(void *arg)
{
	struct cluster_poll *p = arg;
	struct conn_target t;
	struct tracker *tr;
	struct conn *c;
	enum conn_status st;

	cluster_target(p->cl, &t);
	tty_ask_target(&t);
	c = conn_new(&t);
	st = conn_connect(c, &p->err);
	if (st != CONN_OK) {
		p->rc = exit_for(st);
		conn_free(c);
		return NULL;
	}
	tr = tracker_new(p->cl);
	if (p->since_s > 0)
		tracker_set_history(tr, p->since_s, p->since_s, (unsigned)p->cl->history_max);
	if (tracker_poll(tr, c, p->store, &p->res, &p->err) != 0) {
		p->rc = EXIT_FAILED;
	} else {
		p->polled = 1;
		p->rc = p->res.scheduler_ok ? EXIT_OK : EXIT_FAILED;
	}
	tracker_free(tr);
	conn_free(c);
	return NULL;
}

/* TIME/LIMIT's cell: the one format, "-" for what is not known. */
static void time_cell(const struct job_row *r, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", r->elapsed[0] ? r->elapsed : "-", r->limit[0] ? r->limit : "-");
}

static void print_jobs(const struct cluster_poll *polls, size_t n)
{
	int cw = 0, tw = 19;
	size_t k, i;

	/* TIME/LIMIT as wide as its longest cell: a day's limit never cut. */
	for (k = 0; k < n; k++) {
		for (i = 0; polls[k].polled && i < polls[k].res.n; i++) {
			char tl[64];
			time_cell(&polls[k].res.rows[i], tl, sizeof(tl));
			if ((int)strlen(tl) > tw)
				tw = (int)strlen(tl);
		}
	}

	/* The CLUSTER column only when there is more than one to tell apart. */
	for (k = 0; n > 1 && k < n; k++)
		if ((int)strlen(polls[k].cl->name) > cw)
			cw = (int)strlen(polls[k].cl->name);
	if (n > 1 && cw < 7)
		cw = 7;
	if (cw > 0)
		printf("%-*s ", cw, "CLUSTER");
	printf("%-20s %-10s %-24s %-9s %-5s %-9s %-10s %-*s %s\n", "ID", "SLURM", "NAME",
	    "PARTITION", "NxG", "STATE", "NATIVE", tw, "TIME/LIMIT", "NOTE");
	for (k = 0; k < n; k++) {
		for (i = 0; polls[k].polled && i < polls[k].res.n; i++) {
			const struct job_row *r = &polls[k].res.rows[i];
			char nxg[32], tl[64];
			if (r->nodes > 0 && r->gpus_known)
				snprintf(nxg, sizeof(nxg), "%dx%d", r->nodes, r->gpus / r->nodes);
			else if (r->nodes > 0)
				snprintf(nxg, sizeof(nxg), "%dx?", r->nodes);
			else
				snprintf(nxg, sizeof(nxg), "-");
			time_cell(r, tl, sizeof(tl));
			if (cw > 0)
				printf("%-*s ", cw, polls[k].cl->name);
			printf("%-20s %-10s %-24.24s %-9.9s %-5s %-9s %-10.10s %-*s %s\n",
			    r->record_id ? r->record_id : "-",
			    show(r->shown_id[0] ? r->shown_id : (r->slurm_id[0] ? r->slurm_id : "-")),
			    show(r->name ? r->name : ""), show(r->partition ? r->partition : ""), nxg,
			    tao_state_label(r->state, r->native), show(r->native ? r->native : "-"), tw,
			    show(tl),
			    show(r->message ? r->message : ""));
		}
	}
}

/* Every configured cluster (or --cluster's), polled side by side; one that
 * cannot be reached is said on stderr, the others are listed. */
int cli_jobs(const struct cli_args *a)
{
	struct config cfg;
	struct record_store *store;
	struct cluster_poll *polls;
	const char *only = cli_val(a, "cluster"), *since = cli_val(a, "since");
	char *err = NULL;
	size_t n, k, i;
	int rc = EXIT_OK;
	long since_s = 0;

	if (since != NULL && duration_since_parse(since, &since_s, &err) != 0) {
		fprintf(stderr, "taotop: --since %s\n", show_err(err));
		free(err);
		return EXIT_USAGE;
	}
	if (config_load(&cfg, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		return EXIT_USAGE;
	}
	if (only != NULL && config_cluster(&cfg, only) == NULL) {
		fprintf(stderr, "taotop: no cluster called '%s'\n", only);
		config_free(&cfg);
		return EXIT_USAGE;
	}
	store = store_open(NULL, &err);
	if (store == NULL) {
		fprintf(stderr, "taotop: %s\n", err);
		free(err);
		config_free(&cfg);
		return EXIT_FAILED;
	}
	n = only != NULL ? 1 : cfg.n;
	polls = xcalloc(n > 0 ? n : 1, sizeof(*polls));
	for (k = 0; k < n; k++) {
		polls[k].cl = only != NULL ? config_cluster(&cfg, only) : &cfg.clusters[k];
		polls[k].store = store;
		polls[k].since_s = since_s;
	}
	/* The first on this thread, the others each on their own. */
	for (k = 1; k < n; k++)
		if (pthread_create(&polls[k].thread, NULL, poll_cluster, &polls[k]) != 0)
			poll_cluster(&polls[k]), polls[k].thread = pthread_self();
	if (n > 0)
		poll_cluster(&polls[0]);
	for (k = 1; k < n; k++)
		if (!pthread_equal(polls[k].thread, pthread_self()))
			pthread_join(polls[k].thread, NULL);

	for (k = 0; k < n; k++) {
		if (polls[k].err != NULL)
			fprintf(stderr, "taotop: %s: %s\n", polls[k].cl->name, polls[k].err);
		else if (polls[k].polled && polls[k].res.problem != NULL)
			fprintf(stderr, "taotop: %s: %s\n", polls[k].cl->name, polls[k].res.problem);
		if (polls[k].rc > rc)
			rc = polls[k].rc;
	}
	if (cli_val(a, "json") != NULL) {
		cJSON *arr = cJSON_CreateArray();
		for (k = 0; k < n; k++)
			for (i = 0; polls[k].polled && i < polls[k].res.n; i++)
				cJSON_AddItemToArray(arr, row_json(&polls[k].res.rows[i], polls[k].cl->name));
		print_json(arr);
	} else {
		print_jobs(polls, n);
	}
	for (k = 0; k < n; k++) {
		if (polls[k].polled)
			poll_result_free(&polls[k].res);
		free(polls[k].err);
	}
	free(polls);
	store_close(store);
	config_free(&cfg);
	return rc;
}

/* The row of job (a record id or a SLURM id), or NULL. */
static const struct job_row *find_row(const struct poll_result *res, const char *job)
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

/* show_status's answer when the poll itself failed (the connection, the
 * login node): --watch rides it out, a single status reports it. */
#define STATUS_POLL_FAILED	(-2)

/* A running job's GPUs, sampled once on its nodes (engine/usage.h): 0 and
 * u filled, or -1 when it is not running, sampling is off for the cluster,
 * or it could not be read (*why, caller frees). */
static int sample_row(struct session *s, const struct job_row *row, struct job_use *u, char **why)
{
	struct use_job j;
	struct use_round r;

	*why = NULL;
	if (row->state != TAO_RUNNING || (row->native != NULL && strcmp(row->native, "RUNNING") != 0) ||
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
	use_round_free(&r);
	return 0;
}

static cJSON *use_json(const struct job_use *u)
{
	cJSON *o = cJSON_CreateObject(), *gpus = cJSON_AddArrayToObject(o, "gpus");
	int g;

	cJSON_AddNumberToObject(o, "util_mean", use_mean_util(u));
	for (g = 0; g < u->ngpu; g++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "node", show(u->gpu[g].node));
		cJSON_AddNumberToObject(e, "index", u->gpu[g].index);
		cJSON_AddNumberToObject(e, "util", u->gpu[g].util);
		cJSON_AddNumberToObject(e, "mem_used_mib", u->gpu[g].mem_used);
		cJSON_AddNumberToObject(e, "mem_total_mib", u->gpu[g].mem_total);
		cJSON_AddItemToArray(gpus, e);
	}
	cJSON_AddNumberToObject(o, "cpu_load", u->load);
	cJSON_AddNumberToObject(o, "rss_kib", (double)u->rss_kib);
	return o;
}

static int show_status(struct session *s, const char *job, int json, int *final,
    struct poll_schedule *sched)
{
	struct poll_result res;
	const struct job_row *row;
	struct job_record *rec = NULL;
	struct job_use use;
	char *err = NULL, *use_why = NULL;
	int have_use;
	size_t i;

	if (poll_or_say(s, &res) != 0) {
		schedule_after_poll(sched, 0, 0, 1);
		return STATUS_POLL_FAILED;
	}
	schedule_after_poll(sched, (unsigned)res.changes, res.waiting_for_accounting,
	    !res.scheduler_ok);
	row = find_row(&res, job);
	if (row == NULL) {
		fprintf(stderr, "taotop: no job %s on %s: not a taotop record, and not a live job "
		    "of yours\n", job, s->cl->name);
		poll_result_free(&res);
		return EXIT_FAILED;
	}
	*final = tao_state_final(row->state);
	if (row->record_id != NULL && store_load(s->store, row->record_id, &rec, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
	}
	have_use = sample_row(s, row, &use, &use_why) == 0;
	if (json) {
		cJSON *o = row_json(row, s->cl->name), *h;
		if (rec != NULL) {
			char *text = record_to_json(rec);
			cJSON_AddItemToObject(o, "record", cJSON_Parse(text));
			free(text);
		}
		if (have_use)
			cJSON_AddItemToObject(o, "use", use_json(&use));
		else if (use_why != NULL)
			cJSON_AddStringToObject(o, "use_error", show(use_why));
		(void)h;
		print_json(o);
	} else {
		char nxg[32] = "", tl[64];
		printf("%s  %s  (SLURM %s, %s)%s%s\n", show(row->record_id ? row->record_id : row->name),
		    tao_state_label(row->state, row->native),
		    show(row->shown_id[0] ? row->shown_id : row->slurm_id),
		    show(row->native ? row->native : "not seen yet"), row->message ? ": " : "",
		    show(row->message ? row->message : ""));
		/* What it ran on and for how long, in the one time format. */
		if (row->nodes > 0 && row->gpus_known)
			snprintf(nxg, sizeof(nxg), "%dx%d", row->nodes, row->gpus / row->nodes);
		else if (row->nodes > 0)
			snprintf(nxg, sizeof(nxg), "%dx?", row->nodes);
		time_cell(row, tl, sizeof(tl));
		if (row->partition != NULL || nxg[0] != '\0' || row->elapsed[0] || row->limit[0])
			printf("  partition %s, nodes x GPUs %s, time %s%s%s\n",
			    show(row->partition && row->partition[0] ? row->partition : "-"),
			    nxg[0] ? nxg : "-", show(tl), row->exit_code[0] ? ", exit code " : "",
			    show(row->exit_code));
		if (row->epoch >= 0) {
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
		if (have_use) {
			char mem[32];
			int g;
			use_mem_text(&use, mem, sizeof(mem));
			printf("  GPU use %d %% mean, memory %s:", use_mean_util(&use), mem);
			for (g = 0; g < use.ngpu; g++)
				printf(" %s/gpu%d %d %%", show(use.gpu[g].node), use.gpu[g].index,
				    use.gpu[g].util);
			printf("; CPU load %.2f, %.1f GiB resident\n", use.load,
			    use.rss_kib / 1048576.0);
		} else if (use_why != NULL) {
			printf("  GPU use not read: %s\n", show(use_why));
		}
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
	free(use_why);
	record_free(rec);
	poll_result_free(&res);
	return EXIT_OK;
}

int cli_status(const struct cli_args *a)
{
	struct session s;
	struct poll_schedule sched;
	const char *job = a->pos[0];
	int json = cli_val(a, "json") != NULL, watch = cli_val(a, "watch") != NULL;
	int rc, final = 0;

	if ((rc = session_open(&s, cli_val(a, "cluster"), job)) != EXIT_OK)
		return rc;
	/* --watch polls until the job ends, however long it waits: a job
	 * pending for days is normal on a shared cluster. */
	schedule_init(&sched, s.cl->poll_s, 60);
	do {
		rc = show_status(&s, job, json, &final, &sched);
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
	return rc == STATUS_POLL_FAILED ? EXIT_FAILED : rc;
}

int cli_cancel(const struct cli_args *a)
{
	struct session s;
	struct record_store *st;
	const char *cluster = cli_val(a, "cluster");
	char *open_for = NULL, *err = NULL, **argv = a->pos;
	int rc, worst = EXIT_OK, opened = 0, argc = a->npos, k;

	st = store_open(NULL, &err);
	if (st == NULL) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		return EXIT_FAILED;
	}
	/* Each job on its own cluster: a record's says where it runs, and
	 * scancel there is the only one that means it. */
	for (k = 0; k < argc; k++) {
		char *msg = NULL, *owned = NULL;
		const char *want = cluster_of_job(st, argv[k], cluster, &owned, &err);
		if (want == NULL && err != NULL) {
			fprintf(stderr, "taotop: %s: nothing was cancelled\n", show_err(err));
			free(err);
			err = NULL;
			worst = EXIT_FAILED;
			continue;
		}
		if (!opened || (want != NULL && strcmp(want, s.cl->name) != 0) ||
		    (want == NULL && open_for != NULL)) {
			if (opened)
				session_close(&s);
			opened = 0;
			free(open_for);
			open_for = want ? xstrdup(want) : NULL;
			if ((rc = session_open(&s, want, NULL)) != EXIT_OK) {
				if (want != NULL)
					fprintf(stderr, "taotop: %s: not cancelled (its cluster '%s' could "
					    "not be reached)\n", argv[k], want);
				worst = rc;
				free(owned);
				continue;
			}
			opened = 1;
		}
		if (tracker_cancel(s.conn, s.store, s.cl, argv[k], &msg, &err) == 0) {
			printf("%s: %s\n", show(argv[k]), show(msg));
		} else {
			fprintf(stderr, "taotop: %s: %s\n", show_err(argv[k]), show_err(err));
			worst = EXIT_FAILED;
		}
		free(msg);
		free(err);
		err = NULL;
		free(owned);
	}
	if (opened)
		session_close(&s);
	free(open_for);
	store_close(st);
	return worst;
}

int cli_retry(const struct cli_args *a)
{
	struct session s;
	const char *job = a->pos[0];
	char *new_id = NULL, *slurm_id = NULL, *err = NULL;
	int rc;

	if ((rc = session_open(&s, cli_val(a, "cluster"), job)) != EXIT_OK)
		return rc;
	if (retry_job(s.conn, s.store, s.cl, job, "asked by the operator", &new_id,
	    &slurm_id, &err) == 0) {
		printf("retried %s as %s, SLURM job %s (the staged sbatch, nothing staged again)\n",
		    job, new_id, slurm_id);
	} else {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		rc = EXIT_FAILED;
	}
	free(new_id), free(slurm_id), free(err);
	session_close(&s);
	return rc;
}

/* The log file of job, or NULL with a message on stderr. */
static char *log_path(struct session *s, const char *job, int want_err)
{
	char *path = NULL, *err = NULL;

	if (job_log_path(s->conn, s->store, job, want_err, &path, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
	}
	return path;
}

/* Write log bytes: sanitised for a terminal, as they are for a pipe. */
static void emit(const char *text, size_t len, int tty)
{
	if (tty) {
		struct buf b;
		buf_init(&b);
		sanitize_append(&b, text, len);
		fwrite(b.data, 1, b.len, stdout);
		buf_free(&b);
	} else {
		fwrite(text, 1, len, stdout);
	}
	fflush(stdout);
}

int cli_logs(const struct cli_args *a)
{
	struct session s;
	struct buf out;
	const char *job = a->pos[0], *n = cli_val(a, "lines");
	char *path, *err = NULL, *nend;
	long lines = 200;
	int want_err = cli_val(a, "err") != NULL, follow = cli_val(a, "follow") != NULL;
	int rc, missing, tty = isatty(1);
	uint64_t end = 0;

	if (n != NULL) {
		lines = strtol(n, &nend, 10);
		if (*n == '\0' || *nend != '\0' || lines < 0)
			return cli_usage_error(a->verb);
	}
	if ((rc = session_open(&s, cli_val(a, "cluster"), job)) != EXIT_OK)
		return rc;
	path = log_path(&s, job, want_err);
	if (path == NULL) {
		session_close(&s);
		return EXIT_FAILED;
	}
	buf_init(&out);
	if (log_tail(s.conn, path, (size_t)lines, follow, &out, &end, &missing, &err) != 0) {
		if (!missing || !follow) {
			fprintf(stderr, "taotop: %s\n", show_err(err));
			free(err);
			buf_free(&out);
			free(path);
			session_close(&s);
			return EXIT_FAILED;
		}
		/* Following a log that is not there yet: the job is pending. */
		fprintf(stderr, "taotop: waiting for %s\n", path);
		free(err);
		err = NULL;
		end = 0;
	}
	emit(out.data ? out.data : "", out.len, tty);
	rc = EXIT_OK;
	if (follow) {
		struct log_follow f;
		log_follow_init(&f, path, end);
		for (;;) {
			buf_reset(&out);
			if (log_follow_tick(&f, s.conn, &out, &err) != 0) {
				/* The offset stays: after a reconnect it goes on
				 * where it was, nothing lost or doubled. */
				fprintf(stderr, "taotop: %s (retrying)\n", show_err(err));
				free(err);
				err = NULL;
				sleep(2);
				continue;
			}
			if (f.restarted)
				fprintf(stderr, "taotop: %s shrank: reading it again from the start\n", path);
			emit(out.data ? out.data : "", out.len, tty);
			compat_sleep_ms(500);
		}
	}
	buf_free(&out);
	free(path);
	session_close(&s);
	return rc;
}

/* Each step as it runs: "✓ dataset", "✗ image: why". */
static void print_step(enum submit_step step, int state, const char *detail, void *data)
{
	const int *utf8 = data;

	if (state == 0 && detail == NULL)
		return;
	if (state == 0) {
		/* Progress of a long step (the NCCL probe's). */
		printf("%s %s: %s\n", *utf8 ? "\xe2\x80\xa6" : "...", submit_step_name(step), show(detail));
		fflush(stdout);
		return;
	}
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

int cli_submit(const struct cli_args *a)
{
	struct submit_opts o = { .gpus = -1, .nodes = -1, .time_hours = -1 };
	struct submit_result res;
	struct session s;
	const char *lang = getenv("LC_ALL"), *v;
	char *err = NULL, *end;
	int rc, json = cli_val(a, "json") != NULL, utf8;

	if (int_option(a, "nodes", 1, &o.nodes) != 0 || int_option(a, "gpus", 0, &o.gpus) != 0)
		return cli_usage_error(a->verb);
	if ((v = cli_val(a, "time")) != NULL) {
		o.time_hours = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || !(o.time_hours > 0))
			return cli_usage_error(a->verb);
	}
	o.partition = cli_val(a, "partition");
	o.account = cli_val(a, "account");
	/* Of --requeue and --no-requeue, the later wins. */
	if (cli_at(a, "requeue") > cli_at(a, "no-requeue"))
		o.requeue = REQUEUE_YES;
	else if (cli_at(a, "no-requeue") > 0)
		o.requeue = REQUEUE_NO;
	o.dry_run = cli_val(a, "dry-run") != NULL;
	o.force_reconvert = cli_val(a, "force-reconvert") != NULL;
	o.spec_path = a->pos[0];
	if (lang == NULL || *lang == '\0')
		lang = getenv("LC_CTYPE");
	if (lang == NULL || *lang == '\0')
		lang = getenv("LANG");
	utf8 = lang != NULL && (strstr(lang, "UTF-8") || strstr(lang, "utf8"));
	if ((rc = session_open(&s, cli_val(a, "cluster"), NULL)) != EXIT_OK)
		return rc;
	rc = submit_run(s.conn, s.store, s.cl, &o, json ? NULL : print_step, &utf8, &res, &err);
	if (rc != 0) {
		if (json) {
			cJSON *obj = cJSON_CreateObject();
			cJSON_AddBoolToObject(obj, "submitted", 0);
			cJSON_AddStringToObject(obj, "error", err);
			if (res.record_id)
				cJSON_AddStringToObject(obj, "id", res.record_id);
			print_json(obj);
		} else {
			fprintf(stderr, "taotop: %s\n", show_err(err));
		}
		free(err);
		submit_result_free(&res);
		session_close(&s);
		return EXIT_FAILED;
	}
	if (json) {
		cJSON *obj = cJSON_CreateObject();
		cJSON_AddBoolToObject(obj, "submitted", !o.dry_run);
		cJSON_AddStringToObject(obj, "id", res.record_id ? res.record_id : "");
		if (res.slurm_id)
			cJSON_AddStringToObject(obj, "slurm_id", res.slurm_id);
		cJSON_AddBoolToObject(obj, "adopted", res.adopted);
		cJSON_AddBoolToObject(obj, "image_converted", res.converted);
		if (res.dry_run)
			cJSON_AddStringToObject(obj, "dry_run", res.dry_run);
		print_json(obj);
	} else if (o.dry_run) {
		fputs(res.dry_run, stdout);
	} else {
		printf("submitted %s as SLURM job %s%s\n", res.record_id, res.slurm_id,
		    res.adopted ? " (found by name after the connection was cut)" : "");
	}
	submit_result_free(&res);
	session_close(&s);
	return EXIT_OK;
}

void cli_print_preflight(FILE *f, const struct preflight *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		fprintf(f, "%s %s%s%s\n", p->checks[i].ok ? "\xe2\x9c\x93" : p->checks[i].warn_only
		    ? "!" : "\xe2\x9c\x97", p->checks[i].name, p->checks[i].fix ? ": " : "",
		    p->checks[i].fix ? show_on(f, p->checks[i].fix) : "");
}

int cli_preflight(const struct cli_args *a)
{
	struct preflight p;
	struct session s;
	char *err = NULL;
	int rc, install = cli_val(a, "install-ngc-credentials") != NULL;

	if ((rc = session_open(&s, cli_val(a, "cluster"), NULL)) != EXIT_OK)
		return rc;
	if (install) {
		if (preflight_install_ngc(s.conn, getenv("NGC_KEY"), &err) != 0) {
			fprintf(stderr, "taotop: %s\n", show_err(err));
			free(err);
			session_close(&s);
			return EXIT_FAILED;
		}
		printf("installed ~/.config/enroot/.credentials on %s (mode 600)\n", conn_host(s.conn));
	}
	if (preflight_run(s.conn, s.cl, &p, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		session_close(&s);
		return EXIT_FAILED;
	}
	cli_print_preflight(stdout, &p);
	rc = p.all_ok ? EXIT_OK : EXIT_FAILED;
	preflight_free(&p);
	session_close(&s);
	return rc;
}

#include "cli/cli.h"

#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/config.h"
#include "engine/logpath.h"
#include "engine/logtail.h"
#include "engine/preflight.h"
#include "engine/record.h"
#include "engine/retry.h"
#include "engine/schedule.h"
#include "engine/submit.h"
#include "engine/tracker.h"
#include "ssh/conn.h"
#include "cli/show.h"
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

static int session_open(struct session *s, const char *cluster)
{
	struct conn_target t;
	char *err = NULL;
	enum conn_status st;

	memset(s, 0, sizeof(*s));
	if (config_load(&s->cfg, &err) != 0) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		return EXIT_USAGE;
	}
	s->cl = config_cluster(&s->cfg, cluster);
	if (s->cl == NULL) {
		fprintf(stderr, "taotop: no cluster called '%s' (TAOTOP_CLUSTER)\n", cluster);
		config_free(&s->cfg);
		return EXIT_USAGE;
	}
	s->store = store_open(NULL, &err);
	if (s->store == NULL) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		config_free(&s->cfg);
		return EXIT_FAILED;
	}
	cluster_target(s->cl, &t);
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
	cJSON_AddNumberToObject(o, "gpus", r->gpus);
	cJSON_AddStringToObject(o, "state", tao_state_name(r->state));
	cJSON_AddStringToObject(o, "native_state", r->native ? r->native : "");
	cJSON_AddStringToObject(o, "elapsed", r->elapsed);
	cJSON_AddStringToObject(o, "time_limit", r->limit);
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

int cli_jobs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "all-clusters", no_argument, NULL, 'a' },
		{ "cluster", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct session s;
	struct poll_result res;
	const char *cluster = NULL;
	int json = 0, c, rc;
	size_t i;

	while ((c = getopt_long(argc, argv, "jac:", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'a': break;	/* one cluster in this version: all of them */
		case 'c': cluster = optarg; break;
		default:
			fprintf(stderr, "usage: taotop jobs [--all-clusters] [--json] [--cluster C]\n");
			return EXIT_USAGE;
		}
	}
	if ((rc = session_open(&s, cluster)) != EXIT_OK)
		return rc;
	if (poll_or_say(&s, &res) != 0) {
		session_close(&s);
		return EXIT_FAILED;
	}
	if (json) {
		cJSON *a = cJSON_CreateArray();
		for (i = 0; i < res.n; i++)
			cJSON_AddItemToArray(a, row_json(&res.rows[i], s.cl->name));
		print_json(a);
	} else {
		printf("%-20s %-10s %-24s %-9s %-5s %-9s %-10s %-19s %s\n", "ID", "SLURM", "NAME",
		    "PARTITION", "NxG", "STATE", "NATIVE", "TIME/LIMIT", "NOTE");
		for (i = 0; i < res.n; i++) {
			const struct job_row *r = &res.rows[i];
			char nxg[32], tl[64];
			snprintf(nxg, sizeof(nxg), "%dx%d", r->nodes, r->nodes ? r->gpus / r->nodes : 0);
			snprintf(tl, sizeof(tl), "%s/%s", r->elapsed[0] ? r->elapsed : "-",
			    r->limit[0] ? r->limit : "-");
			printf("%-20s %-10s %-24.24s %-9.9s %-5s %-9s %-10.10s %-19s %s\n",
			    r->record_id ? r->record_id : "-",
			    show(r->shown_id[0] ? r->shown_id : (r->slurm_id[0] ? r->slurm_id : "-")),
			    show(r->name ? r->name : ""), show(r->partition ? r->partition : ""), nxg,
			    tao_state_name(r->state), show(r->native ? r->native : "-"), show(tl),
			    show(r->message ? r->message : ""));
		}
	}
	rc = res.scheduler_ok ? EXIT_OK : EXIT_FAILED;
	poll_result_free(&res);
	session_close(&s);
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

static int show_status(struct session *s, const char *job, int json, int *final,
    struct poll_schedule *sched)
{
	struct poll_result res;
	const struct job_row *row;
	struct job_record *rec = NULL;
	char *err = NULL;
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
	if (json) {
		cJSON *o = row_json(row, s->cl->name), *h;
		if (rec != NULL) {
			char *text = record_to_json(rec);
			cJSON_AddItemToObject(o, "record", cJSON_Parse(text));
			free(text);
		}
		(void)h;
		print_json(o);
	} else {
		printf("%s  %s  (SLURM %s, %s)%s%s\n", show(row->record_id ? row->record_id : row->name),
		    tao_state_name(row->state), show(row->shown_id[0] ? row->shown_id : row->slurm_id),
		    show(row->native ? row->native : "not seen yet"), row->message ? ": " : "",
		    show(row->message ? row->message : ""));
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
	record_free(rec);
	poll_result_free(&res);
	return EXIT_OK;
}

int cli_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", no_argument, NULL, 'w' },
		{ "cluster", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct session s;
	struct poll_schedule sched;
	const char *cluster = NULL;
	int json = 0, watch = 0, c, rc, final = 0;

	while ((c = getopt_long(argc, argv, "jwc:", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'w': watch = 1; break;
		case 'c': cluster = optarg; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	if ((rc = session_open(&s, cluster)) != EXIT_OK)
		return rc;
	/* --watch polls until the job ends, however long it waits: a job
	 * pending for days is normal on a shared cluster. */
	schedule_init(&sched, s.cl->poll_s, 60);
	do {
		rc = show_status(&s, argv[optind], json, &final, &sched);
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
usage:
	fprintf(stderr, "usage: taotop status JOB [--json] [--watch] [--cluster C]\n");
	return EXIT_USAGE;
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
		*err = xasprintf("%s is a job of cluster '%s', not of --cluster %s: nothing was "
		    "cancelled", job, r->cluster, flag);
		record_free(r);
		return NULL;
	}
	*owned = xstrdup(r->cluster);
	record_free(r);
	return *owned;
}

int cli_cancel(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct session s;
	struct record_store *st;
	const char *cluster = NULL;
	char *open_for = NULL, *err = NULL;
	int c, rc, worst = EXIT_OK, opened = 0;

	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		if (c != 'c') {
			fprintf(stderr, "usage: taotop cancel JOB... [--cluster C]\n");
			return EXIT_USAGE;
		}
		cluster = optarg;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: taotop cancel JOB... [--cluster C]\n");
		return EXIT_USAGE;
	}
	st = store_open(NULL, &err);
	if (st == NULL) {
		fprintf(stderr, "taotop: %s\n", show_err(err));
		free(err);
		return EXIT_FAILED;
	}
	/* Each job on its own cluster: a record's says where it runs, and
	 * scancel there is the only one that means it. */
	for (; optind < argc; optind++) {
		char *msg = NULL, *owned = NULL;
		const char *want = cluster_of_job(st, argv[optind], cluster, &owned, &err);
		if (want == NULL && err != NULL) {
			fprintf(stderr, "taotop: %s\n", show_err(err));
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
			if ((rc = session_open(&s, want)) != EXIT_OK) {
				if (want != NULL)
					fprintf(stderr, "taotop: %s: not cancelled (its cluster '%s' could "
					    "not be reached)\n", argv[optind], want);
				worst = rc;
				free(owned);
				continue;
			}
			opened = 1;
		}
		if (tracker_cancel(s.conn, s.store, s.cl, argv[optind], &msg, &err) == 0) {
			printf("%s\n", show(msg));
		} else {
			fprintf(stderr, "taotop: %s\n", show_err(err));
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

int cli_retry(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct session s;
	const char *cluster = NULL;
	char *new_id = NULL, *slurm_id = NULL, *err = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		if (c != 'c') {
			fprintf(stderr, "usage: taotop retry JOB [--cluster C]\n");
			return EXIT_USAGE;
		}
		cluster = optarg;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: taotop retry JOB [--cluster C]\n");
		return EXIT_USAGE;
	}
	if ((rc = session_open(&s, cluster)) != EXIT_OK)
		return rc;
	if (retry_job(s.conn, s.store, s.cl, argv[optind], "asked by the operator", &new_id,
	    &slurm_id, &err) == 0) {
		printf("retried %s as %s, SLURM job %s (the staged sbatch, nothing staged again)\n",
		    argv[optind], new_id, slurm_id);
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

int cli_logs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "err", no_argument, NULL, 'e' },
		{ "follow", no_argument, NULL, 'f' },
		{ "lines", required_argument, NULL, 'n' },
		{ "cluster", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct session s;
	struct buf out;
	const char *cluster = NULL;
	char *path, *err = NULL;
	long lines = 200;
	int want_err = 0, follow = 0, c, rc, missing, tty = isatty(1);
	uint64_t end = 0;

	while ((c = getopt_long(argc, argv, "efn:c:", opts, NULL)) != -1) {
		switch (c) {
		case 'e': want_err = 1; break;
		case 'f': follow = 1; break;
		case 'n':
			lines = strtol(optarg, NULL, 10);
			if (lines < 0)
				goto usage;
			break;
		case 'c': cluster = optarg; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	if ((rc = session_open(&s, cluster)) != EXIT_OK)
		return rc;
	path = log_path(&s, argv[optind], want_err);
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
			usleep(500 * 1000);
		}
	}
	buf_free(&out);
	free(path);
	session_close(&s);
	return rc;
usage:
	fprintf(stderr, "usage: taotop logs JOB [--err] [-n N] [-f] [--cluster C]\n");
	return EXIT_USAGE;
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

int cli_submit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "time", required_argument, NULL, 't' },
		{ "partition", required_argument, NULL, 'p' },
		{ "account", required_argument, NULL, 'A' },
		{ "requeue", no_argument, NULL, 'R' },
		{ "no-requeue", no_argument, NULL, 'Q' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "force-reconvert", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	struct submit_opts o = { .gpus = -1, .nodes = -1, .time_hours = -1 };
	struct submit_result res;
	struct session s;
	const char *cluster = NULL, *lang = getenv("LC_ALL");
	char *err = NULL, *end;
	int c, rc, json = 0, utf8;

	while ((c = getopt_long(argc, argv, "c:N:g:t:p:A:RQdjF", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cluster = optarg; break;
		case 'N': o.nodes = (int)strtol(optarg, &end, 10); if (*end || o.nodes < 1) goto usage; break;
		case 'g': o.gpus = (int)strtol(optarg, &end, 10); if (*end || o.gpus < 0) goto usage; break;
		case 't': o.time_hours = strtod(optarg, &end); if (*end || !(o.time_hours > 0)) goto usage; break;
		case 'p': o.partition = optarg; break;
		case 'A': o.account = optarg; break;
		case 'R': o.requeue = REQUEUE_YES; break;
		case 'Q': o.requeue = REQUEUE_NO; break;
		case 'd': o.dry_run = 1; break;
		case 'j': json = 1; break;
		case 'F': o.force_reconvert = 1; break;
		default: goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	o.spec_path = argv[optind];
	if (lang == NULL || *lang == '\0')
		lang = getenv("LC_CTYPE");
	if (lang == NULL || *lang == '\0')
		lang = getenv("LANG");
	utf8 = lang != NULL && (strstr(lang, "UTF-8") || strstr(lang, "utf8"));
	if ((rc = session_open(&s, cluster)) != EXIT_OK)
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
usage:
	fprintf(stderr, "usage: taotop submit SPEC [--cluster C] [--nodes N] [--gpus N] [--time H] "
	    "[--partition P] [--account A] [--requeue|--no-requeue] [--dry-run] [--json] "
	    "[--force-reconvert]\n");
	return EXIT_USAGE;
}

int cli_preflight(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cluster", required_argument, NULL, 'c' },
		{ "install-ngc-credentials", no_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 },
	};
	struct preflight p;
	struct session s;
	const char *cluster = NULL;
	char *err = NULL;
	int c, rc, install = 0;
	size_t i;

	while ((c = getopt_long(argc, argv, "c:I", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cluster = optarg; break;
		case 'I': install = 1; break;
		default:
			fprintf(stderr, "usage: taotop preflight [--cluster C] [--install-ngc-credentials]\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: taotop preflight [--cluster C] [--install-ngc-credentials]\n");
		return EXIT_USAGE;
	}
	if ((rc = session_open(&s, cluster)) != EXIT_OK)
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
	for (i = 0; i < p.n; i++)
		printf("%s %s%s%s\n", p.checks[i].ok ? "\xe2\x9c\x93" : p.checks[i].warn_only ? "!" : "\xe2\x9c\x97",
		    p.checks[i].name, p.checks[i].fix ? ": " : "", p.checks[i].fix ? show(p.checks[i].fix) : "");
	rc = p.all_ok ? EXIT_OK : EXIT_FAILED;
	preflight_free(&p);
	session_close(&s);
	return rc;
}

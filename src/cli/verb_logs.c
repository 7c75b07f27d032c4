/*
 * `taotop logs JOB`: the last lines of a job's main.out (or main.err, or a
 * Cosmos-RL role's own log with --role) over
 * SFTP, then with --follow the new bytes by offset as the file grows
 * (with --until-end until the job ends: its state polled on the cluster's
 * schedule, as status --watch polls it); sanitised for a terminal, as they
 * are for a pipe.
 */
#include "util/compat.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli/jobrow.h"
#include "cli/session.h"
#include "cli/show.h"
#include "engine/logs/logpath.h"
#include "engine/logs/logtail.h"
#include "engine/logs/roles.h"
#include "engine/slurm/state.h"
#include "engine/track/schedule.h"
#include "engine/track/tracker.h"
#include "util/buf.h"
#include "util/sanitize.h"

/* Write log bytes: sanitised for a terminal, as they are for a pipe. */
static void emit(const struct buf *out, int tty)
{
	if (tty) {
		struct buf b;
		buf_init(&b);
		sanitize_append(&b, out->data ? out->data : "", out->len);
		fwrite(b.data, 1, b.len, stdout);
		buf_free(&b);
	} else {
		fwrite(out->data ? out->data : "", 1, out->len, stdout);
	}
	fflush(stdout);
}

/* Whether job has ended, by one poll on the cluster's schedule: 1 with
 * *rc its end (cli_exit_for_end), 0 not yet (or the poll failed: said,
 * and tried again), -1 when the job is listed no more. */
static int job_ended(struct session *s, const char *job, struct poll_schedule *sched, int *rc)
{
	struct poll_result res;
	const struct job_row *row;
	int ended = 0;

	if (session_poll(s, &res) != 0) {
		schedule_after_poll(sched, 0, 0, 1);
		return 0;
	}
	schedule_after_poll(sched, (unsigned)res.changes, res.waiting_for_accounting,
	    !res.scheduler_ok);
	if ((row = jobrow_find(&res, job)) == NULL) {
		fprintf(stderr, "taotop: %s is no longer listed on %s (neither a taotop record nor a "
		    "job in the queue): its end is not known\n", show_err(job), s->cl->name);
		ended = -1;
	} else if (tao_state_final(row->state)) {
		*rc = cli_exit_for_end(row->state);
		ended = 1;
	}
	poll_result_free(&res);
	return ended;
}

/* New bytes as they come: for ever (the user ends it), or with job (for
 * --until-end) until it ends, its last bytes read. The exit code. */
static int follow(struct session *s, const char *path, uint64_t end, struct buf *out, int tty,
    const char *job)
{
	struct log_follow f;
	struct poll_schedule sched;
	char *err = NULL;
	time_t next_poll = 0;
	int rc = EXIT_OK, ended = 0, last = 0;

	log_follow_init(&f, path, end);
	schedule_init(&sched, s->cl->poll_s, 60);
	for (;;) {
		if (job != NULL && !ended && time(NULL) >= next_poll) {
			ended = job_ended(s, job, &sched, &rc);
			if (ended < 0) {
				log_follow_free(&f);
				return EXIT_FAILED;
			}
			next_poll = time(NULL) + sched.next_s;
		}
		buf_reset(out);
		if (log_follow_tick(&f, s->conn, out, &err) != 0) {
			/* The offset stays: after a reconnect it goes on where
			 * it was, nothing lost or doubled. */
			fprintf(stderr, "taotop: %s (retrying)\n", show_err(err));
			free(err);
			err = NULL;
			sleep(2);
			continue;
		}
		if (f.restarted)
			fprintf(stderr, "taotop: %s is a new file (it shrank or was replaced): "
			    "reading it from the start\n",
			    show_err(path));
		emit(out, tty);
		/* The job has ended: what it wrote before it ended is read by
		 * the tick after the poll that said so. Two empty reads in a
		 * row, and the file has no more. */
		if (ended) {
			if (out->len == 0 && ++last >= 2) {
				/* Its last words, ended by no newline. */
				log_follow_flush(&f, out);
				emit(out, tty);
				log_follow_free(&f);
				return rc;
			}
			if (out->len > 0)
				last = 0;
		}
		compat_sleep_ms(500);
	}
}

/* The last lines of path, and with --follow what comes after them. */
static int tail(struct session *s, const char *path, long lines, int following,
    const char *until_end_of)
{
	struct buf out;
	uint64_t end = 0;
	char *err = NULL;
	int missing, tty = isatty(1), rc;

	buf_init(&out);
	if (log_tail(s->conn, path, (size_t)lines, following, &out, &end, &missing, &err) != 0) {
		if (!missing || !following) {
			buf_free(&out);
			return session_say(EXIT_FAILED, err);
		}
		/* Following a log that is not there yet: the job is pending. */
		fprintf(stderr, "taotop: waiting for %s\n", show_err(path));
		free(err);
		end = 0;
	}
	emit(&out, tty);
	rc = following ? follow(s, path, end, &out, tty, until_end_of) : EXIT_OK;
	buf_free(&out);
	return rc;
}

int cli_logs(const struct cli_args *a)
{
	struct session s;
	const char *job = a->pos[0], *n = cli_val(a, "lines"), *role = cli_val(a, "role");
	char *path = NULL, *err = NULL, *nend;
	long lines = 200;
	int rc, until_end = cli_val(a, "until-end") != NULL;

	if (n != NULL) {
		lines = strtol(n, &nend, 10);
		if (*n == '\0' || *nend != '\0' || lines < 0) {
			fprintf(stderr, "taotop logs: -n takes a whole number of lines, not '%s'\n",
			    show_err(n));
			return cli_usage_error(a->verb);
		}
	}
	if (role != NULL && cli_val(a, "err") != NULL) {
		fprintf(stderr, "taotop logs: --role and --err: a role's log holds both its "
		    "output and its errors; give one of them\n");
		return cli_usage_error(a->verb);
	}
	if ((rc = session_open(&s, cli_val(a, "cluster"), job)) != EXIT_OK)
		return rc;
	if (role != NULL ? roles_log_path(s.store, job, role, &path, &err) != 0
	    : job_log_path(s.conn, s.store, job, cli_val(a, "err") != NULL, &path, &err) != 0)
		rc = session_say(EXIT_FAILED, err);
	else if (until_end)
		rc = tail(&s, path, lines, 1, job);
	else
		rc = tail(&s, path, lines, cli_val(a, "follow") != NULL, NULL);
	free(path);
	session_close(&s);
	return rc;
}

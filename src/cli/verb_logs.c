/*
 * `taotop logs JOB`: the last lines of a job's main.out (or main.err) over
 * SFTP, then with --follow the new bytes by offset as the file grows;
 * sanitised for a terminal, as they are for a pipe.
 */
#include "util/compat.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/session.h"
#include "cli/show.h"
#include "engine/logs/logpath.h"
#include "engine/logs/logtail.h"
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

/* New bytes as they come, for ever (the user ends it). */
static void follow(struct session *s, const char *path, uint64_t end, struct buf *out, int tty)
{
	struct log_follow f;
	char *err = NULL;

	log_follow_init(&f, path, end);
	for (;;) {
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
		compat_sleep_ms(500);
	}
}

/* The last lines of path, and with --follow what comes after them. */
static int tail(struct session *s, const char *path, long lines, int following)
{
	struct buf out;
	uint64_t end = 0;
	char *err = NULL;
	int missing, tty = isatty(1);

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
	if (following)
		follow(s, path, end, &out, tty);
	buf_free(&out);
	return EXIT_OK;
}

int cli_logs(const struct cli_args *a)
{
	struct session s;
	const char *job = a->pos[0], *n = cli_val(a, "lines");
	char *path = NULL, *err = NULL, *nend;
	long lines = 200;
	int rc;

	if (n != NULL) {
		lines = strtol(n, &nend, 10);
		if (*n == '\0' || *nend != '\0' || lines < 0)
			return cli_usage_error(a->verb);
	}
	if ((rc = session_open(&s, cli_val(a, "cluster"), job)) != EXIT_OK)
		return rc;
	if (job_log_path(s.conn, s.store, job, cli_val(a, "err") != NULL, &path, &err) != 0)
		rc = session_say(EXIT_FAILED, err);
	else
		rc = tail(&s, path, lines, cli_val(a, "follow") != NULL);
	free(path);
	session_close(&s);
	return rc;
}

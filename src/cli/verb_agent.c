/*
 * `taotop agent start|stop|status`: the background agent that holds each
 * cluster's session for the user's taotop commands (ssh/lend.h), started
 * on demand by the verbs, ending by itself after share_idle_minutes
 * without a client; `serve` is what start runs in the background.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/session.h"
#include "cli/share.h"
#include "cli/show.h"
#include "engine/config/config.h"
#include "ssh/lend.h"
#include "util/log.h"
#include "util/xmalloc.h"

/* --idle MINUTES, else the config's, else the default. -1: a bad value. */
static int idle_of(const struct cli_args *a, int *idle_s)
{
	const char *v = cli_val(a, "idle");
	struct config cfg;
	char *err = NULL, *end = NULL;
	long m;

	*idle_s = CONFIG_SHARE_IDLE_S;
	if (v == NULL) {
		if (config_load(&cfg, &err) == 0) {
			*idle_s = cfg.share_idle_s;
			config_free(&cfg);
		}
		free(err);
		return 0;
	}
	/* Minutes, as the config's share_idle_minutes; or with a unit. */
	m = strtol(v, &end, 10);
	if (end != v && m >= 1 && (*end == '\0' || strcmp(end, "m") == 0))
		m *= 60;
	else if (end != v && m >= 1 && strcmp(end, "h") == 0)
		m *= 3600;
	else if (end == v || m < 1 || strcmp(end, "s") != 0)
		m = -1;
	if (m < 1 || m > 7 * 24 * 3600) {
		fprintf(stderr, "taotop: --idle %s: minutes (1 to 10080), or a number with s, m or "
		    "h (90s, 30m, 8h), a week at most\n", show_err(v));
		return -1;
	}
	*idle_s = (int)m;
	return 0;
}

static int serve(int idle_s)
{
	const char *log = getenv("TAOTOP_LOG"), *ready = getenv("TAOTOP_AGENT_READY_FD");
	struct lend_agent_opts o = { .idle_s = idle_s, .ready_fd = -1 };
	char *dir, *err = NULL;
	int rc;

	if (log != NULL && log[0] != '\0')
		log_open(log, getenv("TAOTOP_DEBUG") ? LOG_DEBUG : LOG_INFO);
	if (ready != NULL) {
		o.ready_fd = atoi(ready);
		unsetenv("TAOTOP_AGENT_READY_FD");
	}
	if ((dir = lend_dir(&err)) == NULL)
		return session_say(EXIT_FAILED, err);
	log_msg(LOG_INFO, "agent: pid %d, ending after %d s without a client", (int)getpid(), idle_s);
	rc = lend_agent_serve(dir, &o, &err);
	free(dir);
	if (rc != 0)
		return session_say(EXIT_FAILED, err);
	return EXIT_OK;
}

int cli_agent(const struct cli_args *a)
{
	const char *what = a->pos[0];
	int idle_s, json = cli_val(a, "json") != NULL, started, pid;
	char *dir, *err = NULL;

	if (strcmp(what, "start") != 0 && strcmp(what, "stop") != 0 &&
	    strcmp(what, "status") != 0 && strcmp(what, "serve") != 0) {
		fprintf(stderr, "taotop: agent %s: the actions are start, stop and status\n",
		    show_err(what));
		return cli_usage_error(a->verb);
	}
	if (idle_of(a, &idle_s) != 0)
		return EXIT_USAGE;
	if (strcmp(what, "serve") == 0)
		return serve(idle_s);
	if ((dir = lend_dir(&err)) == NULL)
		return session_say(EXIT_FAILED, err);
	if (strcmp(what, "start") == 0) {
		if (share_agent_ensure(dir, idle_s, &started, &err) != 0) {
			free(dir);
			return session_say(EXIT_FAILED, err);
		}
		if (started && idle_s % 60 != 0)
			printf("taotop agent: started; it ends %d s after its last command\n", idle_s);
		else if (started)
			printf("taotop agent: started; it ends %d min after its last command\n",
			    idle_s / 60);
		else
			printf("taotop agent: running already\n");
		share_print_lenders(stdout, dir, 0);
	} else if (strcmp(what, "stop") == 0) {
		int rc = share_agent_stop(dir, &pid);
		if (rc == 0)
			printf("taotop agent: none runs\n");
		else if (rc > 0)
			printf("taotop agent: stopped (pid %d); its sessions are closed\n", pid);
		free(dir);
		if (rc < 0)
			return session_say(EXIT_FAILED, xstrdup("the agent did not stop within 5 s"));
		return EXIT_OK;
	} else {
		int n = share_print_lenders(stdout, dir, json);
		free(dir);
		if (n == 0 && !json)
			printf("no taotop agent or monitor lends a session\n");
		return n > 0 ? EXIT_OK : EXIT_FAILED;
	}
	free(dir);
	return EXIT_OK;
}

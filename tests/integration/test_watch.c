/*
 * engine/watch.c without a terminal: the monitor's engine against the real
 * cluster, its event queue read the way ui.c reads it (watch_dispatch when
 * a worker's descriptor wakes, then watch_next until empty). Two answers
 * finished before one dispatch both come, in order; the answers of
 * different requests come in the order they happened on the cluster; a
 * refused host key and its trust, a server's question and its answer, come
 * as events of their cluster; the preflight answers with its checks; a queue
 * nobody read is freed at shutdown without a leak (LeakSanitizer in the
 * san build).
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/track/actions.h"
#include "engine/config/config.h"
#include "engine/store/store.h"
#include "engine/watch/watch.h"
#include "integration/helper_rig.h"
#include "ssh/conn.h"
#include "util/buf.h"
#include "util/xmalloc.h"

#define WAIT_S	60	/* for the cluster to answer, at most */

struct env {
	struct config		 cfg;
	struct record_store	*store;
	char			*dir;		/* the local store's */
	struct watch		*w;
	struct watch_event	 got[64];	/* what came, in order */
	size_t			 n;
};

/* A cluster on the rig as a config of the user's would say it. */
static void cluster_on_rig(struct cluster_cfg *cl, const char *name, const char *hosts,
    const char *known_hosts)
{
	struct conn_target t;

	rig_target(&t);
	memset(cl, 0, sizeof(*cl));
	cl->name = xstrdup(name);
	cl->hosts = xstrdup(hosts != NULL ? hosts : t.hosts);
	cl->user = xstrdup(t.user);
	cl->key_path = xstrdup(t.key_path);
	cl->known_hosts = xstrdup(known_hosts != NULL ? known_hosts : t.known_hosts);
	cl->jump = xstrdup("none");
	cl->retry_budget = -1;
	config_cluster_defaults(cl);
	cl->use_s = 0;		/* no sampling rounds in these tests */
	cl->history_days = 0;
}

/* n clusters: the rig (or the sshd at hosts, its key in known_hosts),
 * then (second) one whose known_hosts is empty. */
static void env_open_at(struct env *e, size_t n, const char *hosts, const char *known_hosts)
{
	char tmpl[] = "/tmp/taotop-watch-XXXXXX", *err = NULL, *kh;

	memset(e, 0, sizeof(*e));
	setenv("TAOTOP_SSH_CONFIG", "", 1);	/* not the user's ~/.ssh/config */
	cr_assert_not_null(mkdtemp(tmpl));
	e->dir = xstrdup(tmpl);
	e->store = store_open(e->dir, &err);
	cr_assert_not_null(e->store, "%s", err);
	e->cfg.clusters = xcalloc(n, sizeof(*e->cfg.clusters));
	e->cfg.n = n;
	cluster_on_rig(&e->cfg.clusters[0], "rig", hosts, known_hosts);
	if (n > 1) {
		kh = xasprintf("%s/known_hosts", e->dir);
		cr_assert_eq(rig_local(": > %s", kh), 0);
		cluster_on_rig(&e->cfg.clusters[1], "stranger", NULL, kh);
		free(kh);
	}
	e->w = watch_new(&e->cfg, e->store);
}

static void env_open(struct env *e, size_t n)
{
	env_open_at(e, n, NULL, NULL);
}

static void env_close(struct env *e)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		watch_event_free(&e->got[i]);
	watch_free(e->w);
	store_close(e->store);
	rig_local("rm -rf %s", e->dir);
	free(e->dir);
	config_free(&e->cfg);
}

/* Wait until a worker has something (or timeout_ms passes); 1 if one has. */
static int wait_news(struct env *e, int timeout_ms)
{
	struct pollfd p[4];
	int fds[4];
	size_t n = watch_fds(e->w, fds, 4), i;

	for (i = 0; i < n; i++)
		p[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	return poll(p, n, timeout_ms) > 0;
}

/* Take what is queued, as the UI does, keeping it; returns how many. */
static size_t take(struct env *e)
{
	size_t n0 = e->n;

	while (e->n < sizeof(e->got) / sizeof(e->got[0]) && watch_next(e->w, &e->got[e->n]))
		e->n++;
	return e->n - n0;
}

static size_t count(const struct env *e, enum watch_kind k)
{
	size_t i, c = 0;

	for (i = 0; i < e->n; i++)
		c += e->got[i].kind == k;
	return c;
}

/* Dispatch and take until `want` events of kind k came, or WAIT_S. */
static void until(struct env *e, enum watch_kind k, size_t want)
{
	time_t end = time(NULL) + WAIT_S;

	while (count(e, k) < want && time(NULL) < end) {
		int64_t next;
		wait_news(e, 200);
		watch_dispatch(e->w);
		watch_tick(e->w, watch_now_ms(), &next);
		take(e);
	}
	cr_assert_geq(count(e, k), want, "%zu events of kind %d after %d s, %zu wanted",
	    count(e, k), (int)k, WAIT_S, want);
}

/* The i-th event of kind k that came; fails the test if none. */
/* Dispatch and take until cluster ci's link is `link`, or WAIT_S. */
static void until_link(struct env *e, size_t ci, enum link_state link)
{
	time_t end = time(NULL) + WAIT_S;

	while (watch_cluster(e->w, ci)->link != link && time(NULL) < end) {
		wait_news(e, 200);
		watch_dispatch(e->w);
		take(e);
	}
	cr_assert_eq(watch_cluster(e->w, ci)->link, link, "link %d, not %d: %s",
	    watch_cluster(e->w, ci)->link, link, watch_cluster(e->w, ci)->error ?
	    watch_cluster(e->w, ci)->error : "");
}

static const struct watch_event *nth(const struct env *e, enum watch_kind k, size_t i)
{
	size_t j, want = i;

	for (j = 0; j < e->n; j++)
		if (e->got[j].kind == k && i-- == 0)
			return &e->got[j];
	cr_assert_fail("no event %zu of kind %d among %zu", want, (int)k, e->n);
	return &e->got[0];
}

static size_t index_of(const struct env *e, const struct watch_event *ev)
{
	return (size_t)(ev - e->got);
}

/* A held job of the test user (it never runs: nothing changes under us). */
static char *held_job(void)
{
	return rig_sbatch("--hold -o /dev/null -t 30 -J taotop-test-watch", "'sleep 600'");
}

static void scancel(const char *id)
{
	char *cmd = xasprintf("scancel %s", id);

	free(rig_ssh_ok(cmd));
	free(cmd);
}

/* Wait until `scontrol show job id` says what (the action ran there). */
static void wait_scontrol(const char *id, const char *what)
{
	char *cmd = xasprintf("for i in $(seq 100); do scontrol show job %s | grep -q '%s' && "
	    "exit 0; sleep 0.2; done; exit 1", id, what);

	free(rig_ssh_ok(cmd));
	free(cmd);
}

Test(watch, two_answers_in_one_dispatch, .timeout = 120)
{
	struct env e;
	char *a = held_job(), *b = held_job();
	const struct watch_event *first, *second;
	size_t k;

	env_open(&e, 1);
	/* Both asked before the connection is up: the worker runs them back
	 * to back once it is, and both finish before the one dispatch below. */
	watch_action(e.w, 0, a, ACTION_TIME_LIMIT, "17");
	watch_action(e.w, 0, b, ACTION_TIME_LIMIT, "19");
	wait_scontrol(b, "TimeLimit=00:19:00");
	wait_scontrol(a, "TimeLimit=00:17:00");
	/* The worker's message follows its command's return by microseconds,
	 * but the command's exit status may trail its effect (on a loaded
	 * machine, by a keepalive's nudge): time enough for both. */
	sleep(4);
	watch_dispatch(e.w);
	take(&e);
	cr_assert_eq(count(&e, WATCH_EV_ANSWER), 2, "answers from one dispatch: %zu of 2",
	    count(&e, WATCH_EV_ANSWER));
	first = nth(&e, WATCH_EV_ANSWER, 0);
	second = nth(&e, WATCH_EV_ANSWER, 1);
	cr_assert(first->u.answer.ok, "%s", first->u.answer.text);
	cr_assert(second->u.answer.ok, "%s", second->u.answer.text);
	cr_assert_not_null(strstr(first->u.answer.text, a), "first answer: %s (job %s)",
	    first->u.answer.text, a);
	cr_assert_not_null(strstr(second->u.answer.text, b), "second answer: %s (job %s)",
	    second->u.answer.text, b);
	cr_assert_eq(first->cluster, 0);
	/* Connected before either ran: its link event comes first. */
	for (k = 0; k < e.n && e.got[k].kind != WATCH_EV_LINK; k++)
		;
	cr_assert_lt(k, index_of(&e, first), "no link event before the answers");
	cr_assert_eq(watch_cluster(e.w, 0)->link, LINK_UP);
	env_close(&e);
	scancel(a);
	scancel(b);
	free(a);
	free(b);
}

Test(watch, answers_in_the_order_they_happened, .timeout = 120)
{
	struct env e;
	char *a = held_job(), *c = held_job(), *path, *cmd;
	const struct watch_event *out, *ans, *ret, *files;
	const struct rig *r = rig_get();

	path = xasprintf("%s/watch-test-%d.txt", r->shared, rig_uniq());
	cmd = xasprintf("printf 'fetched\\n' > %s", path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	env_open(&e, 1);
	until(&e, WATCH_EV_LINK, 1);
	/* Four kinds of request on the one worker, which runs them in turn. */
	watch_cancel(e.w, 0, &c, 1);
	watch_action(e.w, 0, a, ACTION_TIME_LIMIT, "23");
	watch_retry(e.w, 0, "tt-nosuchjob");
	watch_fetch(e.w, 0, &path, 1);
	until(&e, WATCH_EV_FILES, 1);
	out = nth(&e, WATCH_EV_OUTCOMES, 0);
	ans = nth(&e, WATCH_EV_ANSWER, 0);
	ret = nth(&e, WATCH_EV_RETRY, 0);
	files = nth(&e, WATCH_EV_FILES, 0);
	cr_assert(index_of(&e, out) < index_of(&e, ans) && index_of(&e, ans) < index_of(&e, ret) &&
	    index_of(&e, ret) < index_of(&e, files), "order: cancel %zu, action %zu, retry %zu, "
	    "fetch %zu", index_of(&e, out), index_of(&e, ans), index_of(&e, ret),
	    index_of(&e, files));
	/* And each says what happened. */
	cr_assert_eq(out->u.outcomes.n, 1);
	cr_assert(out->u.outcomes.v[0].ok, "cancel: %s", out->u.outcomes.v[0].message);
	cr_assert_str_eq(out->u.outcomes.v[0].job, c);
	cr_assert(ans->u.answer.ok, "%s", ans->u.answer.text);
	cr_assert_null(ret->u.retry.new_id);
	cr_assert_str_eq(ret->u.retry.job, "tt-nosuchjob");
	cr_assert_not_null(strstr(ret->u.retry.message, "tt-nosuchjob"), "%s", ret->u.retry.message);
	cr_assert_eq(files->u.files.n, 1);
	cr_assert_str_eq(files->u.files.v[0].text, "fetched\n", "%s",
	    files->u.files.v[0].error ? files->u.files.v[0].error : "");
	cr_assert_eq(count(&e, WATCH_EV_OUTCOMES) + count(&e, WATCH_EV_ANSWER) +
	    count(&e, WATCH_EV_RETRY) + count(&e, WATCH_EV_FILES), 4, "one event per request");
	env_close(&e);
	scancel(a);
	cmd = xasprintf("rm -f %s", path);
	free(rig_ssh_ok(cmd));
	free(cmd);
	free(path);
	free(a);
	free(c);
}

Test(watch, host_key_question_and_trust, .timeout = 120)
{
	struct env e;
	const struct watch_event *hk;
	const struct watched *s;
	size_t i;

	env_open(&e, 2);
	until(&e, WATCH_EV_HOSTKEY, 1);
	/* The event says a key waited; the link may have moved on since (a
	 * poll asked meanwhile tries again, and is refused again): it settles
	 * there, as the polls wait for the user. */
	until_link(&e, 1, LINK_HOSTKEY_UNKNOWN);
	hk = nth(&e, WATCH_EV_HOSTKEY, 0);
	for (i = 0; i < e.n; i++)
		cr_assert(e.got[i].kind != WATCH_EV_HOSTKEY || e.got[i].cluster == 1,
		    "a host key event of cluster %zu", e.got[i].cluster);
	s = watch_cluster(e.w, 1);
	cr_assert_not_null(s->fingerprint);
	cr_assert_not_null(strstr(s->fingerprint, "SHA256:"), "%s", s->fingerprint);
	/* A link event of the stranger's came before its host key question. */
	for (i = 0; i < index_of(&e, hk); i++)
		if (e.got[i].kind == WATCH_EV_LINK && e.got[i].cluster == 1)
			break;
	cr_assert_lt(i, index_of(&e, hk));
	watch_trust(e.w, 1);
	watch_poll_now(e.w);
	/* Trusted, the stranger connects (the other cluster's polls may come
	 * first: counting poll events raced with it on 24.11 once). */
	until_link(&e, 1, LINK_UP);
	env_close(&e);
}

Test(watch, unread_queue_freed_at_shutdown, .timeout = 120)
{
	struct env e;
	char *path = xstrdup("/nonexistent/watch-test"), *a = held_job();
	time_t end;

	env_open(&e, 2);
	watch_action(e.w, 0, a, ACTION_TIME_LIMIT, "29");
	watch_action(e.w, 0, "tt-nosuchjob", ACTION_HOLD, NULL);
	watch_retry(e.w, 0, "tt-nosuchjob");
	watch_fetch(e.w, 0, &path, 1);
	watch_cancel(e.w, 0, &a, 1);
	wait_scontrol(a, "JobState=CANCELLED");
	/* Dispatched (the answers queued, with their strings), never read. */
	end = time(NULL) + WAIT_S;
	while (time(NULL) < end && watch_cluster(e.w, 1)->link != LINK_HOSTKEY_UNKNOWN) {
		wait_news(&e, 200);
		watch_dispatch(e.w);
	}
	usleep(500 * 1000);
	watch_dispatch(e.w);
	cr_assert_eq(watch_cluster(e.w, 1)->link, LINK_HOSTKEY_UNKNOWN);
	/* One taken to show the queue holds what came; the rest, the answers
	 * with their strings among them, left to watch_free. */
	cr_assert_eq(watch_next(e.w, &e.got[0]), 1);
	e.n = 1;
	env_close(&e);
	free(path);
	free(a);
}

Test(watch, a_servers_question_comes_as_an_event_and_its_answer_connects, .timeout = 120)
{
	struct rig_sshd d;
	struct env e;
	struct buf code;
	const struct watch_event *q;
	const struct watched *c;
	char *totp;

	rig_sshd_start_totp(&d, 2250, 1);
	env_open_at(&e, 1, d.hosts, d.known_hosts);
	until(&e, WATCH_EV_ASK, 1);
	q = nth(&e, WATCH_EV_ASK, 0);
	cr_assert_eq(q->cluster, 0);
	c = watch_cluster(e.w, 0);
	cr_assert_eq(c->link, LINK_ASKING);
	cr_assert_not_null(c->ask);
	cr_assert_eq(c->ask->n, 1, "%zu prompts", c->ask->n);
	cr_assert_not_null(strstr(c->ask->prompts[0].text, "One-time password"), "%s",
	    c->ask->prompts[0].text);
	buf_init_secret(&code);
	totp = rig_totp(0);
	buf_adds(&code, totp);
	watch_answer(e.w, 0, &code, 1);
	buf_free(&code);
	free(totp);
	until_link(&e, 0, LINK_UP);
	cr_assert_null(watch_cluster(e.w, 0)->ask);
	cr_assert_eq(count(&e, WATCH_EV_ASK), 1, "asked once");
	env_close(&e);
	rig_sshd_stop(&d);
	rig_sshd_free(&d);
}

Test(watch, the_preflight_answers_with_its_checks, .timeout = 180)
{
	struct env e;
	const struct watch_event *p;

	env_open(&e, 1);
	watch_preflight(e.w, 0);
	until(&e, WATCH_EV_PREFLIGHT, 1);
	p = nth(&e, WATCH_EV_PREFLIGHT, 0);
	cr_assert(p->u.preflight.ok, "%s", p->u.preflight.err ? p->u.preflight.err : "");
	cr_assert_gt(p->u.preflight.p.n, 3, "%zu checks", p->u.preflight.p.n);
	cr_assert_null(p->u.preflight.err);
	env_close(&e);
}

/* The records on disk are the first news, before any link (this one never
 * comes up: nothing listens on port 1): the jobs event with their rows,
 * from the records' index, and no poll counted. The user's scrolling past
 * the end asks for nothing when no older finished job is left. */
Test(watch, the_records_on_disk_come_before_the_link, .timeout = 60)
{
	char tmpl[] = "/tmp/taotop-watch-disk-XXXXXX", *err = NULL;
	struct config cfg;
	struct record_store *st;
	struct watch_event ev;
	struct job_record *r;
	const struct watched *c;
	struct watch *w;

	setenv("TAOTOP_SSH_CONFIG", "", 1);
	cr_assert_not_null(mkdtemp(tmpl));
	st = store_open(tmpl, &err);
	cr_assert_not_null(st, "%s", err);
	r = record_new("tao-20261201-wdisk1");
	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, "5151");
	record_transition(r, TAO_DONE, "COMPLETED", "status.json: SUCCESS", "scheduler", 1000);
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	record_free(r);
	r = record_new("tao-20261201-wdisk2");
	record_set(&r->cluster, "other");	/* another cluster's: not this one's rows */
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	record_free(r);
	memset(&cfg, 0, sizeof(cfg));
	cfg.clusters = xcalloc(1, sizeof(*cfg.clusters));
	cfg.n = 1;
	cluster_on_rig(&cfg.clusters[0], "rig", "127.0.0.1:1", NULL);
	w = watch_new(&cfg, st);
	cr_assert(watch_next(w, &ev), "news at once");
	cr_expect_eq(ev.kind, WATCH_EV_JOBS, "the first news is the jobs");
	watch_event_free(&ev);
	c = watch_cluster(w, 0);
	cr_expect_eq(c->polls, 0);
	cr_assert_eq(c->last.n, 1, "%zu rows", c->last.n);
	cr_expect_str_eq(c->last.rows[0].record_id, "tao-20261201-wdisk1");
	cr_expect_eq(c->last.rows[0].state, TAO_DONE);
	cr_expect_str_eq(c->last.rows[0].message, "status.json: SUCCESS");
	cr_expect_eq(c->last.finished_left, 0);
	cr_expect_eq(watch_more_finished(w, 0), -1, "nothing older to bring");
	watch_free(w);
	store_close(st);
	config_free(&cfg);
	rig_local("rm -rf %s", tmpl);
}

#include "engine/track/retry.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/config/config.h"
#include "engine/logs/logpath.h"
#include "engine/logs/logtail.h"
#include "engine/slurm/slurm.h"
#include "engine/store/store.h"
#include "engine/submit/secrets.h"
#include "engine/submit/stage.h"
#include "engine/submit/submit.h"
#include "engine/track/classify.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/share.h"
#include "util/xmalloc.h"

/* ---- history ----------------------------------------------------------------------------- */

static int add_event(struct job_record *r, void *arg, char **err)
{
	(void)err;
	record_event(r, arg, "taotop", time(NULL));
	return 1;
}

static void note(struct record_store *st, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void judged(struct record_store *st, const char *id, const char *err_class,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void note(struct record_store *st, const char *id, const char *fmt, ...)
{
	va_list ap;
	char *msg, *err = NULL;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (store_update(st, id, add_event, msg, &err) != 0) {
		log_msg(LOG_ERROR, "retry: %s: %s", id, err);
		free(err);
	}
	free(msg);
}

struct judgement {
	const char	*err_class;
	const char	*message;
};

static int add_judgement(struct job_record *r, void *arg, char **err)
{
	const struct judgement *j = arg;

	(void)err;
	record_set_err_class(r, j->err_class);
	record_event(r, j->message, "taotop", time(NULL));
	return 1;
}

void retry_note_judged(struct record_store *st, const char *id, const char *err_class,
    const char *message)
{
	struct judgement j = { err_class, message };
	char *err = NULL;

	if (store_update(st, id, add_judgement, &j, &err) != 0) {
		log_msg(LOG_ERROR, "retry: %s: %s", id, err);
		free(err);
	}
}

/* A failure's verdict in the history, its class kept with it. */
static void judged(struct record_store *st, const char *id, const char *err_class,
    const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	retry_note_judged(st, id, err_class, msg);
	free(msg);
}

struct claim {
	const char	*new_id;
	int		 done_too;	/* a job that succeeded may run again */
};

/* Claim the retry of a record: set retried_as unless another taotop (or
 * an earlier poll) already did, under the store's lock. */
static int claim(struct job_record *r, void *arg, char **err)
{
	const struct claim *cl = arg;

	if (r->retried_as != NULL) {
		*err = xasprintf("%s was already retried as %s: retry that one", r->id, r->retried_as);
		return -1;
	}
	if (!tao_state_final(r->state)) {
		*err = xasprintf("%s is %s: cancel it first, or wait for it to end", r->id,
		    tao_state_name(r->state));
		return -1;
	}
	if (r->state == TAO_DONE && !cl->done_too) {
		/* Not "from the start": the retry runs in a folder of its own,
		 * resuming from this run's newest checkpoint (its last). */
		*err = xasprintf("%s succeeded (Done): a retry would run it again in a results folder "
		    "of its own, resuming from its newest checkpoint; taotop retry --force %s does "
		    "that", r->id, r->id);
		return -1;
	}
	record_set(&r->retried_as, cl->new_id);
	return 1;
}

static int not_launched(struct job_record *r, void *arg, char **err)
{
	(void)err;
	return record_transition(r, TAO_ERROR, NULL, arg, "taotop", time(NULL));
}

#define NODES_TIMEOUT_MS	30000

/* ---- the retry ----------------------------------------------------------------------------- */

/* Before the staged sbatch runs again: its job folder must still be the
 * user's own real folder that no one else can write (on a shared root
 * another user could have put theirs in its place), and the secrets'
 * sidecar is written again (its job's end removed it) as a new file, 0600
 * from its first byte, from the same sources as the first submit: the
 * environment, then the .env beside the bundle (engine/submit/secrets.h).
 * One command; a link or a FIFO at the sidecar's path refuses it. */
static int restage(struct conn *c, const struct job_record *r, const char *job_dir,
    const char *first_id, char **err)
{
	struct buf text;
	struct stage sg;
	struct conn_exec x;
	char *path = NULL, *why = NULL, *stopped;
	int rc = -1;

	buf_init(&text);
	if (r->secrets != NULL && r->secrets[0] != '\0' &&
	    secrets_sidecar_text(r->secrets, NULL, 0, r->bundle, &text, &why) != 0) {
		*err = xasprintf("%s: the retry needs it for the job's sidecar; then run taotop "
		    "retry %s", why, r->id);
		free(why);
		return -1;
	}
	stage_init(&sg);
	stage_own_folder(&sg, job_dir);
	if (r->secrets != NULL && r->secrets[0] != '\0') {
		char *q, *rm;
		path = secrets_sidecar_path(job_dir, first_id);
		/* A sidecar the run left (its removal at the end failed) is
		 * the user's own regular file in the user's own folder: gone
		 * first, or the new-file write would refuse the retry.
		 * Anything else there (a FIFO, a link, another's file) still
		 * refuses it. */
		q = sh_quote(path);
		rm = xasprintf("p=%s; if [ -f \"$p\" ] && [ ! -L \"$p\" ] && [ -O \"$p\" ]; then "
		    "rm -f -- \"$p\"; fi", q);
		stage_run(&sg, rm, "remove the run's own sidecar, if it was left");
		free(rm), free(q);
		stage_write_secret(&sg, path, text.data, text.len, "the job's secrets");
	}
	secrets_wipe(&text);
	if (stage_send(c, &sg, &x, NODES_TIMEOUT_MS, err) == 0) {
		stopped = stage_failure(x.out.data);
		if (stopped != NULL)
			*err = xasprintf("%s on %s", stopped, conn_host(c));
		else if (x.exit_status != 0)
			*err = xasprintf("the job folder's check on %s ended with status %d: %s",
			    conn_host(c), x.exit_status, x.err.data ? x.err.data : "");
		else
			rc = 0;
		free(stopped);
	}
	conn_exec_free(&x);
	stage_free(&sg);
	free(path);
	return rc;
}

/* ---- node exclusions ------------------------------------------------------------------------- */

/* What a retry's one remote command said of nodes. */
struct node_answer {
	int	  ran;		/* it ran: what follows is its answer */
	char	**hosts;	/* the failed job's nodes */
	size_t	  nhosts;
	char	 *checks;	/* the exclusions' lines: @@gone, @@state, @@unknown */
};

static void node_answer_free(struct node_answer *a)
{
	for (size_t i = 0; i < a->nhosts; i++)
		free(a->hosts[i]);
	free(a->hosts);
	free(a->checks);
}

/* One remote command, two answers after an @@hosts and an @@checks line:
 * the nodes SLURM job slurm_id ran on (NULL: not asked), accounting's
 * NodeList expanded by scontrol; then each exclusion r carries against the
 * cluster's live node list (scontrol show node). */
static void ask_nodes(struct conn *c, const char *slurm_id, const struct job_record *r,
    struct node_answer *a)
{
	struct buf cmd;
	char *out, *err = NULL, *checks, *line, *save = NULL;
	int status = 0;
	size_t i;

	memset(a, 0, sizeof(*a));
	if (slurm_id == NULL && r->nexclude == 0) {
		a->ran = 1;	/* nothing to ask */
		return;
	}
	buf_init(&cmd);
	buf_adds(&cmd, "echo @@hosts");
	if (slurm_id != NULL) {
		char *q = sh_quote(slurm_id);
		buf_addf(&cmd, "; nl=$(sacct -j %s -X -n -P -o NodeList 2>/dev/null | head -n 1); "
		    "case $nl in ''|None*) ;; "
		    "*) scontrol show hostnames \"$nl\" 2>/dev/null;; esac", q);
		free(q);
	}
	buf_adds(&cmd, "; echo @@checks");
	if (r->nexclude > 0) {
		buf_adds(&cmd, "; for n in");
		for (i = 0; i < r->nexclude; i++) {
			char *q = sh_quote(r->exclude[i].node);
			buf_addf(&cmd, " %s", q);
			free(q);
		}
		buf_adds(&cmd, "; do o=$(scontrol -o show node \"$n\" 2>&1); case $o in "
		    "\"Node $n not found\"*) echo \"@@gone $n\";; NodeName=*) s=${o#*State=}; "
		    "echo \"@@state $n ${s%% *}\";; *) echo \"@@unknown $n\";; esac; done");
	}
	out = conn_run(c, cmd.data, NODES_TIMEOUT_MS, &status, &err);
	buf_free(&cmd);
	if (out == NULL || strncmp(out, "@@hosts\n", 8) != 0 ||
	    (checks = strstr(out, "\n@@checks\n")) == NULL) {
		log_msg(LOG_WARN, "retry: %s: the nodes could not be asked about: %s", r->id,
		    err != NULL ? err : "no answer");
		free(err);
		free(out);
		return;
	}
	free(err);
	a->ran = 1;
	a->checks = xstrdup(checks + 10);
	checks[1] = '\0';
	for (line = strtok_r(out + 8, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (!slurm_name_ok(line))
			continue;
		a->hosts = xreallocarray(a->hosts, a->nhosts + 1, sizeof(*a->hosts));
		a->hosts[a->nhosts++] = xstrdup(line);
	}
	free(out);
}

/* The checks' answer applied to r: an exclusion whose node no longer
 * exists, or exists only for the future (State=FUTURE: not in service), is
 * dropped, and r's history says so; one that could not be checked is kept
 * (excluding a node is safe, sbatch refusing a name it does not know is
 * not). checks NULL: the command did not run. */
static void apply_checks(struct job_record *r, const char *checks)
{
	char *out, *line, *save = NULL, *msg;
	size_t i, k;

	if (r->nexclude == 0)
		return;
	if (checks == NULL) {
		record_event(r, "the excluded nodes could not be checked against the cluster's: "
		    "all kept", "taotop", time(NULL));
		return;
	}
	out = xstrdup(checks);
	for (line = strtok_r(out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char node[72] = "", state[72] = "";
		int gone = sscanf(line, "@@gone %71s", node) == 1;
		int future = !gone && sscanf(line, "@@state %71s %71s", node, state) == 2 &&
		    strstr(state, "FUTURE") != NULL;
		if (!gone && !future)
			continue;
		for (i = 0; i < r->nexclude; i++) {
			if (strcmp(r->exclude[i].node, node) != 0)
				continue;
			msg = gone
			    ? xasprintf("node %s is no longer on the cluster (scontrol show node: not "
				"found): dropped from the excluded nodes", node)
			    : xasprintf("node %s is retired (scontrol show node: State=%s): dropped "
				"from the excluded nodes", node, state);
			record_event(r, msg, "taotop", time(NULL));
			log_msg(LOG_INFO, "retry: %s: %s", r->id, msg);
			free(msg);
			free(r->exclude[i].node), free(r->exclude[i].evidence), free(r->exclude[i].from);
			for (k = i + 1; k < r->nexclude; k++)
				r->exclude[k - 1] = r->exclude[k];
			r->nexclude--;
			break;
		}
	}
	free(out);
}

/* ---- a results folder of its own ------------------------------------------------------------ */

#define FRESH_TIMEOUT_MS	30000
#define CHAIN_MAX		100

/* Where record p's checkpoints are: TAO's task folder when its spec puts
 * it outside the results folder, else the results folder. */
static const char *ckpt_dir_of(const struct job_record *p)
{
	size_t n;

	if (p->results_dir == NULL)
		return p->tao_results_dir;
	n = strlen(p->results_dir);
	if (p->tao_results_dir != NULL && (strncmp(p->tao_results_dir, p->results_dir, n) != 0 ||
	    (p->tao_results_dir[n] != '/' && p->tao_results_dir[n] != '\0')))
		return p->tao_results_dir;
	return p->results_dir;
}

/* dir with the folder `was` at its start replaced by `now` (dir itself,
 * or a path below it), or a copy of dir. */
static char *moved(const char *dir, const char *was, const char *now)
{
	size_t n = strlen(was);

	if (strncmp(dir, was, n) == 0 && (dir[n] == '/' || dir[n] == '\0'))
		return xasprintf("%s%s", now, dir + n);
	return xstrdup(dir);
}

/* The folders a retry of old may resume from, newest run first: old's,
 * then each earlier run's down its retry_of chain (a run that wrote no
 * checkpoint leaves its predecessor's the newest), each once. */
static size_t chain_dirs(struct record_store *st, const struct job_record *old, char ***out)
{
	char **v = NULL, *at = NULL, *err = NULL;
	size_t n = 0, i;
	int hops = 0;
	const struct job_record *p = old;
	struct job_record *loaded = NULL;

	while (p != NULL && hops++ < CHAIN_MAX) {
		const char *d = ckpt_dir_of(p);
		int seen = 0;
		for (i = 0; d != NULL && i < n; i++)
			seen |= strcmp(v[i], d) == 0;
		if (d != NULL && !seen && strpbrk(d, "\n\r") == NULL && d[0] == '/') {
			v = xreallocarray(v, n + 1, sizeof(*v));
			v[n++] = xstrdup(d);
		}
		free(at);
		at = p->retry_of != NULL ? xstrdup(p->retry_of) : NULL;
		record_free(loaded);
		loaded = NULL;
		p = NULL;
		if (at != NULL && store_load(st, at, &loaded, &err) == 0)
			p = loaded;
		free(err);
		err = NULL;
	}
	record_free(loaded);
	free(at);
	*out = v;
	return n;
}

/* The value after "tag " on out's line that starts with it, or NULL. */
static char *tagged(const char *out, const char *tag)
{
	size_t n = strlen(tag);
	const char *p = out;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, tag, n) == 0 && p[n] == ' ') {
			size_t len = strcspn(p + n + 1, "\n");
			return len > 0 ? xstrndup(p + n + 1, len) : NULL;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

/* Whether out has a line that is exactly tag. */
static int has_line(const char *out, const char *tag)
{
	size_t n = strlen(tag);
	const char *p = out;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, tag, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return 1;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return 0;
}

/* A continuation runs on in the folder of the run it continues: when that
 * run was itself a retry (a paths file of its own names its folder), the
 * same folder goes in the continuation's paths file, or the staged script
 * would run in the first run's folder. No paths file: the staged folder,
 * as it is. */
static int same_paths(struct conn *c, const struct job_record *old, const struct job_record *r,
    const char *job_dir, char **err)
{
	char *rdir = xasprintf("%s/retries", job_dir), *qrdir = sh_quote(rdir), *e2 = NULL, *out;
	char *cmd = xasprintf("d=%s; p=$d/%s.paths; if [ -f \"$p\" ]; then "
	    "res=$(sed -n 's/^results_dir=//p' \"$p\" | head -n 1); "
	    "printf 'results_dir=%%s\\nresume_from=%%s\\n' \"$res\" \"$res\" > \"$d/%s.paths.tmp\" && "
	    "mv -f \"$d/%s.paths.tmp\" \"$d/%s.paths\" || exit 1; fi; echo @@ok",
	    qrdir, old->id, r->id, r->id, r->id);
	int status = 0, rc = 0;

	out = conn_run(c, cmd, FRESH_TIMEOUT_MS, &status, &e2);
	if (out == NULL || !has_line(out, "@@ok")) {
		*err = xasprintf("the continuation's paths file in %s could not be written on %s: %s",
		    rdir, conn_host(c), e2 != NULL && e2[0] ? e2 : "no answer");
		rc = -1;
	}
	free(out), free(e2), free(cmd), free(qrdir), free(rdir);
	return rc;
}

/*
 * The retry r (of old) gets a results folder of its own, named as a new
 * submit's (<root>/<its id>/results), and resumes from the newest usable
 * checkpoint of the run it retries (or, if that one wrote none, of the
 * run before it, down the chain). One remote command: the choice is made
 * by the staged script's own segments block (the rule its segments use),
 * the folder made, and the retry's paths file written beside the job
 * (retries/<id>.paths), which the script reads when it runs under the
 * retry's name. r's results_dir, tao_results_dir, resume_dir,
 * resume_checkpoint and history say what was chosen. A script staged
 * before this knew no such file: the retry then runs in the same folder,
 * and says so. -1 with *err: the folder or the file could not be made.
 */
static int fresh_paths(struct conn *c, struct record_store *st, const struct job_record *old,
    struct job_record *r, const char *job_dir, const char *sbatch, char **err)
{
	char **dirs = NULL, *root = xstrndup(job_dir, (size_t)(strrchr(job_dir, '/') - job_dir));
	char *results = xasprintf("%s/%s/results", root, r->id), *out = NULL, *e2 = NULL;
	char *rdir = xasprintf("%s/retries", job_dir), *key = NULL, *from = NULL, *ckpt = NULL;
	char *q, *msg, *qfirst = NULL;
	size_t ndirs = chain_dirs(st, old, &dirs), i;
	struct buf cmd;
	int status = 0, rc = -1;

	buf_init(&cmd);
	q = sh_quote(sbatch);
	/* A command whose words do not name the staged results folder
	 * (TAO told where to write some other way) cannot be moved: the
	 * retry would write there all the same. The values are compared,
	 * not their quoted text (a path with a space is quoted whole in the
	 * export and inside 'results_dir=...' in the words); the staged
	 * script is taotop's own, eval'd as its segments block is. */
	buf_addf(&cmd, "sb=%s; if ! grep -q '^taotop_retry_setup()' \"$sb\"; then echo @@old; "
	    "exit 0; fi; TAOTOP_RESULTS_DIR=; eval \"$(grep '^export TAOTOP_RESULTS_DIR=' \"$sb\" | "
	    "sed -n 1p)\"; rd=$TAOTOP_RESULTS_DIR; named=; eval \"set -- $(sed -n 's/^set -- //p' "
	    "\"$sb\" | sed -n 1p)\"; for w; do case $w in *\"$rd\"*) named=1;; esac; done; "
	    "if [ -z \"$rd\" ] || [ -z \"$named\" ]; then echo @@unnamed; exit 0; fi; eval \"$(sed -n '/^# taotop-segments begin/,/^# taotop-segments end/p' "
	    "\"$sb\")\" && eval \"$(grep '^TAOTOP_RESUME_KEY=' \"$sb\" | sed -n 1p)\" && "
	    "echo \"@@key ${TAOTOP_RESUME_KEY:-}\" && from= && ck= && for d in", q);
	free(q);
	for (i = 0; i < ndirs; i++) {
		q = sh_quote(dirs[i]);
		buf_addf(&cmd, " %s", q);
		if (i == 0)
			qfirst = xstrdup(q);
		free(q);
	}
	if (ndirs == 0)
		buf_adds(&cmd, " ''");
	buf_adds(&cmd, "; do [ -n \"$d\" ] || continue; c=$(taotop_ckpt_newest \"$d\"); "
	    "if [ -n \"$c\" ]; then from=$d; ck=${c#* }; break; fi; done; ");
	{
		/* The paths file names the run it retries even when no checkpoint
		 * was found: the job then says where it looked. The id is a
		 * record id (letters, digits, -): a file name as it is. */
		/* The retry's folder made new, as a job folder is (a shared
		 * root: anything already there, a link included, refuses it;
		 * closed to others whatever the umask), its results in it. */
		char *nd = xasprintf("%s/%s", root, r->id), *qnd = sh_quote(nd);
		char *qres = sh_quote(results), *qrdir = sh_quote(rdir);
		buf_addf(&cmd, "first=%s; mkdir -m 755 -- %s && mkdir -m 755 -- %s && mkdir -p %s && "
		    "printf 'results_dir=%%s\\nresume_from=%%s\\n' "
		    "%s \"${from:-$first}\" > %s/%s.paths.tmp && mv -f %s/%s.paths.tmp %s/%s.paths && "
		    "echo \"@@from $from\" && echo \"@@ckpt $ck\" && echo @@ok", qfirst ? qfirst : "''",
		    qnd, qres, qrdir, qres, qrdir, r->id, qrdir, r->id, qrdir, r->id);
		free(qres), free(qrdir), free(qnd), free(nd);
	}
	out = conn_run(c, cmd.data, FRESH_TIMEOUT_MS, &status, &e2);
	buf_free(&cmd);
	{
		/* Why the retry cannot have a folder of its own, if it cannot. */
		const char *why = out == NULL ? NULL
		    : has_line(out, "@@unnamed") ? "its command does not name its results folder "
		      "(TAO is told where to write some other way)"
		    : has_line(out, "@@old") ? "its staged sbatch predates retries with a results "
		      "folder of their own" : NULL;
		if (why != NULL) {
			msg = xasprintf("%s: it runs in the same results folder, where TAO resumes "
			    "from its own *_latest.pth", why);
			record_event(r, msg, "taotop", time(NULL));
			free(msg);
			rc = 0;
			goto out;
		}
	}
	if (out == NULL || !has_line(out, "@@ok")) {
		*err = xasprintf("the retry's results folder %s could not be made on %s: %s", results,
		    conn_host(c), e2 != NULL && e2[0] ? e2 : "no answer");
		goto out;
	}
	key = tagged(out, "@@key");
	from = tagged(out, "@@from");
	ckpt = tagged(out, "@@ckpt");
	if (from != NULL && strpbrk(from, "\r") != NULL)
		free(from), from = NULL;
	if (ckpt != NULL && (ckpt[0] != '/' || strpbrk(ckpt, "\r") != NULL))
		free(ckpt), ckpt = NULL;
	/* The record follows the retry's folder: TAO's task folder too when
	 * it was below the results folder. */
	if (old->tao_results_dir != NULL && old->results_dir != NULL) {
		char *t = moved(old->tao_results_dir, old->results_dir, results);
		record_set(&r->tao_results_dir, t);
		free(t);
	}
	if (old->done_status_path != NULL && old->results_dir != NULL) {
		/* The bundle's own status file, likewise (the script writes its
		 * exit code in the retry's folder: taotop_moved). */
		char *t = moved(old->done_status_path, old->results_dir, results);
		record_set(&r->done_status_path, t);
		free(t);
	}
	record_set(&r->results_dir, results);
	msg = xasprintf("results: %s, a folder of its own (%s's stay as they were in %s)", results,
	    old->id, old->results_dir ? old->results_dir : "?");
	record_event(r, msg, "taotop", time(NULL));
	free(msg);
	if (key == NULL) {
		record_event(r, "starts from the start: its job has no resume key (auto_resume: "
		    "false, resume_key: null, or an action without one)", "taotop", time(NULL));
	} else if (ckpt != NULL && from != NULL) {
		record_set(&r->resume_dir, from);
		record_set(&r->resume_checkpoint, ckpt);
		msg = xasprintf("resumes from %s: the newest checkpoint in %s (as %s)", ckpt, from,
		    key);
		record_event(r, msg, "taotop", time(NULL));
		free(msg);
	} else {
		struct buf where;
		buf_init(&where);
		for (i = 0; i < ndirs; i++)
			buf_addf(&where, "%s%s", i ? ", " : "", dirs[i]);
		if (ndirs > 0)
			record_set(&r->resume_dir, dirs[0]);
		msg = xasprintf("starts from the start: no checkpoint in %s", where.data ? where.data
		    : "the runs it retries");
		record_event(r, msg, "taotop", time(NULL));
		free(msg);
		buf_free(&where);
	}
	rc = 0;
out:
	for (i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs), free(root), free(results), free(out), free(e2), free(rdir), free(key);
	free(from), free(ckpt), free(qfirst);
	return rc;
}

/* retry_job keeping the retry away from `node` (sbatch --exclude, with
 * `evidence`, the line that tied the failure to it, in the new record),
 * besides the nodes the chain already excluded; those are each checked
 * against the cluster's live node list first (asked: the answer of a
 * command already run, NULL: ask now), and one that no longer exists (or
 * is retired) is dropped with a note in the new record. node NULL: only
 * the chain's. */
static int retry_job_excluding(struct conn *c, struct record_store *st,
    const struct cluster_cfg *cl, const char *id, const char *why, int done_too,
    int same_folder, const char *node, const char *evidence, const struct node_answer *asked,
    char **new_id, char **slurm_id, char **err)
{
	struct claim how;
	struct job_record *old = NULL, *r = NULL;
	struct conn_stat cs;
	char *job_dir = NULL, *first_id, *sbatch = NULL, *nid = NULL, *msg, *exclude = NULL;
	int adopted = 0, rc = -1, fresh_rc = 0;
	size_t i;

	*new_id = *slurm_id = NULL;
	if (store_load(st, id, &old, err) != 0)
		return -1;
	if (old->cluster != NULL && strcmp(old->cluster, cl->name) != 0) {
		*err = xasprintf("%s ran on cluster %s, not %s", id, old->cluster, cl->name);
		goto out;
	}
	job_dir = submit_job_dir(old);
	if (job_dir == NULL) {
		*err = xasprintf("%s has no staged job folder to run again (it was never staged)", id);
		goto out;
	}
	first_id = strrchr(job_dir, '/') + 1;
	sbatch = submit_staged_sbatch(old);
	if (conn_stat(c, sbatch, &cs, err) != CONN_OK) {
		char *why2 = *err;
		*err = xasprintf("%s: the staged sbatch is gone (%s): submit the bundle again", id, why2);
		free(why2);
		goto out;
	}
	nid = store_mint_id(st);
	how.new_id = nid;
	how.done_too = done_too;
	if (store_update(st, id, claim, &how, err) != 0)
		goto out;
	/* The new record: the same workload, its own name and history. */
	r = record_new(nid);
	record_set(&r->platform, old->platform);
	record_set(&r->cluster, cl->name);
	record_set(&r->image, old->image);
	record_set(&r->network_arch, old->network_arch);
	record_set(&r->action, old->action);
	record_set(&r->storage_tier, old->storage_tier);
	record_set(&r->results_dir, old->results_dir);
	record_set(&r->tao_results_dir, old->tao_results_dir);
	record_set(&r->done_status_path, old->done_status_path);
	record_set(&r->success_states, old->success_states);
	record_set(&r->log_dir, old->log_dir);
	record_set(&r->secrets, old->secrets);
	record_set(&r->bundle, old->bundle);
	record_set(&r->spec, old->spec);	/* the same staged spec */
	record_set(&r->retry_of, id);
	record_set(&r->name, old->name);
	record_set(&r->cosmos, old->cosmos);
	record_set(&r->roles, old->roles);
	if (old->has_alloc) {
		/* The same staged sbatch: the same partition, shape and limit
		 * (a retry that ends before a poll sees it in the queue would
		 * otherwise show 1x?: accounting gives no GPUs); its own time
		 * and exit code come from SLURM. */
		r->alloc = old->alloc;
		r->alloc.elapsed_s = -1;
		r->alloc.exit_code[0] = '\0';
		r->has_alloc = 1;
	}
	msg = xasprintf("opened: a retry of %s (%s), running its staged %s", id, why, sbatch);
	record_event(r, msg, "taotop", time(NULL));
	free(msg);
	/* The chain's exclusions, each checked against the live cluster, and
	 * the node this failure names. */
	for (i = 0; i < old->nexclude; i++)
		record_exclude(r, old->exclude[i].node, old->exclude[i].evidence,
		    old->exclude[i].from);
	if (asked != NULL) {
		apply_checks(r, asked->ran ? asked->checks : NULL);
	} else {
		struct node_answer own;
		ask_nodes(c, NULL, r, &own);
		apply_checks(r, own.ran ? own.checks : NULL);
		node_answer_free(&own);
	}
	if (node != NULL && record_exclude(r, node, evidence, id)) {
		msg = xasprintf("node %s excluded: %s failed there (%s)", node, id,
		    evidence != NULL ? evidence : "no log line");
		record_event(r, msg, "taotop", time(NULL));
		free(msg);
	}
	exclude = record_exclude_list(r);
	if (exclude != NULL) {
		msg = xasprintf("submitted with --exclude=%s", exclude);
		record_event(r, msg, "taotop", time(NULL));
		free(msg);
	}
	/* The job folder checked as the user's own (and the sidecar written)
	 * before anything is written into it; then its own results folder,
	 * and the checkpoint it resumes from; a continuation (SLURM refused a
	 * requeue) is the same run going on, in the same folder. */
	fresh_rc = restage(c, old, job_dir, first_id, err);
	if (fresh_rc == 0) {
		fresh_rc = same_folder ? same_paths(c, old, r, job_dir, err)
		    : fresh_paths(c, st, old, r, job_dir, sbatch, err);
		if (fresh_rc != 0 && old->secrets != NULL && old->secrets[0] != '\0') {
			/* Nothing will run: the secrets restage wrote go. */
			char *p = secrets_sidecar_path(job_dir, first_id), *e2 = NULL;
			if (conn_unlink(c, p, &e2) != CONN_OK)
				log_msg(LOG_WARN, "retry %s: %s left: %s", nid, p, e2 ? e2 : "?");
			free(e2), free(p);
		}
	}
	if (store_create(st, r, err) != 0)
		goto out;
	if (fresh_rc != 0 || submit_launch_staged(c, st, nid, job_dir, sbatch, old->log_dir,
	    exclude, slurm_id, &adopted, err) != 0) {
		char *e2 = NULL;
		msg = xasprintf("not launched: %s", *err);
		if (store_update(st, nid, not_launched, msg, &e2) != 0)
			free(e2);
		free(msg);
		note(st, id, "retry %s failed: %s", nid, *err);
		goto out;
	}
	/* A job that succeeded keeps its verdict first in its note (the last
	 * event is what its row says): the retry comes after it. */
	if (old->state == TAO_DONE)
		note(st, id, "%s; retried as %s, SLURM job %s (%s)", old->nhist > 0 &&
		    old->hist[old->nhist - 1].message != NULL ? old->hist[old->nhist - 1].message
		    : "Done", nid, *slurm_id, why);
	else
		note(st, id, "retried as %s, SLURM job %s (%s)", nid, *slurm_id, why);
	log_msg(LOG_INFO, "retry: %s retried as %s (SLURM job %s): %s", id, nid, *slurm_id, why);
	*new_id = nid;
	nid = NULL;
	rc = 0;
out:
	record_free(old);
	record_free(r);
	free(job_dir), free(sbatch), free(nid), free(exclude);
	return rc;
}

int retry_job(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *why, int done_too, char **new_id, char **slurm_id, char **err)
{
	return retry_job_excluding(c, st, cl, id, why, done_too, 0, NULL, NULL, NULL, new_id,
	    slurm_id, err);
}

int retry_continue_run(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *why, char **new_id, char **slurm_id, char **err)
{
	return retry_job_excluding(c, st, cl, id, why, 0, 1, NULL, NULL, NULL, new_id, slurm_id,
	    err);
}

/* ---- the automatic retry -------------------------------------------------------------------- */

/* How many retries came before this record in its chain. */
static int attempts_before(struct record_store *st, const struct job_record *r)
{
	char *at = r->retry_of ? xstrdup(r->retry_of) : NULL;
	int n = 0;

	while (at != NULL && n < 100) {
		struct job_record *p = NULL;
		char *err = NULL;
		n++;
		if (store_load(st, at, &p, &err) != 0) {
			free(err);
			break;
		}
		free(at);
		at = p->retry_of ? xstrdup(p->retry_of) : NULL;
		record_free(p);
	}
	free(at);
	return n;
}

/* The failed job's main.out and main.err, the last CLASSIFY_TAIL_LINES
 * lines of each ("" when not read), in one round trip. */
static void tails_of(struct conn *c, const struct job_record *r, char **out_tail,
    char **err_tail)
{
	char *paths[2] = { job_log_file(r, "main.out"), job_log_file(r, "main.err") }, *err = NULL;
	struct buf b[2];
	uint64_t end[2];
	int missing[2], i;

	buf_init(&b[0]);
	buf_init(&b[1]);
	if (paths[0] != NULL && paths[1] != NULL &&
	    log_tails(c, (const char *const *)paths, 2, CLASSIFY_TAIL_LINES, 0, b, end, missing,
	    &err) != 0)
		free(err);
	for (i = 0; i < 2; i++) {
		if (b[i].data == NULL)
			buf_adds(&b[i], "");
		free(paths[i]);
	}
	*out_tail = buf_detach(&b[0]);
	*err_tail = buf_detach(&b[1]);
}

int retry_after_failure(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const char *id, const char *native, const char *exit_code, char **new_id, char **err)
{
	struct job_record *r = NULL;
	struct patterns *pat = NULL;
	struct verdict v;
	char *dir = share_dir("templates"), *path = xasprintf("%s/failure-patterns.conf", dir);
	char *out = NULL, *errt = NULL, *why = NULL, *slurm_id = NULL;
	char *node = NULL, *evidence = NULL;
	const char *sep;
	struct node_answer asked = { 0 };
	int rc = 0, before;

	*new_id = NULL;
	if (patterns_load(path, &pat, err) != 0) {
		note(st, id, "failure not classified: %s", *err);
		rc = -1;
		goto done;
	}
	if (store_load(st, id, &r, err) != 0) {
		rc = -1;
		goto done;
	}
	tails_of(c, r, &out, &errt);	/* both logs, one round trip */
	classify_failure(pat, native, exit_code, out, errt, &v);
	/* The line that decided it, and where: "main.err: <line>" (NULL:
	 * none), in the notes and as an excluded node's evidence. */
	evidence = v.evidence[0] ? xasprintf("%s: %s", v.source, v.evidence) : NULL;
	sep = evidence != NULL ? ": " : "";
	if (v.kind == FAILURE_PROGRAM) {
		judged(st, id, RECORD_ERR_PROGRAM, "failure: the program's (%s)%s%s: not retried",
		    v.reason, sep, evidence ? evidence : "");
		goto done;
	}
	if (v.no_retry) {
		judged(st, id, RECORD_ERR_INFRA, "failure: the cluster's setup (%s)%s%s: not retried "
		    "(a fresh allocation would fail the same way)", v.reason, sep,
		    evidence ? evidence : "");
		goto done;
	}
	before = attempts_before(st, r);
	if (before >= cl->retry_budget) {
		judged(st, id, RECORD_ERR_INFRA, "failure: the infrastructure's (%s)%s%s; the retry "
		    "budget (%d) is used up: not retried", v.reason, sep, evidence ? evidence : "",
		    cl->retry_budget);
		goto done;
	}
	judged(st, id, RECORD_ERR_INFRA, "failure: the infrastructure's (%s)%s%s: retry %d of %d",
	    v.reason, sep, evidence ? evidence : "", before + 1, cl->retry_budget);
	/* The job's nodes and the chain's exclusions: one command. */
	ask_nodes(c, v.node_tied ? r->backend_ref : NULL, r, &asked);
	if (v.node_tied && r->backend_ref != NULL) {
		const char *bad = classify_verdict_node(&v, (const char *const *)asked.hosts, asked.nhosts);
		if (bad != NULL) {
			if (evidence == NULL)
				evidence = xasprintf("SLURM state %s", v.reason);
			node = xstrdup(bad);
		} else {
			note(st, id, "the failure names no one node of the job's (%zu): none excluded",
			    asked.nhosts);
		}
	}
	why = xasprintf("infrastructure failure: %s", v.reason);
	if (retry_job_excluding(c, st, cl, id, why, 0, 0, node, evidence, &asked, new_id, &slurm_id,
	    err) != 0)
		rc = -1;
	else
		rc = 1;
done:
	free(slurm_id), free(why), free(out), free(errt), free(dir), free(path);
	free(node), free(evidence);
	node_answer_free(&asked);
	record_free(r);
	patterns_free(pat);
	return rc;
}

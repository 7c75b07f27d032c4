#include "engine/submit/convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/config/rootsafe.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/compat.h"
#include "util/log.h"
#include "util/xmalloc.h"

#define LOOK_TIMEOUT_MS		30000
/* srun's own -t is 120 minutes; a conversion waits in the queue as long as
 * the seed says a job may, but not for ever. */
#define CONVERT_MAX_MS		(6L * 3600 * 1000)
#define QOS_MEM			"QOSGrpMemLimit"

int convert_read_look(const char *out, struct convert_look *l)
{
	char *copy, *line, *save = NULL;
	int seen = 0;

	memset(l, 0, sizeof(*l));
	if (out == NULL)
		return -1;
	copy = xstrdup(out);
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "@@rc", 4) == 0) {
			const char *v = line + 4 + strspn(line + 4, " ");
			seen = 1;
			if (*v != '\0') {
				l->ended = 1;
				l->rc = atoi(v);
			}
		} else if (l->state[0] == '\0' && strchr(line, '|') != NULL) {
			sscanf(line, "%23[^|]|%63[^|]|%15[^|]|%23s", l->state, l->reason, l->req_cpus,
			    l->req_mem);
		}
	}
	free(copy);
	return seen ? 0 : -1;
}

enum convert_act convert_judge(const struct convert_look *l, int qos_mem_before)
{
	if (l->ended)
		return CONVERT_DONE;
	if (strcmp(l->state, "PENDING") == 0 && strcmp(l->reason, QOS_MEM) == 0 && qos_mem_before)
		return CONVERT_RETRY_EXPLICIT;
	return CONVERT_WAIT;
}

char *convert_srun_line(const struct convert_opts *o, const char *name)
{
	char *qsqsh = sh_quote(o->sqsh), *qdocker = sh_quote(o->docker_uri);
	char *qpart = sh_quote(o->partition), *qname = sh_quote(name);
	char *qacct = o->account ? sh_quote(o->account) : NULL, *inner, *qinner, *line;

	/* The seed's conversion, to a temp name renamed only when whole. */
	inner = xasprintf("set -Eeuo pipefail; export TMPDIR=/tmp; "
	    "export ENROOT_TEMP_PATH=/tmp/enroot-tao-${SLURM_JOB_ID}; "
	    "export SLURM_ENROOT_TEMP_PATH=${ENROOT_TEMP_PATH}; mkdir -p \"${ENROOT_TEMP_PATH}\"; "
	    "cd /tmp; part=%s.part.${SLURM_JOB_ID}; rm -f \"$part\"; "
	    "enroot import -o \"$part\" %s && mv -f \"$part\" %s", qsqsh, qdocker, qsqsh);
	qinner = sh_quote(inner);
	/* The explicit profile, always: memory left out is charged per CPU on
	 * some sites, which is what leaves a conversion on QOSGrpMemLimit. */
	line = xasprintf("srun --chdir=/tmp -n1 -c4 --mem=7200M -p %s%s%s -t 120 -J %s bash -c %s",
	    qpart, qacct ? " -A " : "", qacct ? qacct : "", qname, qinner);
	free(inner), free(qinner), free(qsqsh), free(qdocker), free(qpart), free(qname), free(qacct);
	return line;
}

static char *side_path(const struct convert_opts *o, const char *name, const char *ext)
{
	return xasprintf("%s/.%s.%s", o->cache, name, ext);
}

/* Start it detached: its exit status lands in the .rc file, its words in
 * the .log. */
static int start(struct conn *c, const struct convert_opts *o, const char *name, char **err)
{
	char *srun = convert_srun_line(o, name), *rc = side_path(o, name, "rc");
	char *log = side_path(o, name, "log"), *body, *qbody, *qcache, *qlog, *cmd;
	struct conn_exec x;
	int ok;

	body = xasprintf("%s; s=$?; echo $s > %s.tmp && mv -f %s.tmp %s", srun, rc, rc, rc);
	qbody = sh_quote(body);
	qcache = sh_quote(o->cache), qlog = sh_quote(log);
	/* Only the srun in the background, its output in the log: the exec
	 * ends at once (a list put there whole would hold the channel). */
	/* The images folder is written and its image then run: used only
	 * when it is the user's own and no one else can write it
	 * (engine/config/rootsafe.h). */
	{
		struct buf b;
		buf_init(&b);
		buf_addf(&b, "mkdir -p -m 755 %s && { ", qcache);
		rootsafe_funcs(&b);
		rootsafe_ask_dir(&b, "imagedir", o->cache);
		buf_addf(&b, "[ -z \"$tt_w\" ] && { setsid sh -c %s </dev/null >%s 2>&1 & } && "
		    "echo @@started; }", qbody, qlog);
		cmd = buf_detach(&b);
	}
	conn_exec_init(&x, cmd);
	x.timeout_ms = LOOK_TIMEOUT_MS;
	ok = conn_exec(c, &x, err) == CONN_OK && x.out.data && strstr(x.out.data, "@@started");
	if (!ok && *err == NULL && x.out.data != NULL) {
		char code[64];
		if (rootsafe_read(x.out.data, "imagedir", code, sizeof(code))) {
			char *why = rootsafe_why(code), *fix = rootsafe_fix(code, o->cache);
			*err = xasprintf("the images folder %s %s: taotop converts images into it and "
			    "runs them, so it must be a folder of your own that no one else can "
			    "write; nothing was converted or submitted -- %s", o->cache, why, fix);
			free(why), free(fix);
		}
	}
	if (!ok && *err == NULL)
		*err = xasprintf("the conversion could not be started: %.*s",
		    (int)strcspn(x.err.data ? x.err.data : "", "\n"), x.err.data ? x.err.data : "");
	conn_exec_free(&x);
	free(srun), free(rc), free(log), free(body), free(qbody), free(qcache), free(qlog), free(cmd);
	return ok ? 0 : -1;
}

/* One look; with the srun ended, its log's last lines in *tail and the
 * file's magic in *whole. */
static int look(struct conn *c, const struct convert_opts *o, const char *name,
    struct convert_look *l, char **tail, int *whole)
{
	char *rc = side_path(o, name, "rc"), *log = side_path(o, name, "log");
	char *qrc = sh_quote(rc), *qlog = sh_quote(log), *qname = sh_quote(name);
	char *qsqsh = sh_quote(o->sqsh), *cmd, *err = NULL;
	struct conn_exec x;
	int ok = -1;

	cmd = xasprintf("squeue --me -h --name=%s -o '%%T|%%r|%%C|%%m'; if [ -f %s ]; then "
	    "echo \"@@rc $(cat %s)\"; [ \"$(head -c 4 %s 2>/dev/null)\" = hsqs ] && echo @@whole; "
	    "tail -n 3 %s | sed 's/^/@@log /'; rm -f %s %s; else echo @@rc; fi",
	    qname, qrc, qrc, qsqsh, qlog, qrc, qlog);
	conn_exec_init(&x, cmd);
	x.timeout_ms = LOOK_TIMEOUT_MS;
	if (conn_exec(c, &x, &err) == CONN_OK && convert_read_look(x.out.data, l) == 0) {
		ok = 0;
		if (l->ended) {
			struct buf b;
			char *p = x.out.data;
			*whole = strstr(p, "@@whole\n") != NULL;
			buf_init(&b);
			while ((p = strstr(p, "@@log ")) != NULL) {
				p += 6;
				buf_addf(&b, "%s%.*s", b.len ? "\n" : "", (int)strcspn(p, "\n"), p);
			}
			*tail = buf_detach(&b);
		}
	} else {
		log_msg(LOG_WARN, "convert: %s: a look failed: %s", name, err ? err : "no answer");
	}
	free(err);
	conn_exec_free(&x);
	free(rc), free(log), free(qrc), free(qlog), free(qname), free(qsqsh), free(cmd);
	return ok;
}

static void cancel_it(struct conn *c, const char *name)
{
	char *qname = sh_quote(name), *cmd = xasprintf("scancel --me --name=%s", qname), *err = NULL;
	struct conn_exec x;

	conn_exec_init(&x, cmd);
	x.timeout_ms = LOOK_TIMEOUT_MS;
	if (conn_exec(c, &x, &err) != CONN_OK || x.exit_status != 0)
		log_msg(LOG_WARN, "convert: scancel %s failed: %s", name, err ? err : "");
	free(err);
	conn_exec_free(&x);
	free(cmd), free(qname);
}

static char *new_name(void)
{
	unsigned char r[3] = { 0, 0, 0 };

	if (compat_random_bytes(r, sizeof(r)) != 0)
		abort();
	return xasprintf("taotop-convert-%02x%02x%02x", r[0], r[1], r[2]);
}

static void tell(const struct convert_opts *o, const char *what)
{
	if (o->said != NULL)
		o->said(what, o->data);
}

int convert_run(struct conn *c, const struct convert_opts *o, int *retried, char **err)
{
	char *name = NULL, *tail = NULL, shown[64] = "";
	struct convert_look l, qos_look;
	int attempt, qos_before = 0, whole = 0, cancelling = 0, rc = -1;
	long waited = 0;

	*retried = 0;
	memset(&qos_look, 0, sizeof(qos_look));
	for (attempt = 0; attempt < 2; attempt++) {
		free(name);
		name = new_name();
		if (start(c, o, name, err) != 0)
			goto out;
		qos_before = cancelling = 0;
		shown[0] = '\0';
		for (;;) {
			compat_sleep_ms(CONVERT_POLL_MS);
			waited += CONVERT_POLL_MS;
			if (o->cancel != NULL && atomic_load(o->cancel) && !cancelling) {
				cancel_it(c, name);
				*err = xstrdup("the conversion was cancelled");
				goto out;
			}
			if (look(c, o, name, &l, &tail, &whole) != 0) {
				if (waited > CONVERT_MAX_MS) {
					*err = xasprintf("lost touch with the conversion %s", name);
					goto out;
				}
				continue;
			}
			enum convert_act act = convert_judge(&l, qos_before);
			if (act == CONVERT_DONE)
				break;
			if (cancelling)
				continue;	/* until its srun has ended */
			qos_before = strcmp(l.reason, QOS_MEM) == 0;
			if (act == CONVERT_RETRY_EXPLICIT) {
				qos_look = l;
				cancel_it(c, name);
				cancelling = 1;
				continue;
			}
			char now[64];
			snprintf(now, sizeof(now), "%s", strcmp(l.state, "PENDING") == 0 ? l.reason
			    : l.state);
			if (now[0] != '\0' && strcmp(now, shown) != 0) {
				char *w = strcmp(l.state, "PENDING") == 0
				    ? xasprintf("conversion %s waiting in the queue: %s", name, l.reason)
				    : strcmp(l.state, "RUNNING") == 0
				    ? xasprintf("conversion %s running", name)
				    : xasprintf("conversion %s %s", name, l.state);
				tell(o, w);
				free(w);
				snprintf(shown, sizeof(shown), "%s", now);
			}
			if (waited > CONVERT_MAX_MS) {
				cancel_it(c, name);
				*err = xasprintf("the conversion %s did not end within %ld hours: cancelled",
				    name, CONVERT_MAX_MS / 3600000);
				goto out;
			}
		}
		if (!cancelling) {
			if (l.rc == 0 && whole) {
				rc = 0;
				goto out;
			}
			*err = tail && tail[0] ? xstrdup(tail)
			    : xasprintf("srun ended with status %d%s", l.rc,
			    l.rc == 0 ? ", but the file is not a whole squashfs (no hsqs magic)" : "");
			goto out;
		}
		free(tail), tail = NULL;
		if (attempt == 0) {
			char *w = xasprintf("conversion %s pending on " QOS_MEM " (ReqCPUS=%s ReqMem=%s): "
			    "cancelled; converting once more with the explicit profile (4 CPUs, 7200M)",
			    name, qos_look.req_cpus, qos_look.req_mem);
			log_msg(LOG_WARN, "convert: %s", w);
			tell(o, w);
			free(w);
			*retried = 1;
		}
	}
	*err = xasprintf("the conversion %s waited on " QOS_MEM " again with the explicit profile "
	    "(ReqCPUS=%s ReqMem=%s): cancelled. taotop does not wait for the QOS's memory to free "
	    "(a conversion never moves into a GPU allocation): try again when the account's other "
	    "jobs have ended, or convert with another account", name, qos_look.req_cpus,
	    qos_look.req_mem);
out:
	free(name);
	free(tail);
	return rc;
}

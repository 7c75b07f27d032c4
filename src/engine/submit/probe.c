#include "util/compat.h"
#include "engine/submit/probe.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/submit/lint.h"
#include "engine/slurm/slurm.h"
#include "engine/submit/template.h"
#include "engine/config/rootsafe.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/share.h"
#include "util/xmalloc.h"

#define MARK_OK		"NCCL_PROBE_OK"
#define PENDING_MAX_S	900	/* a probe that cannot start in 15 min: say so */
#define CMD_TIMEOUT_MS	30000
/* How a hung collective ends by itself: PyTorch's NCCL watchdog
 * ("Watchdog caught collective operation timeout: WorkNCCL(...) ran for N
 * milliseconds before timing out") and the older ProcessGroupNCCL wording. */
#define COLLECTIVE_TIMEOUT_RE	"'collective operation timeout|Watchdog caught collective|NCCL (communicator|operation).*timed? ?out'"

static char *template_dir_of(const struct probe_opts *o)
{
	return o->template_dir ? xstrdup(o->template_dir) : share_dir("templates");
}

static int name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

int probe_env_lines(const char *set, char **lines, char **err)
{
	struct buf b;
	const char *p = set;

	buf_init(&b);
	while (*p != '\0') {
		size_t len, eq;
		char *value;
		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len == 0)
			break;
		eq = strcspn(p, "=");
		if (eq >= len || !name_ok(p, eq)) {
			*err = xasprintf("'%.*s' is not an NCCL knob (NAME=value)", (int)len, p);
			buf_free(&b);
			return -1;
		}
		value = xmemdup(p + eq + 1, len - eq - 1);
		buf_addf(&b, "%sexport %.*s=", b.len ? "\n" : "", (int)eq, p);
		sh_quote_buf(&b, value, strlen(value));
		free(value);
		p += len;
	}
	if (b.len == 0)
		buf_adds(&b, ": none");
	*lines = buf_detach(&b);
	return 0;
}

void probe_env_names(const char *set, struct buf *names)
{
	const char *p = set;

	while (*p != '\0') {
		size_t len, eq;
		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		if (len == 0)
			break;
		eq = strcspn(p, "=");
		if (eq < len && name_ok(p, eq))
			buf_addf(names, "%s%.*s", names->len ? "," : "", (int)eq, p);
		p += len;
	}
}

int probe_ladder(const char *ladder, const char *template_dir, char ***rungs, size_t *n,
    char **err)
{
	char *text = NULL, *path = NULL, *line, *save = NULL, *lines;
	size_t count = 1;
	char **v = xcalloc(1, sizeof(*v));

	v[0] = xstrdup("");
	if (ladder == NULL) {
		char *dir = template_dir ? xstrdup(template_dir) : share_dir("templates");
		path = xasprintf("%s/nccl-ladder.conf", dir);
		free(dir);
		text = file_read_all(path, NULL, err);
		if (text == NULL) {
			free(path);
			free(v[0]);
			free(v);
			return -1;
		}
	} else {
		text = xstrdup(ladder);
	}
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (probe_env_lines(line, &lines, err) != 0) {
			char *why = *err;
			*err = xasprintf("%s: %s", path ? path : "nccl_ladder", why);
			free(why);
			while (count > 0)
				free(v[--count]);
			free(v), free(text), free(path);
			return -1;
		}
		free(lines);
		v = xreallocarray(v, count + 1, sizeof(*v));
		v[count++] = xstrdup(line);
	}
	free(text);
	free(path);
	*rungs = v;
	*n = count;
	return 0;
}

/* Run a command; its stdout (caller frees) or NULL with *err. */
static char *run(struct conn *c, const char *cmd, int *status, char **err)
{
	return conn_run(c, cmd, CMD_TIMEOUT_MS, status, err);
}

static void say(probe_progress_fn *progress, void *data, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(probe_progress_fn *progress, void *data, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (progress == NULL)
		return;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	progress(msg, data);
	free(msg);
}

static void cancel_job(struct conn *c, const char *id)
{
	char *q = sh_quote(id), *cmd = xasprintf("scancel %s", q), *err = NULL, *out;
	int st = 0;

	out = run(c, cmd, &st, &err);
	free(out), free(err), free(cmd), free(q);
}

/* Render and stage the probe's sbatch for one rung; its path. */
static char *stage(struct conn *c, const struct cluster_cfg *cl, const struct probe_opts *o,
    const char *rung, int n, char **err)
{
	char *dir = template_dir_of(o), *tpath = xasprintf("%s/nccl_probe.sbatch.tmpl", dir);
	char *tmpl = file_read_all(tpath, NULL, err), *env = NULL, *text = NULL, *path = NULL;
	char *name = xasprintf("taotop-nccl-probe-%s-%d", cl->name, n), *qimage, *qmount, *qscript;
	char *script = xasprintf("%s/nccl_probe.py", o->dir), ngpus[16], nnodes[16], *qnames;
	struct buf extra, names;

	buf_init(&extra);
	buf_addf(&extra, "#SBATCH --partition=%s", o->partition);
	if (o->account != NULL)
		buf_addf(&extra, "\n#SBATCH --account=%s", o->account);
	snprintf(ngpus, sizeof(ngpus), "%d", o->gpus_per_node >= 1 ? o->gpus_per_node : 1);
	snprintf(nnodes, sizeof(nnodes), "%d", o->nodes > 1 ? 2 : 1);
	qimage = sh_quote(o->image);
	{
		char *m = xasprintf("%s:%s", o->dir, o->dir);
		qmount = sh_quote(m);
		free(m);
	}
	qscript = sh_quote(script);
	/* The rung's knobs and the rendezvous win over the image's own. */
	buf_init(&names);
	buf_adds(&names, PROBE_RENDEZVOUS_NAMES);
	probe_env_names(rung, &names);
	qnames = sh_quote(names.data);
	buf_free(&names);
	if (tmpl != NULL && probe_env_lines(rung, &env, err) == 0) {
		const struct tmpl_value v[] = {
			{ "JOB_NAME", name }, { "NUM_GPUS", ngpus }, { "PROBE_DIR", o->dir },
			{ "SBATCH_EXTRA", extra.data }, { "EXTRA_ENV", env }, { "IMAGE", qimage },
			{ "PROBE_MOUNT", qmount }, { "PROBE_SCRIPT", qscript }, { "NUM_NODES", nnodes },
			{ "CONTAINER_ENV", qnames },
		};
		/* The same gate as the job's own script: nothing unlinted runs. */
		path = xasprintf("%s/%s.sbatch", o->dir, name);
		if (template_render(tpath, tmpl, v, sizeof(v) / sizeof(v[0]), &text, err) != 0 ||
		    lint_gate(path, text, err) != 0) {
			free(path);
			path = NULL;
		} else {
			if (conn_write_file(c, path, text, strlen(text), 0644, CONN_WRITE_ATOMIC, err) !=
			    CONN_OK) {
				free(path);
				path = NULL;
			}
		}
	}
	free(dir), free(tpath), free(tmpl), free(env), free(text), free(name);
	free(qimage), free(qmount), free(qscript), free(script), free(qnames);
	buf_free(&extra);
	return path;
}

/* The probes folder made if missing, and used only when it is the user's
 * own real folder that no one else can write: the probe's program, its
 * sbatch and the output whose marker says "passed" all live there, and
 * whoever could write it could run code as the user or fake a pass. */
static int own_probe_dir(struct conn *c, const struct probe_opts *o, char **err)
{
	struct buf cmd;
	char *q = sh_quote(o->dir), *out, code[64];
	int st = 0, rc = -1;

	buf_init(&cmd);
	buf_addf(&cmd, "mkdir -p -- \"$(dirname -- %s)\" && { mkdir -m 755 -- %s 2>/dev/null; "
	    "true; }; ", q, q);
	rootsafe_funcs(&cmd);
	rootsafe_ask_dir(&cmd, "probes", o->dir);
	buf_addf(&cmd, "test -d %s || echo '@@probes missing'", q);
	out = run(c, cmd.data, &st, err);
	if (out != NULL && rootsafe_read(out, "probes", code, sizeof(code))) {
		char *why = strcmp(code, "missing") == 0 ? xstrdup("could not be made")
		    : rootsafe_why(code);
		char *fix = rootsafe_fix(code, o->dir);
		*err = xasprintf("the probes folder %s %s: taotop runs the NCCL probe from it and "
		    "trusts its output, so it must be a folder of your own that no one else can "
		    "write; nothing was submitted -- %s", o->dir, why, fix);
		free(why), free(fix);
	} else if (out != NULL) {
		rc = 0;
	}
	free(out), free(q);
	buf_free(&cmd);
	return rc;
}

/* Upload the probe program beside the sbatch files. */
static int stage_program(struct conn *c, const struct probe_opts *o, char **err)
{
	char *dir = template_dir_of(o), *src = xasprintf("%s/nccl_probe.py", dir);
	char *dst = xasprintf("%s/nccl_probe.py", o->dir), *text;
	size_t len = 0;
	int rc = -1;

	text = file_read_all(src, &len, err);
	if (text != NULL && own_probe_dir(c, o, err) == 0 &&
	    conn_write_file(c, dst, text, len, 0644, CONN_WRITE_ATOMIC, err) == CONN_OK)
		rc = 0;
	free(text), free(dir), free(src), free(dst);
	return rc;
}

enum verdict { PROBE_PASSED, PROBE_HUNG, PROBE_FAILED, PROBE_ERROR };

/* Stage and submit one rung: its SLURM job id, or NULL with *why. */
static char *submit_rung(struct conn *c, const struct cluster_cfg *cl,
    const struct probe_opts *o, const char *rung, int n, char **why)
{
	char *sbatch = stage(c, cl, o, rung, n, why), *q, *cmd, *out, *id;
	int st = 0;

	if (sbatch == NULL)
		return NULL;
	q = sh_quote(sbatch);
	cmd = xasprintf("sbatch --parsable %s", q);
	out = run(c, cmd, &st, why);
	free(q), free(cmd), free(sbatch);
	if (out == NULL || st != 0) {
		if (*why == NULL)
			*why = xstrdup("sbatch of the probe failed");
		free(out);
		return NULL;
	}
	id = xstrndup(out, strcspn(out, ";\n"));
	free(out);
	if (!slurm_id_ok(id)) {
		*why = xasprintf("sbatch of the probe answered '%s'", id);
		free(id);
		return NULL;
	}
	return id;
}

/* One command per look: the job's state, the marker (or the sign of a
 * collective that timed out by itself), the output's end. */
static char *look_command(const struct cluster_cfg *cl, const struct probe_opts *o, int n,
    const char *id)
{
	char *log = xasprintf("%s/taotop-nccl-probe-%s-%d-%s.out", o->dir, cl->name, n, id);
	char *qlog = sh_quote(log), *q = sh_quote(id), *cmd;

	cmd = xasprintf("squeue -h -j %s -o %%T 2>/dev/null; echo '@@'; grep -c %s %s 2>/dev/null; "
	    "grep -c -E %s %s 2>/dev/null; echo '@@'; tail -n 5 %s 2>/dev/null", q, MARK_OK, qlog,
	    COLLECTIVE_TIMEOUT_RE, qlog, qlog);
	free(q), free(qlog), free(log);
	return cmd;
}

/* One look's answer (out, cut up here): 1 with *v (and *why) when the rung
 * is decided or the answer unreadable, 0 to look again; *started set when
 * the job is first seen running. */
static int read_look(char *out, const char *id, const struct probe_opts *o,
    probe_progress_fn *progress, void *data, time_t *started, enum verdict *v, char **why)
{
	char *state = out, *count = strstr(state, "@@\n"), *tail;
	const char *nl;
	int timed_out;

	tail = count ? strstr(count + 3, "@@\n") : NULL;
	if (count == NULL || tail == NULL) {
		*why = xstrdup("the probe's status could not be read");
		return 1;
	}
	*count = '\0';
	count += 3;
	*tail = '\0';
	tail += 3;
	if (atoi(count) > 0) {
		*v = PROBE_PASSED;
		return 1;
	}
	/* grep -c's second count: the collective's own timeout. */
	nl = strchr(count, '\n');
	timed_out = nl != NULL && atoi(nl + 1) > 0;
	if (strncmp(state, "RUNNING", 7) == 0 && *started == 0) {
		*started = time(NULL);
		say(progress, data, "probe job %s running; waiting up to %d s for the all-reduce",
		    id, o->timeout_s);
	}
	if ((state[0] == '\0' || state[0] == '\n') && timed_out) {
		/* Ended FAILED by the collective's timeout: the hang,
		 * seen through PyTorch's watchdog before ours. */
		*v = PROBE_HUNG;
		*why = xstrdup("ended by the collective's own timeout");
		return 1;
	}
	if (state[0] == '\0' || state[0] == '\n') {
		/* Gone from the queue without the marker. */
		*v = PROBE_FAILED;
		*why = xasprintf("probe job %s ended without %s; its output ends with:\n%s", id,
		    MARK_OK, tail[0] ? tail : "(nothing)");
		return 1;
	}
	return 0;
}

/* Submit one rung and watch it. *why: for FAILED, the output's end. */
static enum verdict one_rung(struct conn *c, const struct cluster_cfg *cl,
    const struct probe_opts *o, const char *rung, int n, probe_progress_fn *progress, void *data,
    char **why)
{
	time_t submitted = time(NULL), started = 0;
	char *id = submit_rung(c, cl, o, rung, n, why), *cmd, *out;
	enum verdict v = PROBE_ERROR;
	int st = 0, done;

	if (id == NULL)
		return PROBE_ERROR;
	say(progress, data, "submitted probe job %s (%s)", id, rung[0] ? rung : "no NCCL knobs");
	cmd = look_command(cl, o, n, id);
	for (;;) {
		compat_sleep_ms(o->poll_ms > 0 ? (unsigned)o->poll_ms : 2000u);
		out = run(c, cmd, &st, why);
		if (out == NULL)
			break;		/* the connection: PROBE_ERROR */
		done = read_look(out, id, o, progress, data, &started, &v, why);
		free(out);
		if (done)
			break;
		if (started != 0 && time(NULL) - started >= o->timeout_s) {
			v = PROBE_HUNG;
			break;
		}
		if (started == 0 && time(NULL) - submitted >= PENDING_MAX_S) {
			*why = xasprintf("probe job %s did not start in %d minutes: the partition is "
			    "busy; try again later", id, PENDING_MAX_S / 60);
			break;
		}
	}
	if (v != PROBE_FAILED)
		cancel_job(c, id);	/* passed: done with it; hung or lost: stop it */
	free(cmd), free(id);
	return v;
}

int probe_nccl(struct conn *c, const struct cluster_cfg *cl, const struct probe_opts *o,
    probe_progress_fn *progress, void *data, char **env, char **err)
{
	char **rungs = NULL, *why = NULL;
	size_t n = 0, i;
	int rc = -1;

	*env = NULL;
	if (probe_ladder(cl->nccl_ladder, o->template_dir, &rungs, &n, err) != 0)
		return -1;
	if (stage_program(c, o, err) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		enum verdict v;
		if (i > 0)
			say(progress, data, "retrying with %s", rungs[i]);
		v = one_rung(c, cl, o, rungs[i], (int)i, progress, data, &why);
		if (v == PROBE_PASSED) {
			say(progress, data, "passed with %s", rungs[i][0] ? rungs[i] : "no NCCL knobs");
			*env = xstrdup(rungs[i]);
			rc = 0;
			goto out;
		}
		if (v == PROBE_HUNG) {
			if (why != NULL)
				say(progress, data, "%s: the all-reduce hangs", why);
			else
				say(progress, data, "timed out after %d s: the all-reduce hangs",
				    o->timeout_s);
			free(why);
			why = NULL;
			continue;
		}
		*err = xasprintf("the NCCL probe %s: %s", v == PROBE_FAILED ? "failed" : "could not run",
		    why ? why : "?");
		goto out;
	}
	*err = xasprintf("the NCCL probe hung with every set of knobs of the ladder (%zu tried): "
	    "nothing was submitted; ask the cluster's admins which NCCL settings work there and "
	    "set them as nccl_env for cluster '%s' in %s", n, cl->name, "config.yaml");
out:
	free(why);
	for (i = 0; i < n; i++)
		free(rungs[i]);
	free(rungs);
	return rc;
}

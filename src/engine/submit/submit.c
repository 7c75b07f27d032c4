/*
 * The submit pipeline, step by step in the order it runs (preflight, the
 * checks' command, image, probe, record and staging, render and lint,
 * launch; then the pipeline itself, folded into one command or the long
 * way). Over 800 lines because every step reads and writes one struct job
 * and its helpers (step, failed, run): cutting it along its sections
 * means a submit_priv.h with that struct, as tracker_priv.h does for the
 * tracker; not done in the rooms' round, which moved files whole.
 */
#include "util/compat.h"
#include "engine/submit/submit.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/submit/bank.h"
#include "engine/submit/checks.h"
#include "engine/submit/command.h"
#include "engine/submit/convert.h"
#include "engine/submit/execution.h"
#include "engine/config/config.h"
#include "engine/config/rootsafe.h"
#include "engine/submit/gpuspec.h"
#include "engine/submit/lint.h"
#include "engine/submit/policy.h"
#include "engine/submit/probe.h"
#include "engine/store/recindex.h"
#include "engine/store/store.h"
#include "engine/submit/request.h"
#include "engine/submit/secrets.h"
#include "engine/submit/settle.h"
#include "engine/slurm/slurm.h"
#include "engine/submit/spec.h"
#include "engine/submit/stage.h"
#include "engine/config/storage.h"
#include "engine/submit/template.h"
#include "engine/submit/cosmos.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/share.h"
#include "util/sha256.h"
#include "util/xmalloc.h"

#define CHECK_TIMEOUT_MS	60000
#define SUBMIT_TIMEOUT_MS	60000
/* The gate before sbatch refused (stdout, then why). */
#define REFUSED_MARK		"@@taotop-refused "

const char *submit_step_name(enum submit_step step)
{
	static const char *const names[] = { "preflight", "checks", "image", "probe", "record",
	    "spec", "sidecar", "lint", "submit" };
	return (unsigned)step < sizeof(names) / sizeof(names[0]) ? names[step] : "?";
}

/* A supporting file, read once: its bytes are the ones hashed and the
 * ones uploaded (a file changed between the two is never sent unchecked). */
struct upload {
	char	*local;		/* where it was read, for messages */
	char	*source;	/* as the bundle names it */
	char	*dest;		/* below the job folder */
	char	*data;
	size_t	 len;
	char	 sum[65];
	int	 helper;	/* execution.supporting_files: in the manifest */
};

/* Everything one submit works with. */
struct job {
	struct conn		*c;
	struct record_store	*st;
	const struct cluster_cfg *cl;
	const struct submit_opts *o;
	submit_progress_fn	*progress;
	void			*data;
	struct buf		 plan;		/* dry run: what would run */

	struct spec		 spec;		/* a copy of o->spec's top level when */
	int			 spec_borrowed;	/* borrowed: its pointers are the caller's */
	struct resources	 res;
	struct defaults		 defs;		/* the seed's, with the cluster's child timeout */
	struct image_ref	 image;
	struct request		 rq;		/* what was asked, and from where */
	char			*root;		/* results root on the cluster */
	char			*cache;		/* image cache folder */
	char			**datasets;	/* paths on the cluster */
	size_t			 ndatasets;
	/* The skill bank's declared inputs asked about (engine/submit/bank.h):
	 * their paths, types, and which of spec.inputs each is. */
	const char		**in_paths;
	int			*in_folder;
	size_t			*in_index;
	size_t			 nin;
	int			 bank_owned;	/* bank_own made the spec's parts ours */
	char			*inputs_note;	/* inputs skipped, and why */
	char			*id;
	const char		*name;		/* the run's (--name, else name:), or NULL */
	char			*job_dir, *results_dir, *log_dir, *sidecar, *sbatch_path;
	char			*nccl_env;	/* the cluster's NCCL knobs, or NULL */
	int			 probe;		/* the job probes NCCL as its first step */
	const char		*cosmos;	/* a Cosmos job's backend ("rl",
						 * "framework"; engine/submit/cosmos.h),
						 * else NULL */
	int			 sidecar_written;	/* removed again if the launch fails */
	const char		*image_how;	/* "reused", "cached", "converted" */
	/* The command's words, placeholders unexpanded: the bundle's, or
	 * TAO's own when it gives none (then owned here). */
	char *const		*argv;
	size_t			 argc;
	char			**default_argv;
	size_t			 default_argc;
	struct upload		*uploads;	/* the supporting files, read and checked */
	size_t			 nuploads;
	int			 lifecycle;	/* templates/lifecycle.sh runs the command
						 * (execution: pre/post commands, torchrun) */

	struct check_facts	 facts;		/* the checks' answers, once have_facts */
	int			 have_facts;
	int			 results_derived; /* results_dir is the job folder's */
	int			 results_check;	/* the bundle's results_dir: ask whether it
						 * holds another run (not with resume) */
	char			*partition_note;/* a list's partitions left out, and why */
	char			*resume_dir;	/* resume: the task folder whose newest
						 * checkpoint TAO's own train resumes from */
	/* The checks folded into the launch's script: the steps after them
	 * are held until its answer says they passed (a submit they stop
	 * never showed a record), then told in order; as many as come. */
	int			 folding, holding;
	char			*lost_id;	/* a record whose submit was lost (no job
						 * found): the record opened next submits
						 * it once more, linked to it */
	struct held_step {
		enum submit_step	 s;
		int			 state;
		char			*detail;
	}			*held;
	size_t			 nheld, held_cap;
};

/* A script that went through the lint and bash -n: launch takes only this,
 * so nothing unlinted can reach sbatch. */
struct linted_script {
	char	*text;
};

static void step(struct job *j, enum submit_step s, int state, const char *detail)
{
	if (j->holding) {
		if (j->nheld == j->held_cap) {
			j->held_cap = j->held_cap ? 2 * j->held_cap : 16;
			j->held = xreallocarray(j->held, j->held_cap, sizeof(*j->held));
		}
		j->held[j->nheld++] = (struct held_step){ s, state, detail ? xstrdup(detail) : NULL };
		return;
	}
	if (j->progress != NULL)
		j->progress(s, state, detail, j->data);
}

/* The held steps told now (tell) or dropped. */
static void release_held(struct job *j, int tell)
{
	size_t i;

	j->holding = 0;
	for (i = 0; i < j->nheld; i++) {
		if (tell)
			step(j, j->held[i].s, j->held[i].state, j->held[i].detail);
		free(j->held[i].detail);
	}
	j->nheld = 0;
}

/* The folded checks passed: said, then the steps held behind them. */
static void checks_passed(struct job *j)
{
	j->holding = 0;
	step(j, STEP_DATASET, 1, "checked first in the launch's script");
	release_held(j, 1);
}

static int failed(struct job *j, enum submit_step s, char **err)
{
	step(j, s, -1, *err);
	return -1;
}

static void plan(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plan(struct job *j, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	line = xvasprintf(fmt, ap);
	va_end(ap);
	buf_addf(&j->plan, "  %s\n", line);
	free(line);
}

/* Run cmd; 0 when it ran (look at x->exit_status), -1 with *err if not. */
static int run_on(struct conn *c, struct conn_exec *x, const char *cmd, int timeout_ms,
    atomic_int *cancel, char **err)
{
	conn_exec_init(x, cmd);
	x->timeout_ms = timeout_ms;
	x->cancel = cancel;
	return conn_exec(c, x, err) == CONN_OK ? 0 : -1;
}

static int run(struct job *j, struct conn_exec *x, const char *cmd, int timeout_ms, char **err)
{
	return run_on(j->c, x, cmd, timeout_ms, j->o->cancel, err);
}

/* A path that goes on #SBATCH lines and into Pyxis's mount list must hold
 * no white space, quotes, '%' (sbatch patterns) or ',' (mount lists). */
static int sbatch_safe(const char *what, const char *path, char **err)
{
	if (strpbrk(path, " \t\n'\"%,\\$`") != NULL) {
		*err = xasprintf("%s %s has a character (space, quote, %%, comma, $ or backquote) that "
		    "#SBATCH lines and container mounts cannot carry: choose a plainer path", what, path);
		return -1;
	}
	return 0;
}

static int read_supporting(struct job *j, char **err);
static char *fill_vars(const struct job *j, const char *text, int how, char **err);

/* ---- preflight: spec, policy, paths ------------------------------------------------------ */

static void shape_of(const struct job *j, struct gpu_shape *g)
{
	g->gpus_per_node = j->res.gpus_per_node;
	g->nodes = j->res.nodes;
	g->gpus_from = j->rq.gpus_from;
	g->nodes_from = j->rq.nodes_from;
	g->asked_gpus = j->spec.gpus;
}

/* The job's shape against TAO's spec and the command; TAO's own command
 * gets the count as overrides (engine/submit/gpuspec.h). */
static int tao_gpus(struct job *j, char **err)
{
	struct gpu_shape g;
	int taos = j->spec.argc == 0 || j->spec.command_is_taos;
	size_t i;

	shape_of(j, &g);
	if (gpuspec_check(&j->spec, &g, j->argv, j->argc, taos, err) != 0)
		return -1;
	if (!taos)
		return 0;
	if (j->argv != j->default_argv) {
		/* The words are the spec's (perhaps the caller's): copied. */
		j->default_argv = xcalloc(j->argc, sizeof(*j->default_argv));
		for (i = 0; i < j->argc; i++)
			j->default_argv[i] = xstrdup(j->argv[i]);
		j->default_argc = j->argc;
	}
	gpuspec_overrides(&j->spec, &g, &j->default_argv, &j->default_argc);
	j->argv = j->default_argv, j->argc = j->default_argc;
	return 0;
}

/* A/B/ and A/B as one path. */
static int same_dir(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && memcmp(a, b, la) == 0;
}

struct taken {
	const char	*cluster, *dir;
	char		*id, *ref;	/* the newest record launched into dir */
	time_t		 created;
};

static void visit_taken(const struct rec_meta *m, void *arg)
{
	struct taken *t = arg;

	if (m->backend_ref == NULL || m->results_dir == NULL || !same_dir(m->results_dir, t->dir) ||
	    (t->id != NULL && m->created < t->created))
		return;
	free(t->id), free(t->ref);
	t->id = xstrdup(m->id);
	t->ref = xstrdup(m->backend_ref);
	t->created = m->created;
}


/* The folder TAO writes the action's files in when the spec moves it
 * (<action>.results_dir): an absolute folder, or one under ${results_dir}
 * as OmegaConf writes it (caller frees); NULL when the spec does not move
 * it (then <results_dir>/<action>) or says something else, which the
 * tracker's search then finds. */
static char *task_dir(const struct job *j)
{
	char *key, *v, *dir = NULL;

	if (j->spec.action == NULL)
		return NULL;
	key = xasprintf("%s.results_dir", j->spec.action);
	v = spec_tao_value(&j->spec, key, NULL);
	if (v != NULL && strncmp(v, "${results_dir}", 14) == 0)
		dir = xasprintf("%s%s", j->results_dir, v + 14);
	else if (v != NULL)
		dir = xstrdup(v);
	free(v), free(key);
	if (dir != NULL && (dir[0] != '/' || strpbrk(dir, "\n\r") != NULL)) {
		free(dir);
		dir = NULL;
	}
	return dir;
}

/* The seed's defaults with the cluster's share of the wall for the child
 * timeout (child_timeout_percent). */
static struct defaults defaults_of(const struct cluster_cfg *cl)
{
	struct defaults d = seed_defaults;

	if (cl->child_timeout_pct > 0)
		d.timeout_hours = d.time_hours * cl->child_timeout_pct / 100.0;
	return d;
}

static const struct defaults *job_defaults(struct job *j)
{
	j->defs = defaults_of(j->cl);
	return &j->defs;
}

/* A note of the inputs left out, one more. */
static void input_note(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void input_note(struct job *j, const char *fmt, ...)
{
	va_list ap;
	char *line, *both;

	va_start(ap, fmt);
	line = xvasprintf(fmt, ap);
	va_end(ap);
	both = j->inputs_note ? xasprintf("%s; %s", j->inputs_note, line) : line;
	if (both != line)
		free(line);
	free(j->inputs_note);
	j->inputs_note = both;
}

/* The skill bank's declared inputs: those on shared storage asked about
 * with the datasets; those elsewhere (optional: the reader refused the
 * others) left out, said so. The outputs' own paths checked too. */
static int bank_inputs(struct job *j, char **err)
{
	size_t i;

	if (j->spec.format != SPEC_FORMAT_BANK)
		return 0;
	if (j->spec_borrowed) {
		bank_own(&j->spec);
		j->bank_owned = 1;
	}
	for (i = 0; i < j->spec.ninputs; i++) {
		struct spec_input *in = &j->spec.inputs[i];
		if (in->path == NULL) {
			input_note(j, "declared_inputs[%zu] (%s) %s is not on shared storage: optional, "
			    "so left out; stage it there before submit and give its lustre:/// path "
			    "to use it", i, in->spec_key, in->uri);
			continue;
		}
		if (sbatch_safe("declared input", in->path, err) != 0)
			return -1;
		j->in_paths = xreallocarray(j->in_paths, j->nin + 1, sizeof(*j->in_paths));
		j->in_folder = xreallocarray(j->in_folder, j->nin + 1, sizeof(*j->in_folder));
		j->in_index = xreallocarray(j->in_index, j->nin + 1, sizeof(*j->in_index));
		j->in_paths[j->nin] = in->path;
		j->in_folder[j->nin] = in->folder;
		j->in_index[j->nin++] = i;
	}
	for (i = 0; i < j->spec.noutputs; i++)
		if (j->spec.outputs[i].path != NULL &&
		    sbatch_safe("declared output", j->spec.outputs[i].path, err) != 0)
			return -1;
	return 0;
}

/* One results folder per run: a bundle's own results_dir that a record of
 * this cluster was launched into is refused here, with that run named;
 * one that holds a run's files on the cluster, by the checks (the same
 * command as the rest: check_ask.results_dir). resume: true continues the
 * run there instead: TAO's own train gets its newest checkpoint. */
static int results_folder(struct job *j, char **err)
{
	struct taken t = { j->cl->name, j->results_dir, NULL, NULL, 0 };
	struct rec_index *x;
	char *warnings = NULL, *task, *named;

	if (j->results_dir == NULL) {
		if (j->spec.resume == 1) {
			*err = xstrdup("resume: true continues the run in the bundle's results_dir, and "
			    "this bundle has none: give the results_dir of the run to continue");
			return -1;
		}
		return 0;
	}
	if (j->spec.resume == 1) {
		if ((j->spec.argc == 0 || j->spec.command_is_taos) && j->spec.action != NULL &&
		    strcmp(j->spec.action, "train") == 0) {
			named = spec_tao_value(&j->spec, "train.resume_training_checkpoint_path",
			    NULL);
			free(named);
			if (named != NULL)
				return 0;	/* the spec names its checkpoint */
			task = task_dir(j);
			j->resume_dir = task != NULL ? task : xasprintf("%s/train", j->results_dir);
			if (sbatch_safe("train.results_dir", j->resume_dir, err) != 0)
				return -1;
		}
		return 0;
	}
	x = recindex_of(j->st);
	recindex_refresh(x, &warnings);
	free(warnings);
	recindex_each(x, j->cl->name, visit_taken, &t);
	if (t.id != NULL) {
		*err = xasprintf("results_dir %s already holds run %s (SLURM job %s): give this run "
		    "a folder of its own (or leave results_dir out: the job's own folder), or say "
		    "resume: true to continue that run", j->results_dir, t.id, t.ref);
		free(t.id), free(t.ref);
		return -1;
	}
	j->results_check = 1;
	return 0;
}

static int preflight(struct job *j, char **err)
{
	char *note = NULL;
	size_t i;

	step(j, STEP_PREFLIGHT, 0, NULL);
	if (j->o->spec != NULL) {
		j->spec = *j->o->spec;
		j->spec_borrowed = 1;
	} else if (spec_load(j->o->spec_path, &j->spec, err) != 0) {
		return failed(j, STEP_PREFLIGHT, err);
	}
	j->name = j->o->name != NULL ? j->o->name : j->spec.name;
	if (j->name != NULL && (note = spec_name_problem(j->name)) != NULL) {
		*err = xasprintf("%s %s", j->o->name != NULL ? "--name" : "field 'name'", note);
		free(note);
		return failed(j, STEP_PREFLIGHT, err);
	}
	if (request_resolve(j->o, &j->spec, j->cl, &j->rq, err) != 0)
		return failed(j, STEP_PREFLIGHT, err);
	/* A Cosmos job is refused before anything else is asked (a
	 * registry image, a requeue), and is never requeued. */
	if (cosmos_check(&j->spec, j->rq.requeue_from, 1 << 30, err) != 0)
		return failed(j, STEP_PREFLIGHT, err);
	if (j->spec.cosmos_backend != NULL)
		j->cosmos = j->spec.cosmos_backend;
	if (cosmos_arch(j->spec.network_arch)) {
		j->spec.requeue = 0;
		j->rq.requeue_from = "a Cosmos job: never requeued";
	}
	if (j->cl->results_root == NULL) {
		*err = xasprintf("cluster %s has no results root: give taotop init --results-root "
		    "lustre:///path (results_root: in config.yaml), or export "
		    "SLURM_BASE_RESULTS_DIR, the shared-storage folder for job folders", j->cl->name);
		return failed(j, STEP_PREFLIGHT, err);
	}
	j->root = strncmp(j->cl->results_root, "lustre://", 9) == 0 ||
	    strncmp(j->cl->results_root, "slurm://", 8) == 0
	    ? storage_path("SLURM_BASE_RESULTS_DIR", j->cl->results_root, err)
	    : j->cl->results_root[0] == '/' ? xstrdup(j->cl->results_root) : NULL;
	if (j->root == NULL) {
		if (*err == NULL)
			*err = xasprintf("SLURM_BASE_RESULTS_DIR: %s is not an absolute path on the "
			    "cluster", j->cl->results_root);
		return failed(j, STEP_PREFLIGHT, err);
	}
	if (sbatch_safe("SLURM_BASE_RESULTS_DIR", j->root, err) != 0)
		return failed(j, STEP_PREFLIGHT, err);
	j->cache = j->cl->image_cache ? xstrdup(j->cl->image_cache) : xasprintf("%s/images", j->root);
	for (i = 0; i < j->spec.ndatasets; i++) {
		char *p = storage_path("datasets", j->spec.datasets[i], err);
		if (p == NULL || sbatch_safe("dataset", p, err) != 0) {
			free(p);
			return failed(j, STEP_PREFLIGHT, err);
		}
		j->datasets = xreallocarray(j->datasets, j->ndatasets + 1, sizeof(*j->datasets));
		j->datasets[j->ndatasets++] = p;
	}
	if (bank_inputs(j, err) != 0)
		return failed(j, STEP_PREFLIGHT, err);
	if (j->spec.results_dir != NULL) {
		j->results_dir = storage_path("results_dir", j->spec.results_dir, err);
		if (j->results_dir == NULL || sbatch_safe("results_dir", j->results_dir, err) != 0)
			return failed(j, STEP_PREFLIGHT, err);
	}
	if (j->spec.argc > 0) {
		j->argv = j->spec.argv, j->argc = j->spec.argc;
	} else if (command_default(j->spec.network_arch, j->spec.action, &j->default_argv,
	    &j->default_argc, err) == 0) {
		j->argv = j->default_argv, j->argc = j->default_argc;
	} else {
		return failed(j, STEP_PREFLIGHT, err);
	}
	for (i = 0; i < j->argc; i++)
		if (command_check_word(j->argv[i], err) != 0)
			return failed(j, STEP_PREFLIGHT, err);
	if (image_parse(j->spec.image, j->cache, &j->image, err) != 0 ||
	    sbatch_safe("image", j->image.sqsh, err) != 0 || read_supporting(j, err) != 0)
		return failed(j, STEP_PREFLIGHT, err);
	/* Time above 4 h elsewhere needs the partition's MaxTime: checked
	 * with the datasets; the packaged 4-hour queues need no question. */
	if (policy_resources(&j->spec, job_defaults(j), j->rq.partition, 1e9, &j->res, &note, err) != 0 ||
	    tao_gpus(j, err) != 0 || results_folder(j, err) != 0 ||
	    cosmos_check(&j->spec, j->rq.requeue_from, j->res.nodes, err) != 0) {
		free(note);
		return failed(j, STEP_PREFLIGHT, err);
	}
	step(j, STEP_PREFLIGHT, 1, note);
	free(note);
	return 0;
}

/* ---- one remote command checks datasets, image and partition ----------------------------- */

/* "its partitions are a, b" from sinfo's "a b " (or that it listed none). */
static char *partitions_list(const char *words)
{
	struct buf b;
	const char *p = words;
	size_t n;
	int k = 0;

	buf_init(&b);
	while (*(p += strspn(p, " ")) != '\0') {
		n = strcspn(p, " ");
		buf_addf(&b, "%s%.*s", k++ ? ", " : "", (int)n, p);
		p += n;
	}
	if (k == 0) {
		buf_free(&b);
		return xstrdup("sinfo lists no partition there");
	}
	{
		char *text = xasprintf("its partition%s %s", k == 1 ? " is" : "s are", b.data);
		buf_free(&b);
		return text;
	}
}

/* One partition against the job: its time limit, then the shape of its
 * nodes (unknown: let sbatch say). */
static int judge_partition(struct job *j, const struct check_facts *f, const char *name,
    double max_h, int part_nodes, int part_gpus, char **err)
{
	if (max_h <= 0) {
		char *list = partitions_list(f->partitions);
		*err = xasprintf("partition %s (from %s) does not exist on the cluster; %s", name,
		    j->rq.partition_from, list);
		free(list);
		return -1;
	}
	if (policy_resources(&j->spec, job_defaults(j), name, max_h, &j->res, NULL, err) != 0)
		return -1;
	if (part_nodes > 0 && j->res.nodes > part_nodes) {
		*err = xasprintf("%d GPUs as %d node%s x %d: partition %s has %d node%s; ask for at "
		    "most %d GPUs there, or another partition", j->res.gpus_total, j->res.nodes,
		    j->res.nodes == 1 ? "" : "s", j->res.gpus_per_node, name,
		    part_nodes, part_nodes == 1 ? "" : "s",
		    part_nodes * (part_gpus > 0 ? part_gpus : 1));
		return -1;
	}
	if (part_gpus >= 0 && j->res.gpus_per_node > part_gpus) {
		*err = xasprintf("%d GPUs on a node: the nodes of partition %s have %d; split the job "
		    "over more nodes (nodes: %d)", j->res.gpus_per_node, name,
		    part_gpus, part_gpus > 0
		    ? (j->res.gpus_total + part_gpus - 1) / part_gpus : 0);
		return -1;
	}
	return 0;
}

/* A list of partitions (SLURM_PARTITION=a,b): each checked as one; those
 * that cannot run the job are left out of --partition (with
 * EnforcePartLimits=ALL, SLURM would refuse the whole list for one of
 * them), the rest go whole, and SLURM starts the job on the first of them
 * that can. None: the reasons, each partition's. */
static int judge_list(struct job *j, const struct check_facts *f, char **err)
{
	struct buf kept, out;
	const char *p = j->rq.partition;
	size_t i;
	int rc = 0;

	buf_init(&kept);
	buf_init(&out);
	while (*p != '\0') {
		size_t len = strcspn(p, ",");
		char name[64], *e = NULL;
		const struct part_facts *pf = NULL;
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		for (i = 0; i < f->nparts && pf == NULL; i++)
			if (strcmp(f->parts[i].name, name) == 0)
				pf = &f->parts[i];
		if (judge_partition(j, f, name, pf ? pf->max_h : 0, pf ? pf->nodes : -1,
		    pf ? pf->gpus : -1, &e) == 0)
			buf_addf(&kept, "%s%s", kept.len ? "," : "", name);
		else
			buf_addf(&out, "%s%s", out.len ? "; " : "", e);
		free(e);
		p += len;
		if (*p == ',')
			p++;
	}
	if (kept.len == 0) {
		*err = xasprintf("no partition of %s can run this job: %s", j->rq.partition, out.data);
		rc = -1;
	} else {
		snprintf(j->rq.kept, sizeof(j->rq.kept), "%s", kept.data);
		if (out.len > 0) {
			free(j->partition_note);
			j->partition_note = xasprintf("left out of %s: %s", j->rq.partition, out.data);
		}
		j->rq.partition = j->rq.kept;
		/* The resources as the first kept partition has them. */
		char first[64];
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(kept.data, ","), kept.data);
		for (i = 0; i < f->nparts; i++)
			if (strcmp(f->parts[i].name, first) == 0)
				rc = judge_partition(j, f, first, f->parts[i].max_h, f->parts[i].nodes,
				    f->parts[i].gpus, err);
	}
	buf_free(&kept);
	buf_free(&out);
	return rc;
}

/* The facts against the job: the first thing that stops it, in *err. */
static int judge_facts(struct job *j, const struct check_facts *f, char **err)
{
	if (f->missing != SIZE_MAX) {
		*err = xasprintf("dataset %s does not exist on %s: stage it on the shared "
		    "storage first (never inside the allocation), or fix the path",
		    j->datasets[f->missing], conn_host(j->c));
		return -1;
	}
	for (size_t i = 0; i < j->nin; i++) {
		struct spec_input *in = &j->spec.inputs[j->in_index[i]];
		if (f->inputs[i] == INPUT_WRONG_TYPE) {
			*err = xasprintf("declared_inputs[%zu] (spec_key %s): %s on %s is not a %s, as "
			    "its type says: fix the uri or the type", j->in_index[i], in->spec_key,
			    in->path, conn_host(j->c), in->folder ? "folder" : "file");
			return -1;
		}
		if (f->inputs[i] == INPUT_MISSING && !in->optional) {
			*err = xasprintf("declared_inputs[%zu] (spec_key %s): %s does not exist on %s: "
			    "stage it on the shared storage first (never inside the allocation), or "
			    "fix its uri; nothing was written", j->in_index[i], in->spec_key, in->path,
			    conn_host(j->c));
			return -1;
		}
		if (f->inputs[i] == INPUT_MISSING && !in->skipped) {
			in->skipped = 1;
			input_note(j, "declared_inputs[%zu] (%s) %s does not exist: optional, so left "
			    "out", j->in_index[i], in->spec_key, in->path);
		}
	}
	if (strchr(j->rq.partition, ',') != NULL) {
		if (judge_list(j, f, err) != 0)
			return -1;
	} else if (judge_partition(j, f, j->rq.partition, f->max_h, f->part_nodes, f->part_gpus,
	    err) != 0) {
		return -1;
	}
	if (f->results_run[0] != '\0') {
		*err = xasprintf("results_dir %s already holds another run: %s is there; give this "
		    "run a folder of its own (or leave results_dir out: the job's own folder), or "
		    "say resume: true to continue that run", j->results_dir, f->results_run);
		return -1;
	}
	if (f->image_unsafe[0] != '\0' && (j->image.is_sqsh || f->image_state == 1)) {
		char *why = rootsafe_why(f->image_unsafe), *fix = rootsafe_fix(f->image_unsafe,
		    j->image.sqsh);
		*err = xasprintf("image %s %s: taotop runs only an image no one else could have put "
		    "there or can replace; nothing was submitted -- %s%s", j->image.sqsh, why, fix,
		    j->image.docker_uri ? ", and submit again to convert it afresh" : "");
		free(why), free(fix);
		return -1;
	}
	if (f->image_dir_unsafe[0] != '\0' && !j->image.is_sqsh && f->image_state != 1) {
		char *why = rootsafe_why(f->image_dir_unsafe), *fix = rootsafe_fix(f->image_dir_unsafe,
		    j->cache);
		*err = xasprintf("the images folder %s %s: taotop converts images into it and runs "
		    "them, so it must be a folder of your own that no one else can write; nothing "
		    "was converted or submitted -- %s", j->cache, why, fix);
		free(why), free(fix);
		return -1;
	}
	if (j->image.is_sqsh && f->image_state != 1) {
		*err = xasprintf("image %s %s", j->image.sqsh, f->image_state == 0 ? "does not exist"
		    : "is not a squashfs file (no hsqs magic): a truncated conversion? convert it again");
		return -1;
	}
	return 0;
}

/* What the checks ask about this job. */
static void ask_of(const struct job *j, struct check_ask *a)
{
	a->datasets = (const char *const *)j->datasets;
	a->ndatasets = j->ndatasets;
	a->image = j->image.sqsh;
	a->image_dir = j->image.docker_uri != NULL ? j->cache : NULL;
	a->partition = j->rq.partition;
	a->nodes = j->res.nodes;
	a->gpus_per_node = j->res.gpus_per_node;
	a->results_dir = j->results_check ? j->results_dir : NULL;
	a->inputs = j->in_paths;
	a->input_folder = j->in_folder;
	a->ninputs = j->nin;
}

/* The checks as one command, or their answers already in j->facts (from
 * a launch's script that they stopped): judged the same way. */
static int check_remote(struct job *j, char **err)
{
	struct check_ask a;
	struct buf cmd;
	struct conn_exec x;
	int rc;

	step(j, STEP_DATASET, 0, NULL);
	if (!j->have_facts) {
		ask_of(j, &a);
		buf_init(&cmd);
		checks_command(&a, &cmd);
		if (j->o->dry_run)
			plan(j, "check: %s", cmd.data);
		rc = run(j, &x, cmd.data, CHECK_TIMEOUT_MS, err);
		buf_free(&cmd);
		if (rc == 0)
			checks_read(x.out.data, j->ndatasets, &j->facts);
		conn_exec_free(&x);
		if (rc != 0)
			return failed(j, STEP_DATASET, err);
		j->have_facts = 1;
	}
	if (judge_facts(j, &j->facts, err) != 0)
		return failed(j, STEP_DATASET, err);
	/* For a registry image: 1 = a good cached .sqsh exists. */
	j->image.is_sqsh = j->image.is_sqsh ||
	    (j->facts.image_state == 1 && !(j->image.latest && j->o->force_reconvert));
	if (strchr(j->rq.partition, ',') != NULL && j->o->dry_run)
		plan(j, "partitions: %s, whole: SLURM starts the job on the first of them that can "
		    "run it (taotop status names the one it chose)%s%s", j->rq.partition,
		    j->partition_note ? "; " : "", j->partition_note ? j->partition_note : "");
	if (j->inputs_note != NULL && j->o->dry_run)
		plan(j, "inputs: %s", j->inputs_note);
	{
		char *said = j->partition_note && j->inputs_note ? xasprintf("%s; %s",
		    j->partition_note, j->inputs_note) : NULL;
		step(j, STEP_DATASET, 1, said ? said : j->partition_note ? j->partition_note
		    : j->inputs_note);
		free(said);
	}
	return 0;
}

/* ---- image: convert once, on the CPU partition ------------------------------------------------ */

/* ---- the NCCL probe ------------------------------------------------------------------------- */

/* "NxG" for a probe of n nodes with g GPUs each. */
static void shape_text(int nodes, int gpus_per_node, char *out, size_t size)
{
	snprintf(out, size, "%dx%d", nodes, gpus_per_node);
}

/* Whether knobs cached from a probe of shape `cached` ("NxG") hold for a
 * job of this shape: a multi-node job needs a multi-node probe (the
 * network between nodes), a job with several GPUs on a node needs a probe
 * that had several (the intra-node P2P hang). No shape: set by hand. */
static int cache_covers(const char *cached, int nodes, int gpus_per_node)
{
	int cn = 0, cg = 0;

	if (cached == NULL || sscanf(cached, "%dx%d", &cn, &cg) != 2)
		return 1;
	return (nodes <= 1 || cn > 1) && (gpus_per_node <= 1 || cg > 1);
}

static int probe_timeout(const struct job *j)
{
	return j->cl->nccl_probe_timeout_s > 0 ? j->cl->nccl_probe_timeout_s : 120;
}

/* Whether the job needs no NCCL probe: one GPU (no collective to hang),
 * or knobs cached from a probe that covers its shape. */
static int no_probe_needed(const struct job *j)
{
	return (j->res.nodes <= 1 && j->res.gpus_per_node <= 1) || (j->cl->nccl_env != NULL &&
	    cache_covers(j->cl->nccl_env_shape, j->res.nodes, j->res.gpus_per_node));
}

/* NCCL runs across GPUs here: the cluster's knobs, cached or probed. The
 * probe is the job's own first step (engine/submit/probe.h), in its shape
 * on the nodes it gets: nothing waits in the queue before the job does. */
static int nccl_knobs(struct job *j, char **err)
{
	char shape[32], *said, **rungs = NULL;
	size_t n = 0, i;

	if (j->res.nodes <= 1 && j->res.gpus_per_node <= 1)
		return 0;	/* one GPU: no collective to hang */
	step(j, STEP_PROBE, 0, NULL);
	shape_text(j->res.nodes, j->res.gpus_per_node, shape, sizeof(shape));
	if (j->cosmos != NULL && !no_probe_needed(j)) {
		/* Cosmos's templates start its own launcher first: no probe step. */
		step(j, STEP_PROBE, 1, "none: a Cosmos job runs no NCCL probe (no knobs cached for "
		    "this shape)");
		return 0;
	}
	if (no_probe_needed(j)) {
		j->nccl_env = xstrdup(j->cl->nccl_env);
		said = xasprintf("cached%s%s: %s", j->cl->nccl_env_shape ? " from a probe on " : "",
		    j->cl->nccl_env_shape ? j->cl->nccl_env_shape : "",
		    j->nccl_env[0] ? j->nccl_env : "no NCCL knobs needed");
		step(j, STEP_PROBE, 1, said);
		free(said);
		return 0;
	}
	/* The ladder is read now: a bad one stops the submit, not the job. */
	if (probe_ladder(j->cl->nccl_ladder, j->o->template_dir, &rungs, &n, err) != 0)
		return failed(j, STEP_PROBE, err);
	for (i = 0; i < n; i++)
		free(rungs[i]);
	free(rungs);
	j->probe = 1;
	if (j->o->dry_run)
		plan(j, "# the NCCL probe runs as the job's first step, inside its allocation on "
		    "the %d node%s x %d GPUs it gets: each of the ladder's %zu rungs until one "
		    "passes (%d s each), its knobs then exported for the training and cached",
		    j->res.nodes,
		    j->res.nodes > 1 ? "s" : "", j->res.gpus_per_node, n, probe_timeout(j));
	said = xasprintf("the NCCL probe runs as the job's first step on %s (not cached for this "
	    "shape)", shape);
	step(j, STEP_PROBE, 1, said);
	free(said);
	return 0;
}

static void convert_said(const char *what, void *data)
{
	step(data, STEP_IMAGE, 0, what);
}

static int convert_image(struct job *j, struct submit_result *res, char **err)
{
	struct convert_opts co = {
		.sqsh = j->image.sqsh, .docker_uri = j->image.docker_uri, .cache = j->cache,
		.partition = j->cl->cpu_partition, .account = j->rq.account, .cancel = j->o->cancel,
		.said = convert_said, .data = j,
	};
	int retried = 0;

	if (j->image.is_sqsh) {
		/* A .sqsh given as such (reused: never converted), or the
		 * registry image's file converted by an earlier submit. */
		j->image_how = j->image.docker_uri ? "cached" : "reused";
		step(j, STEP_IMAGE, 1, j->image_how);
		return 0;
	}
	if (j->o->dry_run) {
		char *line = convert_srun_line(&co, "taotop-convert-XXXXXX");
		plan(j, "convert: %s (detached; its queue state looked at every %d s, its hsqs "
		    "magic checked)", line, CONVERT_POLL_MS / 1000);
		free(line);
		j->image_how = "to be converted";
		step(j, STEP_IMAGE, 1, "would convert");
		return 0;
	}
	step(j, STEP_IMAGE, 0, "converting on the CPU partition (once per image)");
	if (convert_run(j->c, &co, &retried, err) != 0) {
		char *e = *err;
		/* A registry that wants credentials: say the one-time fix;
		 * enroot says when it sent the installed ones (its "Using
		 * credentials from file"), and then the key itself was
		 * refused (revoked, expired, another org's). */
		int denied = strstr(e, "401 Unauthorized") != NULL;
		const char *hint = denied && strstr(e, "Using credentials from file") != NULL
		    ? " -- the registry refused the NGC key installed on this cluster (revoked, "
		      "expired, or of an org without access to this image): put a current one in "
		      "its place with taotop preflight --replace-ngc-credentials"
		    : denied ? " -- the registry wants credentials: install them once on this "
		      "cluster with taotop preflight --install-ngc-credentials (it asks for the key)"
		    : "";
		*err = xasprintf("converting %s failed on %s: %s%s -- taotop does not fall back to "
		    "the registry image (it would be pulled on the GPUs); fix the conversion and "
		    "submit again", j->image.docker_uri, j->cl->cpu_partition, e, hint);
		free(e);
		return failed(j, STEP_IMAGE, err);
	}
	res->converted = 1;
	j->image_how = retried ? "converted (once more, with the explicit profile, after "
	    "QOSGrpMemLimit)" : "converted";
	step(j, STEP_IMAGE, 1, retried ? "converted, the second time with the explicit profile "
	    "(the first waited on QOSGrpMemLimit)" : "converted");
	return 0;
}

/* ---- record, staging, sidecar ------------------------------------------------------------------ */

/* The spec's <action>.results_dir, where TAO then writes its status file
 * (engine/track/taostatus.h), kept in the record: an absolute folder, or
 * one under ${results_dir} as OmegaConf writes it; anything else is left
 * to the tracker's search. */
static void task_results_dir(const struct job *j, struct job_record *r)
{
	char *dir = task_dir(j);

	if (dir != NULL)
		record_set(&r->tao_results_dir, dir);
	free(dir);
}

/* The lost record: its resubmit is arg (NULL: none after all). */
static int link_retry(struct job_record *r, void *arg, char **err)
{
	(void)err;
	record_set(&r->retried_as, arg);
	if (arg == NULL)
		record_event(r, "its resubmit's checks stopped it before any write: the submit goes "
		    "on the long way, as a new record", "taotop", time(NULL));
	return 1;
}

static int open_record(struct job *j, char **err)
{
	struct job_record *r;
	int rc;

	step(j, STEP_RECORD, 0, NULL);
	j->id = j->o->dry_run ? xstrdup("tao-DRYRUN") : store_mint_id(j->st);
	j->job_dir = xasprintf("%s/%s", j->root, j->id);
	if (j->results_dir == NULL) {
		j->results_dir = xasprintf("%s/results", j->job_dir);
		j->results_derived = 1;
	}
	j->log_dir = xasprintf("%s/slurm-logs", j->job_dir);
	j->sbatch_path = xasprintf("%s/sbatch/job_%s.sbatch", j->job_dir, j->id);
	if (j->spec.nsecrets > 0)
		j->sidecar = secrets_sidecar_path(j->job_dir, j->id);
	/* The skill bank's bundle: its inputs, outputs and GPUs into its spec,
	 * now that the results folder is named. */
	if (j->spec.format == SPEC_FORMAT_BANK && bank_bind(&j->spec, j->results_dir,
	    j->res.gpus_per_node, err) != 0)
		return failed(j, STEP_RECORD, err);
	for (size_t i = 0; i < j->spec.noutputs; i++)
		if (j->spec.outputs[i].path != NULL &&
		    sbatch_safe("declared output", j->spec.outputs[i].path, err) != 0)
			return failed(j, STEP_RECORD, err);
	if (j->o->dry_run) {
		step(j, STEP_RECORD, 1, j->id);
		return 0;
	}
	r = record_new(j->id);
	record_set(&r->cluster, j->cl->name);
	record_set(&r->image, j->image.sqsh);
	record_set(&r->name, j->name);
	record_set(&r->network_arch, j->spec.network_arch);
	record_set(&r->action, j->spec.action);
	record_set(&r->results_dir, j->results_dir);
	record_set(&r->log_dir, j->log_dir);
	r->child_timeout_s = atol(j->res.child_timeout);
	if (j->cosmos != NULL) {
		/* Cosmos writes <results_dir>/<job id>/status.json. */
		char *dir = xasprintf("%s/%s", j->results_dir, j->id);
		record_set(&r->tao_results_dir, dir);
		free(dir);
		record_set(&r->cosmos, j->cosmos);
		if (strcmp(j->cosmos, "rl") == 0) {
			char *roles = cosmos_role_names(j->res.nodes, j->spec.cosmos_rollout_nodes);
			record_set(&r->roles, roles);
			free(roles);
		}
	} else {
		task_results_dir(j, r);
	}
	if (j->spec.exec.status_path != NULL) {
		/* The bundle's own status judges the end (engine/track/structured.h). */
		struct buf states;
		char *path = fill_vars(j, j->spec.exec.status_path, 1, err);
		size_t i;
		if (path == NULL) {
			record_free(r);
			return failed(j, STEP_RECORD, err);
		}
		record_set(&r->done_status_path, path);
		free(path);
		buf_init(&states);
		for (i = 0; i < j->spec.exec.nsuccess; i++)
			buf_addf(&states, "%s%s", i ? "\n" : "", j->spec.exec.success_states[i]);
		record_set(&r->success_states, states.data);
		buf_free(&states);
	}
	{
		/* The spec as staged (the same text stage writes): runs of a
		 * sweep compared are named by what differs in it. */
		char *yaml = NULL, *why = NULL;
		if (spec_emit_tao(&j->spec, &yaml, &why) == 0 && strlen(yaml) <= RECORD_SPEC_MAX)
			record_set(&r->spec, yaml);
		free(yaml);
		free(why);
	}
	if (j->o->spec_path != NULL) {
		/* Where a retry finds the bundle's .env again. */
		char *abs = compat_realpath(j->o->spec_path);
		record_set(&r->bundle, abs ? abs : j->o->spec_path);
		free(abs);
	}
	if (j->spec.nsecrets > 0) {
		/* Names only: a retry writes the sidecar again from them. */
		struct buf names;
		size_t i;
		buf_init(&names);
		for (i = 0; i < j->spec.nsecrets; i++)
			buf_addf(&names, "%s%s", i ? "," : "", j->spec.secrets[i]);
		record_set(&r->secrets, names.data);
		buf_free(&names);
	}
	if (j->lost_id != NULL) {
		char *m = xasprintf("opened: %s's submit was lost (no job found by its name): "
		    "submitted once more", j->lost_id);
		record_set(&r->retry_of, j->lost_id);
		record_event(r, m, "taotop", time(NULL));
		free(m);
	}
	record_event(r, "opened: staging", "taotop", time(NULL));
	if (j->inputs_note != NULL)
		record_event(r, j->inputs_note, "taotop", time(NULL));
	if (strchr(j->rq.partition, ',') != NULL) {
		char *parts = xasprintf("partitions %s: SLURM starts the job on the first that can "
		    "run it%s%s", j->rq.partition, j->partition_note ? "; " : "",
		    j->partition_note ? j->partition_note : "");
		record_event(r, parts, "taotop", time(NULL));
		free(parts);
	}
	{
		char *how = xasprintf("image: %s %s", j->image_how, j->image.sqsh);
		record_event(r, how, "taotop", time(NULL));
		free(how);
	}
	rc = store_create(j->st, r, err);
	record_free(r);
	if (rc == 0 && j->lost_id != NULL)
		rc = store_update(j->st, j->lost_id, link_retry, j->id, err);
	if (rc != 0)
		return failed(j, STEP_RECORD, err);
	step(j, STEP_RECORD, 1, j->id);
	return 0;
}

/* A supporting file's local path: relative paths are the bundle's. */
static char *supporting_path(const struct job *j, const char *path)
{
	const char *slash = j->o->spec_path ? strrchr(j->o->spec_path, '/') : NULL;

	return path[0] == '/' || slash == NULL ? xstrdup(path)
	    : xasprintf("%.*s/%s", (int)(slash - j->o->spec_path), j->o->spec_path, path);
}

/* One supporting file read whole, its sha256 computed from those bytes
 * and checked against the one the bundle states; dest is below the job
 * folder. */
static int read_one(struct job *j, const char *path, const char *sum, char *dest, int helper,
    char **err)
{
	struct upload u = { supporting_path(j, path), xstrdup(path), dest, NULL, 0, "", helper };
	char *why = NULL;

	u.data = file_read_all(u.local, &u.len, &why);
	if (u.data == NULL) {
		*err = access(u.local, F_OK) != 0
		    ? xasprintf("supporting file %s does not exist: fix its path under %s (relative "
			"to the bundle's folder)", u.local, helper ? "execution.supporting_files"
			: "supporting_files")
		    : xasprintf("supporting file %s cannot be read: %s", u.local, why ? why : "?");
		free(why);
		free(u.local), free(u.source), free(u.dest);
		return -1;
	}
	sha256_hex(u.data, u.len, u.sum);
	if (strcasecmp(u.sum, sum) != 0) {
		*err = xasprintf("supporting file %s has sha256 %s, not the %s the bundle states: "
		    "nothing was staged", u.local, u.sum, sum);
		free(u.local), free(u.source), free(u.dest), free(u.data);
		return -1;
	}
	j->uploads = xreallocarray(j->uploads, j->nuploads + 1, sizeof(*j->uploads));
	j->uploads[j->nuploads++] = u;
	return 0;
}

/* Every supporting file read once and checked before anything is written
 * on the cluster: the bundle's own beside spec.yaml (by name), the
 * execution block's below inputs/action-helpers/. */
static int read_supporting(struct job *j, char **err)
{
	const struct spec_exec *e = &j->spec.exec;
	size_t i;

	for (i = 0; i < j->spec.nfiles; i++) {
		const char *path = j->spec.files[i].path, *base = strrchr(path, '/');
		if (read_one(j, path, j->spec.files[i].sha256,
		    xasprintf("specs/%s", base ? base + 1 : path), 0, err) != 0)
			return -1;
	}
	for (i = 0; i < e->nfiles; i++)
		if (read_one(j, e->files[i].source, e->files[i].sha256,
		    xasprintf("%s/%s", EXEC_HELPERS_DIR, e->files[i].destination), 1, err) != 0)
			return -1;
	j->lifecycle = e->npre > 0 || e->npost > 0 || e->launcher == EXEC_TORCHRUN;
	return 0;
}

/* The NCCL probe's program, in the job's folder: its first step runs it. */
static int stage_probe(struct job *j, struct stage *sg, char **err)
{
	char *dir = j->o->template_dir ? xstrdup(j->o->template_dir) : submit_template_dir();
	char *src = xasprintf("%s/nccl_probe.py", dir), *dest, *text;
	size_t len = 0;

	text = file_read_all(src, &len, err);
	free(dir), free(src);
	if (text == NULL)
		return -1;
	dest = xasprintf("%s/nccl_probe.py", j->job_dir);
	stage_write(sg, dest, text, len, NULL);
	free(dest), free(text);
	return 0;
}

/* The supporting files as they were read, and the execution block's
 * manifest (source, destination, sha256, size) beside their folder. */
static void stage_uploads(struct job *j, struct stage *sg)
{
	cJSON *man = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(man, "files");
	size_t i, helpers = 0;
	char *text, *path;

	for (i = 0; i < j->nuploads; i++) {
		const struct upload *u = &j->uploads[i];
		char *dest = xasprintf("%s/%s", j->job_dir, u->dest), *slash = strrchr(dest, '/');
		*slash = '\0';
		stage_mkdirs(sg, (const char *const *)&dest, 1);
		*slash = '/';
		stage_write(sg, dest, u->data, u->len, NULL);
		free(dest);
		if (u->helper) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "source", u->source);
			cJSON_AddStringToObject(f, "destination", u->dest + strlen(EXEC_HELPERS_DIR) + 1);
			cJSON_AddStringToObject(f, "sha256", u->sum);
			cJSON_AddNumberToObject(f, "size", (double)u->len);
			cJSON_AddItemToArray(list, f);
			helpers++;
		}
	}
	if (helpers > 0) {
		text = cJSON_Print(man);
		path = xasprintf("%s/%s", j->job_dir, EXEC_HELPERS_MANIFEST);
		stage_write(sg, path, text, strlen(text), NULL);
		free(path);
		cJSON_free(text);
	}
	cJSON_Delete(man);
}

/* The runner of the execution block's lifecycle, in the job's folder: the
 * step runs it in the container around the command. */
static int stage_lifecycle(struct job *j, struct stage *sg, char **err)
{
	char *dir = j->o->template_dir ? xstrdup(j->o->template_dir) : submit_template_dir();
	char *src = xasprintf("%s/lifecycle.sh", dir), *dest, *text;
	size_t len = 0;

	text = file_read_all(src, &len, err);
	free(dir), free(src);
	if (text == NULL)
		return -1;
	dest = xasprintf("%s/lifecycle.sh", j->job_dir);
	stage_write(sg, dest, text, len, NULL);
	free(dest), free(text);
	return 0;
}

/* The folder a declared output needs: itself, or a file's parent. */
static char *output_dir(const struct spec_output *o)
{
	const char *slash = strrchr(o->path, '/');

	if (o->folder || slash == NULL)
		return xstrdup(o->path);
	return slash == o->path ? xstrdup("/") : xstrndup(o->path, (size_t)(slash - o->path));
}

/* Whether path is dir or inside it (at a '/': /x/job10 is not in /x/job1). */
static int path_within(const char *path, const char *dir)
{
	size_t l = strlen(dir);

	return strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

/* The job folder's files, into the batch the launch sends. */
static int stage(struct job *j, struct stage *sg, char **err)
{
	const char *parts[] = { "specs", "env", "meta", "sbatch" };
	char *yaml = NULL, *env_text, *meta_text, **dirs, *spec_name;
	size_t ndirs = 6 + j->spec.noutputs;
	cJSON *env, *meta, *list;
	size_t i;
	int rc = 0;

	step(j, STEP_SPEC, 0, NULL);
	/* TAO's spec in its config_format (the bank's; taotop's own: yaml). */
	if (bank_config_text(&j->spec, &yaml, err) != 0)
		return failed(j, STEP_SPEC, err);
	spec_name = xasprintf("specs/%s", bank_config_name(&j->spec));
	/* The job folder, new and the user's own; its parts, the log folder
	 * and the results folder. */
	stage_job_folder(sg, j->root, j->job_dir);
	dirs = xcalloc(ndirs, sizeof(*dirs));
	for (i = 0; i < 4; i++)
		dirs[i] = xasprintf("%s/%s", j->job_dir, parts[i]);
	dirs[4] = xstrdup(j->log_dir);
	dirs[5] = xstrdup(j->results_dir);
	/* The bank's declared outputs: a folder, or a file's folder. */
	ndirs = 6;
	for (i = 0; i < j->spec.noutputs; i++)
		if (j->spec.outputs[i].path != NULL)
			dirs[ndirs++] = output_dir(&j->spec.outputs[i]);
	stage_mkdirs(sg, (const char *const *)dirs, ndirs);
	for (i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	env = cJSON_CreateObject();
	for (i = 0; i < j->spec.nextra_env; i++)
		cJSON_AddStringToObject(env, j->spec.extra_env[i].key, j->spec.extra_env[i].value);
	meta = cJSON_CreateObject();
	cJSON_AddStringToObject(meta, "id", j->id);
	if (j->name != NULL)
		cJSON_AddStringToObject(meta, "name", j->name);
	cJSON_AddStringToObject(meta, "image", j->image.sqsh);
	cJSON_AddStringToObject(meta, "network_arch", j->spec.network_arch ? j->spec.network_arch : "");
	cJSON_AddStringToObject(meta, "action", j->spec.action ? j->spec.action : "");
	list = cJSON_AddArrayToObject(meta, "datasets");
	for (i = 0; i < j->ndatasets; i++)
		cJSON_AddItemToArray(list, cJSON_CreateString(j->datasets[i]));
	cJSON_AddStringToObject(meta, "results_dir", j->results_dir);
	cJSON_AddNumberToObject(meta, "gpus", j->res.gpus_total);
	cJSON_AddStringToObject(meta, "time", j->res.time);

	env_text = cJSON_PrintUnformatted(env);
	meta_text = cJSON_PrintUnformatted(meta);
	{
		const struct { const char *name, *text; } files[] = {
			{ spec_name, yaml }, { "env/env.json", env_text },
			{ "meta/meta.json", meta_text },
		};
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			char *path = xasprintf("%s/%s", j->job_dir, files[i].name);
			stage_write(sg, path, files[i].text, strlen(files[i].text), NULL);
			free(path);
		}
	}
	cJSON_free(env_text);
	cJSON_free(meta_text);
	stage_uploads(j, sg);
	if (j->lifecycle)
		rc = stage_lifecycle(j, sg, err);
	if (rc == 0 && j->probe)
		rc = stage_probe(j, sg, err);
	free(yaml);
	free(spec_name);
	cJSON_Delete(env);
	cJSON_Delete(meta);
	if (rc != 0)
		return failed(j, STEP_SPEC, err);
	return 0;	/* done once the launch has sent it */
}

/* Secrets named by the bundle: values typed, from the environment or a
 * .env file, into a file created 0600 from its first byte, written last
 * before sbatch (engine/submit/secrets.h), in the launch's batch. They appear
 * nowhere else. */
static int sidecar(struct job *j, struct stage *sg, char **err)
{
	struct buf text, names, from;
	char *about;
	size_t i;
	int rc;

	step(j, STEP_SIDECAR, 0, NULL);
	if (j->spec.nsecrets == 0)
		return 0;
	buf_init(&names);
	for (i = 0; i < j->spec.nsecrets; i++)
		buf_addf(&names, "%s%s", i ? "," : "", j->spec.secrets[i]);
	buf_init(&text);
	buf_init(&from);
	rc = secrets_sidecar_text_from(names.data, j->o->secrets, j->o->nsecrets, j->o->spec_path,
	    &text, &from, err);
	buf_free(&names);
	if (rc != 0) {
		buf_free(&from);
		return failed(j, STEP_SIDECAR, err);
	}
	/* Where each came from, as the plan says it: the environment, or the
	 * .env file that held it. */
	about = xasprintf("%zu secret%s: %s", j->spec.nsecrets, j->spec.nsecrets == 1 ? "" : "s",
	    from.data ? from.data : "");
	buf_free(&from);
	stage_write_secret(sg, j->sidecar, text.data, text.len, about);
	free(about);
	/* No copy of the values left in memory but the batch's (wiped). */
	secrets_wipe(&text);
	return 0;
}

/* ---- render, lint, bash -n ------------------------------------------------------------------------ */

char *submit_template_dir(void)
{
	return share_dir("templates");
}

/* The values the sbatch template's placeholders take, as they are built. */
struct script_parts {
	struct buf	mounts;		/* src:dst,... unquoted */
	struct buf	command;	/* the command's words, each quoted */
	struct buf	jobenv;		/* export lines for the command's own scripts */
	struct buf	extra;		/* #SBATCH lines */
	struct buf	env;		/* the spec's env and the NCCL knobs */
	struct buf	names;		/* what --container-env keeps: NAME,NAME,... */
	struct buf	segments;	/* the segments' settings (the template's TAOTOP_*) */
	struct buf	probe;		/* the NCCL probe's settings (its TAOTOP_PROBE*) */
	struct buf	exec;		/* the execution block's (TAOTOP_EXIT_FILE, ...) */
	struct buf	cosmos;		/* a Cosmos job's settings (its TAOTOP_COSMOS_*) */
};

/* Identity mounts: the datasets, the job folder, the results. */
static void make_mounts(const struct job *j, struct buf *mounts)
{
	size_t i, jl = strlen(j->job_dir);

	for (i = 0; i < j->ndatasets; i++)
		buf_addf(mounts, "%s:%s,", j->datasets[i], j->datasets[i]);
	/* The bank's inputs as the datasets, those left out not. */
	for (i = 0; i < j->nin; i++)
		if (!j->spec.inputs[j->in_index[i]].skipped)
			buf_addf(mounts, "%s:%s,", j->in_paths[i], j->in_paths[i]);
	buf_addf(mounts, "%s:%s", j->job_dir, j->job_dir);
	/* Its outputs' folders outside the job's and the results folder. */
	for (i = 0; i < j->spec.noutputs; i++) {
		if (j->spec.outputs[i].path == NULL)
			continue;
		char *d = output_dir(&j->spec.outputs[i]);
		if (!path_within(d, j->job_dir) && !path_within(d, j->results_dir))
			buf_addf(mounts, ",%s:%s", d, d);
		free(d);
	}
	/* Inside the job folder only at a '/': /x/job10 is not in /x/job1. */
	if (strncmp(j->results_dir, j->job_dir, jl) != 0 ||
	    (j->results_dir[jl] != '/' && j->results_dir[jl] != '\0'))
		buf_addf(mounts, ",%s:%s", j->results_dir, j->results_dir);
}

/* text with the command's placeholders filled ({spec}, {config_path},
 * {results_dir}, {job_dir}, {job_id}, ...: engine/submit/command.h), as
 * the record has them; a completion path (completion != 0) relative to
 * the results folder is put under it. Caller frees; NULL with *err. */
/* text with the job's placeholders filled: a completion path (how 1), a
 * word (0), or shell text, a pre- or post-command (2). */
static char *fill_vars(const struct job *j, const char *text, int how, char **err)
{
	/* {config_path}: the spec as staged, in its config_format's file. */
	char *spec_path = xasprintf("%s/specs/%s", j->job_dir, bank_config_name(&j->spec));
	char ngpus[16], nnodes[16], *w;
	const struct command_vars cv = { spec_path, j->results_dir, j->job_dir, j->id, ngpus,
		nnodes };

	snprintf(ngpus, sizeof(ngpus), "%d", j->res.gpus_per_node);
	snprintf(nnodes, sizeof(nnodes), "%d", j->res.nodes);
	w = how == 1 ? exec_completion_path(text, &cv, err) : how == 2
	    ? command_expand_shell(text, &cv, err) : command_expand_word(text, &cv, err);
	free(spec_path);
	return w;
}

/* The execution block's settings, as the template's shell variables
 * (templates/lifecycle.sh reads the exported ones in the container): the
 * bundle's commands each one quoted word, run there by a shell as the
 * bundle wrote them. */
static int make_exec(const struct job *j, struct buf *ex, struct buf *names, char **err)
{
	const struct spec_exec *e = &j->spec.exec;
	const char *const vars[] = { "TAOTOP_PRE_COUNT", "TAOTOP_POST_COUNT", "TAOTOP_POST_SCOPE",
	    "TAOTOP_LAUNCHER", "TAOTOP_NPROC" };
	char *exit_file = NULL, *lc = NULL;
	size_t i;

	if (e->exit_code_path != NULL &&
	    (exit_file = fill_vars(j, e->exit_code_path, 1, err)) == NULL)
		return -1;
	buf_adds(ex, "TAOTOP_EXIT_FILE=");
	sh_quote_buf(ex, exit_file ? exit_file : "", exit_file ? strlen(exit_file) : 0);
	free(exit_file);
	buf_adds(ex, "\nTAOTOP_LIFECYCLE=");
	if (j->lifecycle)
		lc = xasprintf("%s/lifecycle.sh", j->job_dir);
	sh_quote_buf(ex, lc ? lc : "", lc ? strlen(lc) : 0);
	free(lc);
	/* The environment's names, which a retry moves to its own folder. */
	buf_adds(ex, "\nTAOTOP_EXEC_ENV='");
	for (i = 0; i < e->nenv; i++)
		buf_addf(ex, "%s%s", i ? " " : "", e->env[i].key);
	buf_adds(ex, "'");
	if (!j->lifecycle)
		return 0;
	buf_addf(ex, "\nexport TAOTOP_PRE_COUNT=%zu TAOTOP_POST_COUNT=%zu TAOTOP_POST_SCOPE=%s",
	    e->npre, e->npost, e->post_all ? "all" : "leader");
	buf_addf(ex, "\nexport TAOTOP_LAUNCHER=%s TAOTOP_NPROC=%d",
	    e->launcher == EXEC_TORCHRUN ? "torchrun" : "direct",
	    e->procs_per_node > 0 ? e->procs_per_node : 1);
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		buf_addf(names, ",%s", vars[i]);
	for (i = 0; i < e->npre + e->npost; i++) {
		char *cmd = fill_vars(j, i < e->npre ? e->pre[i] : e->post[i - e->npre], 2, err);
		const char *kind = i < e->npre ? "PRE" : "POST";
		size_t n = i < e->npre ? i + 1 : i - e->npre + 1;
		if (cmd == NULL)
			return -1;
		buf_addf(ex, "\nexport TAOTOP_%s_%zu=", kind, n);
		sh_quote_buf(ex, cmd, strlen(cmd));
		buf_addf(names, ",TAOTOP_%s_%zu", kind, n);
		free(cmd);
	}
	return 0;
}

/* The command's words, placeholders filled, each word then quoted: a value
 * stays one word, and no shell reads it as code. The same values exported
 * for scripts the command runs. */
static int make_command(const struct job *j, struct script_parts *sp, char **err)
{
	char *spec_path = xasprintf("%s/specs/%s", j->job_dir, bank_config_name(&j->spec));
	char ngpus[16], nnodes[16];
	const struct command_vars cv = { spec_path, j->results_dir, j->job_dir, j->id, ngpus,
		nnodes };
	const char *const exports[][2] = { { "TAOTOP_JOB_ID", j->id },
	    { "TAOTOP_JOB_DIR", j->job_dir }, { "TAOTOP_SPEC", spec_path },
	    { "TAOTOP_RESULTS_DIR", j->results_dir } };
	size_t i;

	snprintf(ngpus, sizeof(ngpus), "%d", j->res.gpus_per_node);
	snprintf(nnodes, sizeof(nnodes), "%d", j->res.nodes);
	for (i = 0; i < j->argc; i++) {
		char *w = command_expand_word(j->argv[i], &cv, err);
		if (w == NULL) {
			free(spec_path);
			return -1;
		}
		if (i > 0)
			buf_addc(&sp->command, ' ');
		sh_quote_buf(&sp->command, w, strlen(w));
		free(w);
	}
	for (i = 0; i < sizeof(exports) / sizeof(exports[0]); i++) {
		buf_addf(&sp->jobenv, "%sexport %s=", i ? "\n" : "", exports[i][0]);
		sh_quote_buf(&sp->jobenv, exports[i][1], strlen(exports[i][1]));
		buf_addf(&sp->names, ",%s", exports[i][0]);
	}
	free(spec_path);
	return 0;
}

/* The #SBATCH lines the template leaves to the job. */
static void make_extra(const struct job *j, struct buf *extra)
{
	/* The multi-node and Cosmos templates have their own --nodes line. */
	if (j->res.nodes <= 1 && j->cosmos == NULL)
		buf_adds(extra, "#SBATCH --nodes=1\n");
	buf_addf(extra, "#SBATCH --partition=%s\n", j->rq.partition);
	if (j->rq.account != NULL)
		buf_addf(extra, "#SBATCH --account=%s\n", j->rq.account);
	/* The job's SLURM name stays taotop's id (its %x-%j log folder, and a
	 * lost answer found again by that name); the run's name is its
	 * comment (squeue -o %k, sacct -o Comment), kept by every retry,
	 * which runs this script again. spec_name_problem allowed no byte
	 * sbatch would read otherwise. */
	if (j->name != NULL)
		buf_addf(extra, "#SBATCH --comment=%s\n", j->name);
	buf_addf(extra, "#SBATCH %s", j->res.requeue ? "--requeue" : "--no-requeue");
	if (j->res.exclusive)
		buf_adds(extra, "\n#SBATCH --exclusive");
}

/* The spec's extra environment and the cluster's NCCL knobs, as exports;
 * their names (and the secrets', and the rendezvous') after the template's
 * own in names, for --container-env. */
static int make_env(const struct job *j, struct buf *env, struct buf *names, char **err)
{
	size_t i;

	for (i = 0; i < j->spec.nextra_env; i++) {
		buf_addf(env, "%sexport %s=", i ? "\n" : "", j->spec.extra_env[i].key);
		sh_quote_buf(env, j->spec.extra_env[i].value, strlen(j->spec.extra_env[i].value));
		buf_addf(names, ",%s", j->spec.extra_env[i].key);
	}
	for (i = 0; i < j->spec.nsecrets; i++)
		buf_addf(names, ",%s", j->spec.secrets[i]);
	if (j->res.nodes > 1)
		buf_adds(names, "," PROBE_RENDEZVOUS_NAMES);
	for (i = 0; i < j->spec.exec.nenv; i++) {
		/* Bound now, from the record's own folders. */
		char *v = fill_vars(j, j->spec.exec.env[i].value, 0, err);
		if (v == NULL)
			return -1;
		buf_addf(env, "%sexport %s=", env->len ? "\n" : "", j->spec.exec.env[i].key);
		sh_quote_buf(env, v, strlen(v));
		buf_addf(names, ",%s", j->spec.exec.env[i].key);
		free(v);
	}
	if (j->nccl_env != NULL && j->nccl_env[0] != '\0') {
		char *lines = NULL;
		if (probe_env_lines(j->nccl_env, &lines, err) != 0)
			return -1;
		probe_env_names(j->nccl_env, names);
		buf_addf(env, "%s# the cluster's NCCL knobs (its probe's answer)\n%s",
		    env->len ? "\n" : "", lines);
		free(lines);
	}
	if (env->len == 0)
		buf_adds(env, ": none");
	return 0;
}

/* The resume key a requeued segment passes the checkpoint as, or NULL:
 * none (auto_resume: false, resume_key: null, or an action with none). */
static const char *resume_key(const struct job *j)
{
	if (j->spec.auto_resume == 0 || j->spec.resume_key_none)
		return NULL;
	if (j->spec.resume_key != NULL)
		return j->spec.resume_key;
	if (j->spec.action != NULL && strcmp(j->spec.action, "train") == 0)
		return "train.resume_training_checkpoint_path";
	return NULL;
}

/* Where the segments look for checkpoints: resume: true's task folder,
 * else TAO's task folder when it is outside the results folder, else the
 * results folder (ptm/ and inputs/ below it are never looked in). */
static char *checkpoint_root(const struct job *j)
{
	char *task;
	size_t rl = strlen(j->results_dir);

	if (j->resume_dir != NULL)
		return xstrdup(j->resume_dir);
	task = task_dir(j);
	if (task != NULL && (strncmp(task, j->results_dir, rl) != 0 ||
	    (task[rl] != '/' && task[rl] != '\0')) && strpbrk(task, "\n\r") == NULL)
		return task;
	free(task);
	return xstrdup(j->results_dir);
}

/* The segments' settings, as the template's shell variables. */
static void make_segments(const struct job *j, struct buf *seg)
{
	const char *key = resume_key(j);
	char *root = checkpoint_root(j);

	buf_addf(seg, "TAOTOP_REQUEUE=%d\n", j->res.requeue ? 1 : 0);
	buf_addf(seg, "TAOTOP_CHILD_TIMEOUT_S=%ld\n", atol(j->res.child_timeout));
	buf_addf(seg, "TAOTOP_MAX_SEGMENTS=%d\n", j->spec.max_segments > 0 ? j->spec.max_segments
	    : j->cl->max_segments > 0 ? j->cl->max_segments : 20);
	buf_adds(seg, "TAOTOP_CKPT_ROOT=");
	sh_quote_buf(seg, root, strlen(root));
	buf_adds(seg, "\nTAOTOP_RESUME_KEY=");
	if (key != NULL)
		sh_quote_buf(seg, key, strlen(key));
	else
		buf_adds(seg, "''");
	buf_addf(seg, "\nTAOTOP_RESUME_FIRST=%d\n", j->resume_dir != NULL ? 1 : 0);
	buf_adds(seg, "TAOTOP_SEGMENTS_FILE=");
	sh_quote_buf(seg, j->log_dir, strlen(j->log_dir));
	buf_adds(seg, "/\"$SLURM_JOB_NAME-$SLURM_JOB_ID\"/segments.jsonl");
	free(root);
}

/* The plan of the run's segments, for --dry-run and the wizard: the wall,
 * the child timeout, the epochs TAO must run, and how the segments needed
 * are estimated (from TAO's time_per_epoch, once its first epoch is done). */
static char *submit_segments_plan(const char *wall, long child_s, int requeue, int max_segments,
    const char *epochs, const char *key)
{
	struct buf b;

	buf_init(&b);
	buf_addf(&b, "  wall %s; the training step runs under a child timeout of %lds (%.2f h)\n",
	    wall, child_s, child_s / 3600.0);
	if (!requeue)
		buf_adds(&b, "  --no-requeue: a run that reaches its child timeout ends in Error\n");
	else
		buf_addf(&b, "  at it, the job requeues itself and resumes from its newest checkpoint "
		    "(%s), up to %d segments\n", key ? key : "TAO's own *_latest.pth", max_segments);
	buf_addf(&b, "  epochs TAO must run: %s\n", epochs ? epochs : "? (train.num_epochs not set)");
	if (requeue && epochs != NULL)
		buf_addf(&b, "  segments needed: %s x TAO's time_per_epoch / %lds, estimated once its "
		    "first epoch is done (status, the monitor's detail)", epochs, child_s);
	return buf_detach(&b);
}

static char *segments_plan(const struct job *j)
{
	char *epochs = j->spec.action != NULL
	    ? spec_tao_value(&j->spec, "train.num_epochs", NULL) : NULL;
	char *s = submit_segments_plan(j->res.time, atol(j->res.child_timeout), j->res.requeue,
	    j->spec.max_segments > 0 ? j->spec.max_segments : j->cl->max_segments,
	    epochs, resume_key(j));

	free(epochs);
	return s;
}

/* A Cosmos job's settings, as its template's shell variables, and the
 * names its tasks keep (--container-env). */
static void make_cosmos(const struct job *j, struct buf *cv, struct buf *names)
{
	if (j->cosmos == NULL) {
		buf_adds(cv, ": none");
		return;
	}
	buf_addf(cv, "TAOTOP_COSMOS_BACKEND=%s\n", strcmp(j->cosmos, "rl") == 0 ? "rl" : "framework");
	buf_addf(cv, "TAOTOP_COSMOS_PORT=%d\n", COSMOS_CONTROLLER_PORT);
	buf_addf(cv, "TAOTOP_COSMOS_ROLLOUT_NODES=%d\n", j->spec.cosmos_rollout_nodes > 0
	    ? j->spec.cosmos_rollout_nodes : 0);
	buf_addf(cv, "TAOTOP_CHILD_TIMEOUT_S=%ld\n", atol(j->res.child_timeout));
	/* Each role's log and exit code go in the job's log folder. */
	buf_adds(cv, "TAOTOP_LOG_DIR=");
	sh_quote_buf(cv, j->log_dir, strlen(j->log_dir));
	buf_addc(cv, '\n');
	buf_adds(cv, "export TAOTOP_COSMOS_BACKEND TAOTOP_COSMOS_PORT TAOTOP_COSMOS_ROLLOUT_NODES");
	buf_adds(names, ",TAO_JOB_ID,TAO_STATUS_FILE,TAO_CHILD_EXIT_FILE,TAOTOP_COSMOS_BACKEND,TAOTOP_COSMOS_PORT,TAOTOP_COSMOS_ROLLOUT_NODES");
	/* The rendezvous: make_env named it already on several nodes. */
	if (j->res.nodes <= 1)
		buf_adds(names, ",MASTER_ADDR,MASTER_PORT");
	if (strcmp(j->cosmos, "rl") == 0)
		buf_adds(names, ",COSMOS_NODE_ROLE,COSMOS_CONTROLLER_HOST,TAOTOP_COSMOS_POLICY_NODES,"
		    "TAOTOP_ROLE_DIR");
	else
		buf_addf(names, ",NUM_NODES%s", j->res.nodes <= 1 ? ",NUM_GPU_PER_NODE" : "");
}

/* The probe block's variables: none unless the job probes. */
static int make_probe(const struct job *j, struct buf *probe, char **err)
{
	struct probe_plan p = {
		.dir = j->job_dir, .ladder = j->cl->nccl_ladder,
		.template_dir = j->o->template_dir, .nodes = j->res.nodes,
		.gpus_per_node = j->res.gpus_per_node, .timeout_s = probe_timeout(j),
	};

	return probe_script_vars(j->probe ? &p : NULL, probe, err);
}

/* The template tmpl (read from tpath) with every placeholder filled. */
static int fill_template(const struct job *j, const char *tpath, const char *tmpl,
    const struct script_parts *sp, char **text, char **err)
{
	char ngpus[16], ncpus[16], nnodes[16];
	char *qimage = sh_quote(j->image.sqsh), *qmounts = sh_quote(sp->mounts.data);
	char *qenv = j->sidecar ? sh_quote(j->sidecar) : xstrdup("''");
	char *qnames = sh_quote(sp->names.data);
	int rc;

	snprintf(ngpus, sizeof(ngpus), "%d", j->res.gpus_per_node);
	snprintf(nnodes, sizeof(nnodes), "%d", j->res.nodes);
	snprintf(ncpus, sizeof(ncpus), "%d", j->res.cpus_per_task);
	const struct tmpl_value v[] = {
		{ "JOB_NAME", j->id }, { "NUM_GPUS", ngpus }, { "CPUS_PER_TASK", ncpus },
		{ "TIME", j->res.time }, { "LOG_DIR", j->log_dir }, { "IMAGE", qimage },
		{ "CONTAINER_MOUNTS", qmounts }, { "COMMAND", sp->command.data },
		{ "SBATCH_EXTRA", sp->extra.data }, { "ENV_FILE", qenv }, { "EXTRA_ENV", sp->env.data },
		{ "NUM_NODES", nnodes },
		{ "JOB_ENV", sp->jobenv.data }, { "CONTAINER_ENV", qnames },
		{ "SEGMENTS", sp->segments.data }, { "NCCL_PROBE", sp->probe.data },
		{ "EXECUTION", sp->exec.data },
		{ "COSMOS", sp->cosmos.data },
	};
	rc = template_render(tpath, tmpl, v, sizeof(v) / sizeof(v[0]), text, err);
	free(qimage), free(qmounts), free(qenv), free(qnames);
	return rc;
}

static int render_and_lint(struct job *j, struct linted_script *out, char **err)
{
	struct script_parts sp;
	char *dir = j->o->template_dir ? xstrdup(j->o->template_dir) : submit_template_dir();
	char *tpath = xasprintf("%s/%s.sbatch.tmpl", dir, j->cosmos != NULL
	    ? (strcmp(j->cosmos, "rl") == 0 ? "cosmos-rl" : "cosmos-framework")
	    : j->res.nodes > 1 ? "multinode" : "singlenode");
	char *tmpl, *text = NULL;
	int rc = -1;

	step(j, STEP_LINT, 0, NULL);
	free(dir);
	tmpl = file_read_all(tpath, NULL, err);
	if (tmpl == NULL) {
		free(tpath);
		return failed(j, STEP_LINT, err);
	}
	buf_init(&sp.mounts), buf_init(&sp.command), buf_init(&sp.jobenv);
	buf_init(&sp.extra), buf_init(&sp.env), buf_init(&sp.names), buf_init(&sp.segments);
	buf_init(&sp.probe), buf_init(&sp.exec), buf_init(&sp.cosmos);
	/* The variables the template itself exports. */
	buf_adds(&sp.names, "PYTHONNOUSERSITE,PYTHONDONTWRITEBYTECODE,HF_HOME");
	make_mounts(j, &sp.mounts);
	make_extra(j, &sp.extra);
	make_segments(j, &sp.segments);
	if (make_command(j, &sp, err) == 0 && make_env(j, &sp.env, &sp.names, err) == 0 &&
	    make_probe(j, &sp.probe, err) == 0 && make_exec(j, &sp.exec, &sp.names, err) == 0 &&
	    (make_cosmos(j, &sp.cosmos, &sp.names), 1) &&
	    fill_template(j, tpath, tmpl, &sp, &text, err) == 0 &&
	    lint_gate(j->sbatch_path, text, err) == 0) {
		out->text = text;
		text = NULL;
		rc = 0;
	}
	free(text), free(tmpl), free(tpath);
	buf_free(&sp.mounts), buf_free(&sp.command), buf_free(&sp.jobenv);
	buf_free(&sp.extra), buf_free(&sp.env), buf_free(&sp.names), buf_free(&sp.segments);
	buf_free(&sp.probe), buf_free(&sp.exec), buf_free(&sp.cosmos);
	if (rc != 0)
		return failed(j, STEP_LINT, err);
	step(j, STEP_LINT, 1, NULL);
	return 0;
}

/* ---- launch --------------------------------------------------------------------------------------- */

static int mark_launched(struct job_record *r, void *arg, char **err)
{
	const char *const *v = arg;	/* slurm id, message */
	(void)err;
	char *msg = xasprintf("%s as SLURM job %s", v[1], v[0]);

	record_set(&r->backend_ref, v[0]);
	record_event(r, msg, "taotop", time(NULL));
	free(msg);
	return 1;
}

static int mark_not_launched(struct job_record *r, void *arg, char **err)
{
	(void)err;
	if (r->backend_ref != NULL)
		return 0;
	return record_transition(r, TAO_ERROR, NULL, arg, "taotop", time(NULL));
}

static int note_event(struct job_record *r, void *arg, char **err)
{
	(void)err;
	record_event(r, arg, "taotop", time(NULL));
	return 1;
}

/* The job found after an unclear submit: a held one gets its log folder
 * and is released, the duplicates are cancelled. What was done is added
 * to *what. */
static int finish_found(struct conn *c, const char *name, const char *log_dir,
    const struct settle_result *sr, struct buf *what, char **err)
{
	const struct settle_found *keep = &sr->st.found[0];
	struct conn_exec x;
	char *cmd, *qlog;
	size_t i;

	if (sr->st.nfound > 1) {
		/* Several: the lowest id (the first submitted) is kept. */
		struct buf ids;
		buf_init(&ids);
		for (i = 1; i < sr->st.nfound; i++)
			buf_addf(&ids, " %s", sr->st.found[i].id);
		cmd = xasprintf("scancel%s", ids.data);
		if (run_on(c, &x, cmd, SUBMIT_TIMEOUT_MS, NULL, err) != 0 || x.exit_status != 0) {
			buf_addf(what, "; several jobs carry the name: kept SLURM job %s; cancelling the "
			    "duplicate%s%s FAILED (%s): cancel them by hand", keep->id,
			    sr->st.nfound > 2 ? "s" : "", ids.data, *err ? *err : (x.err.data ?
			    x.err.data : "scancel failed"));
			free(*err);
			*err = NULL;
		} else {
			buf_addf(what, "; several jobs carry the name: kept SLURM job %s, cancelled the "
			    "duplicate%s%s", keep->id, sr->st.nfound > 2 ? "s" : "", ids.data);
		}
		conn_exec_free(&x);
		free(cmd);
		buf_free(&ids);
	}
	if (!keep->held)
		return 0;
	qlog = sh_quote(log_dir);
	cmd = xasprintf("mkdir -p %s/%s-%s && scontrol release %s", qlog, name, keep->id, keep->id);
	free(qlog);
	if (run_on(c, &x, cmd, SUBMIT_TIMEOUT_MS, NULL, err) != 0 || x.exit_status != 0) {
		if (*err == NULL)
			*err = xasprintf("job %s was found held, but releasing it failed: %s", keep->id,
			    x.err.data ? x.err.data : "");
		conn_exec_free(&x);
		free(cmd);
		return -1;
	}
	buf_adds(what, "; it was held: released");
	conn_exec_free(&x);
	free(cmd);
	return 0;
}

char *submit_job_dir(const struct job_record *r)
{
	static const char logs[] = "/slurm-logs";
	size_t len = r->log_dir != NULL ? strlen(r->log_dir) : 0;

	if (len <= sizeof(logs) - 1 || strcmp(r->log_dir + len - (sizeof(logs) - 1), logs) != 0)
		return NULL;
	return xstrndup(r->log_dir, len - (sizeof(logs) - 1));
}

char *submit_staged_sbatch(const struct job_record *r)
{
	char *dir = submit_job_dir(r), *path;

	if (dir == NULL)
		return NULL;
	path = xasprintf("%s/sbatch/job_%s.sbatch", dir, strrchr(dir, '/') + 1);
	free(dir);
	return path;
}

/* The launch's commands: SLURM does not create %x-%j/, so the job is
 * submitted held, its log folder made, then released. The name is given on
 * the command line too: a retry runs the sbatch staged for the job it
 * retries, under its own name. First, in the same command (no round trip
 * more): a job of that exact name already there refuses the submit, and
 * `sbatch --test-only` asks the controller whether it would take the job:
 * a held job is accepted even when no node could ever run it (22.05 keeps
 * it pending, BadConstraints), which --test-only refuses ("allocation
 * failure: Requested node configuration is not available"; newer SLURM
 * says "Batch job submission failed"). Any other failure of it (a site
 * that does not allow the option) lets the submit go on. */
static char *launch_cmds(const char *id, const char *job_dir, const char *sbatch_path,
    const char *log_dir, const char *exclude)
{
	char *qdir = sh_quote(job_dir), *qsb = sh_quote(sbatch_path), *qlog = sh_quote(log_dir);
	char *qname = sh_quote(id), *qex = exclude != NULL ? sh_quote(exclude) : NULL, *cmd;

	/* A retry keeps away from the nodes its chain failed on: --exclude
	 * on the command line wins over the staged script's directives. */
	cmd = xasprintf("cd %s && { there=$(squeue --me -h -t all --name=%s -o %%A 2>/dev/null | "
	    "tr '\\n' ' '); if [ -n \"$there\" ]; then echo \"" REFUSED_MARK "a job named %s exists "
	    "already (SLURM job $there)\"; exit 3; fi; "
	    "t=$(sbatch --test-only --job-name=%s%s%s %s 2>&1) || case $t in *'Batch job submission "
	    "failed'*|*'allocation failure'*) printf '" REFUSED_MARK "sbatch --test-only: %%s\\n' "
	    "\"$(printf '%%s\\n' \"$t\" | grep -E 'Batch job submission failed|allocation failure' "
	    "| head -n 1)\"; exit 4;; esac; } && "
	    "out=$(sbatch --hold --parsable --job-name=%s%s%s %s) && "
	    "id=${out%%%%;*} && mkdir -p %s/%s-\"$id\" && scontrol release \"$id\" && "
	    "echo \"@@taotop-id $id\"", qdir, qname, id, qname, qex ? " --exclude=" : "",
	    qex ? qex : "", qsb, qname, qex ? " --exclude=" : "", qex ? qex : "", qsb, qlog, id);
	free(qdir), free(qsb), free(qlog), free(qname), free(qex);
	return cmd;
}

/* What the settling decided, in the words of the record and the user. */
static const char *settle_words(enum settle_verdict v)
{
	switch (v) {
	case SETTLE_ADOPT:
		return "submitted; the answer was lost and the job adopted by its name";
	case SETTLE_DUPLICATES:
		return "submitted; the answer was lost and several jobs carry its name";
	default:
		return "submitted";
	}
}

/* What the launch's exec said: the SLURM id, a write or sbatch that
 * failed (nothing submitted), or (an answer lost with the connection, or
 * none) settled by the decision table (engine/submit/settle.h): the job
 * found adopted, duplicates cancelled; the record says which and why.
 * Returns 0 launched, -1 failed, LAUNCH_NONE: the lookups that worked
 * found no job for the whole window (*evidence says so): the caller may
 * submit once more under a new linked record. */
#define LAUNCH_NONE 2
/* No lookup worked: failed, but the job may exist (its sidecar stays). */
#define LAUNCH_UNKNOWN 3
static int launch_answer(struct conn *c, struct record_store *st, const char *id,
    const char *log_dir, struct conn_exec *x, enum conn_status cst, char **slurm_id_out,
    int *adopted, char **evidence, char **err)
{
	char *mark = cst == CONN_OK && x->out.data ? strstr(x->out.data, "@@taotop-id ") : NULL;
	char *refused = cst == CONN_OK && x->out.data ? strstr(x->out.data, REFUSED_MARK) : NULL;
	char *slurm_id = NULL, *staged = cst == CONN_OK ? stage_failure(x->out.data) : NULL;
	const char *e = x->err.data ? x->err.data : "";
	struct settle_result sr;
	struct buf what;
	const char *v[2];
	int rc = -1;

	*adopted = 0;
	buf_init(&what);
	memset(&sr, 0, sizeof(sr));
	if (mark != NULL) {
		slurm_id = xstrndup(mark + 12, strcspn(mark + 12, "\n"));
		if (!slurm_id_ok(slurm_id)) {
			*err = xasprintf("sbatch answered '%s', not a SLURM job id", slurm_id);
			goto out;
		}
	} else if (refused != NULL) {
		refused += sizeof(REFUSED_MARK) - 1;
		*err = xasprintf("the submit's gate refused it before sbatch: %.*s",
		    (int)strcspn(refused, "\n"), refused);
		goto out;
	} else if (staged != NULL) {
		*err = xasprintf("%s on %s: %.*s", staged, conn_host(c), (int)strcspn(e, "\n"), e);
		goto out;
	} else if (cst == CONN_OK && x->exit_status != 0 && strstr(e, "Batch job submission failed")
	    != NULL) {
		*err = xasprintf("sbatch refused the job: %.*s", (int)strcspn(e, "\n"), e);
		goto out;
	} else {
		/* Unclear: the job may exist. Look for it, never resubmit blindly. */
		char *why = cst != CONN_OK ? xstrdup(*err ? *err : conn_status_name(cst))
		    : xasprintf("sbatch printed no job id (exit %d%s%.*s)", x->exit_status,
		    e[0] ? ": " : "", (int)strcspn(e, "\n"), e);
		log_msg(LOG_WARN, "submit: %s: unclear answer (%s); looking for it by name", id, why);
		free(*err);
		*err = NULL;
		settle_run(c, id, 0, &sr);
		char *ev = settle_evidence(&sr, id);
		buf_addf(&what, "the submit's answer was unclear (%s); %s", why, ev);
		free(why), free(ev);
		log_msg(LOG_INFO, "submit: %s: %s: %s", id, settle_verdict_name(sr.verdict), what.data);
		switch (sr.verdict) {
		case SETTLE_ADOPT:
		case SETTLE_DUPLICATES:
			if (finish_found(c, id, log_dir, &sr, &what, err) != 0)
				goto out;
			slurm_id = xstrdup(sr.st.found[0].id);
			*adopted = 1;
			break;
		case SETTLE_NONE:
			free(*evidence);
			*evidence = buf_detach(&what);
			rc = LAUNCH_NONE;
			goto out;
		default:
			*err = xasprintf("%s. The job may exist: taotop did not submit it again. Look with "
			    "`squeue --me --name=%s` once the cluster answers; `taotop jobs` shows it "
			    "when it does", what.data, id);
			rc = LAUNCH_UNKNOWN;
			goto out;
		}
	}
	v[0] = slurm_id;
	v[1] = settle_words(sr.verdict);
	if (store_update(st, id, mark_launched, (void *)v, err) != 0)
		goto out;
	if (what.len > 0) {
		if (store_update(st, id, note_event, what.data, err) != 0)
			goto out;
		free(*evidence);
		*evidence = buf_detach(&what);
	}
	*slurm_id_out = slurm_id;
	slurm_id = NULL;
	rc = 0;
out:
	settle_result_free(&sr);
	buf_free(&what);
	free(slurm_id);
	free(staged);
	return rc;
}

/* The record of a submit whose answer was lost and whose job no working
 * lookup found: an infrastructure failure, linked to the new record nid
 * that submits it once more. */
static int mark_lost(struct job_record *r, void *arg, char **err)
{
	const char *const *v = arg;	/* nid, evidence */
	(void)err;
	char *msg = xasprintf("infrastructure failure: %s; submitted once more as %s", v[1], v[0]);
	int rc;

	record_set(&r->retried_as, v[0]);
	rc = record_transition(r, TAO_ERROR, NULL, msg, "taotop", time(NULL));
	free(msg);
	return rc < 0 ? rc : 1;
}

/* The new record for the one resubmit of id: the same workload and staged
 * folders, retry_of id; id's record closed as an infrastructure failure.
 * The new id (caller frees), or NULL with *err. */
static char *open_resubmit(struct record_store *st, const char *id, const char *evidence,
    char **err)
{
	struct job_record *old = NULL, *r;
	char *nid, *msg;
	const char *v[2];

	if (store_load(st, id, &old, err) != 0)
		return NULL;
	nid = store_mint_id(st);
	r = record_new(nid);
	record_set(&r->platform, old->platform);
	record_set(&r->cluster, old->cluster);
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
	record_set(&r->spec, old->spec);
	record_set(&r->retry_of, id);
	record_set(&r->cosmos, old->cosmos);
	record_set(&r->roles, old->roles);
	msg = xasprintf("opened: %s's submit was lost (no job found by its name): submitted once "
	    "more, its staged files as they are", id);
	record_event(r, msg, "taotop", time(NULL));
	free(msg);
	record_free(old);
	if (store_create(st, r, err) != 0) {
		record_free(r);
		free(nid);
		return NULL;
	}
	record_free(r);
	v[0] = nid, v[1] = evidence;
	if (store_update(st, id, mark_lost, (void *)v, err) != 0) {
		free(nid);
		return NULL;
	}
	log_msg(LOG_WARN, "submit: %s: lost (%s); submitted once more as %s", id, evidence, nid);
	return nid;
}

/* The one resubmit's own answer: settled as any, but never a third
 * submit. */
static int resubmit_answer(struct conn *c, struct record_store *st, const char *nid,
    const char *log_dir, struct conn_exec *x, enum conn_status cst, char **slurm_id,
    int *adopted, char **evidence, char **err)
{
	char *ev2 = NULL;
	int rc = launch_answer(c, st, nid, log_dir, x, cst, slurm_id, adopted, &ev2, err);

	if (rc == LAUNCH_NONE) {
		*err = xasprintf("%s; taotop submits no more: check `squeue --me` and submit again",
		    ev2);
		rc = -1;
	}
	if (ev2 != NULL) {
		free(*evidence);
		*evidence = ev2;
	}
	return rc;
}

int submit_launch_staged(struct conn *c, struct record_store *st, const char *id,
    const char *job_dir, const char *sbatch_path, const char *log_dir, const char *exclude,
    char **slurm_id_out, int *adopted, char **err)
{
	struct conn_exec x;
	char *cmd = launch_cmds(id, job_dir, sbatch_path, log_dir, exclude), *evidence = NULL;
	enum conn_status cst;
	int rc;

	conn_exec_init(&x, cmd);
	x.timeout_ms = SUBMIT_TIMEOUT_MS;
	cst = conn_exec(c, &x, err);
	free(cmd);
	rc = launch_answer(c, st, id, log_dir, &x, cst, slurm_id_out, adopted, &evidence, err);
	conn_exec_free(&x);
	if (rc == LAUNCH_UNKNOWN)
		rc = -1;
	if (rc == LAUNCH_NONE) {
		/* A retry's own submit: its caller owns the chain of records,
		 * so it is told, not submitted a third time here. */
		*err = xasprintf("%s: the job did not reach SLURM; run it again", evidence);
		rc = -1;
	}
	free(evidence);
	return rc;
}

/* No working lookup found the job whose answer was lost: an
 * infrastructure failure, submitted once more under a new record linked to
 * it (the same script, its last line naming the new record), then the
 * result and j name the new record. */
static int resubmit(struct job *j, struct stage *sg, size_t before_launch,
    struct submit_result *res, char **err)
{
	struct conn_exec x;
	enum conn_status cst;
	char *nid = open_resubmit(j->st, j->id, res->settled, err), *cmd;
	int rc;

	if (nid == NULL)
		return -1;
	res->resubmit_of = j->id;
	j->id = nid;
	free(res->record_id);
	res->record_id = xstrdup(nid);
	sg->script.len = before_launch;
	sg->script.data[before_launch] = '\0';
	{
		/* The lost script may have made the job folder (again=1: the
		 * user's own one is taken) and run to its sbatch: its sidecar
		 * is there, and the write of it refuses an existing file. No
		 * job reads it: a lookup that worked found none. */
		struct buf again;
		buf_init_secret(&again);
		buf_adds(&again, "again=1\n");
		if (j->sidecar != NULL) {
			buf_adds(&again, "rm -f -- ");
			sh_quote_buf(&again, j->sidecar, strlen(j->sidecar));
			buf_addc(&again, '\n');
		}
		buf_add(&again, sg->script.data, sg->script.len);
		buf_free(&sg->script);
		sg->script = again;
	}
	cmd = launch_cmds(j->id, j->job_dir, j->sbatch_path, j->log_dir, NULL);
	stage_run(sg, cmd, "submit once more");
	free(cmd);
	cst = stage_send(j->c, sg, &x, SUBMIT_TIMEOUT_MS, err) == 0 ? CONN_OK : CONN_DISCONNECTED;
	if (cst == CONN_OK && stage_gate_closed(x.out.data)) {
		/* The checks folded into it stopped it before its first write
		 * (a registry image not cached yet): the long way follows, and
		 * its record is the one linked to the lost one. */
		char *e2 = NULL;
		checks_read(x.out.data, j->ndatasets, &j->facts);
		j->have_facts = 1;
		conn_exec_free(&x);
		if (store_update(j->st, res->resubmit_of, link_retry, NULL, &e2) != 0) {
			log_msg(LOG_WARN, "submit: %s: %s", res->resubmit_of, e2);
			free(e2);
		}
		j->lost_id = xstrdup(res->resubmit_of);
		return 1;
	}
	rc = resubmit_answer(j->c, j->st, j->id, j->log_dir, &x, cst, &res->slurm_id, &res->adopted,
	    &res->settled, err);
	conn_exec_free(&x);
	return rc;
}

/* The staged files, the sidecar, the sbatch last, and the launch: one
 * exec, whatever the bundle holds. */
static int launch(struct job *j, struct stage *sg, const struct linted_script *script,
    struct submit_result *res, char **err)
{
	struct conn_exec x;
	char *cmd = launch_cmds(j->id, j->job_dir, j->sbatch_path, j->log_dir, NULL), *stopped, *line;
	enum conn_status cst;
	size_t before_launch;
	int rc;

	step(j, STEP_SUBMIT, 0, NULL);
	stage_write(sg, j->sbatch_path, script->text, strlen(script->text), "the sbatch below");
	before_launch = sg->script.len;
	line = xasprintf("submit: %s", cmd);
	stage_run(sg, cmd, line);
	free(line);
	free(cmd);
	if (j->o->dry_run) {
		plan(j, "one command (sh -s), this script on its standard input:");
		buf_adds(&j->plan, sg->plan.data);
		step(j, STEP_SPEC, 1, NULL);
		step(j, STEP_SIDECAR, 1, j->sidecar ? NULL : "no secrets");
		step(j, STEP_SUBMIT, 1, "dry run: nothing submitted");
		return 0;
	}
	cst = stage_send(j->c, sg, &x, SUBMIT_TIMEOUT_MS, err) == 0 ? CONN_OK : CONN_DISCONNECTED;
	if (j->folding && cst == CONN_OK && stage_gate_closed(x.out.data)) {
		/* Stopped before its first write: the answers say why. */
		checks_read(x.out.data, j->ndatasets, &j->facts);
		j->have_facts = 1;
		conn_exec_free(&x);
		return 1;
	}
	if (j->holding && cst == CONN_OK)
		checks_passed(j);
	/* Whether the sidecar may be left: a script that stopped removed the
	 * one it wrote; a lost answer leaves it to submit_run. */
	stopped = cst == CONN_OK ? stage_failure(x.out.data) : NULL;
	j->sidecar_written = j->sidecar != NULL && stopped == NULL;
	free(stopped);
	rc = launch_answer(j->c, j->st, j->id, j->log_dir, &x, cst, &res->slurm_id, &res->adopted,
	    &res->settled, err);
	conn_exec_free(&x);
	if (rc == LAUNCH_NONE && j->lost_id == NULL) {
		rc = resubmit(j, sg, before_launch, res, err);
		if (rc == 1)
			return 1;
	} else if (rc == LAUNCH_NONE) {
		/* This is the one resubmit already (the long way's). */
		*err = xasprintf("%s; taotop submits no more: check `squeue --me` and submit again",
		    res->settled);
		rc = -1;
	}
	if (rc == LAUNCH_UNKNOWN) {
		/* The job may exist and read its sidecar: it stays. */
		j->sidecar_written = 0;
		rc = -1;
	}
	if (j->holding) {
		/* The answer was lost: a job adopted by its name passed them. */
		if (rc == 0)
			checks_passed(j);
		release_held(j, 1);
	}
	if (rc != 0)
		return failed(j, STEP_SUBMIT, err);
	step(j, STEP_SPEC, 1, NULL);
	step(j, STEP_SIDECAR, 1, j->sidecar ? NULL : "no secrets");
	step(j, STEP_SUBMIT, 1, res->slurm_id);
	return 0;
}

/* ---- the pipeline ------------------------------------------------------------------------------------ */

/* Where the shape came from, in words: the GPUs' origin and the nodes',
 * and when a total above a node's worth changed the nodes asked for, that
 * it did and why. */
static char *shape_origin(const struct job *j)
{
	int asked = j->spec.nodes > 0 ? j->spec.nodes : seed_defaults.num_nodes;
	char *nodes;

	if (j->spec.gpus_per_node > 0)
		return xasprintf("gpus_per_node: %d in the bundle, nodes from %s", j->spec.gpus_per_node,
		    j->rq.nodes_from);
	nodes = strcmp(j->rq.nodes_from, "--nodes") == 0 ? xasprintf("--nodes %d", asked)
	    : strcmp(j->rq.nodes_from, "the bundle") == 0 ? xasprintf("the bundle's nodes: %d", asked)
	    : xasprintf("the default of %d node%s", asked, asked == 1 ? "" : "s");
	if (j->res.nodes != asked) {
		char *t = xasprintf("%d GPUs from %s are more than a node's %d, so %s became %d "
		    "whole nodes of %d", j->res.gpus_total, j->rq.gpus_from,
		    seed_defaults.max_num_gpus_per_node, nodes, j->res.nodes, j->res.gpus_per_node);
		free(nodes);
		return t;
	}
	{
		char *t = xasprintf("%d GPU%s from %s, on %s", j->res.gpus_total,
		    j->res.gpus_total == 1 ? "" : "s", j->rq.gpus_from, nodes);
		free(nodes);
		return t;
	}
}

/* The resolved request, one value a line with its origin (--dry-run and
 * the wizard's preview). */
static char *resolved_text(const struct job *j)
{
	struct buf b;
	char *shape = shape_origin(j);

	buf_init(&b);
	if (j->spec.format == SPEC_FORMAT_BANK)
		buf_addf(&b, "  bundle      the skill bank's spec bundle (spec_bundle.schema.json), mode "
		    "%s%s%s\n", j->spec.mode, j->spec.config_format ? ", spec staged as " : "",
		    j->spec.config_format ? j->spec.config_format : "");
	else
		buf_addf(&b, "  bundle      taotop's own format\n");
	if (j->name != NULL)
		buf_addf(&b, "  name        %-24s (%s)\n", j->name, j->o->name != NULL ? "--name"
		    : "the bundle");
	buf_addf(&b, "  partition   %-24s (%s)\n", j->rq.partition, j->rq.partition_from);
	buf_addf(&b, "  account     %-24s (%s)\n", j->rq.account ? j->rq.account : "-", j->rq.account_from);
	buf_addf(&b, "  gpus        %-24d (%s)\n", j->res.gpus_total, j->rq.gpus_from);
	buf_addf(&b, "  shape       %d node%s x %d GPUs%s (%s)\n", j->res.nodes,
	    j->res.nodes == 1 ? "" : "s", j->res.gpus_per_node, j->res.exclusive ? ", exclusive" : "",
	    shape);
	free(shape);
	buf_addf(&b, "  time        %-24s (%s)\n", j->res.time, j->rq.time_from);
	buf_addf(&b, "  requeue     %-24s (%s)\n", j->res.requeue ? "yes" : "no", j->rq.requeue_from);
	buf_addf(&b, "  image       %s (%s)\n", j->image.sqsh, j->image_how ? j->image_how : "-");
	buf_addf(&b, "  command     ");
	for (size_t i = 0; i < j->argc; i++)
		buf_addf(&b, "%s%s", i ? " " : "", j->argv[i]);
	buf_addf(&b, " (%s)\n", j->spec.argc > 0 && !j->spec.command_is_taos ? "the bundle"
	    : "TAO's own: the bundle gives none");
	if (j->spec.exec.given) {
		const struct spec_exec *e = &j->spec.exec;
		buf_addf(&b, "  execution   %zu pre-command%s, %zu post-command%s (%s), %s",
		    e->npre, e->npre == 1 ? "" : "s", e->npost, e->npost == 1 ? "" : "s",
		    e->post_all ? "every task" : "task 0", e->launcher == EXEC_TORCHRUN
		    ? "torchrun" : "direct");
		if (e->launcher == EXEC_TORCHRUN)
			buf_addf(&b, " x %d a node", e->procs_per_node);
		buf_addf(&b, ", %zu variable%s, %zu helper file%s; exit code to %s; the end "
		    "judged by %s (the bundle)\n", e->nenv, e->nenv == 1 ? "" : "s", e->nfiles,
		    e->nfiles == 1 ? "" : "s", e->exit_code_path ? e->exit_code_path : "nowhere",
		    e->status_path ? e->status_path : "TAO's status file");
	}
	return buf_detach(&b);
}

static void job_free(struct job *j)
{
	size_t i;

	release_held(j, 0);
	free(j->held);
	if (!j->spec_borrowed)
		spec_free(&j->spec);
	else if (j->bank_owned)
		bank_own_free(&j->spec);
	free(j->in_paths), free(j->in_folder), free(j->in_index), free(j->inputs_note);
	image_ref_free(&j->image);
	for (i = 0; i < j->ndatasets; i++)
		free(j->datasets[i]);
	free(j->datasets);
	free(j->root), free(j->cache), free(j->id), free(j->job_dir), free(j->results_dir);
	free(j->log_dir), free(j->sidecar), free(j->sbatch_path), free(j->nccl_env);
	free(j->resume_dir), free(j->partition_note);
	free(j->lost_id);
	for (i = 0; i < j->nuploads; i++) {
		free(j->uploads[i].local), free(j->uploads[i].source), free(j->uploads[i].dest);
		free(j->uploads[i].data);
	}
	free(j->uploads);
	for (i = 0; i < j->default_argc; i++)
		free(j->default_argv[i]);
	free(j->default_argv);
	buf_free(&j->plan);
}

/* ---- the checks folded into the launch ------------------------------------------------------ */

/* Whether the checks can ride in the launch's script: when what they find
 * can only stop the job, never change what is staged. Not when the image
 * is converted anyway (--force-reconvert of a :latest), or when the time needs the
 * partition's MaxTime (above the packaged 4 hours: any partition that
 * exists allows the rest). A registry image is taken to be cached: if it
 * is not, the gate stops the script and the submit goes the long way. */
static int can_fold(const struct job *j)
{
	struct resources r;
	struct defaults d;
	char *e = NULL;
	int ok;

	if (!j->image.is_sqsh && j->image.latest && j->o->force_reconvert)
		return 0;
	d = defaults_of(j->cl);
	ok = policy_resources(&j->spec, &d, j->rq.partition, 1e-9, &r, NULL, &e) == 0;
	free(e);
	return ok;
}

/* The checks as the script's gate: first, before any write. */
static void add_gate(const struct job *j, struct stage *sg)
{
	struct check_ask a;
	struct buf gate;

	ask_of(j, &a);
	buf_init(&gate);
	checks_gate(&a, &gate);
	stage_gate(sg, gate.data, "the checks again, first: nothing is written or submitted "
	    "unless they all pass");
	buf_free(&gate);
}

/* Back to before open_record, the record withdrawn: the folded checks
 * stopped the launch's script before its first write. */
static void withdraw(struct job *j, struct stage *sg, struct linted_script *script,
    struct submit_result *res)
{
	char *e2 = NULL;

	release_held(j, 0);
	j->folding = 0;
	if (store_remove(j->st, j->id, &e2) != 0) {
		log_msg(LOG_WARN, "submit: %s: the record of a submit its checks stopped stays: %s",
		    j->id, e2);
		free(e2);
	}
	free(res->record_id), res->record_id = NULL;
	free(j->id), free(j->job_dir), free(j->log_dir), free(j->sidecar), free(j->sbatch_path);
	j->id = j->job_dir = j->log_dir = j->sidecar = j->sbatch_path = NULL;
	if (j->results_derived) {
		free(j->results_dir), j->results_dir = NULL;
		j->results_derived = 0;
	}
	free(j->nccl_env), j->nccl_env = NULL;
	j->probe = 0;
	free(script->text), script->text = NULL;
	stage_free(sg);
	stage_init(sg);
	j->image_how = NULL;
}

/* The submit whose checks go first in the launch's script (one command
 * for all of it): 0 submitted, -1 failed (the record, once opened, says
 * why), 1 the checks stopped it: nothing written, the record withdrawn,
 * their answers in j->facts for the long way. */
static int folded(struct job *j, struct stage *sg, struct linted_script *script,
    struct submit_result *res, char **err)
{
	int rc;

	step(j, STEP_DATASET, 0, NULL);
	j->folding = j->holding = 1;
	j->image_how = j->image.docker_uri ? "cached" : "reused";
	step(j, STEP_IMAGE, 1, j->image_how);
	add_gate(j, sg);
	rc = nccl_knobs(j, err) == 0 && open_record(j, err) == 0 ? 0 : -1;
	if (rc == 0) {
		res->record_id = xstrdup(j->id);
		rc = render_and_lint(j, script, err) == 0 && stage(j, sg, err) == 0 &&
		    sidecar(j, sg, err) == 0 ? launch(j, sg, script, res, err) : -1;
	}
	if (rc == 1) {
		withdraw(j, sg, script, res);
		return 1;
	}
	release_held(j, 1);
	j->folding = 0;
	return rc;
}

/* ---- the pipeline, the long way --------------------------------------------------------------- */

/* A launch that failed after the record was opened: the sidecar it may
 * have left removed, the record saying why. */
static void not_launched(struct job *j, struct submit_result *res, const char *why)
{
	char *e2 = NULL;

	if (j->o->dry_run || res->record_id == NULL || res->adopted || res->slurm_id != NULL)
		return;
	log_msg(LOG_WARN, "submit: %s: not launched: %s", j->id, why);
	if (j->sidecar_written && conn_unlink(j->c, j->sidecar, &e2) != CONN_OK) {
		log_msg(LOG_WARN, "submit: %s: the sidecar %s could not be removed: %s",
		    j->id, j->sidecar, e2 ? e2 : "?");
	}
	free(e2);
	e2 = NULL;
	if (store_update(j->st, j->id, mark_not_launched, (void *)why, &e2) != 0)
		free(e2);
}

int submit_run(struct conn *c, struct record_store *st, const struct cluster_cfg *cl,
    const struct submit_opts *o, submit_progress_fn *progress, void *data,
    struct submit_result *res, char **err)
{
	struct job j;
	struct linted_script script = { NULL };
	struct stage sg;
	int rc = -1, fold;

	memset(res, 0, sizeof(*res));
	memset(&j, 0, sizeof(j));
	j.c = c, j.st = st, j.cl = cl, j.o = o, j.progress = progress, j.data = data;
	buf_init(&j.plan);
	stage_init(&sg);
	if (preflight(&j, err) != 0)
		goto out;
	fold = can_fold(&j);
	if (fold && !o->dry_run) {
		int f = folded(&j, &sg, &script, res, err);
		if (f < 0)
			not_launched(&j, res, *err);
		if (f <= 0) {
			rc = f;
			goto out;
		}
	}
	if (check_remote(&j, err) != 0 || convert_image(&j, res, err) != 0 ||
	    nccl_knobs(&j, err) != 0 || open_record(&j, err) != 0)
		goto out;
	res->record_id = xstrdup(j.id);
	/* A dry run shows the gate the real one would run first. */
	if (o->dry_run && fold && j.image.is_sqsh)
		add_gate(&j, &sg);
	/* From here a failure leaves the record saying why. */
	/* The sidecar last before sbatch: a failed render or lint leaves none. */
	if (render_and_lint(&j, &script, err) != 0 || stage(&j, &sg, err) != 0 ||
	    sidecar(&j, &sg, err) != 0 || launch(&j, &sg, &script, res, err) != 0) {
		not_launched(&j, res, *err);
		goto out;
	}
	if (o->dry_run) {
		char *asked = resolved_text(&j);
		char *segs = segments_plan(&j);
		res->dry_run = xasprintf("# what was asked, and where each value came from\n%s\n"
		    "# the wall and its segments\n%s\n"
		    "# remote commands and writes, in order\n%s\n# %s\n%s", asked, segs,
		    j.plan.data ? j.plan.data : "", j.sbatch_path, script.text);
		free(asked);
		free(segs);
	}
	rc = 0;
out:
	stage_free(&sg);
	free(script.text);
	job_free(&j);
	return rc;
}

void submit_result_free(struct submit_result *r)
{
	free(r->record_id);
	free(r->slurm_id);
	free(r->dry_run);
	free(r->settled);
	free(r->resubmit_of);
	memset(r, 0, sizeof(*r));
}

#include "engine/config/preflight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/config.h"
#include "engine/config/rootsafe.h"
#include "engine/config/storage.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/xmalloc.h"

static const char *const tools[] = { "sbatch", "squeue", "sacct", "scancel", "srun", "scontrol" };

static void add(struct preflight *p, const char *name, int ok, int warn_only, char *fix)
{
	struct preflight_check *c;

	p->checks = xreallocarray(p->checks, p->n + 1, sizeof(*p->checks));
	c = &p->checks[p->n++];
	c->name = xstrdup(name);
	c->ok = ok;
	c->warn_only = warn_only;
	c->fix = ok ? (free(fix), NULL) : fix;
	if (!ok && !warn_only)
		p->all_ok = 0;
}

/* Is word one of the comma-separated list? */
static int listed(const char *list, const char *word, size_t len)
{
	const char *p = list;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		if (n == len && strncmp(p, word, len) == 0)
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* What the one remote command found. */
struct found {
	int	 have[6], pyxis, enroot, ngc, root_ok;
	char	*parts;		/* the partitions, comma-separated */
};

/* The results root as a path on the cluster, or NULL when not set. */
static char *results_root(const struct cluster_cfg *cl)
{
	char *why = NULL, *root;

	if (cl->results_root == NULL)
		return NULL;
	root = strncmp(cl->results_root, "lustre://", 9) == 0 ||
	    strncmp(cl->results_root, "slurm://", 8) == 0
	    ? storage_path("SLURM_BASE_RESULTS_DIR", cl->results_root, &why)
	    : xstrdup(cl->results_root);
	free(why);
	return root;
}

/* Every check in one remote script: one command, one answer, each passed
 * check a "@@ok NAME" line. */
static void checks_script(struct buf *cmd, const char *root, const char *images)
{
	buf_adds(cmd, "for t in sbatch squeue sacct scancel srun scontrol; do "
	    "command -v $t >/dev/null && echo \"@@ok $t\"; done; "
	    "srun --help 2>&1 | grep -q -- --container-image && echo '@@ok pyxis'; "
	    "command -v enroot >/dev/null && echo '@@ok enroot'; "
	    "test -s ~/.config/enroot/.credentials && echo '@@ok ngc'; "
	    "echo \"@@parts $(sinfo -h -o %P 2>/dev/null | tr -d '*' | tr '\\n' ,)\"");
	if (root != NULL && root[0] == '/') {
		char *q = sh_quote(root);
		buf_addf(cmd, "; r=%s; if [ -d \"$r\" ]; then [ -w \"$r\" ] && echo '@@ok root'; "
		    "else d=$r; while [ ! -e \"$d\" ]; do d=$(dirname \"$d\"); done; "
		    "[ -w \"$d\" ] && echo '@@ok root'; fi; ", q);
		free(q);
		/* What another user could do there (engine/config/rootsafe.h). */
		rootsafe_funcs(cmd);
		rootsafe_ask_root(cmd, "unsafe-root", root);
		/* The images folder (the cluster's image_cache, or the
		 * root's images/; the NCCL probe runs from the job's own
		 * folder: no probes folder is used). */
		rootsafe_ask_dir(cmd, "unsafe-images", images);
		buf_adds(cmd, "true");
	}
}

/* Each unsafe thing about the root and its images/ folder: a warning line
 * each, naming the path, what is wrong and the fix. */
static void add_root_safety(struct preflight *p, const char *out, const char *root,
    const char *images)
{
	static const char *const tags[] = { "unsafe-root", "unsafe-images" };
	size_t i, k = 0;

	for (i = 0; i < 2; i++) {
		const char *at = out;
		char *path = xstrdup(i == 0 ? root : images);
		char code[64];
		/* Every line of the tag: a root can be a link and open at once. */
		while (at != NULL && rootsafe_read(at, tags[i], code, sizeof(code))) {
			char *why = rootsafe_why(code), *fix = rootsafe_fix(code, path);
			char *tag = xasprintf("@@%s %s", tags[i], code);
			add(p, "root safety", 0, 1, xasprintf("%s %s: %s", path, why, fix));
			free(why), free(fix);
			at = strstr(at, tag);
			at = at ? at + strlen(tag) : NULL;
			free(tag);
			k++;
		}
		free(path);
	}
	if (k == 0)
		add(p, "root safety", 1, 1, NULL);
}

static void parse_found(char *text, struct found *f)
{
	char *line, *save = NULL;
	size_t i;

	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		for (i = 0; i < 6; i++)
			if (strncmp(line, "@@ok ", 5) == 0 && strcmp(line + 5, tools[i]) == 0)
				f->have[i] = 1;
		f->pyxis |= strcmp(line, "@@ok pyxis") == 0;
		f->enroot |= strcmp(line, "@@ok enroot") == 0;
		f->ngc |= strcmp(line, "@@ok ngc") == 0;
		f->root_ok |= strcmp(line, "@@ok root") == 0;
		if (strncmp(line, "@@parts ", 8) == 0 && f->parts == NULL) {
			size_t n;
			f->parts = xstrdup(line + 8);
			n = strlen(f->parts);
			if (n > 0 && f->parts[n - 1] == ',')
				f->parts[n - 1] = '\0';
		}
	}
}

/* Every partition named, GPU and CPU, must exist. */
static void check_partitions(struct preflight *p, const struct cluster_cfg *cl, const char *parts)
{
	struct buf missing;
	const char *q = cl->partitions;

	buf_init(&missing);
	while (q != NULL && *q != '\0') {
		size_t n = strcspn(q, ",");
		if (n > 0 && !listed(parts, q, n))
			buf_addf(&missing, "%s%.*s", missing.len ? ", " : "", (int)n, q);
		q += n;
		if (*q == ',')
			q++;
	}
	if (!listed(parts, cl->cpu_partition, strlen(cl->cpu_partition)))
		buf_addf(&missing, "%s%s (image conversion)", missing.len ? ", " : "",
		    cl->cpu_partition);
	add(p, "partitions", missing.len == 0, 0, xasprintf("not on this cluster: %s; it has: "
	    "%s (set SLURM_PARTITION and TAOTOP_CPU_PARTITION)", missing.data ? missing.data : "",
	    parts[0] ? parts : "none"));
	buf_free(&missing);
}

/* The checks' verdicts, each with its fix, from what the command found. */
static void add_results(struct preflight *p, struct conn *c, const struct cluster_cfg *cl,
    const struct found *f, const char *root)
{
	size_t i;

	for (i = 0; i < 6; i++)
		add(p, tools[i], f->have[i], 0, xasprintf("%s is not on the login host's PATH: is %s a "
		    "SLURM login node? Ask the cluster's admins", tools[i], conn_host(c)));
	add(p, "pyxis", f->pyxis, 0, xstrdup("srun has no --container-image option: the Pyxis "
	    "plugin is not installed, and taotop's jobs run in containers through it; ask the "
	    "cluster's admins"));
	add(p, "enroot", f->enroot, 0, xstrdup("enroot is not on the login host's PATH: images are "
	    "converted with enroot import; ask the cluster's admins"));
	if (root == NULL)
		add(p, "results root", 0, 0, xstrdup("no results root is set: give taotop init "
		    "--results-root lustre:///path (a shared-storage folder you can write; "
		    "results_root: in config.yaml), or export SLURM_BASE_RESULTS_DIR"));
	else
		add(p, "results root", f->root_ok, 0, xasprintf("%s is not writable by you: choose a "
		    "folder on shared storage you can write (SLURM_BASE_RESULTS_DIR)", root));
	check_partitions(p, cl, f->parts ? f->parts : "");
	add(p, "ngc credentials", f->ngc, 1, xstrdup("no ~/.config/enroot/.credentials on the cluster: "
	    "private nvcr.io images will fail to import (\"Could not process JSON input\"); install "
	    "it once with: taotop preflight --install-ngc-credentials (it asks for the key)"));
}

int preflight_run(struct conn *c, const struct cluster_cfg *cl, struct preflight *p, char **err)
{
	struct buf cmd;
	struct conn_exec x;
	struct found f;
	char *root = results_root(cl);
	char *images = cl->image_cache != NULL ? xstrdup(cl->image_cache)
	    : root != NULL ? xasprintf("%s/images", root) : NULL;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	memset(&f, 0, sizeof(f));
	p->all_ok = 1;
	add(p, "ssh", 1, 0, NULL);	/* we are connected: key-only login works */
	buf_init(&cmd);
	checks_script(&cmd, root, images);
	conn_exec_init(&x, cmd.data);
	x.timeout_ms = 60000;
	if (conn_exec(c, &x, err) != CONN_OK) {
		preflight_free(p);
		rc = -1;
	} else {
		char *copy = xstrdup(x.out.data ? x.out.data : "");
		parse_found(x.out.data ? x.out.data : (char *)"", &f);
		add_results(p, c, cl, &f, root);
		if (root != NULL && root[0] == '/')
			add_root_safety(p, copy, root, images);
		free(copy);
	}
	conn_exec_free(&x);
	buf_free(&cmd);
	free(f.parts);
	free(root), free(images);
	return rc;
}

void preflight_free(struct preflight *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->checks[i].name);
		free(p->checks[i].fix);
	}
	free(p->checks);
	memset(p, 0, sizeof(*p));
}

#define CREDS_PATH	".config/enroot/.credentials"
#define CREDS_MAX	(256 * 1024)	/* a netrc file, not more */

/* Whether a netrc line is an entry for NGC's registry or its auth (the
 * one-line form enroot reads: "machine HOST login ..."). */
static int ngc_line(const char *p, size_t len)
{
	static const char *const hosts[] = { "nvcr.io", "authn.nvidia.com" };
	size_t i, k;

	while (len > 0 && (*p == ' ' || *p == '\t'))
		p++, len--;
	if (len < 8 || strncmp(p, "machine", 7) != 0 || (p[7] != ' ' && p[7] != '\t'))
		return 0;
	p += 7, len -= 7;
	while (len > 0 && (*p == ' ' || *p == '\t'))
		p++, len--;
	for (i = 0; i < 2; i++) {
		k = strlen(hosts[i]);
		if (len >= k && strncmp(p, hosts[i], k) == 0 &&
		    (len == k || p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
			return 1;
	}
	return 0;
}

/* The existing file's lines that are not NGC's, into out; -1 with *err
 * when it cannot be read as a file of credentials. */
static int creds_kept(struct conn *c, struct buf *out, char **err)
{
	struct conn_stat st;
	struct buf old;
	const char *p, *end;

	char *why = NULL;
	enum conn_status rc = conn_stat(c, CREDS_PATH, &st, &why);

	if (rc == CONN_NOTFOUND) {
		free(why);
		return 0;	/* nothing to keep: written new */
	}
	if (rc != CONN_OK) {
		*err = why;
		return -1;
	}
	if (!st.is_reg || st.size > CREDS_MAX) {
		*err = xstrdup("~/" CREDS_PATH " on the cluster is not a regular file of credentials "
		    "(a folder, a device, or over 256 KiB): taotop leaves it be; look at it there");
		return -1;
	}
	buf_init_secret(&old);
	if (conn_read_at(c, CREDS_PATH, 0, CREDS_MAX, &old, err) != CONN_OK) {
		buf_free(&old);
		return -1;
	}
	for (p = old.data ? old.data : "", end = p + old.len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		size_t sp = strspn(p, " \t");
		/* A line that does not begin an entry continues the one above
		 * (netrc allows it; enroot reads one-line entries only): which
		 * entry it belongs to is not taotop's to guess. */
		if (sp < len && strncmp(p + sp, "machine", 7) != 0 && strncmp(p + sp, "default", 7) != 0 &&
		    p[sp] != '#') {
			buf_free(&old);
			*err = xstrdup("~/" CREDS_PATH " on the cluster has netrc entries over several "
			    "lines: taotop replaces one-line entries only (the form enroot reads); "
			    "edit it there by hand, or remove it and use --install-ngc-credentials");
			return -1;
		}
		if (!ngc_line(p, len) && len > 0) {
			buf_add(out, p, len);
			buf_adds(out, "\n");
		}
		p += len + (nl != NULL);
	}
	buf_free(&old);
	return 0;
}

int preflight_install_ngc(struct conn *c, const char *ngc_key, int replace, char **err)
{
	struct buf text;
	int rc;

	if (ngc_key == NULL || ngc_key[0] == '\0' || strpbrk(ngc_key, " \t\n") != NULL) {
		*err = xstrdup("no NGC API key was given (or it holds white space): type it when "
		    "asked, or put it alone in a file of yours (mode 600) and give --ngc-key-file");
		return -1;
	}
	if (conn_mkdir_p(c, ".config/enroot", 0700, err) != CONN_OK)
		return -1;
	buf_init_secret(&text);
	/* The other registries' lines stay, as the user wrote them. */
	if (replace && creds_kept(c, &text, err) != 0) {
		buf_free(&text);
		return -1;
	}
	/* Enroot's netrc-style credentials for NGC's registry and its auth. */
	buf_addf(&text, "machine nvcr.io login $oauthtoken password %s\n"
	    "machine authn.nvidia.com login $oauthtoken password %s\n", ngc_key, ngc_key);
	rc = conn_write_file(c, CREDS_PATH, text.data, text.len, 0600,
	    replace ? CONN_WRITE_ATOMIC : CONN_WRITE_EXCL, err) == CONN_OK ? 0 : -1;
	buf_free(&text);
	if (rc != 0 && *err != NULL && strstr(*err, "already exists") != NULL) {
		free(*err);
		*err = xstrdup("~/.config/enroot/.credentials already exists on the cluster: taotop "
		    "does not overwrite it; --replace-ngc-credentials replaces its NGC lines (nvcr.io, "
		    "authn.nvidia.com) and keeps the rest");
	}
	return rc;
}

#include "engine/submit/checks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/rootsafe.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/xmalloc.h"

double checks_slurm_hours(const char *s)
{
	long d = 0, h = 0, m = 0, sec = 0;
	const char *dash = strchr(s, '-');

	if (strncmp(s, "UNLIMITED", 9) == 0 || strncmp(s, "infinite", 8) == 0)
		return 1e9;
	if (dash != NULL) {
		d = atol(s);
		s = dash + 1;
	}
	if (sscanf(s, "%ld:%ld:%ld", &h, &m, &sec) == 3)
		return (double)d * 24 + (double)h + (double)m / 60 + (double)sec / 3600;
	if (sscanf(s, "%ld:%ld", &m, &sec) == 2)
		return (double)d * 24 + (double)m / 60;
	if (sscanf(s, "%ld", &m) == 1)
		return (double)d * 24 + (double)m / 60;
	return 0;
}

/* Each dataset's test -e and the image's magic as "@@" lines; `close`
 * runs on an answer that stops the job, `end` ends each test. */
static void ask_files(const struct check_ask *a, const char *close, const char *end,
    struct buf *cmd)
{
	char *q;
	size_t i;

	for (i = 0; i < a->ndatasets; i++) {
		q = sh_quote(a->datasets[i]);
		buf_addf(cmd, "if test -e %s; then echo '@@ok %zu'; else echo '@@missing %zu'%s; fi%s",
		    q, i, i, close, end);
		free(q);
	}
	for (i = 0; i < a->ninputs && i < CHECK_MAX_INPUTS; i++) {
		q = sh_quote(a->inputs[i]);
		buf_addf(cmd, "if test -%c %s; then echo '@@input ok %zu'; elif test -e %s; then "
		    "echo '@@input wrong %zu'%s; else echo '@@input missing %zu'%s; fi%s",
		    a->input_folder[i] ? 'd' : 'f', q, i, q, i, close, i, close, end);
		free(q);
	}
	q = sh_quote(a->image);
	buf_addf(cmd, "if [ \"$(head -c 4 %s 2>/dev/null)\" = hsqs ]; then echo '@@image ok'; "
	    "elif test -e %s; then echo '@@image bad'%s; else echo '@@image missing'%s; fi%s",
	    q, q, close, close, end);
	free(q);
	/* Whose the image is and who could replace it (engine/config/rootsafe.h),
	 * and the images folder a conversion would write into. */
	rootsafe_funcs(cmd);
	rootsafe_ask_file(cmd, "image-unsafe", a->image);
	if (*close)
		buf_addf(cmd, "[ -z \"$tt_w\" ] || { true%s; }%s", close, end);
	if (a->image_dir != NULL) {
		rootsafe_ask_dir(cmd, "imagedir-unsafe", a->image_dir);
		if (*close)
			buf_addf(cmd, "[ -z \"$tt_w\" ] || { true%s; }%s", close, end);
	}
}

/* The first file of a run in the results folder: one line of find. */
static void find_run(const char *dir, struct buf *cmd)
{
	char *q = sh_quote(dir), *ptm = xasprintf("%s/ptm", dir), *in = xasprintf("%s/inputs", dir);
	char *qptm = sh_quote(ptm), *qin = sh_quote(in);

	buf_addf(cmd, "find %s -maxdepth 3 \\( -path %s -o -path %s \\) -prune -o \\( -name "
	    "status.json -o -name '*.pth' -o -name '*.ckpt' -o -name '*.tlt' \\) -print -quit "
	    "2>/dev/null", q, qptm, qin);
	free(q), free(ptm), free(in), free(qptm), free(qin);
}

void checks_command(const struct check_ask *a, struct buf *cmd)
{
	char *q;

	ask_files(a, "", "; ", cmd);
	q = sh_quote(a->partition);
	if (strchr(a->partition, ',') != NULL) {
		/* Each partition of the list that exists: a line per state
		 * group, summed by checks_read. */
		buf_addf(cmd, "sinfo -h -p %s -o '%%R|%%l|%%D|%%G' 2>/dev/null | sed 's/^/@@part /'; "
		    "true", q);
	} else {
		buf_addf(cmd, "echo \"@@maxtime $(sinfo -h -p %s -o %%l 2>/dev/null | head -n 1)\"; ",
		    q);
		/* The partition's nodes and their GPUs, for the shape: "2 gpu:8". */
		buf_addf(cmd, "echo \"@@nodes $(sinfo -h -p %s -o '%%D %%G' 2>/dev/null | head -n 1)\"",
		    q);
	}
	/* Every partition, for the message when the one asked for is none
	 * of them. */
	buf_adds(cmd, "; echo \"@@parts $(sinfo -h -o %R 2>/dev/null | sort -u | tr '\\n' ' ')\"");
	free(q);
	if (a->results_dir != NULL) {
		buf_adds(cmd, "; echo \"@@results $(");
		find_run(a->results_dir, cmd);
		buf_adds(cmd, ")\"");
	}
}

/*
 * The gate's tests mirror the judgement (engine/submit/submit.c) only where they
 * are sure: a MaxTime in sinfo's own forms that is not zero (the judgement
 * reads anything else as no partition, or cannot be matched here), at
 * least the job's nodes when it wants more than one, and a gres of the
 * form gpu[:type]:N with N at least the job's per node when it wants GPUs
 * (the count after the last colon, before any "(" or ","; anything else
 * closes it). The answers are the same lines checks_command prints.
 */
/* The gate for a list of partitions: the same @@part answers as
 * checks_command, and open only when every partition of the list could
 * run the job (as the single partition's gate judges one): then nothing
 * the judgement would leave out is in the staged --partition. One that
 * could not closes it, and the long way judges the list. awk sums each
 * partition's state groups as checks_read does: its nodes, its largest
 * GPU count per node (the gres before any "(" or ","; gpu[:type]:N). */
static void gate_list(const struct check_ask *a, struct buf *cmd)
{
	char *q = sh_quote(a->partition);
	const char *p = a->partition;

	buf_addf(cmd, "pl=$(sinfo -h -p %s -o '%%R|%%l|%%D|%%G' 2>/dev/null); "
	    "printf '%%s\n' \"$pl\" | sed '/^$/d; s/^/@@part /'\n", q);
	free(q);
	while (*p != '\0') {
		size_t len = strcspn(p, ",");
		char *name = xstrndup(p, len), *qn = sh_quote(name);
		buf_addf(cmd, "r=$(printf '%%s\n' \"$pl\" | awk -F'|' -v p=%s '$1 == p { n += $3; "
		    "mt = $2; g = $4; sub(/[(,].*/, \"\", g); c = 0; if (g ~ /^gpu/ && g ~ /:/) "
		    "{ c = g; sub(/.*:/, \"\", c); c += 0 } if (c > m) m = c; f = 1 } "
		    "END { if (!f) exit 1; print mt \"|\" n \"|\" m }') || ok=\n", qn);
		buf_adds(cmd, "mt=${r%%|*}; nd=${r#*|}; g=${nd#*|}; nd=${nd%%|*}\n");
		buf_adds(cmd, "printf '%s\n' \"$mt\" | grep -Eq '^(UNLIMITED|infinite)|^([0-9]+-)?"
		    "[0-9]+:[0-9]+:[0-9]+$' && case $mt in UNLIMITED*|infinite*|*[1-9]*) ;; "
		    "*) false;; esac || ok=\n");
		if (a->nodes > 1)
			buf_addf(cmd, "[ \"$nd\" -ge %d ] 2>/dev/null || ok=\n", a->nodes);
		if (a->gpus_per_node > 0)
			buf_addf(cmd, "[ \"$g\" -ge %d ] 2>/dev/null || ok=\n", a->gpus_per_node);
		free(name), free(qn);
		p += len;
		if (*p == ',')
			p++;
	}
}

void checks_gate(const struct check_ask *a, struct buf *cmd)
{
	char *q;

	buf_adds(cmd, "ok=1\n");
	ask_files(a, "; ok=", "\n", cmd);
	if (strchr(a->partition, ',') != NULL) {
		gate_list(a, cmd);
		goto results;
	}
	q = sh_quote(a->partition);
	buf_addf(cmd, "mt=$(sinfo -h -p %s -o %%l 2>/dev/null | head -n 1); echo \"@@maxtime $mt\"\n"
	    "printf '%%s\\n' \"$mt\" | grep -Eq '^(UNLIMITED|infinite)|^([0-9]+-)?[0-9]+:[0-9]+:[0-9]+$' "
	    "&& case $mt in UNLIMITED*|infinite*|*[1-9]*) ;; *) false;; esac || ok=\n", q);
	buf_adds(cmd, "[ -n \"$mt\" ] || echo \"@@parts $(sinfo -h -o %R 2>/dev/null | sort -u | "
	    "tr '\\n' ' ')\"\n");
	buf_addf(cmd, "nd=$(sinfo -h -p %s -o '%%D %%G' 2>/dev/null | head -n 1); "
	    "echo \"@@nodes $nd\"\n", q);
	free(q);
	if (a->nodes > 1)
		buf_addf(cmd, "[ \"${nd%%%% *}\" -ge %d ] 2>/dev/null || ok=\n", a->nodes);
	if (a->gpus_per_node > 0)
		buf_addf(cmd, "g=${nd#* }; g=${g%%%%[(,]*}; case $g in gpu*:*) "
		    "[ \"${g##*:}\" -ge %d ] 2>/dev/null || ok=;; *) ok=;; esac\n", a->gpus_per_node);
results:
	if (a->results_dir != NULL) {
		buf_adds(cmd, "r=$(");
		find_run(a->results_dir, cmd);
		buf_adds(cmd, "); echo \"@@results $r\"; [ -z \"$r\" ] || ok=\n");
	}
	buf_adds(cmd, "[ -n \"$ok\" ]");
}

/* "2 gpu:8" or "2 gpu:a100:8(S:0-1)" after "@@nodes ": the count after the
 * last colon of the gres; no gres: no GPUs. */
static void read_nodes(const char *s, struct check_facts *f)
{
	const char *g = strchr(s, ' ');

	f->part_nodes = atoi(s);
	if (g != NULL && strncmp(g + 1, "gpu", 3) == 0) {
		const char *end = g + 1 + strcspn(g + 1, "(,"), *colon = NULL, *p;
		for (p = g + 1; p < end; p++)
			if (*p == ':')
				colon = p;
		f->part_gpus = colon != NULL ? atoi(colon + 1) : -1;
	} else if (g != NULL) {
		f->part_gpus = 0;
	}
}

/* "NAME|MAXTIME|NODES|GRES" after "@@part ": into f's entry for NAME. */
static void read_part(const char *s, struct check_facts *f)
{
	char name[64] = "", mt[32] = "", gres[256] = "", nodes_gres[300];
	int nodes = 0, n = 0;
	struct check_facts one;
	size_t i;

	if (sscanf(s, "%63[^|]|%31[^|]|%d|%n", name, mt, &nodes, &n) != 3 || n == 0)
		return;
	snprintf(gres, sizeof(gres), "%s", s + n);
	for (i = 0; i < f->nparts; i++)
		if (strcmp(f->parts[i].name, name) == 0)
			break;
	if (i == f->nparts) {
		if (f->nparts == CHECK_MAX_PARTS)
			return;
		f->nparts++;
		snprintf(f->parts[i].name, sizeof(f->parts[i].name), "%s", name);
		f->parts[i].max_h = checks_slurm_hours(mt);
		f->parts[i].nodes = 0;
		f->parts[i].gpus = -1;
	}
	snprintf(nodes_gres, sizeof(nodes_gres), "%d %s", nodes, gres);
	one.part_gpus = -1;
	read_nodes(nodes_gres, &one);
	f->parts[i].nodes += nodes > 0 ? nodes : 0;
	if (one.part_gpus > f->parts[i].gpus)
		f->parts[i].gpus = one.part_gpus;
}

void checks_read(const char *out, size_t ndatasets, struct check_facts *f)
{
	char *copy = xstrdup(out != NULL ? out : ""), *line, *save = NULL;

	*f = (struct check_facts){ .missing = SIZE_MAX, .image_state = -2, .part_nodes = -1,
	    .part_gpus = -1 };
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		size_t k;
		if (sscanf(line, "@@missing %zu", &k) == 1 && k < ndatasets) {
			if (f->missing == SIZE_MAX)
				f->missing = k;
		} else if (sscanf(line, "@@input missing %zu", &k) == 1 && k < CHECK_MAX_INPUTS) {
			f->inputs[k] = INPUT_MISSING;
		} else if (sscanf(line, "@@input wrong %zu", &k) == 1 && k < CHECK_MAX_INPUTS) {
			f->inputs[k] = INPUT_WRONG_TYPE;
		} else if (strcmp(line, "@@image ok") == 0) {
			f->image_state = 1;
		} else if (strcmp(line, "@@image bad") == 0) {
			f->image_state = -1;
		} else if (strcmp(line, "@@image missing") == 0) {
			f->image_state = 0;
		} else if (strncmp(line, "@@image-unsafe ", 15) == 0) {
			snprintf(f->image_unsafe, sizeof(f->image_unsafe), "%s", line + 15);
		} else if (strncmp(line, "@@imagedir-unsafe ", 18) == 0) {
			snprintf(f->image_dir_unsafe, sizeof(f->image_dir_unsafe), "%s", line + 18);
		} else if (strncmp(line, "@@maxtime ", 10) == 0) {
			f->max_h = checks_slurm_hours(line + 10);
		} else if (strncmp(line, "@@nodes ", 8) == 0) {
			read_nodes(line + 8, f);
		} else if (strncmp(line, "@@parts ", 8) == 0) {
			snprintf(f->partitions, sizeof(f->partitions), "%s", line + 8);
		} else if (strncmp(line, "@@part ", 7) == 0) {
			read_part(line + 7, f);
		} else if (strncmp(line, "@@results ", 10) == 0) {
			snprintf(f->results_run, sizeof(f->results_run), "%s", line + 10);
		}
	}
	free(copy);
}

#include "engine/track/classify.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/xmalloc.h"

/* A rule's kind, as the file writes it. The order is the judgement's:
 * an ignored line is no evidence; a fault of the program's decides before
 * any line of the infrastructure's; those before the program's generic
 * signs (a traceback, an exit code). */
enum rule_kind { RULE_IGNORE, RULE_FAULT, RULE_NODE, RULE_INFRA, RULE_SETUP, RULE_PROGRAM };

static const struct { const char *word; enum rule_kind kind; } kinds[] = {
	{ "ignore", RULE_IGNORE }, { "fault", RULE_FAULT }, { "node", RULE_NODE },
	{ "infra", RULE_INFRA }, { "setup", RULE_SETUP }, { "program", RULE_PROGRAM },
};

struct pattern {
	enum rule_kind	 kind;
	char		 name[64];
	regex_t		 re;
};

struct patterns {
	struct pattern	*p;
	size_t		 n;
};

void patterns_free(struct patterns *ps)
{
	size_t i;

	if (ps == NULL)
		return;
	for (i = 0; i < ps->n; i++)
		regfree(&ps->p[i].re);
	free(ps->p);
	free(ps);
}

static int kind_of(const char *word, enum rule_kind *k)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(word, kinds[i].word) == 0) {
			*k = kinds[i].kind;
			return 0;
		}
	return -1;
}

int patterns_parse(const char *file, const char *text, struct patterns **out, char **err)
{
	struct patterns *ps = xcalloc(1, sizeof(*ps));
	char *copy = xstrdup(text), *line, *next;
	int lineno = 0;

	for (line = copy; line != NULL; line = next) {
		char kind[16], name[64];
		enum rule_kind k;
		int used = 0, rc;
		struct pattern *p;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		lineno++;
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '\0' || *line == '#')
			continue;
		if (sscanf(line, "%15s %63s %n", kind, name, &used) != 2 || used == 0 ||
		    line[used] == '\0' || kind_of(kind, &k) != 0) {
			*err = xasprintf("%s:%d: write KIND NAME REGEX, KIND being ignore, fault, node, "
			    "infra, setup or program", file, lineno);
			goto bad;
		}
		ps->p = xreallocarray(ps->p, ps->n + 1, sizeof(*ps->p));
		p = &ps->p[ps->n];
		p->kind = k;
		snprintf(p->name, sizeof(p->name), "%s", name);
		rc = regcomp(&p->re, line + used, REG_EXTENDED | REG_NOSUB | REG_ICASE);
		if (rc != 0) {
			char why[128];
			regerror(rc, &p->re, why, sizeof(why));
			*err = xasprintf("%s:%d: pattern %s: %s", file, lineno, name, why);
			goto bad;
		}
		ps->n++;
	}
	free(copy);
	*out = ps;
	return 0;
bad:
	free(copy);
	patterns_free(ps);
	return -1;
}

int patterns_load(const char *path, struct patterns **out, char **err)
{
	char *text = file_read_all(path, NULL, err);
	int rc;

	if (text == NULL)
		return -1;
	rc = patterns_parse(path, text, out, err);
	free(text);
	return rc;
}

/* ---- the lines ------------------------------------------------------------------------------- */

struct line {
	const char	*text;
	const char	*source;
};

struct lines {
	char		*copy[2];
	struct line	*v;
	size_t		 n;
};

/* main.err's lines first (where tracebacks and NCCL's warnings go), then
 * main.out's; lines an ignore rule matches are left out. */
static void lines_split(const struct patterns *ps, const char *err_tail, const char *out_tail,
    struct lines *ls)
{
	const char *texts[2] = { err_tail, out_tail }, *names[2] = { "main.err", "main.out" };
	size_t f, i;

	memset(ls, 0, sizeof(*ls));
	for (f = 0; f < 2; f++) {
		char *line, *save = NULL;
		ls->copy[f] = xstrdup(texts[f] != NULL ? texts[f] : "");
		for (line = strtok_r(ls->copy[f], "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			size_t len = strlen(line);
			int ignored = 0;
			if (len > 0 && line[len - 1] == '\r')
				line[len - 1] = '\0';
			for (i = 0; i < ps->n && !ignored; i++)
				ignored = ps->p[i].kind == RULE_IGNORE &&
				    regexec(&ps->p[i].re, line, 0, NULL, 0) == 0;
			if (ignored)
				continue;
			ls->v = xreallocarray(ls->v, ls->n + 1, sizeof(*ls->v));
			ls->v[ls->n++] = (struct line){ line, names[f] };
		}
	}
}

static void lines_free(struct lines *ls)
{
	free(ls->copy[0]), free(ls->copy[1]), free(ls->v);
}

#define KIND(k)	(1u << (k))

/* The first rule of the kinds in `which` (KIND(..) | ...; in the file's
 * order: the specific before the generic) that some line matches; 1 with
 * v's rule and line filled. */
static int match(const struct patterns *ps, const struct lines *ls, unsigned which,
    struct verdict *v)
{
	size_t i, k;

	for (i = 0; i < ps->n; i++) {
		if ((which & KIND(ps->p[i].kind)) == 0)
			continue;
		for (k = 0; k < ls->n; k++) {
			if (regexec(&ps->p[i].re, ls->v[k].text, 0, NULL, 0) != 0)
				continue;
			snprintf(v->reason, sizeof(v->reason), "%s", ps->p[i].name);
			snprintf(v->source, sizeof(v->source), "%s", ls->v[k].source);
			snprintf(v->evidence, sizeof(v->evidence), "%.255s", ls->v[k].text);
			v->node_tied = ps->p[i].kind == RULE_NODE;
			v->no_retry = ps->p[i].kind == RULE_SETUP;
			return 1;
		}
	}
	return 0;
}

static int is_word(const char *native, const char *word)
{
	return native != NULL && strcmp(native, word) == 0;
}

void classify_failure(const struct patterns *ps, const char *native, const char *exit_code,
    const char *out_tail, const char *err_tail, struct verdict *v)
{
	struct lines ls;
	struct verdict line;

	memset(v, 0, sizeof(*v));
	memset(&line, 0, sizeof(line));
	lines_split(ps, err_tail, out_tail, &ls);
	if (is_word(native, "NODE_FAIL") || is_word(native, "BOOT_FAIL")) {
		/* The scheduler's own word for a node's failure needs no log;
		 * a line of the node's, if any, is its evidence. */
		if (match(ps, &ls, KIND(RULE_NODE) | KIND(RULE_INFRA) | KIND(RULE_SETUP), &line))
			*v = line;
		v->kind = FAILURE_INFRA;	/* after the copy: line's is not set */
		v->node_tied = 1;
		snprintf(v->reason, sizeof(v->reason), "%s", native);
		goto out;
	}
	if (is_word(native, "DEADLINE") || is_word(native, "OUT_OF_MEMORY") ||
	    is_word(native, "TIMEOUT")) {
		/* Never retried (tao-core): more memory or time is the fix. */
		if (match(ps, &ls, KIND(RULE_FAULT), &line))
			*v = line;
		v->kind = FAILURE_PROGRAM;
		v->node_tied = 0;
		snprintf(v->reason, sizeof(v->reason), "%s", native);
		goto out;
	}
	if (match(ps, &ls, KIND(RULE_FAULT), v)) {
		v->kind = FAILURE_PROGRAM;
		goto out;
	}
	if (match(ps, &ls, KIND(RULE_NODE) | KIND(RULE_INFRA) | KIND(RULE_SETUP), v)) {
		v->kind = FAILURE_INFRA;
		goto out;
	}
	if (match(ps, &ls, KIND(RULE_PROGRAM), v)) {
		v->kind = FAILURE_PROGRAM;
		goto out;
	}
	/* Nothing in the logs says infrastructure: the program's own failure,
	 * so a broken spec never spends the retry budget. */
	v->kind = FAILURE_PROGRAM;
	snprintf(v->reason, sizeof(v->reason), "%s%s%s", native ? native : "failed",
	    exit_code && exit_code[0] ? ", exit " : "", exit_code ? exit_code : "");
out:
	lines_free(&ls);
}

/* Whether `word` is in `line` as a whole word (a host name in "node02:4123"
 * or "on node02," counts; in "node021" it does not). */
static int names_word(const char *line, const char *word)
{
	size_t len = strlen(word);
	const char *p;

	if (len == 0)
		return 0;
	for (p = strstr(line, word); p != NULL; p = strstr(p + 1, word)) {
		int before = p == line || !(isalnum((unsigned char)p[-1]) || p[-1] == '-' ||
		    p[-1] == '_');
		int after = !(isalnum((unsigned char)p[len]) || p[len] == '-' || p[len] == '_');
		if (before && after)
			return 1;
	}
	return 0;
}

const char *classify_verdict_node(const struct verdict *v, const char *const *nodes, size_t n)
{
	size_t i;

	if (v->kind != FAILURE_INFRA || !v->node_tied)
		return NULL;
	for (i = 0; i < n; i++)
		if (names_word(v->evidence, nodes[i]))
			return nodes[i];
	return n == 1 ? nodes[0] : NULL;
}

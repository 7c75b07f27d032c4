#include "engine/track/classify.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/xmalloc.h"

struct pattern {
	enum failure_kind kind;
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

int patterns_parse(const char *file, const char *text, struct patterns **out, char **err)
{
	struct patterns *ps = xcalloc(1, sizeof(*ps));
	char *copy = xstrdup(text), *line, *next;
	int lineno = 0;

	for (line = copy; line != NULL; line = next) {
		char kind[16], name[64];
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
		    line[used] == '\0' || (strcmp(kind, "infra") != 0 && strcmp(kind, "program") != 0)) {
			*err = xasprintf("%s:%d: write KIND NAME REGEX, KIND being infra or program",
			    file, lineno);
			goto bad;
		}
		ps->p = xreallocarray(ps->p, ps->n + 1, sizeof(*ps->p));
		p = &ps->p[ps->n];
		p->kind = strcmp(kind, "infra") == 0 ? FAILURE_INFRA : FAILURE_PROGRAM;
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

/* The first pattern of this kind (patterns are in the file's order, the
 * more specific first) that some line of text matches; 1 if one does. */
static int match_kind(const struct patterns *ps, enum failure_kind kind, const char *text,
    struct verdict *v)
{
	char *copy, *line, *save;
	size_t i;

	for (i = 0; i < ps->n; i++) {
		if (ps->p[i].kind != kind)
			continue;
		copy = xstrdup(text != NULL ? text : "");
		save = NULL;
		for (line = strtok_r(copy, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (regexec(&ps->p[i].re, line, 0, NULL, 0) != 0)
				continue;
			v->kind = kind;
			snprintf(v->reason, sizeof(v->reason), "%s", ps->p[i].name);
			snprintf(v->evidence, sizeof(v->evidence), "%.255s", line);
			free(copy);
			return 1;
		}
		free(copy);
	}
	return 0;
}

void classify_failure(const struct patterns *ps, const char *native, const char *exit_code,
    const char *out_tail, const char *err_tail, struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	/* The scheduler's own word for a node's failure needs no log. */
	if (native != NULL && (strcmp(native, "NODE_FAIL") == 0 || strcmp(native, "BOOT_FAIL") == 0)) {
		v->kind = FAILURE_INFRA;
		snprintf(v->reason, sizeof(v->reason), "%s", native);
		return;
	}
	if (match_kind(ps, FAILURE_INFRA, err_tail, v) || match_kind(ps, FAILURE_INFRA, out_tail, v))
		return;
	if (match_kind(ps, FAILURE_PROGRAM, err_tail, v) || match_kind(ps, FAILURE_PROGRAM, out_tail, v))
		return;
	/* Nothing in the logs says infrastructure: the program's own failure,
	 * so a broken spec never spends the retry budget. */
	v->kind = FAILURE_PROGRAM;
	snprintf(v->reason, sizeof(v->reason), "%s%s%s", native ? native : "failed",
	    exit_code && exit_code[0] ? ", exit " : "", exit_code ? exit_code : "");
}

#include "engine/submit/probe.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssh/quote.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/share.h"
#include "util/xmalloc.h"

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

int probe_script_vars(const struct probe_plan *p, struct buf *out, char **err)
{
	char **rungs = NULL, *answer;
	size_t n = 0, i;
	struct buf list;

	if (p == NULL) {
		buf_adds(out, "TAOTOP_PROBE=0");
		return 0;
	}
	if (probe_ladder(p->ladder, p->template_dir, &rungs, &n, err) != 0)
		return -1;
	buf_init(&list);
	for (i = 0; i < n; i++) {
		buf_addf(&list, "%s%s", i ? "\n" : "", rungs[i][0] ? rungs[i] : "none");
		free(rungs[i]);
	}
	free(rungs);
	answer = xasprintf("%s/nccl-probe.env", p->dir);
	buf_addf(out, "TAOTOP_PROBE=1\nTAOTOP_PROBE_SHAPE=%dx%d\nTAOTOP_PROBE_NODES=%d\n"
	    "TAOTOP_PROBE_GPUS=%d\nTAOTOP_PROBE_TIMEOUT_S=%d\nTAOTOP_PROBE_DIR=", p->nodes,
	    p->gpus_per_node, p->nodes, p->gpus_per_node, p->timeout_s);
	sh_quote_buf(out, p->dir, strlen(p->dir));
	buf_adds(out, "\nTAOTOP_PROBE_ANSWER=");
	sh_quote_buf(out, answer, strlen(answer));
	buf_adds(out, "\nTAOTOP_PROBE_RUNGS=");
	sh_quote_buf(out, list.data, list.len);
	free(answer);
	buf_free(&list);
	return 0;
}

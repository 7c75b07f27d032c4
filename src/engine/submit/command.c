#include "engine/submit/command.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

/* config_path is the skill bank's name of the staged spec (its bundles'
 * "dino train -e {config_path}"): the same value as {spec}. */
static const char *const names[] = { "spec", "results_dir", "job_dir", "job_id", "num_gpus",
	"num_nodes", "config_path" };
#define NNAMES (sizeof(names) / sizeof(names[0]))

static const char *value_of(const struct command_vars *v, size_t i)
{
	/* {config_path}: the skill bank's name for the staged spec. */
	const char *const values[NNAMES] = { v->spec, v->results_dir, v->job_dir, v->job_id,
		v->num_gpus, v->num_nodes, v->spec };
	return values[i];
}

/* Length of the name in "{name}" at p (p points at the '{'), or 0 when the
 * braces do not hold a plain name: then they are literal text. */
static size_t placeholder_len(const char *p)
{
	size_t n = 1;

	if (!(islower((unsigned char)p[1]) || p[1] == '_'))
		return 0;
	while (islower((unsigned char)p[n]) || isdigit((unsigned char)p[n]) || p[n] == '_')
		n++;
	return p[n] == '}' ? n - 1 : 0;
}

static int lookup(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NNAMES; i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return (int)i;
	return -1;
}

/* A value the shell reads as it is (no quoting needed in the author's
 * text): the characters taotop's folders and ids are made of. */
static int shell_plain(const char *s)
{
	return s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._+-,:@=")]
	    == '\0';
}

/* Walks word once: with v NULL it only checks, else it also builds. shell:
 * word is shell text (a pre- or post-command): braces that are no
 * placeholder of ours are the shell's and stay, and a value the shell
 * would read is refused. */
static char *walk(const char *word, const struct command_vars *v, int shell, char **err)
{
	struct buf out;
	const char *p = word;

	buf_init(&out);
	buf_adds(&out, "");
	while (*p != '\0') {
		size_t len;
		int i;
		if (!shell && ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}'))) {
			buf_addc(&out, p[0]);
			p += 2;
			continue;
		}
		if (p[0] != '{' || (len = placeholder_len(p)) == 0) {
			buf_addc(&out, *p++);
			continue;
		}
		if ((i = lookup(p + 1, len)) < 0 && shell) {
			buf_add(&out, p, len + 2);	/* the shell's ({a} of {a,b}...) */
			p += len + 2;
			continue;
		}
		if (shell && v != NULL && value_of(v, (size_t)i) != NULL &&
		    !shell_plain(value_of(v, (size_t)i))) {
			*err = xasprintf("{%.*s} in '%s' would be '%s', which the shell would read: "
			    "use an environment value with the placeholder instead, quoted in the "
			    "command", (int)len, p + 1, word, value_of(v, (size_t)i));
			buf_free(&out);
			return NULL;
		}
		if (i < 0) {
			*err = xasprintf("command: unknown placeholder {%.*s} in '%s' (taotop fills "
			    "{spec} (or {config_path}), {results_dir}, {job_dir}, {job_id}, {num_gpus} and "
			    "{num_nodes}; "
			    "write {{ and }} for literal braces)", (int)len, p + 1, word);
			buf_free(&out);
			return NULL;
		}
		if (v != NULL)
			buf_adds(&out, value_of(v, (size_t)i) ? value_of(v, (size_t)i) : "");
		p += len + 2;
	}
	return buf_detach(&out);
}

int command_check_word(const char *word, char **err)
{
	char *s = walk(word, NULL, 0, err);

	free(s);
	return s != NULL ? 0 : -1;
}

char *command_expand_word(const char *word, const struct command_vars *v, char **err)
{
	return walk(word, v, 0, err);
}

char *command_expand_shell(const char *text, const struct command_vars *v, char **err)
{
	return walk(text, v, 1, err);
}

int command_default(const char *network_arch, const char *action, char ***argv, size_t *argc,
    char **err)
{
	const char *missing = network_arch == NULL || network_arch[0] == '\0' ? "network_arch"
	    : action == NULL || action[0] == '\0' ? "action" : NULL;
	char **v;

	if (missing != NULL) {
		*err = xasprintf("field 'command' is missing, and so is '%s': give a command, or "
		    "network_arch and action for TAO's own (%s %s -e {spec} "
		    "results_dir={results_dir})", missing, network_arch ? network_arch : "NETWORK_ARCH",
		    action ? action : "ACTION");
		return -1;
	}
	v = xcalloc(5, sizeof(*v));
	v[0] = xstrdup(network_arch);
	v[1] = xstrdup(action);
	v[2] = xstrdup("-e");
	v[3] = xstrdup("{spec}");
	v[4] = xstrdup("results_dir={results_dir}");
	*argv = v;
	*argc = 5;
	return 0;
}

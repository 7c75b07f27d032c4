#include "ssh/sshconfig.h"

#include <ctype.h>
#include <glob.h>
#include <libssh/libssh.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/file.h"
#include "util/xmalloc.h"

#define INCLUDE_DEPTH	4	/* OpenSSH's own limit is 16; 4 is plenty here */

char *sshcfg_path(const char *path)
{
	const char *env = getenv("TAOTOP_SSH_CONFIG"), *home = getenv("HOME");

	if (path != NULL)
		return xstrdup(path);
	if (env != NULL && env[0] != '\0')
		return xstrdup(env);
	return xasprintf("%s/.ssh/config", home != NULL ? home : "");
}

struct names {
	char	**v;
	size_t	  n;
};

static void add_name(struct names *h, const char *word, size_t len)
{
	size_t i;

	if (len == 0 || strcspn(word, "*?!") < len)
		return;		/* a pattern: no one host to offer */
	for (i = 0; i < h->n; i++)
		if (strlen(h->v[i]) == len && strncmp(h->v[i], word, len) == 0)
			return;
	h->v = xreallocarray(h->v, h->n + 1, sizeof(*h->v));
	h->v[h->n++] = xasprintf("%.*s", (int)len, word);
}

/* The keyword of a line ("Host", "Include") and where its arguments start:
 * OpenSSH takes "Key value" and "Key=value", any case. */
static size_t keyword(const char *line, const char **args)
{
	size_t k = 0;

	while (line[k] != '\0' && !isspace((unsigned char)line[k]) && line[k] != '=')
		k++;
	*args = line + k;
	while (**args == ' ' || **args == '\t')
		(*args)++;
	if (**args == '=')
		(*args)++;
	while (**args == ' ' || **args == '\t')
		(*args)++;
	return k;
}

static void read_file(const char *path, struct names *h, int depth);

static void include(const char *pattern, size_t len, struct names *h, int depth)
{
	const char *home = getenv("HOME");
	char *p;
	glob_t g;
	size_t i;

	/* Relative includes are relative to ~/.ssh, as in OpenSSH. */
	if (pattern[0] == '~' && len > 1 && pattern[1] == '/')
		p = xasprintf("%s%.*s", home ? home : "", (int)len - 1, pattern + 1);
	else if (pattern[0] != '/')
		p = xasprintf("%s/.ssh/%.*s", home ? home : "", (int)len, pattern);
	else
		p = xasprintf("%.*s", (int)len, pattern);
	if (glob(p, 0, NULL, &g) == 0) {
		for (i = 0; i < g.gl_pathc; i++)
			read_file(g.gl_pathv[i], h, depth + 1);
		globfree(&g);
	}
	free(p);
}

static void read_file(const char *path, struct names *h, int depth)
{
	char *text, *line, *save = NULL, *err = NULL;

	if (depth > INCLUDE_DEPTH || (text = file_read_all(path, NULL, &err)) == NULL) {
		free(err);
		return;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		const char *args;
		size_t k;
		int is_host;

		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '#' || *line == '\0')
			continue;
		k = keyword(line, &args);
		is_host = k == 4 && strncasecmp(line, "host", 4) == 0;
		if (!is_host && !(k == 7 && strncasecmp(line, "include", 7) == 0))
			continue;
		while (*args != '\0' && *args != '#') {
			size_t len = strcspn(args, " \t\r#");
			if (is_host)
				add_name(h, args, len);
			else
				include(args, len, h, depth);
			args += len;
			while (*args == ' ' || *args == '\t' || *args == '\r')
				args++;
		}
	}
	free(text);
}

size_t sshcfg_hosts(const char *path, char ***out)
{
	char *p = sshcfg_path(path);
	struct names h = { NULL, 0 };

	read_file(p, &h, 0);
	free(p);
	*out = h.v;
	return h.n;
}

int sshcfg_resolve(const char *path, const char *alias, char **hostname, int *port,
    char **user)
{
	char *p = sshcfg_path(path), *v = NULL;
	ssh_session s = ssh_new();
	unsigned int pt = 22;
	int rc = -1;

	*hostname = NULL;
	*user = NULL;
	*port = 22;
	if (s == NULL)
		goto out;
	/* The same calls conn.c makes before connecting: what it shows is
	 * what the connection will use. */
	if (ssh_options_set(s, SSH_OPTIONS_HOST, alias) != 0 ||
	    ssh_options_parse_config(s, p) != 0)
		goto out;
	if (ssh_options_get(s, SSH_OPTIONS_HOST, &v) == SSH_OK) {
		*hostname = xstrdup(v);
		ssh_string_free_char(v);
	} else {
		*hostname = xstrdup(alias);
	}
	if (ssh_options_get(s, SSH_OPTIONS_USER, &v) == SSH_OK) {
		*user = xstrdup(v);
		ssh_string_free_char(v);
	}
	if (ssh_options_get_port(s, &pt) == SSH_OK)
		*port = (int)pt;
	rc = 0;
out:
	ssh_free(s);
	free(p);
	return rc;
}

#include "engine/logs/roles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/logs/logpath.h"
#include "engine/store/jobref.h"
#include "engine/store/record.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/xmalloc.h"

#define ROLES_TIMEOUT_MS	30000

int roles_has(const struct job_record *r, const char *name)
{
	const char *p;
	size_t n = strlen(name);

	if (r->roles == NULL || n == 0)
		return 0;
	for (p = r->roles; (p = strstr(p, name)) != NULL; p += n)
		if ((p == r->roles || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

size_t roles_of(const struct job_record *r, struct role_state **out)
{
	const char *p;
	size_t n = 0;

	*out = NULL;
	if (r == NULL || r->roles == NULL)
		return 0;
	for (p = r->roles; *p != '\0';) {
		size_t l = strcspn(p, " ");
		struct role_state *s;

		*out = xreallocarray(*out, n + 1, sizeof(**out));
		s = &(*out)[n++];
		memset(s, 0, sizeof(*s));
		snprintf(s->name, sizeof(s->name), "%.*s", (int)(l < 31 ? l : 31), p);
		{
			char *file = xasprintf("%s.out", s->name);
			s->log = job_log_file(r, file);
			free(file);
		}
		s->rc = -1;
		snprintf(s->state, sizeof(s->state), "%s", r->backend_ref == NULL ? "pending"
		    : tao_state_final(r->state) ? "stopped" : "running");
		p += l;
		while (*p == ' ')
			p++;
	}
	return n;
}

int roles_read(struct conn *c, const struct job_record *r, struct role_state **out,
    size_t *n, char **err)
{
	struct conn_exec x;
	char *dir, *q, *cmd, *why = NULL;
	const char *line;
	size_t i;
	int rc = 0;

	*n = roles_of(r, out);
	if (*n == 0 || r->backend_ref == NULL)
		return 0;
	dir = job_log_file(r, "");
	q = sh_quote(dir);
	/* Each ended role's "NAME CODE", the code's digits only. */
	cmd = xasprintf("cd %s 2>/dev/null || exit 0; for f in *.rc; do [ -f \"$f\" ] && "
	    "printf '%%s %%s\\n' \"${f%%.rc}\" \"$(head -c 12 \"$f\" | tr -cd 0-9)\"; done; exit 0",
	    q);
	conn_exec_init(&x, cmd);
	x.timeout_ms = ROLES_TIMEOUT_MS;
	if (conn_exec(c, &x, &why) != CONN_OK) {
		*err = xasprintf("the roles' exit codes were not read: %s", why ? why : "?");
		rc = -1;
	} else {
		for (line = x.out.data ? x.out.data : ""; *line != '\0';) {
			size_t l = strcspn(line, "\n"), k = strcspn(line, " ");
			for (i = 0; k < l && i < *n; i++) {
				struct role_state *s = &(*out)[i];
				if (strlen(s->name) != k || strncmp(s->name, line, k) != 0 || k + 1 >= l)
					continue;
				s->rc = atoi(line + k + 1);
				snprintf(s->state, sizeof(s->state), "%s", s->rc == 0 ? "done" : "failed");
			}
			line += l;
			if (*line == '\n')
				line++;
		}
	}
	conn_exec_free(&x);
	free(why), free(cmd), free(q), free(dir);
	return rc;
}

void roles_free(struct role_state *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].log);
	free(v);
}

int roles_log_path(struct record_store *st, const char *job, const char *role, char **path,
    char **err)
{
	struct job_ref ref;
	int rc = -1;

	*path = NULL;
	if (job_ref_resolve(st, job, &ref, err) != 0)
		return -1;
	if (ref.rec == NULL) {
		*err = xasprintf("%s is not a taotop job: only a Cosmos-RL job taotop submitted has "
		    "roles", job);
	} else if (ref.rec->roles == NULL) {
		*err = xasprintf("%s is no Cosmos-RL job: it has no roles, only main.out and main.err "
		    "(leave --role out)", ref.rec->id);
	} else if (!roles_has(ref.rec, role)) {
		*err = xasprintf("%s has no role '%s': its roles are %s", ref.rec->id, role,
		    ref.rec->roles);
	} else if (ref.rec->backend_ref == NULL || ref.rec->log_dir == NULL) {
		*err = xasprintf("%s has not been launched yet", ref.rec->id);
	} else {
		char *file = xasprintf("%s.out", role);
		*path = job_log_file(ref.rec, file);
		free(file);
		rc = 0;
	}
	job_ref_free(&ref);
	return rc;
}

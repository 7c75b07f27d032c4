#include "util/compat.h"
#include "engine/submit/secrets.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/store/record.h"
#include "engine/submit/spec.h"
#include "engine/submit/submit.h"
#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/buf.h"
#include "util/xmalloc.h"

void secrets_hold(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	compat_no_dumps();
}

int secrets_name_ok(const char *name)
{
	size_t i;

	if (name == NULL || !(isalpha((unsigned char)name[0]) || name[0] == '_') ||
	    strlen(name) > 128)
		return 0;
	for (i = 0; name[i] != '\0'; i++)
		if (!(isalnum((unsigned char)name[i]) || name[i] == '_'))
			return 0;
	return 1;
}

/* The value of name in a .env file (NAME=value lines, "export " and quotes
 * allowed), or NULL. The caller frees it. */
/* Why the .env at path is not read, or NULL when it may be (or is not
 * there): like ssh with a private key, a file of secrets is believed only
 * when it is a regular file of the user's that no one else can read (a
 * secret others could read is spent) or write (they could choose it). */
static char *dotenv_refused(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return NULL;
	if (!S_ISREG(st.st_mode))
		return xasprintf("%s is not a regular file: not read", path);
	if (st.st_uid != getuid())
		return xasprintf("%s is not yours: not read (a .env holds your secrets)", path);
	if ((st.st_mode & 077) != 0)
		return xasprintf("%s can be read or written by others (mode %03o): not read; "
		    "chmod 600 %s", path, (unsigned)(st.st_mode & 0777), path);
	return NULL;
}

static char *dotenv_value(const char *path, const char *name)
{
	FILE *f;
	char line[4096], *found = NULL, *why = dotenv_refused(path);
	size_t n = strlen(name);

	if (why != NULL) {
		free(why);
		return NULL;
	}
	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	/* No copy of the file in stdio's buffer: line is the only one. */
	setvbuf(f, NULL, _IONBF, 0);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = line, *v;
		size_t len;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "export ", 7) == 0)
			p += 7;
		if (strncmp(p, name, n) != 0 || p[n] != '=')
			continue;
		v = p + n + 1;
		len = strcspn(v, "\r\n");
		if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
			v++;
			len -= 2;
		}
		if (found != NULL)
			buf_mem_wipe(found, strlen(found));
		free(found);
		found = xstrndup(v, len);
	}
	buf_mem_wipe(line, sizeof(line));
	fclose(f);
	if (found != NULL && found[0] == '\0') {
		free(found);
		found = NULL;
	}
	return found;
}

char *secrets_value_from(const char *name, const struct spec_kv *typed, size_t ntyped,
    const char *bundle_path, char **from)
{
	const char *v = getenv(name), *slash;
	char *path, *found;
	size_t i;

	if (from != NULL)
		*from = NULL;
	secrets_hold();
	for (i = 0; i < ntyped; i++)
		if (strcmp(typed[i].key, name) == 0 && typed[i].value[0] != '\0') {
			if (from != NULL)
				*from = xstrdup("typed in");
			return xstrdup(typed[i].value);
		}
	if (v != NULL && v[0] != '\0') {
		if (from != NULL)
			*from = xstrdup("your environment");
		return xstrdup(v);
	}
	slash = bundle_path ? strrchr(bundle_path, '/') : NULL;
	path = slash ? xasprintf("%.*s/.env", (int)(slash - bundle_path), bundle_path)
	    : xstrdup(".env");
	found = dotenv_value(path, name);
	if (found == NULL && slash != NULL) {
		free(path);
		path = xstrdup(".env");
		found = dotenv_value(path, name);
	}
	if (found != NULL && from != NULL)
		*from = path, path = NULL;
	free(path);
	return found;
}

/* Why a .env that secrets_value_from would read (beside the bundle, then
 * in the working folder) is not read: not a regular file, not the user's,
 * or open to others; NULL when none is refused. Caller frees. */
static char *secrets_dotenv_problem(const char *bundle_path)
{
	const char *slash = bundle_path ? strrchr(bundle_path, '/') : NULL;
	char *path = slash ? xasprintf("%.*s/.env", (int)(slash - bundle_path), bundle_path)
	    : xstrdup(".env");
	char *why = dotenv_refused(path);

	free(path);
	if (why == NULL && slash != NULL)
		why = dotenv_refused(".env");
	return why;
}

void secrets_wipe(struct buf *text)
{
	buf_mem_wipe(text->data, text->cap);
	buf_free(text);
}

int secrets_sidecar_text(const char *names, const struct spec_kv *typed, size_t ntyped,
    const char *bundle_path, struct buf *out, char **err)
{
	return secrets_sidecar_text_from(names, typed, ntyped, bundle_path, out, NULL, err);
}

int secrets_sidecar_text_from(const char *names, const struct spec_kv *typed, size_t ntyped,
    const char *bundle_path, struct buf *out, struct buf *from, char **err)
{
	char *copy = xstrdup(names), *name, *save = NULL;
	int rc = 0;

	out->secret = 1;	/* from its first byte: growing it leaves no copy */
	for (name = strtok_r(copy, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
		char *v;
		/* Names come back from records too: each checked as when it
		 * was first written, before it goes into a shell line. */
		if (!secrets_name_ok(name)) {
			*err = xasprintf("'%s' is not a secret name (letters, digits, '_'): refused",
			    name);
			secrets_wipe(out);
			rc = -1;
			break;
		}
		char *where = NULL;
		v = secrets_value_from(name, typed, ntyped, bundle_path, &where);
		if (v != NULL && from != NULL)
			buf_addf(from, "%s%s from %s", from->len > 0 ? ", " : "", name, where);
		free(where);
		if (v == NULL && (*err = secrets_dotenv_problem(bundle_path)) != NULL) {
			secrets_wipe(out);
			rc = -1;
			break;
		}
		if (v == NULL) {
			*err = xasprintf("secret %s is set neither in your environment nor in a .env "
			    "file%s%s: export it (its value is written only to a mode-600 file on the "
			    "cluster)", name, bundle_path ? " beside " : "", bundle_path ? bundle_path : "");
			secrets_wipe(out);
			rc = -1;
			break;
		}
		buf_addf(out, "export %s=", name);
		sh_quote_buf(out, v, strlen(v));
		buf_addc(out, '\n');
		buf_mem_wipe(v, strlen(v));
		free(v);
	}
	free(copy);
	return rc;
}

char *secrets_sidecar_path(const char *job_dir, const char *first_id)
{
	return xasprintf("%s/job_%s.env", job_dir, first_id);
}

char *secrets_sidecar_of(const struct job_record *r)
{
	char *dir, *path;

	if (r->secrets == NULL || r->secrets[0] == '\0' || (dir = submit_job_dir(r)) == NULL)
		return NULL;
	/* The chain's first job named the folder, and its sidecar. */
	path = secrets_sidecar_path(dir, strrchr(dir, '/') + 1);
	free(dir);
	return path;
}

int secrets_remove_sidecar(struct conn *c, const struct job_record *r, char **err)
{
	char *path = secrets_sidecar_of(r);
	enum conn_status st;

	if (path == NULL)
		return 0;
	st = conn_unlink(c, path, err);
	free(path);
	if (st == CONN_OK || st == CONN_NOTFOUND) {
		free(*err);
		*err = NULL;
		return 0;
	}
	return -1;
}

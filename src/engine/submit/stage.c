#include "engine/submit/stage.h"

#include <stdlib.h>
#include <string.h>

#include "ssh/conn.h"
#include "ssh/quote.h"
#include "util/xmalloc.h"

#define FAILED_MARK	"@@stage-failed "
#define GATE_MARK	"@@stage-gate-closed"
/* A here-document's end: never a line of base64 (no '@' or '-' there). */
#define HEREDOC_END	"@@TAOTOP-END"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* data as base64, lines of 76 characters (base64 -d reads them back). */
static void add_base64(struct buf *b, const unsigned char *p, size_t len, int one_line)
{
	size_t i, col = 0;

	for (i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0) |
		    (i + 2 < len ? p[i + 2] : 0);
		char q[4] = { b64[v >> 18 & 63], b64[v >> 12 & 63],
		    i + 1 < len ? b64[v >> 6 & 63] : '=', i + 2 < len ? b64[v & 63] : '=' };
		buf_add(b, q, 4);
		if (!one_line && (col += 4) >= 76 && i + 3 < len) {
			buf_addc(b, '\n');
			col = 0;
		}
	}
}

void stage_init(struct stage *s)
{
	buf_init_secret(&s->script);
	buf_init(&s->plan);
	/* On a failure: the secret file written (if any) goes, the step is
	 * named, and the script stops. */
	buf_adds(&s->script, "set -u\numask 022\nsecret=\n"
	    "bail() { if [ -n \"$secret\" ]; then rm -f -- \"$secret\"; fi; "
	    "printf '" FAILED_MARK "%s\\n' \"$1\"; exit 97; }\n");
	/* A file's bytes (base64 on the standard input) under a name mktemp
	 * makes new (O_EXCL: never through a link or a FIFO someone left),
	 * renamed over the target (rename replaces a link, never follows it;
	 * -T: never into a folder of that name). */
	buf_adds(&s->script, "put() { t=$(mktemp -- \"$1.taotop-XXXXXX\") || return 1; "
	    "if base64 -d > \"$t\" && chmod 644 -- \"$t\" && mv -f -T -- \"$t\" \"$1\"; then "
	    "return 0; fi; rm -f -- \"$t\"; return 1; }\n");
}

void stage_free(struct stage *s)
{
	buf_free(&s->script);	/* wiped: it may hold a secret */
	buf_free(&s->plan);
}

void stage_gate(struct stage *s, const char *cmds, const char *plan_line)
{
	if (s->plan.len != 0)
		abort();	/* a broken invariant: a write before it would not wait */
	/* In a subshell: its variables and an `exit` in it stay there. */
	buf_adds(&s->script, "(\n");
	buf_adds(&s->script, cmds);
	buf_adds(&s->script, "\n) || { echo '" GATE_MARK "'; exit 96; }\n");
	buf_addf(&s->plan, "    %s\n", plan_line);
}

/* `why` as one quoted word for bail. */
static void add_bail(struct stage *s, const char *what, const char *path)
{
	char *why = xasprintf("%s %s", what, path);

	buf_adds(&s->script, " || bail ");
	sh_quote_buf(&s->script, why, strlen(why));
	free(why);
}

void stage_mkdirs(struct stage *s, const char *const *paths, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	buf_adds(&s->script, "mkdir -p --");
	for (i = 0; i < n; i++) {
		buf_addc(&s->script, ' ');
		sh_quote_buf(&s->script, paths[i], strlen(paths[i]));
		buf_addf(&s->plan, "    mkdir -p %s\n", paths[i]);
	}
	add_bail(s, "cannot make the folder", n == 1 ? paths[0] : "of the job");
	buf_addc(&s->script, '\n');
}

/* The test that dir is the user's own real folder no one else can write
 * (one list of &&, no `;`: it sits inside other lists). */
static void add_own_test(struct stage *s, const char *dir)
{
	char *q = sh_quote(dir);

	buf_addf(&s->script, "[ -d %s ] && [ ! -L %s ] && [ -O %s ] && "
	    "[ -z \"$(find %s -maxdepth 0 -perm /022)\" ]", q, q, q, q);
	free(q);
}

void stage_own_folder(struct stage *s, const char *dir)
{
	char *why = xasprintf("the job folder %s is not the one taotop made (a link, another "
	    "user's folder, or one others can write): nothing was written into it or run from "
	    "it -- look at it (ls -ld %s) and submit the bundle again", dir, dir);

	add_own_test(s, dir);
	buf_adds(&s->script, " || bail ");
	sh_quote_buf(&s->script, why, strlen(why));
	buf_addc(&s->script, '\n');
	buf_addf(&s->plan, "    check %s is your own folder\n", dir);
	free(why);
}

void stage_job_folder(struct stage *s, const char *root, const char *dir)
{
	char *why;

	buf_adds(&s->script, "mkdir -p -- ");
	sh_quote_buf(&s->script, root, strlen(root));
	add_bail(s, "cannot make the folder", root);
	/* New, or (a submit sent again, `again` set) the user's own, a real
	 * folder that no one else can write: what the first run made. */
	buf_adds(&s->script, "\nmkdir -m 755 -- ");
	sh_quote_buf(&s->script, dir, strlen(dir));
	buf_adds(&s->script, " 2>/dev/null || { [ -n \"${again:-}\" ] && ");
	add_own_test(s, dir);
	buf_adds(&s->script, "; }");
	why = xasprintf("the job folder %s exists already (another user's, or a link): taotop "
	    "makes each job's folder new and writes nothing into one it did not make; nothing "
	    "was written or submitted -- look at it (ls -ld %s) and submit again", dir, dir);
	buf_adds(&s->script, " || bail ");
	sh_quote_buf(&s->script, why, strlen(why));
	free(why);
	buf_addc(&s->script, '\n');
	buf_addf(&s->plan, "    mkdir %s   # new, yours; refused if anything is there\n", dir);
}

void stage_write(struct stage *s, const char *path, const void *data, size_t len,
    const char *about)
{
	buf_adds(&s->script, "put ");
	sh_quote_buf(&s->script, path, strlen(path));
	buf_adds(&s->script, " <<'" HEREDOC_END "'");
	add_bail(s, "cannot write", path);
	buf_addc(&s->script, '\n');
	add_base64(&s->script, data, len, 0);
	buf_adds(&s->script, "\n" HEREDOC_END "\n");
	if (about != NULL)
		buf_addf(&s->plan, "    write %s (%s)\n", path, about);
	else
		buf_addf(&s->plan, "    write %s (%zu bytes)\n", path, len);
}

void stage_write_secret(struct stage *s, const char *path, const void *data, size_t len,
    const char *about)
{
	char *why;

	/* printf is the shell's own: the bytes go through a pipe to base64,
	 * never into an argument list that ps would show. Anything at the
	 * path (a link, a FIFO, a file) refuses it; the bytes go to a file
	 * mktemp makes new, hard-linked to the path (link(2) fails on
	 * anything there, and never follows a link), so the path is a new
	 * regular file or nothing. */
	buf_adds(&s->script, "(umask 077; p=");
	sh_quote_buf(&s->script, path, strlen(path));
	buf_adds(&s->script, "; if [ -e \"$p\" ] || [ -L \"$p\" ]; then exit 1; fi; "
	    "t=$(mktemp -- \"$p.taotop-XXXXXX\") || exit 1; printf '%s' '");
	add_base64(&s->script, data, len, 1);
	buf_adds(&s->script, "' | base64 -d > \"$t\" && ln -T -- \"$t\" \"$p\"; r=$?; "
	    "rm -f -- \"$t\"; exit $r)");
	why = xasprintf("cannot create the secrets' file %s as a new file: something is there "
	    "already (a link, a FIFO or a file), or its folder refused it; no secret was "
	    "written through it and nothing was submitted -- look at it (ls -l), remove it if "
	    "it is yours, and submit again", path);
	buf_adds(&s->script, " || bail ");
	sh_quote_buf(&s->script, why, strlen(why));
	free(why);
	buf_adds(&s->script, "\nsecret=");
	sh_quote_buf(&s->script, path, strlen(path));
	buf_addc(&s->script, '\n');
	buf_addf(&s->plan, "    write %s, mode 0600 from its first byte, a new file: %s\n", path,
	    about);
}

void stage_run(struct stage *s, const char *cmds, const char *plan_line)
{
	buf_adds(&s->script, cmds);
	buf_addc(&s->script, '\n');
	buf_addf(&s->plan, "    %s\n", plan_line);
}

int stage_send(struct conn *c, struct stage *s, struct conn_exec *x, int timeout_ms, char **err)
{
	conn_exec_init(x, "sh -s");
	x->in = s->script.data;
	x->in_len = s->script.len;
	x->timeout_ms = timeout_ms;
	return conn_exec(c, x, err) == CONN_OK ? 0 : -1;
}

int stage_gate_closed(const char *out)
{
	return out != NULL && strstr(out, GATE_MARK "\n") != NULL;
}

char *stage_failure(const char *out)
{
	const char *m = out != NULL ? strstr(out, FAILED_MARK) : NULL;

	if (m == NULL)
		return NULL;
	m += strlen(FAILED_MARK);
	return xstrndup(m, strcspn(m, "\n"));
}

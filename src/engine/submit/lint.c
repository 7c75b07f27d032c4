#include "engine/submit/lint.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/xmalloc.h"

/* A run of token characters at p of at least min length? Returns its length. */
static size_t token_run(const char *p, size_t min, const char *extra)
{
	size_t n = 0;

	while (isalnum((unsigned char)p[n]) || (extra != NULL && p[n] != '\0' && strchr(extra, p[n])))
		n++;
	return n >= min ? n : 0;
}

/* Looks random: long, with letters and digits mixed. */
static int looks_random(const char *v, size_t len)
{
	size_t i, digits = 0, upper = 0, lower = 0;

	if (len < 24)
		return 0;
	for (i = 0; i < len; i++) {
		digits += isdigit((unsigned char)v[i]) != 0;
		upper += isupper((unsigned char)v[i]) != 0;
		lower += islower((unsigned char)v[i]) != 0;
	}
	/* Digits and letters mixed: not a path, a word or a number. */
	return digits > 0 && upper + lower > 0;
}

static int secret_name(const char *name, size_t len)
{
	static const char *const words[] = { "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD" };
	char up[128];
	size_t i;

	if (len >= sizeof(up))
		return 0;
	for (i = 0; i < len; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[len] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(up, words[i]) != NULL)
			return 1;
	return 0;
}

static void check_line(const char *p, size_t len, struct buf *why, int *secret)
{
	char *line = xstrndup(p, len);
	const char *s;

	if ((s = strstr(line, "hf_")) != NULL && token_run(s + 3, 20, NULL)) {
		buf_adds(why, "a Hugging Face token (hf_...)");
		*secret = 1;
	} else if ((s = strstr(line, "nvapi-")) != NULL && token_run(s + 6, 20, "-_")) {
		buf_adds(why, "an NGC key (nvapi-...)");
		*secret = 1;
	} else if ((s = strstr(line, "AKIA")) != NULL && token_run(s + 4, 16, NULL) == 16) {
		buf_adds(why, "an AWS access key (AKIA...)");
		*secret = 1;
	} else if (strstr(line, "-----BEGIN") != NULL && strstr(line, "PRIVATE KEY-----") != NULL) {
		buf_adds(why, "a private key block");
		*secret = 1;
	} else {
		/* NAME=value where NAME says secret and value looks random. */
		const char *eq = strchr(line, '=');
		if (eq != NULL) {
			const char *name = eq;
			const char *v = eq + 1;
			size_t vlen;
			while (name > line && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
				name--;
			if (*v == '"' || *v == '\'')
				v++;
			vlen = token_run(v, 0, "+/=_-.");
			if (secret_name(name, (size_t)(eq - name)) && looks_random(v, vlen)) {
				buf_addf(why, "%.*s is given a literal secret-looking value: pass it as a "
				    "secret by name (sidecar file), never in the script", (int)(eq - name), name);
				*secret = 1;
			}
		}
	}
	if (*secret) {
		free(line);
		return;
	}
	if ((s = strstr(line, "--container-image=")) != NULL) {
		const char *img = s + strlen("--container-image=");
		size_t n;
		/* Quoted or not, the path must end in .sqsh and be no registry. */
		if (*img == '\'' || *img == '"') {
			const char *close = strchr(img + 1, *img);
			img++;
			n = close != NULL ? (size_t)(close - img) : strlen(img);
		} else {
			n = strcspn(img, " \t\\");
		}
		if (n < 5 || strncmp(img + n - 5, ".sqsh", 5) != 0 || memchr(img, '#', n) != NULL ||
		    strncmp(img, "docker://", 9) == 0)
			buf_addf(why, "--container-image=%.*s is not a .sqsh file: Pyxis would pull and "
			    "convert it inside the GPU allocation; convert it first on the CPU partition",
			    (int)n, img);
	}
	if (why->len == 0 && (strstr(line, "s3://") != NULL ||
	    ((strstr(line, "http://") != NULL || strstr(line, "https://") != NULL) &&
	    (strstr(line, "curl") || strstr(line, "wget") || strstr(line, "aws ")))))
		buf_adds(why, "fetches data over the network inside the allocation (s3:// or "
		    "http(s)://): stage it on Lustre before submitting");
	free(line);
}

size_t lint_script(const char *file, const char *text, char **report)
{
	struct buf out;
	const char *p = text;
	size_t found = 0;
	int line = 1;

	buf_init(&out);
	while (*p != '\0') {
		size_t len = strcspn(p, "\n");
		struct buf why;
		int secret = 0;

		buf_init(&why);
		check_line(p, len, &why, &secret);
		if (why.len > 0) {
			buf_addf(&out, "%s%s:%d: %s%s", out.len ? "\n" : "", file, line,
			    secret ? "secret: " : "waste: ", why.data);
			found++;
		}
		buf_free(&why);
		p += len;
		if (*p == '\n')
			p++;
		line++;
	}
	*report = found > 0 ? buf_detach(&out) : NULL;
	buf_free(&out);
	return found;
}

/* bash -n on the script, locally: no secret is in it to leak. */
static int bash_syntax(const char *text, char **err)
{
	int in[2], out[2], status;
	struct buf msg;
	char chunk[4096];
	ssize_t n;
	pid_t pid;

	if (pipe(in) != 0 || pipe(out) != 0) {
		*err = xasprintf("bash -n: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 2);
		dup2(out[1], 1);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execlp("bash", "bash", "-n", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	(void)!write(in[1], text, strlen(text));
	close(in[1]);
	buf_init(&msg);
	while ((n = read(out[0], chunk, sizeof(chunk))) > 0)
		buf_add(&msg, chunk, (size_t)n);
	close(out[0]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*err = xasprintf("the rendered sbatch fails bash -n: %s", msg.data ? msg.data : "?");
		buf_free(&msg);
		return -1;
	}
	buf_free(&msg);
	return 0;
}

int lint_gate(const char *file, const char *text, char **err)
{
	char *report = NULL;

	if (lint_script(file, text, &report) > 0) {
		*err = xasprintf("the rendered sbatch fails the lint, nothing was submitted:\n%s", report);
		free(report);
		return -1;
	}
	return bash_syntax(text, err);
}

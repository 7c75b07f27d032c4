#include "engine/config/rootsafe.h"

#include <stdlib.h>
#include <string.h>

#include "ssh/quote.h"
#include "util/xmalloc.h"

/*
 * GNU find and stat, as on every Linux login node: find without -L never
 * follows the path it is given (a link is judged as a link), -perm /022
 * is "group or others may write", -perm -1000 the sticky bit. Their
 * variables are tt_-prefixed: they run inside other scripts.
 */
void rootsafe_funcs(struct buf *cmd)
{
	buf_adds(cmd, "tt_me=$(id -u); "
	    "tt_ww() { [ -n \"$(find \"$1\" -maxdepth 0 -perm /022 2>/dev/null)\" ]; }; "
	    "tt_st() { [ -n \"$(find \"$1\" -maxdepth 0 -perm -1000 2>/dev/null)\" ]; }; "
	    "tt_uid() { stat -c %u -- \"$1\" 2>/dev/null; }; "
	    "tt_dir() { if [ -L \"$1\" ]; then echo link; elif [ ! -e \"$1\" ]; then :; "
	    "elif [ ! -d \"$1\" ]; then echo notdir; "
	    "elif [ \"$(tt_uid \"$1\")\" != \"$tt_me\" ]; then echo \"owner $(tt_uid \"$1\")\"; "
	    "elif tt_ww \"$1\"; then echo writable; fi; }; "
	    "tt_hold() { tt_u=$(tt_uid \"$1\") || return 1; "
	    "if [ \"$tt_u\" != \"$tt_me\" ] && [ \"$tt_u\" != 0 ]; then echo \"dirowner $tt_u\"; "
	    "elif tt_ww \"$1\" && { ! tt_st \"$1\" || [ \"$2\" != \"$tt_me\" ]; }; then "
	    "echo dirwritable; else return 1; fi; }; "
	    "tt_file() { [ -e \"$1\" ] || return 0; tt_r=$(readlink -f -- \"$1\") || tt_r=$1; "
	    "tt_o=$(tt_uid \"$tt_r\"); "
	    "if [ \"$tt_o\" != \"$tt_me\" ] && [ \"$tt_o\" != 0 ]; then echo \"owner $tt_o\"; "
	    "elif tt_ww \"$tt_r\"; then echo writable; "
	    "else tt_hold \"$(dirname -- \"$1\")\" \"$tt_o\" || "
	    "tt_hold \"$(dirname -- \"$tt_r\")\" \"$tt_o\" || :; fi; }; "
	    "tt_root() { if [ -L \"$1\" ]; then echo link; fi; [ -d \"$1\" ] || return 0; "
	    "tt_u=$(stat -L -c %u -- \"$1\"); "
	    "if [ \"$tt_u\" != \"$tt_me\" ] && [ \"$tt_u\" != 0 ]; then echo \"owner $tt_u\"; fi; "
	    "if [ -n \"$(find -L \"$1\" -maxdepth 0 -perm /022)\" ] && "
	    "[ -z \"$(find -L \"$1\" -maxdepth 0 -perm -1000)\" ]; then echo open; fi; }; ");
}

static void ask(struct buf *cmd, const char *fn, const char *tag, const char *path)
{
	char *q = sh_quote(path), *qt = sh_quote(tag);

	buf_addf(cmd, "tt_w=$(%s %s); [ -z \"$tt_w\" ] || printf '@@%%s %%s\\n' %s \"$tt_w\"; ",
	    fn, q, qt);
	free(q), free(qt);
}

void rootsafe_ask_dir(struct buf *cmd, const char *tag, const char *dir)
{
	ask(cmd, "tt_dir", tag, dir);
}

void rootsafe_ask_file(struct buf *cmd, const char *tag, const char *file)
{
	ask(cmd, "tt_file", tag, file);
}

void rootsafe_ask_root(struct buf *cmd, const char *tag, const char *root)
{
	char *q = sh_quote(root), *qt = sh_quote(tag);

	buf_addf(cmd, "tt_root %s | while read -r tt_l; do printf '@@%%s %%s\\n' %s \"$tt_l\"; "
	    "done; ", q, qt);
	free(q), free(qt);
}

int rootsafe_read(const char *out, const char *tag, char *code, size_t size)
{
	size_t tl = strlen(tag);
	const char *p = out;

	while (p != NULL && *p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > tl + 3 && strncmp(p, "@@", 2) == 0 && strncmp(p + 2, tag, tl) == 0 &&
		    p[2 + tl] == ' ') {
			size_t n = len - tl - 3;
			if (size == 0)
				return 1;
			if (n >= size)
				n = size - 1;
			memcpy(code, p + tl + 3, n);
			code[n] = '\0';
			return 1;
		}
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

/* The uid after a code's word, digits only ("?" otherwise). */
static const char *uid_of(const char *code, char *out, size_t size)
{
	const char *sp = strchr(code, ' ');
	size_t n = sp ? strspn(sp + 1, "0123456789") : 0;

	if (n == 0 || n >= size || sp[1 + n] != '\0')
		return "?";
	memcpy(out, sp + 1, n);
	out[n] = '\0';
	return out;
}

static int is(const char *code, const char *word)
{
	size_t n = strlen(word);

	return strncmp(code, word, n) == 0 && (code[n] == '\0' || code[n] == ' ');
}

char *rootsafe_why(const char *code)
{
	char uid[16];

	if (is(code, "link"))
		return xstrdup("is a symbolic link (whoever can write its folder can point it "
		    "anywhere)");
	if (is(code, "notdir"))
		return xstrdup("is not a folder");
	if (is(code, "owner"))
		return xasprintf("belongs to uid %s, not to you", uid_of(code, uid, sizeof(uid)));
	if (is(code, "writable"))
		return xstrdup("can be written by other users (group or all)");
	if (is(code, "dirowner"))
		return xasprintf("is in a folder that belongs to uid %s (who can replace it)",
		    uid_of(code, uid, sizeof(uid)));
	if (is(code, "dirwritable"))
		return xstrdup("is in a folder other users can write, without a sticky bit "
		    "keeping them from your own file (any of them can replace it)");
	if (is(code, "open"))
		return xstrdup("can be written by other users and has no sticky bit (any of them "
		    "can rename your job folders and put theirs in their place)");
	return xasprintf("is unsafe (%s)", code);
}

char *rootsafe_fix(const char *code, const char *path)
{
	if (is(code, "link"))
		return xasprintf("use the real folder (readlink -f %s) or remove the link", path);
	if (is(code, "notdir"))
		return xasprintf("remove %s or choose another folder", path);
	if (is(code, "owner"))
		return xasprintf("remove %s (ask its owner) and let taotop make its own, or use a "
		    "folder of your own", path);
	if (is(code, "writable"))
		return xasprintf("chmod go-w %s if it is yours, else remove it", path);
	if (is(code, "dirowner") || is(code, "dirwritable"))
		return xasprintf("keep %s in a folder of your own that others cannot write "
		    "(mkdir -m 755, then image_cache: in config.yaml)", path);
	if (is(code, "open"))
		return xasprintf("chmod +t %s (or chmod go-w %s), or make a folder of your own "
		    "under it (mkdir -m 755 %s/$USER) the results root", path, path, path);
	return xasprintf("look at %s (ls -ld %s)", path, path);
}

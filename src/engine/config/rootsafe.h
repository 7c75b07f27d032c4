/*
 * Whether a folder or file under a results root others can write is safe
 * for taotop to write into or to run: shell tests that answer in short
 * codes ("link", "owner 1234", "writable", ...), one remote command's
 * worth, and the words for each code with what to do. The tests are
 * shell functions defined once per command (rootsafe_funcs); every path
 * reaches them quoted (ssh/quote.h).
 *
 * The rules: a folder taotop writes into (images/, a job's folder) must be a
 * real folder, not a link, the user's own, and not writable by group or
 * others. A file taotop runs (an image, a probe's output it trusts) must
 * be the user's own or root's, not writable by group or others, and held
 * by folders (where the path says, and where a link leads) that are the
 * user's or root's and that no one else can write, unless the folder has
 * the sticky bit and the file is the user's own (then no one else can
 * rename or remove it). A results root is unsafe when it is a link, when
 * it belongs to another user, or when others can write it without the
 * sticky bit.
 */
#ifndef TAOTOP_ENGINE_ROOTSAFE_H
#define TAOTOP_ENGINE_ROOTSAFE_H

#include <stddef.h>

#include "util/buf.h"

/* The shell functions the questions below call, as one line ending in
 * "; ": put it once in a command before them. */
void rootsafe_funcs(struct buf *cmd);

/* A command (ending in "; ") that prints "@@TAG CODE" when dir, a folder
 * taotop writes into, is unsafe; nothing when it is safe or missing. */
void rootsafe_ask_dir(struct buf *cmd, const char *tag, const char *dir);
/* Likewise for file, one taotop runs or trusts; nothing when missing. */
void rootsafe_ask_file(struct buf *cmd, const char *tag, const char *file);
/* Likewise for a results root: one "@@TAG CODE" line per problem. */
void rootsafe_ask_root(struct buf *cmd, const char *tag, const char *root);

/* The code of the first "@@TAG " line of out (a copy, at most size-1
 * bytes), 1 when there is one, 0 when there is none. */
int rootsafe_read(const char *out, const char *tag, char *code, size_t size);
/* What is wrong, in words, for a code: "is a symbolic link",
 * "belongs to uid 1234, not to you", ... (caller frees). An unknown
 * code is named as it is. */
char *rootsafe_why(const char *code);
/* The one-line fix for a folder or file with that code ("remove it and
 * let taotop make its own", "chmod go-w PATH", ...) (caller frees). */
char *rootsafe_fix(const char *code, const char *path);

#endif

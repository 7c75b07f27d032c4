/*
 * Putting sanitised text on the screen by columns, not bytes: UTF-8 decoded
 * with each character's width (a CJK character takes two), tabs expanded,
 * SGR colour sequences (kept by sanitize_append_sgr) turned into curses
 * attributes, and in an ASCII-only locale every non-ASCII character shown
 * as '?'. Text is passed through util/sanitize on its way in (drawing,
 * measuring, wrapping), so any text may be given: others' text acts on
 * nothing and shows what it holds.
 */
#ifndef TAOTOP_UI_TEXT_H
#define TAOTOP_UI_TEXT_H

/* ncurses' wide-character API without asking libc for X/Open. */
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>
#include <stddef.h>

/* Once, after setlocale: whether the terminal takes UTF-8. */
void text_init(int utf8);
int text_utf8(void);

/* Columns s takes (tabs from column 0, SGR sequences none). */
size_t text_width(const char *s, size_t len);
/* How many bytes of s fit in `width` columns starting at column `col`
 * (for wrapping); at least one character when width > 0. */
size_t text_fit(const char *s, size_t len, size_t col, size_t width);

/* A list of lines a view owns: line (taken) added at its end; every line
 * and the array freed, the list left empty. */
void text_lines_add(char ***lines, size_t *n, char *line);
void text_lines_free(char ***lines, size_t *n);

/* Add text's lines to *lines (n of them, caller frees each and the
 * array), each cut to at most width columns at a space when there is one
 * (words stay whole), continuations after indent. text is sanitised. */
void text_wrap(char ***lines, size_t *n, const char *text, const char *indent, int width);

/* Draw s at the window's cursor: columns before `skip` are not shown, at
 * most `width` are. attr is the base; with sgr, colour sequences in s
 * change it. Returns the columns drawn. */
int text_draw(WINDOW *w, const char *s, size_t len, size_t skip, int width, attr_t attr,
    int sgr);
/* Draw s padded with spaces (or cut) to exactly width columns. */
void text_draw_fixed(WINDOW *w, const char *s, int width, attr_t attr);

/* The colour pairs SGR sequences may use start here (themes use those
 * below); set by the UI from its theme. */
void text_set_sgr_pair_base(int first_free_pair);

#endif

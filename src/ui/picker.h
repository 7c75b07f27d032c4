/*
 * The wizard's file picker: one folder at a time, its sub-folders first
 * (and ../), then its spec bundles (*.yaml, *.yml); hidden entries left
 * out. Pure: no curses; the monitor draws picker entries and moves sel.
 */
#ifndef TAOTOP_UI_PICKER_H
#define TAOTOP_UI_PICKER_H

#include <stddef.h>

struct picker {
	char	*dir;		/* absolute */
	char	**names;	/* folders end in '/' */
	size_t	 n;
	size_t	 sel;
	char	*error;		/* why the folder could not be read, or NULL */
};

/* List dir (relative to the current folder, or absolute); on a folder that
 * cannot be read, error says why and the list is empty but for ../. */
void picker_open(struct picker *p, const char *dir);
/* Enter on the selection: a folder is opened in place (NULL returned); a
 * bundle's full path is returned (caller frees). */
char *picker_enter(struct picker *p);
/* To the parent folder, with the folder left selected. */
void picker_up(struct picker *p);
void picker_free(struct picker *p);

#endif

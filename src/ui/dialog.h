/* The dialog frame (dialog.c), drawn by the panels and setup_view.c. */
#ifndef TAOTOP_UI_DIALOG_H
#define TAOTOP_UI_DIALOG_H

#include "ui/app.h"

/* A box in the middle of the screen with a title, lines from `top` on,
 * and a footer; drawn last, over everything. */
void dialog_draw(struct app *a, const char *title, char *const *lines, size_t n, size_t top,
    const char *footer, enum role role);

/* Marks coloured over a dialog's text (the curves' runs compared): in the
 * lines from..to every one of the marks, in legend_from..legend_to the
 * first character that is one; mark k in attr[k]. */
struct dialog_paint {
	const char	*marks;
	size_t		 nmarks;
	const attr_t	*attr;
	size_t		 from, to, legend_from, legend_to;
};

/* dialog_draw, then paint's marks coloured (NULL: none). */
void dialog_draw_painted(struct app *a, const char *title, char *const *lines, size_t n,
    size_t top, const char *footer, enum role role, const struct dialog_paint *paint);

#endif

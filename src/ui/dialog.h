/* The dialog frame (dialog.c), drawn by the panels and setup_view.c. */
#ifndef TAOTOP_UI_DIALOG_H
#define TAOTOP_UI_DIALOG_H

#include "ui/app.h"

/* A box in the middle of the screen with a title, lines from `top` on,
 * and a footer; drawn last, over everything. */
void dialog_draw(struct app *a, const char *title, char *const *lines, size_t n, size_t top,
    const char *footer, enum role role);

#endif

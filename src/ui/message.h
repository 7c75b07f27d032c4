/* The message line (message.c): set by the loop, the panels and the setup
 * form; draw.c shows it. */
#ifndef TAOTOP_UI_MESSAGE_H
#define TAOTOP_UI_MESSAGE_H

#include "ui/app.h"

void ui_message(struct app *a, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ui_message_clear(struct app *a);

#endif

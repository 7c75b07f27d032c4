/* The message line's text: what the loop, the panels and the setup form say. */
#include "ui/message.h"

#include <stdarg.h>
#include <stdlib.h>

#include "util/xmalloc.h"

void ui_message(struct app *a, int error, const char *fmt, ...)
{
	va_list ap;

	free(a->message);
	va_start(ap, fmt);
	a->message = xvasprintf(fmt, ap);
	va_end(ap);
	a->message_error = error;
	a->dirty |= DIRTY_MESSAGE;
}

void ui_message_clear(struct app *a)
{
	if (a->message != NULL) {
		free(a->message);
		a->message = NULL;
		a->dirty |= DIRTY_MESSAGE;
	}
}

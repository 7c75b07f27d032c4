/*
 * sbatch templates: text with @@NAME@@ placeholders (the .tmpl files of templates/).
 * Rendering fills every one from the given values and fails, naming the
 * placeholder and its line, when one has no value: a half-rendered script
 * must never reach the cluster. Values go in as given; the caller quotes
 * what the shell will read (ssh/quote.h).
 */
#ifndef TAOTOP_ENGINE_TEMPLATE_H
#define TAOTOP_ENGINE_TEMPLATE_H

#include <stddef.h>

struct tmpl_value {
	const char	*name;	/* "JOB_NAME" */
	const char	*value;	/* NULL: no value (an error if the template uses it) */
};

/* Render text (named `what` in messages) into *out (caller frees). -1 with
 * *err naming the first placeholder without a value, or a malformed one. */
int template_render(const char *what, const char *text, const struct tmpl_value *values,
    size_t n, char **out, char **err);

/* The placeholder names a template uses, in order of first use, "\n"-joined
 * (caller frees). */
char *template_placeholders(const char *text);

#endif

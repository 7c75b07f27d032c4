#include "util/yamldoc.h"

#include <stdlib.h>

#include "util/xmalloc.h"

int yamldoc_load(const char *file, const char *text, size_t len, yaml_document_t *doc,
    char **err)
{
	yaml_parser_t parser;
	int ok;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	ok = yaml_parser_load(&parser, doc);
	if (!ok)
		*err = xasprintf("%s:%zu:%zu: YAML syntax error: %s%s%s", file,
		    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
		    parser.problem ? parser.problem : "unreadable",
		    parser.context ? " " : "", parser.context ? parser.context : "");
	yaml_parser_delete(&parser);
	return ok ? 0 : -1;
}

const char *yamldoc_scalar(const yaml_node_t *n)
{
	return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int yamldoc_vfail(char **err, const char *file, const yaml_node_t *n, const char *fmt, va_list ap)
{
	char *msg = xvasprintf(fmt, ap);

	*err = xasprintf("%s:%zu:%zu: %s", file, n->start_mark.line + 1, n->start_mark.column + 1,
	    msg);
	free(msg);
	return -1;
}

int yamldoc_fail(char **err, const char *file, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = yamldoc_vfail(err, file, n, fmt, ap);
	va_end(ap);
	return rc;
}

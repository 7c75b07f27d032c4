/*
 * What every YAML file taotop reads needs (spec bundles, the config,
 * themes): a document loaded from text with a syntax error named as
 * file:line:column, a node's scalar text, and an error message at a node's
 * place.
 */
#ifndef TAOTOP_UTIL_YAMLDOC_H
#define TAOTOP_UTIL_YAMLDOC_H

#include <stdarg.h>
#include <stddef.h>
#include <yaml.h>

/* Load text (named file in messages) into doc; -1 with "file:L:C: YAML
 * syntax error: ...". On 0 the caller deletes doc. */
int yamldoc_load(const char *file, const char *text, size_t len, yaml_document_t *doc,
    char **err);
/* The node's text when it is a scalar, else NULL (n may be NULL). */
const char *yamldoc_scalar(const yaml_node_t *n);
/* *err = "file:L:C: message" at n's place; returns -1. */
int yamldoc_fail(char **err, const char *file, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int yamldoc_vfail(char **err, const char *file, const yaml_node_t *n, const char *fmt,
    va_list ap) __attribute__((format(printf, 4, 0)));

#endif

/*
 * What spec.c shares with the skill bank's reader (bank.c): the parse's
 * context, its error at a node, and the field handling both formats have
 * in common (image, network_arch, action, command, gpu_spec_key, and what
 * else spec_field_known lists). Private to the two files.
 */
#ifndef TAOTOP_ENGINE_SPEC_PRIV_H
#define TAOTOP_ENGINE_SPEC_PRIV_H

#include <yaml.h>

#include "engine/submit/spec.h"

struct ctx {
	const char	*file;
	const char	*text;
	yaml_document_t	 doc;
	char		**err;
	int		 json;	/* the document came from JSON: no line or column */
};

/* *err = "file:L:C: message" (a JSON bundle: "file: message"); -1. */
int spec_fail_at(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether key is a field of taotop's own bundle. */
int spec_field_known(const char *key);
/* The field key: v of taotop's own bundle into s (key known). */
int spec_get_field(struct ctx *c, const char *key, const yaml_node_t *v, struct spec *s);

/* The skill bank's bundle (bank.c): the name of a root field only the
 * bank has (mode, compute_shape, ...), or NULL: taotop's own format. */
const char *bank_field_of(struct ctx *c, const yaml_node_t *root);
/* The bank's bundle at root into s, its schema's rules enforced. */
int bank_read(struct ctx *c, const yaml_node_t *root, struct spec *s);
/* A JSON text into c->doc, the same document libyaml would have made
 * from its YAML form (strings quoted, numbers and literals plain). */
int bank_json_load(struct ctx *c, const char *text, size_t len);

#endif

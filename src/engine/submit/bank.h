/*
 * NVIDIA's skill bank's spec bundle (tao-skill-bank skills/core/
 * tao-artifacts/references/spec_bundle.schema.json), read by spec_parse
 * beside taotop's own format into the same struct spec (docs/bank-bundles.md):
 *
 *  - found by its own fields (mode, compute_shape, declared_inputs, ...);
 *    a field of taotop's own format in it is refused, naming the field;
 *  - YAML, or JSON read by cJSON into the same libyaml document, so one
 *    walker reads both and they give the same job;
 *  - the schema's rules as a JSON Schema validator applies them (required
 *    fields by mode, no unknown field anywhere, the image pattern, nested
 *    spec keys only, enums, minimums), each refusal naming the field by
 *    its JSON path;
 *  - compute_shape is taotop's gpus_per_node x nodes (0 GPUs: gpus 0);
 *    mode args runs command + args as words; mode config stages the spec
 *    in its config_format, {config_path} its path;
 *  - declared inputs on shared storage (lustre:///, or an absolute path)
 *    are checked and mounted by the submit and written into the spec at
 *    their spec_key; s3://, hf://, ngc:// are refused (optional ones
 *    skipped): they are staged onto shared storage before submit, never
 *    inside the allocation.
 */
#ifndef TAOTOP_ENGINE_BANK_H
#define TAOTOP_ENGINE_BANK_H

#include "engine/submit/spec.h"

/* At submit, once the results folder is known: each input's path (not
 * skipped) at its spec_key, each output without a value its path under
 * results_dir (a key named results_dir: results_dir itself; another:
 * results_dir/<its last name>; one the spec gives as lustre:///path: that
 * path), and gpus_per_node at gpu_spec_key, into s->tao_spec. Outputs' paths are then all set. -1 with *err. */
int bank_bind(struct spec *s, const char *results_dir, int gpus_per_node, char **err);

/* The staged spec's file name (spec.yaml, spec.json, spec.toml) and its
 * text in s's config_format (caller frees); -1 with *err naming the
 * spec key a format cannot hold (TOML's null, JSON's inf). */
const char *bank_config_name(const struct spec *s);
int bank_config_text(const struct spec *s, char **text, char **err);

/* A spec borrowed from a caller (the monitor's submit) made s's own where
 * a submit changes it (tao_spec, inputs, outputs), and those freed. */
void bank_own(struct spec *s);
void bank_own_free(struct spec *s);

#endif

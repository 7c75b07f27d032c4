/*
 * Runs of a sweep told apart by their staged TAO specs (a record keeps its
 * spec: record.h): each spec's scalar values as dotted keys
 * (train.optim.lr, a list's items by index: augment.scales.0), the keys
 * whose values differ between the runs, and each run's name from them
 * ("lr=0.001" against "lr=0.01"), for a plot's legend.
 *
 * A key is shown in its shortest form that no other key of the specs
 * ends with (lr, else optim.lr, else train.optim.lr). A name gives at most
 * SPECDIFF_SHOWN keys ("+N more" after them). When nothing differs, or a
 * run has no spec kept (an older record), its name is its record id; two
 * runs whose differing values are the same get their ids after them.
 * Every key and value is sanitised for one line (util/sanitize.h): the
 * names are printed to terminals as they are.
 */
#ifndef TAOTOP_ENGINE_SPECDIFF_H
#define TAOTOP_ENGINE_SPECDIFF_H

#include <stddef.h>

#define SPECDIFF_SHOWN	3

/* A spec's scalars, by dotted key, in the document's order. */
struct spec_flat {
	char	**key, **val;
	size_t	  n;
};

/* 0, or -1 when yaml is not a YAML mapping (out is then empty). */
int specdiff_flatten(const char *yaml, struct spec_flat *out);
void specdiff_flat_free(struct spec_flat *f);

struct spec_diff {
	size_t	  nkeys;	/* the keys whose values differ */
	char	**key;		/* each one whole (sanitised) */
	char	**shown;	/* and in its shortest form */
	size_t	  nruns;
	char	***val;		/* val[run][k]: the run's value, NULL: none */
	char	**label;	/* each run's name */
};

/* The difference of n runs' specs (specs[i] NULL: none kept), named by
 * their record ids where nothing else tells them apart. */
void specdiff_make(const char *const *specs, const char *const *ids, size_t n,
    struct spec_diff *d);
void specdiff_free(struct spec_diff *d);

#endif

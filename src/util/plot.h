/*
 * A line plot as text, for the CLI and the monitor alike: y against x
 * inside axes with ticks and their values, drawn in braille dots (2 x 4 a
 * character cell) where the terminal takes UTF-8, else in ASCII (1 x 3 a
 * cell: ' - . marks). Pure: numbers in, lines of text out; the caller
 * sanitises any text of others' it puts beside a plot.
 *
 * Values that are not finite (NaN, a diverging loss's infinity) are gaps:
 * no point, and no line across them. A constant series gets a range
 * around its value; one point, a dot; values of any size, ticks that
 * still read (1e+300 as such).
 */
#ifndef TAOTOP_UTIL_PLOT_H
#define TAOTOP_UTIL_PLOT_H

#include <stddef.h>

#define PLOT_MAX_TICKS	12
/* Runs compared on one plot, each with its own mark (plot_opts.marks). */
#define PLOT_MAX_SERIES	8
/* The marks a comparison draws its runs with, in order: ASCII, none of
 * them the axes' characters, the same in every locale. */
#define PLOT_MARKS	"ox*#@%&$"

/* An axis: the range drawn and the ticks written on it. */
struct plot_axis {
	double	 lo, hi;		/* lo < hi, both finite */
	double	 tick[PLOT_MAX_TICKS];	/* within [lo, hi], increasing */
	int	 nticks;
	int	 log;			/* lo, hi and the ticks are log10 of values */
};

/* The finite range of v[0..n) (the positive values' when positive_only):
 * 0 with *lo <= *hi, -1 when no value counts. */
int plot_range(const double *v, size_t n, int positive_only, double *lo, double *hi);
/*
 * A readable axis over [lo, hi] with at most max_ticks ticks (2 to
 * PLOT_MAX_TICKS): steps of 1, 2 or 5 times a power of ten, the range
 * widened to whole steps. lo == hi (a constant) gets a range around it.
 * Range that overflows a double: the two ends and the middle as ticks.
 * log: lo and hi are values > 0; the axis is of their log10, ticks at
 * whole powers of ten when the range spans them. -1 when lo or hi is not
 * finite (or not > 0 for log).
 */
int plot_axis_make(double lo, double hi, int max_ticks, int log, struct plot_axis *ax);
/* A tick's label, short ("0.25", "1e+06", "-3"); the value is a log10 on
 * a log axis. */
void plot_tick_label(const struct plot_axis *ax, double t, char *out, size_t outsz);

struct plot_series {
	const double	*x;	/* increasing */
	const double	*y;
	size_t		 n;
};

struct plot_opts {
	int		 width, height;	/* the whole plot in cells, labels included */
	int		 utf8;		/* braille and box drawing; else ASCII */
	int		 log_y;		/* a log scale (values <= 0 are gaps) */
	const char	*x_label;	/* a line of its own under the x axis, at
					 * the right ("epoch"), or NULL */
	const char	*marks;		/* NULL: dots (braille or ASCII); else
					 * series k is drawn with marks[k], one
					 * a cell, the last one drawn in a cell
					 * showing (several runs told apart) */
};

/*
 * The plot of the series (several share the axes) as height lines of at
 * most width columns each, each ending in '\n', no trailing blanks (caller
 * frees). NULL when no series has a value to draw or the size is too
 * small (width < 20, fewer than 3 rows left to draw in), or more series
 * than marks (at most PLOT_MAX_SERIES) when marks are asked.
 */
char *plot_render(const struct plot_series *s, size_t ns, const struct plot_opts *o);

#endif

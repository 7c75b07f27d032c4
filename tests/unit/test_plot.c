/* The text plot's axes and scaling: what a user reads off the ticks, for
 * the shapes a run's metrics take (constant, one point, negative, NaN,
 * huge ranges), and the drawing in braille and in ASCII. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/plot.h"

/* Every tick inside the axis, increasing, evenly spaced. */
static void expect_sane(const struct plot_axis *ax, double lo, double hi)
{
	int i;

	cr_assert_geq(ax->nticks, 2);
	cr_assert_leq(ax->nticks, PLOT_MAX_TICKS);
	cr_expect(ax->lo < ax->hi, "%g < %g", ax->lo, ax->hi);
	cr_expect_leq(ax->lo, lo, "the axis starts at %g, below the data's %g", ax->lo, lo);
	cr_expect_geq(ax->hi, hi, "the axis ends at %g, above the data's %g", ax->hi, hi);
	for (i = 0; i < ax->nticks; i++) {
		cr_expect(isfinite(ax->tick[i]));
		cr_expect(ax->tick[i] >= ax->lo && ax->tick[i] <= ax->hi);
		if (i > 0)
			cr_expect_gt(ax->tick[i], ax->tick[i - 1]);
	}
}

Test(plot, ticks_are_round_numbers_covering_the_data)
{
	struct plot_axis ax;
	char l[32];

	cr_assert_eq(plot_axis_make(0.13, 2.27, 6, 0, &ax), 0);
	expect_sane(&ax, 0.13, 2.27);
	cr_expect_float_eq(ax.lo, 0, 1e-12);
	cr_expect_float_eq(ax.hi, 2.5, 1e-12);
	cr_expect_float_eq(ax.tick[1], 0.5, 1e-12, "steps of 0.5");
	plot_tick_label(&ax, ax.tick[1], l, sizeof(l));
	cr_expect_str_eq(l, "0.5");
}

Test(plot, a_constant_series_gets_a_range_around_its_value)
{
	struct plot_axis ax;

	cr_assert_eq(plot_axis_make(0.7, 0.7, 5, 0, &ax), 0);
	expect_sane(&ax, 0.7, 0.7);
	cr_expect(ax.hi - ax.lo < 1, "a tenth each way, not [0, 1e308]: [%g, %g]", ax.lo, ax.hi);
	cr_assert_eq(plot_axis_make(0, 0, 5, 0, &ax), 0);
	expect_sane(&ax, 0, 0);
	cr_assert_eq(plot_axis_make(-5e-9, -5e-9, 5, 0, &ax), 0);
	expect_sane(&ax, -5e-9, -5e-9);
}

Test(plot, negative_values_and_zero_read_as_such)
{
	struct plot_axis ax;
	char l[32];
	int i, zero = 0;

	cr_assert_eq(plot_axis_make(-3.2, 1.1, 6, 0, &ax), 0);
	expect_sane(&ax, -3.2, 1.1);
	for (i = 0; i < ax.nticks; i++) {
		plot_tick_label(&ax, ax.tick[i], l, sizeof(l));
		cr_expect(strstr(l, "e-1") == NULL, "a rounding error shown: %s", l);
		zero += strcmp(l, "0") == 0;
	}
	cr_expect_eq(zero, 1, "zero is a tick, written 0");
	plot_tick_label(&ax, ax.tick[0], l, sizeof(l));
	cr_expect_eq(l[0], '-');
}

Test(plot, huge_and_tiny_ranges_still_give_finite_ticks)
{
	struct plot_axis ax;
	char l[32];

	cr_assert_eq(plot_axis_make(-DBL_MAX, DBL_MAX, 6, 0, &ax), 0);
	expect_sane(&ax, -DBL_MAX, DBL_MAX);
	cr_assert_eq(plot_axis_make(1e-300, 1e300, 6, 0, &ax), 0);
	expect_sane(&ax, 1e-300, 1e300);
	plot_tick_label(&ax, ax.tick[ax.nticks - 1], l, sizeof(l));
	cr_expect_leq(strlen(l), 9, "%s", l);
	cr_assert_eq(plot_axis_make(1000, 1000.000001, 6, 0, &ax), 0);
	expect_sane(&ax, 1000, 1000.000001);
	cr_assert_eq(plot_axis_make(1e-300, 1e300, 8, 1, &ax), 0, "a log axis over 600 decades");
	expect_sane(&ax, -300, 300);
	cr_expect_eq(plot_axis_make(NAN, 1, 5, 0, &ax), -1);
	cr_expect_eq(plot_axis_make(1, INFINITY, 5, 0, &ax), -1);
	cr_expect_eq(plot_axis_make(0, 1, 5, 1, &ax), -1, "log of 0");
}

Test(plot, a_log_axis_ticks_whole_powers_of_ten)
{
	struct plot_axis ax;
	char l[32];

	cr_assert_eq(plot_axis_make(0.003, 25, 6, 1, &ax), 0);
	expect_sane(&ax, log10(0.003), log10(25));
	plot_tick_label(&ax, ax.tick[0], l, sizeof(l));
	cr_expect_str_eq(l, "0.001");
	plot_tick_label(&ax, ax.tick[ax.nticks - 1], l, sizeof(l));
	cr_expect_str_eq(l, "100");
}

Test(plot, the_range_skips_nan_and_infinities)
{
	double v[] = { NAN, 2, INFINITY, -1, -INFINITY, 0 }, lo, hi;

	cr_assert_eq(plot_range(v, 6, 0, &lo, &hi), 0);
	cr_expect_float_eq(lo, -1, 0);
	cr_expect_float_eq(hi, 2, 0);
	cr_assert_eq(plot_range(v, 6, 1, &lo, &hi), 0);
	cr_expect_float_eq(lo, 2, 0, "positive only (a log scale)");
	cr_expect_eq(plot_range(v, 1, 0, &lo, &hi), -1, "NaN alone: nothing to draw");
}

/* Lines of a rendered plot. */
static int nlines(const char *p)
{
	int n = 0;

	for (; *p; p++)
		n += *p == '\n';
	return n;
}

/* The column (in characters, UTF-8 decoded) of row r's non-blank
 * plot cells: a mask of where something is drawn. */
static void row_cells(const char *p, int r, int from, char *mask, int w)
{
	int col = 0;

	while (r-- > 0)
		p = strchr(p, '\n') + 1;
	memset(mask, ' ', (size_t)w);
	while (*p && *p != '\n') {
		int mark = (unsigned char)*p == 0xE2 && (unsigned char)p[1] == 0xA0 ? p[2] != (char)0x80
		    : *p != ' ';
		if ((unsigned char)*p == 0xE2 && (unsigned char)p[1] >= 0xA0 && (unsigned char)p[1] <= 0xA3)
			mark = 1;
		if (col >= from && col - from < w)
			mask[col - from] = mark ? '#' : ' ';
		p += (unsigned char)*p >= 0xE0 ? 3 : 1;
		col++;
	}
}

Test(plot, braille_where_utf8_ascii_otherwise_with_axes_and_values)
{
	double x[] = { 1, 2, 3, 4, 5 }, y[] = { 2.3, 1.6, 1.1, 0.8, 0.55 };
	struct plot_series s = { x, y, 5 };
	struct plot_opts o = { .width = 60, .height = 12, .utf8 = 1, .x_label = "epoch" };
	char *u = plot_render(&s, 1, &o), *a;
	size_t i;

	cr_assert_not_null(u);
	cr_expect_eq(nlines(u), 12, "%s", u);
	cr_expect(strstr(u, "\xe2\x94\xa4") != NULL, "y ticks drawn:\n%s", u);
	cr_expect(strstr(u, "\xe2\x94\x94") != NULL, "the corner:\n%s", u);
	cr_expect(strstr(u, "epoch") != NULL, "%s", u);
	cr_expect(strstr(u, "2.5") != NULL, "the top tick's value:\n%s", u);
	cr_expect(strstr(u, "0.5 \xe2\x94\xa4") != NULL, "the bottom tick's value:\n%s", u);
	cr_expect(strstr(u, "\xe2\xa0\x89") != NULL || strstr(u, "\xe2\xa0\x91") != NULL,
	    "braille dots:\n%s", u);
	o.utf8 = 0;
	a = plot_render(&s, 1, &o);
	cr_assert_not_null(a);
	for (i = 0; a[i]; i++)
		cr_assert((unsigned char)a[i] < 0x80, "ASCII only, byte %zu:\n%s", i, a);
	cr_expect(strstr(a, "+---") != NULL, "%s", a);
	cr_expect(strstr(a, "epoch") != NULL, "%s", a);
	free(u), free(a);
}

Test(plot, nan_is_a_gap_and_one_point_is_a_dot)
{
	double x[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	double y[] = { 1, 1, 1, 1, NAN, NAN, 1, 1, 1, 1 };
	struct plot_series s = { x, y, 10 };
	struct plot_opts o = { .width = 52, .height = 7, .utf8 = 0 };
	char mask[64], *p = plot_render(&s, 1, &o);
	int r, gap = 0, drawn = 0, c;

	cr_assert_not_null(p);
	/* The constant 1 is drawn on one row, with a hole where 5 and 6 are. */
	for (r = 0; r < 5; r++) {
		int n = 0;
		row_cells(p, r, 0, mask, 52);
		for (c = 0; c < 52; c++)
			n += mask[c] == '#';
		if (n > 10) {
			drawn = 1;
			mask[51] = '\0';
			gap = strstr(mask, "#   ") != NULL || strstr(mask, "#  ") != NULL;
		}
	}
	cr_expect(drawn, "%s", p);
	cr_expect(gap, "a gap where the NaN are:\n%s", p);
	free(p);
	{
		double x1 = 7, y1 = -0.5;
		struct plot_series one = { &x1, &y1, 1 };
		p = plot_render(&one, 1, &o);
		cr_assert_not_null(p, "one point is drawn");
		cr_expect(strstr(p, "-0.5") != NULL, "its value on the axis:\n%s", p);
		cr_expect(strstr(p, "7") != NULL, "its epoch:\n%s", p);
		free(p);
	}
	{
		double xn[] = { 1, 2 }, yn[] = { NAN, INFINITY };
		struct plot_series none = { xn, yn, 2 };
		cr_expect_null(plot_render(&none, 1, &o), "nothing finite: no plot");
	}
	o.width = 10;
	cr_expect_null(plot_render(&s, 1, &o), "too narrow");
}

/* Runs compared: each series with its own mark on shared axes, the higher
 * run above the lower, both in the same locale-free marks; more series
 * than marks is refused. */
Test(plot, several_runs_share_the_axes_each_with_its_own_mark)
{
	double x[] = { 1, 2, 3, 4, 5 };
	double hi[] = { 10, 9, 8, 7, 6 }, lo[] = { 2, 1.5, NAN, 1.2, 1 };
	struct plot_series s[] = { { x, hi, 5 }, { x, lo, 5 } };
	struct plot_opts o = { .width = 50, .height = 14, .utf8 = 1, .marks = PLOT_MARKS };
	char *p = plot_render(s, 2, &o), *line, *o_at = NULL, *x_at = NULL;
	int row = 0, o_row = -1, x_row = -1;

	cr_assert_not_null(p);
	cr_expect(strstr(p, "\xe2\xa0") == NULL && strstr(p, "\xe2\xa1") == NULL,
	    "marks, not braille:\n%s", p);
	for (line = p; *line; row++) {
		char *nl = strchr(line, '\n');
		*nl = '\0';
		if (o_row < 0 && (o_at = strchr(line, 'o')) != NULL)
			o_row = row;
		if (x_row < 0 && (x_at = strchr(line, 'x')) != NULL)
			x_row = row;
		*nl = '\n';
		line = nl + 1;
	}
	cr_expect(o_row >= 0 && x_row >= 0, "both runs drawn:\n%s", p);
	cr_expect(o_row < x_row, "the first run (10 to 6) above the second (2 to 1):\n%s", p);
	cr_expect(strstr(p, "10") != NULL && strstr(p, "0 \xe2\x94\xa4") != NULL,
	    "one y axis for both, 0 to 10:\n%s", p);
	free(p);
	o.marks = "o";
	cr_expect_null(plot_render(s, 2, &o), "two series, one mark");
	o.marks = PLOT_MARKS;
	o.utf8 = 0;
	p = plot_render(s, 2, &o);
	cr_assert_not_null(p);
	cr_expect(strchr(p, 'o') != NULL && strchr(p, 'x') != NULL, "%s", p);
	free(p);
}

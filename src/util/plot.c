#include "util/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

int plot_range(const double *v, size_t n, int positive_only, double *lo, double *hi)
{
	size_t i;
	int any = 0;

	for (i = 0; i < n; i++) {
		if (!isfinite(v[i]) || (positive_only && !(v[i] > 0)))
			continue;
		if (!any || v[i] < *lo)
			*lo = v[i];
		if (!any || v[i] > *hi)
			*hi = v[i];
		any = 1;
	}
	return any ? 0 : -1;
}

/* 1, 2, 5 or 10 times the power of ten at or below raw. */
static double nice_step(double raw)
{
	double mag = pow(10, floor(log10(raw))), r = raw / mag;

	return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

/* The ends and the middle: for a range too wide to step through. */
static void ends_only(struct plot_axis *ax)
{
	ax->tick[0] = ax->lo;
	ax->tick[1] = ax->lo / 2 + ax->hi / 2;
	ax->tick[2] = ax->hi;
	ax->nticks = 3;
}

int plot_axis_make(double lo, double hi, int max_ticks, int log, struct plot_axis *ax)
{
	double step, nlo, nhi;
	int i, n;

	memset(ax, 0, sizeof(*ax));
	if (!isfinite(lo) || !isfinite(hi) || (log && (!(lo > 0) || !(hi > 0))))
		return -1;
	if (lo > hi) {
		double t = lo;
		lo = hi;
		hi = t;
	}
	if (max_ticks < 2)
		max_ticks = 2;
	if (max_ticks > PLOT_MAX_TICKS)
		max_ticks = PLOT_MAX_TICKS;
	ax->log = log;
	if (log) {
		lo = log10(lo);
		hi = log10(hi);
	}
	if (lo == hi) {
		/* A constant: a range around it, a tenth of it each way. */
		double d = fabs(lo) * 0.1;
		if (!(d > 0) || log)
			d = log ? 0.5 : 1;
		lo -= d;
		hi += d;
	}
	ax->lo = lo;
	ax->hi = hi;
	if (!isfinite(hi - lo) || !isfinite((hi - lo) / (max_ticks - 1)) ||
	    (hi - lo) / (max_ticks - 1) < fabs(hi) * 1e-12 + 1e-300) {
		ends_only(ax);
		return 0;
	}
	step = nice_step((hi - lo) / (max_ticks - 1));
	if (log && hi - lo >= 1 && step < 1)
		step = 1;	/* whole powers of ten */
	for (;;) {
		nlo = floor(lo / step) * step;
		nhi = ceil(hi / step) * step;
		if (!isfinite(nlo) || !isfinite(nhi) || !isfinite(step) || step <= 0) {
			ends_only(ax);
			return 0;
		}
		n = (int)floor((nhi - nlo) / step + 0.5) + 1;
		if (n <= max_ticks)
			break;
		step = nice_step(step * 1.5);
	}
	ax->lo = nlo;
	ax->hi = nhi;
	for (i = 0; i < n; i++) {
		double t = nlo + i * step;
		if (fabs(t) < step * 1e-9)
			t = 0;		/* not -2.7e-17 */
		ax->tick[i] = t;
	}
	ax->nticks = n;
	return 0;
}

void plot_tick_label(const struct plot_axis *ax, double t, char *out, size_t outsz)
{
	double v = ax->log ? pow(10, t) : t;

	snprintf(out, outsz, "%.4g", v);
	if (strlen(out) > 9)
		snprintf(out, outsz, "%.2g", v);
}

/* Where v falls in [lo, hi], 0 to 1 (halves first: hi - lo may overflow). */
static double frac(double v, double lo, double hi)
{
	double f = (v / 2 - lo / 2) / (hi / 2 - lo / 2);

	return f < 0 ? 0 : f > 1 ? 1 : f;
}

struct canvas {
	unsigned char	*dot;	/* dw x dh, 0: none; else the series' index plus one */
	int		 dw, dh;
	unsigned char	 pen;	/* what set_dot writes */
};

static void set_dot(struct canvas *c, int x, int y)
{
	if (x >= 0 && x < c->dw && y >= 0 && y < c->dh)
		c->dot[(size_t)y * (size_t)c->dw + (size_t)x] = c->pen;
}

static void line(struct canvas *c, int x0, int y0, int x1, int y1)
{
	int dx = abs(x1 - x0), dy = -abs(y1 - y0);
	int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy;

	for (;;) {
		int e2 = 2 * err;
		set_dot(c, x0, y0);
		if (x0 == x1 && y0 == y1)
			break;
		if (e2 >= dy) {
			err += dy;
			x0 += sx;
		}
		if (e2 <= dx) {
			err += dx;
			y0 += sy;
		}
	}
}

/* A cell of the canvas as its character (UTF-8 braille, or ASCII; with
 * marks, one dot a cell: the mark of the series drawn there last). */
static void put_cell(struct buf *b, const struct canvas *c, int cx, int cy, int utf8,
    const char *marks)
{
	static const unsigned char braille[4][2] = {
		{ 0x01, 0x08 }, { 0x02, 0x10 }, { 0x04, 0x20 }, { 0x40, 0x80 },
	};
	int x, y, bits = 0, count = 0;

	if (marks != NULL) {
		unsigned char d = c->dot[(size_t)cy * (size_t)c->dw + (size_t)cx];
		buf_addc(b, d == 0 ? ' ' : marks[d - 1]);
		return;
	}
	if (utf8) {
		for (y = 0; y < 4; y++)
			for (x = 0; x < 2; x++)
				if (c->dot[(size_t)(cy * 4 + y) * (size_t)c->dw + (size_t)(cx * 2 + x)])
					bits |= braille[y][x];
		if (bits == 0) {
			buf_addc(b, ' ');
			return;
		}
		buf_addc(b, (char)0xE2);
		buf_addc(b, (char)(0x80 | ((0x2800 + bits) >> 6 & 0x3F)));
		buf_addc(b, (char)(0x80 | ((0x2800 + bits) & 0x3F)));
		return;
	}
	for (y = 0; y < 3; y++)
		if (c->dot[(size_t)(cy * 3 + y) * (size_t)c->dw + (size_t)cx]) {
			bits |= 1 << y;
			count++;
		}
	buf_addc(b, count == 0 ? ' ' : count > 1 ? '|' : bits == 1 ? '\'' : bits == 2 ? '-' : '.');
}

/* The line so far without its trailing blanks, then a newline. */
static void end_line(struct buf *b, size_t start)
{
	while (b->len > start && b->data[b->len - 1] == ' ')
		b->len--;
	buf_addc(b, '\n');
}

char *plot_render(const struct plot_series *s, size_t ns, const struct plot_opts *o)
{
	struct plot_axis xa, ya;
	struct canvas c;
	struct buf b;
	char lab[PLOT_MAX_TICKS][32];
	int tick_row[PLOT_MAX_TICKS];
	double xlo = 0, xhi = 0, ylo = 0, yhi = 0, lo, hi;
	int any_x = 0, any_y = 0, lw = 0, pw, ph, cx, cy, i, cpd = o->utf8 && !o->marks ? 2 : 1;
	int rpd = o->marks ? 1 : o->utf8 ? 4 : 3, next_free;
	size_t k, j, start;

	if (o->width < 20 || o->height < 5 || (o->marks != NULL && (ns > PLOT_MAX_SERIES ||
	    strlen(o->marks) < ns)))
		return NULL;
	for (k = 0; k < ns; k++) {
		if (plot_range(s[k].y, s[k].n, o->log_y, &lo, &hi) == 0) {
			ylo = any_y && ylo < lo ? ylo : lo;
			yhi = any_y && yhi > hi ? yhi : hi;
			any_y = 1;
		}
		if (plot_range(s[k].x, s[k].n, 0, &lo, &hi) == 0) {
			xlo = any_x && xlo < lo ? xlo : lo;
			xhi = any_x && xhi > hi ? xhi : hi;
			any_x = 1;
		}
	}
	ph = o->height - 2 - (o->x_label != NULL);
	if (ph < 3 || !any_x || !any_y || plot_axis_make(ylo, yhi, ph / 2 + 1, o->log_y, &ya) != 0)
		return NULL;
	for (i = 0; i < ya.nticks; i++) {
		plot_tick_label(&ya, ya.tick[i], lab[i], sizeof(lab[i]));
		if ((int)strlen(lab[i]) > lw)
			lw = (int)strlen(lab[i]);
	}
	pw = o->width - lw - 2;
	if (pw < 8 || plot_axis_make(xlo, xhi, pw / 10 + 1, 0, &xa) != 0)
		return NULL;
	c.dw = pw * cpd;
	c.dh = ph * rpd;
	c.dot = xcalloc((size_t)c.dw * (size_t)c.dh, 1);
	for (k = 0; k < ns; k++) {
		int have = 0, px = 0, py = 0;
		c.pen = (unsigned char)(o->marks != NULL ? k + 1 : 1);
		for (j = 0; j < s[k].n; j++) {
			double y = s[k].y[j];
			int x1, y1;
			if (!isfinite(y) || !isfinite(s[k].x[j]) || (o->log_y && !(y > 0))) {
				have = 0;	/* a gap */
				continue;
			}
			if (o->log_y)
				y = log10(y);
			x1 = (int)lround(frac(s[k].x[j], xa.lo, xa.hi) * (c.dw - 1));
			y1 = (int)lround((1 - frac(y, ya.lo, ya.hi)) * (c.dh - 1));
			if (have)
				line(&c, px, py, x1, y1);
			else
				set_dot(&c, x1, y1);
			px = x1, py = y1, have = 1;
		}
	}
	for (i = 0; i < ya.nticks; i++)
		tick_row[i] = (int)lround((1 - frac(ya.tick[i], ya.lo, ya.hi)) * (c.dh - 1)) / rpd;
	buf_init(&b);
	for (cy = 0; cy < ph; cy++) {
		const char *label = "";
		int tick = 0;
		start = b.len;
		for (i = 0; i < ya.nticks; i++)
			if (tick_row[i] == cy) {
				label = lab[i];
				tick = 1;
			}
		buf_addf(&b, "%*s ", lw, label);
		buf_adds(&b, tick ? (o->utf8 ? "\xe2\x94\xa4" : "+") : (o->utf8 ? "\xe2\x94\x82" : "|"));
		for (cx = 0; cx < pw; cx++)
			put_cell(&b, &c, cx, cy, o->utf8, o->marks);
		end_line(&b, start);
	}
	/* The x axis, its ticks, then their labels (one that would touch the
	 * last is left out) and the axis's name, at its right end. */
	{
		int col[PLOT_MAX_TICKS];
		char xl[PLOT_MAX_TICKS][32];
		start = b.len;
		buf_addf(&b, "%*s ", lw, "");
		buf_adds(&b, o->utf8 ? "\xe2\x94\x94" : "+");
		for (i = 0; i < xa.nticks; i++)
			col[i] = (int)lround(frac(xa.tick[i], xa.lo, xa.hi) * (c.dw - 1)) / cpd;
		for (cx = 0; cx < pw; cx++) {
			int tick = 0;
			for (i = 0; i < xa.nticks; i++)
				tick |= col[i] == cx;
			buf_adds(&b, tick ? (o->utf8 ? "\xe2\x94\xac" : "+") : (o->utf8 ? "\xe2\x94\x80" : "-"));
		}
		end_line(&b, start);
		start = b.len;
		buf_addf(&b, "%*s", lw + 2, "");
		next_free = 0;
		for (i = 0; i < xa.nticks; i++) {
			int len, at;
			plot_tick_label(&xa, xa.tick[i], xl[i], sizeof(xl[i]));
			len = (int)strlen(xl[i]);
			at = col[i] - len / 2;
			if (at < 0)
				at = 0;
			if (at + len > pw)
				at = pw - len;
			if (at < next_free)
				continue;
			buf_addf(&b, "%*s%s", at - next_free, "", xl[i]);
			next_free = at + len + 1;
			if (next_free <= pw)
				buf_addc(&b, ' ');
			else
				next_free = at + len;
		}
		end_line(&b, start);
		if (o->x_label != NULL)
			buf_addf(&b, "%*s\n", lw + 2 + pw, o->x_label);
	}
	free(c.dot);
	return buf_detach(&b);
}

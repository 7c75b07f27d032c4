/*
 * make bench: drawing the curves of 10 runs of 5 000 epochs each (issue
 * 38): the time of one frame of util/plot's text plot at 200 x 50 cells,
 * braille, the median of 41 frames; once with every epoch drawn, once with
 * the points a record keeps of them (engine/store/series.h: at most 2 000 a
 * series, evenly thinned). Rows appended to $BENCH_RESULTS; no baseline:
 * nothing else draws them in a terminal. No cluster needed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/store/series.h"
#include "util/plot.h"
#include "util/xmalloc.h"

#define RUNS	10
#define EPOCHS	5000
#define FRAMES	41

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median time of one frame of s, in ms. */
static double frame_ms(const struct plot_series *s, size_t n)
{
	struct plot_opts o = { .width = 200, .height = 50, .utf8 = 1, .x_label = "epoch" };
	double t[FRAMES];
	int i;

	for (i = 0; i < FRAMES; i++) {
		double t0 = now_s();
		char *p = plot_render(s, n, &o);
		t[i] = (now_s() - t0) * 1e3;
		if (p == NULL) {
			fprintf(stderr, "bench_plot: nothing drawn\n");
			exit(1);
		}
		free(p);
	}
	qsort(t, FRAMES, sizeof(t[0]), cmp);
	return t[FRAMES / 2];
}

int main(void)
{
	static double x[RUNS][EPOCHS], y[RUNS][EPOCHS];
	struct plot_series all[RUNS], kept[RUNS];
	struct series_set sets[RUNS];
	double xs[RUNS][SERIES_MAX_POINTS + 1];
	const char *out = getenv("BENCH_RESULTS");
	double whole, thinned;
	FILE *f;
	int r, e;
	size_t k;

	for (r = 0; r < RUNS; r++) {
		series_set_init(&sets[r]);
		for (e = 0; e < EPOCHS; e++) {
			x[r][e] = e + 1;
			/* A loss going down with noise, a NaN now and then. */
			y[r][e] = e % 997 == 0 ? NAN : 2.5 * exp(-e / (800.0 + 100 * r)) +
			    0.02 * sin(e * 0.37 + r);
			series_set_add(&sets[r], "loss", e + 1, y[r][e], 1);
		}
		all[r] = (struct plot_series){ x[r], y[r], EPOCHS };
		for (k = 0; k < sets[r].s[0].n; k++)
			xs[r][k] = sets[r].s[0].epoch[k];
		kept[r] = (struct plot_series){ xs[r], sets[r].s[0].value, sets[r].s[0].n };
	}
	whole = frame_ms(all, RUNS);
	thinned = frame_ms(kept, RUNS);
	printf("plot: 10 runs x 5000 epochs, one 200x50 frame: %.2f ms (every epoch), %.2f ms "
	    "(as recorded, %zu points a run)\n", whole, thinned, sets[0].s[0].n);
	if (out != NULL && (f = fopen(out, "a")) != NULL) {
		fprintf(f, "plot frame, 10 runs x 5000 epochs\t%.2f\t\tms\n", whole);
		fprintf(f, "plot frame, 10 runs as recorded (2000 pts max)\t%.2f\t\tms\n", thinned);
		fclose(f);
	}
	for (r = 0; r < RUNS; r++)
		series_set_free(&sets[r]);
	return 0;
}

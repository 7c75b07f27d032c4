/*
 * The monitor, driven like a user drives it: the real binary in tmux, keys
 * in, screen text out, against the real test cluster. Each test names its
 * jobs uniquely and filters the list to them, since other tests share the
 * cluster's queue.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/xmalloc.h"

/* sbatch as the test user; returns the job id (caller frees). */
static char *sbatch(const char *opts, const char *script)
{
	char *cmd = xasprintf("sbatch --parsable %s --wrap %s", opts, script);
	char *id = rig_ssh_ok(cmd);
	free(cmd);
	cr_assert(atoi(id) > 0, "sbatch said '%s'", id);
	return id;
}

/* A folder of the shared storage for this test's logs. */
static char *test_dir(const char *name)
{
	const struct rig *r = rig_get();
	char *dir = xasprintf("%s/screen-tests/%s-%d", r->shared, name, (int)getpid());
	char *cmd = xasprintf("rm -rf %s && mkdir -p %s", dir, dir);
	free(rig_ssh_ok(cmd));
	free(cmd);
	return dir;
}

/* Show only the jobs whose row holds text. */
static void filter(struct screen *s, const char *text)
{
	screen_keys(s, "Escape");
	screen_keys(s, "/");
	screen_type(s, text);
	screen_keys(s, "Enter");
}

/* Every line of the screen fits its width: nothing drawn past the edge
 * and nothing left over from a bigger size. */
static void assert_fits(struct screen *s, int cols, int lines)
{
	char *text = screen_text(s);
	int n = 0;

	for (char *l = text; *l; n++) {
		size_t len = strcspn(l, "\n");
		cr_assert_leq((int)len, cols * 3, "line %d is longer than the screen", n);
		l += len + (l[len] == '\n');
	}
	cr_assert_leq(n, lines, "%d lines on a %d-line screen:\n%s", n, lines, text);
	free(text);
}

Test(screen, jobs_panes_cancel_marks_filter_resize_and_quit, .timeout = 240)
{
	char *dir = test_dir("basic");
	char opts[512], name_a[64], name_b[64], name_m[64];
	char *a, *b, *m1, *m2, *line, *cmd;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	int out_row, err_row, row;

	snprintf(name_a, sizeof(name_a), "scr%d-a", (int)getpid());
	snprintf(name_b, sizeof(name_b), "scr%d-b", (int)getpid());
	snprintf(name_m, sizeof(name_m), "scr%d-m", (int)getpid());
	/* a: held (Pending) until released; prints to both logs. */
	snprintf(opts, sizeof(opts), "--hold -J %s -t 5 -o %s/a.out -e %s/a.err", name_a, dir, dir);
	a = sbatch(opts, "'for i in 1 2 3 4 5 6; do echo out-line-$i; echo err-line-$i >&2; "
	    "sleep 1; done'");
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o /dev/null", name_b);
	b = sbatch(opts, "'sleep 300'");
	snprintf(opts, sizeof(opts), "-J %s1 -t 5 -o /dev/null", name_m);
	m1 = sbatch(opts, "'sleep 300'");
	snprintf(opts, sizeof(opts), "-J %s2 -t 5 -o /dev/null", name_m);
	m2 = sbatch(opts, "'sleep 300'");

	screen_open(&s, "basic", &so);
	/* The jobs appear with their states. */
	screen_wait_line(&s, 20, name_a, "Pending", NULL);
	screen_wait_line(&s, 20, name_b, "Running", NULL);
	screen_wait(&s, 5, "NAME", "STATE", "USED/LIMIT", "main.out", "main.err", NULL);

	/* The filter narrows the list to a. */
	filter(&s, name_a);
	screen_wait(&s, 5, "filter: ", NULL);
	line = screen_line_with(&s, name_b);
	cr_assert_null(line, "the filter still shows b: %s", line);
	cr_assert_null(screen_line_with(&s, name_m));
	screen_wait_line(&s, 5, name_a, "Pending", NULL);

	/* Pending -> Running, with each log in its own pane, -> Done. */
	cmd = xasprintf("scontrol release %s", a);
	free(rig_ssh_ok(cmd));
	free(cmd);
	screen_wait_line(&s, 20, name_a, "Running", NULL);
	screen_wait(&s, 20, "out-line-2", "err-line-2", NULL);
	out_row = screen_row_of(&s, " main.out ");
	err_row = screen_row_of(&s, " main.err ");
	cr_assert(out_row >= 0 && err_row > out_row, "panes at %d and %d", out_row, err_row);
	row = screen_row_of(&s, "out-line-2");
	cr_assert(row > out_row && row < err_row, "out-line-2 on row %d, outside main.out's pane "
	    "(%d..%d)", row, out_row, err_row);
	row = screen_row_of(&s, "err-line-2");
	cr_assert(row > err_row, "err-line-2 on row %d, outside main.err's pane (from %d)", row,
	    err_row);
	screen_wait_line(&s, 30, name_a, "Done", NULL);
	screen_wait(&s, 5, "out-line-6", "err-line-6", NULL);

	/* Cancel b through the dialog. */
	filter(&s, name_b);
	screen_wait_line(&s, 5, name_b, "Running", NULL);
	screen_keys(&s, "c");
	screen_wait(&s, 5, "Cancel 1 job?", "y/Enter: cancel them", NULL);
	screen_keys(&s, "y");
	screen_wait_line(&s, 20, b, "cancelled", NULL);
	screen_keys(&s, "Enter");
	screen_wait_line(&s, 20, name_b, "Canceled", NULL);

	/* Mark two and cancel both. */
	filter(&s, name_m);
	screen_wait_line(&s, 5, name_m, "1", "Running", NULL);
	screen_wait_line(&s, 5, name_m, "2", "Running", NULL);
	screen_keys(&s, "g");
	screen_keys(&s, "Space");
	screen_keys(&s, "Space");
	screen_keys(&s, "d");
	screen_keys(&s, "d");
	screen_wait(&s, 5, "Cancel 2 jobs?", NULL);
	screen_keys(&s, "Enter");
	screen_wait_line(&s, 20, m1, "cancelled", NULL);
	screen_wait_line(&s, 20, m2, "cancelled", NULL);
	screen_keys(&s, "Escape");
	screen_wait_line(&s, 20, "1 ", name_m, "Canceled", NULL);
	screen_wait_line(&s, 20, "2 ", name_m, "Canceled", NULL);

	/* Resize small, smaller, and back: no garbage at any size. */
	screen_resize(&s, 60, 15);
	screen_wait(&s, 5, "NAME", "STATE", "main.out", NULL);
	assert_fits(&s, 60, 15);
	screen_resize(&s, 50, 12);
	screen_wait(&s, 5, "taotop needs 60x15 at least (now 50x12)", NULL);
	screen_resize(&s, 120, 40);
	screen_wait(&s, 5, "USED/LIMIT", "main.err", NULL);
	cr_assert_null(screen_line_with(&s, "taotop needs"));
	assert_fits(&s, 120, 40);

	/* q gives the terminal back as it was: cooked mode, echo on. */
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_wait_line(&s, 2, "[taotop exited 0]", " icanon", " echo", NULL);
	cr_assert_null(screen_line_with(&s, "-icanon"));
	cr_assert_null(screen_line_with(&s, "-echo"));
	screen_close(&s);
	free(a), free(b), free(m1), free(m2), free(dir);
}

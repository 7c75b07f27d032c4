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
#include <locale.h>
#include <time.h>
#include <wchar.h>

#include "engine/store/store.h"
#include "integration/helper_rig.h"
#include "integration/helper_screen.h"
#include "util/file.h"
#include "util/xmalloc.h"

/* A private sshd a test froze must not stay frozen if the test fails. */
static struct rig_sshd *private_sshd;

/* And a relay a test stalled must not stay. */
static struct rig_relay *relay_on;

static void cleanup(void)
{
	screen_kill_all();
	if (private_sshd != NULL)
		rig_sshd_stop(private_sshd);
	if (relay_on != NULL)
		rig_relay_stop(relay_on);
}

TestSuite(screen, .fini = cleanup);


/* The layout is whole at this size: the header on the first row, the two
 * panes' titles in order below the jobs, the status bar and the message
 * line (the filter is on) on the last two rows, and every line within the
 * width (cells, as the capture gives them). Leftovers of another size, or
 * a part drawn at the wrong place, break one of these. */
static void assert_layout(struct screen *s, int cols, int lines)
{
	char *text = screen_text(s), *l;
	int n = 0, out = screen_row_of(s, " main.out "), err = screen_row_of(s, " main.err ");

	setlocale(LC_ALL, "C.UTF-8");
	for (l = text; *l; n++) {
		size_t len = strcspn(l, "\n");
		char *line = strndup(l, len);
		size_t cells = mbstowcs(NULL, line, 0);
		cr_assert_leq((int)cells, cols, "line %d is wider than the screen: %s", n, line);
		free(line);
		l += len + (l[len] == '\n');
	}
	cr_assert_leq(n, lines, "%d lines on a %d-line screen:\n%s", n, lines, text);
	cr_assert_eq(screen_row_of(s, "NAME"), 0, "the header is not on the first row:\n%s", text);
	cr_assert(out > 0 && err > out && err < lines - 2, "pane titles at %d and %d:\n%s", out,
	    err, text);
	cr_assert_eq(screen_row_of(s, " rig: "), lines - 2, "the status bar moved:\n%s", text);
	cr_assert_eq(screen_row_of(s, "filter: "), lines - 1, "the message line moved:\n%s", text);
	free(text);
}

Test(screen, jobs_panes_cancel_marks_filter_resize_and_quit, .timeout = 240)
{
	char *dir = screen_shared_dir("basic");
	char opts[512], name_a[64], name_b[64], name_m[64];
	char *a, *b, *m1, *m2, *line, *cmd;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	int out_row, err_row, row;

	snprintf(name_a, sizeof(name_a), "scr%d-a", rig_uniq());
	snprintf(name_b, sizeof(name_b), "scr%d-b", rig_uniq());
	snprintf(name_m, sizeof(name_m), "scr%d-m", rig_uniq());
	/* a: held (Pending) until released; prints to both logs. */
	snprintf(opts, sizeof(opts), "--hold -J %s -t 5 -o %s/a.out -e %s/a.err", name_a, dir, dir);
	a = rig_sbatch(opts, "'for i in 1 2 3 4 5 6; do echo out-line-$i; echo err-line-$i >&2; "
	    "sleep 1; done'");
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o /dev/null", name_b);
	b = rig_sbatch(opts, "'sleep 300'");
	snprintf(opts, sizeof(opts), "-J %s1 -t 5 -o /dev/null", name_m);
	m1 = rig_sbatch(opts, "'sleep 300'");
	snprintf(opts, sizeof(opts), "-J %s2 -t 5 -o /dev/null", name_m);
	m2 = rig_sbatch(opts, "'sleep 300'");

	screen_open(&s, "basic", &so);
	/* The jobs appear with their states. */
	screen_wait_line(&s, 20, name_a, "Pending", NULL);
	screen_wait_line(&s, 20, name_b, "Running", NULL);
	screen_wait(&s, 5, "NAME", "STATE", "USED/LIMIT", "main.out", "main.err", NULL);

	/* The filter narrows the list to a. */
	screen_filter(&s, name_a);
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
	screen_filter(&s, name_b);
	screen_wait_line(&s, 5, name_b, "Running", NULL);
	screen_keys(&s, "c");
	screen_wait(&s, 5, "Cancel 1 job?", "y/Enter: cancel them", NULL);
	screen_keys(&s, "y");
	screen_wait_line(&s, 20, b, "cancelled", NULL);
	screen_keys(&s, "Enter");
	screen_wait_line(&s, 20, name_b, "Canceled", NULL);

	/* Mark two and cancel both. */
	screen_filter(&s, name_m);
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
	{
		/* Each outcome names its job once: "✓ 2669: cancelled", never
		 * "2669: 2669: cancelled". */
		const char *ids[] = { m1, m2 };
		char *shown = screen_text(&s);
		for (size_t k = 0; k < 2; k++) {
			char *twice = xasprintf("%s: %s:", ids[k], ids[k]), *once;
			once = xasprintf("%s: cancelled", ids[k]);
			cr_expect(strstr(shown, once) != NULL && strstr(shown, twice) == NULL,
			    "the outcome of %s:\n%s", ids[k], shown);
			free(twice), free(once);
		}
		free(shown);
	}
	screen_keys(&s, "Escape");
	screen_wait_line(&s, 20, "1 ", name_m, "Canceled", NULL);
	screen_wait_line(&s, 20, "2 ", name_m, "Canceled", NULL);

	/* Resize small, smaller, and back: no garbage at any size. */
	screen_resize(&s, 60, 15);
	screen_wait(&s, 5, "NAME", "STATE", "main.out", NULL);
	assert_layout(&s, 60, 15);
	screen_resize(&s, 50, 12);
	screen_wait(&s, 5, "taotop needs 60x15 at least (now 50x12)", NULL);
	screen_resize(&s, 120, 40);
	screen_wait(&s, 5, "USED/LIMIT", "main.err", NULL);
	cr_assert_null(screen_line_with(&s, "taotop needs"));
	assert_layout(&s, 120, 40);

	/* q gives the terminal back as it was: cooked mode, echo on. */
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_wait_line(&s, 5, "[taotop exited 0]", " icanon", " echo", NULL);
	cr_assert_null(screen_line_with(&s, "-icanon"));
	cr_assert_null(screen_line_with(&s, "-echo"));
	screen_close(&s);
	free(a), free(b), free(m1), free(m2), free(dir);
}

/* Write bytes to a file the job can read. */
static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rig_local("chmod 644 %s", path), 0);
}

Test(screen, a_hostile_log_cannot_act_on_the_terminal, .timeout = 180)
{
	static const char head[] =
	    "BEFORE-HOSTILE\n"
	    "\x1b[2J\x1b[H\x1b[10;10HMOVED-TEXT\n"			/* clear, home, cursor move */
	    "\x1b]0;PWNED-TITLE\x07\x1b]2;PWNED-TWO\x1b\\title-done\n"	/* window titles */
	    "\x1b]52;c;Q0xJUEJPQVJELVBXTkVE\x07" "clip-done\n"		/* OSC 52 clipboard */
	    "\x1bP+q544e\x1b\\dcs-done\n"				/* DCS */
	    "\x1b[?2004h\x1b[?1049l\x1b[?25hmodes-done\n"		/* paste, alt screen, cursor */
	    "nul:\0\0:end\n"						/* NULs */
	    "bad:\xff\xfe\xc3(:utf8\n";					/* invalid UTF-8 */
	const size_t big = 5 * 1024 * 1024;
	char *dir = screen_shared_dir("hostile"), *data, *path, *id, *title0, *title1, *buffers, name[64];
	char opts[512], script[512];
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	size_t n = sizeof(head) - 1;

	data = xmalloc(n + big + 64);
	memcpy(data, head, n);
	memcpy(data + n, "LONG", 4);
	memset(data + n + 4, 'x', big);
	n += 4 + big;
	n += (size_t)sprintf(data + n, "\nAFTER-HOSTILE\n");
	path = xasprintf("%s/hostile.bin", dir);
	write_file(path, data, n);
	free(data);

	snprintf(name, sizeof(name), "scr%d-hostile", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o %s/h.out -e %s/h.err", name, dir, dir);
	snprintf(script, sizeof(script), "'cat %s; sleep 120'", path);
	id = rig_sbatch(opts, script);

	screen_open(&s, "hostile", &so);
	title0 = screen_tmux(&s, "display -p -t 0 '#{pane_title}'");
	screen_filter(&s, name);
	screen_wait_line(&s, 20, name, "Running", NULL);
	screen_wait(&s, 30, "BEFORE-HOSTILE", "AFTER-HOSTILE", NULL);
	/* Harmless text: what the escapes wrapped is shown, the escapes not. */
	screen_wait(&s, 5, "MOVED-TEXT", "title-done", "clip-done", "dcs-done", "modes-done",
	    "nul:^@^@:end", "bad:\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(:utf8", "LONGxxxxxxxx", NULL);
	cr_assert_null(screen_line_with(&s, "PWNED"));
	/* No effect on the terminal: title, clipboard, layout, cursor. */
	title1 = screen_tmux(&s, "display -p -t 0 '#{pane_title}'");
	cr_assert_str_eq(title1, title0, "the title changed");
	buffers = screen_tmux(&s, "list-buffers");
	cr_assert_str_eq(buffers, "", "an OSC 52 write reached the clipboard: %s", buffers);
	cr_assert_eq(screen_row_of(&s, "NAME"), 0, "the header moved");
	cr_assert_eq(screen_row_of(&s, "?:help"), 39, "the hint line moved");
	{
		char *cur = screen_tmux(&s, "display -p -t 0 '#{cursor_flag} #{alternate_on}'");
		cr_assert_str_eq(cur, "0 1\n", "cursor shown or alternate screen left: %s", cur);
		free(cur);
	}
	/* The 5 MB line did not stall anything: keys are answered. */
	screen_keys(&s, "?");
	screen_wait(&s, 5, "taotop keys", NULL);
	screen_keys(&s, "Escape");
	/* Wrapped, the long line is cut with what is left out said. */
	screen_keys(&s, "Tab");
	screen_keys(&s, "w");
	screen_keys(&s, "z");
	screen_wait(&s, 5, "more bytes]", "AFTER-HOSTILE", NULL);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	free(title0), free(title1), free(buffers), free(path), free(id), free(dir);
}

Test(screen, a_frozen_server_never_freezes_the_keys, .timeout = 180)
{
	static struct rig_sshd d;	/* the suite's fini may need it */
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	char name[64], opts[256], *a, *b, *cmd, *title, polled_msg[96];

	rig_sshd_start(&d, 2236, 0);
	snprintf(polled_msg, sizeof(polled_msg), "rig: %s, polled", d.hosts);
	private_sshd = &d;
	so.hosts = d.hosts;
	so.known_hosts = d.known_hosts;
	snprintf(name, sizeof(name), "scr%d-frz", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s-a -t 5 -o /dev/null", name);
	a = rig_sbatch(opts, "'sleep 300'");
	snprintf(opts, sizeof(opts), "-J %s-b -t 5 -o /dev/null", name);
	b = rig_sbatch(opts, "'sleep 300'");

	screen_open(&s, "frozen", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 20, name, "-a", "Running", NULL);
	screen_wait_line(&s, 20, name, "-b", "Running", NULL);
	screen_wait(&s, 30, "polled", NULL);

	rig_sshd_signal_sessions(&d, SIGSTOP);
	/* A key brings polling back to its base rate, so the next poll meets
	 * the frozen server within seconds. */
	screen_keys(&s, "G");
	screen_wait(&s, 20, "rig: not answering for", NULL);
	/* Keys still work: the selection moves (the panes follow the newly
	 * selected job, their titles say which) and help opens. */
	{
		char *at_end = screen_wait_line_changed(&s, 10, " main.out  ", NULL);
		screen_keys(&s, "g");
		title = screen_wait_line_changed(&s, 10, " main.out  ", at_end);
		screen_keys(&s, "j");
		free(screen_wait_line_changed(&s, 10, " main.out  ", title));
		free(at_end);
	}
	screen_keys(&s, "?");
	screen_wait(&s, 10, "taotop keys", NULL);
	screen_keys(&s, "Escape");
	screen_wait_gone(&s, 10, "taotop keys");
	screen_wait(&s, 5, "rig: not answering for", NULL);

	rig_sshd_signal_sessions(&d, SIGCONT);
	screen_wait(&s, 40, polled_msg, NULL);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 15), 0);
	screen_close(&s);
	cmd = xasprintf("scancel %s %s", a, b);
	free(rig_ssh_ok(cmd));
	free(cmd);
	rig_sshd_stop(&d);
	private_sshd = NULL;
	rig_sshd_free(&d);
	free(title), free(a), free(b);
}

/*
 * The link stalls (nothing moves either way, the connection kept): what was
 * shown stays, saying how old it is; what is asked shows a spinner; keys,
 * the filter and dialogs answer at once; and when the link moves again
 * everything catches up by itself.
 */
Test(screen, a_stalled_link_keeps_the_panes_with_their_age_and_keys_answer, .timeout = 180)
{
	static struct rig_relay l;	/* the suite's fini may need it */
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	char name[64], opts[256], ja[80], jb[80], *dir = screen_shared_dir("stalled"), *id[2], *cmd;
	int k;

	rig_relay_start(&l, 2295, 25);
	relay_on = &l;
	so.hosts = l.hosts;
	so.known_hosts = l.known_hosts;
	snprintf(name, sizeof(name), "scr%d-stl", rig_uniq());
	snprintf(ja, sizeof(ja), "%s-a", name);
	snprintf(jb, sizeof(jb), "%s-b", name);
	for (k = 0; k < 2; k++) {
		char script[128];
		snprintf(opts, sizeof(opts), "-J %s -t 5 -o %s/%c.out", k ? jb : ja, dir, "ab"[k]);
		snprintf(script, sizeof(script), "'for i in $(seq 1 40); do echo %c-LINE-$i; "
		    "sleep 0.5; done; sleep 300'", "AB"[k]);
		id[k] = rig_sbatch(opts, script);
	}

	/* One job at a time, by the filter: its logs are the ones followed
	 * (b's never, until the link stalls). */
	screen_open(&s, "stalled", &so);
	screen_filter(&s, ja);
	screen_wait_line(&s, 30, ja, "Running", NULL);
	screen_wait(&s, 30, "A-LINE-3", NULL);

	rig_relay_set(&l, "stall");
	/* A key: polls at their base rate, so one meets the stall at once. */
	screen_keys(&s, "C-l");
	screen_wait(&s, 20, "rig: not answering for", NULL);
	/* The lines stay, their pane says how old they are. */
	screen_wait(&s, 10, " s old", NULL);
	{
		char *shown = screen_line_with(&s, "A-LINE-");
		cr_assert_not_null(shown, "the pane went blank");
		free(shown);
	}
	/* A job never looked at: loading, a spinner and the seconds. */
	screen_filter(&s, jb);
	screen_wait_line(&s, 5, "loading ", " s", NULL);
	cr_assert_null(screen_line_with(&s, "A-LINE-"), "the other job's lines under its title");
	/* Back: its lines at once, not a blank pane. */
	screen_filter(&s, ja);
	screen_wait(&s, 5, "A-LINE-", " s old", NULL);
	/* The filter, help: answered while nothing moves. */
	screen_keys(&s, "/");
	screen_type(&s, "zzz-none");
	screen_wait(&s, 5, "zzz-none_   (Enter keeps", NULL);
	screen_filter(&s, ja);
	screen_keys(&s, "?");
	screen_wait(&s, 5, "taotop keys", NULL);
	screen_keys(&s, "Escape");
	screen_wait_line(&s, 5, ja, "Running", NULL);

	rig_relay_set(&l, "pass");
	screen_wait(&s, 40, ", polled ", NULL);
	screen_filter(&s, jb);
	screen_wait(&s, 40, "B-LINE-", NULL);
	cr_assert_null(screen_line_with(&s, "loading"));
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 15), 0);
	screen_close(&s);
	relay_on = NULL;
	rig_relay_stop(&l);
	cmd = xasprintf("scancel %s %s", id[0], id[1]);
	free(rig_ssh_ok(cmd));
	free(cmd), free(id[0]), free(id[1]), free(dir);
}

Test(screen, an_unknown_host_key_is_asked_about_and_a_changed_one_refused, .timeout = 120)
{
	static struct rig_sshd d;	/* the suite's fini may need it */
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	char *kh, *text, polled_msg[96], changed_msg[96];

	rig_sshd_start(&d, 2237, 1);
	snprintf(polled_msg, sizeof(polled_msg), "rig: %s, polled", d.hosts);
	snprintf(changed_msg, sizeof(changed_msg), "host key of %s CHANGED: refused", d.hosts);
	private_sshd = &d;
	/* An empty known_hosts: the key is unknown. */
	kh = xasprintf("%s/empty_known_hosts", d.dir);
	cr_assert_eq(rig_local(": > %s", kh), 0);
	so.hosts = d.hosts;
	so.known_hosts = kh;
	screen_open(&s, "hostkey", &so);
	screen_wait(&s, 15, "Unknown host key", d.fingerprint, "a: accept", NULL);
	screen_keys(&s, "a");
	screen_wait(&s, 30, polled_msg, NULL);
	cr_assert_eq(rig_local("grep -q ':%d' %s", d.port, kh), 0, "known_hosts does not hold the key");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	/* The server's key changes: a warning, and no way to accept it. */
	rig_sshd_stop(&d);
	cr_assert_eq(rig_local("rm -f %s/host_key %s/host_key.pub && "
	    "ssh-keygen -q -t ed25519 -N '' -f %s/host_key", d.dir, d.dir, d.dir), 0);
	rig_sshd_restart(&d);
	screen_open(&s, "hostkey2", &so);
	screen_wait(&s, 15, "WARNING: host key changed", "CHANGED", NULL);
	text = screen_text(&s);
	cr_assert_null(strstr(text, "accept"), "a changed key offers to accept it:\n%s", text);
	free(text);
	screen_keys(&s, "a");
	screen_keys(&s, "Escape");
	screen_wait(&s, 5, changed_msg, NULL);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	rig_sshd_stop(&d);
	private_sshd = NULL;
	rig_sshd_free(&d);
	free(kh);
}

/* Does some SGR sequence in captured escapes set `code` (7: reverse)? */
static int has_sgr(const char *text, int code)
{
	for (const char *p = strstr(text, "\x1b["); p != NULL; p = strstr(p + 1, "\x1b[")) {
		const char *q = p + 2;
		while (*q != '\0' && *q != 'm' && (*q == ';' || (*q >= '0' && *q <= '9'))) {
			if (atoi(q) == code && (q == p + 2 || q[-1] == ';'))
				return 1;
			q += strcspn(q, ";m");
			if (*q == ';')
				q++;
		}
	}
	return 0;
}

/* Is there a colour (SGR 30-38, 40-48, 90-107; not 39/49, the defaults) in
 * captured escapes? */
static int has_colour(const char *text)
{
	for (const char *p = strstr(text, "\x1b["); p != NULL; p = strstr(p + 1, "\x1b[")) {
		int v = atoi(p + 2);
		if ((v >= 30 && v <= 48 && v != 39) || (v >= 90 && v <= 107))
			return 1;
	}
	return 0;
}

Test(screen, themes_no_color_and_an_ascii_locale, .timeout = 120)
{
	struct screen s;
	struct screen_opts so = { .cols = 200, .lines = 30 };
	char *text, *dir, *env;

	/* A broken user theme: its file:line:column, and the default theme. */
	dir = xasprintf("/tmp/taotop-theme-%d", rig_uniq());
	cr_assert_eq(rig_local("mkdir -p %s/taotop/themes && printf 'name: broken\\nroles:\\n"
	    "  header: { fg: purple }\\n' > %s/taotop/themes/broken.yaml", dir, dir), 0);
	env = xasprintf("XDG_CONFIG_HOME=%s", dir);
	so.env = env;
	so.args = "--theme broken";
	screen_open(&s, "theme", &so);
	screen_wait(&s, 10, "using the default theme: ", "broken.yaml:3:17: unknown colour 'purple'",
	    NULL);
	text = screen_text_attrs(&s);
	cr_assert(has_colour(text), "the default theme has colours");
	free(text);
	screen_keys(&s, "C-c");
	cr_assert_eq(screen_wait_exit(&s, 10), 0, "Ctrl-C quits cleanly");
	so.cols = 100;
	screen_wait_line(&s, 5, " icanon", " echo", NULL);
	screen_close(&s);

	/* A user theme of the same name as a shipped one is found first. */
	cr_assert_eq(rig_local("printf 'name: mine\\nroles:\\n  status.bar: { fg: white, bg: red }\\n' "
	    "> %s/taotop/themes/light.yaml", dir), 0);
	so.args = "--theme light";
	screen_open(&s, "theme2", &so);
	screen_wait(&s, 30, "polled", NULL);
	text = screen_text_attrs(&s);
	cr_assert_not_null(strstr(text, "\x1b[37m\x1b[41m rig:"), "the user's status bar colours:\n%s",
	    text);
	free(text);
	free(rig_ssh_ok("true"));
	{
		int pid = screen_pid(&s);
		cr_assert_gt(pid, 0);
		kill(pid, SIGTERM);
	}
	cr_assert_eq(screen_wait_exit(&s, 10), 0, "SIGTERM quits cleanly");
	screen_wait_line(&s, 5, " icanon", " echo", NULL);
	screen_close(&s);

	/* NO_COLOR: attributes only, still readable. */
	free(env);
	env = xasprintf("XDG_CONFIG_HOME=%s NO_COLOR=1", dir);
	so.env = env;
	so.args = NULL;
	screen_open(&s, "nocolor", &so);
	screen_wait(&s, 30, "polled", "USED/LIMIT", NULL);
	text = screen_text_attrs(&s);
	cr_assert_not(has_colour(text), "NO_COLOR, and colours on screen:\n%s", text);
	cr_assert(has_sgr(text, 7), "the bars stand out in reverse video:\n%s", text);
	free(text);
	{
		int pid = screen_pid(&s);
		cr_assert_gt(pid, 0);
		kill(pid, SIGHUP);
	}
	/* SIGHUP: the terminal is gone in real life; here it must still quit
	 * and restore the modes. */
	cr_assert_eq(screen_wait_exit(&s, 10), 0, "SIGHUP quits cleanly");
	screen_close(&s);

	/* An ASCII-only locale: no UTF-8 reaches the terminal, dialogs
	 * included (a job of its own to open the cancel dialog on: other
	 * tests' jobs come and go). */
	free(env);
	env = xasprintf("XDG_CONFIG_HOME=%s LANG=C LC_ALL=C", dir);
	so.env = env;
	{
		char name[64], opts[128], *id;
		snprintf(name, sizeof(name), "scr%d-ascii", rig_uniq());
		snprintf(opts, sizeof(opts), "-J %s -t 2 -o /dev/null", name);
		id = rig_sbatch(opts, "'sleep 60'");
		screen_open(&s, "ascii", &so);
		screen_wait(&s, 30, "polled", "USED/LIMIT", NULL);
		screen_filter(&s, name);
		screen_wait_line(&s, 20, name, "Running", NULL);
		free(id);
	}
	screen_keys(&s, "c");
	screen_wait(&s, 5, "Cancel 1 job?", NULL);
	screen_keys(&s, "n");
	text = screen_text(&s);
	for (const char *p = text; *p; p++)
		cr_assert_lt((unsigned char)*p, 0x80, "a non-ASCII byte on an ASCII screen:\n%s", text);
	free(text);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	rig_local("rm -rf %s", dir);
	free(dir);
	free(env);
}

Test(screen, log_colours_are_rendered_only_when_asked, .timeout = 120)
{
	char *dir = screen_shared_dir("colours"), *path, *id, *text, name[64], opts[512], script[512];
	static const char colored[] = "plain-text \x1b[31mRED-TEXT\x1b[0m \x1b[1;32mGREEN-BOLD\x1b[0m\n";
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };

	path = xasprintf("%s/colors.txt", dir);
	write_file(path, colored, sizeof(colored) - 1);
	snprintf(name, sizeof(name), "scr%d-colours", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o %s/c.out", name, dir);
	snprintf(script, sizeof(script), "'cat %s; sleep 120'", path);
	id = rig_sbatch(opts, script);

	/* Asked: the colour reaches the screen, as a colour. */
	so.args = "--log-colors render";
	screen_open(&s, "colours", &so);
	screen_filter(&s, name);
	screen_wait(&s, 30, "plain-text RED-TEXT GREEN-BOLD", NULL);
	text = screen_text_attrs(&s);
	cr_assert_not_null(strstr(text, "\x1b[31mRED-TEXT"), "no red:\n%s", text);
	free(text);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	/* By default: stripped, the text alone. */
	so.args = NULL;
	screen_open(&s, "colours2", &so);
	screen_filter(&s, name);
	screen_wait(&s, 30, "plain-text RED-TEXT GREEN-BOLD", NULL);
	text = screen_text_attrs(&s);
	cr_assert_null(strstr(text, "\x1b[31mRED-TEXT"), "red although not asked:\n%s", text);
	free(text);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	free(path), free(id), free(dir);
}

/* Submit a one-GPU taotop job with `taotop submit` (the CLI, as a user
 * would), recorded in the screen's own state folder so the monitor sees
 * it; network_arch names it, command is the bundle's (a YAML list). The
 * record id (caller frees). */
/* cli_submit with more bundle lines (extra: YAML, or NULL). */
static char *cli_submit_with(struct screen *s, const char *dir, const char *arch,
    const char *command, const char *config, const char *extra)
{
	char *bundle = rig_bundle(s->dir, dir, arch, command, extra), *out = NULL, *p, *id, *env, *args;

	env = xasprintf("XDG_STATE_HOME=%s/state TAOTOP_CONFIG=%s SLURM_BASE_RESULTS_DIR=lustre://%s/root",
	    s->dir, config ? config : "/nonexistent/config.yaml", dir);
	args = xasprintf("submit %s", bundle);
	cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
	p = strstr(out, "submitted tao-");
	cr_assert_not_null(p, "%s", out);
	id = xstrndup(p + 10, strcspn(p + 10, " "));
	free(out), free(args), free(env), free(bundle);
	return id;
}

static char *cli_submit(struct screen *s, const char *dir, const char *arch, const char *command,
    const char *config)
{
	return cli_submit_with(s, dir, arch, command, config, NULL);
}

/*
 * TAO's progress in the monitor's row as the user counts it: the TAO
 * stand-in as TAO 7 writes (status.json in results/train/, Lightning's
 * epochs from 0 with max_epoch = num_epochs - 1, a bare NaN loss at one
 * epoch, the success line "Train finished successfully.", never SUCCESS):
 * the row says 1/4 .. 4/4 with TAO's ETA while it trains (never 0/3, never
 * 5/4), Done at 4/4, and the detail view says epoch 4 of 4.
 */
Test(screen, taos_progress_in_the_row_as_the_user_counts, .timeout = 240)
{
	char *dir = screen_shared_dir("progress"), *id, *line;
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 40 };
	int seen_running = 0;

	screen_open(&s, "progress", &so);
	screen_wait(&s, 30, "polled", NULL);
	id = cli_submit_with(&s, dir, "classification_pyt",
	    "[classification_pyt, train, -e, '{spec}', 'results_dir={results_dir}']", NULL,
	    "spec:\n  train:\n    num_epochs: 4\n    seconds_per_epoch: 5\n"
	    "  stand_in:\n    nan_at_epoch: 2\n");
	screen_filter(&s, id);
	/* While it trains: N of 4 with an ETA (TAO's str(timedelta), shown
	 * [D-]HH:MM:SS). */
	screen_wait_line(&s, 120, id, "Running", "/4 ", NULL);
	for (int i = 0; i < 600 && !seen_running; i++) {
		line = screen_line_with(&s, id);
		if (line != NULL && strstr(line, "Running") != NULL) {
			const char *p = strstr(line, "/4 ");
			cr_expect(p != NULL && p > line && p[-1] >= '1' && p[-1] <= '4' &&
			    (p - line < 2 || p[-2] == ' '), "the row's epoch: %s", line);
			cr_expect(rig_matches(line, " [1-4]/4 [#.]+ [0-9]{2}:[0-9]{2}:[0-9]{2}"),
			    "no ETA beside the epoch: %s", line);
			seen_running = 1;
		}
		free(line);
		if (!seen_running)
			usleep(100 * 1000);
	}
	cr_expect(seen_running, "the row never showed the job Running");
	screen_wait_line(&s, 120, id, "Done", "4/4", NULL);
	line = screen_line_with(&s, id);
	cr_expect(strstr(line, "0/3") == NULL && strstr(line, "5/4") == NULL, "%s", line);
	free(line);
	screen_keys(&s, "Enter");
	screen_wait(&s, 15, "Job detail", "progress: epoch 4 of 4", NULL);
	screen_keys(&s, "Escape");
	/* p: its curves, every kpi key the stand-in wrote, from the record:
	 * val_loss first (on the first epoch line), m the next metric, l a
	 * log scale; train_loss's last and best value with their epochs. */
	{
		char *title = xasprintf("Curves: %s", id), *text;
		screen_keys(&s, "p");
		screen_wait(&s, 15, title, "val_loss (1 of 3)", "last 0.60025 at epoch 4",
		    "best 0.60025 at epoch 4", "epoch", NULL);
		text = screen_text(&s);
		cr_expect(strstr(text, "\xe2\x94\xa4") != NULL && (strstr(text, "\xe2\xa0") != NULL ||
		    strstr(text, "\xe2\xa1") != NULL || strstr(text, "\xe2\xa2") != NULL ||
		    strstr(text, "\xe2\xa3") != NULL), "axes and braille dots:\n%s", text);
		free(text);
		screen_keys(&s, "m");
		screen_wait(&s, 5, "val_acc_1 (2 of 3)", "best 0.78391 at epoch 4", NULL);
		screen_keys(&s, "m");
		screen_wait(&s, 5, "train_loss (3 of 3)", "last 0.55223 at epoch 4", NULL);
		screen_keys(&s, "l");
		screen_wait(&s, 5, "train_loss (3 of 3)  log scale", NULL);
		screen_keys(&s, "Escape");
		screen_wait_gone(&s, 5, title);
		free(title);
	}
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	/* taotop again, its records kept, in an ASCII locale (LANG=C): the
	 * curves drawn in ASCII, from the record. */
	{
		struct screen s2;
		struct screen_opts so2 = { .cols = 160, .lines = 40 };
		char *env = xasprintf("LANG=C XDG_STATE_HOME=%s/state XDG_CONFIG_HOME=%s/config",
		    s.dir, s.dir), *title = xasprintf("Curves: %s", id), *text, *p;
		so2.env = env;
		screen_open(&s2, "progress-ascii", &so2);
		screen_wait(&s2, 30, "polled", NULL);
		screen_filter(&s2, id);
		screen_wait_line(&s2, 30, id, "Done", NULL);
		screen_keys(&s2, "p");
		screen_wait(&s2, 15, title, "val_loss (1 of 3)", "+-----", NULL);
		text = screen_text(&s2);
		/* No braille (U+2800..U+28FF); the box's frame is tmux's to draw. */
		for (p = text; (p = strstr(p, "\xe2")) != NULL; p++)
			cr_assert((unsigned char)p[1] < 0xa0 || (unsigned char)p[1] > 0xa3,
			    "braille under LANG=C:\n%s", text);
		cr_expect(rig_matches(text, "[0-9] \\+[ .'|-]*[.'|-]"), "an ASCII tick and curve:\n%s",
		    text);
		free(text);
		screen_keys(&s2, "Escape");
		screen_keys(&s2, "q");
		cr_assert_eq(screen_wait_exit(&s2, 10), 0);
		screen_close(&s2);
		free(env), free(title);
	}
	screen_close(&s);
	free(id), free(dir);
}

/* The epoch of the curves' "last V at epoch N" on line (-1: none). */
static int last_epoch_of(const char *line)
{
	const char *p = line != NULL ? strstr(line, "last ") : NULL;
	int epoch;

	if (p == NULL || (p = strstr(p, " at epoch ")) == NULL || sscanf(p, " at epoch %d", &epoch) != 1)
		return -1;
	return epoch;
}

/*
 * A running job's curves follow it: p while the TAO stand-in trains (six
 * epochs, a NaN at epoch 2) shows its metrics so far, and without a key
 * pressed the panel gains the next epochs' points (its last value's epoch
 * moves on) while the row still says Running; once it ends, the whole
 * file's curves from its record, the title no longer saying it follows.
 */
Test(screen, a_running_jobs_curves_grow_in_the_panel, .timeout = 240)
{
	char *dir = screen_shared_dir("growing"), *id, *title, *line, *text;
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 40 };
	int first, later = -1;

	screen_open(&s, "growing", &so);
	screen_wait(&s, 30, "polled", NULL);
	id = cli_submit_with(&s, dir, "classification_pyt",
	    "[classification_pyt, train, -e, '{spec}', 'results_dir={results_dir}']", NULL,
	    "spec:\n  train:\n    num_epochs: 6\n    seconds_per_epoch: 8\n"
	    "  stand_in:\n    nan_at_epoch: 2\n");
	screen_filter(&s, id);
	screen_wait_line(&s, 120, id, "Running", "1/6 ", NULL);
	title = xasprintf("Curves: %s (running: follows the job)", id);
	screen_keys(&s, "p");
	screen_wait(&s, 15, title, "val_loss (1 of ", "epoch", NULL);
	line = screen_wait_line_changed(&s, 30, "val_loss (1 of ", NULL);
	first = last_epoch_of(line);
	cr_assert(first >= 1 && first < 6, "a running job's last point: %s", line);
	/* No key: the next epochs' points come with the polls. */
	for (int i = 0; i < 600 && later <= first; i++) {
		free(line);
		line = screen_line_with(&s, "val_loss (1 of ");
		later = last_epoch_of(line);
		if (later <= first)
			usleep(100 * 1000);
	}
	cr_assert(later > first, "the curves never grew past epoch %d: %s", first, line);
	text = screen_text(&s);
	cr_expect(strstr(text, title) != NULL, "still the running job's curves:\n%s", text);
	free(text);
	free(line);
	line = screen_line_with(&s, id);
	cr_expect(line == NULL || strstr(line, "Done") == NULL, "the job had ended: %s", line);
	free(line);
	/* It ends: the record's curves, every epoch (the panel still open). */
	screen_wait_gone(&s, 120, title);
	{
		char *done = xasprintf("Curves: %s", id);
		screen_wait(&s, 15, done, "val_loss (1 of 3)", "at epoch 6", NULL);
		free(done);
	}
	screen_keys(&s, "Escape");
	screen_wait_line(&s, 30, id, "Done", "6/6", NULL);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(title), free(id), free(dir);
}

/* The line of text (attrs: with its escapes) holding what (caller frees). */
static char *line_holding(const char *text, const char *what)
{
	const char *p = strstr(text, what), *b, *e;

	if (p == NULL)
		return NULL;
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return xstrndup(b, e != NULL ? (size_t)(e - b) : strlen(b));
}

/* Back from at (in line) over escape sequences (ESC [ ... m): where the
 * text before them ends. */
static const char *skip_sgr_back(const char *line, const char *at)
{
	while (at > line && at[-1] == 'm') {
		const char *e = at - 1;
		while (e > line && *e != '\x1b')
			e--;
		if (*e != '\x1b')
			break;
		at = e;
	}
	return at;
}

/* The foreground colour (SGR 30-37, 90-97) the mark before " lr=" is drawn
 * in, as its number ("31"), into out; "" when none. */
static void colour_before(const char *line, const char *what, char *out, size_t len)
{
	const char *p = strstr(line, what), *mark, *sgr;

	out[0] = '\0';
	if (p == NULL || p == line || p[-1] != ' ')
		return;
	mark = skip_sgr_back(line, p - 1) - 1;	/* the mark's character */
	if (mark < line)
		return;
	for (sgr = skip_sgr_back(line, mark); sgr < mark; sgr++) {
		if (*sgr != '\x1b')
			continue;
		for (const char *q = sgr + 2; *q != 'm' && q < mark; q += strcspn(q, ";m"),
		    q += *q == ';') {
			int v = atoi(q);
			if ((v >= 30 && v <= 37) || (v >= 90 && v <= 97))
				snprintf(out, len, "%d", v);
		}
	}
}

/*
 * Two runs of a sweep compared: two jobs through the stand-ins whose specs
 * differ in train.optim.lr, both marked (Space), p: one plot of val_loss with
 * each run's mark in its own colour and a legend naming each by lr.
 */
Test(screen, two_marked_runs_compared_with_a_legend_naming_lr, .timeout = 300)
{
	char *dir = screen_shared_dir("compare"), *id[2], *text, *lo, *hi;
	const char *lr[2] = { "0.001", "0.01" };
	char c0[64], c1[64];
	struct screen s;
	struct screen_opts so = { .cols = 160, .lines = 44 };
	int k;

	screen_open(&s, "compare", &so);
	screen_wait(&s, 30, "polled", NULL);
	for (k = 0; k < 2; k++) {
		char *extra = xasprintf("name: lrsweep-%d\nspec:\n  train:\n    num_epochs: 4\n"
		    "    seconds_per_epoch: 1\n    optim:\n      lr: %s\n", k, lr[k]);
		id[k] = cli_submit_with(&s, dir, "classification_pyt",
		    "[classification_pyt, train, -e, '{spec}', 'results_dir={results_dir}']", NULL,
		    extra);
		free(extra);
	}
	screen_filter(&s, "lrsweep-");
	screen_wait_line(&s, 180, id[0], "Done", NULL);
	screen_wait_line(&s, 180, id[1], "Done", NULL);
	/* g: the first job; Space marks the selected job and moves down:
	 * both marked. */
	screen_keys(&s, "g");
	screen_keys(&s, "Space");
	screen_keys(&s, "Space");
	screen_keys(&s, "p");
	{
		/* The legend: each run's mark (o, x: in the list's order), its
		 * name by lr, its id, its last value. */
		char *want0 = xasprintf("lr=0.001  %s  last ", id[0]);
		char *want1 = xasprintf("lr=0.01  %s  last ", id[1]);
		screen_wait(&s, 15, "Curves: 2 runs compared", "val_loss (1 of 3)  2 runs compared",
		    want0, want1, "epoch", NULL);
		free(want0), free(want1);
	}
	text = screen_text(&s);
	lo = line_holding(text, "lr=0.001  ");
	hi = line_holding(text, "lr=0.01  ");
	cr_expect(lo != NULL && hi != NULL && (strstr(lo, "  o lr=") != NULL) !=
	    (strstr(hi, "  o lr=") != NULL) && (strstr(lo, "  x lr=") != NULL) !=
	    (strstr(hi, "  x lr=") != NULL), "one run o, the other x:\n%s", text);
	cr_expect(lo != NULL && strstr(lo, "at epoch 4") != NULL, "%s", text);
	free(lo), free(hi);
	{
		/* Both runs' marks in the plot: the dialog's inside (between
		 * its frame's two bars) of the lines below the legend, down to
		 * the x axis's name. */
		const char *plot = strstr(text, "runs compared  ");
		int o = 0, x = 0;
		plot = plot != NULL ? strstr(plot, "lr=0.0") : NULL;
		plot = plot != NULL ? strstr(plot + 1, "lr=0.0") : NULL;
		for (const char *l = plot ? strchr(plot, '\n') : NULL; l != NULL; l = strchr(l + 1, '\n')) {
			char *row = xstrndup(l + 1, strcspn(l + 1, "\n"));
			char *a = strstr(row, "\xe2\x94\x82"), *b = NULL, *q;
			for (q = a; q != NULL; q = strstr(q + 1, "\xe2\x94\x82"))
				b = q;
			if (strstr(row, "epoch") != NULL) {
				free(row);
				break;
			}
			for (q = a != NULL ? a + 3 : b; q != NULL && q < b; q++) {
				o |= *q == 'o';
				x |= *q == 'x';
			}
			free(row);
		}
		cr_expect(o && x, "both runs drawn:\n%s", text);
	}
	free(text);
	/* Each run's mark in a colour of its own. */
	text = screen_text_attrs(&s);
	lo = line_holding(text, "lr=0.001");
	hi = line_holding(text, "lr=0.01 ");
	cr_assert(lo != NULL && hi != NULL, "%s", text);
	colour_before(lo, "lr=0.001", c0, sizeof(c0));
	colour_before(hi, "lr=0.01", c1, sizeof(c1));
	cr_expect(c0[0] != '\0' && c1[0] != '\0' && strcmp(c0, c1) != 0,
	    "the marks' colours: '%s' and '%s':\n%s\n%s", c0, c1, lo, hi);
	free(lo), free(hi), free(text);
	/* m: the next metric, still both runs. */
	screen_keys(&s, "m");
	screen_wait(&s, 5, "val_acc_1 (2 of 3)  2 runs compared", "lr=0.001  ", NULL);
	screen_keys(&s, "Escape");
	screen_wait_gone(&s, 5, "Curves: 2 runs compared");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(id[0]), free(id[1]), free(dir);
}

Test(screen, detail_view_retry_screen_dump_and_readonly, .timeout = 240)
{
	char *dir = screen_shared_dir("detail"), *id, *dump, *text, *err = NULL;
	struct screen s;
	struct screen_opts so = { .cols = 130, .lines = 45 };

	screen_open(&s, "detail", &so);
	/* A taotop job that fails with a Python traceback: the program's
	 * failure, which the engine never retries by itself. */
	id = cli_submit(&s, dir, "detail_pyt", "[sh, -c, 'echo \"Traceback (most recent call "
	    "last):\" >&2; echo \"ValueError: bad learning rate\" >&2; exit 1']", NULL);

	screen_filter(&s, "detail_pyt");
	screen_wait_line(&s, 60, id, "Error", NULL);
	/* Enter: the record, its transitions, the verdict, the staged sbatch. */
	screen_keys(&s, "Enter");
	screen_wait(&s, 15, "Job detail", "Transitions:", "-> Error (FAILED)",
	    "failure: the program's (python-traceback)", NULL);
	/* Its efficiency card, completed with accounting's facts as the
	 * detail opened (the poll made it without a command of its own). */
	screen_wait(&s, 15, "Efficiency:", "  time: ", "queue wait: ", NULL);
	{
		char *want = xasprintf("#SBATCH --job-name=%s", id);
		screen_wait(&s, 15, want, NULL);
		free(want);
	}
	/* P: the screen as text, in a file. */
	screen_keys(&s, "P");
	screen_wait(&s, 5, "screen written to ", NULL);
	text = screen_line_with(&s, "screen written to ");
	dump = xstrndup(strstr(text, "screen written to ") + 18,
	    strcspn(strstr(text, "screen written to ") + 18, " \n"));
	free(text);
	text = file_read_all(dump, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	cr_expect_not_null(strstr(text, "Transitions:"), "the dump:\n%s", text);
	cr_expect_null(strstr(text, "\x1b"), "the dump is plain text");
	free(text);
	screen_keys(&s, "Escape");

	/* r: retry it, from what it staged; a new record, linked. */
	screen_keys(&s, "r");
	screen_wait(&s, 5, "Retry?", "nothing is staged or converted again", NULL);
	screen_keys(&s, "y");
	screen_wait(&s, 30, "retried as tao-", NULL);
	screen_wait_line(&s, 30, id, "Error", "retried as", NULL);
	cr_assert_null(screen_line_with(&s, "Retry?"), "the dialog stays on screen after closing");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	/* --readonly: nothing that changes anything. */
	so.args = "--readonly";
	screen_open(&s, "readonly", &so);
	screen_wait(&s, 15, "READONLY", "polled", NULL);
	screen_keys(&s, "c");
	screen_wait(&s, 5, "read-only (--readonly): cancel is disabled", NULL);
	screen_keys(&s, "r");
	screen_wait(&s, 5, "read-only (--readonly): retry is disabled", NULL);
	screen_keys(&s, "s");
	screen_wait(&s, 5, "read-only (--readonly): submit is disabled", NULL);
	cr_expect_null(screen_line_with(&s, "Submit a job"), "the wizard opened");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	rig_local("rm -f %s", dump);
	free(dump), free(id), free(dir);
}

/* How many lines of text hold what. */
static int count_lines_with(const char *text, const char *what)
{
	int n = 0;

	for (const char *l = text; *l; ) {
		size_t len = strcspn(l, "\n");
		char *line = xstrndup(l, len);
		n += strstr(line, what) != NULL;
		free(line);
		l += len + (l[len] == '\n');
	}
	return n;
}

/* Retry of a job that succeeded: the dialog says it succeeded and that a
 * retry runs it again in a results folder of its own, and still asks; n keeps it as it
 * was (no new run), y makes the retry, a new record linked to it. */
Test(screen, retry_of_a_done_job_says_it_succeeded_and_asks, .timeout = 240)
{
	char *dir = screen_shared_dir("redone"), *id, *line, *text, *want, *new_id, *extra;
	char name[64];
	struct screen s;
	int rows;
	struct screen_opts so = { .cols = 160, .lines = 40 };

	screen_open(&s, "redone", &so);
	snprintf(name, sizeof(name), "redone%d", rig_uniq());
	extra = xasprintf("name: %s\nspec:\n  train:\n    num_epochs: 1\n", name);
	id = cli_submit_with(&s, dir, "classification_pyt",
	    "[classification_pyt, train, -e, '{spec}', 'results_dir={results_dir}']", NULL, extra);
	free(extra);
	screen_filter(&s, name);
	screen_wait_line(&s, 60, id, "Done", NULL);
	text = screen_text(&s);
	rows = count_lines_with(text, "tao-");
	free(text);

	/* r: the dialog, in words that say what the retry means here. */
	screen_keys(&s, "r");
	want = xasprintf("%s succeeded (Done): it runs again as a new record, in a results folder", id);
	screen_wait(&s, 5, "Retry?", want, "of its own, from its newest checkpoint", "y/Enter: retry",
	    "n/Esc: keep it", NULL);
	free(want);
	/* n: the dialog goes, nothing is retried, and the row is as it was
	 * (a poll later too: no new run, no note of one). */
	screen_keys(&s, "n");
	screen_wait_gone(&s, 5, "Retry?");
	screen_wait(&s, 15, "polled", NULL);
	sleep(4);
	text = screen_text(&s);
	cr_expect(strstr(text, "retrying") == NULL && strstr(text, "retried as") == NULL,
	    "n retried the job:\n%s", text);
	cr_expect_eq(count_lines_with(text, "tao-"), rows,
	    "another run appeared after n:\n%s", text);
	free(text);
	line = screen_line_with(&s, id);
	cr_expect(line != NULL && strstr(line, "Done") != NULL, "the row after n: %s", line);
	free(line);

	/* r, y: retried, as a new record linked to it (the message names both). */
	screen_keys(&s, "r");
	screen_wait(&s, 5, "Retry?", NULL);
	screen_keys(&s, "y");
	want = xasprintf("%s retried as tao-", id);
	screen_wait(&s, 30, want, NULL);
	line = screen_line_with(&s, want);
	free(want);
	new_id = xstrndup(strstr(line, " as ") + 4, strcspn(strstr(line, " as ") + 4, " ,"));
	free(line);
	/* The job keeps its state and its verdict (TAO's own words) first;
	 * the retry, once the record says it, only after it ("...; retried
	 * as ..."); the new run is in the list beside it. */
	line = screen_line_with(&s, id);
	cr_expect(line != NULL && strstr(line, "Done") != NULL &&
	    strstr(line, "status.json: Train") != NULL &&
	    (strstr(line, "retried") == NULL ||
	    strstr(line, "retried") > strstr(line, "status.json: Train")),
	    "the retried job's row: %s", line);
	free(line);
	screen_wait_line(&s, 30, new_id, name, NULL);
	cr_assert_null(screen_line_with(&s, "Retry?"), "the dialog stays on screen after y");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(new_id), free(id), free(dir);
}

Test(screen, actions_signal_time_limit_hold_with_the_schedulers_answer, .timeout = 180)
{
	char *dir = screen_shared_dir("actions"), *id, name[64], opts[512];
	struct screen s;
	struct screen_opts so = { .cols = 130, .lines = 40 };

	snprintf(name, sizeof(name), "scr%d-act", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o %s/act.out", name, dir);
	id = rig_sbatch(opts, "'trap \"echo got-USR1\" USR1; echo ready; while :; do sleep 1; done'");
	screen_open(&s, "actions", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 20, name, "Running", NULL);
	screen_wait(&s, 20, "ready", NULL);

	/* A signal from the picker reaches the job: its log shows the trap. */
	screen_keys(&s, "a");
	screen_wait(&s, 5, "Actions on", "s  send a signal...", NULL);
	screen_keys(&s, "s");
	screen_wait(&s, 5, "> SIGUSR1", "SIGKILL", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "sent SIGUSR1", NULL);
	screen_wait(&s, 20, "got-USR1", NULL);

	/* KILL asks first; no keeps it running. */
	screen_keys(&s, "a");
	screen_keys(&s, "s");
	for (int i = 0; i < 7; i++)
		screen_keys(&s, "j");
	screen_wait(&s, 5, "> SIGKILL", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "Are you sure?", "Send SIGKILL to", NULL);
	screen_keys(&s, "n");

	/* The time limit, typed and checked: a user may lower it, and the
	 * scheduler's refusal to raise it is shown as it is. */
	screen_keys(&s, "a");
	screen_keys(&s, "t");
	screen_wait(&s, 5, "new time limit for", NULL);
	screen_type(&s, "7");
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "time limit of ", " refused: ", NULL);
	screen_keys(&s, "a");
	screen_keys(&s, "t");
	screen_type(&s, "3");
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "time limit now 00:03:00", NULL);
	screen_wait_line(&s, 20, name, "/00:03:00", NULL);	/* one time format */
	screen_keys(&s, "a");
	screen_keys(&s, "t");
	screen_type(&s, "soon");
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "'soon' is not a time limit", NULL);

	/* Hold and release: the scheduler's answer, and its reason in the row
	 * (SLURM holds a running job for when it is requeued). */
	screen_keys(&s, "a");
	screen_keys(&s, "h");
	screen_wait(&s, 10, ": hold done", NULL);
	screen_wait_line(&s, 20, name, "JobHeldUser", NULL);
	screen_keys(&s, "a");
	screen_keys(&s, "l");
	screen_wait(&s, 10, ": release done", NULL);

	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	free(id), free(dir);
}

/* A job of the user's waits behind a blocker holding its node: the detail
 * view says nothing of why until w; then SLURM's reason in words, the
 * scheduler's start estimate (once its backfill pass planned the job: w
 * asks again), the priority factors (the rig runs priority/multifactor,
 * weighted by age) and the user's fair-share. `status --why` says the same
 * from the command line. (The poll never asks: tests/unit/test_pending.) */
Test(screen, a_pending_jobs_detail_says_why_it_waits_on_w, .timeout = 240)
{
	char *dir = screen_shared_dir("why"), *blocker, *id, name[64], opts[512], *text;
	struct screen s;
	struct screen_opts so = { .cols = 150, .lines = 44 };
	time_t end;

	snprintf(name, sizeof(name), "scr%d-why", rig_uniq());
	/* One node held for the test's length (the other stays free for the
	 * suites around it); the job asks for that node. */
	snprintf(opts, sizeof(opts), "-J %.*s-blk -w node01 --exclusive -t 5 -o /dev/null",
	    (int)strlen(name) - 4, name);
	blocker = rig_sbatch(opts, "'sleep 300'");
	free(rig_wait_state(blocker, "RUNNING", 60));
	snprintf(opts, sizeof(opts), "-J %s -w node01 --gres=gpu:2 -t 30 -o /dev/null", name);
	id = rig_sbatch(opts, "'sleep 5'");
	screen_open(&s, "why", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 30, name, "Pending", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "Job detail", "w: why it waits", NULL);
	text = screen_text(&s);
	cr_expect(strstr(text, "Why it waits:") == NULL, "explained before it was asked:\n%s",
	    text);
	free(text);
	screen_keys(&s, "w");
	screen_wait(&s, 20, "Why it waits: ", "(SLURM: ", "asked: 1 node, ", "gres",
	    "time limit 30:00", NULL);
	screen_wait(&s, 5, "priority ", " = age ", "+ fair-share ", NULL);
	screen_wait(&s, 5, "your fair-share: ", NULL);
	/* The start estimate comes once the backfill pass planned it (every
	 * 30 s at the defaults): w again until it says when, and where. */
	end = time(NULL) + 90;
	for (;;) {
		text = screen_text(&s);
		if (strstr(text, "estimated start: 20") != NULL || time(NULL) > end)
			break;
		free(text);
		sleep(3);
		screen_keys(&s, "w");
	}
	cr_expect(strstr(text, "estimated start: 20") != NULL && strstr(text, ", on node01") != NULL,
	    "no start estimate on node01:\n%s", text);
	cr_expect(strstr(text, "it is next in line") != NULL || strstr(text, "higher priority")
	    != NULL, "the reason in words:\n%s", text);
	cr_expect(strstr(text, "you could: a shorter time limit") != NULL, "%s", text);
	free(text);
	screen_keys(&s, "Escape");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);

	/* The command line: the same words, and nothing asked without --why. */
	{
		char *env = xasprintf("XDG_STATE_HOME=%s/cli", dir), *args, *out = NULL;
		args = xasprintf("status %s", id);
		cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
		cr_expect(strstr(out, "Why it waits") == NULL, "%s", out);
		free(args), free(out);
		args = xasprintf("status %s --why", id);
		cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
		cr_expect(strstr(out, "Why it waits: ") != NULL && strstr(out, "priority ") != NULL &&
		    strstr(out, "your fair-share: ") != NULL, "%s", out);
		free(args), free(out), free(env);
	}
	{
		char *cmd = xasprintf("scancel %s %s", id, blocker);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	/* The blocker, finished and not taotop's: its efficiency card from
	 * accounting alone (status asks for it). */
	free(rig_wait_state(blocker, "CANCELLED", 60));
	{
		char *env = xasprintf("XDG_STATE_HOME=%s/cli", dir), *args, *out = NULL;
		args = xasprintf("status %s", blocker);
		cr_assert_eq(rig_taotop(env, args, &out), 0, "%s", out);
		cr_expect(strstr(out, "Efficiency (from accounting") != NULL &&
		    strstr(out, " of 00:05:00 (") != NULL && strstr(out, "queue wait: ") != NULL,
		    "%s", out);
		free(args), free(out), free(env);
	}
	free(id), free(blocker), free(dir);
}

/* E: where the GPU hours went, taotop report's summary in a dialog, each
 * cluster's as its one command answers (the rig's accounting holds the
 * suites' jobs of the test user: outcomes and waits are there). */
Test(screen, e_shows_where_the_gpu_hours_went, .timeout = 120)
{
	struct screen s;
	struct screen_opts so = { .cols = 130, .lines = 44 };

	screen_open(&s, "report", &so);
	screen_wait(&s, 20, " rig: ", NULL);
	screen_keys(&s, "E");
	screen_wait(&s, 30, "GPU hours, the last 7 days", "== rig ==",
	    "GPU hours over the last 7d: ", "Done ", "Median queue wait:", NULL);
	screen_keys(&s, "Escape");
	screen_wait_gone(&s, 5, "GPU hours, the last 7 days");
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
}

/* A 5-task job array of the user's is one row with its tasks' counts; e
 * expands it (each task on its own line, indented) and folds it again. */
Test(screen, a_five_task_array_is_one_row_expanded_on_x, .timeout = 180)
{
	char *id, name[64], opts[256], *arr, *task, *text;
	struct screen s;
	struct screen_opts so = { .cols = 150, .lines = 40 };

	snprintf(name, sizeof(name), "scr%d-arr", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s --array=0-4 -t 5 -o /dev/null", name);
	id = rig_sbatch(opts, "'sleep 120'");
	arr = xasprintf("%s_[*]", id);
	task = xasprintf("%s_3", id);
	screen_open(&s, "array", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 40, arr, "5 tasks: 5 Running", NULL);
	text = screen_text(&s);
	cr_expect(strstr(text, task) == NULL, "a task on its own line while folded:\n%s", text);
	free(text);
	screen_keys(&s, "e");
	screen_wait_line(&s, 10, task, "Running", NULL);
	screen_wait(&s, 5, arr, NULL);
	{
		char *l = screen_line_with(&s, task);
		cr_expect(l != NULL && strstr(l, "  ") != NULL, "%s", l ? l : "");
		free(l);
	}
	screen_keys(&s, "e");
	screen_wait_gone(&s, 10, task);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	{
		char *cmd = xasprintf("scancel %s", id);
		free(rig_ssh_ok(cmd));
		free(cmd);
	}
	free(arr), free(task), free(id);
}

Test(screen, a_state_change_emits_desktop_notifications_through_tmux, .timeout = 180)
{
	char *dir = screen_shared_dir("notify"), *cfg, *env, *id;
	char *want9, *want777;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40, .typescript = 1 };
	FILE *f;

	cfg = xasprintf("%s/notify-config-%d.yaml", "/tmp", rig_uniq());
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fputs("notify: [bell, osc9, osc777]\n", f);
	fclose(f);
	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	screen_open(&s, "notify", &so);
	screen_wait(&s, 30, "polled", NULL);

	{
		char *command = xasprintf("[sh, -c, 'sleep 3; echo {\\\"status\\\": \\\"SUCCESS\\\"} > "
		    "{results_dir}/status.json']");
		id = cli_submit(&s, dir, "notify_pyt", command, cfg);
		free(command);
	}
	screen_filter(&s, "notify_pyt");
	screen_wait_line(&s, 60, id, "Done", NULL);

	/* What reached the terminal: both escapes, through tmux's passthrough
	 * since it runs in tmux. */
	want9 = xasprintf("]9;taotop: rig %s is Done (COMPLETED)\x07", id);
	want777 = xasprintf("]777;notify;taotop;rig %s is Done (COMPLETED)\x07", id);
	char *text = screen_typescript_wait(&s, 10, want777);
	cr_expect_not_null(strstr(text, want9), "no OSC 9 for Done in what taotop wrote");
	cr_expect_not_null(strstr(text, want777), "no OSC 777 for Done in what taotop wrote");
	cr_expect_not_null(strstr(text, "\x1bPtmux;\x1b\x1b]9;"), "not through tmux's passthrough");
	free(text);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	unlink(cfg);
	free(want9), free(want777), free(id);
	free(env), free(cfg), free(dir);
}

Test(screen, keys_and_columns_from_the_config, .timeout = 120)
{
	char *cfg = xasprintf("/tmp/keys-config-%d.yaml", rig_uniq()), *env, *line;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	FILE *f = fopen(cfg, "w");

	cr_assert_not_null(f);
	/* cancel on x; retry on q, which quit has: a conflict, reported. */
	fputs("keys:\n  cancel: x\n  retry: q\ncolumns: [state, name, slurm]\n", f);
	fclose(f);
	env = xasprintf("TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	free(rig_ssh_ok("sbatch --parsable -J keys-test -t 2 -o /dev/null --wrap 'sleep 60'"));
	screen_open(&s, "keys", &so);
	screen_wait(&s, 10, ":3:10: keys: retry: 'q' is already quit's key", NULL);
	screen_filter(&s, "keys-test");
	screen_wait_line(&s, 20, "keys-test", "Running", NULL);
	/* The columns asked for, in their order, and no others. */
	line = screen_line_with(&s, "STATE");
	cr_assert_not_null(line);
	cr_expect(strstr(line, "STATE") < strstr(line, "NAME") && strstr(line, "NAME") <
	    strstr(line, "SLURM"), "columns out of order: %s", line);
	cr_expect_null(strstr(line, "USED/LIMIT"), "a column not asked for: %s", line);
	free(line);
	screen_keys(&s, "x");
	screen_wait(&s, 5, "Cancel 1 job?", NULL);
	screen_keys(&s, "n");
	screen_keys(&s, "?");
	screen_wait(&s, 5, "taotop keys", NULL);
	line = screen_line_with(&s, "cancel the marked jobs");
	cr_assert_not_null(line);
	cr_expect_not_null(strstr(line, " x "), "the help shows x for cancel: %s", line);
	free(line);
	screen_keys(&s, "Escape");

	/* The column picker: NAME moved before STATE, SLURM hidden, saved. */
	screen_keys(&s, "O");
	screen_wait(&s, 5, "Columns of the jobs list", "> [x] STATE", "[x] NAME", "[x] SLURM",
	    "[ ] REASON", NULL);
	screen_keys(&s, "j");
	screen_keys(&s, "K");
	screen_wait_line(&s, 5, "> [x] NAME", NULL);
	screen_keys(&s, "j");
	screen_keys(&s, "j");
	screen_keys(&s, "Space");
	screen_wait_line(&s, 5, "> [ ] SLURM", NULL);
	screen_keys(&s, "Enter");
	screen_wait(&s, 5, "columns saved in ", NULL);
	line = screen_line_with(&s, "STATE");
	cr_assert_not_null(line);
	cr_expect(strstr(line, "NAME") != NULL && strstr(line, "NAME") < strstr(line, "STATE") &&
	    strstr(line, "SLURM") == NULL, "the header is not NAME STATE: %s", line);
	free(line);
	{
		char *text = file_read_all(cfg, NULL, NULL);
		cr_assert_not_null(text);
		cr_expect_not_null(strstr(text, "\ncolumns: [name, state]\n"), "%s", text);
		cr_expect_not_null(strstr(text, "keys:\n  cancel: x\n"), "the rest was lost: %s",
		    text);
		free(text);
	}
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	free(rig_ssh_ok("scancel --name=keys-test"));
	unlink(cfg);
	free(env), free(cfg);
}

/* The filter's "N of M jobs" follows the polls, not only the keys: typed
 * before its jobs exist, it counts them as they come (it stayed at 0 of 0). */
Test(screen, the_filter_count_follows_the_polls, .timeout = 120)
{
	char name[64], opts[128], *id, *want, *cmd;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };

	snprintf(name, sizeof(name), "scr%d-cnt", rig_uniq());
	screen_open(&s, "filter-count", &so);
	screen_wait(&s, 30, "polled", NULL);
	screen_filter(&s, name);
	want = xasprintf("filter: %s   0 of ", name);
	screen_wait(&s, 5, want, NULL);
	free(want);
	snprintf(opts, sizeof(opts), "--hold -J %s -t 2 -o /dev/null", name);
	id = rig_sbatch(opts, "true");
	screen_wait_line(&s, 30, name, "Pending", NULL);
	want = xasprintf("filter: %s   1 of ", name);
	screen_wait(&s, 5, want, NULL);
	free(want);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	cmd = xasprintf("scancel %s", id);
	free(rig_ssh_ok(cmd));
	free(cmd), free(id);
}

/* Two clusters configured (here the same login host under two names): at
 * 120 columns the list has a CLUSTER column, and the same job shows once
 * under each name, telling the rows apart. */
Test(screen, two_clusters_get_a_cluster_column_at_120_columns, .timeout = 120)
{
	const struct rig *r = rig_get();
	struct screen_opts so = { .cols = 200, .lines = 30 };
	struct screen s;
	char tmpl[] = "/tmp/taotop-twoclusters-XXXXXX", *cfg, *env, *id, *name, *line, *cmd;
	FILE *f;

	cr_assert_not_null(mkdtemp(tmpl));
	cfg = xasprintf("%s/config.yaml", tmpl);
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fprintf(f, "clusters:\n  alpha:\n    hosts: %s:%d\n    user: %s\n  beta:\n    hosts: %s:%d\n"
	    "    user: %s\n", r->host, r->port, r->user, r->host, r->port, r->user);
	fclose(f);
	name = xasprintf("twocl%d", rig_uniq());
	cmd = xasprintf("-J %s -t 2", name);
	id = rig_sbatch(cmd, "'sleep 120'");
	free(cmd);
	env = xasprintf("SLURM_HOSTNAME= TAOTOP_CLUSTER= TAOTOP_CONFIG=%s", cfg);
	so.env = env;
	screen_open(&s, "two-clusters", &so);
	screen_wait_line(&s, 20, "CLUSTER", "STATE", NULL);
	screen_filter(&s, name);
	screen_wait_line(&s, 20, "alpha", id, NULL);
	screen_wait_line(&s, 20, "beta", id, NULL);
	line = screen_line_with(&s, "CLUSTER");
	cr_expect(strstr(line, "NAME") != NULL && strstr(line, "STATE") != NULL, "%s", line);
	free(line);
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	cmd = xasprintf("scancel %s", id);
	free(rig_ssh_ok(cmd));
	free(cmd);
	rig_local("rm -rf %s", tmpl);
	free(cfg), free(env), free(id), free(name);
}

/* The monitor's first frame shows taotop's jobs as their records on disk
 * say (from the records' index), before the link is up: here it never
 * comes (nothing listens on port 1). What a record kept from the cluster
 * (a message with escapes) is drawn sanitised, like any row. */
Test(screen, the_records_on_disk_show_before_the_link_is_up, .timeout = 120)
{
	char home[] = "/tmp/taotop-screen-disk-XXXXXX", *jobs, *env, *err = NULL, *title0, *title1;
	struct screen_opts so = { .cols = 120, .lines = 40, .hosts = "127.0.0.1:1" };
	struct record_store *st;
	struct job_record *r;
	struct screen s;

	cr_assert_not_null(mkdtemp(home));
	jobs = xasprintf("%s/taotop/jobs", home);
	st = store_open(jobs, &err);
	cr_assert_not_null(st, "%s", err);
	r = record_new("tao-20261201-disk01");
	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, "4242");
	record_set(&r->network_arch, "classification_pyt");
	record_set(&r->action, "train");
	record_transition(r, TAO_ERROR, "FAILED", "\x1b]0;PWNED-TITLE\x07\x1b[2Jdisk-note-done",
	    "scheduler", time(NULL) - 60);
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	record_free(r);
	r = record_new("tao-20261201-disk02");
	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, "4243");
	r->state = TAO_RUNNING;
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	record_free(r);
	store_close(st);

	env = xasprintf("XDG_STATE_HOME=%s", home);
	so.env = env;
	screen_open(&s, "disk-rows", &so);
	title0 = screen_tmux(&s, "display -p -t 0 '#{pane_title}'");
	screen_wait_line(&s, 10, "tao-20261201-disk01", "4242", "Error", NULL);
	screen_wait_line(&s, 5, "tao-20261201-disk02", "Running", NULL);
	screen_wait(&s, 5, "disk-note-done", NULL);
	cr_assert_null(screen_line_with(&s, "PWNED"));
	title1 = screen_tmux(&s, "display -p -t 0 '#{pane_title}'");
	cr_assert_str_eq(title1, title0, "the title changed");
	cr_assert_eq(screen_row_of(&s, "NAME"), 0, "the header moved");
	/* Never connected: the rows are the records', the link says so. */
	cr_assert_null(screen_line_with(&s, "polled "));
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	rig_local("rm -rf %s", home);
	free(title0), free(title1), free(env), free(jobs);
}

/* A year of records: the list holds the newest page of finished jobs
 * (TRACKER_PAGE), the header says how many older ones wait on disk, and
 * moving down past the last line brings them, as a user scrolls to them. */
Test(screen, past_the_last_line_the_older_finished_jobs_come, .timeout = 180)
{
	char home[] = "/tmp/taotop-screen-page-XXXXXX", *jobs, *env;
	/* Never connected (nothing listens on port 1): the cluster's own rows
	 * (the test user's other jobs in accounting's window) would arrive
	 * with the first poll, between G and j, and move the last line. */
	struct screen_opts so = { .cols = 200, .lines = 30, .hosts = "127.0.0.1:1" };
	struct screen s;
	time_t now = time(NULL);
	char *line;

	cr_assert_not_null(mkdtemp(home));
	jobs = xasprintf("%s/taotop/jobs", home);
	cr_assert_eq(rig_local("mkdir -p %s", jobs), 0);
	/* 10 000 newer finished jobs, and 3 older than all of them. */
	for (int i = 0; i < 10003; i++) {
		char id[48], ref[24];
		int old = i < 3;
		if (old)
			snprintf(id, sizeof(id), "tao-20251201-oldjob%d", i);
		else
			snprintf(id, sizeof(id), "tao-20261130-%06x", i);
		snprintf(ref, sizeof(ref), "%d", 80000000 + i);
		struct job_record *r = record_new(id);
		record_set(&r->cluster, "rig");
		record_set(&r->backend_ref, ref);
		record_set(&r->network_arch, "classification_pyt");
		record_set(&r->action, "train");
		r->created = r->updated = now - (old ? 365 * 86400 : 20000) + i;
		record_transition(r, TAO_DONE, "COMPLETED", NULL, "scheduler", r->created + 60);
		char *json = record_to_json(r), *path = xasprintf("%s/%s.json", jobs, id);
		FILE *f = fopen(path, "w");
		cr_assert(f != NULL && fputs(json, f) >= 0 && fclose(f) == 0, "%s", path);
		free(json), free(path);
		record_free(r);
	}
	cr_assert_eq(rig_local("chmod -R go-rwx %s", home), 0);
	env = xasprintf("XDG_STATE_HOME=%s", home);
	so.env = env;
	screen_open(&s, "page", &so);
	screen_wait_line(&s, 30, "NAME", "(3 older on disk)", NULL);
	screen_filter(&s, "oldjob");
	screen_wait_line(&s, 10, "NAME", " 0 jobs (3 older on disk) matching /oldjob", NULL);
	cr_assert_null(screen_line_with(&s, "tao-20251201-oldjob"), "not in the first page");
	screen_keys(&s, "Escape");
	screen_wait_gone(&s, 10, "matching /oldjob");
	/* To the last line, then one more down. */
	screen_keys(&s, "G");
	screen_keys(&s, "j");
	screen_wait(&s, 30, "older finished jobs: the next 10000 coming (3 more on disk)", NULL);
	screen_filter(&s, "oldjob");
	screen_wait_line(&s, 30, "tao-20251201-oldjob", "80000000", "Done", NULL);
	screen_wait_line(&s, 5, "tao-20251201-oldjob", "80000002", "Done", NULL);
	screen_wait_line(&s, 5, "3 jobs matching /oldjob", NULL);
	line = screen_line_with(&s, "NAME");
	cr_expect(line != NULL && strstr(line, "older on disk") == NULL, "all of them shown: %s",
	    line);
	free(line);
	screen_keys(&s, "q");
	cr_expect_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	rig_local("rm -rf %s", home);
	free(env), free(jobs);
}

/* A pane that follows shows the end of its log: a search there finds the
 * nearest line above (not "not found below"), and n past the last match
 * goes on from the top, saying so. */
Test(screen, a_search_in_a_following_pane_finds_the_line_above, .timeout = 180)
{
	char *dir = screen_shared_dir("findup");
	char opts[512], name[64], *id, *line, *cmd;
	struct screen s;
	struct screen_opts so = { .cols = 120, .lines = 40 };
	int row, out_row, err_row;

	snprintf(name, sizeof(name), "findup%d", rig_uniq());
	snprintf(opts, sizeof(opts), "-J %s -t 5 -o %s/f.out -e %s/f.err", name, dir, dir);
	id = rig_sbatch(opts, "'for i in $(seq 1 60); do echo \"Epoch $i/60 loss 0.$i\"; done; "
	    "echo tail-done; sleep 120'");
	screen_open(&s, "findup", &so);
	screen_filter(&s, name);
	screen_wait_line(&s, 20, name, "Running", NULL);
	screen_wait(&s, 30, "Epoch 60/60", "tail-done", NULL);
	cr_assert_eq(screen_row_of(&s, "Epoch 7/60"), -1, "the pane shows the end, not epoch 7");
	screen_keys(&s, "Tab");	/* the out pane, following */
	screen_keys(&s, "/");
	screen_type(&s, "Epoch 7/");
	screen_keys(&s, "Enter");
	screen_wait(&s, 10, "Epoch 7/60 loss 0.7", NULL);
	out_row = screen_row_of(&s, " main.out ");
	err_row = screen_row_of(&s, " main.err ");
	row = screen_row_of(&s, "Epoch 7/60 loss 0.7");
	cr_expect(row > out_row && row < err_row, "epoch 7 on row %d, outside main.out's pane "
	    "(%d..%d)", row, out_row, err_row);
	line = screen_line_with(&s, "not found");
	cr_expect_null(line, "%s", line);
	free(line);
	/* The only match: n goes on from the top, and says so. */
	screen_keys(&s, "n");
	screen_wait(&s, 10, "'Epoch 7/': none below, went on from the top", NULL);
	screen_wait(&s, 5, "Epoch 7/60 loss 0.7", NULL);
	screen_keys(&s, "q");
	cr_assert_eq(screen_wait_exit(&s, 10), 0);
	screen_close(&s);
	cmd = xasprintf("scancel %s", id);
	free(rig_ssh_ok(cmd));
	free(cmd), free(id), free(dir);
}

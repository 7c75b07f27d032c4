/*
 * Screen tests: the real taotop binary in a detached tmux (a server of its
 * own per test), keys in with send-keys, text out with capture-pane, against
 * the real test cluster. taotop's stderr goes to a file, which must hold no
 * sanitizer report when the screen closes.
 */
#ifndef TAOTOP_TESTS_HELPER_SCREEN_H
#define TAOTOP_TESTS_HELPER_SCREEN_H

struct screen {
	char	*sock;		/* tmux -L name */
	char	*dir;		/* this screen's temp folder (state, log, stderr) */
	char	*hosts;		/* SLURM_HOSTNAME used */
};

struct screen_opts {
	int		 cols, lines;
	const char	*hosts;		/* NULL: the rig's sshd */
	const char	*known_hosts;	/* NULL: the rig's */
	const char	*args;		/* extra taotop arguments, or NULL */
	const char	*env;		/* extra VAR=value words, or NULL */
	int		 typescript;	/* record every byte taotop writes to the
					 * terminal (script(1)) in DIR/typescript */
};

/* Start taotop; name makes the tmux socket unique. */
void screen_open(struct screen *s, const char *name, const struct screen_opts *o);
/* The screen's text, one line per row (caller frees). */
char *screen_text(struct screen *s);
/* The same with colours and attributes as escape sequences. */
char *screen_text_attrs(struct screen *s);
/* Wait until the screen holds every one of the NULL-terminated texts on
 * one line each (each may be on a different line); fails the test after
 * timeout_s with the screen in the message. Here and below, a text that is
 * a number (a SLURM job id) is found only whole, never inside a longer one. */
void screen_wait(struct screen *s, int timeout_s, ...) __attribute__((sentinel));
/* Wait until one line holds all of the texts together. */
void screen_wait_line(struct screen *s, int timeout_s, ...) __attribute__((sentinel));
/* Wait until no line holds text any more. */
void screen_wait_gone(struct screen *s, int timeout_s, const char *text);
/* Wait until the line holding text is there and is not old (NULL: any);
 * that line (caller frees). */
char *screen_wait_line_changed(struct screen *s, int timeout_s, const char *text,
    const char *old);
/* What taotop wrote to the terminal (screen_opts.typescript) once it holds
 * want, or after timeout_s as it is (caller frees). */
char *screen_typescript_wait(struct screen *s, int timeout_s, const char *want);
/* The line holding text (caller frees), or NULL. */
char *screen_line_with(struct screen *s, const char *text);
/* Row number (0-based) of the first line holding text, or -1. */
int screen_row_of(struct screen *s, const char *text);
/* tmux send-keys words: "j", "Enter", "Escape", "C-c", literal text...; they
 * pass through sh -c unquoted (several words at once), so a key the shell
 * expands ("*", "?", "~") is quoted: "'*'". */
void screen_keys(struct screen *s, const char *keys);
/* Literal text, typed. */
void screen_type(struct screen *s, const char *text);
void screen_resize(struct screen *s, int cols, int lines);
/* Run a tmux command for this screen's server; its output (caller frees). */
char *screen_tmux(struct screen *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* taotop's process id, or 0 once it has exited. */
int screen_pid(struct screen *s);
/* After q: wait for the shell's line saying how taotop exited; returns the
 * exit code. */
int screen_wait_exit(struct screen *s, int timeout_s);
/* A fresh folder of the shared storage for a test's files (caller frees). */
char *screen_shared_dir(const char *name);
/* Show only the jobs whose row holds text (the jobs filter, typed). */
void screen_filter(struct screen *s, const char *text);
/* Kill the server, check taotop's stderr for sanitizer reports, free. */
void screen_close(struct screen *s);
/* Kill every server this process opened and did not close (a suite's
 * .fini: a failed assertion skips screen_close). */
void screen_kill_all(void);

#endif

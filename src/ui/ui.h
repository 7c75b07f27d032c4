/*
 * The full-screen monitor: `taotop` with no verb. One poll() loop over the
 * keyboard, the clusters' worker descriptors (engine/watch/watch.h), a self-pipe
 * for signals and the timers; it never calls libssh and never waits on the
 * network, and draws once per pass only what changed.
 */
#ifndef TAOTOP_UI_UI_H
#define TAOTOP_UI_UI_H

struct ui_opts {
	const char	*theme;		/* NULL: the config's, else "default" */
	int		 readonly;	/* refuse every action that changes something */
	int		 log_colors;	/* -1: the config's; 0 strip, 1 render SGR */
};

/* Run until the user quits; returns an exit code (taotop(1)). Messages for
 * errors before the screen opens go to stderr. */
int ui_run(const struct ui_opts *o);

#endif

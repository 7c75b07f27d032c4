/* The shells a staged sbatch must run under (bash, and dash as POSIX sh),
 * for the unit tests that run the templates' fixed text as it is. */
#ifndef TAOTOP_TESTS_SHELLS_H
#define TAOTOP_TESTS_SHELLS_H

#include <stdlib.h>

#include "util/xmalloc.h"

static const char *const shells[] = { "bash", "dash" };

/* Whether shell is on this machine's PATH. */
static inline int have(const char *shell)
{
	char *cmd = xasprintf("command -v %s >/dev/null 2>&1", shell);
	int ok = system(cmd) == 0;

	free(cmd);
	return ok;
}

#endif

#include "util/share.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xmalloc.h"

char *share_dir(const char *sub)
{
	const char *share = getenv("TAOTOP_SHARE");
	char exe[PATH_MAX];
	ssize_t n;

	if (share != NULL && share[0] != '\0')
		return xasprintf("%s/%s", share, sub);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash, *dir;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			dir = xasprintf("%s/../share/taotop/%s", exe, sub);
			if (access(dir, R_OK) == 0)
				return dir;
			free(dir);
			/* Run from the source tree: build/rel/taotop. */
			dir = xasprintf("%s/../../%s", exe, sub);
			if (access(dir, R_OK) == 0)
				return dir;
			free(dir);
		}
	}
	return xasprintf("%s/%s", TAOTOP_DATADIR, sub);
}

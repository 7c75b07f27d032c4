#include "util/share.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/compat.h"
#include "util/xmalloc.h"

char *share_dir(const char *sub)
{
	const char *share = getenv("TAOTOP_SHARE");
	char *exe;

	if (share != NULL && share[0] != '\0')
		return xasprintf("%s/%s", share, sub);
	exe = compat_exe_path();
	if (exe != NULL) {
		char *slash = strrchr(exe, '/'), *dir = NULL;
		if (slash != NULL) {
			*slash = '\0';
			dir = xasprintf("%s/../share/taotop/%s", exe, sub);
			if (access(dir, R_OK) != 0) {
				free(dir);
				/* Run from the source tree: build/rel/taotop. */
				dir = xasprintf("%s/../../%s", exe, sub);
				if (access(dir, R_OK) != 0) {
					free(dir);
					dir = NULL;
				}
			}
		}
		free(exe);
		if (dir != NULL)
			return dir;
	}
	return xasprintf("%s/%s", TAOTOP_DATADIR, sub);
}

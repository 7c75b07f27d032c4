/* P: the screen as plain text in a file, for a bug report or a note. */
#include "ui/app.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "engine/store/store.h"
#include "ui/message.h"
#include "util/xmalloc.h"

/* The screen as plain text, in the state folder beside the records. */
void dump_screen(struct app *a)
{
	const char *dir = store_dir(a->store);
	char stamp[32], *path, *parent;
	const char *slash = strrchr(dir, '/');
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;
	int fd, y;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	parent = slash != NULL ? xstrndup(dir, (size_t)(slash - dir)) : xstrdup(".");
	path = xasprintf("%s/screen-%s.txt", parent, stamp);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		ui_message(a, 1, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path), free(parent);
		return;
	}
	for (y = 0; y < a->lines; y++) {
		wchar_t line[1024];
		char mb[4096];
		int n = mvwinnwstr(curscr, y, 0, line, a->cols < 1023 ? a->cols : 1023);
		size_t len;
		if (n == ERR)
			line[0] = L'\0';
		len = wcstombs(mb, line, sizeof(mb) - 1);
		if (len == (size_t)-1)
			len = 0;
		while (len > 0 && mb[len - 1] == ' ')
			len--;
		mb[len] = '\0';
		fprintf(f, "%s\n", mb);
	}
	if (fclose(f) != 0)
		ui_message(a, 1, "cannot write %s: %s", path, strerror(errno));
	else
		ui_message(a, 0, "screen written to %s", path);
	free(path), free(parent);
}

#include "util/compat.h"
#include "ui/picker.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xmalloc.h"

static int by_name(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int dx = x[strlen(x) - 1] == '/', dy = y[strlen(y) - 1] == '/';

	if (strcmp(x, "../") == 0 || strcmp(y, "../") == 0)
		return strcmp(x, "../") == 0 ? -1 : 1;
	if (dx != dy)
		return dx ? -1 : 1;
	return strcmp(x, y);
}

static int is_bundle(const char *name)
{
	size_t len = strlen(name);

	return (len > 5 && strcmp(name + len - 5, ".yaml") == 0) ||
	    (len > 4 && strcmp(name + len - 4, ".yml") == 0);
}

static void add(struct picker *p, char *name)
{
	p->names = xreallocarray(p->names, p->n + 1, sizeof(*p->names));
	p->names[p->n++] = name;
}

static void clear(struct picker *p)
{
	while (p->n > 0)
		free(p->names[--p->n]);
	free(p->names);
	p->names = NULL;
	free(p->error);
	p->error = NULL;
	p->sel = 0;
}

void picker_open(struct picker *p, const char *dir)
{
	char *abs = compat_realpath(dir);
	DIR *d;
	struct dirent *e;

	clear(p);
	if (abs != NULL) {
		free(p->dir);
		p->dir = abs;
	} else if (p->dir == NULL) {
		p->dir = xstrdup(dir);
	}
	if (strcmp(p->dir, "/") != 0)
		add(p, xstrdup("../"));
	d = abs != NULL ? opendir(abs) : NULL;
	if (d == NULL) {
		p->error = xasprintf("%s: %s", dir, strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat sb;
		char *path;
		if (e->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", p->dir, e->d_name);
		if (stat(path, &sb) == 0) {
			if (S_ISDIR(sb.st_mode))
				add(p, xasprintf("%s/", e->d_name));
			else if (S_ISREG(sb.st_mode) && is_bundle(e->d_name))
				add(p, xstrdup(e->d_name));
		}
		free(path);
	}
	closedir(d);
	qsort(p->names, p->n, sizeof(*p->names), by_name);
}

void picker_up(struct picker *p)
{
	char *slash = p->dir ? strrchr(p->dir, '/') : NULL, *child, *parent;
	size_t i;

	if (slash == NULL || strcmp(p->dir, "/") == 0)
		return;
	child = xasprintf("%s/", slash + 1);
	parent = slash == p->dir ? xstrdup("/") : xstrndup(p->dir, (size_t)(slash - p->dir));
	picker_open(p, parent);
	for (i = 0; i < p->n; i++)
		if (strcmp(p->names[i], child) == 0)
			p->sel = i;
	free(child);
	free(parent);
}

char *picker_enter(struct picker *p)
{
	const char *name;
	char *path;

	if (p->sel >= p->n)
		return NULL;
	name = p->names[p->sel];
	if (strcmp(name, "../") == 0) {
		picker_up(p);
		return NULL;
	}
	if (name[strlen(name) - 1] == '/') {
		path = xasprintf("%s/%.*s", strcmp(p->dir, "/") == 0 ? "" : p->dir,
		    (int)strlen(name) - 1, name);
		picker_open(p, path);
		free(path);
		return NULL;
	}
	return xasprintf("%s/%s", strcmp(p->dir, "/") == 0 ? "" : p->dir, name);
}

void picker_free(struct picker *p)
{
	clear(p);
	free(p->dir);
	p->dir = NULL;
}

#include "util/compat.h"
#include "engine/store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/store/recindex.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

struct record_store {
	char		*dir;
	int		 lock_fd;
	pthread_mutex_t	 mutex;
	int		 fail_before_rename;
	struct rec_index *index;	/* made by the first recindex_of */
};

/* NULL when there is no home to put it in (never a shared folder). */
static char *default_dir(void)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct passwd *pw;

	if (xdg != NULL && xdg[0] == '/')
		return xasprintf("%s/taotop/jobs", xdg);
	if ((home == NULL || home[0] != '/') && (pw = getpwuid(getuid())) != NULL)
		home = pw->pw_dir;
	if (home == NULL || home[0] != '/')
		return NULL;
	return xasprintf("%s/.local/state/taotop/jobs", home);
}

/* The folder must be the user's own and private: records hold what
 * becomes commands on the cluster, and another user able to write them
 * could choose those. */
static int private_dir(const char *dir, char **err)
{
	struct stat st;

	if (lstat(dir, &st) != 0) {
		*err = xasprintf("cannot use the job records folder %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		*err = xasprintf("the job records folder %s is not a folder (a link or a file): "
		    "refused; move it away", dir);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		*err = xasprintf("the job records folder %s belongs to uid %ld, not to you: refused; "
		    "set XDG_STATE_HOME to a folder of your own", dir, (long)st.st_uid);
		return -1;
	}
	if ((st.st_mode & 077) != 0) {
		*err = xasprintf("the job records folder %s can be read or written by others (mode "
		    "%03o): refused; chmod 700 it", dir, (unsigned)(st.st_mode & 0777));
		return -1;
	}
	return 0;
}

static void lock(struct record_store *s);
static void unlock(struct record_store *s);

/* A temp file exists only while its writer holds the lock: one seen under
 * the lock was left by a writer that died. */
static void remove_stale_temps(struct record_store *s)
{
	DIR *d;
	struct dirent *e;

	lock(s);
	d = opendir(s->dir);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strstr(e->d_name, ".json.tmp.") != NULL) {
			char *p = xasprintf("%s/%s", s->dir, e->d_name);
			unlink(p);
			free(p);
		}
	}
	if (d != NULL)
		closedir(d);
	unlock(s);
}

struct record_store *store_open(const char *dir, char **err)
{
	struct record_store *s = xcalloc(1, sizeof(*s));
	char *lock;

	s->dir = dir != NULL ? xstrdup(dir) : default_dir();
	if (s->dir == NULL) {
		*err = xstrdup("no folder for the job records: HOME is not set and you have no home "
		    "directory; set XDG_STATE_HOME");
		free(s);
		return NULL;
	}
	if (file_mkdir_p(s->dir, 0700) != 0) {
		*err = xasprintf("cannot create the job records folder %s: %s", s->dir, strerror(errno));
		free(s->dir);
		free(s);
		return NULL;
	}
	if (private_dir(s->dir, err) != 0) {
		free(s->dir);
		free(s);
		return NULL;
	}
	lock = xasprintf("%s/.lock", s->dir);
	s->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lock_fd < 0) {
		*err = xasprintf("cannot open %s: %s", lock, strerror(errno));
		free(lock);
		free(s->dir);
		free(s);
		return NULL;
	}
	free(lock);
	pthread_mutex_init(&s->mutex, NULL);
	remove_stale_temps(s);
	return s;
}

void store_close(struct record_store *s)
{
	if (s == NULL)
		return;
	recindex_free(s->index);
	close(s->lock_fd);
	pthread_mutex_destroy(&s->mutex);
	free(s->dir);
	free(s);
}

const char *store_dir(const struct record_store *s)
{
	return s->dir;
}

struct rec_index *recindex_of(struct record_store *s)
{
	struct rec_index *x;

	pthread_mutex_lock(&s->mutex);
	if (s->index == NULL)
		s->index = recindex_new(s->dir);
	x = s->index;
	pthread_mutex_unlock(&s->mutex);
	return x;
}

void store_test_fail_before_rename(struct record_store *s, int on)
{
	s->fail_before_rename = on;
}

static void lock(struct record_store *s)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	pthread_mutex_lock(&s->mutex);
	while (fcntl(s->lock_fd, F_SETLKW, &fl) != 0 && errno == EINTR)
		;
}

static void unlock(struct record_store *s)
{
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

	fcntl(s->lock_fd, F_SETLK, &fl);
	pthread_mutex_unlock(&s->mutex);
}

static char *path_of(const struct record_store *s, const char *id)
{
	return xasprintf("%s/%s.json", s->dir, id);
}

/* Write text to path atomically; the caller holds the lock. */
static int write_atomic(struct record_store *s, const char *path, const char *text, char **err)
{
	if (file_write_atomic(path, NULL, text, strlen(text),
	    FILE_SYNC_DIR | (s->fail_before_rename ? FILE_FAIL_BEFORE_RENAME : 0)) == 0)
		return 0;
	*err = xasprintf("cannot write %s: %s; the record there is unchanged", path, strerror(errno));
	return -1;
}

static char *read_file(const char *path, char **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct buf b;
	char chunk[8192];
	ssize_t n;

	if (fd < 0) {
		*err = xasprintf("%s: %s", path, errno == ENOENT ? "no such job record" : strerror(errno));
		return NULL;
	}
	buf_init(&b);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)n);
	close(fd);
	return buf_detach(&b);
}

static struct job_record *load_path(const char *path, char **err)
{
	char *text = read_file(path, err), *why = NULL;
	struct job_record *r;

	if (text == NULL)
		return NULL;
	r = record_from_json(text, &why);
	free(text);
	if (r == NULL) {
		*err = xasprintf("%s: corrupt job record (%s): left as it is; move it away to "
		    "silence this", path, why);
		free(why);
	}
	return r;
}

char *store_mint_id(struct record_store *s)
{
	char day[16];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(day, sizeof(day), "%Y%m%d", &tm);
	for (;;) {
		unsigned char rnd[3];
		char *id, *path;

		if (compat_random_bytes(rnd, sizeof(rnd)) != 0)
			abort();
		id = xasprintf("tao-%s-%02x%02x%02x", day, rnd[0], rnd[1], rnd[2]);
		path = path_of(s, id);
		if (access(path, F_OK) != 0) {
			free(path);
			return id;
		}
		free(path);
		free(id);
	}
}

int store_create(struct record_store *s, const struct job_record *r, char **err)
{
	char *path, *text;
	int rc;

	if (!record_id_ok(r->id)) {
		*err = xasprintf("'%s' is not a valid job id", r->id ? r->id : "");
		return -1;
	}
	path = path_of(s, r->id);
	lock(s);
	if (access(path, F_OK) == 0) {
		unlock(s);
		*err = xasprintf("%s: a record with this id exists already", path);
		free(path);
		return -1;
	}
	text = record_to_json(r);
	rc = write_atomic(s, path, text, err);
	unlock(s);
	free(text);
	free(path);
	return rc;
}

int store_remove(struct record_store *s, const char *id, char **err)
{
	char *path;
	int rc;

	if (!record_id_ok(id)) {
		*err = xasprintf("'%s' is not a valid job id", id);
		return -1;
	}
	path = path_of(s, id);
	lock(s);
	rc = unlink(path);
	unlock(s);
	if (rc != 0)
		*err = xasprintf("%s: cannot remove it: %s", path, strerror(errno));
	free(path);
	return rc == 0 ? 0 : -1;
}

int store_load(struct record_store *s, const char *id, struct job_record **out, char **err)
{
	char *path;

	if (!record_id_ok(id)) {
		*err = xasprintf("'%s' is not a valid job id", id);
		return -1;
	}
	path = path_of(s, id);
	*out = load_path(path, err);
	free(path);
	return *out != NULL ? 0 : -1;
}

int store_update(struct record_store *s, const char *id, record_update_fn *fn, void *arg,
    char **err)
{
	struct job_record *r;
	char *path, *text;
	int rc;

	if (!record_id_ok(id)) {
		*err = xasprintf("'%s' is not a valid job id", id);
		return -1;
	}
	path = path_of(s, id);
	lock(s);
	r = load_path(path, err);
	if (r == NULL) {
		rc = -1;
		goto out;
	}
	rc = fn(r, arg, err);
	if (rc == 1) {
		text = record_to_json(r);
		rc = write_atomic(s, path, text, err) == 0 ? 0 : -1;
		free(text);
	}
out:
	unlock(s);
	record_free(r);
	free(path);
	return rc;
}

static int by_created(const void *a, const void *b)
{
	const struct job_record *x = *(struct job_record *const *)a;
	const struct job_record *y = *(struct job_record *const *)b;

	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return strcmp(x->id, y->id);
}

int store_list(struct record_store *s, struct job_record ***out, size_t *n, char **warnings)
{
	DIR *d = opendir(s->dir);
	struct dirent *e;
	struct buf warn;

	*out = NULL;
	*n = 0;
	if (warnings != NULL)
		*warnings = NULL;
	if (d == NULL)
		return -1;
	buf_init(&warn);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		char *path, *err = NULL;
		struct job_record *r;

		if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		path = xasprintf("%s/%s", s->dir, e->d_name);
		r = load_path(path, &err);
		if (r == NULL) {
			buf_addf(&warn, "%s%s", warn.len ? "\n" : "", err);
		} else {
			*out = xreallocarray(*out, *n + 1, sizeof(**out));
			(*out)[(*n)++] = r;
		}
		free(err);
		free(path);
	}
	closedir(d);
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), by_created);
	if (warnings != NULL && warn.len > 0)
		*warnings = buf_detach(&warn);
	buf_free(&warn);
	return 0;
}

void store_list_free(struct job_record **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		record_free(list[i]);
	free(list);
}

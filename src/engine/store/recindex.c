/*
 * The records' index: entries, the folder followed, the index file. Over
 * 800 lines because the file's format (put_/get_ pairs, one per field)
 * and the entries it reads share one private struct entry and its
 * string block; each half alone would need it in a header.
 */
#include "util/compat.h"
#include "engine/store/recindex.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/store/record.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/strmap.h"
#include "util/xmalloc.h"

/* Version 2 carries each record's row, version 3 its results folder too,
 * version 4 the run's name; version 5 (the requeue branch's, without the
 * name) its segments: how many (the line's next-to-last column) and whether
 * it waits requeued for the next (the last); version 6 both the name and
 * those; version 7 the efficiency card's figure (the last column). A
 * file of another version is not read as one: its magic differs,
 * so it is rebuilt from the records. */
#define INDEX_MAGIC	"taotop-index 7\n"
#define NSTRINGS	8	/* cluster .. name: one block per entry */
#define SWEEP_DEFAULT	256	/* files stat'ed per refresh: ~2 ms here */
#define SAVE_EVERY_S	300
/* A folder mtime this close to the moment it was read may hide a change
 * made in the same tick of the file system's clock (coarse: a few ms):
 * such a folder is read again at the next refresh. */
#define RACY_NS		100000000LL

struct entry {
	char		*id;
	/* cluster, ref and the row's strings point into text (one block:
	 * a start makes 100 000 entries), or are NULL */
	char		*text;
	const char	*cluster, *ref;
	enum tao_state	 state;
	time_t		 created;
	unsigned long	 gen;
	/* its row's (rec_meta's) */
	const char	*arch, *action, *native, *message, *results_dir, *name;
	struct record_alloc *alloc;		/* NULL: none */
	struct record_progress *progress;	/* NULL: none */
	int		 segments, requeued;	/* rec_meta's */
	char		 figure[16];		/* rec_meta's */
	/* The file as last read: a different inode, mtime or size is a change. */
	uint64_t	 ino;
	int64_t		 mtime_ns, size;
	int		 bad;		/* did not parse as it is */
	unsigned long	 seen;		/* the last scan that listed it */
	size_t		 pos;		/* in v */
};

struct rec_index {
	char		*dir, *file;
	pthread_mutex_t	 mu;
	struct entry	**v;
	size_t		 n, cap;
	struct strmap	*by_id;		/* id -> entry */
	struct strmap	*by_ref;	/* SLURM id -> records holding it (a count) */
	struct strmap	*by_cref;	/* "cluster\nSLURM id" -> entry */
	int		 loaded, scanned, racy;
	int64_t		 dir_mtime_ns;
	unsigned long	 scans, version, saved_version, next_gen;
	time_t		 saved_at;	/* 0: not yet by this process */
	size_t		 sweep_at, sweep_n;
};

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ns_of(&ts);
}

struct rec_index *recindex_new(const char *dir)
{
	struct rec_index *x = xcalloc(1, sizeof(*x));

	x->dir = xstrdup(dir);
	x->file = xasprintf("%s/.index/records", dir);
	pthread_mutex_init(&x->mu, NULL);
	x->by_id = strmap_new();
	x->by_ref = strmap_new();
	x->by_cref = strmap_new();
	x->sweep_n = SWEEP_DEFAULT;
	return x;
}

/* ---- entries --------------------------------------------------------------------------- */

/* A "cluster\nSLURM id" key, made on the stack (a start makes 100 000 of
 * them: xasprintf's formatting was a third of loading the index file). */
struct cref {
	char	 small[128];
	char	*big;		/* when it does not fit: free it */
};

static const char *cref_key(struct cref *k, const char *cluster, const char *ref)
{
	size_t c = cluster != NULL ? strlen(cluster) : 0, r = strlen(ref);
	char *p = k->small;

	k->big = NULL;
	if (c + r + 2 > sizeof(k->small))
		p = k->big = xmalloc(c + r + 2);
	if (c > 0)
		memcpy(p, cluster, c);
	p[c] = '\n';
	memcpy(p + c + 1, ref, r + 1);
	return p;
}

/* Take e's SLURM id out of the lookups (before it changes or goes). */
static void unref(struct rec_index *x, struct entry *e)
{
	intptr_t count;
	struct cref k;
	const char *key;

	if (e->ref == NULL)
		return;
	count = (intptr_t)strmap_get(x->by_ref, e->ref);
	if (count > 1)
		strmap_put(x->by_ref, e->ref, (void *)(count - 1));
	else
		strmap_del(x->by_ref, e->ref);
	key = cref_key(&k, e->cluster, e->ref);
	if (strmap_get(x->by_cref, key) == e)
		strmap_del(x->by_cref, key);
	free(k.big);
}

static void addref(struct rec_index *x, struct entry *e)
{
	struct cref k;

	if (e->ref == NULL)
		return;
	strmap_put(x->by_ref, e->ref, (void *)((intptr_t)strmap_get(x->by_ref, e->ref) + 1));
	strmap_put(x->by_cref, cref_key(&k, e->cluster, e->ref), e);
	free(k.big);
}

void recindex_meta_of(const struct job_record *r, struct rec_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->id = r->id;
	m->cluster = r->cluster;
	m->backend_ref = r->backend_ref;
	m->state = r->state;
	m->created = r->created;
	m->network_arch = r->network_arch;
	m->action = r->action;
	m->native = r->native;
	if (r->nhist > 0)
		m->message = r->hist[r->nhist - 1].message;
	m->results_dir = r->results_dir;
	m->name = r->name;
	m->alloc = r->has_alloc ? &r->alloc : NULL;
	m->progress = r->progress;
	m->segments = (int)r->nseg;
	m->requeued = r->state == TAO_PENDING && record_requeued(r);
	m->figure[0] = '\0';
	if (r->has_card)
		card_figure(&r->card, m->figure, sizeof(m->figure));
}

static void free_progress(struct record_progress *p)
{
	if (p != NULL)
		free(p->series);
	free(p);
}

/* e's strings from m, in one block. */
static void set_text(struct entry *e, const struct rec_meta *m)
{
	const char *from[NSTRINGS] = { m->cluster, m->backend_ref, m->network_arch, m->action,
		m->native, m->message, m->results_dir, m->name };
	const char **to[NSTRINGS] = { &e->cluster, &e->ref, &e->arch, &e->action, &e->native,
		&e->message, &e->results_dir, &e->name };
	size_t len[NSTRINGS], total = 1, k;
	char *p;

	for (k = 0; k < NSTRINGS; k++) {
		len[k] = from[k] != NULL ? strlen(from[k]) + 1 : 0;
		total += len[k];
	}
	free(e->text);
	p = e->text = xmalloc(total);
	for (k = 0; k < NSTRINGS; k++) {
		*to[k] = from[k] != NULL ? p : NULL;
		if (from[k] != NULL)
			memcpy(p, from[k], len[k]);
		p += len[k];
	}
}

/* e's row (everything of m but its id, gen and strings). */
static void set_row(struct entry *e, const struct rec_meta *m)
{
	e->segments = m->segments;
	e->requeued = m->requeued;
	memcpy(e->figure, m->figure, sizeof(e->figure));
	free(e->alloc);
	e->alloc = m->alloc != NULL ? (void *)xmemdup(m->alloc, sizeof(*m->alloc)) : NULL;
	free_progress(e->progress);
	e->progress = NULL;
	if (m->progress != NULL) {
		e->progress = (void *)xmemdup(m->progress, sizeof(*m->progress));
		e->progress->series = m->progress->nseries > 0 ? (void *)xmemdup(m->progress->series,
		    m->progress->nseries * sizeof(*m->progress->series)) : NULL;
	}
}

static void set_meta(struct rec_index *x, struct entry *e, const struct rec_meta *m)
{
	unref(x, e);
	set_text(e, m);
	e->state = m->state;
	e->created = m->created;
	set_row(e, m);
	addref(x, e);
	e->gen = ++x->next_gen;
	x->version++;
}

static void meta_of_entry(const struct entry *e, struct rec_meta *m)
{
	m->id = e->id;
	m->cluster = e->cluster;
	m->backend_ref = e->ref;
	m->state = e->state;
	m->created = e->created;
	m->gen = e->gen;
	m->network_arch = e->arch;
	m->action = e->action;
	m->native = e->native;
	m->message = e->message;
	m->results_dir = e->results_dir;
	m->name = e->name;
	m->alloc = e->alloc;
	m->progress = e->progress;
	m->segments = e->segments;
	m->requeued = e->requeued;
	memcpy(m->figure, e->figure, sizeof(m->figure));
}

static struct entry *entry_add(struct rec_index *x, const char *id)
{
	struct entry *e = xcalloc(1, sizeof(*e));

	e->id = xstrdup(id);
	e->bad = 1;	/* until it is read */
	if (x->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 256;
		x->v = xreallocarray(x->v, x->cap, sizeof(*x->v));
	}
	e->pos = x->n;
	x->v[x->n++] = e;
	strmap_put(x->by_id, id, e);
	x->version++;
	return e;
}

static void entry_remove(struct rec_index *x, struct entry *e)
{
	unref(x, e);
	strmap_del(x->by_id, e->id);
	x->v[e->pos] = x->v[--x->n];
	x->v[e->pos]->pos = e->pos;
	free(e->id);
	free(e->text);
	free(e->alloc);
	free_progress(e->progress);
	free(e);
	x->version++;
}

static void clear(struct rec_index *x)
{
	while (x->n > 0)
		entry_remove(x, x->v[x->n - 1]);
	x->scanned = 0;
}

/* Read e's file again: its stamp and what the index keeps of it. */
static void entry_read(struct rec_index *x, struct entry *e, struct buf *warn)
{
	char *path = xasprintf("%s/%s.json", x->dir, e->id), *text, *why = NULL;
	struct job_record *r;
	struct stat st;
	struct buf b;
	char chunk[8192];
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0) {
		/* Gone between the listing and now: the next scan drops it. */
		if (fd >= 0)
			close(fd);
		free(path);
		return;
	}
	buf_init(&b);
	while ((got = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)got);
	close(fd);
	/* The stamp of what was read (fstat of the open file): a rename
	 * after it gives another inode, seen by the next scan. */
	e->ino = (uint64_t)st.st_ino;
	e->mtime_ns = ns_of(&st.st_mtim);
	e->size = (int64_t)st.st_size;
	text = buf_detach(&b);
	r = record_from_json(text != NULL ? text : "", &why);
	free(text);
	if (r == NULL) {
		buf_addf(warn, "%s%s: corrupt job record (%s): left as it is; move it away to "
		    "silence this", warn->len ? "\n" : "", path, why);
		struct rec_meta none;
		memset(&none, 0, sizeof(none));
		if (!e->bad)
			set_meta(x, e, &none);
		e->bad = 1;
		x->version++;
	} else {
		struct rec_meta m;
		recindex_meta_of(r, &m);
		e->bad = 0;
		set_meta(x, e, &m);
	}
	record_free(r);
	free(why);
	free(path);
}

/* ---- the folder -------------------------------------------------------------------------- */

/* The id a record's file name gives, or NULL for any other file. */
static char *id_of_name(const char *name)
{
	size_t len = strlen(name);
	char *id;

	if (name[0] == '.' || len < 6 || strcmp(name + len - 5, ".json") != 0)
		return NULL;
	id = xstrndup(name, len - 5);
	if (!record_id_ok(id)) {
		free(id);
		return NULL;
	}
	return id;
}

/* List the folder: new files read, files renamed over (another inode)
 * read again, vanished ones dropped. */
static void scan(struct rec_index *x, int64_t dir_mtime, struct buf *warn)
{
	int64_t started = now_ns();
	DIR *d = opendir(x->dir);
	struct dirent *de;
	size_t i;

	if (d == NULL)
		return;
	x->scans++;
	while ((de = readdir(d)) != NULL) {
		char *id = id_of_name(de->d_name);
		struct entry *e;
		if (id == NULL)
			continue;
		e = strmap_get(x->by_id, id);
		if (e == NULL) {
			e = entry_add(x, id);
			entry_read(x, e, warn);
		} else if (e->ino != (uint64_t)de->d_ino) {
			entry_read(x, e, warn);
		}
		e->seen = x->scans;
		free(id);
	}
	closedir(d);
	for (i = x->n; i > 0; i--)
		if (x->v[i - 1]->seen != x->scans)
			entry_remove(x, x->v[i - 1]);
	x->scanned = 1;
	x->dir_mtime_ns = dir_mtime;
	x->racy = started - dir_mtime < RACY_NS;
}

/* Stat the next slice of records: a file written in place keeps its
 * inode (and the folder its mtime); its mtime or size tells. */
static void sweep(struct rec_index *x, struct buf *warn)
{
	size_t k;

	for (k = 0; k < x->sweep_n && k < x->n; k++) {
		struct entry *e;
		struct stat st;
		char *path;

		if (x->sweep_at >= x->n)
			x->sweep_at = 0;
		e = x->v[x->sweep_at++];
		path = xasprintf("%s/%s.json", x->dir, e->id);
		if (stat(path, &st) == 0 && ((uint64_t)st.st_ino != e->ino ||
		    ns_of(&st.st_mtim) != e->mtime_ns || (int64_t)st.st_size != e->size))
			entry_read(x, e, warn);
		free(path);
	}
}

/* ---- the index file ---------------------------------------------------------------------- */

/* FNV-1a over 8-byte words (then the last bytes one by one): it tells a
 * damaged file, nobody's forgery, and a start reads 10 MiB of index. */
static uint64_t checksum(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 1099511628211ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

/* A string field as written: "+value" with tab, newline and backslash
 * escaped ("\t", "\n", "\\": a line is an entry, a tab ends a field), or
 * "-" for none. */
static void put_field(struct buf *b, const char *s)
{
	if (s == NULL) {
		buf_adds(b, "\t-");
		return;
	}
	buf_adds(b, "\t+");
	for (; *s != '\0'; s++) {
		if (*s == '\t')
			buf_adds(b, "\\t");
		else if (*s == '\n')
			buf_adds(b, "\\n");
		else if (*s == '\\')
			buf_adds(b, "\\\\");
		else
			buf_addc(b, *s);
	}
}

/* A string field read back, unescaped in place: 0 with *out (NULL for
 * none), -1 when it is not one. */
static int get_field(char *s, char **out)
{
	char *r, *w;

	if (strcmp(s, "-") == 0) {
		*out = NULL;
		return 0;
	}
	if (s[0] != '+')
		return -1;
	for (r = w = s + 1; *r != '\0'; r++) {
		if (*r != '\\') {
			*w++ = *r;
			continue;
		}
		r++;
		if (*r == 't')
			*w++ = '\t';
		else if (*r == 'n')
			*w++ = '\n';
		else if (*r == '\\')
			*w++ = '\\';
		else
			return -1;
	}
	*w = '\0';
	*out = s + 1;
	return 0;
}

/* A decimal number of any 64-bit value (an inode's). */
static int get_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;

	for (; *s >= '0' && *s <= '9'; s++, n++) {
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	if (n == 0 || *s != '\0')
		return -1;
	*v = x;
	return 0;
}

/* A decimal number, optionally negative, that fits 64 bits (by hand: a
 * start reads 1 300 000 of them, and strtoll's locale costs). */
static int get_num(const char *s, long long *v)
{
	int neg = *s == '-';
	uint64_t x;

	if (get_u64(s + neg, &x) != 0 || x > (uint64_t)INT64_MAX)
		return -1;
	*v = neg ? -(long long)x : (long long)x;
	return 0;
}

/* TAO's series: "-" for none, else "+" and the values, comma-separated,
 * each exactly (%.17g reads back as the same double). */
static void put_series(struct buf *b, const struct record_progress *p)
{
	size_t i;

	if (p == NULL || p->nseries == 0) {
		buf_adds(b, "\t-");
		return;
	}
	buf_adds(b, "\t+");
	for (i = 0; i < p->nseries; i++)
		buf_addf(b, "%s%.17g", i ? "," : "", p->series[i]);
}

/* Into p->series (the caller frees it, also on -1). */
static int get_series(char *s, struct record_progress *p)
{
	size_t cap = 0;
	char *end;

	if (strcmp(s, "-") == 0)
		return 0;
	if (*s++ != '+')
		return -1;
	for (;;) {
		double v = strtod(s, &end);
		if (end == s)
			return -1;
		if (p->nseries == cap) {
			cap = cap ? cap * 2 : 16;
			p->series = xreallocarray(p->series, cap, sizeof(*p->series));
		}
		p->series[p->nseries++] = v;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* One entry's line: its file's stamp, then its meta and row. */
static void put_entry(struct buf *b, const struct entry *e)
{
	const struct record_alloc *al = e->alloc;
	const struct record_progress *pr = e->progress;

	buf_addf(b, "%s\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t%s\t%lld", e->id, e->ino,
	    e->mtime_ns, e->size, tao_state_name(e->state), (long long)e->created);
	put_field(b, e->cluster);
	put_field(b, e->ref);
	put_field(b, e->arch);
	put_field(b, e->action);
	put_field(b, e->native);
	put_field(b, e->message);
	put_field(b, e->results_dir);
	put_field(b, e->name);
	buf_addf(b, "\t%d", al != NULL);
	put_field(b, al != NULL ? al->partition : NULL);
	buf_addf(b, "\t%d\t%d\t%ld\t%ld", al ? al->nodes : 0, al ? al->gpus : 0,
	    al ? al->elapsed_s : -1L, al ? al->limit_s : -1L);
	put_field(b, al != NULL ? al->exit_code : NULL);
	buf_addf(b, "\t%d\t%d\t%d", pr != NULL, pr ? pr->epoch : -1, pr ? pr->max_epoch : -1);
	put_field(b, pr != NULL ? pr->eta : NULL);
	put_field(b, pr != NULL ? pr->metric : NULL);
	put_series(b, pr);
	buf_addf(b, "\t%d\t%d", e->segments, e->requeued);
	put_field(b, e->figure[0] ? e->figure : NULL);
	buf_addc(b, '\n');
}

/* The fields of a line: f[k] each, in the order put_entry writes them. */
enum { F_ID, F_INO, F_MTIME, F_SIZE, F_STATE, F_CREATED, F_CLUSTER, F_REF, F_ARCH, F_ACTION,
	F_NATIVE, F_MESSAGE, F_RESULTS, F_NAME, F_HAS_ALLOC, F_PARTITION, F_NODES, F_GPUS, F_ELAPSED, F_LIMIT,
	F_EXIT, F_HAS_PROGRESS, F_EPOCH, F_MAX_EPOCH, F_ETA, F_METRIC, F_SERIES, F_SEGMENTS, F_REQUEUED,
	F_FIGURE, F_COUNT };

/* The numbers of a line, n[k] for field k (others 0). */
static int get_numbers(char **f, long long *n)
{
	static const int which[] = { F_MTIME, F_SIZE, F_CREATED, F_HAS_ALLOC, F_NODES, F_GPUS,
		F_ELAPSED, F_LIMIT, F_HAS_PROGRESS, F_EPOCH, F_MAX_EPOCH, F_SEGMENTS, F_REQUEUED };
	size_t k;

	for (k = 0; k < sizeof(which) / sizeof(which[0]); k++)
		if (get_num(f[which[k]], &n[which[k]]) != 0)
			return -1;
	return 0;
}

/* The meta a line's fields say (strings in f, unescaped; progress's
 * series allocated into *pr, the caller's to free), and its file's stamp
 * (inode; mtime and size). */
static int meta_of_line(char **f, struct rec_meta *m, struct record_alloc *al,
    struct record_progress *pr, uint64_t *ino, int64_t stamp[2])
{
	long long n[F_COUNT] = { 0 };
	char *s[NSTRINGS], *part, *exit_code, *eta, *metric, *figure;
	int k;

	memset(m, 0, sizeof(*m));
	memset(al, 0, sizeof(*al));
	memset(pr, 0, sizeof(*pr));
	for (k = 0; k < NSTRINGS; k++)
		if (get_field(f[F_CLUSTER + k], &s[k]) != 0)
			return -1;
	if (get_numbers(f, n) != 0 || get_u64(f[F_INO], ino) != 0 ||
	    tao_state_parse(f[F_STATE], &m->state) != 0 ||
	    get_field(f[F_PARTITION], &part) != 0 || get_field(f[F_EXIT], &exit_code) != 0 ||
	    get_field(f[F_ETA], &eta) != 0 || get_field(f[F_METRIC], &metric) != 0 ||
	    get_series(f[F_SERIES], pr) != 0 || get_field(f[F_FIGURE], &figure) != 0)
		return -1;
	snprintf(m->figure, sizeof(m->figure), "%s", figure ? figure : "");
	m->id = f[F_ID];
	stamp[0] = n[F_MTIME], stamp[1] = n[F_SIZE];
	m->created = (time_t)n[F_CREATED];
	m->cluster = s[0], m->backend_ref = s[1], m->network_arch = s[2], m->action = s[3];
	m->native = s[4], m->message = s[5], m->results_dir = s[6], m->name = s[7];
	m->segments = (int)n[F_SEGMENTS], m->requeued = n[F_REQUEUED] != 0;
	if (n[F_HAS_ALLOC]) {
		snprintf(al->partition, sizeof(al->partition), "%s", part ? part : "");
		al->nodes = (int)n[F_NODES], al->gpus = (int)n[F_GPUS];
		al->elapsed_s = (long)n[F_ELAPSED], al->limit_s = (long)n[F_LIMIT];
		snprintf(al->exit_code, sizeof(al->exit_code), "%s", exit_code ? exit_code : "");
		m->alloc = al;
	}
	if (n[F_HAS_PROGRESS]) {
		pr->epoch = (int)n[F_EPOCH], pr->max_epoch = (int)n[F_MAX_EPOCH];
		snprintf(pr->eta, sizeof(pr->eta), "%s", eta ? eta : "");
		snprintf(pr->metric, sizeof(pr->metric), "%s", metric ? metric : "");
		m->progress = pr;
	}
	return 0;
}

/* One entry line (NUL-terminated, without its newline). */
static int load_line(struct rec_index *x, char *line)
{
	char *f[F_COUNT], *p;
	struct record_progress pr;
	struct record_alloc al;
	int64_t stamp[2];
	uint64_t ino;
	struct rec_meta m;
	struct entry *e;
	int k, rc;

	/* Split at the tabs (every field is one at least: strtok_r's
	 * generality cost a fifth of a start). */
	for (k = 0, p = line; k < F_COUNT; k++) {
		f[k] = p;
		p = strchr(p, '\t');
		if (p != NULL)
			*p++ = '\0';
		if ((p == NULL) != (k == F_COUNT - 1) || f[k][0] == '\0')
			return -1;
	}
	/* A second line of one id is caught at the end, by the count. */
	if (!record_id_ok(f[F_ID]))
		return -1;
	rc = meta_of_line(f, &m, &al, &pr, &ino, stamp);
	if (rc == 0) {
		e = entry_add(x, f[F_ID]);
		e->ino = ino;
		e->mtime_ns = stamp[0];
		e->size = stamp[1];
		e->bad = 0;
		set_meta(x, e, &m);
	}
	free(pr.series);
	return rc;
}

/* The lines from p up to end: at most one record each. */
static unsigned long long lines_in(const char *p, const char *end)
{
	unsigned long long n = p < end ? 1 : 0;

	while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		p++;
		if (p < end)
			n++;
	}
	return n;
}

static int load_text(struct rec_index *x, char *text, size_t len)
{
	char *end, *line, *next;
	unsigned long long count;
	uint64_t sum;
	size_t n = 0;

	if (len < strlen(INDEX_MAGIC) || strncmp(text, INDEX_MAGIC, strlen(INDEX_MAGIC)) != 0)
		return -1;
	/* The last line: "end COUNT CHECKSUM\n", over every byte before it. */
	if (len < 2 || text[len - 1] != '\n')
		return -1;
	text[len - 1] = '\0';
	end = strrchr(text, '\n');
	if (end == NULL || sscanf(end + 1, "end %llu %" SCNx64, &count, &sum) != 2 ||
	    checksum(text, (size_t)(end + 1 - text)) != sum)
		return -1;
	/* Sized once for what it holds: no table rehashed as it fills. The
	 * count is believed only as far as the text bears it out (a line a
	 * record): a short file claiming millions reserves nothing. */
	if (count > lines_in(text + strlen(INDEX_MAGIC), end))
		return -1;
	if (count > 0) {
		strmap_reserve(x->by_id, (size_t)count);
		strmap_reserve(x->by_ref, (size_t)count);
		strmap_reserve(x->by_cref, (size_t)count);
		x->cap = (size_t)count;
		x->v = xreallocarray(x->v, x->cap, sizeof(*x->v));
	}
	*end = '\0';
	for (line = text + strlen(INDEX_MAGIC); line < end; line = next) {
		next = strchr(line, '\n');
		if (next == NULL)
			next = end;
		*next++ = '\0';
		if (load_line(x, line) != 0)
			return -1;
		n++;
	}
	/* Every line a record of its own: the same id twice is not an index. */
	return n == count && strmap_count(x->by_id) == x->n ? 0 : -1;
}

static void load(struct rec_index *x)
{
	size_t len = 0;
	char *err = NULL, *text = NULL;
	struct stat st;

	x->loaded = 1;
	/* Beside the records, as private as they are: anything else was not
	 * written by taotop. */
	if (lstat(x->file, &st) != 0)
		return;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0 ||
	    (text = file_read_all(x->file, &len, &err)) == NULL || load_text(x, text, len) != 0) {
		log_msg(LOG_WARN, "records index %s is not usable%s%s: rebuilt from the records",
		    x->file, err ? ": " : "", err ? err : "");
		clear(x);
	}
	/* What was read is what the file holds: nothing to write back yet. */
	x->saved_version = x->version;
	free(text);
	free(err);
}

/* Write the index file atomically; the caller holds x->mu. Records that
 * do not parse are left out: the next start reads them. */
static int save(struct rec_index *x, char **err)
{
	char *folder = xasprintf("%s/.index", x->dir);
	struct buf b;
	size_t i, n = 0;
	int rc = -1;

	buf_init(&b);
	buf_adds(&b, INDEX_MAGIC);
	for (i = 0; i < x->n; i++) {
		if (x->v[i]->bad)
			continue;
		put_entry(&b, x->v[i]);
		n++;
	}
	buf_addf(&b, "end %zu %016" PRIx64 "\n", n, checksum(b.data, b.len));
	if ((mkdir(folder, 0700) == 0 || errno == EEXIST) &&
	    file_write_atomic(x->file, NULL, b.data, b.len, 0) == 0) {
		rc = 0;
		x->saved_version = x->version;
		x->saved_at = time(NULL);
	} else {
		*err = xasprintf("cannot write the records index %s: %s", x->file, strerror(errno));
		/* Not again before SAVE_EVERY_S: the records are what counts. */
		x->saved_at = time(NULL);
	}
	buf_free(&b);
	free(folder);
	return rc;
}

void recindex_refresh(struct rec_index *x, char **warnings)
{
	struct buf warn;
	struct stat st;
	char *err = NULL;

	buf_init(&warn);
	pthread_mutex_lock(&x->mu);
	if (!x->loaded)
		load(x);
	if (stat(x->dir, &st) == 0 &&
	    (!x->scanned || x->racy || ns_of(&st.st_mtim) != x->dir_mtime_ns))
		scan(x, ns_of(&st.st_mtim), &warn);
	sweep(x, &warn);
	if (x->version != x->saved_version &&
	    (x->saved_at == 0 || time(NULL) - x->saved_at >= SAVE_EVERY_S) && save(x, &err) != 0) {
		log_msg(LOG_WARN, "%s", err);
		free(err);
	}
	pthread_mutex_unlock(&x->mu);
	if (warnings != NULL)
		*warnings = warn.len > 0 ? buf_detach(&warn) : NULL;
	buf_free(&warn);
}

unsigned long recindex_version(struct rec_index *x)
{
	unsigned long v;

	pthread_mutex_lock(&x->mu);
	v = x->version;
	pthread_mutex_unlock(&x->mu);
	return v;
}

void recindex_each(struct rec_index *x, const char *cluster, recindex_visit_fn *fn, void *arg)
{
	size_t i;

	pthread_mutex_lock(&x->mu);
	for (i = 0; i < x->n; i++) {
		const struct entry *e = x->v[i];
		struct rec_meta m;
		if (e->bad || (cluster != NULL && (e->cluster == NULL || strcmp(e->cluster, cluster) != 0)))
			continue;
		meta_of_entry(e, &m);
		fn(&m, arg);
	}
	pthread_mutex_unlock(&x->mu);
}

int recindex_get(struct rec_index *x, const char *id, recindex_visit_fn *fn, void *arg)
{
	const struct entry *e;
	struct rec_meta m;
	int rc = -1;

	pthread_mutex_lock(&x->mu);
	if ((e = strmap_get(x->by_id, id)) != NULL && !e->bad) {
		meta_of_entry(e, &m);
		fn(&m, arg);
		rc = 0;
	}
	pthread_mutex_unlock(&x->mu);
	return rc;
}

int recindex_has_ref(struct rec_index *x, const char *ref)
{
	int has;

	pthread_mutex_lock(&x->mu);
	has = strmap_get(x->by_ref, ref) != NULL;
	pthread_mutex_unlock(&x->mu);
	return has;
}

char *recindex_find_ref(struct rec_index *x, const char *cluster, const char *ref)
{
	struct cref k;
	const char *key = cref_key(&k, cluster, ref);
	const struct entry *e;
	char *id = NULL;

	pthread_mutex_lock(&x->mu);
	if ((e = strmap_get(x->by_cref, key)) != NULL)
		id = xstrdup(e->id);
	pthread_mutex_unlock(&x->mu);
	free(k.big);
	return id;
}

int recindex_save(struct rec_index *x, char **err)
{
	int rc = 0;

	pthread_mutex_lock(&x->mu);
	if (x->scanned && x->version != x->saved_version)
		rc = save(x, err);
	pthread_mutex_unlock(&x->mu);
	return rc;
}

void recindex_set_sweep(struct rec_index *x, size_t n)
{
	pthread_mutex_lock(&x->mu);
	x->sweep_n = n;
	pthread_mutex_unlock(&x->mu);
}

void recindex_free(struct rec_index *x)
{
	char *err = NULL;

	if (x == NULL)
		return;
	if (recindex_save(x, &err) != 0) {
		log_msg(LOG_WARN, "%s", err);
		free(err);
	}
	clear(x);
	free(x->v);
	strmap_free(x->by_id);
	strmap_free(x->by_ref);
	strmap_free(x->by_cref);
	pthread_mutex_destroy(&x->mu);
	free(x->file);
	free(x->dir);
	free(x);
}

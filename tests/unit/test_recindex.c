/* The records' index (engine/recindex.h): it follows the folder, written
 * by this process, by another taotop or by hand, and a missing or corrupt
 * index file is rebuilt from the records, never believed. */
#include <criterion/criterion.h>
#if defined(__SANITIZE_ADDRESS__)
/* The sanitizer runtime's own count (compiler-rt's allocator_interface.h,
 * which GCC does not ship). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/store/recindex.h"
#include "engine/store/store.h"
#include "util/file.h"
#include "util/xmalloc.h"

/* A store over dir, or over a fresh temporary folder when dir is NULL. */
static struct record_store *store_at(const char *dir)
{
	char home[] = "/tmp/taotop-recindex-XXXXXX", *jobs = NULL, *why = NULL;
	struct record_store *st;

	if (dir == NULL) {
		cr_assert_not_null(mkdtemp(home));
		dir = jobs = xasprintf("%s/jobs", home);
	}
	st = store_open(dir, &why);
	cr_assert_not_null(st, "store_open %s: %s", dir, why);
	free(jobs);
	return st;
}

/* A record of cluster "rig" as SLURM job ref, in state st. */
static void put(struct record_store *s, const char *id, const char *ref, enum tao_state st)
{
	struct job_record *r = record_new(id);
	char *err = NULL;
	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, ref);
	r->state = st;
	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	record_free(r);
}

struct seen {
	char	ids[16][64];
	int	state[16];
	size_t	n;
};

static void note(const struct rec_meta *m, void *arg)
{
	struct seen *v = arg;
	if (v->n < 16) {
		snprintf(v->ids[v->n], sizeof(v->ids[0]), "%s", m->id);
		v->state[v->n++] = (int)m->state;
	}
}

/* The state the index holds for id, or -1 when it has no such record. */
static int state_of(struct rec_index *x, const char *id)
{
	struct seen v = { .n = 0 };
	size_t i;
	recindex_each(x, NULL, note, &v);
	for (i = 0; i < v.n; i++)
		if (strcmp(v.ids[i], id) == 0)
			return v.state[i];
	return -1;
}

static size_t count(struct rec_index *x, const char *cluster)
{
	struct seen v = { .n = 0 };
	recindex_each(x, cluster, note, &v);
	return v.n;
}

static int set_done(struct job_record *r, void *arg, char **err)
{
	(void)arg, (void)err;
	return record_transition(r, TAO_DONE, "COMPLETED", NULL, "scheduler", time(NULL));
}

Test(recindex, follows_the_folder_and_finds_by_slurm_id)
{
	struct record_store *s = store_at(NULL);
	struct rec_index *x = recindex_of(s);
	char *id, *err = NULL;

	put(s, "tao-20261201-aaaaaa", "101", TAO_PENDING);
	put(s, "tao-20261201-bbbbbb", "102", TAO_RUNNING);
	recindex_refresh(x, NULL);
	cr_expect_eq(count(x, NULL), 2);
	cr_expect_eq(count(x, "rig"), 2);
	cr_expect_eq(count(x, "other"), 0);
	cr_expect(recindex_has_ref(x, "101"));
	cr_expect_not(recindex_has_ref(x, "103"));
	id = recindex_find_ref(x, "rig", "102");
	cr_expect_str_eq(id, "tao-20261201-bbbbbb");
	free(id);
	cr_expect_null(recindex_find_ref(x, "other", "102"), "a SLURM id is one cluster's");

	unsigned long v = recindex_version(x);
	recindex_refresh(x, NULL);
	cr_expect_eq(recindex_version(x), v, "nothing changed, nothing read");
	cr_assert_eq(store_update(s, "tao-20261201-bbbbbb", set_done, NULL, &err), 0, "%s", err);
	/* Past the file system clock's tick: not a racy folder. */
	nanosleep(&(struct timespec){ .tv_nsec = 150 * 1000 * 1000 }, NULL);
	recindex_refresh(x, NULL);
	cr_expect_eq(state_of(x, "tao-20261201-bbbbbb"), TAO_DONE);
	cr_expect_neq(recindex_version(x), v);

	char *path = xasprintf("%s/tao-20261201-aaaaaa.json", store_dir(s));
	cr_assert_eq(unlink(path), 0);
	free(path);
	recindex_refresh(x, NULL);
	cr_expect_eq(state_of(x, "tao-20261201-aaaaaa"), -1, "a removed record is gone");
	cr_expect_not(recindex_has_ref(x, "101"));
	store_close(s);
}

/* path gets text (the parent's own file, outside the records folder). */
static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	cr_assert(fputs(text, f) >= 0 && fclose(f) == 0, "%s", path);
}

/* An index file's count is believed only as far as its lines bear it
 * out: the checksum covers the lines, not the count, and a file of a few
 * lines claiming 200 million records once made every start reserve
 * gigabytes (and abort). */
Test(recindex, a_count_its_lines_do_not_bear_out_is_not_believed)
{
	struct record_store *s = store_at(NULL);
	char *dir = xstrdup(store_dir(s));
	char *file = xasprintf("%s/.index/records", dir), *err = NULL, *text, *end;
	size_t len = 0;
	FILE *f;

	put(s, "tao-20261201-hhhhhh", "501", TAO_RUNNING);
	put(s, "tao-20261201-iiiiii", "502", TAO_DONE);
	recindex_refresh(recindex_of(s), NULL);
	store_close(s);
	text = file_read_all(file, &len, &err);
	cr_assert_not_null(text, "%s", err);
	end = strstr(text, "\nend 2 ");
	cr_assert_not_null(end, "the index ends \"end 2 SUM\": %s", text);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fprintf(f, "%.*send 200000000 %s", (int)(end + 1 - text), text, end + strlen("\nend 2 "));
	fclose(f);
	/* What the load may take: under the sanitizer (whose shadow memory
	 * rules out an address-space limit) the allocator's own count; else
	 * 2 GiB of address space, where the old reserve died in xmalloc. */
#if defined(__SANITIZE_ADDRESS__)
	size_t before = __sanitizer_get_current_allocated_bytes();
#else
	struct rlimit lim;
	cr_assert_eq(getrlimit(RLIMIT_AS, &lim) == 0 && setrlimit(RLIMIT_AS,
	    &(struct rlimit){ .rlim_cur = (rlim_t)2 << 30, .rlim_max = lim.rlim_max }), 0);
#endif
	s = store_at(dir);
	recindex_refresh(recindex_of(s), NULL);
#if defined(__SANITIZE_ADDRESS__)
	cr_expect_lt(__sanitizer_get_current_allocated_bytes() - before, (size_t)64 << 20,
	    "%zu bytes taken: the claimed count was reserved",
	    __sanitizer_get_current_allocated_bytes() - before);
#endif
	cr_expect_eq(state_of(recindex_of(s), "tao-20261201-hhhhhh"), TAO_RUNNING);
	cr_expect_eq(state_of(recindex_of(s), "tao-20261201-iiiiii"), TAO_DONE);
	cr_expect_eq(count(recindex_of(s), NULL), 2);
	store_close(s);
	free(text), free(file), free(dir);
}

Test(recindex, sees_another_taotops_writes)
{
	struct record_store *s = store_at(NULL);
	const char *dir = store_dir(s);
	struct rec_index *x = recindex_of(s);
	struct job_record *r;
	char *err = NULL, *json, *a, *b, *cmd;

	put(s, "tao-20261201-cccccc", "201", TAO_PENDING);
	recindex_refresh(x, NULL);
	cr_assert_eq(state_of(x, "tao-20261201-cccccc"), TAO_PENDING);
	/* What another taotop writes: a new record and an update, each a
	 * whole file renamed into the folder. The files are made here, beside
	 * the folder; another process (a shell: no fork of this test, whose
	 * child would carry the test runner's machinery) renames them in,
	 * right away (the same tick of the folder's clock: the racy case). */
	r = record_new("tao-20261201-dddddd");
	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, "202");
	json = record_to_json(r);
	a = xasprintf("%s/../new.json", dir);
	write_text(a, json);
	free(json);
	record_free(r);
	cr_assert_eq(store_load(s, "tao-20261201-cccccc", &r, &err), 0, "%s", err);
	cr_assert_eq(set_done(r, NULL, &err), 1, "Pending to Done is a change");
	json = record_to_json(r);
	b = xasprintf("%s/../update.json", dir);
	write_text(b, json);
	free(json);
	record_free(r);
	cmd = xasprintf("mv '%s' '%s/tao-20261201-dddddd.json' && mv '%s' '%s/tao-20261201-cccccc.json'",
	    a, dir, b, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	recindex_refresh(x, NULL);
	cr_expect_eq(state_of(x, "tao-20261201-cccccc"), TAO_DONE);
	cr_expect_eq(state_of(x, "tao-20261201-dddddd"), TAO_PENDING);
	cr_expect(recindex_has_ref(x, "202"));
	free(cmd), free(a), free(b);
	store_close(s);
}

Test(recindex, sees_a_record_edited_in_place_by_hand)
{
	struct record_store *s = store_at(NULL);
	struct rec_index *x = recindex_of(s);
	struct job_record *r;
	char *path, *json, *err = NULL;
	FILE *f;

	put(s, "tao-20261201-eeeeee", "301", TAO_RUNNING);
	recindex_refresh(x, NULL);
	cr_assert_eq(state_of(x, "tao-20261201-eeeeee"), TAO_RUNNING);
	/* Rewritten through the same inode (an editor that saves in place):
	 * the folder's mtime does not move; the sweep's stat sees it. */
	cr_assert_eq(store_load(s, "tao-20261201-eeeeee", &r, &err), 0, "%s", err);
	r->state = TAO_CANCELED;
	json = record_to_json(r);
	path = xasprintf("%s/tao-20261201-eeeeee.json", store_dir(s));
	f = fopen(path, "r+");
	cr_assert_not_null(f);
	cr_assert_eq(ftruncate(fileno(f), 0), 0);
	fputs(json, f);
	fputs("\n\n", f);	/* another size, whatever the clock */
	fclose(f);
	recindex_refresh(x, NULL);
	cr_expect_eq(state_of(x, "tao-20261201-eeeeee"), TAO_CANCELED);
	free(json);
	free(path);
	record_free(r);
	store_close(s);
}

/* Each damaged index file: the next store over the folder lists every
 * record as the records say, and writes a good index again. */
Test(recindex, a_missing_or_corrupt_index_file_is_rebuilt_from_the_records)
{
	struct record_store *s = store_at(NULL);
	char *dir = xstrdup(store_dir(s));
	char *file = xasprintf("%s/.index/records", dir), *err = NULL, *text;
	static const char *damage[] = {
		"",					/* empty */
		"not an index\n",
		"taotop-index 1\nend 5 0000000000000000\n",	/* wrong count and sum */
		NULL,					/* truncated: cut below */
		"remove",				/* missing */
	};
	size_t i, len = 0;

	put(s, "tao-20261201-ffffff", "401", TAO_RUNNING);
	put(s, "tao-20261201-gggggg", "402", TAO_DONE);
	recindex_refresh(recindex_of(s), NULL);
	store_close(s);	/* writes the index file */
	text = file_read_all(file, &len, &err);
	cr_assert_not_null(text, "the index file was written: %s", err);
	cr_expect(strstr(text, "tao-20261201-gggggg\t") != NULL);
	for (i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
		FILE *f;
		if (damage[i] != NULL && strcmp(damage[i], "remove") == 0) {
			unlink(file);
		} else {
			f = fopen(file, "w");
			cr_assert_not_null(f);
			if (damage[i] != NULL)
				fputs(damage[i], f);
			else
				fwrite(text, 1, len / 2, f);
			fclose(f);
		}
		s = store_at(dir);
		recindex_refresh(recindex_of(s), NULL);
		cr_expect_eq(state_of(recindex_of(s), "tao-20261201-ffffff"), TAO_RUNNING, "damage %zu", i);
		cr_expect_eq(state_of(recindex_of(s), "tao-20261201-gggggg"), TAO_DONE, "damage %zu", i);
		cr_expect(recindex_has_ref(recindex_of(s), "402"), "damage %zu", i);
		store_close(s);
	}
	free(text);
	/* And a well-formed index that lies (a record it calls Done, whose
	 * file was replaced since): the folder's inode wins. */
	s = store_at(dir);
	cr_assert_eq(store_update(s, "tao-20261201-gggggg", set_done, NULL, &err), 0, "%s", err);
	store_close(s);
	s = store_at(dir);
	{
		struct job_record *r = record_new("tao-20261201-gggggg");
		char *path = xasprintf("%s/tao-20261201-gggggg.json", dir), *json;
		FILE *f;
		record_set(&r->cluster, "rig");
		record_set(&r->backend_ref, "402");
		r->state = TAO_ERROR;
		json = record_to_json(r);
		/* Replaced by rename, as a writer without the index would. */
		char *tmp = xasprintf("%s.new", path);
		f = fopen(tmp, "w");
		fputs(json, f);
		fclose(f);
		cr_assert_eq(rename(tmp, path), 0);
		free(tmp), free(json), free(path);
		record_free(r);
	}
	recindex_refresh(recindex_of(s), NULL);
	cr_expect_eq(state_of(recindex_of(s), "tao-20261201-gggggg"), TAO_ERROR);
	store_close(s);
	free(file);
	free(dir);
}

Test(recindex, a_corrupt_record_is_reported_once_and_not_listed)
{
	struct record_store *s = store_at(NULL);
	struct rec_index *x = recindex_of(s);
	char *path = xasprintf("%s/tao-20261201-hhhhhh.json", store_dir(s)), *warn = NULL;
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs("{ not json", f);
	fclose(f);
	put(s, "tao-20261201-iiiiii", "501", TAO_PENDING);
	recindex_refresh(x, &warn);
	cr_assert_not_null(warn);
	cr_expect(strstr(warn, "tao-20261201-hhhhhh.json: corrupt job record") != NULL, "%s", warn);
	free(warn);
	cr_expect_eq(count(x, NULL), 1);
	recindex_refresh(x, &warn);
	cr_expect_null(warn, "reported once while it stays as it is");
	free(warn);
	free(path);
	store_close(s);
}

/* The index file as format 1 wrote it: the same stamps, a checksum and a
 * count that match, and a state the record does not hold. Read as it is,
 * it would be believed; a taotop of format 6 rebuilds it from the records. */
Test(recindex, an_index_file_of_the_old_format_is_rebuilt_not_misread)
{
	struct record_store *s = store_at(NULL);
	char *dir = xstrdup(store_dir(s)), *file = xasprintf("%s/.index/records", dir);
	char *path = xasprintf("%s/tao-20261201-oooooo.json", dir), *text, *err = NULL;
	struct stat st;
	char body[512], whole[700];
	uint64_t h = 14695981039346656037ull;
	size_t i;
	FILE *f;

	put(s, "tao-20261201-oooooo", "601", TAO_RUNNING);
	recindex_refresh(recindex_of(s), NULL);
	store_close(s);
	cr_assert_eq(stat(path, &st), 0);
	snprintf(body, sizeof(body), "taotop-index 1\ntao-20261201-oooooo\t%llu\t%lld\t%lld\tDone\t0"
	    "\t+rig\t+601\n", (unsigned long long)st.st_ino,
	    (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, (long long)st.st_size);
	for (i = 0; body[i] != '\0'; i++)
		h = (h ^ (unsigned char)body[i]) * 1099511628211ull;
	snprintf(whole, sizeof(whole), "%send 1 %016llx\n", body, (unsigned long long)h);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fputs(whole, f);
	fclose(f);

	s = store_at(dir);
	recindex_refresh(recindex_of(s), NULL);
	cr_expect_eq(state_of(recindex_of(s), "tao-20261201-oooooo"), TAO_RUNNING,
	    "the old file's Done was not taken");
	store_close(s);
	text = file_read_all(file, NULL, &err);
	cr_assert_not_null(text, "%s", err);
	cr_expect(strncmp(text, "taotop-index 7\n", 15) == 0, "written again in format 7: %.40s", text);
	free(text), free(path), free(file), free(dir);
}

/* The other side of the stamps: an index whose entry matches its file's
 * inode, mtime and size is used as it is, that file not read again (the
 * point of it). A record rewritten in place to the same size with its
 * mtime put back is, by design, not noticed until it changes again. */
Test(recindex, an_index_file_that_matches_is_used_without_reading_the_records)
{
	struct record_store *s = store_at(NULL);
	char *dir = xstrdup(store_dir(s)), *path = xasprintf("%s/tao-20261201-pppppp.json", dir);
	char *json, *at, *err = NULL;
	struct stat st;
	size_t len = 0;
	FILE *f;

	put(s, "tao-20261201-pppppp", "701", TAO_RUNNING);
	recindex_refresh(recindex_of(s), NULL);
	store_close(s);
	cr_assert_eq(stat(path, &st), 0);
	json = file_read_all(path, &len, &err);
	cr_assert_not_null(json, "%s", err);
	at = strstr(json, "\"Running\"");
	cr_assert_not_null(at, "%s", json);
	memcpy(at, "\"Pending\"", 9);	/* the same length */
	f = fopen(path, "r+");
	cr_assert_not_null(f);
	fwrite(json, 1, len, f);
	fclose(f);
	cr_assert_eq(utimensat(AT_FDCWD, path, (struct timespec[2]){ st.st_atim, st.st_mtim }, 0), 0);

	s = store_at(dir);
	recindex_set_sweep(recindex_of(s), 0);
	recindex_refresh(recindex_of(s), NULL);
	cr_expect_eq(state_of(recindex_of(s), "tao-20261201-pppppp"), TAO_RUNNING,
	    "the index file was not used (every record read again)");
	store_close(s);
	free(json), free(path), free(dir);
}

struct row_seen {
	char	arch[64], native[64], message[128], partition[64], exit_code[16], eta[32];
	char	name[64], figure[16];
	int	has_alloc, has_progress, gpus, epoch;
	long	elapsed_s;
	size_t	nseries;
	double	last;
};

static void take_row(const struct rec_meta *m, void *arg)
{
	struct row_seen *v = arg;

	snprintf(v->arch, sizeof(v->arch), "%s", m->network_arch ? m->network_arch : "(null)");
	snprintf(v->native, sizeof(v->native), "%s", m->native ? m->native : "(null)");
	snprintf(v->name, sizeof(v->name), "%s", m->name ? m->name : "(null)");
	snprintf(v->message, sizeof(v->message), "%s", m->message ? m->message : "(null)");
	snprintf(v->figure, sizeof(v->figure), "%s", m->figure);
	v->has_alloc = m->alloc != NULL;
	if (m->alloc != NULL) {
		snprintf(v->partition, sizeof(v->partition), "%s", m->alloc->partition);
		snprintf(v->exit_code, sizeof(v->exit_code), "%s", m->alloc->exit_code);
		v->gpus = m->alloc->gpus;
		v->elapsed_s = m->alloc->elapsed_s;
	}
	v->has_progress = m->progress != NULL;
	if (m->progress != NULL) {
		snprintf(v->eta, sizeof(v->eta), "%s", m->progress->eta);
		v->epoch = m->progress->epoch;
		v->nseries = m->progress->nseries;
		v->last = m->progress->nseries ? m->progress->series[m->progress->nseries - 1] : 0;
	}
}

/* What a row shows comes back from the index file exactly, bytes the
 * format uses (tab, newline, backslash) and the cluster's own included:
 * the screen sanitises them when it draws, as for any row. */
Test(recindex, a_records_row_survives_the_index_file)
{
	struct record_store *s = store_at(NULL);
	char *dir = xstrdup(store_dir(s)), *err = NULL;
	static const char hostile[] = "tab\there\nnewline \\n back\\slash \x1b]0;T\x07 end";
	struct record_progress p = { .epoch = 3, .max_epoch = 10, .eta = "0:05:00",
		.metric = "loss" };
	double series[3] = { 0.8, 0.1 / 3, 1e-300 };
	struct job_record *r = record_new("tao-20261201-qqqqqq");
	struct row_seen v;

	record_set(&r->cluster, "rig");
	record_set(&r->backend_ref, "801");
	record_set(&r->network_arch, "classification_pyt");
	record_set(&r->action, "train");
	record_set(&r->name, "lr-0.01");
	record_transition(r, TAO_ERROR, "FAILED", hostile, "scheduler", 1000);
	r->has_alloc = 1;
	snprintf(r->alloc.partition, sizeof(r->alloc.partition), "gpu");
	r->alloc.gpus = 8;
	r->alloc.elapsed_s = 3723;
	r->alloc.limit_s = -1;
	snprintf(r->alloc.exit_code, sizeof(r->alloc.exit_code), "1:0");
	p.series = series;
	p.nseries = 3;
	record_set_progress(r, &p);
	r->has_card = 1;	/* its efficiency card: a figure for the row */
	card_make(&r->card, NULL, NULL, 8, 5);
	r->card.util_mean = 12;
	r->card.gpus_used = 1;
	cr_assert_eq(store_create(s, r, &err), 0, "%s", err);
	record_free(r);
	recindex_refresh(recindex_of(s), NULL);
	store_close(s);	/* the index file written */

	s = store_at(dir);
	recindex_set_sweep(recindex_of(s), 0);
	recindex_refresh(recindex_of(s), NULL);
	memset(&v, 0, sizeof(v));
	cr_assert_eq(recindex_get(recindex_of(s), "tao-20261201-qqqqqq", take_row, &v), 0);
	cr_expect_str_eq(v.arch, "classification_pyt");
	cr_expect_str_eq(v.name, "lr-0.01", "the run's name, for its row");
	cr_expect_str_eq(v.native, "FAILED");
	cr_expect_str_eq(v.message, hostile);
	cr_expect(v.has_alloc);
	cr_expect_str_eq(v.partition, "gpu");
	cr_expect_str_eq(v.exit_code, "1:0");
	cr_expect_eq(v.gpus, 8);
	cr_expect_eq(v.elapsed_s, 3723);
	cr_expect(v.has_progress);
	cr_expect_str_eq(v.eta, "0:05:00");
	cr_expect_eq(v.epoch, 3);
	cr_expect_eq(v.nseries, 3);
	cr_expect(v.last == 1e-300, "the series read back exactly: %g", v.last);
	cr_expect_str_eq(v.figure, "avg 12% !", "the efficiency card's figure");
	cr_expect_eq(recindex_get(recindex_of(s), "tao-20261201-nonexistent", take_row, &v), -1);
	store_close(s);
	free(dir);
}

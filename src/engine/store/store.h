/*
 * The record store: the folder of job records, one JSON file each
 * (record.h says what a record holds). Every change is a read-modify-write
 * under a lock (fcntl across processes, a mutex across threads) written
 * atomically (util/file.h: temp file, fsync, rename, fsync of the folder):
 * two processes updating one record lose nothing, and a crash at any moment
 * leaves the old record or the new one. A record that does not parse is
 * reported with its path and never overwritten. The store owns the records'
 * index (recindex.h), made at its first recindex_of.
 */
#ifndef TAOTOP_ENGINE_STORE_H
#define TAOTOP_ENGINE_STORE_H

#include <stddef.h>

#include "engine/store/record.h"

struct record_store;

/* Open (creating it 0700) the folder; NULL: $XDG_STATE_HOME/taotop/jobs,
 * else ~/.local/state/taotop/jobs. */
struct record_store *store_open(const char *dir, char **err);
void store_close(struct record_store *s);
const char *store_dir(const struct record_store *s);

/* A new id, unique in the store: "tao-YYYYMMDD-xxxxxx". */
char *store_mint_id(struct record_store *s);
/* Write a new record; fails if one with its id exists. */
int store_create(struct record_store *s, const struct job_record *r, char **err);
/* Remove a record: one opened for a submit that then never reached the
 * cluster (its checks stopped it before anything was written). */
int store_remove(struct record_store *s, const char *id, char **err);
/* Load one record. -1 with a sentence naming the file when it is missing
 * or does not parse. */
int store_load(struct record_store *s, const char *id, struct job_record **out, char **err);

/* Change a record: fn gets the current one under the lock and returns 1 to
 * write it back, 0 to leave it, -1 to fail (with *err set by fn). */
typedef int record_update_fn(struct job_record *r, void *arg, char **err);
int store_update(struct record_store *s, const char *id, record_update_fn *fn, void *arg,
    char **err);

/* Every record, oldest first. Files that do not parse are skipped, each
 * reported in *warnings (a "\n"-separated list the caller frees, or NULL). */
int store_list(struct record_store *s, struct job_record ***out, size_t *n, char **warnings);
void store_list_free(struct job_record **list, size_t n);

/* Test hook: stop after writing the temp file, before the rename (as a
 * crash there would); store_update then fails. */
void store_test_fail_before_rename(struct record_store *s, int on);

#endif

/*
 * The index of the job records' folder: what a poll needs of every record
 * (its id, cluster, SLURM id, state, when it was made) without reading
 * 100 000 files each time, and lookups by id and SLURM id by hash.
 *
 * The records stay the source of truth. The index follows the folder:
 * every record write is a rename (engine/store/record.h), which changes the
 * folder's mtime and the file's inode, so a refresh with the folder
 * unchanged costs one stat, and a changed folder one readdir compared by
 * inode; a file edited in place (same inode) is caught by a sweep that
 * stats a slice of the records at each refresh, every one in turn. A
 * record written by another taotop, edited by hand, added or removed is
 * seen like that.
 *
 * The index is kept on disk too, in .index/records beside the records (a
 * folder of its own, so writing it does not change the records folder's
 * mtime), written atomically with a count and a checksum: it spares the
 * next start from parsing every record. It carries what a row of the job
 * table shows of each record (its name, state, SLURM's word, the last
 * message, the allocation, TAO's final progress), so the monitor shows the
 * jobs on disk before its link is up and a finished job's row is never
 * read from its file again. It is never trusted blindly: a missing,
 * truncated, corrupt or older-format one is ignored and rebuilt from the
 * records, and each of its entries is checked against the folder's inode
 * before it is used.
 *
 * One index per store, shared by the process's threads (its own mutex).
 */
#ifndef TAOTOP_ENGINE_RECINDEX_H
#define TAOTOP_ENGINE_RECINDEX_H

#include <stddef.h>
#include <time.h>

#include "engine/slurm/state.h"

struct job_record;
struct record_alloc;
struct record_progress;
struct record_store;
struct rec_index;

/* What the index holds of one record. Strings and pointers are borrowed:
 * valid inside the visit only. */
struct rec_meta {
	const char	*id;
	const char	*cluster;	/* NULL: none */
	const char	*backend_ref;	/* NULL: not launched */
	enum tao_state	 state;
	time_t		 created;
	unsigned long	 gen;		/* changes whenever the file is read again */
	/* What its row shows (engine/track/tracker.h's job_row): */
	const char	*network_arch, *action;	/* NULL: not said */
	const char	*name;		/* the run's own, or NULL */
	const char	*native;	/* SLURM's last word, or NULL */
	const char	*message;	/* the last transition's message, or NULL */
	const char	*results_dir;	/* where the run writes, or NULL */
	const struct record_alloc *alloc;	/* NULL: never written */
	const struct record_progress *progress;	/* NULL: none kept */
	int		 segments;	/* the run's segments (0: none told) */
	int		 requeued;	/* waiting in the queue for its next segment */
	char		 figure[16];	/* its efficiency card's (card_figure), "" none */
};

/* r as the index would hold it (borrowing r's strings; gen 0). */
void recindex_meta_of(const struct job_record *r, struct rec_meta *m);

/* The index of st's folder, made (empty: the first refresh fills it) the
 * first time; freed with the store (engine/store/store.c, through
 * recindex_new and recindex_free). */
struct rec_index *recindex_of(struct record_store *st);
struct rec_index *recindex_new(const char *dir);
/* Saves the index file when it is behind, then frees. */
void recindex_free(struct rec_index *x);

/* Bring the index up to date with the folder. *warnings (NULL or a
 * "\n"-separated list the caller frees) names the records newly seen
 * that do not parse (each reported once while it stays as it is). */
void recindex_refresh(struct rec_index *x, char **warnings);

/* Bumped whenever an entry changed, came or went: callers that keep what
 * they took from the index take it again only when this moved. */
unsigned long recindex_version(struct rec_index *x);

/* Visit the records of cluster (NULL: all), in no order, under the
 * index's lock: fn must not call the store. Records that do not parse
 * are not visited. */
typedef void recindex_visit_fn(const struct rec_meta *m, void *arg);
void recindex_each(struct rec_index *x, const char *cluster, recindex_visit_fn *fn, void *arg);

/* Visit the record id (a record that does not parse is not): 0, or -1
 * when the index has no such record. Under the lock, as recindex_each. */
int recindex_get(struct rec_index *x, const char *id, recindex_visit_fn *fn, void *arg);

/* Whether any record holds SLURM id ref (of any cluster). */
int recindex_has_ref(struct rec_index *x, const char *ref);
/* The id (caller frees) of cluster's record holding SLURM id ref, or NULL. */
char *recindex_find_ref(struct rec_index *x, const char *cluster, const char *ref);

/* Write the index file now when it is behind (also done by the refreshes,
 * at most every few minutes, and when the store closes). -1 with *err. */
int recindex_save(struct rec_index *x, char **err);

/* Tests and benchmarks: records stat'ed per refresh by the sweep. */
void recindex_set_sweep(struct rec_index *x, size_t n);

#endif

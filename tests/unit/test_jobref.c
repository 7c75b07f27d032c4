/* A job as the user names it (engine/jobref.h): each form the CLI and the
 * monitor accept, and each refusal with its sentence. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/store/jobref.h"
#include "engine/store/store.h"
#include "util/xmalloc.h"

static struct record_store *st;

static void open_store(void)
{
	char tmpl[] = "/tmp/taotop-jobref-XXXXXX", *dir, *err = NULL;

	cr_assert_not_null(mkdtemp(tmpl));
	dir = xasprintf("%s/jobs", tmpl);
	st = store_open(dir, &err);
	cr_assert_not_null(st, "%s", err);
	free(dir);
}

static void close_store(void)
{
	store_close(st);
}

/* A record of cluster, launched as slurm_id (NULL: never launched); its
 * id, which the caller frees. */
static char *add(const char *cluster, const char *slurm_id)
{
	char *id = store_mint_id(st), *err = NULL;
	struct job_record *r = record_new(id);

	record_set(&r->cluster, cluster);
	record_set(&r->backend_ref, slurm_id);
	cr_assert_eq(store_create(st, r, &err), 0, "%s", err);
	record_free(r);
	return id;
}

TestSuite(jobref, .init = open_store, .fini = close_store);

Test(jobref, a_taotop_id_is_its_record_and_the_slurm_job_it_launched)
{
	char *id = add("rig", "4242"), *err = NULL;
	struct job_ref ref;

	cr_assert_eq(job_ref_resolve(st, id, &ref, &err), 0, "%s", err);
	cr_assert_not_null(ref.rec);
	cr_expect_str_eq(ref.rec->id, id);
	cr_expect_str_eq(ref.rec->cluster, "rig");
	cr_expect_str_eq(ref.slurm_id, "4242");
	job_ref_free(&ref);
	cr_expect_null(ref.rec, "freed and cleared");
	free(id);
}

Test(jobref, a_record_never_launched_has_no_slurm_id)
{
	char *id = add("rig", NULL), *err = NULL;
	struct job_ref ref;

	cr_assert_eq(job_ref_resolve(st, id, &ref, &err), 0, "%s", err);
	cr_assert_not_null(ref.rec);
	cr_expect_null(ref.slurm_id, "nothing to give SLURM: %s", ref.slurm_id);
	job_ref_free(&ref);
	free(id);
}

Test(jobref, a_slurm_id_and_an_array_task_are_themselves)
{
	const char *const forms[] = { "4242", "4242_7", "1" };
	struct job_ref ref;
	char *err = NULL;
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		cr_assert_eq(job_ref_resolve(st, forms[i], &ref, &err), 0, "%s: %s", forms[i], err);
		cr_expect_null(ref.rec, "%s is no record", forms[i]);
		cr_expect_str_eq(ref.slurm_id, forms[i]);
		job_ref_free(&ref);
	}
}

Test(jobref, anything_else_is_refused_with_the_name_in_the_sentence)
{
	/* A missing record, words for a shell, an array range, a step, an
	 * empty name: none reaches SLURM. */
	const char *const bad[] = { "tt-20990101-000000-abcd", "$(touch /tmp/pwned)", "4242_[1-3]",
	    "4242.0", "4242_", "_7", "", "-1", "4242 4243" };
	struct job_ref ref;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *err = NULL, *want = xasprintf("%s is neither a taotop job id nor a SLURM job id",
		    bad[i]);
		cr_expect_eq(job_ref_resolve(st, bad[i], &ref, &err), -1, "'%s' was taken", bad[i]);
		cr_expect_null(ref.rec);
		cr_expect_null(ref.slurm_id);
		cr_expect_str_eq(err ? err : "", want);
		free(err), free(want);
	}
}

Test(jobref, a_slurm_id_finds_the_record_that_launched_it_on_its_cluster_only)
{
	char *mine = add("rig", "5151"), *err = NULL;
	struct job_ref ref;

	free(add("other", "6161"));
	cr_assert_eq(job_ref_resolve(st, "5151", &ref, &err), 0, "%s", err);
	cr_expect_null(ref.rec, "not adopted until asked");
	job_ref_adopt(st, "rig", &ref);
	cr_assert_not_null(ref.rec, "5151 of rig is a record's job");
	cr_expect_str_eq(ref.rec->id, mine);
	cr_expect_str_eq(ref.slurm_id, "5151");
	job_ref_free(&ref);

	/* The same number on another cluster is another job. */
	cr_assert_eq(job_ref_resolve(st, "6161", &ref, &err), 0, "%s", err);
	job_ref_adopt(st, "rig", &ref);
	cr_expect_null(ref.rec, "6161 is other's job, not rig's");
	job_ref_free(&ref);
	free(mine);
}

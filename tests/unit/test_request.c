#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/config.h"
#include "engine/submit/request.h"
#include "engine/submit/spec.h"
#include "engine/submit/submit.h"

static struct spec blank(void)
{
	struct spec s;
	memset(&s, 0, sizeof(s));
	s.gpus = s.nodes = s.cpus_per_task = s.requeue = s.gpus_per_node = -1;
	s.time_hours = -1;
	return s;
}

static void clear_env(void)
{
	unsetenv("SLURM_PARTITION");
	unsetenv("SLURM_ACCOUNT");
	unsetenv("SLURM_USE_REQUEUE");
}

/* Each value from the highest source that gives it: flags > environment >
 * bundle > config > defaults, with its origin said. */
Test(request, each_value_from_the_highest_source_that_gives_it, .init = clear_env)
{
	struct submit_opts o = { .gpus = -1, .nodes = -1, .time_hours = -1 };
	struct cluster_cfg cl = { .name = (char *)"c", .partitions = (char *)"cfgpart,other",
	    .account = (char *)"cfgacct" };
	struct spec s = blank();
	struct request rq;
	char *err = NULL;

	cr_assert_eq(request_resolve(&o, &s, &cl, &rq, &err), 0, "%s", err);
	cr_expect_str_eq(rq.partition, "cfgpart,other", "a list goes whole into --partition");
	cr_expect_str_eq(rq.partition_from, "the cluster's partitions");
	cr_expect_str_eq(rq.account, "cfgacct");
	cr_expect_str_eq(rq.account_from, "the cluster's config");
	cr_expect_str_eq(rq.requeue_from, "the seed's default");

	s.partition = (char *)"bundlepart";
	s.account = (char *)"bundleacct";
	s.requeue = 0;
	cr_assert_eq(request_resolve(&o, &s, &cl, &rq, &err), 0, "%s", err);
	cr_expect_str_eq(rq.partition, "bundlepart");
	cr_expect_str_eq(rq.account, "bundleacct", "the bundle's account is not dropped");
	cr_expect_str_eq(rq.requeue_from, "the bundle");

	setenv("SLURM_PARTITION", "envpart,second", 1);
	setenv("SLURM_ACCOUNT", "envacct", 1);
	setenv("SLURM_USE_REQUEUE", "true", 1);
	cr_assert_eq(request_resolve(&o, &s, &cl, &rq, &err), 0, "%s", err);
	cr_expect_str_eq(rq.partition, "envpart,second", "SLURM_PARTITION whole, never its first");
	cr_expect_str_eq(rq.partition_from, "SLURM_PARTITION");
	cr_expect_str_eq(rq.account, "envacct");
	cr_expect_eq(s.requeue, 1);
	cr_expect_str_eq(rq.requeue_from, "SLURM_USE_REQUEUE");

	o.partition = "flagpart";
	o.account = "flagacct";
	o.requeue = REQUEUE_NO;
	o.gpus = 2;
	cr_assert_eq(request_resolve(&o, &s, &cl, &rq, &err), 0, "%s", err);
	cr_expect_str_eq(rq.partition, "flagpart");
	cr_expect_str_eq(rq.partition_from, "--partition");
	cr_expect_str_eq(rq.account, "flagacct");
	cr_expect_eq(s.requeue, 0);
	cr_expect_str_eq(rq.requeue_from, "--no-requeue");
	cr_expect_eq(s.gpus, 2);
	cr_expect_str_eq(rq.gpus_from, "--gpus");
	clear_env();
}

Test(request, a_value_that_is_not_one_slurm_name_is_refused_naming_its_origin, .init = clear_env)
{
	/* A list is names separated by single commas; nothing else. */
	static const char *const bad[] = { "polar,,cpu_long", ",polar", "polar,", "polar,cpu long",
	    "polar,x\n#SBATCH --uid=0", "polar\n#SBATCH --uid=0", "polar#x", "a b", "" };
	struct submit_opts o = { .gpus = -1, .nodes = -1, .time_hours = -1 };
	struct cluster_cfg cl = { .name = (char *)"c" };
	struct spec s = blank();
	struct request rq;
	char *err = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s.partition = (char *)bad[i];
		cr_expect_eq(request_resolve(&o, &s, &cl, &rq, &err), -1, "'%s' accepted", bad[i]);
		cr_expect(err != NULL && strstr(err, "partition") != NULL &&
		    strstr(err, "the bundle") != NULL, "%s", err);
		free(err), err = NULL;
	}
	s.partition = NULL;
	setenv("SLURM_ACCOUNT", "proj;id", 1);
	cr_expect_eq(request_resolve(&o, &s, &cl, &rq, &err), -1);
	cr_expect(err != NULL && strstr(err, "from SLURM_ACCOUNT") != NULL, "%s", err);
	free(err), err = NULL;
	setenv("SLURM_ACCOUNT", "proj", 1);
	setenv("SLURM_USE_REQUEUE", "maybe", 1);
	cr_expect_eq(request_resolve(&o, &s, &cl, &rq, &err), -1);
	cr_expect(err != NULL && strstr(err, "SLURM_USE_REQUEUE") != NULL, "%s", err);
	free(err);
	clear_env();
}

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/config/storage.h"

Test(storage, lustre_and_slurm_uris_only)
{
	char *err = NULL, *p;
	p = storage_path("datasets", "lustre:///lustre/data/train", &err);
	cr_expect_str_eq(p, "/lustre/data/train");
	free(p);
	p = storage_path("datasets", "slurm:///lustre/data/val", &err);
	cr_expect_str_eq(p, "/lustre/data/val", "slurm:// converts to the Lustre path");
	free(p);
	const char *bad[] = { "file:///home/me/data", "/home/me/data", "./data", "~/data",
	    "s3://bucket/data", "lustre://relative/path", "lustre:///a/../etc" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_null(storage_path("datasets", bad[i], &err), "%s accepted", bad[i]);
		cr_expect(err != NULL && strncmp(err, "datasets: ", 10) == 0, "%s", err);
		free(err), err = NULL;
	}
	storage_path("datasets", "file:///home/me/data", &err);
	cr_expect(strstr(err, "cluster cannot read") != NULL, "%s", err);
	free(err);
}

Test(storage, the_four_image_forms)
{
	struct { const char *in, *docker, *sqsh; int latest; } cases[] = {
		{ "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt", "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
		  "/c/nvcr.io+nvidia+tao+tao-toolkit+5.5.0-pyt.sqsh", 0 },
		{ "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt", "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
		  "/c/nvcr.io+nvidia+tao+tao-toolkit+5.5.0-pyt.sqsh", 0 },
		{ "docker://nvcr.io#nvidia/pytorch:24.01-py3", "docker://nvcr.io#nvidia/pytorch:24.01-py3",
		  "/c/nvcr.io+nvidia+pytorch+24.01-py3.sqsh", 0 },
		{ "ubuntu", "docker://registry-1.docker.io#library/ubuntu:latest",
		  "/c/registry-1.docker.io+library+ubuntu+latest.sqsh", 1 },
		/* Docker Hub as Enroot names it: library/ for official images. */
		{ "ubuntu:22.04", "docker://registry-1.docker.io#library/ubuntu:22.04",
		  "/c/registry-1.docker.io+library+ubuntu+22.04.sqsh", 0 },
		{ "docker.io/nvidia/cuda:12.4.0-base", "docker://registry-1.docker.io#nvidia/cuda:12.4.0-base",
		  "/c/registry-1.docker.io+nvidia+cuda+12.4.0-base.sqsh", 0 },
		{ "docker://registry-1.docker.io#alpine:3.19", "docker://registry-1.docker.io#library/alpine:3.19",
		  "/c/registry-1.docker.io+library+alpine+3.19.sqsh", 0 },
		{ "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-PYT", "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-PYT",
		  "/c/nvcr.io+nvidia+tao+tao-toolkit+5.5.0-PYT.sqsh", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct image_ref r;
		char *err = NULL;
		cr_assert_eq(image_parse(cases[i].in, "/c", &r, &err), 0, "%s: %s", cases[i].in, err);
		cr_expect_str_eq(r.docker_uri, cases[i].docker);
		cr_expect_str_eq(r.sqsh, cases[i].sqsh);
		cr_expect_eq(r.latest, cases[i].latest);
		cr_expect(!r.is_sqsh);
		image_ref_free(&r);
	}
	struct image_ref r;
	char *err = NULL;
	cr_assert_eq(image_parse("/lustre/images/tao.sqsh", "/c", &r, &err), 0);
	cr_expect(r.is_sqsh);
	cr_expect_null(r.docker_uri, "a .sqsh is used as it is");
	image_ref_free(&r);
	cr_expect_eq(image_parse("/lustre/images/tao.tar", "/c", &r, &err), -1);
	free(err), err = NULL;
	cr_expect_eq(image_parse("nvcr.io/x:1; rm -rf ~", "/c", &r, &err), -1);
	free(err), err = NULL;
	/* Repository names are lower case for registries and Enroot alike. */
	cr_expect_eq(image_parse("nvcr.io/nvidia/TAO/tao-toolkit:5.5.0", "/c", &r, &err), -1);
	cr_expect(err != NULL && strstr(err, "lower case") != NULL, "%s", err);
	free(err);
}

/* The procedure's first choice, a squashfs already on Lustre, in each
 * spelling a user writes it: reused as that path, never a registry name. */
Test(storage, sqsh_on_shared_storage_in_each_spelling)
{
	const char *forms[] = { "/lustre/images/tao.sqsh", "lustre:///lustre/images/tao.sqsh",
	    "slurm:///lustre/images/tao.sqsh" };
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct image_ref r;
		char *err = NULL;
		cr_assert_eq(image_parse(forms[i], "/c", &r, &err), 0, "%s: %s", forms[i], err);
		cr_expect(r.is_sqsh, "%s", forms[i]);
		cr_expect_str_eq(r.sqsh, "/lustre/images/tao.sqsh", "%s", forms[i]);
		cr_expect_null(r.docker_uri, "%s", forms[i]);
		image_ref_free(&r);
	}
	struct image_ref r;
	char *err = NULL;
	cr_expect_eq(image_parse("lustre:///lustre/images/tao.tar", "/c", &r, &err), -1);
	cr_expect(err != NULL && strstr(err, "not a .sqsh") != NULL, "%s", err);
	free(err), err = NULL;
	cr_expect_eq(image_parse("lustre://images/tao.sqsh", "/c", &r, &err), -1);
	cr_expect(err != NULL && strstr(err, "absolute") != NULL, "%s", err);
	free(err);
}

/* The lint: secrets and allocation waste, each named by its line, and no
 * secret ever repeated in the report. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/submit/lint.h"

Test(lint, a_clean_script_passes)
{
	char *report = NULL;
	cr_expect_eq(lint_script("job.sbatch",
	    "#!/bin/bash\n#SBATCH --gres=gpu:4\nexport NCCL_P2P_DISABLE=1\n"
	    "export TAOTOP_ENV_FILE=/lustre/jobs/x/job_1.env\n"
	    "srun --container-image=/lustre/images/tao-5.5.0.sqsh --container-mounts=/lustre:/lustre \\\n"
	    "  train --epochs 10 --key-path /lustre/keys.txt\n", &report), 0, "%s", report);
	cr_expect_null(report);
}

Test(lint, secrets_are_found_and_never_echoed)
{
	struct { const char *line, *want; } cases[] = {
		{ "export HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz123456", "Hugging Face token" },
		{ "NGC=nvapi-AbCdEfGhIjKlMnOpQrStUvWxYz-12345678", "NGC key" },
		{ "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AWS access key" },
		{ "-----BEGIN OPENSSH PRIVATE KEY-----", "private key block" },
		{ "export WANDB_API_KEY=3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a", "WANDB_API_KEY" },
		{ "MY_SECRET=\"Zx81Lq0Pw93Ks72Jd61Hf50Gs\"", "MY_SECRET" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *report = NULL;
		cr_expect_eq(lint_script("job.sbatch", cases[i].line, &report), 1, "%s", cases[i].line);
		if (report == NULL)
			continue;
		cr_expect(strstr(report, "job.sbatch:1: secret: ") != NULL, "%s", report);
		cr_expect(strstr(report, cases[i].want) != NULL, "%s", report);
		const char *eq = strchr(cases[i].line, '=');
		if (eq != NULL && strlen(eq + 1) > 12)
			cr_expect(strstr(report, eq + 2) == NULL, "the report repeats the secret: %s", report);
		free(report);
	}
}

Test(lint, allocation_waste_is_found_on_its_line)
{
	char *report = NULL;
	cr_expect_eq(lint_script("job.sbatch", "#!/bin/bash\n"
	    "srun --container-image=nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt true\n"
	    "srun --container-image=docker://nvcr.io#nvidia/pytorch:24.01-py3 true\n"
	    "aws s3 cp s3://bucket/train /tmp/train --recursive\n"
	    "wget https://example.org/dataset.tar\n"
	    "srun --container-image='/lustre/images/a b.sqsh' true\n", &report), 4, "%s", report);
	cr_expect(strstr(report, "job.sbatch:2: waste: --container-image=nvcr.io#") != NULL, "%s", report);
	cr_expect(strstr(report, "job.sbatch:3: waste:") != NULL, "%s", report);
	cr_expect(strstr(report, "job.sbatch:4: waste: fetches data") != NULL, "%s", report);
	cr_expect(strstr(report, "job.sbatch:5: waste: fetches data") != NULL, "%s", report);
	cr_expect(strstr(report, "job.sbatch:6:") == NULL, "a quoted .sqsh path is fine: %s", report);
	free(report);
}

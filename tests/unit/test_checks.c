/* The submit's checks as the cluster runs them: here by `sh` with a
 * stand-in sinfo that answers as told. The gate (the checks folded into
 * the launch's script) opens only on answers the judgement passes, and
 * its answers read back as the same facts as the checks' own command. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/submit/checks.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char dir[] = "/tmp/taotop-checks-XXXXXX";

/* A folder with a stand-in sinfo, two datasets (one with a space in its
 * name), a squashfs image and a file that is not one. */
static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
	char *cmd = xasprintf("cd %s && mkdir bin 'data 1' data2 && printf 'hsqs....' > img.sqsh && "
	    "printf 'nope' > bad.sqsh && printf 'hsqs....' > foreign.sqsh && chown 4242 foreign.sqsh "
	    "&& printf 'hsqs....' > open.sqsh && chmod 666 open.sqsh", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	/* sinfo -o %l says $MT, sinfo -o '%D %G' says $ND. */
	char *path = xasprintf("%s/bin/sinfo", dir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("#!/bin/sh\ncase \"$*\" in *%l*) echo \"$MT\" ;; *) echo \"$ND\" ;; esac\n", f);
	fclose(f);
	cr_assert_eq(chmod(path, 0755), 0);
	free(path);
}

static void remove_dir(void)
{
	char *cmd = xasprintf("rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
	free(cmd);
}

TestSuite(checks, .init = make_dir, .fini = remove_dir);

struct answer {
	const char	*mt, *nd;	/* what sinfo says: MaxTime, "nodes gres" */
	int		 nodes, gpn;	/* the job's shape */
	const char	*image;		/* img.sqsh, bad.sqsh, none.sqsh */
	const char	*second;	/* the second dataset: "data2" or missing */
};

/* Run the gate (or the plain command) asking q, with sinfo saying mt and
 * nd; its exit status, and its answers read back into f. */
static int run_checks(const struct check_ask *q, int gate, const char *mt, const char *nd,
    struct check_facts *f)
{
	char *script = xasprintf("%s/gate", dir), *cmd, *out, *err = NULL;
	struct buf b;
	int status;

	buf_init(&b);
	if (gate)
		checks_gate(q, &b);
	else
		checks_command(q, &b);
	FILE *fp = fopen(script, "w");
	cr_assert_not_null(fp);
	fwrite(b.data, 1, b.len, fp);
	fclose(fp);
	cmd = xasprintf("PATH=%s/bin:$PATH MT='%s' ND='%s' sh %s > %s/out 2>&1", dir, mt, nd,
	    script, dir);
	status = WEXITSTATUS(system(cmd));
	free(cmd);
	cmd = xasprintf("%s/out", dir);
	out = file_read_all(cmd, NULL, &err);
	cr_assert_not_null(out, "%s", err);
	checks_read(out, q->ndatasets, f);
	free(out), free(cmd), free(script);
	buf_free(&b);
	return status;
}

/* The same for answer a. */
static int ask(const struct answer *a, int gate, struct check_facts *f)
{
	char *d1 = xasprintf("%s/data 1", dir), *d2 = xasprintf("%s/%s", dir, a->second);
	char *img = xasprintf("%s/%s", dir, a->image);
	const char *ds[] = { d1, d2 };
	struct check_ask q = { ds, 2, img, NULL, "polar", a->nodes, a->gpn, NULL, NULL, NULL, 0 };
	int status = run_checks(&q, gate, a->mt, a->nd, f);

	free(img), free(d1), free(d2);
	return status;
}

Test(checks, the_gate_opens_only_where_the_judgement_passes)
{
	const struct { struct answer a; int open; } cases[] = {
		{ { "4:00:00", "2 gpu:8", 1, 1, "img.sqsh", "data2" }, 1 },
		{ { "UNLIMITED", "2 gpu:8", 2, 8, "img.sqsh", "data2" }, 1 },
		{ { "1-00:00:00", "2 gpu:a100:8(S:0-1)", 2, 8, "img.sqsh", "data2" }, 1 },
		{ { "0:00:30", "2 gpu:8,mps:100", 1, 8, "img.sqsh", "data2" }, 1 },
		{ { "4:00:00", "2 (null)", 1, 0, "img.sqsh", "data2" }, 1 },
		/* No partition (sinfo says nothing), a zero limit, a form not sinfo's. */
		{ { "", "", 1, 1, "img.sqsh", "data2" }, 0 },
		{ { "0:00:00", "2 gpu:8", 1, 1, "img.sqsh", "data2" }, 0 },
		{ { "30", "2 gpu:8", 1, 1, "img.sqsh", "data2" }, 0 },
		/* Too many nodes, GPUs per node, GPUs where there are none. */
		{ { "4:00:00", "2 gpu:8", 3, 1, "img.sqsh", "data2" }, 0 },
		{ { "4:00:00", "2 gpu:a100:8(S:0-1)", 1, 9, "img.sqsh", "data2" }, 0 },
		{ { "4:00:00", "2 (null)", 1, 1, "img.sqsh", "data2" }, 0 },
		{ { "4:00:00", "2", 1, 1, "img.sqsh", "data2" }, 0 },
		/* A dataset missing, an image that is no squashfs or none at all. */
		{ { "4:00:00", "2 gpu:8", 1, 1, "img.sqsh", "nope" }, 0 },
		{ { "4:00:00", "2 gpu:8", 1, 1, "bad.sqsh", "data2" }, 0 },
		{ { "4:00:00", "2 gpu:8", 1, 1, "none.sqsh", "data2" }, 0 },
		/* An image of another user's, or one anyone may rewrite
		 * (engine/config/rootsafe.h): squashfs, and still closed. */
		{ { "4:00:00", "2 gpu:8", 1, 1, "foreign.sqsh", "data2" }, 0 },
		{ { "4:00:00", "2 gpu:8", 1, 1, "open.sqsh", "data2" }, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct answer *a = &cases[i].a;
		struct check_facts g, c;
		int st = ask(a, 1, &g);

		cr_expect_eq(st == 0, cases[i].open, "case %zu (%s | %s): gate %s", i, a->mt, a->nd,
		    st == 0 ? "open" : "closed");
		/* The same answers as the checks' own command. */
		cr_expect_eq(ask(a, 0, &c), 0);
		cr_expect(g.missing == c.missing && g.image_state == c.image_state &&
		    g.max_h == c.max_h && g.part_nodes == c.part_nodes && g.part_gpus == c.part_gpus &&
		    strcmp(g.image_unsafe, c.image_unsafe) == 0,
		    "case %zu: the gate's answers differ from the command's", i);
		/* Open only where the judgement (engine/submit.c) passes. */
		if (st == 0)
			cr_expect(g.missing == SIZE_MAX && g.image_state == 1 && g.max_h > 0 &&
			    g.image_unsafe[0] == '\0' &&
			    (g.part_nodes <= 0 || a->nodes <= g.part_nodes) &&
			    (g.part_gpus < 0 || a->gpn <= g.part_gpus), "case %zu: open on a failure", i);
	}
}

Test(checks, an_image_someone_else_could_replace_reads_back_why)
{
	struct check_facts f;
	struct answer a = { "4:00:00", "2 gpu:8", 1, 1, "foreign.sqsh", "data2" };

	ask(&a, 0, &f);
	cr_expect_eq(f.image_state, 1, "it is squashfs");
	cr_expect_str_eq(f.image_unsafe, "owner 4242");
	a.image = "open.sqsh";
	ask(&a, 0, &f);
	cr_expect_str_eq(f.image_unsafe, "writable");
	a.image = "img.sqsh";
	ask(&a, 0, &f);
	cr_expect_str_eq(f.image_unsafe, "");
}

Test(checks, answers_read_back)
{
	struct check_facts f;
	struct answer a = { "1-12:00:00", "2 gpu:a100:4(S:0-1)", 1, 1, "bad.sqsh", "nope" };

	ask(&a, 0, &f);
	cr_expect_eq(f.missing, 1);
	cr_expect_eq(f.image_state, -1);
	cr_expect_float_eq(f.max_h, 36, 1e-9);
	cr_expect_eq(f.part_nodes, 2);
	cr_expect_eq(f.part_gpus, 4);
	cr_expect_float_eq(checks_slurm_hours("UNLIMITED"), 1e9, 1);
	cr_expect_float_eq(checks_slurm_hours("90"), 1.5, 1e-9);
	cr_expect_float_eq(checks_slurm_hours("junk"), 0, 1e-9);
}

/* A results folder the bundle names: a run's status.json (at the top or in
 * a task folder) or checkpoint closes the gate and is named; ptm/ and
 * inputs/ are not a run; an empty or missing folder is fine. */
Test(checks, a_results_folder_that_holds_a_run_is_found)
{
	static const struct { const char *make, *found; } cases[] = {
		{ "mkdir -p r", "" },
		{ ":", "" },
		{ "mkdir -p r/train && : > r/train/status.json", "r/train/status.json" },
		{ "mkdir -p r && : > r/status.json", "r/status.json" },
		{ "mkdir -p r/train && : > r/train/model_epoch_003.pth", "r/train/model_epoch_003.pth" },
		{ "mkdir -p r/x && : > r/x/a.ckpt", "r/x/a.ckpt" },
		{ "mkdir -p r/ptm r/inputs && : > r/ptm/resnet.pth && : > r/inputs/m.tlt", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *cmd = xasprintf("cd %s && rm -rf r && %s", dir, cases[i].make);
		char *rdir = xasprintf("%s/r", dir);
		char *img = xasprintf("%s/img.sqsh", dir), *d = xasprintf("%s/data2", dir);
		const char *ds[] = { d };
		struct check_ask q = { ds, 1, img, NULL, "polar", 1, 1, rdir, NULL, NULL, 0 };
		struct check_facts f;

		cr_assert_eq(system(cmd), 0);
		free(cmd);
		for (int gate = 0; gate < 2; gate++) {
			int st = run_checks(&q, gate, "4:00:00", "2 gpu:8", &f);
			if (cases[i].found[0] == '\0') {
				cr_expect_str_eq(f.results_run, "", "case %zu", i);
				if (gate)
					cr_expect_eq(st, 0, "case %zu: the gate closed", i);
			} else {
				char *want = xasprintf("%s/%s", dir, cases[i].found);
				cr_expect_str_eq(f.results_run, want, "case %zu", i);
				if (gate)
					cr_expect_neq(st, 0, "case %zu: the gate opened", i);
				free(want);
			}
		}
		free(rdir), free(img), free(d);
	}
}

/* A list of partitions is asked of one sinfo; each partition's lines (one
 * per state group, as sinfo prints them) are summed: its nodes, its time
 * limit, the GPUs of its nodes. A partition sinfo does not list is none. */
Test(checks, a_list_of_partitions_is_read_one_by_one)
{
	char *d = xasprintf("%s/data2", dir), *img = xasprintf("%s/img.sqsh", dir);
	const char *ds[] = { d };
	struct check_ask q = { ds, 1, img, NULL, "polar,big,gone", 1, 1, NULL, NULL, NULL, 0 };
	struct check_facts f;

	cr_expect_eq(run_checks(&q, 0, "polar|4:00:00|1|gpu:8\npolar|4:00:00|1|gpu:8(S:0)\n"
	    "big|1-00:00:00|3|gpu:a100:4", "", &f), 0);
	cr_assert_eq(f.nparts, 2);
	cr_expect_str_eq(f.parts[0].name, "polar");
	cr_expect_eq(f.parts[0].nodes, 2, "two state groups of one node each");
	cr_expect_eq(f.parts[0].gpus, 8);
	cr_expect_float_eq(f.parts[0].max_h, 4, 1e-9);
	cr_expect_str_eq(f.parts[1].name, "big");
	cr_expect_eq(f.parts[1].nodes, 3);
	cr_expect_eq(f.parts[1].gpus, 4);
	cr_expect_float_eq(f.parts[1].max_h, 24, 1e-9);
	free(d), free(img);
}

/* The gate for a list opens only when every partition of it could run the
 * job (then the judgement would leave none out of the staged
 * --partition); its answers are the checks' own. */
Test(checks, a_lists_gate_opens_only_when_every_partition_could_run_the_job)
{
	static const char both[] = "polar|4:00:00|1|gpu:8\npolar|4:00:00|1|gpu:8(S:0-1)\n"
	    "big|1-00:00:00|3|gpu:a100:4(S:0)";
	static const struct { const char *sinfo, *list; int nodes, gpn, open; } cases[] = {
		{ both, "polar,big", 1, 4, 1 },
		{ both, "polar,big", 2, 1, 1 },
		{ both, "polar,big", 1, 8, 0 },		/* big's nodes have 4 */
		{ both, "polar,big", 3, 1, 0 },		/* polar has 2 nodes */
		{ both, "polar,gone", 1, 1, 0 },	/* no such partition */
		{ "polar|0:00:00|2|gpu:8\nbig|4:00:00|2|gpu:8", "polar,big", 1, 1, 0 },
		{ "polar|4:00:00|2|(null)\nbig|4:00:00|2|gpu:8", "polar,big", 1, 1, 0 },
		{ "polar|4:00:00|2|(null)\nbig|4:00:00|2|gpu:8", "polar,big", 1, 0, 1 },
		{ "polar|UNLIMITED|2|gpu:8,mps:100\nbig|4:00:00|2|gpu:8", "polar,big", 2, 8, 1 },
	};
	char *d = xasprintf("%s/data2", dir), *img = xasprintf("%s/img.sqsh", dir);
	const char *ds[] = { d };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct check_ask q = { ds, 1, img, NULL, cases[i].list, cases[i].nodes, cases[i].gpn, NULL, NULL, NULL, 0 };
		struct check_facts g, c;
		int st = run_checks(&q, 1, cases[i].sinfo, "", &g);

		cr_expect_eq(st == 0, cases[i].open, "case %zu: gate %s", i, st == 0 ? "open" : "closed");
		cr_expect_eq(run_checks(&q, 0, cases[i].sinfo, "", &c), 0);
		cr_expect_eq(g.nparts, c.nparts, "case %zu", i);
		for (size_t k = 0; k < g.nparts && k < c.nparts; k++)
			cr_expect(strcmp(g.parts[k].name, c.parts[k].name) == 0 &&
			    g.parts[k].nodes == c.parts[k].nodes && g.parts[k].gpus == c.parts[k].gpus &&
			    g.parts[k].max_h == c.parts[k].max_h, "case %zu: the gate's answers differ", i);
		/* Open only where the judgement passes for every partition. */
		if (st == 0)
			for (size_t k = 0; k < g.nparts; k++)
				cr_expect(g.parts[k].max_h > 0 && cases[i].nodes <= g.parts[k].nodes &&
				    cases[i].gpn <= g.parts[k].gpus, "case %zu: open on %s", i,
				    g.parts[k].name);
	}
	free(d), free(img);
}

/* The skill bank's declared inputs: a folder by test -d, a file by
 * test -f; missing, or of the other type, each read back as such and
 * closing the gate (an optional one too: the long way leaves it out). */
Test(checks, declared_inputs_are_tested_by_their_type)
{
	char *img = xasprintf("%s/img.sqsh", dir), *folder = xasprintf("%s/data2", dir);
	char *file = xasprintf("%s/bad.sqsh", dir), *gone = xasprintf("%s/gone", dir);
	const char *ds[] = { folder };
	const struct { const char *path; int folder; unsigned char want; } cases[] = {
		{ folder, 1, INPUT_OK }, { file, 0, INPUT_OK }, { file, 1, INPUT_WRONG_TYPE },
		{ folder, 0, INPUT_WRONG_TYPE }, { gone, 1, INPUT_MISSING }, { gone, 0, INPUT_MISSING },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *in[] = { folder, cases[i].path };
		const int types[] = { 1, cases[i].folder };
		struct check_ask q = { ds, 1, img, NULL, "polar", 1, 1, NULL, in, types, 2 };
		struct check_facts g, c;
		int st = run_checks(&q, 1, "4:00:00", "2 gpu:8", &g);
		run_checks(&q, 0, "4:00:00", "2 gpu:8", &c);
		cr_expect_eq(c.inputs[0], INPUT_OK, "case %zu", i);
		cr_expect_eq(c.inputs[1], cases[i].want, "case %zu: %d", i, c.inputs[1]);
		cr_expect_eq(g.inputs[1], cases[i].want, "case %zu: the gate's answer", i);
		cr_expect_eq(st == 0, cases[i].want == INPUT_OK, "case %zu: gate %d", i, st);
	}
	free(img), free(folder), free(file), free(gone);
}

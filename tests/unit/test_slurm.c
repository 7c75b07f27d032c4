/* The poll command and its parser, on output shaped like SLURM 22.05's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/slurm/slurm.h"
#include "util/buf.h"
#include "util/xmalloc.h"

#define US "\x1f"
#define N "0123456789abcdef"	/* the poll's nonce */
#define D US N			/* its delimiter */
#define M "@@taotop-" N " "

Test(slurm, one_command_for_any_number_of_jobs)
{
	const char *ids[] = { "101", "102", "120_3", "12; rm -rf ~", "$(x)" };
	char *cmd = slurm_poll_command(ids, 5, NULL, N);
	cr_expect(strstr(cmd, "squeue --me -h") != NULL, "own jobs only: %s", cmd);
	cr_expect(strstr(cmd, "sacct -X -n -p --delimiter='" D "'") != NULL, "%s", cmd);
	cr_expect(strstr(cmd, "'%A" D "%i" D) != NULL, "every squeue field ends with the delimiter: %s", cmd);
	cr_expect(strstr(cmd, "echo '" M "squeue'") != NULL, "marks carry the nonce: %s", cmd);
	cr_expect(strstr(cmd, "-j 101,102,120_3;") != NULL, "ids batched: %s", cmd);
	cr_expect(strstr(cmd, "rm -rf") == NULL && strstr(cmd, "$(x)") == NULL,
	    "an id that is not an id never reaches the shell: %s", cmd);
	free(cmd);
	cmd = slurm_poll_command(NULL, 0, NULL, N);
	cr_expect(strstr(cmd, "sacct") == NULL, "no sacct when nothing left the queue");
	free(cmd);
}

static const char *sample =
	M "squeue\n"
	"101" D "101" D "101" D "N/A" D "tao-20261129-aaaaaa" D "RUNNING" D "None" D "polar" D "1" D "gres:gpu:4" D "12:03" D "4:00:00" D "\n"
	"102" D "102" D "102" D "N/A" D "name with | and spaces" D "PENDING" D "Resources" D "grizzly" D "2" D "gres:gpu:8" D "0:00" D "4:00:00" D "\n"
	"121" D "120_1" D "120" D "1" D "arr" D "RUNNING" D "None" D "polar" D "1" D "N/A" D "0:05" D "10:00" D "\n"
	"\n"
	"garbage line without separators\n"
	"103" D "truncated\n"
	M "rc 0\n"
	M "sacct\n"
	"99" D "99" D "old-job" D "CANCELLED by 1001" D "None" D "polar" D "1" D "00:00:07" D "00:05:00" D "0:0" D "\n"
	"98" D "98" D "timed" D "TIMEOUT" D "TimeLimit" D "polar" D "2" D "00:01:30" D "00:01:00" D "0:0" D "\n"
	"101" D "101" D "tao-20261129-aaaaaa" D "RUNNING" D "None" D "polar" D "1" D "00:12:03" D "04:00:00" D "0:0" D "\n"
	M "rc 0\n";

Test(slurm, parses_squeue_and_sacct_and_skips_garbage)
{
	struct slurm_poll p;
	slurm_poll_parse(sample, "", N, &p);
	cr_assert_eq(p.n, 6, "parsed %zu", p.n);
	cr_expect_eq(p.skipped, 2, "garbage and a truncated line skipped");
	cr_expect_eq(p.squeue_rc, 0);
	cr_expect_eq(p.sacct_rc, 0);

	const struct slurm_job *j = slurm_poll_find(&p, "102");
	cr_assert_not_null(j);
	cr_expect_str_eq(j->name, "name with | and spaces");
	cr_expect_str_eq(j->state, "PENDING");
	cr_expect_str_eq(j->reason, "Resources");
	cr_expect_eq(j->nodes, 2);
	cr_expect_eq(j->gpus, 16, "gres is per node: 2 x 8");

	j = slurm_poll_find(&p, "121");
	cr_expect_str_eq(j->shown_id, "120_1");
	cr_expect_str_eq(j->array_job, "120");
	cr_expect_str_eq(j->array_task, "1");
	cr_expect_eq(j->gpus, 0);

	j = slurm_poll_find(&p, "99");
	cr_expect(j->from_sacct);
	cr_expect_str_eq(j->state, "CANCELLED by 1001");
	cr_expect_str_eq(j->exit_code, "0:0");
	j = slurm_poll_find(&p, "98");
	cr_expect_eq(j->nodes, 2);
	cr_expect_str_eq(j->reason, "TimeLimit");

	j = slurm_poll_find(&p, "101");
	cr_expect(!j->from_sacct, "live squeue beats lagging accounting");
	cr_expect_str_eq(j->array_job, "", "a plain job is not an array");
	slurm_poll_free(&p);
}

Test(slurm, a_missing_answer_is_not_a_success)
{
	struct slurm_poll p;
	slurm_poll_parse(M "squeue\n", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n", N, &p);
	cr_expect_eq(p.squeue_rc, -1, "no rc line: the answer was cut");
	cr_expect_eq(p.n, 0);
	cr_expect_str_eq(p.squeue_err, "slurm_load_jobs error: Unable to contact slurm controller (connect failure)");
	slurm_poll_free(&p);

	slurm_poll_parse(M "squeue\n" M "rc 1\n", "", N, &p);
	cr_expect_eq(p.squeue_rc, 1);
	slurm_poll_free(&p);

	/* Random bytes never crash it. */
	char junk[4096];
	unsigned seed = 7;
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(junk) - 1; i++)
			junk[i] = (char)(1 + rand_r(&seed) % 255);
		junk[sizeof(junk) - 1] = '\0';
		slurm_poll_parse(junk, junk, N, &p);
		slurm_poll_free(&p);
	}
}

/* Lines that never end a record (a job's name with no delimiter after it,
 * or an answer cut at the output cap) are skipped one by one, each
 * exactly once, and the records after them still parse: the parse reads
 * ahead for a record's end once, not once per line (make bench times it
 * over 16 MiB). */
Test(slurm, a_flood_of_unended_lines_is_skipped_line_by_line)
{
	static const char line[] = "garbage" D "that never ends its record\n";
	size_t nlines = (2u << 20) / (sizeof(line) - 1), i, at;
	char *in = xmalloc(strlen(M "squeue\n") + nlines * (sizeof(line) - 1) + strlen(sample) + 1);
	struct slurm_poll p;

	at = (size_t)sprintf(in, "%s", M "squeue\n");
	for (i = 0; i < nlines; i++) {
		memcpy(in + at, line, sizeof(line) - 1);
		at += sizeof(line) - 1;
	}
	strcpy(in + at, sample);
	slurm_poll_parse(in, "", N, &p);
	cr_expect_eq(p.n, 6, "the records after the flood: %zu", p.n);
	cr_expect_eq(p.skipped, nlines + 2, "each unended line skipped once: %zu of %zu", p.skipped, nlines + 2);
	cr_expect_not_null(slurm_poll_find(&p, "102"));
	slurm_poll_free(&p);
	free(in);
}

/* The same at the size of the poll's output cap (64 MiB of unended
 * lines), within a minute: the parse that searched again from every line
 * took hours here (the timeout is a hang guard, not a speed target: make
 * bench's "poll parse" row measures the speed). */
Test(slurm, the_output_cap_of_unended_lines_is_parsed_at_all, .timeout = 60)
{
	static const char line[] = "garbage" D "that never ends its record\n";
	size_t cap = (size_t)64 << 20, at;
	char *in = xmalloc(cap + 64);
	struct slurm_poll p;

	at = (size_t)sprintf(in, "%s", M "squeue\n");
	while (at + sizeof(line) < cap) {
		memcpy(in + at, line, sizeof(line) - 1);
		at += sizeof(line) - 1;
	}
	in[at] = '\0';
	slurm_poll_parse(in, "", N, &p);
	cr_expect_eq(p.n, 0);
	cr_expect_eq(p.skipped, (at - strlen(M "squeue\n")) / (sizeof(line) - 1));
	slurm_poll_free(&p);
	free(in);
}

Test(slurm, gpu_counts)
{
	cr_expect_eq(slurm_count_gpus("gres:gpu:4", 2, 1), 8);
	cr_expect_eq(slurm_count_gpus("gres:gpu:a100:2", 1, 1), 2);
	cr_expect_eq(slurm_count_gpus("gpu:3", 1, 1), 3);
	cr_expect_eq(slurm_count_gpus("cpu=4,gres/gpu=8,gres/gpu:a100=8,node=1", 1, 0), 8,
	    "typed TRES repeats the total: counted once");
	cr_expect_eq(slurm_count_gpus("", 1, 1), 0);
	cr_expect_eq(slurm_count_gpus("gres:shard:4", 1, 1), 0);
}

/* squeue and sacct as SLURM 24.11 prints them where they differ from 22.05
 * (taken from the Debian 13 rig: RIG_SLURM=24.11 tests/cluster/up). */
static const char *sample_2411 =
	M "squeue\n"
	"547" D "547" D "547" D "N/A" D "tao-20261201-359a5d" D "RUNNING" D "None" D "polar" D "2" D "gres/gpu:4" D "0:26" D "30:00" D "\n"
	"548" D "548_[1-3]" D "548" D "1-3" D "arr" D "PENDING" D "JobHeldUser" D "polar" D "1" D "gres/gpu:a100:2" D "0:00" D "4:00:00" D "\n"
	M "rc 0\n"
	M "sacct\n"
	"549" D "549" D "held" D "CANCELLED by 1001" D "None" D "polar" D "1" D "00:00:00" D "Partition_Limit" D "0:0" D "\n"
	M "rc 0\n";

Test(slurm, squeue_and_sacct_as_slurm_24_11_prints_them)
{
	struct slurm_poll p;
	const struct slurm_job *j;

	/* %b: gres:gpu:4 in 22.05, gres/gpu:4 (the TRES name) since 23.02. */
	cr_expect_eq(slurm_count_gpus("gres/gpu:4", 2, 1), 8);
	cr_expect_eq(slurm_count_gpus("gres/gpu:a100:2", 1, 1), 2);
	cr_expect_eq(slurm_count_gpus("gres/gpu", 3, 1), 0, "no count, no guess");
	cr_expect_eq(slurm_count_gpus("gres/shard:4", 1, 1), 0);
	slurm_poll_parse(sample_2411, "", N, &p);
	cr_assert_eq(p.n, 3, "parsed %zu", p.n);
	j = slurm_poll_find(&p, "547");
	cr_expect_eq(j->gpus, 8, "gres/gpu:4 on 2 nodes");
	j = slurm_poll_find(&p, "548");
	cr_expect_eq(j->gpus, 2);
	/* A job with no limit of its own: 22.05 prints nothing, 24.11
	 * "Partition_Limit"; neither is a time. */
	j = slurm_poll_find(&p, "549");
	cr_expect_str_eq(j->limit, "");
	slurm_poll_free(&p);
}

Test(slurm, filename_patterns_expand_as_slurmd_does)
{
	struct slurm_pattern_vars task = { .job_id = "502", .array_job = "500", .array_task = "2",
	    .name = "arr", .user = "alice", .node = "node01" };
	struct slurm_pattern_vars plain = { .job_id = "77", .name = "train", .user = "alice" };
	struct { const struct slurm_pattern_vars *v; const char *pat, *want; } cases[] = {
		{ &task, "arr-%A_%a-%x-%u-%%.out", "arr-500_2-arr-alice-%.out" },
		{ &task, "/logs/%x-%j/main.out", "/logs/arr-502/main.out" },
		{ &task, "slurm-%4a-%N.out", "slurm-0002-node01.out" },
		{ &plain, "slurm-%A_%a.out", "slurm-77_4294967294.out" },
		{ &plain, "/l/%x-%j/main.err", "/l/train-77/main.err" },
		{ &plain, "100%", "100%" },
		{ &plain, "%q%", "%q%" },
		/* scontrol's own expansion leaves "%%": expanding again fixes it */
		{ &task, "/lustre/arr-500_2-arr-slurmuser-%%.out", "/lustre/arr-500_2-arr-slurmuser-%.out" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = slurm_expand_pattern(cases[i].pat, cases[i].v);
		cr_expect_str_eq(got, cases[i].want, "%s", cases[i].pat);
		free(got);
	}
}

Test(slurm, log_paths_from_squeue_fields)
{
	struct slurm_paths sp;
	char *cmd = slurm_paths_command("502", N);
	cr_expect(strstr(cmd, "squeue -h -t all -j 502 -O 'JobID:" D ",") != NULL, "%s", cmd);
	cr_expect(strstr(cmd, "STDOUT:" D) != NULL && strstr(cmd, "Name:" D "'") != NULL, "%s", cmd);
	free(cmd);

	cr_assert_eq(slurm_paths_parse("502" D "500" D "2" D "alice" D "node01" D
	    "/lustre/with space/%x-%j.out" D "/lustre/e%%.err" D "my job" D "\n", N, &sp), 0);
	cr_expect_str_eq(sp.job_id, "502");
	cr_expect_str_eq(sp.array_job, "500");
	cr_expect_str_eq(sp.array_task, "2");
	cr_expect_str_eq(sp.user, "alice");
	cr_expect_str_eq(sp.node, "node01");
	cr_expect_str_eq(sp.out, "/lustre/with space/%x-%j.out");
	cr_expect_str_eq(sp.err, "/lustre/e%%.err");
	cr_expect_str_eq(sp.name, "my job");
	slurm_paths_free(&sp);

	/* A plain pending job: no array, no node yet. */
	cr_assert_eq(slurm_paths_parse("7" D "7" D "N/A" D "bob" D "n/a" D "/o" D "/e" D "x" D "\n",
	    N, &sp), 0);
	cr_expect_str_eq(sp.array_job, "");
	cr_expect_str_eq(sp.array_task, "");
	cr_expect_str_eq(sp.node, "");
	slurm_paths_free(&sp);

	cr_expect_eq(slurm_paths_parse("", N, &sp), -1);
	cr_expect_eq(slurm_paths_parse("slurm_load_jobs error: Invalid job id specified\n", N, &sp), -1);
	cr_expect_eq(slurm_paths_parse("7" D "7" D "N/A" D "bob" D "n/a" D "/o\n", N, &sp), -1,
	    "cut short");
}

Test(slurm, a_job_name_cannot_move_its_log_path)
{
	struct slurm_paths sp;
	/* Names that steered the old `scontrol show job -o` search, and
	 * names that try the field separator, with and without a nonce. */
	static const char *const names[] = {
		"evil StdOut=/home/victim/.bashrc",
		"x StdErr=/etc/passwd StdOut=/tmp/own",
		"a\n7" US "7" US "N/A" US "bob" US "n/a" US "/forged",
		"b" US "ffffffffffffffff/forged" US "ffffffffffffffff",
		"c\n7" D "7",	/* even the real delimiter, in the last field */
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct buf out;
		buf_init(&out);
		buf_addf(&out, "7" D "7" D "N/A" D "bob" D "node01" D "/lustre/%%x.out" D "/lustre/e" D
		    "%s" D "\n", names[i]);
		if (i < 4) {
			cr_assert_eq(slurm_paths_parse(out.data, N, &sp), 0, "name %zu", i);
			cr_expect_str_eq(sp.out, "/lustre/%x.out", "name %zu", i);
			cr_expect_str_eq(sp.err, "/lustre/e", "name %zu", i);
			cr_expect_str_eq(sp.name, names[i], "name %zu", i);
			slurm_paths_free(&sp);
		} else {
			/* The nonce is unknown to a name; were it guessed, the
			 * paths before the name are still read as they are. */
			if (slurm_paths_parse(out.data, N, &sp) == 0) {
				cr_expect_str_eq(sp.out, "/lustre/%x.out");
				slurm_paths_free(&sp);
			}
		}
		buf_free(&out);
	}
}

#include "engine/track/actions.h"

Test(actions, time_limits_as_typed_become_slurms_form)
{
	struct { const char *in, *want; } ok[] = {
		{ "90", "1:30:00" }, { "5:30", "0:05:30" }, { "2:00:00", "2:00:00" },
		{ "1-00:00:00", "24:00:00" }, { " 7", "0:07:00" },
	};
	const char *bad[] = { "", "soon", "0", "-5", "1:2:3:4", "5:75", "90m" };
	char out[32], *err = NULL;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert_eq(job_time_limit_parse(ok[i].in, out, sizeof(out), &err), 0, "%s: %s",
		    ok[i].in, err);
		cr_expect_str_eq(out, ok[i].want, "%s", ok[i].in);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		cr_expect_neq(job_time_limit_parse(bad[i], out, sizeof(out), &err), 0, "'%s' passed",
		    bad[i]);
		cr_expect(err != NULL && strstr(err, "is not a time limit") != NULL, "%s", err);
		free(err);
	}
}

/* A row of squeue output for id with a given name, as the poll prints it. */
#define ROW(id, name, state) id D id D id D "N/A" D name D state D "None" D "polar" D "1" D \
	"N/A" D "0:05" D "1:00:00" D "\n"

Test(slurm, hostile_names_cannot_forge_rows_fields_or_marks)
{
	struct slurm_poll p;
	/* A newline in a name, then a whole row in the old format and in the
	 * new one with a guessed nonce; a US byte; a forged mark. */
	const char *out =
		M "squeue\n"
		ROW("201", "a\n" "666" US "666" US "666" US "N/A" US "x" US "COMPLETED" US "None" US
		    "p" US "1" US "N/A" US "0:00" US "1:00" "\n", "RUNNING")
		ROW("202", "b\n666" US "ffffffffffffffff" US "666", "PENDING")
		ROW("203", "c" US "d" US "e", "RUNNING")
		ROW("204", "d\n@@taotop-ffffffffffffffff rc 1\n@@taotop sacct\n@@taotop rc 7", "RUNNING")
		M "rc 0\n";

	slurm_poll_parse(out, "", N, &p);
	cr_assert_eq(p.n, 4, "four real rows, nothing forged (%zu)", p.n);
	cr_expect_null(slurm_poll_find(&p, "666"), "no forged job");
	cr_expect_str_eq(slurm_poll_find(&p, "201")->state, "RUNNING");
	cr_expect_str_eq(slurm_poll_find(&p, "202")->state, "PENDING");
	cr_expect_str_eq(slurm_poll_find(&p, "203")->name, "c" US "d" US "e", "US in a name stays");
	cr_expect_str_eq(slurm_poll_find(&p, "203")->state, "RUNNING", "fields not moved");
	cr_expect(strchr(slurm_poll_find(&p, "201")->name, '\n') != NULL, "the name as it is");
	cr_expect_eq(p.squeue_rc, 0, "a mark inside a name is not a mark");
	cr_expect_eq(p.sacct_rc, -1);
	slurm_poll_free(&p);

	/* Output made with another nonce is nothing. */
	slurm_poll_parse(out, "", "ffffffffffffffff", &p);
	cr_expect_eq(p.n, 0);
	cr_expect_eq(p.squeue_rc, -1);
	slurm_poll_free(&p);
}

Test(slurm, nonces_are_fresh_hex)
{
	char a[SLURM_NONCE_LEN + 1], b[SLURM_NONCE_LEN + 1];
	slurm_nonce(a);
	slurm_nonce(b);
	cr_expect(slurm_nonce_ok(a) && slurm_nonce_ok(b));
	cr_expect_str_neq(a, b);
	cr_expect(!slurm_nonce_ok("0123"));
	cr_expect(!slurm_nonce_ok("0123456789abcdeg"));
	cr_expect(!slurm_nonce_ok("0123456789abcdef'"));
}

Test(slurm, the_history_window_rides_in_the_same_command)
{
	struct slurm_history h = { .since_s = 7 * 86400, .max = 1000 };
	char *cmd = slurm_poll_command(NULL, 0, &h, N);
	cr_expect(strstr(cmd, "squeue --me -h") != NULL, "one command, the queue first: %s", cmd);
	cr_expect(strstr(cmd, "echo '" M "history'; { sacct -X -n -p --delimiter='" D "' -o ") != NULL,
	    "%s", cmd);
	cr_expect(strstr(cmd, ",AllocTRES -u \"$(id -un)\" -S now-604800seconds -E now; echo \"" M
	    "rc $?\"; } | tail -n 1001") != NULL, "the user's own, the window, bounded: %s", cmd);
	free(cmd);
	h.since_s = 10L * 366 * 86400;
	h.max = 999999;
	cmd = slurm_poll_command(NULL, 0, &h, N);
	cr_expect(strstr(cmd, "-S now-31622400seconds") != NULL && strstr(cmd, "tail -n 5001") != NULL,
	    "a year and 5000 lines at most: %s", cmd);
	free(cmd);
	h.since_s = 0;
	cmd = slurm_poll_command(NULL, 0, &h, N);
	cr_expect(strstr(cmd, "history") == NULL, "no window, no history: %s", cmd);
	free(cmd);
}

Test(slurm, history_lines_parse_with_gpus_and_one_time_format)
{
	const char *out =
		M "squeue\n"
		"7" D "7" D "7" D "N/A" D "live" D "RUNNING" D "None" D "polar" D "1" D "gres:gpu:2" D "2:00" D "1-00:00:00" D "\n"
		M "rc 0\n"
		M "history\n"
		/* tail cut the first record: what is left is skipped */
		"ad" D "FAILED" D "None" D "polar" D "1" D "00:00:01" D "00:05:00" D "3:0" D "billing=1" D "\n"
		"5" D "5" D "two\nlines" M "rc 0" D "COMPLETED" D "None" D "polar" D "2" D "00:02:00" D "01:00:00" D "0:0" D "billing=2,cpu=2,gres/gpu=4,node=2" D "\n"
		"6" D "6" D "unl" D "CANCELLED by 1001" D "None" D "cpu_long" D "1" D "00:00:00" D "UNLIMITED" D "0:0" D "billing=1,cpu=1,node=1" D "\n"
		M "rc 0\n";
	struct slurm_poll p;
	const struct slurm_job *j;

	slurm_poll_parse(out, "", N, &p);
	cr_expect_eq(p.history_rc, 0);
	cr_expect_eq(p.sacct_rc, -1, "not asked");
	cr_assert_eq(p.n, 3, "parsed %zu, skipped %zu", p.n, p.skipped);
	j = slurm_poll_find(&p, "7");
	cr_expect_str_eq(j->elapsed, "00:02:00", "squeue's 2:00 in the one format");
	cr_expect_eq(j->elapsed_s, 120);
	cr_expect_str_eq(j->limit, "1-00:00:00");
	cr_expect_eq(j->limit_s, 86400);
	j = slurm_poll_find(&p, "5");
	cr_assert_not_null(j);
	cr_expect(j->from_sacct && j->from_history);
	cr_expect_str_eq(j->name, "two\nlines" M "rc 0", "a name cannot forge a mark");
	cr_expect(j->gpus_known);
	cr_expect_eq(j->gpus, 4, "AllocTRES counts the whole allocation");
	cr_expect_eq(j->limit_s, 3600);
	j = slurm_poll_find(&p, "6");
	cr_expect_str_eq(j->limit, "UNLIMITED", "a word stays the word");
	cr_expect_eq(j->limit_s, -1);
	cr_expect_eq(j->gpus, 0);
	slurm_poll_free(&p);

	/* The history's rc is its own: a failed sacct says so. */
	slurm_poll_parse(M "squeue\n" M "rc 0\n" M "history\n" M "rc 1\n", "", N, &p);
	cr_expect_eq(p.squeue_rc, 0);
	cr_expect_eq(p.history_rc, 1);
	slurm_poll_free(&p);
}

/* The partition a job ran on, once seen, is kept over the list it was
 * submitted to (what squeue says while it waits, and accounting for a
 * while after a short job ended); any other answer replaces it. */
Test(slurm, the_partition_it_ran_on_is_kept_over_its_list)
{
	cr_expect(slurm_partition_keep("b", "a,b"));
	cr_expect(slurm_partition_keep("a", "a,b,c"));
	cr_expect_not(slurm_partition_keep("b", "a,bb"), "a whole name");
	cr_expect_not(slurm_partition_keep("b", "c"), "one partition: SLURM's word");
	cr_expect_not(slurm_partition_keep("a,b", "a,b"), "nothing seen yet");
	cr_expect_not(slurm_partition_keep("", "a,b"));
	cr_expect_not(slurm_partition_keep(NULL, "a,b"));
	cr_expect_not(slurm_partition_keep("c", "a,b"), "another list: it was moved");
}

/* One rule for a SLURM name wherever one is read (a node to exclude, a
 * partition or account, a user, a cluster): what sbatch and a node list
 * take, never an option or a second line. */
Test(slurm, one_rule_for_a_slurm_name)
{
	static const char *const good[] = { "node01", "gpu-a100.rack_2", "a", "0node" };
	static const char *const bad[] = { "", "-x", "a,b", "a b", "a\nb", "a#b", "a;b", "a/b" };
	char longest[SLURM_NAME_MAX + 2], *err = NULL;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect(slurm_name_ok(good[i]), "'%s' refused", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(!slurm_name_ok(bad[i]), "'%s' taken", bad[i]);
	cr_expect(!slurm_name_ok(NULL));
	memset(longest, 'n', SLURM_NAME_MAX);
	longest[SLURM_NAME_MAX] = '\0';
	cr_expect(slurm_name_ok(longest), "64 characters are a name");
	longest[SLURM_NAME_MAX] = 'n';
	longest[SLURM_NAME_MAX + 1] = '\0';
	cr_expect(!slurm_name_ok(longest), "65 are not");
	cr_expect_eq(slurm_name_check("partition", "-gpu", "the bundle", &err), -1,
	    "a name that would read as an option");
	cr_expect(err != NULL && strstr(err, "not one SLURM name") != NULL, "%s", err);
	free(err);
}

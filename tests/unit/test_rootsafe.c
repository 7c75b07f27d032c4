/* The shared-root tests (engine/config/rootsafe.h), run here by the same
 * sh the cluster runs, on folders and files made as another user would
 * leave them (these tests run as root: chown to uid 4242 is a foreign
 * user's file), and the words each answer gets. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/config/rootsafe.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/xmalloc.h"

static char dir[] = "/tmp/taotop-rootsafe-XXXXXX";

static void make_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
}

static void remove_dir(void)
{
	char *cmd = xasprintf("rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
	free(cmd);
}

TestSuite(rootsafe, .init = make_dir, .fini = remove_dir);

/* cmd with $D the test's folder and $N the name given. */
static void sh(const char *cmd0, const char *a)
{
	char *cmd = xasprintf("D=%s N=%s; %s", dir, a, cmd0);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	free(cmd);
}

/* The code one question answers for path under dir ("" for none). */
static char *answer(void (*ask)(struct buf *, const char *, const char *), const char *name)
{
	struct buf cmd;
	char *path = xasprintf("%s/%s", dir, name), *script = xasprintf("%s.sh", dir), *out, *run;
	char code[64];
	FILE *f;

	buf_init(&cmd);
	rootsafe_funcs(&cmd);
	ask(&cmd, "q", path);
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fputs(cmd.data, f);
	fclose(f);
	run = xasprintf("sh %s > %s.out 2>&1", script, script);
	cr_expect_eq(system(run), 0);
	free(run);
	run = xasprintf("%s.out", script);
	out = file_read_all(run, NULL, NULL);
	cr_assert_not_null(out);
	if (!rootsafe_read(out, "q", code, sizeof(code)))
		code[0] = '\0';
	cr_expect(strstr(out, "@@q") == NULL || code[0] != '\0', "%s", out);
	free(out), free(run), free(script), free(path);
	buf_free(&cmd);
	return xstrdup(code);
}

static void expect(void (*ask)(struct buf *, const char *, const char *), const char *name,
    const char *code)
{
	char *got = answer(ask, name);
	cr_expect_str_eq(got, code, "%s", name);
	free(got);
}

/* One case: a path under the test's folder, made by `make` ($N its name;
 * NULL: left missing, or made by an earlier case), and the code a
 * question answers for it ("": nothing unsafe). */
struct kase {
	const char	*make, *name, *want;
};

typedef void ask_fn(struct buf *, const char *, const char *);

static void cases(ask_fn *ask, const struct kase *k, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (k[i].make != NULL)
			sh(k[i].make, strrchr(k[i].name, '/') ? strrchr(k[i].name, '/') + 1 : k[i].name);
	for (i = 0; i < n; i++)
		expect(ask, k[i].name, k[i].want);
}

Test(rootsafe, a_folder_taotop_writes_into_is_the_users_own_and_closed)
{
	static const struct kase k[] = {
		{ NULL, "missing", "" },
		{ "mkdir -m 755 $D/$N", "own", "" },
		{ "mkdir $D/$N && chmod 777 $D/$N", "open", "writable" },
		{ "mkdir $D/$N && chmod 1777 $D/$N", "sticky", "writable" },
		{ "mkdir $D/$N && chown 4242 $D/$N", "theirs", "owner 4242" },
		{ "mkdir $D/real && ln -s $D/real $D/$N", "link", "link" },
		{ "touch $D/$N", "file", "notdir" },
	};

	cases(rootsafe_ask_dir, k, sizeof(k) / sizeof(k[0]));
}

Test(rootsafe, a_file_taotop_runs_is_nobody_elses_to_replace)
{
	static const struct kase k[] = {
		{ NULL, "a/none.sqsh", "" },
		{ "mkdir -m 755 $D/a && echo hsqs > $D/a/$N", "a/own.sqsh", "" },
		{ "mkdir -p $D/a && echo x > $D/a/$N && chown 4242 $D/a/$N", "a/theirs.sqsh",
		  "owner 4242" },
		{ "mkdir -p $D/a && echo x > $D/a/$N && chmod 666 $D/a/$N", "a/open.sqsh", "writable" },
		{ "mkdir -p $D/o && chmod 777 $D/o && echo x > $D/o/$N", "o/mine.sqsh", "dirwritable" },
		{ "mkdir -p $D/s && chmod 1777 $D/s && echo x > $D/s/$N", "s/mine.sqsh", "" },
		{ "mkdir -p $D/t && chown 4242 $D/t && echo x > $D/t/$N", "t/mine.sqsh",
		  "dirowner 4242" },
		/* A link in a closed folder of the user's to a file in an open one. */
		{ "mkdir -p $D/o && ln -s $D/o/mine.sqsh $D/a/$N", "a/via.sqsh", "dirwritable" },
	};

	cases(rootsafe_ask_file, k, sizeof(k) / sizeof(k[0]));
}

Test(rootsafe, a_root_open_to_all_without_the_sticky_bit_is_named)
{
	static const struct kase k[] = {
		{ "mkdir $D/$N && chmod 777 $D/$N", "open", "open" },
		{ "mkdir $D/$N && chmod 1777 $D/$N", "sticky", "" },
		{ "mkdir $D/$N && chown 4242 $D/$N", "theirs", "owner 4242" },
		{ "mkdir $D/real && ln -s $D/real $D/$N", "link", "link" },
	};

	cases(rootsafe_ask_root, k, sizeof(k) / sizeof(k[0]));
}

Test(rootsafe, each_answer_has_words_and_a_fix_naming_the_path)
{
	const char *codes[] = { "link", "notdir", "owner 4242", "writable", "dirowner 7",
	    "dirwritable", "open" };
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		char *why = rootsafe_why(codes[i]), *fix = rootsafe_fix(codes[i], "/l/r/images");
		cr_expect(strstr(why, "unsafe (") == NULL, "%s has no words: %s", codes[i], why);
		cr_expect(strstr(fix, "/l/r/images") != NULL, "%s: %s", codes[i], fix);
		free(why), free(fix);
	}
	char *why = rootsafe_why("owner 4242");
	cr_expect(strstr(why, "uid 4242") != NULL, "%s", why);
	free(why);
	/* A uid that is not digits is not repeated (it came from the cluster). */
	why = rootsafe_why("owner 1\x1b[2J");
	cr_expect(strstr(why, "\x1b") == NULL && strstr(why, "uid ?") != NULL, "%s", why);
	free(why);
	char code[16];
	cr_expect(rootsafe_read("x\n@@qq no\n@@q link\n", "q", code, sizeof(code)));
	cr_expect_str_eq(code, "link");
	cr_expect(!rootsafe_read("@@qq link\n", "q", code, sizeof(code)));
	cr_expect(rootsafe_read("@@q dirwritable-and-more-than-fits\n", "q", code, 8));
	cr_expect_str_eq(code, "dirwrit");
}

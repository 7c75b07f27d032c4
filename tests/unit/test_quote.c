/* The one quoting function: any byte string (but NUL) is one sh word that
 * the shell gives back byte for byte. Checked here against the local /bin/sh;
 * tests/integration/test_ssh.c checks it against the remote login shell. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ssh/quote.h"
#include "util/buf.h"
#include "util/xmalloc.h"

Test(quote, known_forms)
{
	struct { const char *in, *out; } cases[] = {
		{ "plain", "plain" },
		{ "/lustre/a-b_c.d/e+f,g:h@i%j", "/lustre/a-b_c.d/e+f,g:h@i%j" },
		{ "", "''" },
		{ "two words", "'two words'" },
		{ "it's", "'it'\\''s'" },
		{ "$(touch /tmp/pwned)", "'$(touch /tmp/pwned)'" },
		{ "a=b", "'a=b'" },
		{ "~root", "'~root'" },
		{ "*", "'*'" },
		{ "-rf", "-rf" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *q = sh_quote(cases[i].in);
		cr_expect_str_eq(q, cases[i].out, "quoting [%s]", cases[i].in);
		free(q);
	}
}

/* A random string full of what shells treat specially. */
static size_t hostile(char *s, size_t max, unsigned *seed)
{
	static const char special[] = "'\"$`\\\n\t *?[]{}()<>|&;#~!-=%^";
	size_t len = (size_t)rand_r(seed) % max, i;
	for (i = 0; i < len; i++) {
		int pick = rand_r(seed) % 4;
		if (pick == 0)
			s[i] = special[rand_r(seed) % (sizeof(special) - 1)];
		else if (pick == 1)
			s[i] = (char)(1 + rand_r(seed) % 255);	/* any byte but NUL */
		else
			s[i] = (char)('a' + rand_r(seed) % 26);
	}
	s[len] = '\0';
	return len;
}

Test(quote, round_trips_through_sh, .timeout = 60)
{
	enum { N = 3000 };
	static char strs[N][64];
	unsigned seed = 12345;
	struct buf script, got;
	int in[2], out[2], status;

	/* One sh reads a script printing every word NUL-terminated. */
	buf_init(&script);
	for (int i = 0; i < N; i++) {
		hostile(strs[i], sizeof(strs[i]) - 1, &seed);
		buf_adds(&script, "printf '%s\\0' ");
		sh_quote_buf(&script, strs[i], strlen(strs[i]));
		buf_addc(&script, '\n');
	}
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0), dup2(out[1], 1);
		close(in[0]), close(in[1]), close(out[0]), close(out[1]);
		execl("/bin/sh", "sh", "-s", (char *)NULL);
		_exit(127);
	}
	close(in[0]), close(out[1]);
	/* The script is larger than a pipe: write it from a child. */
	if (fork() == 0) {
		close(out[0]);
		(void)!write(in[1], script.data, script.len);
		_exit(0);
	}
	close(in[1]);
	buf_init(&got);
	char chunk[65536];
	ssize_t n;
	while ((n = read(out[0], chunk, sizeof(chunk))) > 0)
		buf_add(&got, chunk, (size_t)n);
	waitpid(pid, &status, 0);
	cr_assert_eq(WEXITSTATUS(status), 0);

	size_t off = 0;
	for (int i = 0; i < N; i++) {
		cr_assert(off < got.len, "only %d of %d words came back", i, N);
		cr_assert_str_eq(got.data + off, strs[i], "word %d differs", i);
		off += strlen(got.data + off) + 1;
	}
	cr_expect_eq(off, got.len);
	buf_free(&script);
	buf_free(&got);
}

#include "ssh/conn.h"

Test(quote, known_hosts_names_for_ssh_keygen)
{
	static const char *const cases[][2] = {
		{ "login.example.org", "login.example.org" },
		{ "login.example.org:22", "login.example.org" },
		{ "127.0.0.1:2222", "'[127.0.0.1]:2222'" },
		{ "alice@host:2222", "'[host]:2222'" },
		{ "[::1]:2200", "'[::1]:2200'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = conn_known_hosts_name(cases[i][0]);
		cr_expect_str_eq(got, cases[i][1], "%s", cases[i][0]);
		free(got);
	}
}

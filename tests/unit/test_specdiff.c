/* Runs of a sweep told apart by their staged specs: dotted keys, the keys
 * that differ in their shortest form, the names a legend gives, and what
 * happens when nothing (or no spec) tells them apart. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/store/specdiff.h"

Test(specdiff, a_nested_spec_flattens_to_dotted_keys_lists_by_index)
{
	struct spec_flat f;

	cr_assert_eq(specdiff_flatten("train:\n  optim:\n    lr: 0.01\n  num_epochs: 4\n"
	    "augment:\n  scales: [1, 2]\n", &f), 0);
	cr_assert_eq(f.n, 4);
	cr_expect_str_eq(f.key[0], "train.optim.lr");
	cr_expect_str_eq(f.val[0], "0.01");
	cr_expect_str_eq(f.key[1], "train.num_epochs");
	cr_expect_str_eq(f.key[2], "augment.scales.0");
	cr_expect_str_eq(f.key[3], "augment.scales.1");
	cr_expect_str_eq(f.val[3], "2");
	specdiff_flat_free(&f);
	cr_expect_eq(specdiff_flatten("- a\n- b\n", &f), -1, "a list is not a spec");
	cr_expect_eq(specdiff_flatten("a: [\n", &f), -1, "not YAML");
	cr_expect_eq(specdiff_flatten(NULL, &f), -1);
	cr_expect_eq(f.n, 0);
}

Test(specdiff, two_learning_rates_are_named_by_lr_alone)
{
	const char *specs[] = {
		"train:\n  optim:\n    lr: 0.001\n  num_epochs: 4\n",
		"train:\n  optim:\n    lr: 0.01\n  num_epochs: 4\n",
	};
	const char *ids[] = { "tao-a", "tao-b" };
	struct spec_diff d;

	specdiff_make(specs, ids, 2, &d);
	cr_assert_eq(d.nkeys, 1);
	cr_expect_str_eq(d.key[0], "train.optim.lr");
	cr_expect_str_eq(d.shown[0], "lr");
	cr_expect_str_eq(d.label[0], "lr=0.001");
	cr_expect_str_eq(d.label[1], "lr=0.01");
	cr_expect_str_eq(d.val[1][0], "0.01");
	specdiff_free(&d);
}

Test(specdiff, the_shortest_form_that_no_other_key_ends_with)
{
	const char *specs[] = {
		"train:\n  optim:\n    lr: 0.1\nmodel:\n  head:\n    lr: 1\n",
		"train:\n  optim:\n    lr: 0.2\nmodel:\n  head:\n    lr: 1\n",
	};
	const char *ids[] = { "tao-a", "tao-b" };
	struct spec_diff d;

	specdiff_make(specs, ids, 2, &d);
	cr_assert_eq(d.nkeys, 1);
	cr_expect_str_eq(d.shown[0], "optim.lr", "lr alone is also model.head.lr");
	cr_expect_str_eq(d.label[0], "optim.lr=0.1");
	specdiff_free(&d);
}

Test(specdiff, nothing_differs_or_no_spec_kept_names_the_record)
{
	const char *same[] = { "train:\n  lr: 0.1\n", "train:\n  lr: 0.1\n" };
	const char *one[] = { "train:\n  lr: 0.1\n", NULL };
	const char *ids[] = { "tao-a", "tao-b" };
	struct spec_diff d;

	specdiff_make(same, ids, 2, &d);
	cr_expect_eq(d.nkeys, 0);
	cr_expect_str_eq(d.label[0], "tao-a");
	cr_expect_str_eq(d.label[1], "tao-b");
	specdiff_free(&d);
	specdiff_make(one, ids, 2, &d);
	cr_expect_eq(d.nkeys, 0, "one spec has nothing to differ from");
	cr_expect_str_eq(d.label[1], "tao-b");
	specdiff_free(&d);
}

Test(specdiff, a_key_one_run_lacks_many_keys_and_a_name_twice)
{
	const char *specs[] = {
		"a: 1\nb: 1\nc: 1\nd: 1\n",
		"a: 2\nb: 2\nc: 2\n",
		"a: 2\nb: 2\nc: 2\n",
	};
	const char *three[] = { "x: 1\ny: 1\n", "x: 2\ny: 1\n", "x: 2\ny: 1\n" };
	const char *ids[] = { "tao-a", "tao-b", "tao-c" };
	struct spec_diff d;

	specdiff_make(specs, ids, 2, &d);
	cr_assert_eq(d.nkeys, 4);
	cr_expect_str_eq(d.label[0], "a=1, b=1, c=1 +1 more");
	cr_expect_str_eq(d.label[1], "a=2, b=2, c=2 +1 more");
	cr_expect_null(d.val[1][3], "b has no d");
	specdiff_free(&d);
	specdiff_make(three, ids, 3, &d);
	cr_assert_eq(d.nkeys, 1);
	cr_expect_str_eq(d.label[0], "x=1");
	cr_expect_str_eq(d.label[1], "x=2 (tao-b)");
	cr_expect_str_eq(d.label[2], "x=2 (tao-c)");
	specdiff_free(&d);
}

Test(specdiff, control_bytes_in_a_value_are_shown_not_sent)
{
	const char *specs[] = { "name: \"a\\e[31mred\"\n", "name: plain\n" };
	const char *ids[] = { "tao-a", "tao-b" };
	struct spec_diff d;

	specdiff_make(specs, ids, 2, &d);
	cr_assert_eq(d.nkeys, 1);
	cr_expect(strchr(d.label[0], '\x1b') == NULL, "%s", d.label[0]);
	cr_expect(strstr(d.label[0], "red") != NULL, "%s", d.label[0]);
	specdiff_free(&d);
}

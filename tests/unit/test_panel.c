/*
 * The monitor's panels (ui/panel.h) as data, without a terminal: the
 * registry (every dialog mode has a panel that takes keys and draws, and
 * each key action opens one panel at most), the yes/no helper, and what
 * the loop does with a panel's answer. The dialogs on screen are
 * tests/integration/test_screen.c's.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ui/app.h"
#include "ui/keymap.h"
#include "ui/panel.h"

static int yes_called;

static enum panel_next yes(struct app *a)
{
	(void)a;
	yes_called++;
	return PANEL_MOVED;
}

Test(panel, every_dialog_mode_has_a_panel_that_takes_keys_and_draws)
{
	int m;

	for (m = 0; m < MODE_COUNT; m++) {
		const struct panel *p = panel_of(m);
		if (m == MODE_NORMAL || m == MODE_FILTER || m == MODE_SEARCH) {
			cr_expect_null(p, "mode %d is the app's, not a panel", m);
			continue;
		}
		cr_assert_not_null(p, "mode %d has no panel", m);
		cr_expect_not_null(p->key, "mode %d: no key handler", m);
		cr_expect_not_null(p->draw, "mode %d: no drawing", m);
	}
	cr_expect_null(panel_of(-1));
	cr_expect_null(panel_of(MODE_COUNT));
}

/* The keys that open a dialog reach its panel (with nothing selected and
 * read-only, each opens and refuses without the engine). */
Test(panel, the_dialog_keys_reach_their_panels)
{
	static const enum action opening[] = { ACT_HELP, ACT_CANCEL, ACT_DETAIL, ACT_RETRY,
	    ACT_ACTIONS, ACT_SUBMIT };
	size_t i;

	for (i = 0; i < sizeof(opening) / sizeof(opening[0]); i++) {
		struct app a;
		memset(&a, 0, sizeof(a));
		a.readonly = 1;		/* opening checks first: nothing reaches the engine */
		cr_expect_eq(panel_open_by(&a, opening[i]), 1, "%s opens no panel",
		    keymap_action_name(opening[i]));
		if (opening[i] == ACT_HELP) {
			cr_expect_eq(a.mode, MODE_HELP, "help did not open");
		} else {
			/* Refused: the list stays, and a changing one says why. */
			cr_expect_eq(a.mode, MODE_NORMAL, "%s opened on nothing, read-only",
			    keymap_action_name(opening[i]));
			if (opening[i] != ACT_DETAIL)
				cr_expect_not_null(a.message, "%s refused without a word",
				    keymap_action_name(opening[i]));
		}
		free(a.message);
		panel_free_all(&a);
	}
}

Test(panel, a_key_that_is_no_dialogs_opens_nothing)
{
	struct app a;

	memset(&a, 0, sizeof(a));
	cr_expect_eq(panel_open_by(&a, ACT_NONE), 0);
	cr_expect_eq(panel_open_by(&a, ACT_UP), 0);
	cr_expect_eq(panel_open_by(&a, ACT_SORT), 0);
	cr_expect_eq(a.mode, MODE_NORMAL);
}

Test(panel, yes_no_is_y_or_enter_against_n_q_or_esc)
{
	static const wint_t yes_keys[] = { 'y', 'Y', '\r', '\n' };
	static const wint_t no_keys[] = { 'n', 'N', 'q', KEY_ESC };
	static const wint_t other_keys[] = { 'x', ' ', 'j', 'a' };
	struct app a;
	size_t i;

	memset(&a, 0, sizeof(a));
	for (i = 0; i < 4; i++) {
		yes_called = 0;
		cr_expect_eq(panel_confirm(&a, yes_keys[i], 0, yes), PANEL_MOVED);
		cr_expect_eq(yes_called, 1, "key %d did not say yes", (int)yes_keys[i]);
		cr_expect_eq(panel_confirm(&a, no_keys[i], 0, yes), PANEL_CLOSE);
		cr_expect_eq(panel_confirm(&a, other_keys[i], 0, yes), PANEL_KEEP);
	}
	/* A function key is never an answer (keypad Enter included, as
	 * before panels). */
	yes_called = 0;
	cr_expect_eq(panel_confirm(&a, KEY_DOWN, 1, yes), PANEL_KEEP);
	cr_expect_eq(panel_confirm(&a, KEY_ENTER, 1, yes), PANEL_KEEP);
	cr_expect_eq(yes_called, 0);
}

/* Read-only: the dialogs that change jobs say why on the message line and
 * stay closed. */
Test(panel, read_only_keeps_cancel_retry_actions_and_submit_closed)
{
	static const enum action acts[] = { ACT_CANCEL, ACT_RETRY, ACT_ACTIONS, ACT_SUBMIT };
	size_t i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		struct app a;
		memset(&a, 0, sizeof(a));
		a.readonly = 1;
		panel_open_by(&a, acts[i]);
		cr_expect_eq(a.mode, MODE_NORMAL, "%s opened read-only", keymap_action_name(acts[i]));
		cr_assert_not_null(a.message);
		cr_expect(strstr(a.message, "read-only") != NULL, "%s: %s",
		    keymap_action_name(acts[i]), a.message);
		cr_expect(a.message_error);
		free(a.message);
		panel_free_all(&a);
	}
}

/* The help opens with the key table's lines, scrolls, and closes on ?. */
Test(panel, the_help_opens_and_closes_on_its_keys)
{
	struct app a;

	memset(&a, 0, sizeof(a));
	cr_assert_eq(panel_open_by(&a, ACT_HELP), 1);
	cr_expect_eq(a.mode, MODE_HELP);
	panel_key(&a, 'j', 0);
	cr_expect_eq(a.mode, MODE_HELP);
	panel_key(&a, '?', 0);
	cr_expect_eq(a.mode, MODE_NORMAL);
	cr_expect(a.dirty & DIRTY_DIALOG);
	panel_free_all(&a);
	for (int m = 0; m < MODE_COUNT; m++)
		cr_expect_null(a.panel_state[m]);
}

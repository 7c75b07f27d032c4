/* An unknown or changed host key: opened by the engine's news over the
 * normal view. An unknown key can be accepted (a: written to known_hosts)
 * or refused; a changed one is only explained. */
#include <stdlib.h>

#include "ssh/conn.h"
#include "ui/app.h"
#include "ui/dialog.h"
#include "ui/message.h"
#include "util/xmalloc.h"

struct hostkey {
	size_t	cluster;
};

static struct hostkey *state(struct app *a)
{
	return panel_state(a, MODE_HOSTKEY, sizeof(struct hostkey));
}

void hostkey_panel_check(struct app *a)
{
	size_t i;

	if (a->mode != MODE_NORMAL)
		return;
	for (i = 0; i < watch_count(a->watch); i++) {
		enum link_state l = watch_cluster(a->watch, i)->link;
		if (l == LINK_HOSTKEY_UNKNOWN || l == LINK_HOSTKEY_CHANGED) {
			state(a)->cluster = i;
			a->mode = MODE_HOSTKEY;
			a->dirty |= DIRTY_DIALOG;
			break;
		}
	}
}

static enum panel_next hostkey_key(struct app *a, wint_t ch, int func)
{
	size_t c = state(a)->cluster;

	if (!func && ch == 'a' && watch_cluster(a->watch, c)->link == LINK_HOSTKEY_UNKNOWN) {
		watch_trust(a->watch, c);
		ui_message(a, 0, "host key accepted: written to known_hosts; connecting");
		return PANEL_CLOSE;
	}
	return !func && (ch == 'r' || ch == KEY_ESC || ch == 'q') ? PANEL_CLOSE : PANEL_KEEP;
}

static void hostkey_draw(struct app *a)
{
	const struct watched *c = watch_cluster(a->watch, state(a)->cluster);
	char *v[8], *kh;
	size_t n = 0, i;

	if (c == NULL)
		return;
	if (c->link == LINK_HOSTKEY_CHANGED) {
		v[n++] = xasprintf("The host key of %s (cluster %s) has CHANGED.", c->host ? c->host
		    : "?", c->cfg->name);
		v[n++] = xasprintf("It now presents %s.", c->fingerprint ? c->fingerprint : "?");
		v[n++] = xstrdup("Someone may be intercepting the connection, or the admins");
		v[n++] = xstrdup("replaced the key. taotop will not connect. If the change is");
		kh = conn_known_hosts_name(c->host);
		v[n++] = xasprintf("known, remove the old key: ssh-keygen -R %s", kh);
		free(kh);
		dialog_draw(a, "WARNING: host key changed", v, n, 0, "Esc: close",
		    ROLE_DIALOG_WARNING);
	} else {
		v[n++] = xasprintf("%s (cluster %s) is not in known_hosts yet.", c->host ? c->host
		    : "?", c->cfg->name);
		v[n++] = xasprintf("Its key: %s", c->fingerprint ? c->fingerprint : "?");
		v[n++] = xstrdup("Compare it with the fingerprint your cluster's admins publish.");
		dialog_draw(a, "Unknown host key", v, n, 0,
		    "a: accept and remember    r/Esc: refuse", ROLE_DIALOG);
	}
	for (i = 0; i < n; i++)
		free(v[i]);
}

const struct panel hostkey_panel = {
	.key = hostkey_key, .draw = hostkey_draw,
};

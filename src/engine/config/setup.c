#include "engine/config/setup.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/config/config.h"
#include "engine/config/storage.h"
#include "engine/slurm/slurm.h"
#include "ssh/sshconfig.h"
#include "util/xmalloc.h"

static const struct {
	const char	*label;
	const char	*option;
} fields[SF_COUNT] = {
	[SF_HOSTS] = { "login hosts", "hosts" },
	[SF_NAME] = { "cluster name", "name" },
	[SF_USER] = { "user", "user" },
	[SF_KEY] = { "private key", "key" },
	[SF_RESULTS] = { "results root", "results-root" },
	[SF_PARTITIONS] = { "GPU partitions", "partitions" },
	[SF_ACCOUNT] = { "account", "account" },
};

void setup_draft_init(struct setup_draft *d)
{
	int f;

	for (f = 0; f < SF_COUNT; f++)
		d->value[f] = xstrdup("");
}

void setup_draft_free(struct setup_draft *d)
{
	int f;

	for (f = 0; f < SF_COUNT; f++)
		free(d->value[f]);
	memset(d, 0, sizeof(*d));
}

void setup_set(struct setup_draft *d, enum setup_field f, const char *value)
{
	const char *b = value, *e;

	/* Blanks around a pasted value are never meant. */
	while (*b == ' ' || *b == '\t')
		b++;
	e = b + strlen(b);
	while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		e--;
	free(d->value[f]);
	d->value[f] = xasprintf("%.*s", (int)(e - b), b);
}

const char *setup_label(enum setup_field f)
{
	return fields[f].label;
}

const char *setup_option(enum setup_field f)
{
	return fields[f].option;
}

/* The first host of the list, without user@ and :port ("[::1]" kept). */
static char *first_host(const char *hosts)
{
	size_t len = strcspn(hosts, ",");
	char *h = xasprintf("%.*s", (int)len, hosts), *at = strchr(h, '@'), *colon, *out;

	out = xstrdup(at != NULL ? at + 1 : h);
	colon = out[0] == '[' ? strchr(out, ']') : strchr(out, ':');
	if (colon != NULL && out[0] != '[')
		*colon = '\0';
	else if (colon != NULL)
		colon[1] = '\0';
	free(h);
	return out;
}

char *setup_default_name(const struct setup_draft *d)
{
	char *h = first_host(d->value[SF_HOSTS]), *p;

	if (h[0] == '[')
		return (free(h), xstrdup("cluster"));
	h[strcspn(h, ".")] = '\0';
	for (p = h; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			*p = '_';
	return h;
}

char *setup_hint(const struct setup_draft *d, enum setup_field f)
{
	char *host, *name = NULL, *user = NULL, *out;
	int port = 22;

	switch (f) {
	case SF_HOSTS:
		if (d->value[SF_HOSTS][0] == '\0')
			return xstrdup("the login nodes you ssh to, tried in order: host, host:port or "
			    "user@host, comma-separated; a Host of ~/.ssh/config is taken as ssh "
			    "takes it");
		host = first_host(d->value[SF_HOSTS]);
		if (sshcfg_resolve(NULL, host, &name, &port, &user) == 0 && strcmp(name, host) != 0)
			out = xasprintf("~/.ssh/config: %s is %s, port %d%s%s", host, name, port,
			    user ? ", user " : "", user ? user : "");
		else
			out = xasprintf("connects to %s, port %d, as ssh would", host, port);
		free(host), free(name), free(user);
		return out;
	case SF_NAME:
		name = setup_default_name(d);
		out = xasprintf("what taotop calls this cluster (--cluster NAME); empty: '%s'",
		    name[0] ? name : "cluster");
		free(name);
		return out;
	case SF_USER:
		if (d->value[SF_HOSTS][0] == '\0')
			return xstrdup("your user on the cluster; empty: as ssh takes it");
		host = first_host(d->value[SF_HOSTS]);
		sshcfg_resolve(NULL, host, &name, &port, &user);
		out = user != NULL ? xasprintf("your user on the cluster; empty: %s, as ssh takes it",
		    user) : xstrdup("your user on the cluster; empty: your local user, as ssh takes it");
		free(host), free(name), free(user);
		return out;
	case SF_KEY:
		return xstrdup("the private key file; empty: your agent, ~/.ssh/config's "
		    "IdentityFile, then ssh's usual keys");
	case SF_RESULTS:
		return xstrdup("the cluster's shared storage for job folders, written "
		    "lustre:///path; needed to submit, not to watch");
	case SF_PARTITIONS:
		return xstrdup("GPU partitions, comma-separated: a job is given them all, SLURM "
		    "starts it on the first that can run it; empty: "
		    "polar,polar3,polar4,grizzly");
	case SF_ACCOUNT:
		return xstrdup("#SBATCH --account, if your site charges one; empty: none");
	case SF_COUNT:
		break;
	}
	return xstrdup("");
}

/* Characters that may stand in a host list: names, IPv6 brackets, ports,
 * user@ and the commas between. */
static int host_list_ok(const char *s)
{
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr("-_.:@[],", *s) == NULL)
			return 0;
	return 1;
}

/* Each comma-separated SLURM name of a list. */
static char *slurm_names_problem(const char *field, const char *list)
{
	char *copy = xstrdup(list), *save = NULL, *w, *err = NULL;

	for (w = strtok_r(copy, ",", &save); w != NULL && err == NULL; w = strtok_r(NULL, ",", &save))
		slurm_name_check(field, w, "the setup", &err);
	free(copy);
	return err;
}

char *setup_problem(const struct setup_draft *d, enum setup_field f,
    const struct config *existing)
{
	const char *v = d->value[f];
	char *path, *err = NULL, *name;
	size_t i;

	switch (f) {
	case SF_HOSTS:
		if (v[0] == '\0')
			return xstrdup("login hosts: give at least one (host, host:port or user@host)");
		if (!host_list_ok(v) || strstr(v, ",,") != NULL || v[0] == ',' ||
		    v[strlen(v) - 1] == ',')
			return xasprintf("login hosts '%s': write host names, host:port or user@host, "
			    "separated by commas, without spaces", v);
		return NULL;
	case SF_NAME:
		name = v[0] != '\0' ? xstrdup(v) : setup_default_name(d);
		if (name[0] != '\0' && !config_name_ok(name)) {
			err = xasprintf("cluster name '%s': " CONFIG_NAME_RULE, name);
		} else if (existing != NULL) {
			for (i = 0; i < existing->n && err == NULL; i++)
				if (strcmp(existing->clusters[i].name, name) == 0)
					err = xasprintf("cluster name '%s' is configured already: "
					    "choose another", name);
		}
		free(name);
		return err;
	case SF_USER:
		if (v[0] != '\0' && !slurm_name_ok(v))
			return xasprintf("user '%s': a user name has letters, digits, - _ and .", v);
		return NULL;
	case SF_KEY:
		if (v[0] == '\0')
			return NULL;
		path = v[0] == '~' && v[1] == '/' && getenv("HOME") != NULL
		    ? xasprintf("%s%s", getenv("HOME"), v + 1) : xstrdup(v);
		if (access(path, R_OK) != 0)
			err = xasprintf("private key %s: %s", v, strerror(errno));
		free(path);
		return err;
	case SF_RESULTS:
		if (v[0] == '\0')
			return NULL;
		path = storage_path("results root", v, &err);
		free(path);
		return err;
	case SF_PARTITIONS:
		return v[0] != '\0' ? slurm_names_problem("GPU partitions", v) : NULL;
	case SF_ACCOUNT:
		if (v[0] != '\0')
			slurm_name_check("account", v, "the setup", &err);
		return err;
	case SF_COUNT:
		break;
	}
	return NULL;
}

int setup_first_problem(const struct setup_draft *d, const struct config *existing, char **msg)
{
	int f;

	for (f = 0; f < SF_COUNT; f++)
		if ((*msg = setup_problem(d, (enum setup_field)f, existing)) != NULL)
			return f;
	return -1;
}

static char *or_null(const char *v)
{
	return v[0] != '\0' ? xstrdup(v) : NULL;
}

void setup_cluster(const struct setup_draft *d, struct cluster_cfg *out)
{
	const char *home = getenv("HOME"), *k = d->value[SF_KEY];

	memset(out, 0, sizeof(*out));
	out->name = d->value[SF_NAME][0] ? xstrdup(d->value[SF_NAME]) : setup_default_name(d);
	out->hosts = xstrdup(d->value[SF_HOSTS]);
	out->user = or_null(d->value[SF_USER]);
	out->key_path = k[0] == '~' && k[1] == '/' && home != NULL ? xasprintf("%s%s", home, k + 1)
	    : or_null(k);
	out->results_root = or_null(d->value[SF_RESULTS]);
	out->partitions = or_null(d->value[SF_PARTITIONS]);
	out->account = or_null(d->value[SF_ACCOUNT]);
	out->retry_budget = -1;
	/* The environment's known_hosts, as every connection takes it. */
	if (getenv("TAOTOP_KNOWN_HOSTS") != NULL && getenv("TAOTOP_KNOWN_HOSTS")[0] != '\0')
		out->known_hosts = xstrdup(getenv("TAOTOP_KNOWN_HOSTS"));
	config_cluster_defaults(out);
}

int setup_write(const struct setup_draft *d, char **name, char **err)
{
	struct cluster_cfg c;
	int rc;

	/* As typed (a key stays ~/...): the file is the user's to read. */
	memset(&c, 0, sizeof(c));
	c.name = d->value[SF_NAME][0] ? xstrdup(d->value[SF_NAME]) : setup_default_name(d);
	c.hosts = xstrdup(d->value[SF_HOSTS]);
	c.user = or_null(d->value[SF_USER]);
	c.key_path = or_null(d->value[SF_KEY]);
	c.results_root = or_null(d->value[SF_RESULTS]);
	c.partitions = or_null(d->value[SF_PARTITIONS]);
	c.account = or_null(d->value[SF_ACCOUNT]);
	rc = config_add_cluster(&c, err);
	*name = c.name;
	c.name = NULL;
	config_cluster_free(&c);
	return rc;
}

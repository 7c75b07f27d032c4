/*
 * A stand-in for Pyxis, the SPANK plugin that runs srun tasks in Enroot
 * containers. Debian packages neither, so the test cluster loads this instead.
 *
 * It behaves like Pyxis on the points taotop relies on:
 *  - srun accepts --container-image, --container-mounts, --container-workdir
 *    (and --container-name, accepted and ignored);
 *  - an image that is not an existing squashfs file (first four bytes "hsqs")
 *    fails srun at once, in the local context, with rc 255. Registry URIs
 *    would make real Pyxis pull inside the allocation; the stand-in has no
 *    registry and refuses them, which is also the outcome taotop wants;
 *  - a mount whose source does not exist fails the task where Pyxis creates
 *    the container (task_init_privileged), so the job ends FAILED 1:0;
 *  - --container-workdir is the task's working directory.
 * Tasks run on the host: there is no container filesystem, so mounts must be
 * identity mounts (SRC:SRC) to mean the same thing as they would in Pyxis.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(container_stub, 1);

static char *image;
static char *mounts;
static char *workdir;

static int opt_image(int val, const char *arg, int remote);
static int opt_mounts(int val, const char *arg, int remote);
static int opt_workdir(int val, const char *arg, int remote);
static int opt_ignored(int val, const char *arg, int remote);

struct spank_option spank_options[] = {
	{ "container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
	  "[stand-in] squashfs image to run the task in", 1, 0, opt_image },
	{ "container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]",
	  "[stand-in] bind mounts into the container", 1, 0, opt_mounts },
	{ "container-workdir", "PATH",
	  "[stand-in] working directory inside the container", 1, 0, opt_workdir },
	{ "container-name", "NAME",
	  "[stand-in] accepted and ignored", 1, 0, opt_ignored },
	SPANK_OPTIONS_TABLE_END
};

static int set_opt(char **slot, const char *arg)
{
	free(*slot);
	*slot = arg ? strdup(arg) : NULL;
	return *slot ? 0 : -1;
}

/* Checked where srun runs, so a bad image fails srun at once (rc 255). */
static int check_image(const char *path)
{
	char magic[4];
	FILE *f;

	if (path[0] != '/' && path[0] != '.') {
		slurm_error("pyxis: stand-in cannot pull registry image %s: "
		    "convert it with enroot import first", path);
		return -1;
	}
	f = fopen(path, "rb");
	if (f == NULL) {
		slurm_error("pyxis: failed to open image %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "hsqs", 4) != 0) {
		fclose(f);
		slurm_error("pyxis: %s is not a squashfs image", path);
		return -1;
	}
	fclose(f);
	return 0;
}

static int opt_image(int val, const char *arg, int remote)
{
	(void)val;
	if (arg == NULL || *arg == '\0')
		return -1;
	if (!remote && check_image(arg) != 0)
		return -1;
	return set_opt(&image, arg);
}

static int opt_mounts(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	return set_opt(&mounts, arg);
}

static int opt_workdir(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	return set_opt(&workdir, arg);
}

static int opt_ignored(int val, const char *arg, int remote)
{
	(void)val;
	(void)arg;
	(void)remote;
	return 0;
}

/* Each SRC of SRC:DST[:FLAGS],... must exist, as Pyxis's bind mount needs. */
static int check_mounts(const char *list)
{
	char *copy = strdup(list), *save = NULL, *item;
	struct stat st;
	int rc = 0;

	if (copy == NULL)
		return -1;
	for (item = strtok_r(copy, ",", &save); item != NULL;
	    item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		if (colon != NULL)
			*colon = '\0';
		if (stat(item, &st) != 0) {
			slurm_error("pyxis: mount source %s: %s", item,
			    strerror(errno));
			rc = -1;
			break;
		}
	}
	free(copy);
	return rc;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (image == NULL)
		return 0;
	if (mounts != NULL && check_mounts(mounts) != 0)
		return -1;
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (image == NULL)
		return 0;
	spank_setenv(sp, "PYXIS_STUB_IMAGE", image, 1);
	if (workdir != NULL && chdir(workdir) != 0) {
		slurm_error("pyxis: container-workdir %s: %s", workdir,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	free(image);
	free(mounts);
	free(workdir);
	image = mounts = workdir = NULL;
	return 0;
}

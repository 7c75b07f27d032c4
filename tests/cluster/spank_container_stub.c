/*
 * A stand-in for Pyxis, the SPANK plugin that runs srun tasks in Enroot
 * containers. Debian packages neither, so the test cluster loads this instead
 * (plugstack.conf: `required spank_container_stub.so cache=DIR`).
 *
 * It behaves like Pyxis on the points taotop relies on:
 *  - srun accepts --container-image, --container-mounts, --container-workdir,
 *    --container-env, --container-name (accepted, ignored),
 *    --container-mount-home / --no-container-mount-home;
 *  - --container-mounts is parsed as Pyxis's args.c parses it, where the
 *    option is given (srun, sbatch): SRC[:DST[:FLAGS]], FLAGS joined by
 *    "+" ("ro+rprivate"), a source "." or "/"-led (or tmpfs, umount), a
 *    target "." or "/"-led, else Pyxis's own error lines and the option
 *    refused;
 *  - an image that is not an existing squashfs file fails the step on the
 *    node, where Pyxis makes the container (slurmstepd), with Pyxis's
 *    "failed to create container filesystem for image" and the enroot log
 *    lines it prints (enroot's runtime.sh words). Registry URIs would make
 *    real Pyxis pull inside the allocation; the stand-in has no registry
 *    and fails them as a failed import, which is also the outcome taotop
 *    wants;
 *  - the task runs inside the image: its own mount namespace, the image's
 *    root file system (extracted once per image file, as `enroot create`
 *    extracts it, with a private writable layer per task on top), /dev,
 *    /proc, /sys and the host's /etc/hosts and /etc/resolv.conf, a private
 *    /tmp, each --container-mounts SRC:DST[:ro] bound in, and nothing else
 *    of the host;
 *  - a mount whose absolute source does not exist fails the task where
 *    Pyxis creates the container (task_init_privileged), with its
 *    "--container-mounts: source path does not exist", so the job ends
 *    FAILED 1:0;
 *  - the environment: the job's passes in, but a variable the image defines
 *    (its ENV, which Enroot keeps in /etc/environment) takes the image's
 *    value, unless --container-env names it and the job has it; the job's
 *    LANG, LANGUAGE and LC_ALL are dropped unless named (Pyxis 0.24's
 *    pyxis_slurmstepd.c, spank_import_container_env);
 *  - the working directory: --container-workdir, else the image's WORKDIR
 *    (Enroot's /etc/rc `cd`s there), else /.
 * It does not: remap users or namespaces other than mounts (the task keeps
 * its uid, pid and network), run the image's entrypoint or hooks, keep named
 * containers (--container-name), pull, or limit devices.
 */
#define _GNU_SOURCE	/* unshare, CLONE_NEWNS */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/spank.h>

SPANK_PLUGIN(container_stub, 1);

static char *image;
static char *mounts;
static char *workdir;
static char *env_names;
static int mount_home;
static char *cache_dir;		/* plugstack argument cache=DIR */
static char image_workdir[4096];

static int opt_image(int val, const char *arg, int remote);
static int opt_mounts(int val, const char *arg, int remote);
static int opt_workdir(int val, const char *arg, int remote);
static int opt_env(int val, const char *arg, int remote);
static int opt_home(int val, const char *arg, int remote);
static int opt_ignored(int val, const char *arg, int remote);

struct spank_option spank_options[] = {
	{ "container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
	  "[stand-in] squashfs image to run the task in", 1, 0, opt_image },
	{ "container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]",
	  "[stand-in] bind mounts into the container", 1, 0, opt_mounts },
	{ "container-workdir", "PATH",
	  "[stand-in] working directory inside the container", 1, 0, opt_workdir },
	{ "container-env", "NAME[,NAME...]",
	  "[stand-in] variables whose job value wins over the image's", 1, 0, opt_env },
	{ "container-mount-home", NULL,
	  "[stand-in] bind the user's home into the container", 0, 1, opt_home },
	{ "no-container-mount-home", NULL,
	  "[stand-in] do not bind the user's home (the default)", 0, 0, opt_home },
	{ "container-name", "NAME",
	  "[stand-in] accepted and ignored", 1, 0, opt_ignored },
	SPANK_OPTIONS_TABLE_END
};

/* snprintf for paths: a path too long for its buffer is an error, logged
 * (the caller's later open or mount then fails on the empty path). */
static int pathf(char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= n) {
		slurm_error("pyxis: path too long: %.64s...", buf);
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

static int set_opt(char **slot, const char *arg)
{
	free(*slot);
	*slot = arg ? strdup(arg) : NULL;
	return *slot ? 0 : -1;
}

/* On the node, where Pyxis makes the container (pyxis_slurmstepd.c): a
 * registry image is imported (here: a failed import, the stand-in has no
 * registry), a path is `enroot create`d, which refuses a missing file or
 * one that is not a squashfs (enroot's runtime.sh words); Pyxis then says
 * which and prints enroot's log, each line after "pyxis:     ". */
static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int check_image(const char *path)
{
	char magic[4];
	FILE *f;
	int ok;

	if (path[0] != '/' && path[0] != '.') {
		slurm_error("pyxis: failed to import docker image: %s", path);
		slurm_error("pyxis: printing enroot log file:");
		slurm_error("pyxis:     [ERROR] the rig's stand-in pulls nothing: convert the image "
		    "with enroot import first");
		return -1;
	}
	f = fopen(path, "rb");
	ok = f != NULL && is_file(path) && fread(magic, 1, 4, f) == 4 &&
	    memcmp(magic, "hsqs", 4) == 0;
	if (f != NULL)
		fclose(f);
	if (!ok) {
		slurm_error("pyxis: failed to create container filesystem for image: %s", path);
		slurm_error("pyxis: printing enroot log file:");
		if (!is_file(path))
			slurm_error("pyxis:     [ERROR] No such file or directory: %s", path);
		else
			slurm_error("pyxis:     [ERROR] Invalid image format: %s", path);
		return -1;
	}
	return 0;
}

static int opt_image(int val, const char *arg, int remote)
{
	char *abs;

	(void)val;
	if (arg == NULL || *arg == '\0')
		return -1;
	/* A relative path means the same file on the node: srun's cwd. */
	if (arg[0] == '.' && !remote && (abs = realpath(arg, NULL)) != NULL) {
		int rc = set_opt(&image, abs);
		free(abs);
		return rc;
	}
	return set_opt(&image, arg);
}

/* One SRC[:DST[:FLAGS]] entry, as Pyxis's parse_mount_option and
 * add_mount judge it (args.c), with their error lines. */
static int mount_entry_ok(const char *entry)
{
	char *dup = strdup(entry), *rest, *src, *dst;
	int ok = 0;

	if (dup == NULL)
		return 0;
	rest = dup;
	src = strsep(&rest, ":");
	dst = src;
	if (src == NULL || *src == '\0')
		goto invalid;
	if (rest != NULL) {
		dst = strsep(&rest, ":");
		if (dst == NULL || *dst == '\0')
			goto invalid;
	}
	if (strspn(src, "./") == 0 && strcmp(src, "tmpfs") != 0 && strcmp(src, "umount") != 0)
		slurm_error("pyxis: mount source must be a relative path, an absolute path, "
		    "\"tmpfs\" or \"umount\"");
	else if (strspn(dst, "./") == 0)
		slurm_error("pyxis: mount target must be a relative path or an absolute path");
	else
		ok = 1;
	if (!ok)
		slurm_error("pyxis: could not add mount entry: %s:%s", src, dst);
	free(dup);
	return ok;
invalid:
	slurm_error("pyxis: --container-mounts: invalid format: %s", entry);
	free(dup);
	return 0;
}

static int opt_mounts(int val, const char *arg, int remote)
{
	char *copy, *save = NULL, *item;
	int ok = 1;

	(void)val;
	(void)remote;
	if (arg == NULL || *arg == '\0') {
		slurm_error("pyxis: --container-mounts: argument required");
		return -1;
	}
	if ((copy = strdup(arg)) == NULL)
		return -1;
	/* strsep, as args.c splits the list: an empty entry ("a:/a,,b:/b",
	 * a trailing comma) is an entry, and an invalid one. */
	save = copy;
	while (ok && (item = strsep(&save, ",")) != NULL)
		ok = mount_entry_ok(item);
	free(copy);
	return ok ? set_opt(&mounts, arg) : -1;
}

static int opt_workdir(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	return set_opt(&workdir, arg);
}

static int opt_env(int val, const char *arg, int remote)
{
	(void)val;
	(void)remote;
	return set_opt(&env_names, arg);
}

static int opt_home(int val, const char *arg, int remote)
{
	(void)arg;
	(void)remote;
	mount_home = val;
	return 0;
}

static int opt_ignored(int val, const char *arg, int remote)
{
	(void)val;
	(void)arg;
	(void)remote;
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	int i;

	(void)sp;
	for (i = 0; i < ac; i++)
		if (strncmp(av[i], "cache=", 6) == 0)
			set_opt(&cache_dir, av[i] + 6);
	return 0;
}

/* Run argv, its output to the slurmd log on failure; 0 when it exits 0. */
static int run(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -1;
		buf[i] = path[i];
	}
	return 0;
}

/*
 * The image's root file system, extracted once per image content (a hash of
 * the file's bytes names the folder: the rig's images differ only in a small
 * file, and tests import many copies of few images) under the cache; a lock
 * makes concurrent tasks wait for the first to finish. Enroot likewise
 * unpacks the squashfs (`enroot create`) before it starts a container.
 */
static int image_root(const char *img, char *out, size_t outlen)
{
	uint64_t h = 1469598103934665603ULL;
	unsigned char chunk[65536];
	char lock[4096], tmp[4096], done[4096];
	long long size = 0;
	size_t n, i;
	int fd, rc = -1;
	FILE *f;

	if (cache_dir == NULL) {
		slurm_error("pyxis: stand-in has no cache= folder in plugstack.conf");
		return -1;
	}
	if ((f = fopen(img, "rb")) == NULL) {
		slurm_error("pyxis: image %s: %s", img, strerror(errno));
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		for (i = 0; i < n; i++)
			h = (h ^ chunk[i]) * 1099511628211ULL;
		size += (long long)n;
	}
	fclose(f);
	pathf(out, outlen, "%s/%016llx-%lld", cache_dir, (unsigned long long)h, size);
	pathf(lock, sizeof(lock), "%s.lock", out);
	pathf(tmp, sizeof(tmp), "%s.part", out);
	pathf(done, sizeof(done), "%s.source", out);
	if (mkdir_p(cache_dir, 0755) != 0 ||
	    (fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		slurm_error("pyxis: cache %s: %s", cache_dir, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
		;
	if (access(done, F_OK) == 0) {
		rc = 0;
	} else {
		char *rm[] = { "/bin/rm", "-rf", tmp, NULL };
		char *unsq[] = { "/usr/bin/unsquashfs", "-q", "-n", "-d", tmp,
		    (char *)img, NULL };
		run(rm);
		if (run(unsq) != 0) {
			slurm_error("pyxis: failed to extract %s (unsquashfs)", img);
		} else if (rename(tmp, out) != 0) {
			slurm_error("pyxis: %s: %s", out, strerror(errno));
		} else if ((f = fopen(done, "w")) != NULL) {
			/* Which file it came from first, for whoever looks. */
			fprintf(f, "%s\n", img);
			fclose(f);
			rc = 0;
		}
	}
	close(fd);
	return rc;
}

static int bind_path(const char *src, const char *dst, int ro)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0) {
		slurm_error("pyxis: mount %s on %s: %s", src, dst, strerror(errno));
		return -1;
	}
	if (ro && mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) != 0) {
		slurm_error("pyxis: read-only %s: %s", dst, strerror(errno));
		return -1;
	}
	return 0;
}

/* Bind SRC at DST inside root, making DST (a folder, or a file for a file). */
static int bind_in(const char *root, const char *src, const char *dst, int ro)
{
	char target[4096];
	struct stat st;

	if (dst[0] != '/' || strstr(dst, "/../") != NULL) {
		slurm_error("pyxis: mount destination %s is not an absolute path", dst);
		return -1;
	}
	if (stat(src, &st) != 0) {
		slurm_error("pyxis: mount source %s: %s", src, strerror(errno));
		return -1;
	}
	pathf(target, sizeof(target), "%s%s", root, dst);
	if (S_ISDIR(st.st_mode)) {
		if (mkdir_p(target, 0755) != 0)
			goto fail;
	} else {
		char *slash = strrchr(target, '/');
		int fd;
		*slash = '\0';
		if (mkdir_p(target, 0755) != 0)
			goto fail;
		*slash = '/';
		if ((fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			goto fail;
		close(fd);
	}
	return bind_path(src, target, ro);
fail:
	slurm_error("pyxis: mount destination %s: %s", dst, strerror(errno));
	return -1;
}

/* Whether FLAGS ("ro+rprivate": Pyxis joins them with "+" and hands them
 * to enroot with ",") make the mount read-only: the last of ro and rw. */
static int read_only(const char *flags)
{
	const char *p = flags;
	int ro = 0;

	while (*p != '\0') {
		size_t n = strcspn(p, "+,");
		if (n == 2 && strncmp(p, "ro", 2) == 0)
			ro = 1;
		else if (n == 2 && strncmp(p, "rw", 2) == 0)
			ro = 0;
		p += n + (p[n] != '\0');
	}
	return ro;
}

/* The --container-mounts list: SRC[:DST[:FLAGS]],... (FLAGS: ro or rw, and
 * mount(8) words Pyxis passes on to enroot, accepted and not applied). */
static int bind_mounts(const char *root, const char *list)
{
	char *copy = strdup(list), *save = NULL, *item;
	int rc = 0;

	if (copy == NULL)
		return -1;
	for (item = strtok_r(copy, ",", &save); item != NULL && rc == 0;
	    item = strtok_r(NULL, ",", &save)) {
		char *dst = strchr(item, ':'), *flags = NULL;
		if (dst != NULL) {
			*dst++ = '\0';
			if ((flags = strchr(dst, ':')) != NULL)
				*flags++ = '\0';
		}
		if (dst == NULL || *dst == '\0')
			dst = item;
		rc = bind_in(root, item, dst, flags != NULL && read_only(flags));
	}
	free(copy);
	return rc;
}

/* Each source must exist, checked before anything is made. */
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
		/* Pyxis's validate_mount_sources: absolute sources only. */
		if (item[0] == '/' && stat(item, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
			slurm_error("pyxis: --container-mounts: source path does not exist: %s", item);
			rc = -1;
			break;
		}
	}
	free(copy);
	return rc;
}

static int named(const char *name, size_t len, const char *list)
{
	const char *p = list;

	while (p != NULL && *p != '\0') {
		size_t l = strcspn(p, ",");
		if (l == len && strncmp(p, name, len) == 0)
			return 1;
		p += l;
		p += *p == ',';
	}
	return 0;
}

/* The image's ENV (NAME=VALUE lines of /etc/environment, as Enroot writes
 * them) over the job's environment, except the names --container-env lists,
 * which keep the job's value when the job has one. This is Pyxis's
 * spank_import_container_env (pyxis_slurmstepd.c): every variable of the
 * container's environment is set with overwrite, but without it for the
 * --container-env names; and first the job's LANG, LANGUAGE and LC_ALL are
 * removed unless --container-env names them (its container_deny_env). */
static void apply_image_env(spank_t sp, const char *root)
{
	static const char *const deny[] = { "LANG", "LANGUAGE", "LC_ALL", NULL };
	char path[4096], line[8192], cur[2];
	FILE *f;

	for (int i = 0; deny[i] != NULL; i++)
		if (!named(deny[i], strlen(deny[i]), env_names))
			spank_unsetenv(sp, deny[i]);
	pathf(path, sizeof(path), "%s/etc/environment", root);
	if ((f = fopen(path, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *eq, *val;
		size_t n = strcspn(line, "\n");
		line[n] = '\0';
		if (line[0] == '#' || (eq = strchr(line, '=')) == NULL || eq == line)
			continue;
		*eq = '\0';
		val = eq + 1;
		if (n > 0 && val[0] == '"' && val[strlen(val) - 1] == '"' && strlen(val) >= 2) {
			val[strlen(val) - 1] = '\0';
			val++;
		}
		if (named(line, strlen(line), env_names) &&
		    spank_getenv(sp, line, cur, sizeof(cur)) != ESPANK_ENV_NOEXIST)
			continue;
		spank_setenv(sp, line, val, 1);
	}
	fclose(f);
}

/* The image's WORKDIR: the folder Enroot's /etc/rc changes to. */
static void read_workdir(const char *root)
{
	char path[4096], line[4096];
	FILE *f;

	image_workdir[0] = '\0';
	pathf(path, sizeof(path), "%s/etc/rc", root);
	if ((f = fopen(path, "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *q;
		if (strncmp(line, "cd \"", 4) != 0 || (q = strchr(line + 4, '"')) == NULL)
			continue;
		*q = '\0';
		snprintf(image_workdir, sizeof(image_workdir), "%s", line + 4);
		break;
	}
	fclose(f);
}

/* Enroot adds the user to the image's passwd and group, so id and shells
 * know who runs. */
static void add_user(spank_t sp, const char *root)
{
	uid_t uid;
	gid_t gid;
	struct passwd *pw;
	char path[4096];
	FILE *f;

	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS ||
	    (pw = getpwuid(uid)) == NULL)
		return;
	pathf(path, sizeof(path), "%s/etc/passwd", root);
	if ((f = fopen(path, "a")) != NULL) {
		fprintf(f, "%s:x:%u:%u::%s:/bin/sh\n", pw->pw_name, (unsigned)uid,
		    (unsigned)gid, pw->pw_dir);
		fclose(f);
	}
	pathf(path, sizeof(path), "%s/etc/group", root);
	if ((f = fopen(path, "a")) != NULL) {
		fprintf(f, "%s:x:%u:\n", pw->pw_name, (unsigned)gid);
		fclose(f);
	}
}

/* Make the container and enter it: runs as root in the task's process,
 * before slurmstepd drops to the user and execs the command. */
static int enter_container(spank_t sp)
{
	char lower[4096], stage[4096], root[4096], upper[4096], work[4096],
	    opts[16384], path[4096];
	uid_t uid;
	struct passwd *pw;

	if (image_root(image, lower, sizeof(lower)) != 0)
		return -1;
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		slurm_error("pyxis: mount namespace: %s", strerror(errno));
		return -1;
	}
	/* A private writable layer over the shared extracted root, on a tmpfs
	 * mounted in this namespace only. */
	pathf(stage, sizeof(stage), "%s/.mnt", cache_dir);
	if (mkdir_p(stage, 0700) != 0 ||
	    mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1g") != 0) {
		slurm_error("pyxis: %s: %s", stage, strerror(errno));
		return -1;
	}
	pathf(upper, sizeof(upper), "%s/upper", stage);
	pathf(work, sizeof(work), "%s/work", stage);
	pathf(root, sizeof(root), "%s/root", stage);
	pathf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mkdir(upper, 0755) != 0 || mkdir(work, 0755) != 0 || mkdir(root, 0755) != 0 ||
	    mount("overlay", root, "overlay", 0, opts) != 0) {
		slurm_error("pyxis: the container's root: %s", strerror(errno));
		return -1;
	}
	add_user(sp, root);
	/* What Enroot's default mounts give every container. */
	pathf(path, sizeof(path), "%s/proc", root);
	if (bind_in(root, "/dev", "/dev", 0) != 0 || bind_in(root, "/sys", "/sys", 0) != 0 ||
	    mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
		slurm_error("pyxis: system mounts: %s", strerror(errno));
		return -1;
	}
	pathf(path, sizeof(path), "%s/tmp", root);
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
		slurm_error("pyxis: private /tmp: %s", strerror(errno));
		return -1;
	}
	if (access("/etc/hosts", F_OK) == 0 && bind_in(root, "/etc/hosts", "/etc/hosts", 1) != 0)
		return -1;
	if (access("/etc/resolv.conf", F_OK) == 0 &&
	    bind_in(root, "/etc/resolv.conf", "/etc/resolv.conf", 1) != 0)
		return -1;
	if (mounts != NULL && bind_mounts(root, mounts) != 0)
		return -1;
	if (mount_home && spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS &&
	    (pw = getpwuid(uid)) != NULL && bind_in(root, pw->pw_dir, pw->pw_dir, 0) != 0)
		return -1;
	apply_image_env(sp, root);
	read_workdir(root);
	if (image_workdir[0] == '/') {
		/* Enroot's rc makes the WORKDIR when the image lacks it. */
		pathf(path, sizeof(path), "%s%s", root, image_workdir);
		mkdir_p(path, 0755);
	}
	/* Only the container is left: the old root is detached. */
	if (chdir(root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
	    umount2(".", MNT_DETACH) != 0 || chdir("/") != 0) {
		slurm_error("pyxis: pivot_root into %s: %s", root, strerror(errno));
		return -1;
	}
	return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (image == NULL)
		return 0;
	if (check_image(image) != 0)
		return -1;
	if (mounts != NULL && check_mounts(mounts) != 0)
		return -1;
	if (enter_container(sp) != 0)
		return -1;
	spank_setenv(sp, "PYXIS_STUB_IMAGE", image, 1);
	return 0;
}

/* As the user, inside the container: the working directory. */
int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	const char *dir;

	(void)sp;
	(void)ac;
	(void)av;
	if (image == NULL)
		return 0;
	dir = workdir != NULL ? workdir : image_workdir[0] ? image_workdir : "/";
	if (chdir(dir) != 0) {
		slurm_error("pyxis: container-workdir %s: %s", dir, strerror(errno));
		return -1;
	}
	spank_setenv(sp, "PWD", dir, 1);
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
	free(env_names);
	image = mounts = workdir = env_names = NULL;
	return 0;
}

#include "engine/config/storage.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/xmalloc.h"

static int path_ok(const char *p)
{
	/* Absolute, no NUL (C strings), no newline: it becomes a shell word
	 * and a #SBATCH value. */
	return p[0] == '/' && strchr(p, '\n') == NULL && strstr(p, "/../") == NULL;
}

char *storage_path(const char *field, const char *uri, char **err)
{
	const char *p = NULL;

	if (strncmp(uri, "lustre://", 9) == 0)
		p = uri + 9;
	else if (strncmp(uri, "slurm://", 8) == 0)
		p = uri + 8;
	else if (uri[0] == '/') {
		/* Where the data is, taotop cannot tell from the text: say what
		 * to write for a folder on the cluster's shared storage. */
		*err = xasprintf("%s: %s is a plain path: a folder on the cluster's shared storage "
		    "is written lustre://%s (a folder only on this machine must be copied there "
		    "first)", field, uri, uri);
		return NULL;
	} else if (strncmp(uri, "file://", 7) == 0 || uri[0] == '.' || uri[0] == '~') {
		*err = xasprintf("%s: %s is a path on this machine, which the cluster cannot read: "
		    "stage it on the cluster's shared storage and write lustre:///path", field, uri);
		return NULL;
	} else {
		*err = xasprintf("%s: %s is not a shared-storage URI: write lustre:///absolute/path",
		    field, uri);
		return NULL;
	}
	if (!path_ok(p)) {
		*err = xasprintf("%s: %s must name an absolute path (three slashes: lustre:///data/x)",
		    field, uri);
		return NULL;
	}
	return xstrdup(p);
}

static int ref_char(char c)
{
	return isalnum((unsigned char)c) || strchr("._-/:@", c) != NULL;
}

void image_ref_free(struct image_ref *r)
{
	free(r->sqsh);
	free(r->docker_uri);
	memset(r, 0, sizeof(*r));
}

/* A squashfs already on shared storage, as a path or a URI. */
static int sqsh_on_storage(const char *image, struct image_ref *out, char **err)
{
	char *path = image[0] == '/' ? xstrdup(image) : storage_path("image", image, err);
	size_t n = path != NULL ? strlen(path) : 0;

	if (path == NULL)
		return -1;
	if (n < 6 || strcmp(path + n - 5, ".sqsh") != 0 || !path_ok(path)) {
		*err = xasprintf("image: %s is a path on shared storage but not a .sqsh file "
		    "(a registry image is written REGISTRY/IMAGE:TAG)", image);
		free(path);
		return -1;
	}
	out->is_sqsh = 1;
	out->sqsh = path;
	return 0;
}

/* A registry image's parts, as Enroot names them: the registry, the image
 * and its tag ("latest" when none is given). */
static void split_ref(const char *ref, char **registry, char **name, char **tag)
{
	const char *hash, *slash;
	char *colon;

	/* Pyxis form REG#IMG:TAG, or the usual REG/IMG:TAG. */
	if ((hash = strchr(ref, '#')) != NULL) {
		*registry = xstrndup(ref, (size_t)(hash - ref));
		*name = xstrdup(hash + 1);
	} else if ((slash = strchr(ref, '/')) != NULL &&
	    (memchr(ref, '.', (size_t)(slash - ref)) || memchr(ref, ':', (size_t)(slash - ref)))) {
		*registry = xstrndup(ref, (size_t)(slash - ref));
		*name = xstrdup(slash + 1);
	} else {
		*registry = xstrdup("registry-1.docker.io");
		*name = xstrdup(ref);
	}
	/* Docker Hub as Enroot names it: one host, and official images under
	 * library/ (ubuntu:22.04 is registry-1.docker.io#library/ubuntu). */
	if (strcmp(*registry, "docker.io") == 0 || strcmp(*registry, "index.docker.io") == 0) {
		free(*registry);
		*registry = xstrdup("registry-1.docker.io");
	}
	if (strcmp(*registry, "registry-1.docker.io") == 0 && strchr(*name, '/') == NULL) {
		char *full = xasprintf("library/%s", *name);
		free(*name);
		*name = full;
	}
	colon = strrchr(*name, ':');
	if (colon != NULL && strchr(colon, '/') == NULL) {
		*tag = xstrdup(colon + 1);
		*colon = '\0';
	} else {
		*tag = xstrdup("latest");
	}
}

/* The parts are a name a registry takes. */
static int ref_parts_ok(const char *image, const char *registry, const char *name,
    const char *tag, char **err)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++) {
		if (isupper((unsigned char)name[i])) {
			/* Registries (and Enroot) take lower-case repository names only. */
			*err = xasprintf("image: '%s': an image name is lower case ('%s' has an "
			    "upper-case letter; tags may have them)", image, name);
			return -1;
		}
	}
	if (registry[0] == '\0' || name[0] == '\0' || tag[0] == '\0') {
		*err = xasprintf("image: '%s' is not REGISTRY/IMAGE:TAG, REGISTRY#IMAGE:TAG, "
		    "docker://REGISTRY#IMAGE:TAG or a /path/to/image.sqsh", image);
		return -1;
	}
	return 0;
}

int image_parse(const char *image, const char *cache_dir, struct image_ref *out, char **err)
{
	const char *ref = image;
	char *registry = NULL, *name = NULL, *tag = NULL;
	struct buf file;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (image[0] == '/' || strncmp(image, "lustre://", 9) == 0 ||
	    strncmp(image, "slurm://", 8) == 0)
		return sqsh_on_storage(image, out, err);
	if (strncmp(ref, "docker://", 9) == 0)
		ref += 9;
	for (i = 0; ref[i] != '\0'; i++) {
		if (!ref_char(ref[i]) && ref[i] != '#') {
			*err = xasprintf("image: '%s' has a character no image name has", image);
			return -1;
		}
	}
	split_ref(ref, &registry, &name, &tag);
	if (ref_parts_ok(image, registry, name, tag, err) != 0) {
		free(registry), free(name), free(tag);
		return -1;
	}
	out->docker_uri = xasprintf("docker://%s#%s:%s", registry, name, tag);
	out->latest = strcmp(tag, "latest") == 0;
	/* Cached by name: one file per registry/image:tag. */
	buf_init(&file);
	buf_addf(&file, "%s/%s+%s+%s.sqsh", cache_dir, registry, name, tag);
	for (i = strlen(cache_dir) + 1; i < file.len; i++)
		if (file.data[i] == '/' || file.data[i] == ':')
			file.data[i] = '+';
	out->sqsh = buf_detach(&file);
	free(registry), free(name), free(tag);
	return 0;
}

/*
 * Where things live for a job: shared storage (the seed's tier A, Lustre)
 * and container images.
 *
 * Paths: lustre:///abs/path is the form; slurm:///abs/path (microservices
 * metadata) means the same Lustre path; a local path or file:// is refused,
 * since the cluster cannot read the laptop's files.
 *
 * Images: /path/x.sqsh, registry#image:tag, docker://registry#image:tag and
 * registry/image:tag are accepted. The GPU job only ever gets a .sqsh path:
 * a registry image is converted once (enroot import) to a cached file named
 * after it under the image cache folder.
 */
#ifndef TAOTOP_ENGINE_STORAGE_H
#define TAOTOP_ENGINE_STORAGE_H

/* The absolute path on the cluster for uri, or NULL with *err saying why
 * (naming `field`). The caller frees it. */
char *storage_path(const char *field, const char *uri, char **err);

struct image_ref {
	int	 is_sqsh;	/* already a squashfs file on shared storage */
	char	*sqsh;		/* the .sqsh path the job will use */
	char	*docker_uri;	/* docker://REG#IMG:TAG to import, or NULL */
	int	 latest;	/* the tag is :latest (reconverted only on demand) */
};

/* Read an image given in any of the four forms; cache_dir is where
 * converted images live. -1 with *err for a form that is none of them. */
int image_parse(const char *image, const char *cache_dir, struct image_ref *out, char **err);
void image_ref_free(struct image_ref *r);

#endif

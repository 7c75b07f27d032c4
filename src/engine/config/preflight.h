/*
 * Can this cluster run taotop's jobs? The seed's preflight, as one remote
 * command after the connection itself proved that key-only (BatchMode) login
 * works: the SLURM tools, Pyxis (srun --help lists --container-image), Enroot,
 * the results root, the partitions, and the Enroot credentials for private
 * nvcr.io images. Each check comes back with the fix to apply; nothing is
 * installed on the cluster, except the NGC credentials when asked.
 */
#ifndef TAOTOP_ENGINE_PREFLIGHT_H
#define TAOTOP_ENGINE_PREFLIGHT_H

#include <stddef.h>

struct conn;
struct cluster_cfg;

struct preflight_check {
	char	*name;		/* "sbatch", "pyxis", ... */
	int	 ok;
	int	 warn_only;	/* a failure that does not stop submits */
	char	*fix;		/* what to do, when not ok */
};

struct preflight {
	struct preflight_check	*checks;
	size_t			 n;
	int			 all_ok;	/* every check that matters passed */
};

/* -1 with *err only when the checks could not run (connection). */
int preflight_run(struct conn *c, const struct cluster_cfg *cl, struct preflight *out,
    char **err);
void preflight_free(struct preflight *p);

/* Write ~/.config/enroot/.credentials on the cluster (mode 0600 from its
 * first byte, over SFTP) from the NGC key given, so Enroot can pull private
 * nvcr.io images. Without replace, an existing file is refused; with it,
 * the file's nvcr.io and authn.nvidia.com lines are replaced (a revoked or
 * expired key) and its other lines kept, the new file renamed over the old
 * (old or new, never half). The key is never in a command line, a message
 * or a log. */
int preflight_install_ngc(struct conn *c, const char *ngc_key, int replace, char **err);

#endif

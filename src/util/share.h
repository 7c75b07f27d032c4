/*
 * Where taotop's shipped data lives (templates, themes): $TAOTOP_SHARE, else
 * ../share/taotop beside the binary (an install), else the source tree when
 * run from build/<kind>/taotop, else the compiled-in DATADIR.
 */
#ifndef TAOTOP_UTIL_SHARE_H
#define TAOTOP_UTIL_SHARE_H

/* The folder `sub` ("templates", "themes") of the shared data; caller frees. */
char *share_dir(const char *sub);

#endif

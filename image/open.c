/* open.c: an image reference to layer directories: a root directory is used in place (the
 * overlay never writes to it); oci:, oci-archive: and docker-archive: go through the store. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/util.h"

static int open_root_dir(const char *path, struct rrt_image *img, struct rrt_error *err)
{
  char real[4096];
  struct stat st;
  if (!realpath(path, real) || stat(real, &st) < 0)
    return rrt_error_errno(err, "run: image or root directory %s", path);
  if (!S_ISDIR(st.st_mode))
    return rrt_error_msgf(err, ENOTDIR,
                          "run: %s is not a root directory (an image needs its transport: "
                          "oci:DIR, oci-archive:FILE or docker-archive:FILE)",
                          path);
  /* overlayfs takes ':' and ',' as separators in lowerdir. */
  if (strpbrk(real, ":,"))
    return rrt_error_msgf(err, EINVAL,
                          "run: %s: a root directory path with ':' or ',' cannot be "
                          "an overlay layer",
                          real);
  img->lowers = xcalloc(2, sizeof(char *));
  img->lowers[0] = xstrdup(real);
  return 0;
}

int rrt_image_open(const char *ref, const char *store, const struct rrt_pull_opts *po,
                   struct rrt_image *img, struct rrt_error *err)
{
  if (strncmp(ref, "docker://", 9) == 0)
    return rrt_image_pull(ref + 9, false, po, store, img, err) < 0
               ? rrt_error_wrap(err, "run: %s", ref)
               : 0;
  if (strncmp(ref, "oci:", 4) == 0 || strncmp(ref, "oci-archive:", 12) == 0 ||
      strncmp(ref, "docker-archive:", 15) == 0)
    return rrt_image_import(ref, store, img, err);
  /* A registry image name that is not a path (debian:12, localhost/foo:1): pulled as podman
   * would, a short name through registries.conf. */
  bool qualified;
  if (access(ref, F_OK) < 0 && errno == ENOENT && rrt_image_name_parse(ref, &qualified) &&
      qualified)
    return rrt_image_pull(ref, true, po, store, img, err) < 0 ? rrt_error_wrap(err, "run: %s", ref)
                                                              : 0;
  return open_root_dir(ref, img, err);
}

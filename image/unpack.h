/* unpack.h: a layer tar into a directory (image/ only). */
#ifndef ROOTLESSRT_IMAGE_UNPACK_H
#define ROOTLESSRT_IMAGE_UNPACK_H

#include <archive.h>
#include <stdbool.h>

#include "rootlessrt/error.h"

struct rrt_unpack {
  int rootfd;       /* the layer's directory (O_PATH) */
  const char *what; /* "layer sha256:..." for errors */
  bool privileged;  /* real root: trusted.overlay.* instead of user.overlay.* */
};

/* Every entry of a (opened on the layer's stream) into u->rootfd. */
int rrt_unpack_layer(struct archive *a, const struct rrt_unpack *u, struct rrt_error *err);

#endif

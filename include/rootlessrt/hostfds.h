/* hostfds.h: as real root with a new user namespace, what only the runtime's own credentials
 * can reach is opened by the runtime and handed to init as detached mounts (open_tree clones,
 * inherited across clone): bind sources under directories only host root may enter, and the
 * linux.devices nodes, made on the host side since mknod is never allowed in a user namespace.
 * Idmapped bind mounts too, as real root with or without a user namespace. */
#ifndef ROOTLESSRT_HOSTFDS_H
#define ROOTLESSRT_HOSTFDS_H

#include <stddef.h>

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/userns.h"

struct rrt_hostfds {
  int *mount_fds; /* per spec->mounts[i]: a detached clone of a bind source, or -1 */
  size_t n_mounts;
  int *device_fds; /* per spec->lnx.devices[i]: a detached bind of the node made, or -1 */
  size_t n_devices;
  int dev_dirfd; /* the private directory holding those nodes until init has bound them */
  char *dev_dir;
};

/* Whether the runtime opens anything for init: real root with a new user namespace, or any
 * idmapped mount (rootfs/idmap.c: only the host side may make one of a host's filesystem). */
bool rrt_hostfds_needed(const struct rrt_spec *spec, const struct rrt_userns_plan *plan);

/* Opens them (idmapped mounts with their idmapping applied: an error here fails create); relative
 * bind sources against the cwd (the bundle). dir_parent: where the private node directory is made
 * (the state root). A source that cannot be opened stays -1: init then reports the error itself.
 * The ids of each node are the config's, mapped through plan's maps to the host's. */
int rrt_hostfds_open(const struct rrt_spec *spec, const struct rrt_userns_plan *plan,
                     const char *dir_parent, struct rrt_hostfds *out, struct rrt_error *err);

/* Once init has made its mounts (or failed): closes the fds and removes the nodes and their
 * directory. Safe on a zeroed or already released struct. */
void rrt_hostfds_release(struct rrt_hostfds *h);

#endif

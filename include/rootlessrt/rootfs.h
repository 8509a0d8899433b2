/* rootfs.h: mounts, /dev, pivot_root, masked and read-only paths. */
#ifndef ROOTLESSRT_ROOTFS_H
#define ROOTLESSRT_ROOTFS_H

#include <stdbool.h>

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/* Parsed mount options (config.md "mounts"): flags for mount(2), flags that
 * need a remount (ro, nosuid, ... on a bind), propagation, and the rest joined
 * as the data string ("size=65536k,mode=755"). */
struct rrt_mount_opts {
  unsigned long flags;
  unsigned long clear_flags; /* "rw", "suid", ... cleared from a bind remount */
  unsigned long propagation; /* MS_SHARED|MS_SLAVE|MS_PRIVATE|MS_UNBINDABLE (|MS_REC) */
  bool bind, rbind;
  char *data; /* malloc'd or NULL */
};

int rrt_mount_opts_parse(const struct rrt_strv *options, struct rrt_mount_opts *out,
                         struct rrt_error *err);
void rrt_mount_opts_free(struct rrt_mount_opts *o);

struct rrt_rootfs_ctx {
  const struct rrt_spec *spec;
  const char *rootfs; /* absolute path of the container root (bundle-resolved) */
  bool userns;        /* we run in a non-initial user namespace: rootless fallbacks */
  bool nested;        /* the runtime runs in a CI job's container (userns.h): say what it binds */
  bool new_netns;     /* sysfs can be mounted only with an owned netns */
  /* The container has a namespace of this type (new or joined): no host /proc for a pid one,
   * no host cgroup tree for a cgroup one. */
  bool new_pidns;
  bool new_ipcns;
  bool new_cgroupns;
  int console_slave_fd; /* >= 0: bind to /dev/console */
  /* Real root with a user namespace (hostfds.h): per spec->mounts[i] and per
   * spec->lnx.devices[i] a detached mount the runtime opened, or -1; NULL when none. */
  const int *mount_fds;
  const int *device_fds;
  int resolv_fd; /* the same for resolv_conf, or -1 */
  const char
      *resolv_conf; /* non-NULL: bind it onto /etc/resolv.conf unless a config mount covers it */
};

/*
 * In the container's mount namespace, before pivot_root:
 * propagation of / (rslave, or rprivate by default), rbind of the rootfs onto
 * itself, the config mounts in order (destinations resolved inside the rootfs
 * with openat2 RESOLVE_IN_ROOT and mounted through the verified fd, so a
 * symlink cannot send a mount outside), rootless fallbacks (sysfs -> rbind
 * /sys, mqueue -> bind /dev/mqueue, devpts without gid= when unmapped, cgroup
 * -> cgroup2 or bind), /dev device nodes by bind mount from the host plus the
 * standard symlinks, linux.devices.
 */
int rrt_rootfs_prepare(const struct rrt_rootfs_ctx *ctx, struct rrt_error *err);

/* pivot_root into ctx->rootfs (or MS_MOVE + chroot when no_pivot). */
int rrt_rootfs_pivot(const struct rrt_rootfs_ctx *ctx, bool no_pivot, struct rrt_error *err);

/* After the pivot: rootfsPropagation, maskedPaths, readonlyPaths, readonly
 * root. /dev/null is verified (char 1:3) through an O_PATH fd before use. */
int rrt_rootfs_finalize(const struct rrt_rootfs_ctx *ctx, struct rrt_error *err);

/* Idmapped mounts (rootfs/idmap.c). rrt_mount_idmapped: the mount asks for one (idmap, ridmap,
 * or uid/gidMappings); _recursive: ridmap, every mount of an rbind tree, not only the top. */
bool rrt_mount_idmapped(const struct rrt_mount *m);
bool rrt_mount_idmap_recursive(const struct rrt_mount *m);

/* A user namespace holding exactly these maps (the runtime must be privileged over its own user
 * namespace to write them), as an O_CLOEXEC fd; its process is gone when this returns. */
int rrt_idmap_userns(const struct rrt_id_mappings *uid, const struct rrt_id_mappings *gid,
                     struct rrt_error *err);

/* A detached clone of source (rbind: with its submounts) with the idmapping of userns_fd, on the
 * top mount or (recursive) on every mount of it. The error names the filesystem the kernel
 * refused and why. */
int rrt_idmap_clone(const char *source, bool rbind, bool recursive, int userns_fd,
                    struct rrt_error *err);

#endif

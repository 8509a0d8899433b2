/* rootfs_internal.h: helpers shared by mount.c, mount_cgroup.c, rootfs.c and dev.c only. */
#ifndef ROOTLESSRT_ROOTFS_INTERNAL_H
#define ROOTLESSRT_ROOTFS_INTERNAL_H

#include <stdbool.h>
#include <sys/mount.h>

#include "rootlessrt/error.h"
#include "rootlessrt/rootfs.h"

/* The atime mode: a remount sets all of these or keeps the old mode. */
#define RRT_ATIME_FLAGS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)

/* What rrt_open_in_root creates when the last component is missing. */
enum rrt_create {
  RRT_CREATE_NONE, /* missing is an error (ENOENT) */
  RRT_CREATE_DIR,  /* parents and the target as directories */
  RRT_CREATE_FILE, /* parents as directories, the target as an empty file */
};

/* An O_PATH|O_CLOEXEC fd of `path` resolved inside the tree at rootfd
 * (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so neither a symlink nor ".."
 * can leave it; missing components are created through verified directory
 * fds. Returns the fd or -1 with err set. */
int rrt_open_in_root(int rootfd, const char *path, enum rrt_create create, struct rrt_error *err);

/* "/proc/self/fd/N": the target mount(2) follows to the object fd already
 * verified, rather than walking a path an attacker may swap. */
#define RRT_FD_PATH_MAX 32
const char *rrt_fd_path(int fd, char buf[RRT_FD_PATH_MAX]);

/* MS_RDONLY|MS_NOSUID|... of the mount holding fd (fstatvfs): the flags a
 * bind remount must keep, since they are locked in a user namespace. */
unsigned long rrt_mount_flags_of(int fd);

/* Bind srcfd onto dstfd (MS_BIND, |MS_REC when recursive). */
int rrt_bind_fd(int srcfd, int dstfd, bool recursive, struct rrt_error *err);

/* MS_REMOUNT|MS_BIND of the mount at fd with `flags`; when the kernel says
 * EPERM (a flag locked by the user namespace would be cleared), retry with the
 * flags of `locked_from` (a fd on the bind source) added. */
int rrt_remount_bind(int fd, unsigned long flags, int locked_from, struct rrt_error *err);

/* Make the mount at fd read-only (recursively when asked), keeping every
 * other flag: mount_setattr(2), or a bind remount on old kernels. */
int rrt_make_readonly(int fd, bool recursive, struct rrt_error *err);

/* A tmpfs on `dest` that starts as a copy of the directory it covers (the tmpcopyup option):
 * tmpcopyup.c. */
int rrt_tmpfs_copyup(int rootfd, const char *dest, const char *source, unsigned long flags,
                     const char *data, struct rrt_error *err);

/* Bind srcfd onto dstfd (which is `path` inside rootfd), recursively, made read-only while still
 * detached when asked, so that it is never visible writable. */
int rrt_bind_tree(int rootfd, const char *path, int srcfd, int dstfd, bool readonly,
                  struct rrt_error *err);

/* A new superblock (tmpfs, proc, devpts, ...) on `dest` inside the rootfs (created as a
 * directory when missing). */
int rrt_fs_mount(int rootfd, const char *dest, const char *source, const char *type,
                 unsigned long flags, const char *data, struct rrt_error *err);

/* An empty read-only (nosuid, nodev, noexec) tmpfs over the directory at fd. */
int rrt_mask_dir(int fd, struct rrt_error *err);

/* A cgroup or cgroup2 entry of mounts: read-write unless its options say "ro"; with a cgroup
 * namespace never a hierarchy above the container's cgroup. In mount_cgroup.c. */
int rrt_mount_cgroup(const struct rrt_rootfs_ctx *ctx, int rootfd, const struct rrt_mount *m,
                     const struct rrt_mount_opts *o, struct rrt_error *err);

/* After a bind of the host's /sys onto sys_dest: its fs/cgroup (the host's hierarchies, and
 * on a hybrid host a writable cgroup2) hidden under an empty read-only tmpfs. */
int rrt_mask_host_cgroups(int rootfd, const char *sys_dest, struct rrt_error *err);
/* The host's /sys bound at sys_dest, no cgroup namespace: its fs/cgroup replaced by the
 * container's own cgroups (read-only), as a cgroup mount there would show them. */
int rrt_own_cgroups_under_sys(int rootfd, const char *sys_dest, struct rrt_error *err);

/* --no-pivot, before the rootfs is moved over /: every mount beside the rootfs detached, the
 * proc and sysfs ones that cannot be covered. In host.c. */
int rrt_rootfs_detach_host(const char *rootfs, struct rrt_error *err);

/* The number of mounts strictly below dir in this mount namespace (an engine's masked and
 * read-only paths of /proc). In host.c. */
size_t rrt_rootfs_mounts_below(const char *dir);

/* A shared rootfsPropagation: the mount the rootfs lies on, and /, made private (not their
 * submounts), so that neither the bind of the rootfs nor pivot_root (which refuses a shared
 * root or parent) sees them shared; the volumes in the rootfs keep their peer groups. In
 * host.c. */
int rrt_rootfs_parent_private(const char *rootfs, struct rrt_error *err);

/* /dev: default devices (when populate_defaults), the standard symlinks,
 * linux.devices and the console. In dev.c. */
int rrt_dev_setup(const struct rrt_rootfs_ctx *ctx, int rootfd, bool populate_defaults,
                  struct rrt_error *err);

#endif

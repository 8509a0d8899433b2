/* mount_cgroup.c: the container's view of cgroups: its cgroup mounts, and the host's cgroup
 * hierarchies under a bind of /sys. Every one is read-only unless the config says "rw" (a v1
 * or hybrid host's freezer root or release_agent must not be writable), and a container with
 * a cgroup namespace sees its own cgroup as the root, never the host's tree. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "rootfs_internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

static bool host_has_cgroup2(void)
{
  struct statfs sf;
  return statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static uint64_t attrs_of(unsigned long flags)
{
  uint64_t a = 0;
  a |= (flags & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0;
  a |= (flags & MS_NOSUID) ? MOUNT_ATTR_NOSUID : 0;
  a |= (flags & MS_NODEV) ? MOUNT_ATTR_NODEV : 0;
  a |= (flags & MS_NOEXEC) ? MOUNT_ATTR_NOEXEC : 0;
  return a;
}

/* The host's /sys/fs/cgroup with every hierarchy under it, cloned detached, made read-only (and
 * nosuid, ... as asked) as a whole, then attached: never visible writable. */
static int bind_host_tree(int rootfd, const char *dest, unsigned long flags, struct rrt_error *err)
{
  cleanup_close int src = open("/sys/fs/cgroup", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (src < 0)
    return rrt_error_errno(err, "open /sys/fs/cgroup");
  cleanup_close int dst = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
  if (dst < 0)
    return -1;
  unsigned int how = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE;
  cleanup_close int tree = open_tree(src, "", how);
  if (tree < 0)
    return rrt_error_errno(err, "open_tree /sys/fs/cgroup");
  struct mount_attr attr = {.attr_set = attrs_of(flags)};
  if (attr.attr_set &&
      mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
    return rrt_error_errno(err, "make the host's cgroup hierarchies read-only (mount_setattr)");
  if (move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "move_mount /sys/fs/cgroup");
  return 0;
}

int rrt_mount_cgroup(const struct rrt_rootfs_ctx *ctx, int rootfd, const struct rrt_mount *m,
                     const struct rrt_mount_opts *o, struct rrt_error *err)
{
  const char *dest = m->destination;
  unsigned long flags = o->flags | ((o->clear_flags & MS_RDONLY) ? 0 : MS_RDONLY);
  /* A new cgroup2 superblock is rooted at the cgroup namespace's root: the container's own
   * cgroup. On a v1 or hybrid host it is the unified hierarchy alone. */
  if (strcmp(m->type, "cgroup2") == 0 || host_has_cgroup2() || ctx->new_cgroupns) {
    const char *data = strcmp(m->type, "cgroup2") == 0 ? o->data : NULL;
    if (rrt_fs_mount(rootfd, dest, m->source, "cgroup2", flags, data, err) == 0)
      return 0;
    rrt_debug("mount cgroup2 on %s: %s", dest, rrt_error_msg(err));
    rrt_error_clear(err);
  }
  if (ctx->new_cgroupns) {
    /* The host's tree would show every cgroup above the container's. */
    rrt_warn("mount cgroup on %s: no cgroup2 can be mounted in this cgroup namespace; the "
             "container gets an empty read-only %s",
             dest, dest);
    cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
    return fd < 0 ? -1 : rrt_mask_dir(fd, err);
  }
  /* No cgroup namespace: the host's hierarchies, as the host's processes see them. */
  return bind_host_tree(rootfd, dest, flags, err);
}

int rrt_mask_host_cgroups(int rootfd, const char *sys_dest, struct rrt_error *err)
{
  cleanup_free char *path = xasprintf("%s/fs/cgroup", sys_dest);
  cleanup_close int fd = rrt_open_in_root(rootfd, path, RRT_CREATE_NONE, err);
  if (fd < 0 && (err->errnum == ENOENT || err->errnum == ENOTDIR)) {
    rrt_error_clear(err);
    return 0;
  }
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
    return fd < 0 ? -1 : 0;
  if (rrt_mask_dir(fd, err) < 0)
    return rrt_error_wrap(err, "hide the host's cgroups under %s", path);
  return 0;
}

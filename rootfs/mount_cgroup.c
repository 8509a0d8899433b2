/* mount_cgroup.c: the container's view of cgroups: its cgroup mounts, and the host's cgroup
 * hierarchies under a bind of /sys. A cgroup mount is read-write unless its options say "ro"
 * (mount(8); `rootlessrt spec` writes "ro"), except the host's own v1 hierarchy roots for real
 * root without a user or cgroup namespace (their freezer roots and release_agent must not be
 * writable), and a container with a cgroup namespace sees its own cgroup as the root, never the
 * host's tree. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

static bool is_cgroup2(const char *path)
{
  struct statfs sf;
  return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

static bool host_has_cgroup2(void)
{
  return is_cgroup2("/sys/fs/cgroup");
}

/* The inode of the initial cgroup namespace (PROC_CGROUP_INIT_INO, fixed by the kernel). */
#define CGROUP_INIT_INO 0xEFFFFFFBU

/* In the initial cgroup namespace every new cgroup2 mount sets the one hierarchy's global flags
 * (nsdelegate, memory_recursiveprot, memory_localevents...) to its own options: a container
 * without a cgroup namespace of its own would clear systemd's nsdelegate on the host, or set
 * what its config lists. There it gets the host's cgroup2 mount (this is where it is), never a
 * new one. NULL elsewhere, or when the host has none. */
static const char *host_cgroup2_to_bind(void)
{
  struct stat st;
  if (stat("/proc/self/ns/cgroup", &st) < 0 || st.st_ino != CGROUP_INIT_INO)
    return NULL;
  if (host_has_cgroup2())
    return "/sys/fs/cgroup";
  return is_cgroup2("/sys/fs/cgroup/unified") ? "/sys/fs/cgroup/unified" : NULL;
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

/* The host's /sys/fs/cgroup (or its cgroup2 mount, `from`) with every hierarchy under it, cloned
 * detached, made read-only (and nosuid, ... as asked) as a whole, then attached: never visible
 * writable. */
static int bind_host_tree(int rootfd, const char *dest, const char *from, unsigned long flags,
                          struct rrt_error *err)
{
  cleanup_close int src = open(from, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (src < 0)
    return rrt_error_errno(err, "open %s", from);
  cleanup_close int dst = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
  if (dst < 0)
    return -1;
  unsigned int how = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE;
  cleanup_close int tree = open_tree(src, "", how);
  if (tree < 0)
    return rrt_error_errno(err, "open_tree %s", from);
  struct mount_attr attr = {.attr_set = attrs_of(flags)};
  if (attr.attr_set &&
      mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
    return rrt_error_errno(err, "make the host's cgroup hierarchies read-only (mount_setattr)");
  if (move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "move_mount %s", from);
  return 0;
}

/* "rw,memory" -> "memory": the superblock options of a v1 hierarchy, less the access mode. */
static char *v1_options(const char *super)
{
  static const char *const mode[] = {"rw", "ro", NULL};
  return rrt_opts_without(super, mode);
}

/* Each hierarchy the host mounts at /sys/fs/cgroup/NAME, mounted anew under dest: in a cgroup
 * namespace its root is the container's own cgroup of that hierarchy. */
static int mount_each_hierarchy(int rootfd, const char *dest, unsigned long flags,
                                struct rrt_error *err)
{
  cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f)
    return rrt_error_errno(err, "open /proc/self/mountinfo");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    char point[512], type[64], super[512];
    const char *sep = strstr(line, " - ");
    if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1 ||
        sscanf(sep + 3, "%63s %*s %511s", type, super) != 2)
      continue;
    const char *name = point + strlen("/sys/fs/cgroup/");
    if (strncmp(point, "/sys/fs/cgroup/", strlen("/sys/fs/cgroup/")) != 0 || !*name ||
        strpbrk(name, "/\\") || (strcmp(type, "cgroup") != 0 && strcmp(type, "cgroup2") != 0))
      continue;
    cleanup_free char *target = xasprintf("%s/%s", dest, name);
    cleanup_free char *data = strcmp(type, "cgroup") == 0 ? v1_options(super) : NULL;
    if (rrt_fs_mount(rootfd, target, "cgroup", type, flags, data, err) < 0)
      return rrt_error_wrap(err, "%s (%s)", target, type);
  }
  return 0;
}

/* The host's symlinks beside its hierarchies ("cpu" -> "cpu,cpuacct"). */
static int copy_links(int into, struct rrt_error *err)
{
  DIR *d = opendir("/sys/fs/cgroup");
  if (!d)
    return rrt_error_errno(err, "open /sys/fs/cgroup");
  struct dirent *de;
  int r = 0;
  while (r == 0 && (de = readdir(d))) {
    char target[256];
    ssize_t n;
    if (de->d_type != DT_LNK ||
        (n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1)) < 0)
      continue;
    target[n] = '\0';
    if (symlinkat(target, into, de->d_name) < 0 && errno != EEXIST)
      r = rrt_error_errno(err, "symlink %s", de->d_name);
  }
  closedir(d);
  return r;
}

/*
 * Real root in a cgroup namespace on a v1 or hybrid host: a tmpfs holding every hierarchy the
 * host has, each rooted at the container's cgroup (the runtime put init in each before the
 * namespace was made), then the whole made read-only unless "rw" was asked.
 */
static int mount_hierarchies(int rootfd, const char *dest, unsigned long flags,
                             struct rrt_error *err)
{
  unsigned long base = MS_NOSUID | MS_NODEV | MS_NOEXEC;
  if (rrt_fs_mount(rootfd, dest, "tmpfs", "tmpfs", base, "mode=755", err) < 0)
    return -1;
  cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
  if (fd < 0)
    return -1;
  cleanup_close int dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return rrt_error_errno(err, "open %s", dest);
  if (mount_each_hierarchy(rootfd, dest, flags, err) < 0 || copy_links(dir, err) < 0)
    return -1;
  return (flags & MS_RDONLY) ? rrt_make_readonly(fd, true, err) : 0;
}

int rrt_mount_cgroup(const struct rrt_rootfs_ctx *ctx, int rootfd, const struct rrt_mount *m,
                     const struct rrt_mount_opts *o, struct rrt_error *err)
{
  const char *dest = m->destination;
  unsigned long flags = o->flags;
  if (strcmp(m->type, "cgroup") == 0 && ctx->new_cgroupns && !ctx->userns && !host_has_cgroup2()) {
    if (mount_hierarchies(rootfd, dest, flags, err) == 0)
      return 0;
    /* Leave nothing half made: the unified hierarchy alone, as below. */
    rrt_warn("mount cgroup on %s: the host's hierarchies: %s; cgroup2 only", dest,
             rrt_error_msg(err));
    rrt_error_clear(err);
    cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
    char path[RRT_FD_PATH_MAX];
    if (fd < 0 || umount2(rrt_fd_path(fd, path), MNT_DETACH) < 0)
      return rrt_error_errno(err, "unmount the tmpfs on %s", dest);
  }
  bool want_v2 = strcmp(m->type, "cgroup2") == 0 || host_has_cgroup2();
  const char *host_v2 = want_v2 ? host_cgroup2_to_bind() : NULL;
  if (host_v2)
    return bind_host_tree(rootfd, dest, host_v2, flags, err);
  /* A new cgroup2 superblock is rooted at the cgroup namespace's root: the container's own
   * cgroup. On a v1 or hybrid host it is the unified hierarchy alone. */
  if (want_v2 || ctx->new_cgroupns) {
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
  /* No cgroup namespace: the host's hierarchies, as the host's processes see them. For real
   * root in the initial user namespace those are the host's hierarchy roots, writable by it
   * as by the host's root: they stay read-only whatever the options say. */
  if (!ctx->userns && !(flags & MS_RDONLY)) {
    rrt_warn("mount cgroup on %s: the host's cgroup hierarchies stay read-only for a container "
             "without a user or cgroup namespace (add a cgroup namespace for a writable one)",
             dest);
    flags |= MS_RDONLY;
  }
  return bind_host_tree(rootfd, dest, "/sys/fs/cgroup", flags, err);
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

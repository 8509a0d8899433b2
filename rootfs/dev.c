/* dev.c: /dev inside the container: default devices, symlinks, linux.devices, console. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/rootfs.h"
#include "rootlessrt/util.h"

/* runtime-linux.md "Default Devices". */
static const struct rrt_device default_devices[] = {
    {.path = "/dev/null", .type = 'c', .major = 1, .minor = 3},
    {.path = "/dev/zero", .type = 'c', .major = 1, .minor = 5},
    {.path = "/dev/full", .type = 'c', .major = 1, .minor = 7},
    {.path = "/dev/random", .type = 'c', .major = 1, .minor = 8},
    {.path = "/dev/urandom", .type = 'c', .major = 1, .minor = 9},
    {.path = "/dev/tty", .type = 'c', .major = 5, .minor = 0},
};

/* runtime-linux.md "Dev symbolic links" (plus /dev/core as runc makes it). */
static const struct {
  const char *target, *name;
} default_links[] = {
    {"/proc/self/fd", "fd"},       {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
    {"/proc/self/fd/2", "stderr"}, {"/proc/kcore", "core"},
};

static mode_t device_type_mode(char type)
{
  switch (type) {
  case 'c':
  case 'u':
    return S_IFCHR;
  case 'b':
    return S_IFBLK;
  case 'p':
    return S_IFIFO;
  default:
    return 0;
  }
}

/* The directory holding `path` (created inside the rootfs) and its last name. */
static int open_parent(int rootfd, const char *path, char **base, struct rrt_error *err)
{
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (!slash || !slash[1] || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
    return rrt_error_set(err, EINVAL, "not a file path");
  *base = xstrdup(slash + 1);
  slash[1] = '\0';
  int fd = rrt_open_in_root(rootfd, dir, RRT_CREATE_DIR, err);
  if (fd < 0) {
    free(*base);
    *base = NULL;
  }
  return fd;
}

/* The host's node at the same path, when it is exactly the requested device:
 * a bind mount is the only way to get a device into a user namespace. */
static int open_host_node(const struct rrt_device *d, mode_t type)
{
  int fd = open(d->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != type ||
      (int64_t)major(st.st_rdev) != d->major || (int64_t)minor(st.st_rdev) != d->minor) {
    close(fd);
    return -1;
  }
  return fd;
}

/* tree: the node as real root made it on the host side for a container with a user namespace
 * (hostfds.h), detached; -1 otherwise. */
static int make_node(const struct rrt_rootfs_ctx *ctx, int rootfd, const struct rrt_device *d,
                     int tree, struct rrt_error *err)
{
  mode_t type = device_type_mode(d->type);
  if (!type)
    return rrt_error_set(err, EINVAL, "unknown device type '%c'", d->type);
  if (!d->path || d->path[0] != '/')
    return rrt_error_set(err, EINVAL, "path must be absolute");
  if (tree >= 0) {
    cleanup_close int target = rrt_open_in_root(rootfd, d->path, RRT_CREATE_FILE, err);
    if (target < 0)
      return -1;
    if (move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
      return rrt_error_errno(err, "move_mount the node made on the host");
    return 0;
  }

  if (type != S_IFIFO) {
    cleanup_close int host = open_host_node(d, type);
    if (host >= 0) {
      cleanup_close int target = rrt_open_in_root(rootfd, d->path, RRT_CREATE_FILE, err);
      if (target < 0)
        return -1;
      /* Read-only: the node is the host's inode, and a container root that owns it (real root
       * without a user namespace) would chmod, chown or touch the host's own /dev/null. Reads
       * and writes of a device do not need a writable mount. */
      return rrt_bind_tree(rootfd, d->path, host, target, true, err);
    }
    /* mknod of a device is never allowed in a user namespace (FIFOs are). */
    if (ctx->userns)
      return rrt_error_set(err, ENODEV,
                           "no host device %c %lld:%lld at that path to bind, and mknod is not "
                           "permitted in a user namespace",
                           d->type, (long long)d->major, (long long)d->minor);
  }

  cleanup_free char *base = NULL;
  cleanup_close int dirfd = open_parent(rootfd, d->path, &base, err);
  if (dirfd < 0)
    return -1;
  /* A stale entry from the image (or a default device this one overrides). */
  if (unlinkat(dirfd, base, 0) < 0 && errno != ENOENT)
    return rrt_error_errno(err, "remove the existing %s", d->path);
  mode_t perm = d->has_file_mode ? (d->file_mode & 07777) : 0666;
  dev_t dev = makedev((unsigned int)d->major, (unsigned int)d->minor);
  if (mknodat(dirfd, base, type | perm, type == S_IFIFO ? 0 : dev) < 0)
    return rrt_error_errno(err, "mknod");
  /* mknod honours the umask; the config's mode is meant literally. */
  cleanup_close int fd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return rrt_error_errno(err, "open the new node");
  char proc[RRT_FD_PATH_MAX];
  if (chmod(rrt_fd_path(fd, proc), perm) < 0)
    return rrt_error_errno(err, "chmod");
  uid_t uid = d->has_uid ? d->uid : (uid_t)-1;
  gid_t gid = d->has_gid ? d->gid : (gid_t)-1;
  if ((d->has_uid || d->has_gid) && fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "chown");
  return 0;
}

static bool listed(const struct rrt_spec *spec, const char *path)
{
  if (!spec->has_linux)
    return false;
  for (size_t i = 0; i < spec->lnx.n_devices; i++)
    if (spec->lnx.devices[i].path && strcmp(spec->lnx.devices[i].path, path) == 0)
      return true;
  return false;
}

static int make_links(int rootfd, struct rrt_error *err)
{
  cleanup_close int devfd = rrt_open_in_root(rootfd, "/dev", RRT_CREATE_DIR, err);
  if (devfd < 0)
    return -1;
  for (size_t i = 0; i < sizeof(default_links) / sizeof(default_links[0]); i++) {
    if (strcmp(default_links[i].name, "core") == 0 && access("/proc/kcore", F_OK) < 0)
      continue;
    /* An image may ship its own; keeping it is what runc does. */
    if (symlinkat(default_links[i].target, devfd, default_links[i].name) < 0 && errno != EEXIST)
      return rrt_error_errno(err, "symlink /dev/%s", default_links[i].name);
  }
  /* The devpts instance mounted on /dev/pts has its own ptmx; /dev/ptmx must
   * point there, not at the host's multiplexer, even when linux.devices lists it
   * (config-linux.md: a bind or symlink of the container's /dev/pts/ptmx). */
  if (unlinkat(devfd, "ptmx", 0) < 0 && errno != ENOENT)
    return rrt_error_errno(err, "remove /dev/ptmx");
  if (symlinkat("pts/ptmx", devfd, "ptmx") < 0)
    return rrt_error_errno(err, "symlink /dev/ptmx");
  return 0;
}

int rrt_dev_setup(const struct rrt_rootfs_ctx *ctx, int rootfd, bool populate_defaults,
                  struct rrt_error *err)
{
  const struct rrt_spec *spec = ctx->spec;
  if (populate_defaults) {
    for (size_t i = 0; i < sizeof(default_devices) / sizeof(default_devices[0]); i++) {
      const struct rrt_device *d = &default_devices[i];
      if (listed(spec, d->path))
        continue;
      if (make_node(ctx, rootfd, d, -1, err) < 0)
        return rrt_error_wrap(err, "default device %s", d->path);
    }
  }
  if (spec->has_linux) {
    for (size_t i = 0; i < spec->lnx.n_devices; i++) {
      const struct rrt_device *d = &spec->lnx.devices[i];
      /* The host's 5:2 would open the host's devpts, not the container's: the link below. */
      if (populate_defaults && d->path && strcmp(d->path, "/dev/ptmx") == 0)
        continue;
      if (make_node(ctx, rootfd, d, ctx->device_fds ? ctx->device_fds[i] : -1, err) < 0)
        return rrt_error_wrap(err, "linux.devices[%zu] (%s)", i, d->path ? d->path : "");
    }
  }
  if (populate_defaults && make_links(rootfd, err) < 0)
    return -1;
  if (ctx->console_slave_fd >= 0) {
    cleanup_close int target = rrt_open_in_root(rootfd, "/dev/console", RRT_CREATE_FILE, err);
    if (target < 0 || rrt_bind_fd(ctx->console_slave_fd, target, false, err) < 0)
      return rrt_error_wrap(err, "bind the console onto /dev/console");
  }
  return 0;
}

/* idmap.c: idmapped mounts (config.md: the idmap and ridmap options, a mount's uidMappings and
 * gidMappings): a bind source cloned with open_tree and given an idmapping with
 * mount_setattr(MOUNT_ATTR_IDMAP).
 *
 * The kernel allows that only with CAP_SYS_ADMIN over the user namespace that owns the source's
 * filesystem, which for a disk's is the initial one. So as real root the runtime does it on the
 * host side, before clone, with a user namespace of its own that holds the mapping (the mount's,
 * or the one the container's user namespace will have: an idmapping is the mapping, not the
 * namespace); init moves the clone into place (hostfds.c). Rootless, only a filesystem of the
 * caller's own user namespace could be idmapped: init tries, and says which filesystem the
 * kernel refused and why. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/rootfs.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

static bool has(const struct rrt_mount *m, const char *opt)
{
  for (size_t i = 0; i < m->options.n && m->options.v[i]; i++)
    if (strcmp(m->options.v[i], opt) == 0)
      return true;
  return false;
}

bool rrt_mount_idmapped(const struct rrt_mount *m)
{
  return m->uid_mappings.n || m->gid_mappings.n || has(m, "idmap") || has(m, "ridmap");
}

bool rrt_mount_idmap_recursive(const struct rrt_mount *m)
{
  return has(m, "ridmap");
}

int rrt_idmap_userns(const struct rrt_id_mappings *uid, const struct rrt_id_mappings *gid,
                     struct rrt_error *err)
{
  int ready[2], hold[2];
  if (pipe2(ready, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "idmap: pipe");
  if (pipe2(hold, O_CLOEXEC) < 0) {
    close(ready[0]);
    close(ready[1]);
    return rrt_error_errno(err, "idmap: pipe");
  }
  cleanup_pid pid_t pid = fork();
  if (pid < 0) {
    pid = 0;
    close(ready[0]);
    close(ready[1]);
    close(hold[0]);
    close(hold[1]);
    return rrt_error_errno(err, "idmap: fork");
  }
  if (pid == 0) {
    /* A user namespace that only holds the mapping, until the runtime has its fd. */
    close(ready[0]);
    close(hold[1]);
    char ok = unshare(CLONE_NEWUSER) == 0 ? 1 : 0;
    if (write(ready[1], &ok, 1) != 1 || !ok)
      _exit(1);
    char c;
    (void)!read(hold[0], &c, 1);
    _exit(0);
  }
  close(ready[1]);
  close(hold[0]);
  char ok = 0;
  ssize_t n;
  while ((n = read(ready[0], &ok, 1)) < 0 && errno == EINTR)
    ;
  close(ready[0]);
  int fd = -1;
  if (n != 1 || !ok) {
    rrt_error_set(err, EPERM, "idmap: cannot create a user namespace for the mapping");
  } else {
    struct rrt_userns_plan plan = {.create = true, .method = RRT_MAP_DIRECT};
    plan.uid_map = *uid;
    plan.gid_map = *gid;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
    if (rrt_userns_write_maps(pid, &plan, err) < 0)
      rrt_error_wrap(err, "idmap: the mapping's user namespace");
    else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
      rrt_error_errno(err, "idmap: open %s", path);
  }
  close(hold[1]); /* the child exits */
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
  pid = 0;
  return fd;
}

static const char *fs_name(int fd, char buf[32])
{
  struct statfs sfs;
  if (fstatfs(fd, &sfs) < 0)
    return "unknown";
  static const struct {
    long magic;
    const char *name;
  } names[] = {
      {EXT4_SUPER_MAGIC, "ext4"}, {XFS_SUPER_MAGIC, "xfs"},           {BTRFS_SUPER_MAGIC, "btrfs"},
      {TMPFS_MAGIC, "tmpfs"},     {OVERLAYFS_SUPER_MAGIC, "overlay"}, {0x65735546, "fuse"},
      {NFS_SUPER_MAGIC, "nfs"},   {PROC_SUPER_MAGIC, "proc"},         {SYSFS_MAGIC, "sysfs"},
      {0x2011BAB0, "exfat"},      {MSDOS_SUPER_MAGIC, "vfat"},        {0xF2F52010, "f2fs"},
  };
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if ((long)sfs.f_type == names[i].magic)
      return names[i].name;
  snprintf(buf, 32, "0x%lx", (unsigned long)sfs.f_type);
  return buf;
}

int rrt_idmap_clone(const char *source, bool rbind, bool recursive, int userns_fd,
                    struct rrt_error *err)
{
  unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (rbind ? AT_RECURSIVE : 0);
  cleanup_close int tree = open_tree(AT_FDCWD, source, flags);
  if (tree < 0)
    return rrt_error_errno(err, "idmapped mount of %s: open_tree", source);
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd};
  if (mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr,
                    sizeof(attr)) == 0)
    return steal_fd(&tree);
  int e = errno;
  char buf[32];
  const char *fs = fs_name(tree, buf);
  switch (e) {
  case EPERM:
    return rrt_error_set(err, e,
                         "idmapped mount of %s: mount_setattr(MOUNT_ATTR_IDMAP): the kernel "
                         "allows it only with CAP_SYS_ADMIN over the user namespace that owns "
                         "this %s filesystem (real root, for a host's)",
                         source, fs);
  case EINVAL:
    return rrt_error_set(err, e,
                         "idmapped mount of %s: mount_setattr(MOUNT_ATTR_IDMAP): this %s "
                         "filesystem cannot be idmapped by this kernel (or the source is "
                         "idmapped already)",
                         source, fs);
  case ENOSYS:
    return rrt_error_set(
        err, e, "idmapped mount of %s: this kernel has no mount_setattr (Linux 5.12)", source);
  default:
    errno = e;
    return rrt_error_errno(err, "idmapped mount of %s (%s): mount_setattr(MOUNT_ATTR_IDMAP)",
                           source, fs);
  }
}

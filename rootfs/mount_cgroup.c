/* mount_cgroup.c: the container's view of cgroups: its cgroup mounts, and the host's cgroup
 * hierarchies under a bind of /sys. Without a cgroup namespace the container sees only its own
 * cgroup of each hierarchy (bound from the host's mounts, as runc and crun do), never a
 * hierarchy's root; for real root without a user namespace those binds stay read-only. With a
 * cgroup namespace each hierarchy is mounted anew, rooted at its own cgroup. A cgroup mount is
 * read-write unless its options say "ro" (mount(8); `rootlessrt spec` writes "ro"). */
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

/* Whether every controller of a /proc/self/cgroup line ("cpu,cpuacct", "name=systemd") is among
 * a v1 hierarchy's superblock options ("rw,cpu,cpuacct"). */
static bool controllers_match(const char *ctrls, const char *super)
{
  if (!*ctrls)
    return false;
  cleanup_free char *c = xstrdup(ctrls);
  char *save = NULL;
  for (char *tok = strtok_r(c, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    size_t n = strlen(tok);
    const char *p = super;
    bool found = false;
    while (!found && p && *p) {
      const char *end = strchr(p, ',');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      found = len == n && strncmp(p, tok, n) == 0;
      p = end ? end + 1 : NULL;
    }
    if (!found)
      return false;
  }
  return true;
}

/* The container's own cgroup in a hierarchy, as /proc/self/cgroup of init says (the runtime put
 * init in its cgroups before the mounts): "0::PATH" for cgroup2, "N:CONTROLLERS:PATH" for a v1
 * hierarchy whose superblock options are super. NULL when not listed. */
static char *own_cgroup(const char *type, const char *super)
{
  cleanup_fclose FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f)
    return NULL;
  bool v2 = strcmp(type, "cgroup2") == 0;
  cleanup_free char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    if (line[n - 1] == '\n')
      line[n - 1] = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2 || c2[1] != '/')
      continue;
    *c1 = *c2 = '\0';
    bool line_v2 = strcmp(line, "0") == 0 && c1 + 1 == c2;
    if (v2 ? line_v2 : !line_v2 && controllers_match(c1 + 1, super))
      return xstrdup(c2 + 1);
  }
  return NULL;
}

/* The mount's directory of cgroup path cg: point (where the hierarchy is mounted, its root being
 * root in the hierarchy) with the part of cg below root. NULL when cg is not under root. */
static char *own_dir(const char *point, const char *root, const char *cg)
{
  size_t n = strcmp(root, "/") == 0 ? 0 : strlen(root);
  if (strncmp(cg, root, n) != 0 || (cg[n] != '/' && cg[n] != '\0'))
    return NULL;
  return xasprintf("%s%s", point, cg + n);
}

/* The directory from (a cgroup of the host's) alone, bound at dest, read-only (and nosuid, ...)
 * as asked before it is attached. */
static int bind_cgroup_dir(int rootfd, const char *dest, const char *from, unsigned long flags,
                           struct rrt_error *err)
{
  cleanup_close int src = open(from, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0)
    return rrt_error_errno(err, "open %s", from);
  cleanup_close int dst = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
  if (dst < 0)
    return -1;
  cleanup_close int tree = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (tree < 0)
    return rrt_error_errno(err, "open_tree %s", from);
  struct mount_attr attr = {.attr_set = attrs_of(flags)};
  if (attr.attr_set && mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
    return rrt_error_errno(err, "mount_setattr %s", from);
  if (move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "move_mount %s", from);
  return 0;
}

/* A hierarchy mount of /proc/self/mountinfo: where, its root in the hierarchy, its type and its
 * superblock options. */
struct cg_mount {
  char point[512], root[512], type[64], super[512];
};

static bool parse_cg_mount(const char *line, struct cg_mount *m)
{
  const char *sep = strstr(line, " - ");
  if (!sep || sscanf(line, "%*s %*s %*s %511s %511s", m->root, m->point) != 2 ||
      sscanf(sep + 3, "%63s %*s %511s", m->type, m->super) != 2)
    return false;
  return strcmp(m->type, "cgroup") == 0 || strcmp(m->type, "cgroup2") == 0;
}

/* The container's own cgroup of the hierarchy m, bound at dest. */
static int bind_own(int rootfd, const char *dest, const struct cg_mount *m, unsigned long flags,
                    struct rrt_error *err)
{
  cleanup_free char *cg = own_cgroup(m->type, m->super);
  if (!cg)
    return rrt_error_msgf(err, ENOENT, "%s: init is in no cgroup of it (/proc/self/cgroup)",
                          m->point);
  cleanup_free char *dir = own_dir(m->point, m->root, cg);
  if (!dir)
    return rrt_error_msgf(err, ENOENT, "%s: init's cgroup %s is outside the mount (root %s)",
                          m->point, cg, m->root);
  return bind_cgroup_dir(rootfd, dest, dir, flags, err);
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

/*
 * No cgroup namespace: what runc and crun bind. On a cgroup2 host, the container's own cgroup
 * bound at dest; on a v1 or hybrid host, a tmpfs with each hierarchy the host mounts at
 * /sys/fs/cgroup/NAME bound at its own cgroup there (the unified one too), the host's symlinks
 * beside them; with type cgroup2 on a hybrid host, the unified hierarchy's own cgroup at dest.
 * Never a hierarchy's root: that shows every other container's cgroups and the host's totals.
 */
static int mount_own_cgroups(int rootfd, const char *dest, const char *type, unsigned long flags,
                             struct rrt_error *err)
{
  bool host_v2 = host_has_cgroup2();
  bool unified_only = host_v2 || strcmp(type, "cgroup2") == 0;
  if (!unified_only) {
    unsigned long base = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    if (rrt_fs_mount(rootfd, dest, "tmpfs", "tmpfs", base, "mode=755", err) < 0)
      return -1;
  }
  cleanup_fclose FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f)
    return rrt_error_errno(err, "open /proc/self/mountinfo");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  bool bound = false;
  const char *prefix = "/sys/fs/cgroup/";
  while (getline(&line, &cap, f) > 0) {
    struct cg_mount m;
    if (!parse_cg_mount(line, &m))
      continue;
    if (unified_only) {
      /* The cgroup2 mount: /sys/fs/cgroup itself, or .../unified of a hybrid host (the last one
       * listed at that point is the one seen). */
      const char *want = host_v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified";
      if (strcmp(m.type, "cgroup2") != 0 || strcmp(m.point, want) != 0)
        continue;
      if (bound) {
        cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
        char path[RRT_FD_PATH_MAX];
        if (fd < 0 || umount2(rrt_fd_path(fd, path), MNT_DETACH) < 0)
          return rrt_error_errno(err, "unmount %s", dest);
      }
      if (bind_own(rootfd, dest, &m, flags, err) < 0)
        return -1;
      bound = true;
      continue;
    }
    const char *name = m.point + strlen(prefix);
    if (strncmp(m.point, prefix, strlen(prefix)) != 0 || !*name || strpbrk(name, "/\\"))
      continue;
    cleanup_free char *target = xasprintf("%s/%s", dest, name);
    if (bind_own(rootfd, target, &m, flags, err) < 0)
      return -1;
  }
  if (unified_only) {
    if (bound)
      return 0;
    return rrt_error_msgf(err, ENOENT, "no cgroup2 mount at %s",
                          host_v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified");
  }
  cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
  if (fd < 0)
    return -1;
  cleanup_close int dir = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return rrt_error_errno(err, "open %s", dest);
  if (copy_links(dir, err) < 0)
    return -1;
  return (flags & MS_RDONLY) ? rrt_make_readonly(fd, false, err) : 0;
}

int rrt_mount_cgroup(const struct rrt_rootfs_ctx *ctx, int rootfd, const struct rrt_mount *m,
                     const struct rrt_mount_opts *o, struct rrt_error *err)
{
  const char *dest = m->destination;
  unsigned long flags = o->flags;
  if (!ctx->new_cgroupns) {
    /* The container's own cgroups of the host's hierarchies. For real root in the initial user
     * namespace they stay read-only whatever the options say: writable, its root could raise
     * its own limits or move itself out. */
    if (!ctx->userns && !(flags & MS_RDONLY)) {
      rrt_warn("mount cgroup on %s: the host's cgroup hierarchies stay read-only for a container "
               "without a user or cgroup namespace (add a cgroup namespace for a writable one)",
               dest);
      flags |= MS_RDONLY;
    }
    if (mount_own_cgroups(rootfd, dest, m->type, flags, err) < 0)
      return rrt_error_wrap(err, "mount cgroup on %s (the container's own cgroups)", dest);
    return 0;
  }
  if (strcmp(m->type, "cgroup") == 0 && !ctx->userns && !host_has_cgroup2()) {
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
  if (host_v2) {
    /* A cgroup namespace made later than the mounts (never here today): its own cgroup. */
    return mount_own_cgroups(rootfd, dest, "cgroup2", flags, err);
  }
  /* A new cgroup2 superblock is rooted at the cgroup namespace's root: the container's own
   * cgroup. On a v1 or hybrid host it is the unified hierarchy alone. */
  const char *data = strcmp(m->type, "cgroup2") == 0 ? o->data : NULL;
  if (rrt_fs_mount(rootfd, dest, m->source, "cgroup2", flags, data, err) == 0)
    return 0;
  rrt_debug("mount cgroup2 on %s: %s", dest, rrt_error_msg(err));
  rrt_error_clear(err);
  /* The host's tree would show every cgroup above the container's. */
  rrt_warn("mount cgroup on %s: no cgroup2 can be mounted in this cgroup namespace; the "
           "container gets an empty read-only %s",
           dest, dest);
  cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
  return fd < 0 ? -1 : rrt_mask_dir(fd, err);
}

/* SYS_DEST/fs/cgroup in the container's root, if there is such a directory: its fd, 0 with *fd
 * -1 when there is none (nothing to do), -1 on error. */
static int open_sys_cgroup(int rootfd, const char *sys_dest, char **path, int *fd,
                           struct rrt_error *err)
{
  *path = xasprintf("%s/fs/cgroup", sys_dest);
  *fd = rrt_open_in_root(rootfd, *path, RRT_CREATE_NONE, err);
  if (*fd < 0 && (err->errnum == ENOENT || err->errnum == ENOTDIR)) {
    rrt_error_clear(err);
    return 0;
  }
  if (*fd < 0)
    return -1;
  struct stat st;
  if (fstat(*fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
    close(*fd);
    *fd = -1;
  }
  return 0;
}

int rrt_mask_host_cgroups(int rootfd, const char *sys_dest, struct rrt_error *err)
{
  cleanup_free char *path = NULL;
  cleanup_close int fd = -1;
  int rc = open_sys_cgroup(rootfd, sys_dest, &path, &fd, err);
  if (rc < 0 || fd < 0)
    return rc;
  if (rrt_mask_dir(fd, err) < 0)
    return rrt_error_wrap(err, "hide the host's cgroups under %s", path);
  return 0;
}

int rrt_own_cgroups_under_sys(int rootfd, const char *sys_dest, struct rrt_error *err)
{
  cleanup_free char *path = NULL;
  cleanup_close int fd = -1;
  int rc = open_sys_cgroup(rootfd, sys_dest, &path, &fd, err);
  if (rc < 0 || fd < 0)
    return rc;
  /* The host's hierarchies that came with the bind go first where they can (not under a user
   * namespace, where they are locked to the bind): nothing to find by unmounting what covers
   * them. */
  char fdpath[RRT_FD_PATH_MAX];
  if (umount2(rrt_fd_path(fd, fdpath), MNT_DETACH) == 0) {
    close(fd);
    fd = rrt_open_in_root(rootfd, path, RRT_CREATE_NONE, err);
    if (fd < 0)
      return -1;
  }
  unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  if (mount_own_cgroups(rootfd, path, "cgroup", flags, err) < 0)
    return rrt_error_wrap(err, "the container's own cgroups under %s", path);
  return 0;
}

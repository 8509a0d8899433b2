/* mount.c: mount option parsing and the fd-based mount primitives under rootfs.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/rootfs.h"
#include "rootlessrt/util.h"

enum opt_kind { OPT_SET, OPT_CLEAR, OPT_PROPAGATION, OPT_BIND, OPT_RBIND, OPT_IGNORE };

struct opt_def {
  const char *name;
  enum opt_kind kind;
  unsigned long flag;
};

/* mount(8) names that map to MS_* flags, plus the OCI/runc extensions. */
static const struct opt_def opt_defs[] = {
    {"ro", OPT_SET, MS_RDONLY},
    {"rw", OPT_CLEAR, MS_RDONLY},
    {"nosuid", OPT_SET, MS_NOSUID},
    {"suid", OPT_CLEAR, MS_NOSUID},
    {"nodev", OPT_SET, MS_NODEV},
    {"dev", OPT_CLEAR, MS_NODEV},
    {"noexec", OPT_SET, MS_NOEXEC},
    {"exec", OPT_CLEAR, MS_NOEXEC},
    {"sync", OPT_SET, MS_SYNCHRONOUS},
    {"async", OPT_CLEAR, MS_SYNCHRONOUS},
    {"dirsync", OPT_SET, MS_DIRSYNC},
    {"remount", OPT_SET, MS_REMOUNT},
    {"mand", OPT_SET, MS_MANDLOCK},
    {"nomand", OPT_CLEAR, MS_MANDLOCK},
    {"noatime", OPT_SET, MS_NOATIME},
    {"atime", OPT_CLEAR, MS_NOATIME},
    {"nodiratime", OPT_SET, MS_NODIRATIME},
    {"diratime", OPT_CLEAR, MS_NODIRATIME},
    {"relatime", OPT_SET, MS_RELATIME},
    {"norelatime", OPT_CLEAR, MS_RELATIME},
    {"strictatime", OPT_SET, MS_STRICTATIME},
    {"nostrictatime", OPT_CLEAR, MS_STRICTATIME},
    {"lazytime", OPT_SET, MS_LAZYTIME},
    {"nolazytime", OPT_CLEAR, MS_LAZYTIME},
    {"silent", OPT_SET, MS_SILENT},
    {"loud", OPT_CLEAR, MS_SILENT},
    {"nosymfollow", OPT_SET, MS_NOSYMFOLLOW},
    {"symfollow", OPT_CLEAR, MS_NOSYMFOLLOW},
    {"bind", OPT_BIND, MS_BIND},
    {"rbind", OPT_RBIND, MS_BIND | MS_REC},
    {"private", OPT_PROPAGATION, MS_PRIVATE},
    {"rprivate", OPT_PROPAGATION, MS_PRIVATE | MS_REC},
    {"shared", OPT_PROPAGATION, MS_SHARED},
    {"rshared", OPT_PROPAGATION, MS_SHARED | MS_REC},
    {"slave", OPT_PROPAGATION, MS_SLAVE},
    {"rslave", OPT_PROPAGATION, MS_SLAVE | MS_REC},
    {"unbindable", OPT_PROPAGATION, MS_UNBINDABLE},
    {"runbindable", OPT_PROPAGATION, MS_UNBINDABLE | MS_REC},
    /* Userspace-only mount(8) options: the kernel would reject them as data. */
    {"defaults", OPT_IGNORE, 0},
    {"auto", OPT_IGNORE, 0},
    {"noauto", OPT_IGNORE, 0},
    {"nofail", OPT_IGNORE, 0},
    {"user", OPT_IGNORE, 0},
    {"nouser", OPT_IGNORE, 0},
    {"users", OPT_IGNORE, 0},
    {"owner", OPT_IGNORE, 0},
    {"group", OPT_IGNORE, 0},
    {"_netdev", OPT_IGNORE, 0},
    /* Runtime extensions handled by rootfs.c from the raw option list (idmap is
     * refused there, the recursive r* attributes use mount_setattr, tmpcopyup
     * fills a tmpfs with a copy of what it covers: tmpcopyup.c). */
    {"tmpcopyup", OPT_IGNORE, 0},
    {"notmpcopyup", OPT_IGNORE, 0},
    {"idmap", OPT_IGNORE, 0},
    {"ridmap", OPT_IGNORE, 0},
    {"rro", OPT_IGNORE, 0},
    {"rrw", OPT_IGNORE, 0},
    {"rnosuid", OPT_IGNORE, 0},
    {"rsuid", OPT_IGNORE, 0},
    {"rnodev", OPT_IGNORE, 0},
    {"rdev", OPT_IGNORE, 0},
    {"rnoexec", OPT_IGNORE, 0},
    {"rexec", OPT_IGNORE, 0},
    {"rnodiratime", OPT_IGNORE, 0},
    {"rdiratime", OPT_IGNORE, 0},
    {"rrelatime", OPT_IGNORE, 0},
    {"rnorelatime", OPT_IGNORE, 0},
    {"rnoatime", OPT_IGNORE, 0},
    {"ratime", OPT_IGNORE, 0},
    {"rstrictatime", OPT_IGNORE, 0},
    {"rnostrictatime", OPT_IGNORE, 0},
    {"rnosymfollow", OPT_IGNORE, 0},
    {"rsymfollow", OPT_IGNORE, 0},
};

static const struct opt_def *opt_lookup(const char *name)
{
  for (size_t i = 0; i < sizeof(opt_defs) / sizeof(opt_defs[0]); i++)
    if (strcmp(opt_defs[i].name, name) == 0)
      return &opt_defs[i];
  return NULL;
}

static void data_append(char **data, const char *opt)
{
  if (!*data) {
    *data = xstrdup(opt);
    return;
  }
  char *joined = xasprintf("%s,%s", *data, opt);
  free(*data);
  *data = joined;
}

int rrt_mount_opts_parse(const struct rrt_strv *options, struct rrt_mount_opts *out,
                         struct rrt_error *err)
{
  if (!out)
    return rrt_error_set(err, EINVAL, "mount options: no output");
  memset(out, 0, sizeof(*out));
  if (!options || !options->v)
    return 0;
  for (size_t i = 0; i < options->n && options->v[i]; i++) {
    const char *o = options->v[i];
    if (*o == '\0')
      continue;
    /* x-* options are for userspace helpers by mount(8) convention. */
    if (strncmp(o, "x-", 2) == 0)
      continue;
    const struct opt_def *d = opt_lookup(o);
    if (!d) {
      data_append(&out->data, o);
      continue;
    }
    switch (d->kind) {
    case OPT_SET:
      out->flags |= d->flag;
      out->clear_flags &= ~d->flag;
      break;
    case OPT_CLEAR:
      out->flags &= ~d->flag;
      out->clear_flags |= d->flag;
      break;
    case OPT_PROPAGATION:
      /* mount(2) takes one propagation type per call; the last one wins. */
      out->propagation = d->flag;
      break;
    case OPT_RBIND:
      out->rbind = true;
      /* fallthrough */
    case OPT_BIND:
      out->bind = true;
      out->flags |= d->flag;
      break;
    case OPT_IGNORE:
      break;
    }
  }
  return 0;
}

void rrt_mount_opts_free(struct rrt_mount_opts *o)
{
  if (!o)
    return;
  free(o->data);
  o->data = NULL;
}

const char *rrt_fd_path(int fd, char buf[RRT_FD_PATH_MAX])
{
  snprintf(buf, RRT_FD_PATH_MAX, "/proc/self/fd/%d", fd);
  return buf;
}

static int openat2_path(int dirfd, const char *path, unsigned long long resolve)
{
  struct open_how how = {
      .flags = O_PATH | O_CLOEXEC,
      .resolve = resolve,
  };
  return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)

/* Creates `name` (one component, no slash) in the verified directory parentfd. */
static int create_component(int parentfd, const char *name, bool as_file)
{
  if (!as_file)
    return (mkdirat(parentfd, name, 0755) < 0 && errno != EEXIST) ? -1 : 0;
  int fd =
      openat(parentfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno == EEXIST ? 0 : -1;
  close(fd);
  return 0;
}

/*
 * The slow path of rrt_open_in_root: walk the path one prefix at a time, each
 * prefix resolved by the kernel inside the root, creating what is missing. A
 * dangling symlink is followed by hand (its target re-rooted), so the new
 * directory lands where the kernel will later resolve the same path.
 */
static int create_in_root(int rootfd, const char *path, enum rrt_create create,
                          struct rrt_error *err)
{
  cleanup_free char *cur = xstrdup(path);
  for (int hops = 0; hops <= 40; hops++) {
    cleanup_close int parent = openat2_path(rootfd, "/", IN_ROOT);
    if (parent < 0)
      return rrt_error_errno(err, "open the rootfs");
    size_t pos = 0;
    bool restarted = false;
    while (cur[pos]) {
      while (cur[pos] == '/')
        pos++;
      if (!cur[pos])
        break;
      size_t start = pos;
      while (cur[pos] && cur[pos] != '/')
        pos++;
      cleanup_free char *prefix = xstrndup(cur, pos);
      int fd = openat2_path(rootfd, prefix, IN_ROOT);
      if (fd < 0 && errno != ENOENT)
        return rrt_error_errno(err, "open %s in the rootfs", prefix);
      if (fd < 0) {
        cleanup_free char *name = xstrndup(cur + start, pos - start);
        char target[PATH_MAX];
        ssize_t n = readlinkat(parent, name, target, sizeof(target) - 1);
        if (n >= 0) {
          target[n] = '\0';
          char *next = target[0] == '/' ? xasprintf("%s%s", target, cur + pos)
                                        : xasprintf("%.*s%s%s", (int)start, cur, target, cur + pos);
          free(cur);
          cur = next;
          restarted = true;
          break;
        }
        const char *rest = cur + pos;
        while (*rest == '/')
          rest++;
        bool last = *rest == '\0';
        if (create_component(parent, name, last && create == RRT_CREATE_FILE) < 0)
          return rrt_error_errno(err, "create %s in the rootfs", prefix);
        fd = openat2_path(rootfd, prefix, IN_ROOT);
        if (fd < 0)
          return rrt_error_errno(err, "open %s in the rootfs", prefix);
      }
      close(parent);
      parent = fd;
    }
    if (!restarted)
      return steal_fd(&parent);
  }
  return rrt_error_set(err, ELOOP, "create %s in the rootfs", path);
}

int rrt_open_in_root(int rootfd, const char *path, enum rrt_create create, struct rrt_error *err)
{
  int fd = openat2_path(rootfd, path, IN_ROOT);
  if (fd >= 0)
    return fd;
  if (errno != ENOENT || create == RRT_CREATE_NONE)
    return rrt_error_errno(err, "open %s in the rootfs", path);
  return create_in_root(rootfd, path, create, err);
}

unsigned long rrt_mount_flags_of(int fd)
{
  static const struct {
    unsigned long st, ms;
  } map[] = {
      {ST_RDONLY, MS_RDONLY},     {ST_NOSUID, MS_NOSUID},           {ST_NODEV, MS_NODEV},
      {ST_NOEXEC, MS_NOEXEC},     {ST_NOATIME, MS_NOATIME},         {ST_NODIRATIME, MS_NODIRATIME},
      {ST_RELATIME, MS_RELATIME}, {ST_SYNCHRONOUS, MS_SYNCHRONOUS}, {ST_MANDLOCK, MS_MANDLOCK},
  };
  struct statvfs sv;
  if (fstatvfs(fd, &sv) < 0)
    return 0;
  unsigned long flags = 0;
  for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
    if (sv.f_flag & map[i].st)
      flags |= map[i].ms;
  /* ST_NOSYMFOLLOW is 0x2000 since Linux 5.10; glibc 2.36 lacks the name. */
  if (sv.f_flag & 0x2000)
    flags |= MS_NOSYMFOLLOW;
  return flags;
}

int rrt_bind_fd(int srcfd, int dstfd, bool recursive, struct rrt_error *err)
{
  char src[RRT_FD_PATH_MAX], dst[RRT_FD_PATH_MAX];
  unsigned long flags = MS_BIND | (recursive ? MS_REC : 0);
  if (mount(rrt_fd_path(srcfd, src), rrt_fd_path(dstfd, dst), NULL, flags, NULL) < 0)
    return rrt_error_errno(err, "mount");
  return 0;
}

int rrt_remount_bind(int fd, unsigned long flags, int locked_from, struct rrt_error *err)
{
  char target[RRT_FD_PATH_MAX];
  rrt_fd_path(fd, target);
  if (mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | flags, NULL) == 0)
    return 0;
  if (errno != EPERM || locked_from < 0)
    return rrt_error_errno(err, "remount");
  /* A user namespace cannot clear flags its creator's mount had: keep them. */
  unsigned long locked = rrt_mount_flags_of(locked_from);
  unsigned long retry = flags | (locked & ~RRT_ATIME_FLAGS);
  if (locked & RRT_ATIME_FLAGS)
    retry = (retry & ~RRT_ATIME_FLAGS) | (locked & RRT_ATIME_FLAGS);
  if (retry != flags) {
    rrt_debug("remount: keeping locked mount flags 0x%lx", retry & ~flags);
    if (mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | retry, NULL) == 0)
      return 0;
  }
  return rrt_error_errno(err, "remount");
}

int rrt_make_readonly(int fd, bool recursive, struct rrt_error *err)
{
  struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
  unsigned int at = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  /* mount_setattr changes only the read-only bit, so locked flags never
   * need to be reasserted; the remount is for kernels before 5.12. */
  if (mount_setattr(fd, "", at, &attr, sizeof(attr)) == 0)
    return 0;
  if (errno != ENOSYS)
    return rrt_error_errno(err, "mount_setattr read-only");
  return rrt_remount_bind(fd, rrt_mount_flags_of(fd) | MS_RDONLY, fd, err);
}

/* Binds srcfd onto dstfd (which is `path` inside rootfd), optionally made
 * read-only while still detached, so it is never visible writable. */
int rrt_bind_tree(int rootfd, const char *path, int srcfd, int dstfd, bool readonly,
                  struct rrt_error *err)
{
  unsigned int flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE;
  cleanup_close int tree = open_tree(srcfd, "", flags);
  if (tree < 0 && errno == ENOSYS) {
    if (rrt_bind_fd(srcfd, dstfd, true, err) < 0)
      return -1;
    if (!readonly)
      return 0;
    cleanup_close int fd = rrt_open_in_root(rootfd, path, RRT_CREATE_NONE, err);
    return fd < 0 ? -1 : rrt_make_readonly(fd, false, err);
  }
  if (tree < 0)
    return rrt_error_errno(err, "open_tree");
  if (readonly && rrt_make_readonly(tree, true, err) < 0)
    return -1;
  if (move_mount(tree, "", dstfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "move_mount");
  return 0;
}

/* A new superblock (tmpfs, proc, devpts, ...) on a directory inside the rootfs. */
int rrt_fs_mount(int rootfd, const char *dest, const char *source, const char *type,
                 unsigned long flags, const char *data, struct rrt_error *err)
{
  cleanup_close int dstfd = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
  if (dstfd < 0)
    return -1;
  char target[RRT_FD_PATH_MAX];
  flags &= ~(MS_BIND | MS_REC | MS_REMOUNT);
  if (mount(source ? source : type, rrt_fd_path(dstfd, target), type, flags, data) < 0)
    return rrt_error_errno(err, "mount");
  return 0;
}

/* A directory is masked by an empty read-only tmpfs, made detached with the
 * new mount API so that no /proc is needed to name the target. */
int rrt_mask_dir(int fd, struct rrt_error *err)
{
  unsigned int attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  cleanup_close int fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0 && errno == ENOSYS) {
    char target[RRT_FD_PATH_MAX];
    if (mount("tmpfs", rrt_fd_path(fd, target), "tmpfs",
              MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
      return rrt_error_errno(err, "mount tmpfs");
    return 0;
  }
  if (fsfd < 0)
    return rrt_error_errno(err, "fsopen tmpfs");
  if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return rrt_error_errno(err, "create tmpfs");
  cleanup_close int mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
  if (mfd < 0)
    return rrt_error_errno(err, "fsmount tmpfs");
  if (move_mount(mfd, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "move_mount tmpfs");
  return 0;
}

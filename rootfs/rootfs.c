/* rootfs.c: the container's mounts, pivot_root, masked and read-only paths. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/image.h"
#include "rootlessrt/log.h"
#include "rootlessrt/rootfs.h"
#include "rootlessrt/util.h"

/* Per-mount flags a bind remount can change; the rest of a mount's option
 * flags only mean something to a new superblock. */
#define BIND_REMOUNT_FLAGS                                                                         \
  (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME |       \
   MS_STRICTATIME | MS_NOSYMFOLLOW)
static bool streq(const char *a, const char *b)
{
  return a && b && strcmp(a, b) == 0;
}

/* "/etc//resolv.conf/" and "/etc/resolv.conf" name the same destination. */
static bool same_path(const char *a, const char *b)
{
  for (;;) {
    while (*a == '/' && (a[1] == '/' || a[1] == '\0'))
      a++;
    while (*b == '/' && (b[1] == '/' || b[1] == '\0'))
      b++;
    if (*a != *b)
      return false;
    if (!*a)
      return true;
    a++, b++;
  }
}

static bool has_option(const struct rrt_mount *m, const char *opt)
{
  for (size_t i = 0; i < m->options.n && m->options.v[i]; i++)
    if (strcmp(m->options.v[i], opt) == 0)
      return true;
  return false;
}

/* Source flags stay unless the config clears them; atime is all or nothing. */
static unsigned long inherit_flags(unsigned long src, const struct rrt_mount_opts *o,
                                   unsigned long extra)
{
  unsigned long want = (o->flags | extra) & BIND_REMOUNT_FLAGS;
  unsigned long keep = src & BIND_REMOUNT_FLAGS & ~o->clear_flags;
  if (want & RRT_ATIME_FLAGS)
    keep &= ~RRT_ATIME_FLAGS;
  return want | keep;
}

static int set_propagation(int fd, unsigned long propagation, struct rrt_error *err)
{
  char target[RRT_FD_PATH_MAX];
  if (mount(NULL, rrt_fd_path(fd, target), NULL, propagation, NULL) < 0)
    return rrt_error_errno(err, "set propagation");
  return 0;
}

/*
 * A bind mount of `source` (a host path, relative ones against the cwd, which
 * the caller set to the bundle) onto `dest` inside the rootfs, then the
 * remount that applies ro/nosuid/... (a bind ignores them), then propagation.
 */
static int bind_mount(int rootfd, const char *dest, const char *source, int tree, bool recursive,
                      const struct rrt_mount_opts *o, unsigned long extra, struct rrt_error *err)
{
  if (!source && tree < 0)
    return rrt_error_set(err, EINVAL, "bind mount without a source");
  /* The path first: a bind made here keeps the host's mount flags locked and its submounts
   * covered. Only what our credentials cannot reach comes from the clone the runtime made with
   * its own (hostfds.h); no source: the clone only (an idmapped one). */
  cleanup_close int own = source ? open(source, O_PATH | O_CLOEXEC) : -1;
  int srcfd = own;
  if (source && own < 0 && ((errno != EACCES && errno != EPERM) || tree < 0))
    return rrt_error_errno(err, "open source %s", source);
  if (!source)
    source = "(idmapped)";
  if (own >= 0)
    tree = -1;
  else
    srcfd = tree;
  struct stat st;
  if (fstat(srcfd, &st) < 0)
    return rrt_error_errno(err, "stat source %s", source);
  enum rrt_create kind = S_ISDIR(st.st_mode) ? RRT_CREATE_DIR : RRT_CREATE_FILE;
  cleanup_close int dstfd = rrt_open_in_root(rootfd, dest, kind, err);
  if (dstfd < 0)
    return -1;
  if (tree >= 0 &&
      move_mount(tree, "", dstfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "move_mount %s", source);
  if (tree < 0 && rrt_bind_fd(srcfd, dstfd, recursive, err) < 0)
    return -1;
  /* The old fd names the directory under the new mount: reopen. */
  close(dstfd);
  dstfd = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
  if (dstfd < 0)
    return -1;
  if (((o->flags | extra) & BIND_REMOUNT_FLAGS) || (o->clear_flags & BIND_REMOUNT_FLAGS)) {
    unsigned long flags = inherit_flags(rrt_mount_flags_of(srcfd), o, extra);
    if (rrt_remount_bind(dstfd, flags, srcfd, err) < 0)
      return -1;
  }
  if (o->propagation && set_propagation(dstfd, o->propagation, err) < 0)
    return -1;
  return 0;
}

/*
 * proc and sysfs must land on a real directory: were /proc a symlink (to
 * somewhere maskedPaths do not cover) the masks would protect nothing
 * (CVE-2023-27561). The last component is opened with RESOLVE_NO_SYMLINKS.
 */
static int check_not_symlink(int rootfd, const char *dest, const char *type, struct rrt_error *err)
{
  cleanup_free char *dir = xstrdup(dest);
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/')
    dir[--len] = '\0';
  char *slash = strrchr(dir, '/');
  if (!slash || !slash[1])
    return rrt_error_set(err, EINVAL, "mount %s: bad destination %s", type, dest);
  cleanup_free char *base = xstrdup(slash + 1);
  slash[1] = '\0';
  cleanup_close int dirfd = rrt_open_in_root(rootfd, dir, RRT_CREATE_DIR, err);
  if (dirfd < 0)
    return -1;
  if (mkdirat(dirfd, base, 0755) < 0 && errno != EEXIST)
    return rrt_error_errno(err, "create %s in the rootfs", dest);
  struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                         .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
  cleanup_close int fd = (int)syscall(SYS_openat2, dirfd, base, &how, sizeof(how));
  if (fd < 0 && errno == ELOOP)
    return rrt_error_set(err, 0,
                         "mount %s: %s in the rootfs is a symlink: it must be mounted on "
                         "ordinary directory",
                         type, dest);
  if (fd < 0)
    return rrt_error_errno(err, "open %s in the rootfs", dest);
  return 0;
}

/* "mode=0620,gid=5,ptmxmode=0666" -> "mode=0620,ptmxmode=0666". */
static char *strip_gid_option(const char *data)
{
  static const char *const gid[] = {"gid=", NULL};
  return rrt_opts_without(data, gid);
}

/* The recursive mount flags, each with the option that sets it and the one that clears it. */
static const struct {
  const char *on, *off;
  uint64_t flag;
} recursive_flags[] = {
    {"rro", "rrw", MOUNT_ATTR_RDONLY},
    {"rnosuid", "rsuid", MOUNT_ATTR_NOSUID},
    {"rnodev", "rdev", MOUNT_ATTR_NODEV},
    {"rnoexec", "rexec", MOUNT_ATTR_NOEXEC},
    {"rnodiratime", "rdiratime", MOUNT_ATTR_NODIRATIME},
    {"rnosymfollow", "rsymfollow", MOUNT_ATTR_NOSYMFOLLOW},
};

/* The atime mode is one field: each of these options sets it whole. */
static const struct {
  const char *name;
  uint64_t mode;
} recursive_atime[] = {
    {"rnoatime", MOUNT_ATTR_NOATIME},        {"rstrictatime", MOUNT_ATTR_STRICTATIME},
    {"rrelatime", MOUNT_ATTR_RELATIME},      {"ratime", MOUNT_ATTR_RELATIME},
    {"rnorelatime", MOUNT_ATTR_STRICTATIME}, {"rnostrictatime", MOUNT_ATTR_RELATIME},
};

/* Adds one option to attr when it is a recursive one; a later option wins over an earlier. */
static void add_recursive_attr(const char *opt, struct mount_attr *attr)
{
  for (size_t j = 0; j < sizeof(recursive_flags) / sizeof(recursive_flags[0]); j++) {
    uint64_t f = recursive_flags[j].flag;
    if (strcmp(opt, recursive_flags[j].on) == 0) {
      attr->attr_set |= f;
      attr->attr_clr &= ~f;
    } else if (strcmp(opt, recursive_flags[j].off) == 0) {
      attr->attr_clr |= f;
      attr->attr_set &= ~f;
    }
  }
  for (size_t j = 0; j < sizeof(recursive_atime) / sizeof(recursive_atime[0]); j++)
    if (strcmp(opt, recursive_atime[j].name) == 0) {
      attr->attr_set = (attr->attr_set & ~(uint64_t)MOUNT_ATTR__ATIME) | recursive_atime[j].mode;
      attr->attr_clr |= MOUNT_ATTR__ATIME;
    }
}

/* rro, rnosuid, ...: mount_setattr(AT_RECURSIVE) over the whole new tree. "ro" is mount(2)'s
 * flag and applies to the top mount only, also on an rbind (config.md): "rro" is the recursive
 * one. */
static int apply_recursive_attrs(int rootfd, const struct rrt_mount *m, struct rrt_error *err)
{
  struct mount_attr attr = {0};
  for (size_t i = 0; i < m->options.n && m->options.v[i]; i++)
    add_recursive_attr(m->options.v[i], &attr);
  if (!attr.attr_set && !attr.attr_clr)
    return 0;
  cleanup_close int fd = rrt_open_in_root(rootfd, m->destination, RRT_CREATE_NONE, err);
  if (fd < 0)
    return -1;
  if (mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
    return rrt_error_errno(err, "mount_setattr");
  return 0;
}

/* An overlay inside the rootfs (image/overlay.c): fuse-overlayfs needs the target as a path. */
static int overlay_mount(const struct rrt_rootfs_ctx *ctx, int rootfd, const char *dest,
                         const struct rrt_mount_opts *o, struct rrt_error *err)
{
  cleanup_close int dstfd = rrt_open_in_root(rootfd, dest, RRT_CREATE_DIR, err);
  if (dstfd < 0)
    return -1;
  char fdpath[RRT_FD_PATH_MAX], target[4096];
  ssize_t n = readlink(rrt_fd_path(dstfd, fdpath), target, sizeof(target) - 1);
  if (n < 0)
    return rrt_error_errno(err, "readlink %s", fdpath);
  target[n] = '\0';
  return rrt_overlay_mount(ctx->spec, ctx->userns, target, o->flags & ~(MS_BIND | MS_REC), o->data,
                           err);
}

static int mount_special(const struct rrt_rootfs_ctx *ctx, int rootfd, const struct rrt_mount *m,
                         const struct rrt_mount_opts *o, struct rrt_error *err)
{
  const char *type = m->type;
  const char *dest = m->destination;
  int r;

  if (streq(type, "proc") || streq(type, "sysfs"))
    if (check_not_symlink(rootfd, dest, type, err) < 0)
      return -1;
  if (streq(type, "overlay"))
    return overlay_mount(ctx, rootfd, dest, o, err);

  if (streq(type, "cgroup") || streq(type, "cgroup2"))
    return rrt_mount_cgroup(ctx, rootfd, m, o, err);

  if (streq(type, "tmpfs") && has_option(m, "tmpcopyup"))
    return rrt_tmpfs_copyup(rootfd, dest, m->source, o->flags, o->data, err);
  r = rrt_fs_mount(rootfd, dest, m->source, type, o->flags, o->data, err);
  if (r == 0 || !ctx->userns)
    return r;

  int errnum = err->errnum;
  if (streq(type, "sysfs") && errnum == EPERM) {
    /* sysfs needs a network namespace owned by our user namespace, and none is given where
     * the /sys outside has masked paths (a CI job's container): said so when nested. */
    if (ctx->nested && ctx->new_netns)
      rrt_warn("mount sysfs on %s: %s (the /sys outside has %zu masked or read-only paths); "
               "binding that /sys instead, its masks kept",
               dest, rrt_error_msg(err), rrt_rootfs_mounts_below("/sys"));
    else if (ctx->nested)
      rrt_warn("mount sysfs on %s: %s (no network namespace of the container's); binding the "
               "/sys outside instead, its masks kept",
               dest, rrt_error_msg(err));
    else
      rrt_debug("mount sysfs on %s: %s; binding /sys", dest, rrt_error_msg(err));
    rrt_error_clear(err);
    if (bind_mount(rootfd, dest, "/sys", -1, true, o, 0, err) < 0)
      return -1;
    /* "ro" means the whole tree; the host's cgroups are the cgroup mount's business. */
    cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
    if (fd < 0 || ((o->flags & MS_RDONLY) && rrt_make_readonly(fd, true, err) < 0))
      return -1;
    return rrt_mask_host_cgroups(rootfd, dest, err);
  }
  if (streq(type, "proc") && errnum == EPERM && ctx->new_pidns) {
    /* Nested in another engine's container, whose /proc has masked paths: the kernel refuses
     * a fresh proc that would show what they hide (mount_too_revealing). Its /proc, bound with
     * every submount (those masks, its read-only paths), is what the container can have; the
     * config's own masks follow. It shows the processes outside the pid namespace, but none of
     * them can be signalled (not in the container's pid namespace) nor read beyond what ps
     * shows (another user namespace's processes). */
    size_t masks = rrt_rootfs_mounts_below("/proc");
    cleanup_free char *why =
        masks ? xasprintf("the /proc outside has %zu masked or read-only paths", masks)
              : xstrdup("the kernel refuses a fresh proc here");
    rrt_warn("mount proc on %s: %s (%s); binding that /proc instead, its masks kept: the "
             "container sees the processes outside its pid namespace",
             dest, rrt_error_msg(err), why);
    rrt_error_clear(err);
    return bind_mount(rootfd, dest, "/proc", -1, true, o, 0, err);
  }
  if (streq(type, "proc") && errnum == EPERM) {
    rrt_warn("mount proc on %s: %s; binding the host /proc instead", dest, rrt_error_msg(err));
    rrt_error_clear(err);
    return bind_mount(rootfd, dest, "/proc", -1, true, o, 0, err);
  }
  if (streq(type, "mqueue")) {
    /* mqueue needs an IPC namespace owned by our user namespace. */
    if (access("/dev/mqueue", F_OK) < 0) {
      rrt_warn("mount mqueue on %s: %s; the host has no /dev/mqueue to bind, skipping", dest,
               rrt_error_msg(err));
      rrt_error_clear(err);
      return 0;
    }
    rrt_error_clear(err);
    return bind_mount(rootfd, dest, "/dev/mqueue", -1, false, o, 0, err);
  }
  if (streq(type, "devpts") && errnum == EINVAL && o->data && strstr(o->data, "gid=")) {
    /* gid=5 (tty) is usually not mapped into a rootless user namespace. */
    cleanup_free char *data = strip_gid_option(o->data);
    rrt_debug("mount devpts on %s: %s; retrying without gid=", dest, rrt_error_msg(err));
    rrt_error_clear(err);
    return rrt_fs_mount(rootfd, dest, m->source, type, o->flags, data, err);
  }
  return r;
}

/* path lies strictly below dir ("/dev/pts" below "/dev", "/dev" not below itself). */
static bool is_below(const char *path, const char *dir)
{
  while (*dir == '/')
    dir++;
  while (*path == '/')
    path++;
  size_t n = strlen(dir);
  while (n > 0 && dir[n - 1] == '/')
    n--;
  if (strncmp(path, dir, n) != 0 || (n > 0 && path[n] != '/'))
    return false;
  path += n;
  while (*path == '/')
    path++;
  return *path != '\0';
}

/* Whether the runtime makes something under mounts[index] after it: a later mount, a device,
 * the default nodes and links in /dev, the console, resolv.conf. A read-only mount there is
 * made read-only only once they are in (runc likewise: "create /dev/pts: Read-only file
 * system" otherwise). Not for proc, sysfs and cgroup mounts, whose "ro" also covers what the
 * fallbacks bind under them. */
static bool made_under_later(const struct rrt_rootfs_ctx *ctx, size_t index)
{
  const struct rrt_spec *spec = ctx->spec;
  const struct rrt_mount *m = &spec->mounts[index];
  const char *dest = m->destination;
  if (streq(m->type, "proc") || streq(m->type, "sysfs") || streq(m->type, "cgroup") ||
      streq(m->type, "cgroup2") || streq(m->type, "overlay"))
    return false;
  for (size_t j = index + 1; j < spec->n_mounts; j++)
    if (is_below(spec->mounts[j].destination, dest))
      return true;
  for (size_t j = 0; spec->has_linux && j < spec->lnx.n_devices; j++)
    if (spec->lnx.devices[j].path && is_below(spec->lnx.devices[j].path, dest))
      return true;
  if (ctx->resolv_conf && is_below("/etc/resolv.conf", dest))
    return true;
  return is_below("/dev/null", dest);
}

/* An idmapped bind (idmap.c): the clone the runtime made on the host side (real root), or,
 * without one, made here with the container's own user namespace, where the kernel allows it
 * (a filesystem of that user namespace's), and otherwise an error naming the filesystem. */
static int idmapped_bind(const struct rrt_rootfs_ctx *ctx, int rootfd, size_t index,
                         const struct rrt_mount_opts *o, struct rrt_error *err)
{
  const struct rrt_mount *m = &ctx->spec->mounts[index];
  if (!(o->bind || streq(m->type, "bind")) || !m->source)
    return rrt_error_set(err, EINVAL, "idmap: only a bind mount (with a source) can be idmapped");
  cleanup_close int own = -1;
  int tree = ctx->mount_fds ? ctx->mount_fds[index] : -1;
  if (tree < 0) {
    if (m->uid_mappings.n)
      return rrt_error_set(err, EPERM,
                           "uidMappings and gidMappings of a mount need real root (a user "
                           "namespace with any mapping); without them, idmap takes the "
                           "container's");
    cleanup_close int ns = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    if (ns < 0)
      return rrt_error_errno(err, "open /proc/self/ns/user");
    own = rrt_idmap_clone(m->source, o->rbind, rrt_mount_idmap_recursive(m), ns, err);
    if (own < 0)
      return -1;
    tree = own;
  }
  return bind_mount(rootfd, m->destination, NULL, tree, o->rbind, o, 0, err);
}

/* *defer_ro: asked to leave "ro" for later (made_under_later); false when it has none. */
static int mount_one(const struct rrt_rootfs_ctx *ctx, int rootfd, size_t index, bool *defer_ro,
                     struct rrt_error *err)
{
  const struct rrt_mount *m = &ctx->spec->mounts[index];
  struct rrt_mount_opts o;
  if (rrt_mount_opts_parse(&m->options, &o, err) < 0)
    return -1;
  *defer_ro = *defer_ro && (o.flags & MS_RDONLY);
  if (*defer_ro)
    o.flags &= ~(unsigned long)MS_RDONLY;
  int r = -1;
  /* /proc and /sys must be real directories whatever is mounted there: a
   * rootless /sys (or /proc without a pid namespace) is a bind of the
   * host's, and the masks below would miss it behind a symlink
   * (CVE-2023-27561). proc and sysfs mounts are checked in mount_special. */
  bool bind = o.bind || streq(m->type, "bind");
  if (bind && (same_path(m->destination, "/proc") || same_path(m->destination, "/sys")) &&
      check_not_symlink(rootfd, m->destination, "bind", err) < 0) {
    r = -1;
  } else if (rrt_mount_idmapped(m)) {
    r = idmapped_bind(ctx, rootfd, index, &o, err);
  } else if (o.bind || streq(m->type, "bind")) {
    int tree = ctx->mount_fds ? ctx->mount_fds[index] : -1;
    r = bind_mount(rootfd, m->destination, m->source, tree, o.rbind, &o, 0, err);
    /* The host's /sys with a cgroup namespace: its cgroups are not the container's. */
    if (r == 0 && o.rbind && ctx->new_cgroupns && same_path(m->source, "/sys"))
      r = rrt_mask_host_cgroups(rootfd, m->destination, err);
    /* Without one, the hierarchies' roots would show every other container's cgroups. */
    else if (r == 0 && o.rbind && same_path(m->source, "/sys"))
      r = rrt_own_cgroups_under_sys(rootfd, m->destination, err);
  } else if (!m->type || streq(m->type, "none")) {
    r = rrt_error_set(err, EINVAL, "no type and no bind option");
  } else {
    r = mount_special(ctx, rootfd, m, &o, err);
    if (r == 0 && o.propagation) {
      cleanup_close int fd = rrt_open_in_root(rootfd, m->destination, RRT_CREATE_NONE, err);
      r = fd < 0 ? -1 : set_propagation(fd, o.propagation, err);
    }
  }
  if (r == 0)
    r = apply_recursive_attrs(rootfd, m, err);
  rrt_mount_opts_free(&o);
  return r;
}

static bool is_dev_bind(const struct rrt_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++) {
    const struct rrt_mount *m = &spec->mounts[i];
    if (!same_path(m->destination, "/dev"))
      continue;
    if (streq(m->type, "bind") || has_option(m, "bind") || has_option(m, "rbind"))
      return true;
  }
  return false;
}

static int mount_root_overlay(const struct rrt_rootfs_ctx *ctx, const struct rrt_mount *m,
                              struct rrt_error *err)
{
  struct rrt_mount_opts o;
  if (rrt_mount_opts_parse(&m->options, &o, err) < 0)
    return rrt_error_wrap(err, "the overlay on /");
  int r = rrt_overlay_mount(ctx->spec, ctx->userns, ctx->rootfs, o.flags & ~(MS_BIND | MS_REC),
                            o.data, err);
  rrt_mount_opts_free(&o);
  return r < 0 ? rrt_error_wrap(err, "the overlay on / (%s)", ctx->rootfs) : 0;
}

/* A copy of resolv.conf on a small tmpfs of the container's own (a detached mount): an O_PATH
 * tree of the file; -1 with err unset where the kernel cannot make one (then errno says why). */
static int resolv_copy(const struct rrt_rootfs_ctx *ctx, struct rrt_error *err)
{
  /* The path first; the clone the runtime made is for when init cannot open it (real root's
   * user namespace and the state directory). */
  char path[RRT_FD_PATH_MAX];
  cleanup_close int in = open(ctx->resolv_conf, O_RDONLY | O_CLOEXEC);
  if (in < 0 && (errno == EACCES || errno == EPERM) && ctx->resolv_fd >= 0)
    in = open(rrt_fd_path(ctx->resolv_fd, path), O_RDONLY | O_CLOEXEC);
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (in < 0 || rrt_read_fd(in, &text, &len, NULL) < 0)
    return rrt_error_errno(err, "read");
  cleanup_close int fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0 || fsconfig(fsfd, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
      fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return -1;
  unsigned int attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  cleanup_close int mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, attrs);
  if (mfd < 0)
    return -1;
  cleanup_close int out =
      openat(mfd, "resolv.conf", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (out < 0 || rrt_write_all(out, text, len) < 0)
    return rrt_error_errno(err, "write its copy");
  return open_tree(mfd, "resolv.conf", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
}

/* /etc/resolv.conf (--network slirp), read-only. Not a bind of the file in the state directory:
 * a container root with CAP_SYS_ADMIN may remount its own mounts writable, and would then write
 * into the caller's runtime directory; the copy it could write is in its own memory. */
static int mount_resolv_conf(const struct rrt_rootfs_ctx *ctx, int rootfd, struct rrt_error *err)
{
  cleanup_close int tree = resolv_copy(ctx, err);
  if (tree < 0 && err->msg)
    return -1;
  if (tree < 0) { /* an older kernel: the file itself, read-only */
    rrt_debug("resolv.conf: no copy on a tmpfs (%s): binding the file", strerror(errno));
    struct rrt_mount_opts none = {0};
    unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    return bind_mount(rootfd, "/etc/resolv.conf", ctx->resolv_conf, ctx->resolv_fd, false, &none,
                      ro, err);
  }
  if (rrt_make_readonly(tree, false, err) < 0)
    return -1;
  cleanup_close int dstfd = rrt_open_in_root(rootfd, "/etc/resolv.conf", RRT_CREATE_FILE, err);
  if (dstfd < 0)
    return -1;
  if (move_mount(tree, "", dstfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "move_mount");
  return 0;
}

/* The "ro" of the mounts made read-write while the runtime made things under them: the top
 * mount only, as mount(2)'s flag means. A later mount on the same destination covers it: the
 * mount the path shows then is that one, which had its own options. */
static int readonly_deferred(const struct rrt_spec *spec, int rootfd, const bool *deferred,
                             struct rrt_error *err)
{
  for (size_t i = 0; i < spec->n_mounts; i++) {
    if (!deferred[i])
      continue;
    bool covered = false;
    for (size_t j = i + 1; j < spec->n_mounts; j++)
      covered = covered || same_path(spec->mounts[j].destination, spec->mounts[i].destination);
    if (covered)
      continue;
    const char *dest = spec->mounts[i].destination;
    cleanup_close int fd = rrt_open_in_root(rootfd, dest, RRT_CREATE_NONE, err);
    if (fd < 0 || rrt_make_readonly(fd, false, err) < 0)
      return rrt_error_wrap(err, "mounts[%zu] (%s): ro", i, dest);
  }
  return 0;
}

int rrt_rootfs_prepare(const struct rrt_rootfs_ctx *ctx, struct rrt_error *err)
{
  const struct rrt_spec *spec = ctx->spec;
  const char *prop = spec->has_linux ? spec->lnx.rootfs_propagation : NULL;
  /* Nothing mounted from here on may reach the host: / becomes a slave (host mounts still
   * flow in) unless the config asks for private, or for shared: then the tree stays in the
   * host's peer groups, so that a volume bound with "rshared" is a peer of its source (what
   * runc and crun give, and CRI's bidirectional mount propagation needs), and only the mount
   * the rootfs lies on is made private. The requested rootfsPropagation itself is applied
   * after pivot_root, which refuses shared mounts. */
  bool shared = streq(prop, "shared") || streq(prop, "rshared");
  unsigned long root_flags = MS_REC | MS_SLAVE;
  if (streq(prop, "private") || streq(prop, "rprivate"))
    root_flags = MS_REC | MS_PRIVATE;
  if (shared)
    root_flags = MS_REC | MS_SHARED;
  if (mount(NULL, "/", NULL, root_flags, NULL) < 0)
    return rrt_error_errno(err, "make / %s",
                           shared                    ? "rshared"
                           : root_flags & MS_PRIVATE ? "rprivate"
                                                     : "rslave");
  if (shared && rrt_rootfs_parent_private(ctx->rootfs, err) < 0)
    return rrt_error_wrap(err, "linux.rootfsPropagation (%s)", prop);

  /* pivot_root needs the new root to be a mount point: the config's overlay on "/", or the
   * rootfs bound onto itself. */
  const struct rrt_mount *root_overlay = rrt_overlay_root_mount(spec);
  if (root_overlay) {
    if (mount_root_overlay(ctx, root_overlay, err) < 0)
      return -1;
  } else if (mount(ctx->rootfs, ctx->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0) {
    return rrt_error_errno(err, "bind mount the rootfs %s onto itself", ctx->rootfs);
  }
  cleanup_close int rootfd = open(ctx->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return rrt_error_errno(err, "open the rootfs %s", ctx->rootfs);

  bool covers_resolv = false;
  cleanup_free bool *deferred = xcalloc(spec->n_mounts + 1, sizeof(bool));
  for (size_t i = 0; i < spec->n_mounts; i++) {
    const struct rrt_mount *m = &spec->mounts[i];
    if (m == root_overlay)
      continue;
    deferred[i] = made_under_later(ctx, i);
    if (mount_one(ctx, rootfd, i, &deferred[i], err) < 0)
      return rrt_error_wrap(err, "mounts[%zu] (%s, %s)", i, m->destination,
                            m->type ? m->type : "bind");
    if (same_path(m->destination, "/etc/resolv.conf"))
      covers_resolv = true;
  }

  if (ctx->resolv_conf && !covers_resolv && mount_resolv_conf(ctx, rootfd, err) < 0)
    return rrt_error_wrap(err, "%s onto /etc/resolv.conf", ctx->resolv_conf);

  if (rrt_dev_setup(ctx, rootfd, !is_dev_bind(spec), err) < 0)
    return -1;
  return readonly_deferred(spec, rootfd, deferred, err);
}

int rrt_rootfs_pivot(const struct rrt_rootfs_ctx *ctx, bool no_pivot, struct rrt_error *err)
{
  if (chdir(ctx->rootfs) < 0)
    return rrt_error_errno(err, "chdir %s", ctx->rootfs);
  if (no_pivot) {
    if (rrt_rootfs_detach_host(ctx->rootfs, err) < 0)
      return -1;
    if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
      return rrt_error_errno(err, "move %s to /", ctx->rootfs);
    if (chroot(".") < 0)
      return rrt_error_errno(err, "chroot %s", ctx->rootfs);
  } else {
    cleanup_close int oldroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (oldroot < 0)
      return rrt_error_errno(err, "open /");
    /* pivot_root(".", ".") stacks the old root on the new one, so no
     * directory inside the rootfs has to be set aside for it. */
    if (syscall(SYS_pivot_root, ".", ".") < 0)
      return rrt_error_errno(err, "pivot_root %s", ctx->rootfs);
    /* The lazy unmount must not propagate to any peer of the old root. Through the fd: a
     * mount(2) of "." would name the new root under it (only umount2 follows to the mount on
     * top), and make every volume a slave, cut from the peer group "rshared" asked for. */
    struct mount_attr slave = {.propagation = MS_SLAVE};
    if (mount_setattr(oldroot, "", AT_EMPTY_PATH | AT_RECURSIVE, &slave, sizeof(slave)) < 0 &&
        (errno != ENOSYS || mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0))
      return rrt_error_errno(err, "make the old root rslave");
    if (umount2(".", MNT_DETACH) < 0)
      return rrt_error_errno(err, "unmount the old root");
  }
  if (chdir("/") < 0)
    return rrt_error_errno(err, "chdir /");
  return 0;
}

/* /dev/null as the container sees it, refused unless it is char 1:3: a
 * rootfs could make it a link to a file that the "mask" would then expose
 * writable over the masked path (CVE-2025-31133). */
static int open_dev_null(int rootfd, struct rrt_error *err)
{
  cleanup_close int fd = rrt_open_in_root(rootfd, "/dev/null", RRT_CREATE_NONE, err);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat(fd, &st) < 0)
    return rrt_error_errno(err, "stat /dev/null");
  if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 || minor(st.st_rdev) != 3)
    return rrt_error_set(err, 0, "/dev/null is not the null device (char 1:3)");
  return steal_fd(&fd);
}

/* Calls fn with each of paths (the config's list `what`) that the rootfs has, opened; a path it
 * does not have (ENOENT, ENOTDIR) has nothing to hide or protect. An error names the entry. */
static int each_listed_path(int rootfd, const struct rrt_strv *paths, const char *what,
                            int (*fn)(int rootfd, const char *p, int fd, void *arg,
                                      struct rrt_error *err),
                            void *arg, struct rrt_error *err)
{
  for (size_t i = 0; i < paths->n && paths->v[i]; i++) {
    const char *p = paths->v[i];
    cleanup_close int fd = rrt_open_in_root(rootfd, p, RRT_CREATE_NONE, err);
    if (fd < 0 && (err->errnum == ENOENT || err->errnum == ENOTDIR)) {
      rrt_error_clear(err);
      continue;
    }
    if (fd < 0 || fn(rootfd, p, fd, arg, err) < 0)
      return rrt_error_wrap(err, "%s[%zu] (%s)", what, i, p);
  }
  return 0;
}

/* A masked directory gets an empty read-only tmpfs, anything else /dev/null (opened once, in
 * *devnull) bound over it. */
static int mask_one(int rootfd, const char *p, int fd, void *devnull_fd, struct rrt_error *err)
{
  int *devnull = devnull_fd;
  struct stat st;
  if (fstat(fd, &st) < 0)
    return rrt_error_errno(err, "stat");
  if (S_ISDIR(st.st_mode))
    return rrt_mask_dir(fd, err);
  if (*devnull < 0)
    *devnull = open_dev_null(rootfd, err);
  return *devnull < 0 ? -1 : rrt_bind_tree(rootfd, p, *devnull, fd, true, err);
}

static int mask_paths(int rootfd, const struct rrt_strv *paths, struct rrt_error *err)
{
  cleanup_close int devnull = -1;
  return each_listed_path(rootfd, paths, "linux.maskedPaths", mask_one, &devnull, err);
}

static int readonly_one(int rootfd, const char *p, int fd, void *arg, struct rrt_error *err)
{
  return rrt_bind_tree(rootfd, p, fd, fd, true, err);
}

static int readonly_paths(int rootfd, const struct rrt_strv *paths, struct rrt_error *err)
{
  return each_listed_path(rootfd, paths, "linux.readonlyPaths", readonly_one, NULL, err);
}

static int propagation_flags(const char *name, unsigned long *out)
{
  static const struct {
    const char *name;
    unsigned long flags;
  } map[] = {
      {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
      {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
      {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
      {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
  };
  for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
    if (strcmp(map[i].name, name) == 0) {
      *out = map[i].flags;
      return 0;
    }
  return -1;
}

int rrt_rootfs_finalize(const struct rrt_rootfs_ctx *ctx, struct rrt_error *err)
{
  const struct rrt_spec *spec = ctx->spec;
  cleanup_close int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return rrt_error_errno(err, "open /");
  if (spec->has_linux) {
    if (mask_paths(rootfd, &spec->lnx.masked_paths, err) < 0)
      return -1;
    if (readonly_paths(rootfd, &spec->lnx.readonly_paths, err) < 0)
      return -1;
    const char *prop = spec->lnx.rootfs_propagation;
    if (prop) {
      unsigned long flags;
      if (propagation_flags(prop, &flags) < 0)
        return rrt_error_set(err, EINVAL, "linux.rootfsPropagation: unknown value \"%s\"", prop);
      if (mount(NULL, "/", NULL, flags, NULL) < 0)
        return rrt_error_errno(err, "linux.rootfsPropagation (%s)", prop);
    }
  }
  if (spec->root_readonly && rrt_make_readonly(rootfd, false, err) < 0)
    return rrt_error_wrap(err, "root.readonly");
  return 0;
}

/* overlay.c: overlay mounts for an unprivileged user: kernel overlayfs in the user namespace
 * (userxattr), or fuse-overlayfs where the kernel refuses or when asked. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rootlessrt/image.h"
#include "rootlessrt/log.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/util.h"

int rrt_overlay_mode_parse(const char *s, enum rrt_overlay_mode *mode, struct rrt_error *err)
{
  if (!s || strcmp(s, "auto") == 0)
    *mode = RRT_OVERLAY_AUTO;
  else if (strcmp(s, "kernel") == 0)
    *mode = RRT_OVERLAY_KERNEL;
  else if (strcmp(s, "fuse") == 0)
    *mode = RRT_OVERLAY_FUSE;
  else
    return rrt_error_msgf(err, EINVAL, "overlay: \"%s\" is not auto, kernel or fuse", s);
  return 0;
}

static bool is_root_dest(const char *d)
{
  if (!d || *d != '/')
    return false;
  while (*d == '/')
    d++;
  return *d == '\0';
}

const struct rrt_mount *rrt_overlay_root_mount(const struct rrt_spec *spec)
{
  for (size_t i = 0; i < spec->n_mounts; i++) {
    const struct rrt_mount *m = &spec->mounts[i];
    if (m->type && strcmp(m->type, "overlay") == 0 && is_root_dest(m->destination))
      return m;
  }
  return NULL;
}

static bool has_opt(const char *data, const char *opt)
{
  size_t n = strlen(opt);
  for (const char *p = data; p && *p;) {
    if (strncmp(p, opt, n) == 0 && (p[n] == ',' || p[n] == '\0'))
      return true;
    p = strchr(p, ',');
    if (p)
      p++;
  }
  return false;
}

/* MS_* flags as fsmount(2) attributes: what an overlay root mount is given. */
static unsigned int mount_attrs(unsigned long flags)
{
  unsigned int a = 0;
  a |= flags & MS_RDONLY ? MOUNT_ATTR_RDONLY : 0;
  a |= flags & MS_NOSUID ? MOUNT_ATTR_NOSUID : 0;
  a |= flags & MS_NODEV ? MOUNT_ATTR_NODEV : 0;
  a |= flags & MS_NOEXEC ? MOUNT_ATTR_NOEXEC : 0;
  a |= flags & MS_NOATIME ? MOUNT_ATTR_NOATIME : 0;
  a |= flags & MS_STRICTATIME ? MOUNT_ATTR_STRICTATIME : 0;
  a |= flags & MS_NODIRATIME ? MOUNT_ATTR_NODIRATIME : 0;
  return a;
}

/* What failed, with the reason the kernel logged on the fs context ("e overlayfs: ..."). */
static int create_error(int fsfd, struct rrt_error *err)
{
  int e = errno;
  char msg[512];
  ssize_t n = read(fsfd, msg, sizeof(msg) - 1);
  if (n <= 2)
    return rrt_error_set(err, e, "kernel overlayfs: %s", strerror(e));
  msg[n] = '\0';
  msg[strcspn(msg, "\n")] = '\0';
  return rrt_error_set(err, e, "kernel overlayfs: %s (%s)", strerror(e), msg + 2);
}

/*
 * mount(2) takes the options in one page: about 30 layers of an image store's paths. The new
 * mount API takes them one at a time: each lower directory as "lowerdir+" (Linux 6.8), every
 * other option as it is, so an image is limited only by overlayfs's own stack depth.
 */
static int fsconfig_mount(const char *target, unsigned long flags, const char *data,
                          struct rrt_error *err)
{
  cleanup_close int fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return rrt_error_errno(err, "fsopen overlay");
  cleanup_free char *copy = xstrdup(data);
  char *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *v = strchr(t, '=');
    if (v)
      *v++ = '\0';
    int r = 0;
    if (v && strcmp(t, "lowerdir") == 0) {
      char *s2 = NULL;
      for (char *l = strtok_r(v, ":", &s2); l && r == 0; l = strtok_r(NULL, ":", &s2))
        r = fsconfig(fsfd, FSCONFIG_SET_STRING, "lowerdir+", l, 0);
      if (r < 0 && errno == EINVAL)
        return rrt_error_errno(err, "kernel overlayfs: the options are longer than mount(2) "
                                    "takes, and this kernel has no lowerdir+ (Linux 6.8) to pass "
                                    "the layers one at a time");
    } else {
      r = v ? fsconfig(fsfd, FSCONFIG_SET_STRING, t, v, 0)
            : fsconfig(fsfd, FSCONFIG_SET_FLAG, t, NULL, 0);
    }
    if (r < 0)
      return rrt_error_errno(err, "kernel overlayfs: option %s", t);
  }
  if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return create_error(fsfd, err);
  cleanup_close int mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, mount_attrs(flags));
  if (mfd < 0)
    return rrt_error_errno(err, "kernel overlayfs: fsmount");
  if (move_mount(mfd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return rrt_error_errno(err, "kernel overlayfs: move_mount onto %s", target);
  return 0;
}

static int kernel_mount(bool userns, const char *target, unsigned long flags, const char *data,
                        struct rrt_error *err)
{
  cleanup_free char *full = NULL;
  if (userns && !has_opt(data, "userxattr"))
    full = xasprintf("%s%suserxattr", data ? data : "", data && *data ? "," : "");
  const char *opts = full ? full : data;
  if (opts && strlen(opts) >= (size_t)sysconf(_SC_PAGESIZE))
    return fsconfig_mount(target, flags, opts, err);
  if (mount("overlay", target, "overlay", flags, opts) < 0)
    return rrt_error_errno(err, "kernel overlayfs");
  return 0;
}

/* The options only the kernel's overlayfs knows, dropped for fuse-overlayfs. */
static char *without_kernel_opts(const char *data)
{
  static const char *const kernel_only[] = {"userxattr",        "volatile",     "redirect_dir=on",
                                            "redirect_dir=off", "index=on",     "index=off",
                                            "metacopy=on",      "metacopy=off", NULL};
  return rrt_opts_without(data, kernel_only);
}

/* fuse-overlayfs: ROOTLESSRT_FUSE_OVERLAYFS, else PATH, else /usr/bin. */
static char *find_fuse_overlayfs(void)
{
  const char *env = getenv("ROOTLESSRT_FUSE_OVERLAYFS");
  if (env && *env)
    return xstrdup(env);
  const char *path = getenv("PATH");
  cleanup_free char *copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    char *p = xasprintf("%s/fuse-overlayfs", dir);
    if (access(p, X_OK) == 0)
      return p;
    free(p);
  }
  return access("/usr/bin/fuse-overlayfs", X_OK) == 0 ? xstrdup("/usr/bin/fuse-overlayfs") : NULL;
}

/* In init: the runtime's sync socket, for rrt_overlay_serve_request. */
static int runtime_fd = -1;

void rrt_overlay_set_runtime(int sync_fd)
{
  runtime_fd = sync_fd;
}

/* The options with lowerdir, upperdir and workdir absolute and their symlinks resolved: the
 * server sees them in a root of its own, at the same paths. */
static char *absolute_layers(const char *opts, struct rrt_error *err)
{
  cleanup_free char *copy = xstrdup(opts ? opts : "");
  char *out = xstrdup("");
  char *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *v = strchr(t, '=');
    bool layer = v && (strncmp(t, "lowerdir=", 9) == 0 || strncmp(t, "upperdir=", 9) == 0 ||
                       strncmp(t, "workdir=", 8) == 0);
    cleanup_free char *item = NULL;
    if (layer) {
      *v++ = '\0';
      item = xasprintf("%s=", t);
      char *s2 = NULL;
      for (char *d = strtok_r(v, ":", &s2); d; d = strtok_r(NULL, ":", &s2)) {
        cleanup_free char *abs = realpath(d, NULL);
        if (!abs) {
          free(out);
          return rrt_error_errno(err, "fuse-overlayfs: %s %s", t, d), NULL;
        }
        char *next = xasprintf("%s%s%s", item, item[strlen(item) - 1] == '=' ? "" : ":", abs);
        free(item);
        item = next;
      }
    }
    char *next = xasprintf("%s%s%s", out, *out ? "," : "", item ? item : t);
    free(out);
    out = next;
  }
  return out;
}

/*
 * fuse-overlayfs: the mount is made here, in the container's mount namespace, on a /dev/fuse fd
 * that the runtime serves from outside the container (image/fuse_serve.c): a daemon in the
 * container's pid namespace could be ptraced from it, and its /proc/PID/root would be the
 * host's "/".
 */
static int fuse_mount(const char *target, unsigned long flags, const char *data,
                      struct rrt_error *err)
{
  cleanup_free char *prog = find_fuse_overlayfs();
  if (!prog)
    return rrt_error_msgf(err, ENOENT,
                          "fuse-overlayfs: not found in PATH (install the fuse-overlayfs package, "
                          "or set ROOTLESSRT_FUSE_OVERLAYFS)");
  if (runtime_fd < 0)
    return rrt_error_msgf(err, ENOTSUP, "fuse-overlayfs: no runtime to serve it");
  cleanup_free char *kopts = without_kernel_opts(data);
  cleanup_free char *opts = absolute_layers(kopts, err);
  if (!opts)
    return -1;
  cleanup_close int fuse = open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fuse < 0)
    return rrt_error_errno(err, "fuse-overlayfs: open /dev/fuse (it must be readable and "
                                "writable by the user: mode 0666)");
  cleanup_free char *mopts =
      xasprintf("fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,default_permissions", fuse);
  if (mount("fuse-overlayfs", target, "fuse.fuse-overlayfs", (flags & MS_RDONLY) | MS_NODEV,
            mopts) < 0)
    return rrt_error_errno(err, "fuse-overlayfs: mount fuse on %s", target);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
    umount2(target, MNT_DETACH);
    return rrt_error_errno(err, "socketpair");
  }
  cleanup_close int mine = sv[0];
  cleanup_close int theirs = sv[1];
  int r = rrt_sync_send_fd(runtime_fd, RRT_SYNC_FUSE, 0, NULL, theirs, err);
  close(steal_fd(&theirs));
  if (r == 0)
    r = rrt_sync_send_fd(mine, RRT_SYNC_FUSE, 0, opts, fuse, err);
  /* The user namespace the server joins, from init itself: init may be undumpable already (in
   * a joined pid namespace), and then the runtime could not open its /proc entries. */
  cleanup_close int userns = r == 0 ? open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC) : -1;
  if (r == 0 && userns < 0)
    r = rrt_error_errno(err, "fuse-overlayfs: open /proc/self/ns/user");
  if (r == 0)
    r = rrt_sync_send_fd(mine, RRT_SYNC_FUSE, 0, NULL, userns, err);
  /* Only the server holds the device once it serves: if it dies, the mount fails (ENOTCONN)
   * rather than hangs. */
  close(steal_fd(&fuse));
  if (r == 0)
    r = rrt_sync_expect(mine, RRT_SYNC_FUSE_READY, NULL, NULL, err);
  if (r < 0)
    umount2(target, MNT_DETACH);
  return r;
}

int rrt_overlay_serve_request(pid_t init, int sock, pid_t *helper, struct rrt_error *err)
{
  *helper = 0;
  struct rrt_sync_msg m;
  if (rrt_sync_recv(sock, &m, err) < 0)
    return rrt_error_wrap(err, "fuse-overlayfs request");
  int r = 0;
  struct rrt_sync_msg u = {0};
  u.fd = -1;
  if (m.type != RRT_SYNC_FUSE || m.fd < 0 || !m.data) {
    r = rrt_error_set(err, EPROTO, "fuse-overlayfs request: no /dev/fuse fd and options");
  } else if (rrt_sync_recv(sock, &u, err) < 0 || u.type != RRT_SYNC_FUSE || u.fd < 0) {
    r = err->msg ? rrt_error_wrap(err, "fuse-overlayfs request")
                 : rrt_error_set(err, EPROTO, "fuse-overlayfs request: no user namespace fd");
  } else {
    cleanup_free char *prog = find_fuse_overlayfs();
    struct rrt_error e = RRT_ERROR_INIT;
    int s = prog ? rrt_fuse_serve(init, m.fd, u.fd, prog, m.data, helper, &e)
                 : rrt_error_msgf(&e, ENOENT, "fuse-overlayfs: not found in PATH");
    /* A failure is init's to report (after a kernel overlayfs refused, say). */
    if (s < 0)
      rrt_sync_send_error(sock, &e);
    else
      r = rrt_sync_send(sock, RRT_SYNC_FUSE_READY, *helper, NULL, err);
    rrt_error_clear(&e);
  }
  rrt_sync_msg_free(&u);
  rrt_sync_msg_free(&m);
  return r;
}

int rrt_overlay_mount(const struct rrt_spec *spec, bool userns, const char *target,
                      unsigned long flags, const char *data, struct rrt_error *err)
{
  enum rrt_overlay_mode mode;
  if (rrt_overlay_mode_parse(rrt_spec_annotation(spec, "rootlessrt.overlay"), &mode, err) < 0)
    return rrt_error_wrap(err, "annotation rootlessrt.overlay");
  if (mode != RRT_OVERLAY_FUSE) {
    if (kernel_mount(userns, target, flags, data, err) == 0)
      return 0;
    if (mode == RRT_OVERLAY_KERNEL)
      return rrt_error_wrap(err, "overlay (rootlessrt.overlay=kernel: no fuse-overlayfs fallback)");
    rrt_debug("%s; trying fuse-overlayfs", rrt_error_msg(err));
    struct rrt_error kerr = RRT_ERROR_INIT;
    rrt_error_move(&kerr, err);
    if (fuse_mount(target, flags, data, err) == 0) {
      rrt_error_clear(&kerr);
      return 0;
    }
    rrt_error_wrap(err, "%s; then", rrt_error_msg(&kerr));
    rrt_error_clear(&kerr);
    return -1;
  }
  return fuse_mount(target, flags, data, err);
}

/* host.c: the check's host items: the runtime directory, cgroups and the systemd user bus,
 * /dev/net/tun and /dev/fuse, the network helpers, fuse-overlayfs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/net.h"
#include "rootlessrt/util.h"

#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6
#define CGROUP2_MAGIC_ 0x63677270

/* ---------------------------------------------------------------- runtime directory */

static bool usable_run_user(const struct rrt_check *c, char path[64])
{
  struct stat st;
  snprintf(path, 64, "/run/user/%u", (unsigned)c->uid);
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == c->uid;
}

static char *runtime_dir_fix(const struct rrt_check *c, const char *current)
{
  char run[64];
  if (usable_run_user(c, run) && (!current || strcmp(current, run) != 0))
    return xasprintf("export XDG_RUNTIME_DIR=%s", run);
  return xasprintf("sudo loginctl enable-linger %s && export XDG_RUNTIME_DIR=%s", c->user, run);
}

void check_runtime_dir(struct rrt_check *c)
{
  const char *dir = getenv("XDG_RUNTIME_DIR");
  const char *name = "runtime-dir";
  if (!dir || !*dir) {
    char run[64], rootlessrt_uid[32];
    snprintf(run, sizeof(run), "/run/user/%u", (unsigned)c->uid);
    snprintf(rootlessrt_uid, sizeof(rootlessrt_uid), "rootlessrt-%u", (unsigned)c->uid);
    /* A CI job's container may have a read-only root: the state goes where it can (state.c). */
    const char *tmp = access("/tmp", W_OK | X_OK) == 0       ? "/tmp"
                      : access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm"
                                                             : NULL;
    if (c->uid == 0 && access("/run", W_OK) == 0)
      check_add(c, name, RRT_CHECK_OK, NULL, "XDG_RUNTIME_DIR not set; root's state is in /run");
    else if (c->uid == 0 && tmp)
      check_add(c, name, RRT_CHECK_OK, NULL,
                "XDG_RUNTIME_DIR not set and /run is not writable; root's state is in "
                "%s/rootlessrt-0",
                tmp);
    else if (c->uid == 0)
      check_add(c, name, RRT_CHECK_FAIL, xstrdup("export XDG_RUNTIME_DIR=/some/writable/dir"),
                "XDG_RUNTIME_DIR not set and none of /run, /tmp, /dev/shm is writable: create "
                "fails without --root");
    else if (c->nested && (tmp || access(run, W_OK | X_OK) == 0))
      /* A CI job has no login session: no engine of the host looks for its state. */
      check_add(c, name, RRT_CHECK_OK, NULL,
                "XDG_RUNTIME_DIR not set (a CI job's container): the state goes to %s/%s",
                access(run, W_OK | X_OK) == 0 ? run : tmp,
                access(run, W_OK | X_OK) == 0 ? "rootlessrt" : rootlessrt_uid);
    else
      check_add(c, name, RRT_CHECK_WARN, runtime_dir_fix(c, NULL),
                "XDG_RUNTIME_DIR is not set (su, sudo, cron?): state goes to /run/user/%u or "
                "/tmp/rootlessrt-%u, engines may not find it",
                (unsigned)c->uid, (unsigned)c->uid);
    return;
  }
  struct stat st;
  struct statfs fs;
  char fsbuf[32];
  int e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  if (e) {
    check_add(c, name, RRT_CHECK_FAIL, runtime_dir_fix(c, dir), "XDG_RUNTIME_DIR=%s: %s", dir,
              strerror(e));
    return;
  }
  if (st.st_uid != c->uid) {
    check_add(c, name, RRT_CHECK_FAIL, runtime_dir_fix(c, dir),
              "XDG_RUNTIME_DIR=%s belongs to uid %u, not to you (uid %u)", dir, (unsigned)st.st_uid,
              (unsigned)c->uid);
    return;
  }
  unsigned mode = st.st_mode & 07777;
  if (mode != 0700) {
    check_add(c, name, RRT_CHECK_WARN, xasprintf("chmod 0700 %s", dir),
              "XDG_RUNTIME_DIR=%s has mode %04o, not 0700: other users can see your containers",
              dir, mode);
    return;
  }
  if (statfs(dir, &fs) < 0)
    fs.f_type = 0, fs.f_bavail = 0, fs.f_bsize = 0;
  unsigned long long avail = (unsigned long long)fs.f_bavail * (unsigned long long)fs.f_bsize;
  const char *type = check_fs_name((long)fs.f_type, fsbuf);
  if (fs.f_type != TMPFS_MAGIC_ && fs.f_type != RAMFS_MAGIC_) {
    char run[64];
    check_add(
        c, name, RRT_CHECK_WARN,
        usable_run_user(c, run) && strcmp(run, dir) ? xasprintf("export XDG_RUNTIME_DIR=%s", run)
                                                    : NULL,
        "XDG_RUNTIME_DIR=%s is on %s, not a tmpfs: container state outlives a reboot", dir, type);
  } else if (avail < 1024 * 1024) {
    check_add(c, name, RRT_CHECK_WARN, NULL, "XDG_RUNTIME_DIR=%s: only %llu KiB free", dir,
              avail / 1024);
  } else {
    check_add(c, name, RRT_CHECK_OK, NULL, "XDG_RUNTIME_DIR=%s: yours, 0700, %s, %llu MiB free",
              dir, type, avail >> 20);
  }
}

/* ---------------------------------------------------------------- cgroups, user bus */

static char *unified_fix(const struct rrt_check *c)
{
  static const char *const fix[] = {
      "boot with systemd.unified_cgroup_hierarchy=1 on the kernel command line",
      "sudo sed -i 's/^GRUB_CMDLINE_LINUX=\"/&systemd.unified_cgroup_hierarchy=1 /' "
      "/etc/default/grub && sudo update-grub && sudo reboot",
      "sudo grubby --update-kernel=ALL --args=systemd.unified_cgroup_hierarchy=1 && sudo reboot",
      "sudo sed -i 's/^GRUB_CMDLINE_LINUX=\"/&systemd.unified_cgroup_hierarchy=1 /' "
      "/etc/default/grub && sudo grub-mkconfig -o /boot/grub/grub.cfg && sudo reboot",
      "sudo sed -i 's/^GRUB_CMDLINE_LINUX=\"/&systemd.unified_cgroup_hierarchy=1 /' "
      "/etc/default/grub && sudo grub2-mkconfig -o /boot/grub2/grub.cfg && sudo reboot"};
  return xstrdup(fix[c->distro]);
}

static const char *cgroup_layout(void)
{
  struct statfs fs;
  if (statfs("/sys/fs/cgroup", &fs) < 0)
    return "none";
  if (fs.f_type == CGROUP2_MAGIC_)
    return "v2";
  if (statfs("/sys/fs/cgroup/unified", &fs) == 0 && fs.f_type == CGROUP2_MAGIC_)
    return "hybrid";
  return "v1";
}

/* Which of cpu, io, memory, pids the list lacks ("" when none). */
static char *missing_controllers(const char *have)
{
  static const char *const want[] = {"cpu", "io", "memory", "pids"};
  char *miss = xstrdup("");
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    cleanup_free char *w = xasprintf(" %s ", want[i]);
    cleanup_free char *h = xasprintf(" %s ", have);
    if (strstr(h, w))
      continue;
    char *n = xasprintf("%s%s%s", miss, *miss ? " " : "", want[i]);
    free(miss);
    miss = n;
  }
  return miss;
}

static void report_cgroup(struct rrt_check *c)
{
  const char *layout = cgroup_layout();
  cleanup_free char *dir = rrt_cgroup_own_dir();
  bool v1 = strcmp(layout, "v1") == 0 || strcmp(layout, "none") == 0;
  if (v1 || !dir) {
    check_add(c, "cgroup", RRT_CHECK_WARN, unified_fix(c),
              "cgroup %s: no cgroup v2 for you: no resource limits, no pause", layout);
    return;
  }
  cleanup_free char *procs = xasprintf("%s/cgroup.procs", dir);
  if (faccessat(AT_FDCWD, dir, W_OK, AT_EACCESS) < 0 ||
      faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) < 0) {
    check_add(c, "cgroup", RRT_CHECK_WARN,
              strcmp(layout, "hybrid") == 0
                  ? unified_fix(c)
                  : xasprintf("systemd-run --user --scope -p Delegate=yes rootlessrt run ..."),
              "cgroup %s; your cgroup %s is not delegated to you: no resource limits, no pause",
              layout, dir);
    return;
  }
  /* What create does: a child cgroup (removed at once). */
  cleanup_free char *child = xasprintf("%s/rootlessrt-check-%d", dir, (int)getpid());
  if (mkdir(child, 0755) < 0) {
    check_add(c, "cgroup", RRT_CHECK_WARN, NULL,
              "cgroup %s; %s looks delegated but a child cgroup cannot be made: %s", layout, dir,
              strerror(errno));
    return;
  }
  rmdir(child);
  cleanup_free char *path = xasprintf("%s/cgroup.controllers", dir);
  cleanup_free char *have = NULL;
  size_t len;
  if (rrt_read_file(path, &have, &len, NULL) < 0)
    have = xstrdup("");
  have[strcspn(have, "\n")] = '\0';
  cleanup_free char *miss = missing_controllers(have);
  if (*miss)
    check_add(c, "cgroup", RRT_CHECK_WARN,
              xstrdup("sudo mkdir -p /etc/systemd/system/user@.service.d && printf "
                      "'[Service]\\nDelegate=cpu cpuset io memory pids\\n' | sudo tee "
                      "/etc/systemd/system/user@.service.d/delegate.conf && sudo systemctl "
                      "daemon-reload  # then log in again"),
              "cgroup %s; %s delegated, controllers: %s (no %s: those limits fail)", layout, dir,
              *have ? have : "none", miss);
  else
    check_add(c, "cgroup", RRT_CHECK_OK, NULL,
              "cgroup %s; %s delegated (a child cgroup made and removed), controllers: %s", layout,
              dir, have);
}

static bool bus_connects(const char *path)
{
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(a.sun_path))
    return false;
  strcpy(a.sun_path, path);
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  return fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
}

static void report_user_bus(struct rrt_check *c)
{
  const char *addr = getenv("DBUS_SESSION_BUS_ADDRESS");
  const char *rt = getenv("XDG_RUNTIME_DIR");
  cleanup_free char *path = NULL;
  if (addr && strncmp(addr, "unix:path=", 10) == 0)
    path = xstrndup(addr + 10, strcspn(addr + 10, ","));
  else if (rt && *rt)
    path = xasprintf("%s/bus", rt);
  if (path && bus_connects(path))
    check_add(c, "user-bus", RRT_CHECK_OK, NULL, "the systemd user bus answers at %s", path);
  else
    check_add(c, "user-bus", RRT_CHECK_WARN,
              xasprintf("sudo loginctl enable-linger %s && export XDG_RUNTIME_DIR=/run/user/%u",
                        c->user, (unsigned)c->uid),
              "no systemd user bus%s%s: engines' systemd cgroup manager and systemd-run --user "
              "fail",
              path ? " at " : " (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR)",
              path ? path : "");
}

void check_cgroups(struct rrt_check *c)
{
  report_cgroup(c);
  report_user_bus(c);
}

/* ---------------------------------------------------------------- /dev/net/tun, /dev/fuse */

struct device {
  const char *item, *path, *module, *udev_kernel, *needed_by;
};

static void report_device(struct rrt_check *c, const struct device *d)
{
  cleanup_free char *path = check_path(c, d->path);
  struct stat st;
  int e = 0;
  cleanup_close int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    e = errno;
  bool have = stat(path, &st) == 0;
  if (!e) {
    check_add(c, d->item, RRT_CHECK_OK, NULL, "%s opens read-write (mode %04o)", d->path,
              (unsigned)(st.st_mode & 07777));
  } else if (!have && c->nested) {
    /* Not the host's to fix from inside a CI job's container: the engine's option gives it. */
    check_add(c, d->item, RRT_CHECK_WARN,
              xasprintf("docker run --device %s ...  # podman run --device %s; a pod: a device "
                        "plugin",
                        d->path, d->path),
              "%s: %s (the job's container has none): %s", d->path, strerror(e), d->needed_by);
  } else if (!have) {
    check_add(c, d->item, RRT_CHECK_WARN, xasprintf("sudo modprobe %s", d->module), "%s: %s: %s",
              d->path, strerror(e), d->needed_by);
  } else {
    const char *owner = rrt_user_name(st.st_uid);
    check_add(c, d->item, RRT_CHECK_WARN,
              xasprintf("sudo chmod 0666 %s && echo 'KERNEL==\"%s\", MODE=\"0666\"' | sudo tee "
                        "/etc/udev/rules.d/60-rootlessrt-%s.rules",
                        d->path, d->udev_kernel, d->udev_kernel),
              "%s (mode %04o, owner %s): %s: %s", d->path, (unsigned)(st.st_mode & 07777),
              owner ? owner : "?", strerror(e), d->needed_by);
  }
}

void check_devices(struct rrt_check *c)
{
  static const struct device devs[] = {
      {"tun", "/dev/net/tun", "tun", "tun", "--network slirp fails"},
      {"fuse", "/dev/fuse", "fuse", "fuse", "fuse-overlayfs and FUSE mounts fail"},
  };
  for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
    report_device(c, &devs[i]);
}

/* ---------------------------------------------------------------- network helpers */

static void report_rootlessrt_net(struct rrt_check *c)
{
  cleanup_free char *found = rrt_net_helper_path();
  cleanup_free char *real = realpath(found, NULL);
  const char *path = real ? real : found;
  if (access(path, X_OK) < 0) {
    check_add(c, "rootlessrt-net", RRT_CHECK_WARN,
              xstrdup("make install  # from the rootlessrt source, or reinstall its package"),
              "%s: %s: --network slirp fails", path, strerror(errno));
    return;
  }
  /* Without its arguments it loads its libraries, says so and exits 1. */
  char *argv[] = {(char *)path, NULL};
  cleanup_free char *out = NULL;
  int st = check_spawn(argv, &out);
  if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && out &&
      strstr(out, "without its arguments"))
    check_add(c, "rootlessrt-net", RRT_CHECK_OK, NULL, "%s runs (libslirp loads)", path);
  else
    check_add(c, "rootlessrt-net", RRT_CHECK_WARN, check_install(c, PKG_LIBSLIRP),
              "%s does not run: %s: --network slirp fails", path, out && *out ? out : "no output");
}

static void report_optional_tool(struct rrt_check *c, const char *name, enum check_pkg pkg,
                                 const char *other)
{
  cleanup_free char *path = check_which(name);
  cleanup_free char *alt = check_which(other);
  if (path) {
    cleanup_free char *v = check_version(path);
    check_add(c, name, RRT_CHECK_OK, NULL, "%s%s%s", path, v ? ": " : "", v ? v : "");
  } else if (alt) {
    check_add(c, name, RRT_CHECK_OK, NULL, "not installed (%s is; engines need one of them)",
              other);
  } else {
    check_add(c, name, RRT_CHECK_WARN, check_install(c, pkg),
              "not installed, nor %s: rootless engines (podman) have no network", other);
  }
}

/* The fast path of the container's own connections: what the kernel lets a user namespace's
 * root do with nf_tables (the modules a rootless user cannot load). */
static void report_fast_path(struct rrt_check *c)
{
  static const char fix[] =
      "printf '%s\\n' nf_tables nft_redir nft_compat xt_NFQUEUE nft_tproxy nft_reject_inet | "
      "sudo tee /etc/modules-load.d/rootlessrt.conf && sudo systemctl restart "
      "systemd-modules-load";
  int tcp = 0, gate = 0, udp = 0;
  cleanup_free char *why = NULL;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_net_fast_path_probe(&tcp, &gate, &udp, &why, &err) < 0) {
    check_add(c, "net-fast-path", RRT_CHECK_WARN, NULL,
              "cannot try nf_tables in a user namespace (%s): the container's own connections "
              "may go through libslirp (slower)",
              rrt_error_msg(&err));
    rrt_error_clear(&err);
    return;
  }
  if (tcp == 0 && gate == 0 && udp == 0) {
    check_add(c, "net-fast-path", RRT_CHECK_OK, NULL,
              "nf_tables takes the rules: the container's own TCP and UDP bypass libslirp");
    return;
  }
  const char *tcp_what = tcp    ? "the container's own TCP goes through libslirp (slower)"
                         : gate ? "a refused TCP destination is a reset after connect() (no SYN "
                                  "gate: NFQUEUE)"
                                : NULL;
  const char *udp_what = udp ? "its own UDP goes through libslirp (slower)" : NULL;
  check_add(c, "net-fast-path", RRT_CHECK_WARN, xstrdup(fix), "nf_tables: %s: %s%s%s",
            why ? why : "refused", tcp_what ? tcp_what : "", tcp_what && udp_what ? "; " : "",
            udp_what ? udp_what : "");
}

void check_net_helpers(struct rrt_check *c)
{
  report_rootlessrt_net(c);
  report_fast_path(c);
  report_optional_tool(c, "slirp4netns", PKG_SLIRP4NETNS, "pasta");
  report_optional_tool(c, "pasta", PKG_PASST, "slirp4netns");
}

void check_fuse_overlayfs(struct rrt_check *c)
{
  cleanup_free char *path = check_which("fuse-overlayfs");
  if (path) {
    cleanup_free char *v = check_version(path);
    check_add(c, "fuse-overlayfs", RRT_CHECK_OK, NULL, "%s%s%s", path, v ? ": " : "", v ? v : "");
  } else if (check_overlay_errno == 0) {
    check_add(c, "fuse-overlayfs", RRT_CHECK_OK, NULL,
              "not installed; not needed: kernel overlayfs works in a user namespace");
  } else {
    check_add(c, "fuse-overlayfs", RRT_CHECK_WARN, check_install(c, PKG_FUSE_OVERLAYFS),
              "not installed, and kernel overlayfs does not work in a user namespace: image "
              "roots cannot be mounted");
  }
}

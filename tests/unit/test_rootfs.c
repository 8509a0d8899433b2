/* test_rootfs.c: mount option parsing, and a real rootfs built inside a user namespace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/rootfs.h"
#include "rootlessrt/util.h"
#include "tap.h"

#define NOBODY 65534

/* A strv from "a,b,c" (NULL -> absent). Leaks by design: test data. */
static struct rrt_strv strv(const char *csv)
{
  struct rrt_strv s = {NULL, 0};
  if (!csv)
    return s;
  s.v = xcalloc(strlen(csv) + 2, sizeof(char *));
  char *copy = xstrdup(csv);
  char *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
    s.v[s.n++] = xstrdup(t);
  free(copy);
  return s;
}

static void parse(const char *csv, struct rrt_mount_opts *o)
{
  struct rrt_strv s = strv(csv);
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_mount_opts_parse(&s, o, &err) < 0)
    printf("# parse %s: %s\n", csv, rrt_error_msg(&err));
  rrt_error_clear(&err);
  rrt_strv_free(s.v);
}

static void test_opts(void)
{
  struct rrt_mount_opts o;
  struct rrt_error err = RRT_ERROR_INIT;

  is_int(rrt_mount_opts_parse(NULL, &o, &err), 0, "NULL options parse");
  ok(o.flags == 0 && o.data == NULL && !o.bind, "NULL options: nothing set");
  struct rrt_strv absent = {NULL, 0};
  is_int(rrt_mount_opts_parse(&absent, &o, &err), 0, "absent options parse");
  is_int(rrt_mount_opts_parse(&absent, NULL, &err), -1, "NULL output is refused");
  is_int(err.errnum, EINVAL, "NULL output: EINVAL");
  rrt_error_clear(&err);

  parse("ro", &o);
  is_int(o.flags, MS_RDONLY, "ro -> MS_RDONLY");
  parse("rw", &o);
  ok(o.flags == 0 && o.clear_flags == MS_RDONLY, "rw clears MS_RDONLY");
  parse("ro,rw", &o);
  ok(!(o.flags & MS_RDONLY) && (o.clear_flags & MS_RDONLY), "ro,rw: the last one wins");
  parse("rw,ro", &o);
  ok((o.flags & MS_RDONLY) && !(o.clear_flags & MS_RDONLY), "rw,ro: the last one wins");
  parse("nosuid,nodev,noexec", &o);
  is_int(o.flags, MS_NOSUID | MS_NODEV | MS_NOEXEC, "nosuid,nodev,noexec");
  parse("suid,dev,exec", &o);
  ok(o.flags == 0 && o.clear_flags == (MS_NOSUID | MS_NODEV | MS_NOEXEC), "suid,dev,exec clear");
  parse("sync,dirsync,mand,silent,remount,lazytime", &o);
  is_int(o.flags, MS_SYNCHRONOUS | MS_DIRSYNC | MS_MANDLOCK | MS_SILENT | MS_REMOUNT | MS_LAZYTIME,
         "sync,dirsync,mand,silent,remount,lazytime");
  parse("sync,async,loud,nomand", &o);
  ok(o.flags == 0 && (o.clear_flags & MS_SYNCHRONOUS) && (o.clear_flags & MS_SILENT),
     "async and loud undo sync and silent");
  parse("noatime,nodiratime", &o);
  is_int(o.flags, MS_NOATIME | MS_NODIRATIME, "noatime,nodiratime");
  parse("relatime", &o);
  is_int(o.flags, MS_RELATIME, "relatime");
  parse("strictatime,norelatime", &o);
  ok(o.flags == MS_STRICTATIME && (o.clear_flags & MS_RELATIME), "strictatime,norelatime");
  parse("nosymfollow", &o);
  is_int(o.flags, MS_NOSYMFOLLOW, "nosymfollow");
  parse("bind", &o);
  ok(o.bind && !o.rbind && o.flags == MS_BIND, "bind: MS_BIND, not recursive");
  parse("rbind,ro", &o);
  ok(o.bind && o.rbind && o.flags == (MS_BIND | MS_REC | MS_RDONLY), "rbind,ro");
  parse("rslave", &o);
  is_int(o.propagation, MS_SLAVE | MS_REC, "rslave");
  parse("private", &o);
  is_int(o.propagation, MS_PRIVATE, "private");
  parse("shared,runbindable", &o);
  is_int(o.propagation, MS_UNBINDABLE | MS_REC, "two propagation types: the last wins");
  ok(o.flags == 0, "propagation is not a mount flag");

  parse("mode=755,size=65536k", &o);
  is_str(o.data, "mode=755,size=65536k", "data options joined with commas");
  rrt_mount_opts_free(&o);
  ok(o.data == NULL, "free resets data");
  rrt_mount_opts_free(&o);

  parse("nosuid,strictatime,mode=755,size=65536k", &o);
  is_str(o.data, "mode=755,size=65536k", "flags are taken out of data");
  is_int(o.flags, MS_NOSUID | MS_STRICTATIME, "and kept as flags");
  rrt_mount_opts_free(&o);

  parse("nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5", &o);
  is_str(o.data, "newinstance,ptmxmode=0666,mode=0620,gid=5", "devpts data");
  rrt_mount_opts_free(&o);

  parse("defaults,x-systemd.automount,nofail,_netdev", &o);
  ok(o.data == NULL && o.flags == 0, "userspace-only options are dropped");

  parse("tmpcopyup,idmap,ridmap,rro,rnosuid,rnoatime", &o);
  ok(o.data == NULL && o.flags == 0, "runtime extensions never reach the kernel as data");

  char *with_empty[] = {"", "nodev", NULL};
  struct rrt_strv e = {with_empty, 2};
  is_int(rrt_mount_opts_parse(&e, &o, &err), 0, "an empty option is skipped");
  ok(o.flags == MS_NODEV && o.data == NULL, "empty option: nothing in data");

  parse("lowerdir=/a:/b,upperdir=/u,workdir=/w", &o);
  is_str(o.data, "lowerdir=/a:/b,upperdir=/u,workdir=/w", "overlay options pass through");
  rrt_mount_opts_free(&o);
}

/* ---- the in-namespace test ------------------------------------------------------------- */

static int report_fd = -1;

/* Lines over the pipe: "1 name", "0 name", "S reason" or "# diagnostic". */
static void report(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(bool cond, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = NULL;
  if (vasprintf(&msg, fmt, ap) < 0)
    abort();
  va_end(ap);
  dprintf(report_fd, "%c %s\n", cond ? '1' : '0', msg);
  free(msg);
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void diag(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *msg = NULL;
  if (vasprintf(&msg, fmt, ap) < 0)
    abort();
  va_end(ap);
  for (char *p = msg; *p; p++)
    if (*p == '\n')
      *p = ' ';
  dprintf(report_fd, "# %s\n", msg);
  free(msg);
}

static void skip(const char *why)
{
  dprintf(report_fd, "S %s\n", why);
}

static char base[64];

static void must(bool cond, const char *what)
{
  if (!cond) {
    perror(what);
    exit(2);
  }
}

static void mkdirs(const char *path)
{
  must(mkdir(path, 0755) == 0 || errno == EEXIST, path);
}

static void put_file(const char *path, const char *content)
{
  struct rrt_error err = RRT_ERROR_INIT;
  must(rrt_write_file(path, content, strlen(content), O_CREAT | O_TRUNC, 0644, &err) == 0, path);
}

static char *bpath(const char *rel)
{
  return xasprintf("%s/%s", base, rel);
}

static int chown_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
  return lchown(p, NOBODY, NOBODY);
}

static int remove_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
  return remove(p);
}

static void build_trees(void)
{
  snprintf(base, sizeof(base), "/tmp/rrt-test-rootfs-XXXXXX");
  must(mkdtemp(base) != NULL, "mkdtemp");
  must(chmod(base, 0755) == 0, "chmod");
  const char *dirs[] = {"root",     "root/proc", "root/dev",      "root/sys", "root/tmp",
                        "root/etc", "root/mnt",  "src",           "src2",     "outside",
                        "bad1",     "bad1/root", "bad1/root/tmp", "bad2",     "bad2/root",
                        "bad3",     "bad3/root"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    cleanup_free char *p = bpath(dirs[i]);
    mkdirs(p);
  }
  cleanup_free char *marker = bpath("src/marker");
  put_file(marker, "hello");
  cleanup_free char *other = bpath("src/other");
  put_file(other, "hello");
  cleanup_free char *evil = bpath("src2/evil-marker");
  put_file(evil, "inside");
  cleanup_free char *hostname = bpath("hostname");
  put_file(hostname, "testhost");
  cleanup_free char *resolv = bpath("resolv.conf");
  put_file(resolv, "nameserver 192.0.2.1\n");
  /* An absolute link: resolved by the host it would leave the rootfs. */
  cleanup_free char *outside = bpath("outside");
  cleanup_free char *link = bpath("root/mnt/evil");
  must(symlink(outside, link) == 0, "symlink evil");
  cleanup_free char *proclink = bpath("bad1/root/proc");
  must(symlink("tmp", proclink) == 0, "symlink proc");
  if (geteuid() == 0)
    must(nftw(base, chown_one, 16, FTW_PHYS) == 0, "chown");
}

static struct rrt_mount mnt(const char *dest, const char *type, const char *source,
                            const char *opts)
{
  struct rrt_mount m = {0};
  m.destination = (char *)dest;
  m.type = (char *)type;
  m.source = (char *)source;
  m.options = strv(opts);
  return m;
}

static bool host_node(const char *path, unsigned maj, unsigned min)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == maj &&
         minor(st.st_rdev) == min;
}

static void expect_prepare_error(const char *rootfs, struct rrt_spec *spec, const char *want,
                                 const char *name)
{
  struct rrt_rootfs_ctx ctx = {
      .spec = spec, .rootfs = rootfs, .userns = true, .new_pidns = true, .console_slave_fd = -1};
  struct rrt_error err = RRT_ERROR_INIT;
  int r = rrt_rootfs_prepare(&ctx, &err);
  report(r < 0 && err.msg && strcmp(err.msg, want) == 0, "%s", name);
  if (!(r < 0 && err.msg && strcmp(err.msg, want) == 0))
    diag("got '%s', expected '%s'", r < 0 ? rrt_error_msg(&err) : "(success)", want);
  rrt_error_clear(&err);
}

static void negative_tests(void)
{
  struct rrt_spec spec = {0};
  struct rrt_mount m1[] = {mnt("/proc", "proc", "proc", "nosuid")};
  spec.mounts = m1;
  spec.n_mounts = 1;
  cleanup_free char *bad1 = bpath("bad1/root");
  expect_prepare_error(bad1, &spec,
                       "mounts[0] (/proc, proc): mount proc: /proc in the rootfs is a symlink: it "
                       "must be mounted on ordinary directory",
                       "a rootfs whose /proc is a symlink is refused (CVE-2023-27561)");

  struct rrt_mount m2[] = {mnt("/x", "tmpfs", "tmpfs", "size=bogus")};
  spec.mounts = m2;
  cleanup_free char *bad2 = bpath("bad2/root");
  expect_prepare_error(bad2, &spec, "mounts[0] (/x, tmpfs): mount: Invalid argument",
                       "a failing mount names its index, destination and type");

  struct rrt_mount m3[] = {mnt("/dev", "tmpfs", "tmpfs", "mode=755")};
  struct rrt_device dev = {.path = "/dev/rrt-no-such", .type = 'c', .major = 250, .minor = 250};
  spec.mounts = m3;
  spec.has_linux = true;
  spec.lnx.devices = &dev;
  spec.lnx.n_devices = 1;
  cleanup_free char *bad3 = bpath("bad3/root");
  expect_prepare_error(bad3, &spec,
                       "linux.devices[0] (/dev/rrt-no-such): no host device c 250:250 at that "
                       "path to bind, and mknod is not permitted in a user namespace: No such "
                       "device",
                       "a device neither on the host nor mknod-able is an error naming it");
}

static bool read_is(const char *path, const char *want)
{
  char *data = NULL;
  size_t len = 0;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_read_file(path, &data, &len, &err) < 0) {
    diag("read %s: %s", path, rrt_error_msg(&err));
    rrt_error_clear(&err);
    return false;
  }
  bool same = len == strlen(want) && memcmp(data, want, len) == 0;
  free(data);
  return same;
}

static bool is_ro(const char *path)
{
  struct statvfs sv;
  return statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

static bool link_is(const char *path, const char *want)
{
  char buf[256];
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return strcmp(buf, want) == 0;
}

static void checks_after_finalize(bool userns, bool kcore, bool firmware, bool tun)
{
  struct stat st;
  report(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
             minor(st.st_rdev) == 3,
         "/dev/null is char 1:3");
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  report(fd >= 0 && write(fd, "x", 1) == 1, "/dev/null is usable");
  if (fd >= 0)
    close(fd);
  fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  char z[4] = {1, 1, 1, 1};
  report(fd >= 0 && read(fd, z, 4) == 4 && !z[0] && !z[3], "/dev/zero reads zeros");
  if (fd >= 0)
    close(fd);
  report(link_is("/dev/fd", "/proc/self/fd") && link_is("/dev/stderr", "/proc/self/fd/2"),
         "/dev/fd and /dev/stderr link into /proc/self/fd");
  report(link_is("/dev/ptmx", "pts/ptmx"), "/dev/ptmx -> pts/ptmx");
  fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  report(fd >= 0, "a pty opens from the new devpts instance (gid=5 dropped when unmapped)");
  if (fd >= 0)
    close(fd);
  report(getpid() == 1 && link_is("/proc/self", "1"), "/proc is the container's pid namespace");
  report(read_is("/data/other", "hello"), "the bind mount shows the source");
  report(read_is("/data/marker", "") && host_node("/data/marker", 1, 3),
         "a masked file is /dev/null and reads empty");
  fd = open("/data/new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  report(fd < 0 && errno == EROFS, "the ro bind mount refuses writes with EROFS");
  if (fd >= 0)
    close(fd);
  report(read_is("/etc/hostname", "testhost") && is_ro("/etc/hostname"),
         "a file bind mount lands on a created file, read-only");
  report(read_is("/etc/resolv.conf", "nameserver 192.0.2.1\n"), "resolv.conf is bound");
  report(access("/sys/kernel", F_OK) == 0 && is_ro("/sys"),
         "sysfs (mounted, or rbind without an owned netns) is there, read-only");
  report(access("/sys/fs/cgroup", F_OK) == 0 && is_ro("/sys/fs/cgroup"),
         "/sys/fs/cgroup is mounted read-only");
  if (kcore) {
    char *data = NULL;
    size_t len = 1;
    struct rrt_error err = RRT_ERROR_INIT;
    int r = rrt_read_file("/proc/kcore", &data, &len, &err);
    report(r == 0 && len == 0, "masked /proc/kcore reads empty");
    free(data);
    rrt_error_clear(&err);
    report(link_is("/dev/core", "/proc/kcore"), "/dev/core -> /proc/kcore");
  } else {
    skip("host has no /proc/kcore");
    skip("host has no /proc/kcore");
  }
  if (firmware) {
    DIR *d = opendir("/sys/firmware");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
        n++;
    report(d && n == 0 && is_ro("/sys/firmware"), "masked /sys/firmware is an empty ro dir");
    if (d)
      closedir(d);
  } else {
    skip("host has no /sys/firmware");
  }
  report(is_ro("/proc/sys") && !is_ro("/proc"), "readonlyPaths: /proc/sys ro, /proc not");
  report(is_ro("/") && mkdir("/newdir", 0755) < 0 && errno == EROFS, "root.readonly: / is ro");
  fd = open("/dev/shm/x", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  report(fd >= 0, "/dev/shm stays writable under a read-only root");
  if (fd >= 0)
    close(fd);
  report(read_is("/mnt/evil/evil-marker", "inside"),
         "a destination through an absolute symlink is mounted inside the rootfs");
  if (tun)
    report(host_node("/dev/net/tun", 10, 200), "linux.devices /dev/net/tun is char 10:200");
  else
    skip("host has no /dev/net/tun");
  if (!userns) {
    struct stat nst;
    report(stat("/dev/rrt-null", &nst) == 0 && S_ISCHR(nst.st_mode) &&
               (nst.st_mode & 07777) == 0600 && nst.st_uid == 1 && nst.st_gid == 2 &&
               nst.st_rdev == makedev(1, 3),
           "as real root a device missing on the host is made with mknod, mode and owner set");
  }
}

static void in_namespace(bool userns)
{
  if (userns)
    negative_tests();

  bool kcore = access("/proc/kcore", F_OK) == 0;
  bool firmware = access("/sys/firmware", F_OK) == 0;
  bool tun = host_node("/dev/net/tun", 10, 200);
  cleanup_free char *src = bpath("src");
  cleanup_free char *src2 = bpath("src2");
  cleanup_free char *hostname = bpath("hostname");
  cleanup_free char *resolv = bpath("resolv.conf");
  cleanup_free char *rootfs = bpath("root");
  struct rrt_mount mounts[] = {
      mnt("/proc", "proc", "proc", "nosuid,noexec,nodev"),
      mnt("/dev", "tmpfs", "tmpfs", "nosuid,strictatime,mode=755,size=65536k"),
      mnt("/dev/pts", "devpts", "devpts",
          "nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5"),
      mnt("/dev/shm", "tmpfs", "shm", "nosuid,noexec,nodev,mode=1777,size=65536k"),
      mnt("/dev/mqueue", "mqueue", "mqueue", "nosuid,noexec,nodev"),
      mnt("/sys", "sysfs", "sysfs", "nosuid,noexec,nodev,ro"),
      mnt("/sys/fs/cgroup", "cgroup", "cgroup", "nosuid,noexec,nodev,relatime,ro"),
      mnt("/data", NULL, src, "rbind,ro"),
      mnt("/mnt/evil", "bind", src2, "bind"),
      mnt("/etc/hostname", "bind", hostname, "bind,ro"),
  };
  struct rrt_device devices[2] = {
      {.path = "/dev/rrt-null",
       .type = 'c',
       .major = 1,
       .minor = 3,
       .has_file_mode = true,
       .file_mode = 0600,
       .has_uid = true,
       .uid = 1,
       .has_gid = true,
       .gid = 2},
      {.path = "/dev/net/tun", .type = 'c', .major = 10, .minor = 200},
  };
  struct rrt_spec spec = {0};
  spec.mounts = mounts;
  spec.n_mounts = sizeof(mounts) / sizeof(mounts[0]);
  spec.root_readonly = true;
  spec.has_linux = true;
  spec.lnx.masked_paths = strv("/proc/kcore,/proc/rrt-does-not-exist,/sys/firmware,/data/marker");
  spec.lnx.readonly_paths = strv("/proc/sys,/proc/sysrq-trigger,/no/such/path");
  /* mknod needs real root; the tun node is bound from the host either way. */
  spec.lnx.devices = userns ? &devices[1] : &devices[0];
  spec.lnx.n_devices = (userns ? 0 : 1) + (tun ? 1 : 0);
  struct rrt_rootfs_ctx ctx = {.spec = &spec,
                               .rootfs = rootfs,
                               .userns = userns,
                               .new_pidns = true,
                               .console_slave_fd = -1,
                               .resolv_conf = resolv};
  struct rrt_error err = RRT_ERROR_INIT;
  int fds_before = tap_count_fds();
  const char *mode = userns ? "as an unprivileged user in a user namespace" : "as real root";

  int r = rrt_rootfs_prepare(&ctx, &err);
  report(r == 0, "rrt_rootfs_prepare %s", mode);
  if (r < 0) {
    diag("%s", rrt_error_msg(&err));
    return;
  }
  /* Before the pivot the host paths are still visible: the mount through
   * the symlink must be under the rootfs, and the host dir untouched. */
  cleanup_free char *host_side = bpath("outside/evil-marker");
  cleanup_free char *inside = xasprintf("%s%s/outside/evil-marker", rootfs, base);
  report(access(host_side, F_OK) < 0 && errno == ENOENT && access(inside, F_OK) == 0,
         "the symlink-escape mount (mnt/evil -> host path) stays inside the rootfs");

  /* The real-root run takes the no_pivot path (MS_MOVE + chroot). */
  r = rrt_rootfs_pivot(&ctx, !userns, &err);
  report(r == 0, "rrt_rootfs_pivot (%s)", userns ? "pivot_root" : "no_pivot");
  if (r < 0) {
    diag("%s", rrt_error_msg(&err));
    return;
  }
  r = rrt_rootfs_finalize(&ctx, &err);
  report(r == 0, "rrt_rootfs_finalize");
  if (r < 0) {
    diag("%s", rrt_error_msg(&err));
    return;
  }
  report(tap_count_fds() == fds_before, "prepare/pivot/finalize leak no fds (%d before)",
         fds_before);
  checks_after_finalize(userns, kcore, firmware, tun);
}

static bool write_proc(const char *file, const char *content)
{
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool done = write(fd, content, strlen(content)) == (ssize_t)strlen(content);
  close(fd);
  return done;
}

/* New mount and pid namespaces, the test in their pid 1; exits with its status. */
static __attribute__((noreturn)) void run_as_pid1(bool userns)
{
  if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0) {
    dprintf(report_fd, "X mount/pid namespaces unavailable: %s\n", strerror(errno));
    _exit(0);
  }
  pid_t pid = fork();
  must(pid >= 0, "fork");
  if (pid == 0) {
    in_namespace(userns);
    dprintf(report_fd, "D\n");
    _exit(0);
  }
  int status;
  must(waitpid(pid, &status, 0) == pid, "waitpid");
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* The first child: drop to nobody, become root of a fresh user namespace,
 * then a pid-1 grandchild in new mount and pid namespaces runs the test. */
static void child(bool userns)
{
  if (!userns) /* real root: only new mount and pid namespaces, no fallbacks needed */
    run_as_pid1(false);
  if (geteuid() == 0) {
    must(setgroups(0, NULL) == 0, "setgroups");
    must(setresgid(NOBODY, NOBODY, NOBODY) == 0, "setresgid");
    must(setresuid(NOBODY, NOBODY, NOBODY) == 0, "setresuid");
    /* A uid change clears dumpable, which makes /proc/self/uid_map root's. */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  }
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER) < 0) {
    dprintf(report_fd, "X user namespaces unavailable: %s\n", strerror(errno));
    _exit(0);
  }
  char map[64];
  must(write_proc("/proc/self/setgroups", "deny"), "setgroups deny");
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
  must(write_proc("/proc/self/uid_map", map), "uid_map");
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
  must(write_proc("/proc/self/gid_map", map), "gid_map");
  run_as_pid1(true);
}

static void run_child(bool userns)
{
  int p[2];
  must(pipe2(p, O_CLOEXEC) == 0, "pipe");
  printf("# rootfs in %s\n", userns ? "a user namespace, unprivileged" : "real root's namespaces");
  fflush(stdout);
  pid_t pid = fork();
  must(pid >= 0, "fork");
  if (pid == 0) {
    close(p[0]);
    report_fd = p[1];
    child(userns);
  }
  close(p[1]);
  FILE *in = fdopen(p[0], "r");
  char *line = NULL;
  size_t cap = 0;
  bool done = false, unavailable = false;
  while (getline(&line, &cap, in) > 0) {
    line[strcspn(line, "\n")] = '\0';
    if (line[0] == 'D') {
      done = true;
    } else if (line[0] == 'X') {
      unavailable = true;
      printf("ok %d # SKIP %s\n", ++tap_n, line + 2);
    } else if (line[0] == 'S') {
      printf("ok %d # SKIP %s\n", ++tap_n, line + 2);
    } else if (line[0] == '#') {
      printf("%s\n", line);
    } else {
      ok(line[0] == '1', "%s", line + 2);
    }
  }
  free(line);
  fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!unavailable) {
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && done,
       "the namespace child ran to the end (status %d)", status);
  }
}

static void test_in_namespaces(void)
{
  build_trees();
  run_child(true);
  if (geteuid() == 0)
    run_child(false);
  else
    printf("ok %d # SKIP the real-root run needs root\n", ++tap_n);

  /* The mount namespace died with the child: nothing may remain on the host. */
  cleanup_free char *mi = NULL;
  size_t len = 0;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_read_file("/proc/self/mountinfo", &mi, &len, &err) == 0)
    ok(strstr(mi, base) == NULL, "no mount under %s is left on the host", base);
  rrt_error_clear(&err);
  nftw(base, remove_one, 16, FTW_PHYS | FTW_DEPTH);
}

/* The option-list filter behind devpts' gid= retry, v1 cgroup mounts and fuse-overlayfs. */
static void test_opts_without(void)
{
  static const char *const drop[] = {"gid=", "rw", NULL};
  cleanup_free char *a = rrt_opts_without("rw,mode=0620,gid=5,ptmxmode=0666,gidx", drop);
  is_str(a, "mode=0620,ptmxmode=0666,gidx",
         "a prefix ending in '=' drops every gid=...; rw whole only");
  cleanup_free char *b = rrt_opts_without("rw,gid=5", drop);
  is_str(b, "", "all dropped: empty");
  cleanup_free char *c = rrt_opts_without(NULL, drop);
  is_str(c, "", "NULL: empty");
  cleanup_free char *d = rrt_opts_without("rwx,,ro", drop);
  is_str(d, "rwx,ro", "a longer option is kept; empty ones go");
}

int main(void)
{
  test_opts();
  test_opts_without();
  test_in_namespaces();
  return tap_done();
}

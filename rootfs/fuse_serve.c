/* fuse_serve.c: fuse-overlayfs served by the runtime from outside the container: its own pid
 * namespace and a mount namespace that holds only its layers, the system's libraries and
 * /dev/fuse, never the host's tree; it ends when the container's init does. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/image.h"
#include "rootlessrt/util.h"

/* Where the daemon's root is built, in its own mount namespace, after every host path it needs
 * is cloned: any directory will do; /dev is there wherever /dev/fuse is. */
static const char *build_dir(void)
{
  struct stat st;
  return stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode) ? "/tmp" : "/dev";
}

/*
 * Read-only system files the dynamically linked fuse-overlayfs needs to start: ld.so and its
 * libraries (top-level /lib* are often symlinks into /usr, copied as symlinks) and ld.so.cache.
 * The program itself is executed through a descriptor opened before the root changes.
 */
static const char *const lib_paths[] = {
    "/lib",       "/lib64",      "/lib32",         "/libx32",          "/usr/lib", "/usr/lib64",
    "/usr/lib32", "/usr/libx32", "/usr/local/lib", "/etc/ld.so.cache", NULL};

/*
 * What fuse-overlayfs needs as root of the container's user namespace: to create files of any
 * of its ids (chown, fowner, fsetid, dac override and read search), device whiteouts (mknod),
 * file capabilities kept on copy-up (setfcap). Not SYS_ADMIN, SYS_PTRACE, KILL, NET_* ...
 */
static const int keep_caps[] = {CAP_CHOWN,   CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH,
                                CAP_FOWNER,  CAP_FSETID,       CAP_MKNOD,
                                CAP_SETFCAP, CAP_SETUID,       CAP_SETGID};

static __attribute__((noreturn)) void die(int fd, const char *what)
{
  int e = errno;
  dprintf(fd, "E%d %s: %s", e, what, strerror(e));
  _exit(1);
}

/* In the process that becomes fuse-overlayfs: its stderr says it, as the daemon's own would. */
static __attribute__((noreturn)) void fail(int fd, const char *what)
{
  int e = errno;
  dprintf(fd, "%s: %s", what, strerror(e));
  _exit(126);
}

static int cmp_int(const void *a, const void *b)
{
  return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor above stderr but those in keep (which may hold -1). */
static void close_fds_except(int *keep, size_t n)
{
  qsort(keep, n, sizeof(*keep), cmp_int);
  unsigned int from = 3;
  for (size_t i = 0; i < n; i++) {
    if (keep[i] < (int)from)
      continue;
    if ((unsigned int)keep[i] > from)
      syscall(SYS_close_range, from, (unsigned int)keep[i] - 1, 0);
    from = (unsigned int)keep[i] + 1;
  }
  syscall(SYS_close_range, from, ~0U, 0);
}

/* The server outlives create: nothing of the runtime's stdio (an engine's pipes, which it reads
 * to their end) and none of its signal handlers (create's kill the container's init). */
static void detach(void)
{
  rrt_stdio_to_null();
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction(sig, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

/* mkdir -p of path under base (a directory fd); the last component a file when `file`. */
static int make_path(int base, const char *path, bool file)
{
  cleanup_free char *copy = xstrdup(path);
  for (char *p = copy + 1;; p++) {
    bool last = *p == '\0';
    if (*p != '/' && !last)
      continue;
    *p = '\0';
    const char *rel = copy + 1;
    if (*rel) {
      int r = last && file ? mknodat(base, rel, S_IFREG | 0600, 0) : mkdirat(base, rel, 0755);
      if (r < 0 && errno != EEXIST)
        return -1;
    }
    if (last)
      return 0;
    *p = '/';
  }
}

/* A host path to appear in the daemon's root at the same path: a detached copy of its mount
 * (taken before the tmpfs covers build_dir(), where the layers may be), or a symlink's target. */
struct entry {
  char *path;
  int tree;   /* open_tree clone, or -1 for a symlink */
  char *link; /* the symlink's target */
  bool is_file;
};

#define MAX_ENTRIES 512

static int take(struct entry *e, const char *src, bool rdonly, bool dev)
{
  struct stat st;
  e->path = xstrdup(src);
  e->tree = -1;
  e->link = NULL;
  if (lstat(src, &st) < 0)
    return -1;
  e->is_file = !S_ISDIR(st.st_mode);
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    ssize_t n = readlink(src, target, sizeof(target) - 1);
    if (n < 0)
      return -1;
    target[n] = '\0';
    e->link = xstrdup(target);
    return 0;
  }
  e->tree = (int)syscall(SYS_open_tree, AT_FDCWD, src,
                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (e->tree < 0)
    return -1;
  struct mount_attr a = {.attr_set = MOUNT_ATTR_NOSUID | (dev ? 0 : MOUNT_ATTR_NODEV) |
                                     (rdonly ? MOUNT_ATTR_RDONLY : 0)};
  return (int)syscall(SYS_mount_setattr, e->tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a));
}

/* The entry at its path under base (the tmpfs). */
static int place(int base, const struct entry *e)
{
  if (e->link) {
    cleanup_free char *parent = xstrdup(e->path);
    *strrchr(parent, '/') = '\0';
    if (*parent && make_path(base, parent, false) < 0)
      return -1;
    return symlinkat(e->link, base, e->path + 1) < 0 && errno != EEXIST ? -1 : 0;
  }
  if (make_path(base, e->path, e->is_file) < 0)
    return -1;
  return (int)syscall(SYS_move_mount, e->tree, "", base, e->path + 1, MOVE_MOUNT_F_EMPTY_PATH);
}

static void take_or_die(int status, struct entry *e, size_t *n, const char *what, const char *src,
                        bool rdonly, bool optional)
{
  if (*n == MAX_ENTRIES) {
    errno = E2BIG;
    die(status, "fuse-overlayfs: too many layers");
  }
  if (take(&e[*n], src, rdonly, strncmp(src, "/dev/", 5) == 0) == 0) {
    (*n)++;
    return;
  }
  int err = errno;
  free(e[*n].path);
  if (optional && err == ENOENT)
    return;
  dprintf(status, "E%d fuse-overlayfs: %s %s: %s", err, what, src, strerror(err));
  _exit(1);
}

/* The deepest directory holding both a and b. */
static char *common_dir(const char *a, const char *b)
{
  size_t n = 0, last = 0;
  while (a[n] && a[n] == b[n]) {
    if (a[n] == '/')
      last = n;
    n++;
  }
  if ((a[n] == '\0' || a[n] == '/') && (b[n] == '\0' || b[n] == '/'))
    last = n;
  return last ? xstrndup(a, last) : xstrdup("/");
}

/* The value of option `key` in the comma-separated opts, in place (opts is modified), or NULL. */
static char *opt_value(char *opts, const char *key)
{
  size_t k = strlen(key);
  char *save = NULL;
  for (char *t = strtok_r(opts, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (strncmp(t, key, k) == 0 && t[k] == '=')
      return t + k + 1;
  return NULL;
}

/*
 * The layer directories named by fuse-overlayfs's options. The upper and work directories as one
 * mount, their common directory (fuse-overlayfs renames from one into the other, which fails
 * with EXDEV across two mounts), taken first: lower directories inside it (a bundle's lower,
 * upper and work side by side) are mounted over it afterwards, read-only.
 */
static void take_layers(int status, struct entry *e, size_t *n, const char *opts, char **rw)
{
  cleanup_free char *c1 = xstrdup(opts), *c2 = xstrdup(opts), *c3 = xstrdup(opts);
  char *upper = opt_value(c1, "upperdir"), *work = opt_value(c2, "workdir");
  if ((upper && *upper != '/') || (work && *work != '/')) {
    errno = EINVAL;
    die(status, "fuse-overlayfs: the upper or work directory is not absolute");
  }
  if (upper || work) {
    *rw = upper && work ? common_dir(upper, work) : xstrdup(upper ? upper : work);
    if (strcmp(*rw, "/") == 0) {
      errno = EINVAL;
      die(status, "fuse-overlayfs: upperdir and workdir share no directory but \"/\", which "
                  "fuse-overlayfs would be given whole");
    }
    take_or_die(status, e, n, "upperdir and workdir", *rw, false, false);
  }
  char *lower = opt_value(c3, "lowerdir"), *save = NULL;
  for (char *d = lower ? strtok_r(lower, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
    if (*d != '/') {
      errno = EINVAL;
      die(status, "fuse-overlayfs: a lower directory is not absolute");
    }
    take_or_die(status, e, n, "lowerdir", d, true, false);
  }
}

/* The daemon's root: a tmpfs with the layers, the libraries, /dev/null, /dev/fuse and a proc of
 * its own pid namespace; everything else of the host's tree is unmounted. */
static void build_root(int status, const char *opts)
{
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    die(status, "fuse-overlayfs: make / private");
  struct entry e[MAX_ENTRIES];
  size_t n = 0;
  for (size_t i = 0; lib_paths[i]; i++)
    take_or_die(status, e, &n, "bind", lib_paths[i], true, true);
  cleanup_free char *rw = NULL;
  take_layers(status, e, &n, opts, &rw);
  take_or_die(status, e, &n, "bind", "/dev/null", false, false);
  take_or_die(status, e, &n, "bind", "/dev/fuse", false, false);
  const char *dir = build_dir();
  if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
    die(status, "fuse-overlayfs: mount a tmpfs for its root");
  cleanup_close int base = open(dir, O_DIRECTORY | O_PATH | O_CLOEXEC);
  if (base < 0)
    die(status, "fuse-overlayfs: open its root");
  for (size_t i = 0; i < n; i++) {
    if (place(base, &e[i]) < 0) {
      dprintf(status, "E%d fuse-overlayfs: bind %s: %s", errno, e[i].path, strerror(errno));
      _exit(1);
    }
    if (e[i].tree >= 0)
      close(e[i].tree);
    free(e[i].link);
    free(e[i].path);
  }
  /* Best effort: a proc of this pid namespace shows the daemon and this process, no more. */
  if (mkdirat(base, "proc", 0555) == 0 && fchdir(base) == 0)
    mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  if (chdir(dir) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
      chdir("/") < 0)
    die(status, "fuse-overlayfs: pivot_root into its own root");
  mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
}

static void drop_caps(int status)
{
  uint64_t keep = 0;
  for (size_t i = 0; i < sizeof(keep_caps) / sizeof(keep_caps[0]); i++)
    keep |= 1ULL << keep_caps[i];
  for (int c = 0; c <= 63; c++)
    if (!(keep & (1ULL << c)) && prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) < 0 &&
        errno != EINVAL)
      fail(status, "fuse-overlayfs: drop the bounding set");
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct d[2] = {{0}};
  d[0].effective = d[0].permitted = (uint32_t)keep;
  d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
  if (syscall(SYS_capset, &h, d) < 0)
    fail(status, "fuse-overlayfs: capset");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    fail(status, "fuse-overlayfs: no_new_privs");
}

/* fuse-overlayfs itself: stderr to errfd, the /dev/fuse fd as "/dev/fd/N" (libfuse serves an
 * fd whose mount the caller made). It daemonizes once it is serving. */
static __attribute__((noreturn)) void exec_daemon(int status, int errfd, int prog, int fuse,
                                                  const char *opts)
{
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(errfd, 2) < 0)
    fail(status, "fuse-overlayfs: its stdio");
  int fd = dup(fuse); /* the one descriptor that crosses exec */
  char mnt[32];
  snprintf(mnt, sizeof(mnt), "/dev/fd/%d", fd);
  char *const argv[] = {"fuse-overlayfs", "-o", (char *)opts, mnt, NULL};
  char *const envp[] = {"PATH=/usr/bin:/bin", NULL};
  syscall(SYS_execveat, prog, "", argv, envp, AT_EMPTY_PATH);
  int e = errno;
  dprintf(2, "exec fuse-overlayfs: %s%s", strerror(e),
          e == ENOENT ? " (its ELF interpreter is not in /lib*, /usr/lib* or /usr/local/lib, the "
                        "only directories of its root; a script cannot run there either)"
                      : "");
  _exit(127);
}

/* pid 1 of the daemon's pid namespace: starts it, reports, then lives until the container's
 * init ends (the namespace and the daemon with it) or the daemon exits (its mount is gone). */
static __attribute__((noreturn)) void serve(int status, int init_pidfd, int prog, int fuse,
                                            const char *opts)
{
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  build_root(status, opts);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  cleanup_close int sfd = signalfd(-1, &chld, SFD_CLOEXEC);
  int errp[2];
  if (sfd < 0 || pipe2(errp, O_CLOEXEC) < 0)
    die(status, "fuse-overlayfs: signalfd");
  pid_t pid = fork();
  if (pid < 0)
    die(status, "fuse-overlayfs: fork");
  if (pid == 0) {
    sigprocmask(SIG_UNBLOCK, &chld, NULL);
    /* Its failures before exec are fuse-overlayfs's stderr, as after. */
    drop_caps(errp[1]);
    exec_daemon(errp[1], errp[1], prog, fuse, opts);
  }
  close(errp[1]);
  close(fuse);
  close(prog);
  cleanup_free char *msg = NULL;
  size_t len = 0;
  rrt_read_fd(errp[0], &msg, &len, NULL);
  close(errp[0]);
  int st = -1;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
      msg[--len] = '\0';
    dprintf(status, "E%d fuse-overlayfs failed (%s %d)%s%s", EIO,
            WIFEXITED(st) ? "status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
            len ? ": " : "", len ? msg : "");
    _exit(1);
  }
  if (rrt_write_all(status, "ok", 2) < 0)
    _exit(1);
  close(status);
  for (;;) {
    struct pollfd pf[2] = {{.fd = init_pidfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    if (poll(pf, 2, -1) < 0 && errno != EINTR)
      _exit(1);
    if (pf[0].revents)
      _exit(0); /* init is gone: so is the container, and the daemon goes with this namespace */
    if (pf[1].revents) {
      struct signalfd_siginfo si;
      if (read(sfd, &si, sizeof(si)) < 0 && errno != EAGAIN)
        _exit(1);
      while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
      if (waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
        _exit(0); /* the daemon ended: its mount was unmounted */
    }
  }
}

/* The process between the runtime and pid 1: joins init's user namespace, makes the daemon's
 * mount and pid namespaces, forks their pid 1 and reports its pid. */
static __attribute__((noreturn)) void middle(int pidw, int status, int userns, int init_pidfd,
                                             int prog, int fuse, const char *opts)
{
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  int keep[] = {pidw, status, userns, init_pidfd, prog, fuse};
  close_fds_except(keep, sizeof(keep) / sizeof(keep[0]));
  detach();
  if (userns >= 0 && setns(userns, CLONE_NEWUSER) < 0)
    die(status, "fuse-overlayfs: join the container's user namespace");
  if (userns >= 0) {
    close(userns);
    /* Root of it, as init is: the runtime's own id may map to another (--userns keep-id), and
     * exec as a non-root id would drop every capability. setgroups is denied in some. */
    if (setgroups(0, NULL) < 0 && errno != EPERM)
      die(status, "fuse-overlayfs: setgroups");
    if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
      die(status, "fuse-overlayfs: become root of the container's user namespace");
  }
  if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0)
    die(status, "fuse-overlayfs: unshare its mount and pid namespaces");
  pid_t pid = fork();
  if (pid < 0)
    die(status, "fuse-overlayfs: fork");
  if (pid == 0) {
    close(pidw);
    serve(status, init_pidfd, prog, fuse, opts);
  }
  _exit(rrt_write_all(pidw, &pid, sizeof(pid)) < 0 ? 1 : 0);
}

int rrt_fuse_serve(pid_t init, int fuse, int init_userns, const char *prog_path, const char *opts,
                   pid_t *helper, struct rrt_error *err)
{
  cleanup_close int prog = open(prog_path, O_PATH | O_CLOEXEC);
  if (prog < 0)
    return rrt_error_errno(err, "fuse-overlayfs: open %s", prog_path);
  cleanup_close int userns = fcntl(init_userns, F_DUPFD_CLOEXEC, 3);
  if (userns < 0)
    return rrt_error_errno(err, "fuse-overlayfs: dup the user namespace fd");
  struct stat a, b;
  /* A runtime running as real root has no user namespace to join. */
  if (fstat(userns, &a) == 0 && stat("/proc/self/ns/user", &b) == 0 && a.st_ino == b.st_ino &&
      a.st_dev == b.st_dev)
    close(steal_fd(&userns));
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, init, 0);
  if (pidfd < 0)
    return rrt_error_errno(err, "fuse-overlayfs: pidfd_open %d", (int)init);
  int p[2], q[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "pipe2");
  cleanup_close int pid_rd = p[0];
  cleanup_close int pid_wr = p[1];
  if (pipe2(q, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "pipe2");
  cleanup_close int rd = q[0];
  cleanup_close int wr = q[1];
  pid_t mid = fork();
  if (mid < 0)
    return rrt_error_errno(err, "fork");
  if (mid == 0)
    middle(pid_wr, wr, userns, pidfd, prog, fuse, opts);
  close(steal_fd(&wr));
  close(steal_fd(&pid_wr));
  pid_t pid = 0;
  ssize_t n = rrt_read_all(pid_rd, &pid, sizeof(pid));
  while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
    ;
  cleanup_free char *msg = NULL;
  size_t len = 0;
  rrt_read_fd(rd, &msg, &len, NULL); /* until pid 1 reports, or it and the middle one are gone */
  bool have_pid = n == (ssize_t)sizeof(pid) && pid > 0;
  if (have_pid && len == 2 && memcmp(msg, "ok", 2) == 0) {
    *helper = pid;
    return 0;
  }
  if (have_pid)
    kill(pid, SIGKILL);
  int e = 0, off = 0;
  if (!msg || msg[0] != 'E' || sscanf(msg + 1, "%d %n", &e, &off) < 1 || off == 0)
    return rrt_error_msgf(err, EIO, "fuse-overlayfs: its server exited before it was ready");
  return rrt_error_msgf(err, e, "%s", msg + 1 + off);
}

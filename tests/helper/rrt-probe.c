/* rrt-probe.c: static multi-call helper run inside test containers; prints what a test asserts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const signames[] = {
    [SIGHUP] = "HUP",   [SIGINT] = "INT",       [SIGQUIT] = "QUIT", [SIGILL] = "ILL",
    [SIGTRAP] = "TRAP", [SIGABRT] = "ABRT",     [SIGBUS] = "BUS",   [SIGFPE] = "FPE",
    [SIGKILL] = "KILL", [SIGUSR1] = "USR1",     [SIGSEGV] = "SEGV", [SIGUSR2] = "USR2",
    [SIGPIPE] = "PIPE", [SIGALRM] = "ALRM",     [SIGTERM] = "TERM", [SIGSTKFLT] = "STKFLT",
    [SIGCHLD] = "CHLD", [SIGCONT] = "CONT",     [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP",
    [SIGTTIN] = "TTIN", [SIGTTOU] = "TTOU",     [SIGURG] = "URG",   [SIGXCPU] = "XCPU",
    [SIGXFSZ] = "XFSZ", [SIGVTALRM] = "VTALRM", [SIGPROF] = "PROF", [SIGWINCH] = "WINCH",
    [SIGIO] = "IO",     [SIGPWR] = "PWR",       [SIGSYS] = "SYS",
};
#define NSIGNAMES ((int)(sizeof(signames) / sizeof(signames[0])))

static int die(const char *what)
{
  fprintf(stderr, "rrt-probe: %s: %s\n", what, strerror(errno));
  return 1;
}

static int usage(void)
{
  fputs("usage: rrt-probe caps|status|rlimits|umask|fds|cwd|env|ids|mounts|ns|hostname|pid|\n"
        "       spawn-sleep|signals|sleep N|exit N|kill-self SIG|syscall NAME|\n"
        "       write FILE TEXT|cat FILE|open DEV|wait-file PATH|rawsyscall NR [ARGS...]|\n"
        "       notify TEXT|nested-proc|fuse-scan PATH|mkfifo PATH|reach-helpers OUT STOP HOSTPID\n"
        "       (as argv[0] fuse-overlayfs: its fds on stderr, exit 1)\n",
        stderr);
  return 2;
}

static const char *errname(int e)
{
  static char buf[32];
  const char *n = strerrorname_np(e);
  if (n)
    return n;
  snprintf(buf, sizeof(buf), "errno%d", e);
  return buf;
}

/* Parses a signal as "TERM", "SIGTERM" or "15"; -1 if unknown. */
static int parse_signal(const char *s)
{
  char *end;
  long n = strtol(s, &end, 10);
  if (*s && !*end)
    return n > 0 && n < NSIG ? (int)n : -1;
  if (strncmp(s, "SIG", 3) == 0)
    s += 3;
  for (int i = 1; i < NSIGNAMES; i++)
    if (signames[i] && strcmp(signames[i], s) == 0)
      return i;
  return -1;
}

static int parse_int(const char *s, long *out)
{
  char *end;
  errno = 0;
  *out = strtol(s, &end, 10);
  return (*s && !*end && errno == 0) ? 0 : -1;
}

/* Prints the lines of /proc/self/status whose key is in keys. */
static int status_lines(const char *const *keys)
{
  FILE *f = fopen("/proc/self/status", "re");
  char line[4096];
  if (!f)
    return die("/proc/self/status");
  while (fgets(line, sizeof(line), f)) {
    for (const char *const *k = keys; *k; k++) {
      size_t l = strlen(*k);
      if (strncmp(line, *k, l) == 0 && line[l] == ':')
        fputs(line, stdout);
    }
  }
  fclose(f);
  return 0;
}

static int cat_file(const char *path)
{
  char buf[65536];
  ssize_t n;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return die(path);
  fflush(stdout);
  while ((n = read(fd, buf, sizeof(buf))) > 0)
    if (write(STDOUT_FILENO, buf, (size_t)n) != n)
      return die("write stdout");
  if (n < 0)
    return die(path);
  close(fd);
  return 0;
}

/* Opens PATH read-write (a device node: what the device rules decide); prints "ok" or the errno
 * name. */
static int do_open(const char *path)
{
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
  puts(fd < 0 ? errname(errno) : "ok");
  if (fd >= 0)
    close(fd);
  return fd < 0;
}

static int do_rlimits(void)
{
  static const struct {
    int res;
    const char *name;
  } lims[] = {
      {RLIMIT_AS, "RLIMIT_AS"},
      {RLIMIT_CORE, "RLIMIT_CORE"},
      {RLIMIT_CPU, "RLIMIT_CPU"},
      {RLIMIT_DATA, "RLIMIT_DATA"},
      {RLIMIT_FSIZE, "RLIMIT_FSIZE"},
      {RLIMIT_LOCKS, "RLIMIT_LOCKS"},
      {RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK"},
      {RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE"},
      {RLIMIT_NICE, "RLIMIT_NICE"},
      {RLIMIT_NOFILE, "RLIMIT_NOFILE"},
      {RLIMIT_NPROC, "RLIMIT_NPROC"},
      {RLIMIT_RSS, "RLIMIT_RSS"},
      {RLIMIT_RTPRIO, "RLIMIT_RTPRIO"},
      {RLIMIT_RTTIME, "RLIMIT_RTTIME"},
      {RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING"},
      {RLIMIT_STACK, "RLIMIT_STACK"},
  };
  for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
    struct rlimit rl;
    if (getrlimit(lims[i].res, &rl) < 0)
      return die(lims[i].name);
    printf("%s ", lims[i].name);
    if (rl.rlim_cur == RLIM_INFINITY)
      printf("unlimited ");
    else
      printf("%llu ", (unsigned long long)rl.rlim_cur);
    if (rl.rlim_max == RLIM_INFINITY)
      printf("unlimited\n");
    else
      printf("%llu\n", (unsigned long long)rl.rlim_max);
  }
  return 0;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Open fds in ascending order on one line, without the directory fd used to list them. */
static int do_fds(void)
{
  int fds[4096], n = 0;
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  if (!d)
    return die("/proc/self/fd");
  while ((e = readdir(d)) && n < (int)(sizeof(fds) / sizeof(fds[0]))) {
    long v;
    if (e->d_name[0] == '.' || parse_int(e->d_name, &v) < 0 || v == dirfd(d))
      continue;
    fds[n++] = (int)v;
  }
  closedir(d);
  qsort(fds, (size_t)n, sizeof(int), cmp_int);
  for (int i = 0; i < n; i++)
    printf("%s%d", i ? " " : "", fds[i]);
  printf("\n");
  return 0;
}

static int do_ids(void)
{
  gid_t groups[NGROUPS_MAX];
  int n = getgroups(NGROUPS_MAX, groups);
  if (n < 0)
    return die("getgroups");
  printf("uid=%u gid=%u euid=%u egid=%u groups=", getuid(), getgid(), geteuid(), getegid());
  for (int i = 0; i < n; i++)
    printf("%s%u", i ? "," : "", groups[i]);
  printf("\n");
  return 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "net:[4026531840]" per entry of /proc/self/ns, sorted, named by the entry (pid_for_children). */
static int do_ns(void)
{
  char *names[64];
  int n = 0;
  DIR *d = opendir("/proc/self/ns");
  struct dirent *e;
  if (!d)
    return die("/proc/self/ns");
  while ((e = readdir(d)) && n < 64) {
    if (e->d_name[0] != '.')
      names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof(char *), cmp_str);
  for (int i = 0; i < n; i++) {
    char path[PATH_MAX], link[256];
    ssize_t l;
    snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
    l = readlink(path, link, sizeof(link) - 1);
    if (l < 0)
      printf("%s:%s\n", names[i], errname(errno));
    else {
      link[l] = '\0';
      printf("%s:%s\n", names[i], strchr(link, '[') ? strchr(link, '[') : link);
    }
    free(names[i]);
  }
  return 0;
}

static int do_sleep(const char *arg)
{
  long secs;
  if (strcmp(arg, "inf") == 0) {
    for (;;)
      pause();
  }
  if (parse_int(arg, &secs) < 0 || secs < 0)
    return usage();
  struct timespec ts = {.tv_sec = secs, .tv_nsec = 0};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
  return 0;
}

static int do_kill_self(const char *arg)
{
  int sig = parse_signal(arg);
  sigset_t all;
  if (sig < 0)
    return usage();
  /* The default action must happen even if the runtime left the signal ignored or blocked. */
  signal(sig, SIG_DFL);
  sigemptyset(&all);
  sigaddset(&all, sig);
  sigprocmask(SIG_UNBLOCK, &all, NULL);
  fflush(stdout);
  if (sig == SIGSEGV) {
    /* A real fault is forced: it kills even pid 1 of a pid namespace. */
    volatile int *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED)
      *page = 1;
  }
  if (kill(getpid(), sig) < 0)
    return die("kill");
  /* As pid 1 of a pid namespace, a signal with the default action from itself is ignored. */
  sleep(1);
  fprintf(stderr, "rrt-probe: still alive after signal %d\n", sig);
  return 1;
}

/* Tries one operation; prints "ok" or the errno name. */
static int do_syscall(const char *name)
{
  long r;
  errno = 0;
  if (strcmp(name, "mkdir") == 0) {
    r = mkdir("/tmp/x", 0755);
    if (r == 0)
      rmdir("/tmp/x");
  } else if (strcmp(name, "getpid") == 0) {
    r = getpid() > 0 ? 0 : -1;
  } else if (strcmp(name, "personality") == 0) {
    r = personality(PER_LINUX);
  } else if (strcmp(name, "socket") == 0) {
    r = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r >= 0)
      close((int)r);
  } else if (strcmp(name, "socket-unix") == 0) {
    r = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r >= 0)
      close((int)r);
  } else if (strcmp(name, "unshare") == 0) {
    r = unshare(CLONE_NEWUTS);
  } else if (strcmp(name, "mount") == 0) {
    r = mount("none", "/tmp", "tmpfs", 0, NULL);
    if (r == 0)
      umount("/tmp");
  } else if (strcmp(name, "sethostname") == 0) {
    char h[256] = "";
    gethostname(h, sizeof(h) - 1);
    r = sethostname(h, strlen(h));
  } else if (strcmp(name, "chown") == 0) {
    r = chown("/tmp", 0, 0);
  } else if (strcmp(name, "setuid") == 0) {
    r = setuid(getuid());
  } else if (strcmp(name, "chroot") == 0) {
    r = chroot("/");
  } else if (strcmp(name, "ptrace") == 0) {
    r = syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0);
  } else if (strcmp(name, "keyctl") == 0) {
    r = syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0);
  } else {
    fprintf(stderr, "rrt-probe: unknown syscall test %s\n", name);
    return 2;
  }
  puts(r < 0 ? errname(errno) : "ok");
  return r < 0 ? 1 : 0;
}

static int do_write(const char *path, const char *text)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  size_t len = strlen(text);
  if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
    puts(errname(errno));
    if (fd >= 0)
      close(fd);
    return 1;
  }
  if (close(fd) < 0) {
    puts(errname(errno));
    return 1;
  }
  puts("ok");
  return 0;
}

static int do_wait_file(const char *path)
{
  struct stat st;
  const struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
  while (stat(path, &st) < 0)
    nanosleep(&ts, NULL);
  return 0;
}

static void on_signal(int sig)
{
  char msg[32] = "got ";
  const char *n = sig < NSIGNAMES && signames[sig] ? signames[sig] : "?";
  size_t l = strlen(msg);
  while (*n && l < sizeof(msg) - 2)
    msg[l++] = *n++;
  msg[l++] = '\n';
  if (write(STDOUT_FILENO, msg, l) < 0)
    _exit(1);
  if (sig == SIGTERM)
    _exit(0);
}

/* Handlers (not SIG_DFL) so that signals reach it even as pid 1 of a pid namespace. */
_Noreturn static void do_signals(void)
{
  struct sigaction sa;
  sigset_t none;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s = 1; s < NSIGNAMES; s++) {
    if (s == SIGKILL || s == SIGSTOP || s == SIGCHLD)
      continue;
    sigaction(s, &sa, NULL);
  }
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  puts("ready");
  fflush(stdout);
  for (;;)
    pause();
}

_Noreturn static void do_spawn_sleep(void)
{
  pid_t pid;
  fflush(stdout);
  pid = fork();
  if (pid < 0) {
    die("fork");
    exit(1);
  }
  if (pid == 0) {
    for (;;)
      pause();
  }
  printf("%d\n", (int)pid);
  fflush(stdout);
  for (;;)
    pause();
}

/* Calls syscall NR with up to six numeric arguments (0 when absent, any base strtoul takes);
 * prints "ok" or the errno name. For syscalls that the "syscall" verb does not name. */
static int do_rawsyscall(int n, char **args)
{
  unsigned long a[7] = {0};
  if (n < 1 || n > 7)
    return usage();
  for (int i = 0; i < n; i++) {
    char *end;
    errno = 0;
    a[i] = strtoul(args[i], &end, 0);
    if (!*args[i] || *end || errno)
      return usage();
  }
  errno = 0;
  long r = syscall((long)a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
  puts(r < 0 ? errname(errno) : "ok");
  return r < 0 ? 1 : 0;
}

/* ---- issue 19 (the reach rule): a container process attacks the runtime's helpers ---- */

/* Is pid's argv[0] rrt-probe (a program of the container's), or unreadable (gone)? */
static int runs_probe(long pid)
{
  char path[64], buf[4096];
  snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n <= 0)
    return 1;
  buf[n] = '\0';
  const char *base = strrchr(buf, '/');
  base = base ? base + 1 : buf;
  return strcmp(base, "rrt-probe") == 0;
}

/* A process of the runtime's in our pid namespace: its parent is outside it (PPid 0), it is
 * not init nor us, and it has not exec'd a program of the container's (argv[0] is not ours). */
static pid_t find_helper(void)
{
  DIR *d = opendir("/proc");
  pid_t found = 0;
  struct dirent *de;
  while (d && !found && (de = readdir(d))) {
    long pid = strtol(de->d_name, NULL, 10);
    if (pid <= 1 || pid == (long)getpid())
      continue;
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    FILE *f = fopen(path, "re");
    long ppid = -1;
    while (f && fgets(buf, sizeof(buf), f))
      if (strncmp(buf, "PPid:", 5) == 0)
        ppid = strtol(buf + 5, NULL, 10);
    if (f)
      fclose(f);
    if (ppid != 0)
      continue;
    if (!runs_probe(pid))
      found = (pid_t)pid;
  }
  if (d)
    closedir(d);
  return found;
}

/* reach-helpers OUT STOP HOSTPID: waits (up to 20 s) for a runtime helper in our pid namespace,
 * or for the file STOP. On one: PTRACE_SEIZE it, open its /proc root, take its fds with
 * pidfd_getfd and, when HOSTPID > 0, send a forged INIT_PID naming HOSTPID down every
 * SOCK_SEQPACKET among them; then, when /etc/passwd is a FIFO, write a line to it (releasing a
 * runtime blocked reading it). What happened goes to OUT, one "key: value" line each. */
static int do_reach_helpers(const char *out, const char *stop, const char *hostpid_s)
{
  long hostpid = strtol(hostpid_s, NULL, 10);
  const struct timespec ts = {.tv_sec = 0, .tv_nsec = 2 * 1000 * 1000};
  struct stat st;
  pid_t t = 0;
  for (long i = 0; i < 10000 && !t && stat(stop, &st) < 0; i++) {
    t = find_helper();
    if (!t)
      nanosleep(&ts, NULL);
  }
  FILE *o = fopen(out, "we");
  if (!o)
    return die(out);
  if (!t) {
    fputs("target: none\n", o);
  } else {
    fprintf(o, "target: %d\n", (int)t);
    char cpath[64], cbuf[256];
    snprintf(cpath, sizeof(cpath), "/proc/%d/cmdline", (int)t);
    int cfd = open(cpath, O_RDONLY | O_CLOEXEC);
    ssize_t cn = cfd >= 0 ? read(cfd, cbuf, sizeof(cbuf) - 1) : -1;
    if (cfd >= 0)
      close(cfd);
    for (ssize_t k = 0; k < cn; k++)
      cbuf[k] = cbuf[k] ? cbuf[k] : ' ';
    cbuf[cn > 0 ? cn : 0] = '\0';
    fprintf(o, "cmdline: %s\n", cbuf);
    long r = syscall(SYS_ptrace, 0x4206 /* PTRACE_SEIZE */, t, NULL, NULL);
    fprintf(o, "attach: %s\n", r == 0 ? "ok" : errname(errno));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/root/", (int)t);
    DIR *d = opendir(path);
    fprintf(o, "root: %s\n", d ? "ok" : errname(errno));
    if (d)
      closedir(d);
    int pfd = (int)syscall(SYS_pidfd_open, t, 0);
    int got = 0, forged = 0, first_errno = 0;
    for (int fd = 0; pfd >= 0 && fd < 64; fd++) {
      int g = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
      if (g < 0) {
        if (!first_errno && errno != EBADF)
          first_errno = errno;
        continue;
      }
      got++;
      int type = 0;
      socklen_t len = sizeof(type);
      if (hostpid > 0 && getsockopt(g, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
          type == SOCK_SEQPACKET) {
        struct {
          unsigned int type, len;
          long long value;
        } h = {1 /* INIT_PID */, 0, hostpid};
        if (send(g, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h))
          forged++;
      }
      close(g);
    }
    fprintf(o, "getfd: %d%s%s\n", got, got ? "" : " ", got ? "" : errname(first_errno));
    fprintf(o, "forged: %d\n", forged);
    /* It may have exec'd the container's program meanwhile: then what was tried is void. */
    fprintf(o, "after: %s\n", runs_probe(t) ? "exec'd" : "runtime");
  }
  if (lstat("/etc/passwd", &st) == 0 && S_ISFIFO(st.st_mode)) {
    /* A target that is the runtime may not have reached its open of the FIFO yet: up to 5 s. */
    int fd = open("/etc/passwd", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    for (int i = 0; fd < 0 && errno == ENXIO && t && !runs_probe(t) && i < 2500; i++) {
      nanosleep(&ts, NULL);
      fd = open("/etc/passwd", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    }
    const char line[] = "root:x:0:0:root:/fifo-home:/bin/sh\n";
    fprintf(o, "fifo: %s\n",
            fd >= 0 && write(fd, line, sizeof(line) - 1) > 0 ? "written" : "no reader");
    if (fd >= 0)
      close(fd);
  }
  fputs("done\n", o);
  return fclose(o) == 0 ? 0 : die(out);
}

/* mkfifo PATH: replaces PATH with a FIFO. */
static int do_mkfifo(const char *path)
{
  unlink(path);
  return mkfifo(path, 0644) == 0 ? 0 : die(path);
}
/* ---- end issue 19 ---- */

/* sd_notify's wire form: TEXT as one datagram to the socket $NOTIFY_SOCKET names. */
static int do_notify(const char *text)
{
  const char *path = getenv("NOTIFY_SOCKET");
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (!path || strlen(path) >= sizeof(sa.sun_path)) {
    fputs("rrt-probe: NOTIFY_SOCKET is not set\n", stderr);
    return 1;
  }
  strcpy(sa.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return die("socket");
  if (sendto(fd, text, strlen(text), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return die(path);
  close(fd);
  return 0;
}

/* ---- rootfs verbs (issue 21) ---- */

static int write_text(const char *path, const char *text)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* What `unshare -mrpf mount -t proc` tries: a new user, mount and pid namespace of its own
 * (uid 0 mapped to ours), a new proc on a tmpfs made there. The kernel allows it only when a
 * fully visible proc is already in the mount namespace. Prints "ok" or the errno name (the
 * step before, when that failed: "unshare: EPERM"). */
static int do_nested_proc(void)
{
  char map[64];
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
    return printf("unshare: %s\n", errname(errno)), 1;
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
  if (write_text("/proc/self/uid_map", map) < 0)
    return printf("uid_map: %s\n", errname(errno)), 1;
  if (write_text("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
    return printf("setgroups: %s\n", errname(errno)), 1;
  snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
  if (write_text("/proc/self/gid_map", map) < 0)
    return printf("gid_map: %s\n", errname(errno)), 1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return die("fork");
  if (pid == 0) {
    if (mount("none", "/tmp", "tmpfs", 0, NULL) < 0)
      _exit(printf("mount tmpfs: %s\n", errname(errno)) > 0 ? 1 : 1);
    mkdir("/tmp/p", 0755);
    int r = mount("proc", "/tmp/p", "proc", 0, NULL);
    printf("%s\n", r == 0 ? "ok" : errname(errno));
    fflush(stdout);
    _exit(r == 0 ? 0 : 1);
  }
  int st;
  if (waitpid(pid, &st, 0) < 0)
    return die("waitpid");
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* ---- end of rootfs verbs ---- */
/* ---- fuse-scan (issue 19: fuse-overlayfs confinement) ---- */
/* fuse-scan PATH: the attack on a fuse-overlayfs daemon the container can see: every process
 * in /proc whose name is fuse-overlayfs ("fuse-overlayfs PID"), and every process through whose
 * /proc/PID/root the host file PATH can be read ("reached PID: first line"). */
static int do_fuse_scan(const char *path)
{
  DIR *d = opendir("/proc");
  if (!d || !path)
    return die("/proc");
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char p[512], comm[64] = "";
    snprintf(p, sizeof(p), "/proc/%s/comm", e->d_name);
    FILE *f = fopen(p, "re");
    if (f) {
      if (fgets(comm, sizeof(comm), f))
        comm[strcspn(comm, "\n")] = '\0';
      fclose(f);
    }
    if (strcmp(comm, "fuse-overlayfs") == 0)
      printf("fuse-overlayfs %s\n", e->d_name);
    snprintf(p, sizeof(p), "/proc/%s/root%s", e->d_name, path);
    f = fopen(p, "re");
    if (f) {
      char line[256] = "";
      if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
      line[strcspn(line, "\n")] = '\0';
      printf("reached %s (%s): %s\n", e->d_name, comm, line);
      fclose(f);
    }
  }
  closedir(d);
  return 0;
}

/* Run as "fuse-overlayfs" (ROOTLESSRT_FUSE_OVERLAYFS=rrt-probe): a stand-in that fails, saying
 * which descriptors it got (" N -> TARGET" lines on stderr), from wherever it is executed. */
static int fake_fuse(void)
{
  DIR *d = opendir("/proc/self/fd");
  if (!d) {
    fprintf(stderr, "fake fuse-overlayfs: /proc/self/fd: %s\n", strerror(errno));
    return 1;
  }
  struct dirent *e;
  while ((e = readdir(d))) {
    char p[300], t[256];
    snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(p, t, sizeof(t) - 1);
    if (n > 0 && e->d_name[0] != '.') {
      t[n] = '\0';
      fprintf(stderr, " %s -> %s\n", e->d_name, t);
    }
  }
  closedir(d);
  return 1;
}
/* ---- end fuse-scan ---- */

int main(int argc, char **argv)
{
  static const char *const cap_keys[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", NULL};
  static const char *const status_keys[] = {"NoNewPrivs", "Seccomp", "Uid", "Gid", "Groups", NULL};
  const char *verb;
  long n;
  int rc = 0;

  if (argc > 0 && strcmp(argv[0], "fuse-overlayfs") == 0)
    return fake_fuse();
  if (argc < 2)
    return usage();
  verb = argv[1];

  if (strcmp(verb, "caps") == 0) {
    rc = status_lines(cap_keys);
  } else if (strcmp(verb, "status") == 0) {
    rc = status_lines(status_keys);
  } else if (strcmp(verb, "rlimits") == 0) {
    rc = do_rlimits();
  } else if (strcmp(verb, "umask") == 0) {
    mode_t m = umask(0);
    umask(m);
    printf("%04o\n", (unsigned)m);
  } else if (strcmp(verb, "fds") == 0) {
    rc = do_fds();
  } else if (strcmp(verb, "cwd") == 0) {
    char buf[PATH_MAX];
    if (!getcwd(buf, sizeof(buf)))
      return die("getcwd");
    puts(buf);
  } else if (strcmp(verb, "env") == 0) {
    for (char **e = environ; *e; e++)
      puts(*e);
  } else if (strcmp(verb, "ids") == 0) {
    rc = do_ids();
  } else if (strcmp(verb, "mounts") == 0) {
    rc = cat_file("/proc/self/mountinfo");
  } else if (strcmp(verb, "ns") == 0) {
    rc = do_ns();
  } else if (strcmp(verb, "hostname") == 0) {
    struct utsname u;
    if (uname(&u) < 0)
      return die("uname");
    puts(u.nodename);
  } else if (strcmp(verb, "pid") == 0) {
    printf("%d\n", (int)getpid());
  } else if (strcmp(verb, "signals") == 0) {
    do_signals();
  } else if (strcmp(verb, "spawn-sleep") == 0) {
    do_spawn_sleep();
  } else if (strcmp(verb, "nested-proc") == 0) {
    rc = do_nested_proc();
  } else if (argc < 3) {
    return usage();
  } else if (strcmp(verb, "sleep") == 0) {
    rc = do_sleep(argv[2]);
  } else if (strcmp(verb, "exit") == 0) {
    if (parse_int(argv[2], &n) < 0)
      return usage();
    fflush(stdout);
    return (int)(n & 0xff);
  } else if (strcmp(verb, "kill-self") == 0) {
    rc = do_kill_self(argv[2]);
  } else if (strcmp(verb, "syscall") == 0) {
    rc = do_syscall(argv[2]);
  } else if (strcmp(verb, "cat") == 0) {
    rc = cat_file(argv[2]);
  } else if (strcmp(verb, "open") == 0) {
    rc = do_open(argv[2]);
  } else if (strcmp(verb, "wait-file") == 0) {
    rc = do_wait_file(argv[2]);
  } else if (strcmp(verb, "write") == 0) {
    if (argc < 4)
      return usage();
    rc = do_write(argv[2], argv[3]);
  } else if (strcmp(verb, "notify") == 0) {
    rc = do_notify(argv[2]);
  } else if (strcmp(verb, "fuse-scan") == 0) {
    rc = do_fuse_scan(argv[2]);
  } else if (strcmp(verb, "mkfifo") == 0) {
    rc = do_mkfifo(argv[2]);
  } else if (strcmp(verb, "reach-helpers") == 0) {
    if (argc < 5)
      return usage();
    rc = do_reach_helpers(argv[2], argv[3], argv[4]);
  } else if (strcmp(verb, "rawsyscall") == 0) {
    rc = do_rawsyscall(argc - 2, argv + 2);
  } else {
    return usage();
  }
  if (fflush(stdout) != 0)
    return die("stdout");
  return rc;
}

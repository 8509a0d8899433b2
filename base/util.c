/* util.c: whole-file I/O, string lists, numbers, processes and signals. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/util.h"

size_t rrt_strv_len(char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

int rrt_read_fd(int fd, char **out, size_t *len, struct rrt_error *err)
{
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) {
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
    ssize_t r = read(fd, buf + n, cap - n - 1);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      free(buf);
      return rrt_error_errno(err, "read");
    }
    if (r == 0)
      break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  *out = buf;
  if (len)
    *len = n;
  return 0;
}

int rrt_read_file_at(int dirfd, const char *path, char **out, size_t *len, struct rrt_error *err)
{
  cleanup_close int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return rrt_error_errno(err, "open %s", path);
  if (rrt_read_fd(fd, out, len, err) < 0)
    return rrt_error_wrap(err, "%s", path);
  return 0;
}

int rrt_read_file(const char *path, char **out, size_t *len, struct rrt_error *err)
{
  return rrt_read_file_at(AT_FDCWD, path, out, len, err);
}

static bool opt_dropped(const char *opt, const char *const *drop)
{
  for (size_t i = 0; drop[i]; i++) {
    size_t n = strlen(drop[i]);
    if (n && drop[i][n - 1] == '=' ? strncmp(opt, drop[i], n) == 0 : strcmp(opt, drop[i]) == 0)
      return true;
  }
  return false;
}

char *rrt_opts_without(const char *list, const char *const *drop)
{
  cleanup_free char *copy = xstrdup(list ? list : "");
  char *out = xzalloc(strlen(copy) + 1), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (opt_dropped(t, drop))
      continue;
    if (*out)
      strcat(out, ",");
    strcat(out, t);
  }
  return out;
}

int rrt_write_all(int fd, const void *data, size_t len)
{
  const char *p = data;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

ssize_t rrt_read_all(int fd, void *buf, size_t len)
{
  char *p = buf;
  size_t got = 0;
  while (got < len) {
    ssize_t r = read(fd, p + got, len - got);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

int rrt_write_file(const char *path, const void *data, size_t len, int flags, mode_t mode,
                   struct rrt_error *err)
{
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, mode);
  if (fd < 0)
    return rrt_error_errno(err, "open %s", path);
  if (rrt_write_all(fd, data, len) < 0)
    return rrt_error_errno(err, "write %s", path);
  return 0;
}

int rrt_parse_u64(const char *s, unsigned long long *out)
{
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
    return -1;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0')
    return -1;
  *out = v;
  return 0;
}

int rrt_parse_i64(const char *s, long long *out)
{
  if (!s || !*s || *s == ' ')
    return -1;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0')
    return -1;
  *out = v;
  return 0;
}

static const struct {
  const char *name;
  int sig;
} signals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},     {"ABRT", SIGABRT}, {"IOT", SIGIOT},       {"BUS", SIGBUS},
    {"FPE", SIGFPE},       {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},     {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},     {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH},   {"IO", SIGIO},     {"POLL", SIGPOLL},     {"PWR", SIGPWR},
    {"SYS", SIGSYS},
};

int rrt_signal_parse(const char *s)
{
  unsigned long long n;
  if (!s || !*s)
    return -1;
  if (rrt_parse_u64(s, &n) == 0)
    return (n >= 1 && n <= (unsigned long long)SIGRTMAX) ? (int)n : -1;
  if (strncasecmp(s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
    if (strcasecmp(s, signals[i].name) == 0)
      return signals[i].sig;
  /* RTMIN, RTMIN+N, RTMAX, RTMAX-N */
  if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
    bool min = strncasecmp(s, "RTMIN", 5) == 0;
    int base = min ? SIGRTMIN : SIGRTMAX;
    const char *rest = s + 5;
    if (*rest == '\0')
      return base;
    if ((min && *rest != '+') || (!min && *rest != '-'))
      return -1;
    if (rrt_parse_u64(rest + 1, &n) < 0)
      return -1;
    int sig = min ? base + (int)n : base - (int)n;
    return (sig >= SIGRTMIN && sig <= SIGRTMAX && n <= 64) ? sig : -1;
  }
  return -1;
}

const char *rrt_signal_name(int sig)
{
  for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
    if (signals[i].sig == sig)
      return signals[i].name;
  return NULL;
}

/* The kernel's own struct: glibc's sigaction refuses the signals it reserves
 * (32, 33), yet an ignored one is inherited across execve all the same. */
struct kernel_sigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)(void);
  unsigned long long mask;
};

/* The signals this process ignores, from /proc/self/status; false when it cannot tell. */
static bool ignored_signals(uint64_t *mask)
{
  char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  const char *p = strstr(buf, "\nSigIgn:");
  if (!p)
    return false;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(p + strlen("\nSigIgn:"), &end, 16);
  if (errno || end == p + strlen("\nSigIgn:"))
    return false;
  *mask = v;
  return true;
}

void rrt_reset_signals(void)
{
  /* execve, which always follows, puts caught signals back to their default; an ignored one
   * stays ignored, so those are what needs resetting. Every signal when /proc cannot say. */
  uint64_t ignored = ~(uint64_t)0;
  if (!ignored_signals(&ignored))
    ignored = ~(uint64_t)0;
  for (int sig = 1; sig < NSIG && sig <= 64; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP || !(ignored & ((uint64_t)1 << (sig - 1))))
      continue;
    struct kernel_sigaction k = {.handler = SIG_DFL};
    (void)syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof(k.mask));
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

void rrt_stdio_to_null(void)
{
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0)
    return;
  dup2(null, STDIN_FILENO);
  dup2(null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
  if (null > STDERR_FILENO)
    close(null);
}

int rrt_write_pid_file(const char *path, pid_t pid, struct rrt_error *err)
{
  /* Atomic: an engine polling the file never reads half a number. The temporary file is made
   * anew, never opened through what is there: in a directory others can write (/tmp), another
   * user's symlink by that name would have had the pid written into any file the caller can
   * write, and then been renamed to path. */
  cleanup_free char *tmp = xasprintf("%s.rrt-tmp", path);
  cleanup_free char *txt = xasprintf("%d", pid);
  if (unlink(tmp) < 0 && errno != ENOENT)
    return rrt_error_errno(err, "--pid-file: remove %s", tmp);
  cleanup_close int fd =
      open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0)
    return rrt_error_errno(err, "--pid-file: open %s", tmp);
  /* Made by us and not written (a full disk): nothing of it may stay. */
  if (rrt_write_all(fd, txt, strlen(txt)) < 0) {
    int e = errno;
    unlink(tmp);
    return rrt_error_set(err, e, "--pid-file: write %s", tmp);
  }
  if (rename(tmp, path) < 0) {
    unlink(tmp);
    return rrt_error_errno(err, "--pid-file: rename to %s", path);
  }
  return 0;
}

int rrt_connect_unix(const char *path, const char *what, struct rrt_error *err)
{
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof(sa.sun_path))
    return rrt_error_set(err, ENAMETOOLONG, "%s %s", what, path);
  strcpy(sa.sun_path, path);
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return rrt_error_errno(err, "%s: socket", what);
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return rrt_error_errno(err, "%s %s: connect", what, path);
  return steal_fd(&fd);
}

static volatile pid_t forward_to = -1;
/* Signals that arrived before the process to forward them to was known. */
static volatile sig_atomic_t forward_pending;
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

static void forward_signal(int sig)
{
  if (forward_to > 0)
    kill(forward_to, sig);
  else if (sig < 31)
    forward_pending |= 1 << sig;
}

void rrt_forward_signals_early(bool winch)
{
  /* Installed before the process exists: a signal sent to us once it runs but before we
   * learnt its pid must not kill us with the default action. */
  forward_to = -1;
  forward_pending = 0;
  struct sigaction sa = {.sa_handler = forward_signal, .sa_flags = SA_RESTART};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
    if (forwarded[i] != SIGWINCH || winch)
      sigaction(forwarded[i], &sa, NULL);
}

void rrt_forward_signals(pid_t pid, bool winch)
{
  sigset_t all, old;
  sigemptyset(&all);
  for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
    sigaddset(&all, forwarded[i]);
  sigprocmask(SIG_BLOCK, &all, &old);
  if (forward_to != -1 || forward_pending == 0)
    rrt_forward_signals_early(winch);
  forward_to = pid;
  for (int sig = 1; sig < 31; sig++)
    if (forward_pending & (1 << sig))
      kill(pid, sig);
  forward_pending = 0;
  sigprocmask(SIG_SETMASK, &old, NULL);
}

void rrt_forward_signals_stop(void)
{
  forward_to = -1;
}

int rrt_wait_reaping(pid_t pid)
{
  for (;;) {
    int ws;
    pid_t p = waitpid(-1, &ws, 0);
    if (p < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    if (p != pid)
      continue; /* an orphan of the container reparented to us: reaped */
    if (WIFEXITED(ws))
      return WEXITSTATUS(ws);
    if (WIFSIGNALED(ws))
      return 128 + WTERMSIG(ws);
  }
}

char *rrt_passwd_lookup(const char *text, uid_t uid)
{
  /* name:password:uid:gid:gecos:home:shell, one per line. */
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    const char *c1 = memchr(line, ':', len);
    const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
    if (c2 && c1 > line && line[0] != '+' && line[0] != '-' && line[0] != '#') {
      unsigned long long v;
      const char *c3 = memchr(c2 + 1, ':', len - (size_t)(c2 + 1 - line));
      if (c3) {
        cleanup_free char *num = xstrndup(c2 + 1, (size_t)(c3 - c2 - 1));
        if (rrt_parse_u64(num, &v) == 0 && v == (unsigned long long)uid)
          return xstrndup(line, (size_t)(c1 - line));
      }
    }
    line = end ? end + 1 : NULL;
  }
  return NULL;
}

/* getent passwd UID's name: NSS (LDAP, systemd-userdb...) from a program linked for it, as this
 * one is static. NULL when it has nothing to say. */
static char *getent_name(uid_t uid)
{
  static const char *const paths[] = {"/usr/bin/getent", "/bin/getent"};
  const char *path = NULL;
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && !path; i++)
    if (access(paths[i], X_OK) == 0)
      path = paths[i];
  int out[2];
  if (!path || pipe2(out, O_CLOEXEC) < 0)
    return NULL;
  char arg[32];
  snprintf(arg, sizeof(arg), "%u", (unsigned)uid);
  char *argv[] = {(char *)"getent", (char *)"passwd", arg, NULL};
  char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  pid_t pid = -1;
  int e = posix_spawn(&pid, path, &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  cleanup_free char *text = NULL;
  if (e == 0)
    (void)rrt_read_fd(out[0], &text, NULL, NULL);
  close(out[0]);
  if (pid > 0)
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
  return text ? rrt_passwd_lookup(text, uid) : NULL;
}

const char *rrt_user_name(uid_t uid)
{
  /*
   * Local users are in /etc/passwd, which is what NSS's "files" would read anyway, and
   * reading it directly is cheaper than setting up NSS (a hundredth of a `run`). Anyone else
   * (LDAP, systemd-userdb) is asked of getent.
   */
  static uid_t cached_uid = (uid_t)-1;
  static char *cached;
  if (cached && cached_uid == uid)
    return cached;
  cleanup_free char *text = NULL;
  char *name = NULL;
  if (rrt_read_file("/etc/passwd", &text, NULL, NULL) == 0)
    name = rrt_passwd_lookup(text, uid);
  if (!name)
    name = getent_name(uid);
  if (!name)
    return NULL;
  free(cached);
  cached = name;
  cached_uid = uid;
  return cached;
}

void rrt_msg_attach_fd(struct msghdr *m, union rrt_fd_cmsg *ctl, int fd)
{
  if (fd < 0)
    return;
  memset(ctl, 0, sizeof(*ctl));
  m->msg_control = ctl->buf;
  m->msg_controllen = sizeof(ctl->buf);
  struct cmsghdr *c = CMSG_FIRSTHDR(m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

void rrt_msg_expect_fd(struct msghdr *m, union rrt_fd_cmsg *ctl)
{
  m->msg_control = ctl->buf;
  m->msg_controllen = sizeof(ctl->buf);
}

int rrt_msg_fd(struct msghdr *m)
{
  int fd = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      memcpy(&fd, CMSG_DATA(c), sizeof(int));
      break;
    }
  return fd;
}

/* notify.c: the NOTIFY_SOCKET relay: a socket in the container, its datagrams to the caller's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "rootlessrt/notify.h"
#include "rootlessrt/util.h"

/* systemd takes datagrams of any size its buffer holds; its own clients stay far below this. */
#define NOTIFY_MAX 4096

static const char env_key[] = "NOTIFY_SOCKET=";
#define ENV_KEY_LEN (sizeof(env_key) - 1)

static char **strv_append(struct rrt_strv *sv, char *s)
{
  sv->v = xrealloc(sv->v, (sv->n + 2) * sizeof(char *));
  sv->v[sv->n++] = s;
  sv->v[sv->n] = NULL;
  return sv->v;
}

/* The container's path: process.env's NOTIFY_SOCKET, or the default, added to process.env. */
static int container_path(struct rrt_process *proc, char **out, struct rrt_error *err)
{
  for (size_t i = 0; proc->env.v && i < proc->env.n; i++) {
    const char *e = proc->env.v[i];
    if (strncmp(e, env_key, ENV_KEY_LEN) != 0)
      continue;
    const char *p = e + ENV_KEY_LEN;
    if (p[0] != '/' || strlen(p) >= sizeof(((struct sockaddr_un *)0)->sun_path))
      return rrt_error_msgf(err, EINVAL,
                            "process.env[%zu]: NOTIFY_SOCKET \"%s\" is not an absolute path of at "
                            "most 107 bytes (the runtime's NOTIFY_SOCKET is relayed to it)",
                            i, p);
    *out = xstrdup(p);
    return 0;
  }
  *out = xstrdup(RRT_NOTIFY_DEFAULT);
  strv_append(&proc->env, xasprintf("%s%s", env_key, RRT_NOTIFY_DEFAULT));
  return 0;
}

int rrt_notify_plan(struct rrt_spec *spec, const char *state_dir, struct rrt_notify *n,
                    struct rrt_error *err)
{
  n->fd = -1;
  const char *host = getenv("NOTIFY_SOCKET");
  if (!host || !*host || !spec->process)
    return 0;
  if ((host[0] != '/' && host[0] != '@') ||
      strlen(host) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return rrt_error_msgf(err, EINVAL,
                          "NOTIFY_SOCKET \"%s\": not an absolute path or an @abstract name of at "
                          "most 107 bytes",
                          host);
  if (container_path(spec->process, &n->container, err) < 0)
    return -1;
  n->host = xstrdup(host);
  spec->mounts = xrealloc(spec->mounts, (spec->n_mounts + 1) * sizeof(*spec->mounts));
  struct rrt_mount *m = &spec->mounts[spec->n_mounts++];
  memset(m, 0, sizeof(*m));
  m->destination = xstrdup(n->container);
  m->source = xasprintf("%s/notify.sock", state_dir);
  m->type = xstrdup("bind");
  static const char *const opts[] = {"bind", "nosuid", "nodev", "noexec"};
  for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
    strv_append(&m->options, xstrdup(opts[i]));
  return 0;
}

int rrt_notify_bind(struct rrt_notify *n, int dirfd, struct rrt_error *err)
{
  if (!n->host)
    return 0;
  n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (n->fd < 0)
    return rrt_error_errno(err, "NOTIFY_SOCKET: socket");
  /* Through /proc/self/fd: sun_path stays short whatever the length of the root and the id. */
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/notify.sock", dirfd);
  if (bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return rrt_error_errno(err, "NOTIFY_SOCKET: bind notify.sock in the state directory");
  /* Any user of the container may notify, as systemd's own socket allows. */
  if (fchmodat(dirfd, "notify.sock", 0666, 0) < 0)
    return rrt_error_errno(err, "NOTIFY_SOCKET: chmod notify.sock");
  return 0;
}

static socklen_t host_addr(const char *host, struct sockaddr_un *sa)
{
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  size_t len = strlen(host);
  memcpy(sa->sun_path, host, len);
  if (host[0] == '@')
    sa->sun_path[0] = '\0'; /* abstract: the name is exactly len bytes, no terminator */
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (host[0] == '@' ? 0 : 1));
}

/* One datagram to the caller. A MAINPID= line of the container's is dropped: its pids are not the
 * caller's, and a caller that is root would have systemd track (and at stop kill) any process of
 * the host it named. READY=1 goes with the container's init as MAINPID, so that a Type=notify
 * unit running the runtime tracks the container's process (runc does the same). */
static void forward(int out, const struct sockaddr_un *sa, socklen_t salen, const char *msg,
                    size_t len, pid_t init)
{
  char buf[NOTIFY_MAX + 32];
  size_t off = 32; /* room for MAINPID=, put in front below */
  bool ready = false;
  for (const char *l = msg; l < msg + len;) {
    const char *nl = memchr(l, '\n', (size_t)(msg + len - l));
    size_t ll = nl ? (size_t)(nl - l) : (size_t)(msg + len - l);
    ready = ready || (ll == 7 && memcmp(l, "READY=1", 7) == 0);
    if (!(ll >= 8 && memcmp(l, "MAINPID=", 8) == 0)) {
      size_t n = ll + (nl ? 1 : 0);
      memcpy(buf + off, l, n);
      off += n;
    }
    l += ll + 1;
  }
  size_t start = 32;
  if (ready) {
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "MAINPID=%d\n", (int)init);
    start -= (size_t)n;
    memcpy(buf + start, pid, (size_t)n);
  }
  if (off == start)
    return;
  while (sendto(out, buf + start, off - start, MSG_NOSIGNAL | MSG_DONTWAIT,
                (const struct sockaddr *)sa, salen) < 0 &&
         errno == EINTR)
    ;
}

__attribute__((noreturn)) static void relay_main(int sock, int pidfd, const char *host, pid_t init)
{
  struct sockaddr_un sa;
  socklen_t salen = host_addr(host, &sa);
  int out = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  static char msg[NOTIFY_MAX];
  struct pollfd pf[2] = {{.fd = sock, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
  for (;;) {
    if (poll(pf, 2, -1) < 0 && errno != EINTR)
      _exit(1);
    /* Whatever the container sent before it exited still goes out. */
    ssize_t r;
    while ((r = recv(sock, msg, sizeof(msg), MSG_DONTWAIT)) >= 0 || errno == EINTR)
      if (r > 0 && out >= 0)
        forward(out, &sa, salen, msg, (size_t)r, init);
    if (pf[1].revents)
      _exit(0);
  }
}

/* In the forked relay: only the socket and init's pidfd, at 3 and 4; stdio on /dev/null; default
 * signal dispositions (create catches some to kill init); its own session. */
static void relay_detach(int *sock, int *pidfd)
{
  int s = fcntl(*sock, F_DUPFD, 100), p = fcntl(*pidfd, F_DUPFD, 100);
  if (s < 0 || p < 0 || dup2(s, 3) < 0 || dup2(p, 4) < 0)
    _exit(1);
  syscall(SYS_close_range, 5, ~0U, 0);
  rrt_stdio_to_null(); /* on 0, 1 or 2, or at 5 and closed: 3 and 4 are taken */
  for (int sig = 1; sig < NSIG; sig++)
    signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  setsid();
  if (chdir("/") < 0)
    _exit(1);
  prctl(PR_SET_NAME, "rrt-notify");
  *sock = 3;
  *pidfd = 4;
}

int rrt_notify_start_relay(struct rrt_notify *n, int dirfd, pid_t init, struct rrt_error *err)
{
  if (!n->host)
    return 0;
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, init, 0);
  if (pidfd < 0)
    return rrt_error_errno(err, "NOTIFY_SOCKET: pidfd_open(init %d)", init);
  pid_t pid = fork();
  if (pid < 0)
    return rrt_error_errno(err, "NOTIFY_SOCKET: fork the relay");
  if (pid == 0) {
    int sock = n->fd, pfd = pidfd;
    relay_detach(&sock, &pfd);
    relay_main(sock, pfd, n->host, init);
  }
  close(steal_fd(&n->fd));
  char text[32];
  snprintf(text, sizeof(text), "%d\n", (int)pid);
  cleanup_close int fd =
      openat(dirfd, "notify.pid", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 || rrt_write_all(fd, text, strlen(text)) < 0)
    return rrt_error_errno(err, "NOTIFY_SOCKET: write notify.pid");
  return 0;
}

void rrt_notify_free(struct rrt_notify *n)
{
  free(n->host);
  free(n->container);
  if (n->fd >= 0)
    close(n->fd);
  n->host = n->container = NULL;
  n->fd = -1;
}

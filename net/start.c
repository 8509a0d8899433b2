/* start.c: rrt_net_start: opens init's namespaces, detaches the helper, waits for its readiness. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/log.h"
#include "rootlessrt/net.h"
#include "rootlessrt/reexec.h"
#include "rootlessrt/util.h"
#include "net_internal.h"

/* Long enough for a loaded machine, short enough that a hung helper does not hang `create`. */
#define READY_TIMEOUT_MS 30000

void net_close_fds_except(const int *keep, size_t n)
{
  int sorted[16];
  size_t k = 0;
  for (size_t i = 0; i < n && k < 16; i++) {
    if (keep[i] < 3)
      continue;
    size_t j = k++;
    while (j > 0 && sorted[j - 1] > keep[i]) {
      sorted[j] = sorted[j - 1];
      j--;
    }
    sorted[j] = keep[i];
  }
  unsigned lo = 3;
  for (size_t i = 0; i < k; i++) {
    unsigned fd = (unsigned)sorted[i];
    if (fd > lo)
      (void)syscall(SYS_close_range, lo, fd - 1, 0);
    if (fd + 1 > lo)
      lo = fd + 1;
  }
  (void)syscall(SYS_close_range, lo, ~0u, 0);
}

static int open_ns(pid_t pid, const char *name, struct rrt_error *err)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return rrt_error_errno(err, "open %s", path);
  return fd;
}

static bool same_ns(int fd, const char *self)
{
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(self, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

char *rrt_net_helper_path(void)
{
  return rrt_helper_path("rootlessrt-net", "ROOTLESSRT_NET_HELPER");
}

static __attribute__((noreturn)) void helper_failed(int ready_fd, int e, const char *path)
{
  char buf[PATH_MAX + 128];
  int n = snprintf(buf, sizeof(buf), "E%d network helper %s: %s", e, path, strerror(e));
  if (n > 0)
    (void)!write(ready_fd, buf, (size_t)n);
  _exit(1);
}

/* The helper's process: detached from the caller's session and fds, stdio on /dev/null, then
 * rootlessrt-net. libslirp and GLib are that program's; the runtime never maps them. */
static __attribute__((noreturn)) void become_helper(int ready_fd, int userns_fd, int netns_fd,
                                                    int pidfd, const struct rrt_net_config *cfg)
{
  int keep[] = {ready_fd, userns_fd, netns_fd, pidfd, rrt_log_fd()};
  net_close_fds_except(keep, sizeof(keep) / sizeof(keep[0]));
  rrt_stdio_to_null();
  /* The pid first, so the caller can kill a helper that never becomes ready. */
  pid_t self = getpid();
  if (chdir("/") < 0 || rrt_write_all(ready_fd, &self, sizeof(self)) < 0)
    _exit(1);
  for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
    if (keep[i] >= 0 && fcntl(keep[i], F_SETFD, 0) < 0)
      helper_failed(ready_fd, errno, "(its descriptors)");
  char *path = rrt_net_helper_path();
  char **argv = xcalloc(15 + cfg->n_ports + 1, sizeof(char *));
  size_t n = 0;
  argv[n++] = path;
  argv[n++] = NET_HELPER_PROTOCOL;
  for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
    argv[n++] = xasprintf("%d", keep[i] >= 0 ? keep[i] : -1);
  const char *flags = rrt_log_fd() < 0 ? "-"
                      : rrt_log_json() ? (rrt_log_debug_enabled() ? "jd" : "j")
                                       : (rrt_log_debug_enabled() ? "d" : "-");
  argv[n++] = xstrdup(flags);
  argv[n++] = xasprintf("%u", cfg->mtu);
  argv[n++] = xstrdup(cfg->ipv6 ? "1" : "0");
  argv[n++] = xstrdup(cfg->host_loopback ? "1" : "0");
  argv[n++] = xstrdup(cfg->ports_via_slirp ? "1" : "0");
  argv[n++] = xstrdup(cfg->outbound_via_slirp ? "1" : "0");
  argv[n++] = xstrdup(cfg->cidr);
  argv[n++] = xasprintf("%u", cfg->udp_idle_s ? cfg->udp_idle_s : 60);
  for (size_t i = 0; i < cfg->n_ports; i++) {
    const struct rrt_port *p = &cfg->ports[i];
    argv[n++] = xasprintf("%s:%u:%u:%s", p->proto == IPPROTO_UDP ? "udp" : "tcp", p->host_port,
                          p->container_port, p->host_ip);
  }
  argv[n] = NULL;
  execv(path, argv);
  helper_failed(ready_fd, errno, path);
}

/* Reads the helper's "ok" or "E<errno> <message>" until it closes the pipe. */
static int read_status(int fd, pid_t helper, struct rrt_error *err)
{
  char buf[2048];
  size_t n = 0;
  for (;;) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int r = poll(&pf, 1, READY_TIMEOUT_MS);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      kill(helper, SIGKILL);
      return r < 0 ? rrt_error_errno(err, "network helper: poll")
                   : rrt_error_set(err, 0, "network helper: not ready after %d s, killed it",
                                   READY_TIMEOUT_MS / 1000);
    }
    ssize_t got = read(fd, buf + n, sizeof(buf) - 1 - n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return rrt_error_errno(err, "network helper: read");
    if (got == 0 || n + (size_t)got >= sizeof(buf) - 1) {
      n += (size_t)(got > 0 ? got : 0);
      break;
    }
    n += (size_t)got;
  }
  buf[n] = '\0';
  if (strcmp(buf, "ok") == 0)
    return 0;
  int e = 0, off = 0;
  if (buf[0] != 'E' || sscanf(buf + 1, "%d %n", &e, &off) < 1 || off == 0)
    return rrt_error_set(err, 0, "network helper: exited before it was ready%s",
                         rrt_log_fd() >= 0 ? " (see the log)" : "");
  rrt_error_set(err, 0, "%s", buf + 1 + off);
  err->errnum = e;
  return -1;
}

int rrt_net_start(pid_t init_pid, const struct rrt_net_config *cfg, pid_t *helper_pid,
                  struct rrt_error *err)
{
  struct net_addrs a;
  if (cfg->mode != RRT_NET_SLIRP)
    return rrt_error_set(err, EINVAL, "network helper: only needed for network slirp");
  if (net_cidr_parse(cfg->cidr, &a, err) < 0)
    return -1;
  /* Opened by the caller while init is known to be blocked, so that the
   * helper holds exactly this process and its namespaces, never a pid reused
   * after init died. */
  cleanup_close int userns_fd = open_ns(init_pid, "user", err);
  if (userns_fd < 0)
    return -1;
  cleanup_close int netns_fd = open_ns(init_pid, "net", err);
  if (netns_fd < 0)
    return -1;
  if (same_ns(netns_fd, "/proc/self/ns/net"))
    return rrt_error_set(err, 0,
                         "network slirp: the container has no network namespace of its "
                         "own (add a \"network\" namespace to linux.namespaces)");
  /* A runtime running as real root has no user namespace to join: setns would fail with EINVAL. */
  if (same_ns(userns_fd, "/proc/self/ns/user"))
    close(steal_fd(&userns_fd));
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, init_pid, 0);
  if (pidfd < 0)
    return rrt_error_errno(err, "pidfd_open %d", (int)init_pid);

  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "pipe2");
  cleanup_close int rd = p[0];
  cleanup_close int wr = p[1];
  pid_t mid = fork();
  if (mid < 0)
    return rrt_error_errno(err, "fork network helper");
  if (mid == 0) {
    /* Double fork: the helper is nobody's child here and outlives `create`;
     * its own session keeps terminal signals to the caller's group away. */
    close(rd);
    if (setsid() < 0)
      _exit(1);
    pid_t h = fork();
    if (h == 0)
      become_helper(wr, userns_fd, netns_fd, pidfd, cfg);
    _exit(h < 0 ? 1 : 0);
  }
  close(steal_fd(&wr));
  int status = -1;
  while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
    ;
  pid_t helper = -1;
  if (rrt_read_all(rd, &helper, sizeof(helper)) != (ssize_t)sizeof(helper) || helper <= 0)
    return rrt_error_set(err, 0, "network helper: failed to start");
  if (read_status(rd, helper, err) < 0)
    return rrt_error_wrap(err, "network slirp");
  *helper_pid = helper;
  return 0;
}

/* agent.c: the ns agent: tap0 inside the container netns, then a socket factory for the relay. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "rootlessrt/log.h"
#include "rootlessrt/util.h"
#include "net_internal.h"

#define TUN_PATH "/dev/net/tun"

int net_send_status(int sock, int fd, const struct rrt_error *err)
{
  cleanup_free char *text =
      err ? xasprintf("E%d %s", err->errnum, rrt_error_msg(err)) : xstrdup("ok");
  struct iovec iov = {.iov_base = text, .iov_len = strlen(text)};
  union rrt_fd_cmsg u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  rrt_msg_attach_fd(&msg, &u, err ? -1 : fd);
  ssize_t n;
  do
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -1 : 0;
}

int net_recv_status(int sock, int *fd, struct rrt_error *err)
{
  char text[1024];
  union rrt_fd_cmsg u;
  struct iovec iov = {.iov_base = text, .iov_len = sizeof(text) - 1};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  rrt_msg_expect_fd(&msg, &u);
  ssize_t n;
  do
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return rrt_error_errno(err, "ns agent: recvmsg");
  if (n == 0)
    return rrt_error_set(err, 0, "ns agent: exited unexpectedly");
  text[n] = '\0';
  int got = rrt_msg_fd(&msg);
  if (strcmp(text, "ok") == 0) {
    if (fd)
      *fd = got;
    else if (got >= 0)
      close(got);
    return 0;
  }
  if (got >= 0)
    close(got);
  int e = 0, off = 0;
  if (text[0] != 'E' || sscanf(text + 1, "%d %n", &e, &off) < 1 || off == 0)
    return rrt_error_set(err, 0, "ns agent: unexpected reply \"%s\"", text);
  rrt_error_set(err, 0, "%s", text + 1 + off);
  err->errnum = e;
  return -1;
}

static int open_tun(struct rrt_error *err)
{
  int fd = open(TUN_PATH, O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0)
    return fd;
  int e = errno;
  if (e == EACCES || e == EPERM) {
    struct stat st;
    unsigned mode = stat(TUN_PATH, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
    rrt_error_set(err, 0,
                  "%s: %s (it must be accessible to your user: it is mode %04o here; most "
                  "distributions ship 0666 — ask your administrator to `chmod 0666 %s` or add a "
                  "udev rule)",
                  TUN_PATH, strerror(e), mode, TUN_PATH);
    err->errnum = e;
    return -1;
  }
  if (e == ENOENT || e == ENODEV || e == ENXIO)
    return rrt_error_set(err, e,
                         "%s (the tun driver is missing: `modprobe tun` as root, or "
                         "create the node with `mknod /dev/net/tun c 10 200`)",
                         TUN_PATH);
  return rrt_error_errno(err, "open %s", TUN_PATH);
}

/* In the container's netns: tap0 up with address, MTU and default route, lo up. */
static int setup_tap(const struct rrt_net_config *cfg, const struct net_addrs *a,
                     struct rrt_error *err)
{
  cleanup_close int tap = open_tun(err);
  if (tap < 0)
    return -1;
  struct ifreq ifr = {0};
  snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "tap0");
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  if (ioctl(tap, TUNSETIFF, &ifr) < 0)
    return rrt_error_errno(err, "TUNSETIFF tap0");
  unsigned lo_idx = if_nametoindex("lo"), tap_idx = if_nametoindex("tap0");
  if (lo_idx == 0 || tap_idx == 0)
    return rrt_error_errno(err, "if_nametoindex %s", lo_idx == 0 ? "lo" : "tap0");
  cleanup_close int nl = net_nl_open(err);
  if (nl < 0)
    return -1;
  if (net_nl_link_up(nl, (int)lo_idx, 0, err) < 0)
    return rrt_error_wrap(err, "lo");
  /* The route needs the link up, and the link up needs nothing: this order. */
  if (net_nl_link_up(nl, (int)tap_idx, cfg->mtu, err) < 0 ||
      net_nl_addr_add(nl, (int)tap_idx, a->guest, a->prefix, err) < 0 ||
      net_nl_route_default(nl, (int)tap_idx, a->gateway, err) < 0)
    return rrt_error_wrap(err, "tap0");
  return steal_fd(&tap);
}

/* The loopback address of family at port 0 (the kernel picks one at bind): its length. */
static socklen_t loopback_any_port(int family, struct sockaddr_storage *ss)
{
  memset(ss, 0, sizeof(*ss));
  if (family == AF_INET6) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    s6->sin6_family = AF_INET6;
    s6->sin6_addr = in6addr_loopback;
    return sizeof(*s6);
  }
  struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
  s4->sin_family = AF_INET;
  s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return sizeof(*s4);
}

/* The port the kernel picked for fd, bound to loopback_any_port. */
static int bound_port(int fd, int family, uint16_t *port)
{
  struct sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
    return -1;
  *port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                   : ((struct sockaddr_in *)&ss)->sin_port);
  return 0;
}

/* A listener of the fast path on the container's loopback, at a port the kernel picks. */
static int fast_listener(int family, uint16_t *port, struct rrt_error *err)
{
  const char *name = family == AF_INET6 ? "[::1]" : "127.0.0.1";
  cleanup_close int fd =
      net_fault("socket") ? -1 : socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return rrt_error_errno(err, "listener %s: socket", name);
  if (family == AF_INET6) {
    int one = 1;
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  struct sockaddr_storage ss;
  socklen_t len = loopback_any_port(family, &ss);
  if (net_fault("bind") || bind(fd, (struct sockaddr *)&ss, len) < 0)
    return rrt_error_errno(err, "listener %s: bind", name);
  if (net_fault("listen") || listen(fd, 4096) < 0)
    return rrt_error_errno(err, "listener %s: listen", name);
  if (bound_port(fd, family, port) < 0)
    return rrt_error_errno(err, "listener %s: getsockname", name);
  return steal_fd(&fd);
}

/* The routing table and rule priority of the container's TCP (tcp_routes). */
#define TCP_TABLE 7272
#define TCP_ROUTE_MTU 65520

/*
 * The route a socket's connect() finds sets its segment size before any rule redirects it: by
 * tap0's, TCP at MTU 1500 would reach the helper's listener in segments of 1448 bytes, a third
 * of its speed on loopback. The container's TCP gets routes of its own (same gateway, same
 * tap0) whose MTU is loopback's; should its packets go to libslirp after all (the rules removed),
 * libslirp's MSS option keeps them to tap0's MTU.
 */
static int tcp_routes(const struct rrt_net_config *cfg, const struct net_addrs *a, bool v6,
                      struct rrt_error *err)
{
  unsigned idx = if_nametoindex("tap0");
  if (idx == 0)
    return rrt_error_errno(err, "if_nametoindex tap0");
  cleanup_close int nl = net_nl_open(err);
  if (nl < 0)
    return -1;
  if (net_nl_route_table(nl, AF_INET, (int)idx, &a->network, a->prefix, NULL, TCP_ROUTE_MTU,
                         TCP_TABLE, err) < 0 ||
      net_nl_route_table(nl, AF_INET, (int)idx, NULL, 0, &a->gateway, TCP_ROUTE_MTU, TCP_TABLE,
                         err) < 0 ||
      net_nl_rule(nl, AF_INET, IPPROTO_TCP, 0, TCP_TABLE, TCP_TABLE, err) < 0)
    return -1;
  if (!v6)
    return 0;
  struct in6_addr net6, gw6;
  inet_pton(AF_INET6, NET_PREFIX6, &net6);
  inet_pton(AF_INET6, NET_GATEWAY6, &gw6);
  if (net_nl_route_table(nl, AF_INET6, (int)idx, &net6, 64, NULL, TCP_ROUTE_MTU, TCP_TABLE, err) <
          0 ||
      net_nl_route_table(nl, AF_INET6, (int)idx, NULL, 0, &gw6, TCP_ROUTE_MTU, TCP_TABLE, err) <
          0 ||
      net_nl_rule(nl, AF_INET6, IPPROTO_TCP, 0, TCP_TABLE, TCP_TABLE, err) < 0)
    return -1;
  return 0;
}

/*
 * The fast path, after tap0: its listeners, the queue of the SYN gate and the nf_tables rules
 * that send the container's TCP connections to them. Sent as one status (an error: no fast
 * path, and why) and, when it is there, two more: the IPv6 listener and the queue (or none).
 */
static int send_fast_path(int sock, const struct rrt_net_config *cfg, const struct net_addrs *a)
{
  struct rrt_error err = RRT_ERROR_INIT;
  uint16_t p4 = 0, p6 = 0;
  cleanup_close int l4 = fast_listener(AF_INET, &p4, &err);
  cleanup_close int l6 = -1;
  if (l4 >= 0 && cfg->ipv6) {
    struct rrt_error e6 = RRT_ERROR_INIT;
    l6 = fast_listener(AF_INET6, &p6, &e6);
    if (l6 < 0)
      rrt_debug("net agent: IPv6 connections go through libslirp: %s", rrt_error_msg(&e6));
    rrt_error_clear(&e6);
  }
  cleanup_close int nfq = -1;
  if (l4 >= 0) {
    struct rrt_error eq = RRT_ERROR_INIT;
    if (cfg->no_syn_gate)
      rrt_error_set(&eq, 0,
                    "the helper of a container without a user namespace runs as nobody, "
                    "who cannot judge its SYNs");
    else
      nfq = net_nfq_open(&eq);
    if (nfq >= 0 && net_nft_install(cfg, a, p4, p6, true, &eq) < 0)
      close(steal_fd(&nfq));
    if (nfq < 0) {
      /* Connected after accept: fast still, but a refused destination is a reset after an
       * accepted connect() in the container, not a refused connect(). */
      rrt_debug("net agent: no SYN gate: %s", rrt_error_msg(&eq));
      if (net_nft_install(cfg, a, p4, p6, false, &err) < 0)
        close(steal_fd(&l4));
    }
    rrt_error_clear(&eq);
  }
  if (l4 >= 0 && cfg->mtu < TCP_ROUTE_MTU) {
    struct rrt_error er = RRT_ERROR_INIT;
    if (net_fault("route") || tcp_routes(cfg, a, l6 >= 0, &er) < 0)
      rrt_debug("net agent: the container's TCP keeps tap0's MTU (%u): %s", cfg->mtu,
                er.msg ? rrt_error_msg(&er) : strerror(errno));
    rrt_error_clear(&er);
  }
  if (l4 < 0) {
    int r = net_send_status(sock, -1, &err);
    rrt_error_clear(&err);
    return r;
  }
  if (net_send_status(sock, l4, NULL) < 0 || net_send_status(sock, l6, NULL) < 0)
    return -1;
  return net_send_status(sock, nfq, NULL);
}

/* ---------------------------------------------------------------- UDP */

#define UDP_TABLE 7273

static int set_transparent(int fd, int family)
{
  int one = 1;
  return family == AF_INET6 ? setsockopt(fd, SOL_IPV6, IPV6_TRANSPARENT, &one, sizeof(one))
                            : setsockopt(fd, SOL_IP, IP_TRANSPARENT, &one, sizeof(one));
}

/* The transparent socket tproxy hands the container's datagrams to, with their destination. */
static int udp_listener(int family, uint16_t *port, struct rrt_error *err)
{
  const char *name = family == AF_INET6 ? "[::1]" : "127.0.0.1";
  cleanup_close int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return rrt_error_errno(err, "UDP listener %s: socket", name);
  int one = 1;
  if (set_transparent(fd, family) < 0)
    return rrt_error_errno(err, "UDP listener %s: IP_TRANSPARENT", name);
  if ((family == AF_INET6 ? setsockopt(fd, SOL_IPV6, IPV6_RECVORIGDSTADDR, &one, sizeof(one)) ||
                                setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))
                          : setsockopt(fd, SOL_IP, IP_RECVORIGDSTADDR, &one, sizeof(one))) < 0)
    return rrt_error_errno(err, "UDP listener %s: IP_RECVORIGDSTADDR", name);
  int buf = 4 << 20;
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  struct sockaddr_storage ss;
  socklen_t len = loopback_any_port(family, &ss);
  if (bind(fd, (struct sockaddr *)&ss, len) < 0)
    return rrt_error_errno(err, "UDP listener %s: bind", name);
  if (bound_port(fd, family, port) < 0)
    return rrt_error_errno(err, "UDP listener %s: getsockname", name);
  return steal_fd(&fd);
}

/* A socket that sends the container replies from the address it sent to (transparent: bound to an
 * address that is not ours). */
static int reply_socket(const struct sockaddr_storage *ss, socklen_t len, struct rrt_error *err)
{
  if (len < sizeof(struct sockaddr_in) || (ss->ss_family != AF_INET && ss->ss_family != AF_INET6) ||
      (ss->ss_family == AF_INET6 && len < sizeof(struct sockaddr_in6)))
    return rrt_error_set(err, EINVAL, "reply socket: a bad address");
  cleanup_close int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return rrt_error_errno(err, "reply socket");
  int one = 1;
  if (ss->ss_family == AF_INET6)
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (set_transparent(fd, ss->ss_family) < 0)
    return rrt_error_errno(err, "reply socket: IP_TRANSPARENT");
  if (bind(fd, (const struct sockaddr *)ss, len) < 0)
    return rrt_error_errno(err, "reply socket: bind");
  return steal_fd(&fd);
}

static int udp_routes(bool v6, struct rrt_error *err)
{
  cleanup_close int nl = net_nl_open(err);
  if (nl < 0)
    return -1;
  if (net_nl_route_local_all(nl, AF_INET, UDP_TABLE, err) < 0 ||
      net_nl_rule(nl, AF_INET, 0, NET_MARK_UDP, UDP_TABLE, UDP_TABLE, err) < 0)
    return -1;
  if (v6 && (net_nl_route_local_all(nl, AF_INET6, UDP_TABLE, err) < 0 ||
             net_nl_rule(nl, AF_INET6, 0, NET_MARK_UDP, UDP_TABLE, UDP_TABLE, err) < 0))
    return -1;
  return 0;
}

/* After the TCP part: the UDP listener (or why not), then the IPv6 one (or none). */
static int send_udp_path(int sock, const struct rrt_net_config *cfg, const struct net_addrs *a)
{
  struct rrt_error err = RRT_ERROR_INIT;
  uint16_t p4 = 0, p6 = 0;
  cleanup_close int u4 =
      net_fault("udp") ? rrt_error_set(&err, EPERM, "injected") : udp_listener(AF_INET, &p4, &err);
  cleanup_close int u6 = -1;
  if (u4 >= 0 && cfg->ipv6) {
    struct rrt_error e6 = RRT_ERROR_INIT;
    u6 = udp_listener(AF_INET6, &p6, &e6);
    if (u6 < 0)
      rrt_debug("net agent: IPv6 datagrams go through libslirp: %s", rrt_error_msg(&e6));
    rrt_error_clear(&e6);
  }
  if (u4 >= 0 && (udp_routes(u6 >= 0, &err) < 0 || net_nft_install_udp(cfg, a, p4, p6, &err) < 0))
    close(steal_fd(&u4));
  if (u4 < 0) {
    int r = net_send_status(sock, -1, &err);
    rrt_error_clear(&err);
    return r;
  }
  if (net_send_status(sock, u4, NULL) < 0)
    return -1;
  return net_send_status(sock, u6, NULL);
}

/* Everything up to a configured tap0; returns its fd. */
static int agent_setup(int userns_fd, int netns_fd, const struct rrt_net_config *cfg,
                       const struct net_addrs *a, struct rrt_error *err)
{
  /* After setns the agent's credentials belong to the container's user
   * namespace, where the container's root has CAP_SYS_PTRACE. Not dumpable
   * means ptrace needs that capability in the namespace the agent's memory
   * was created in, the host's, so the container cannot take over a process
   * that still sees the host's mount namespace. */
  if (prctl(PR_SET_DUMPABLE, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return rrt_error_errno(err, "ns agent: prctl");
  /* User namespace first: it grants the capabilities that joining the
   * netns (owned by it) and creating tap0 require. */
  if (userns_fd >= 0 && setns(userns_fd, CLONE_NEWUSER) < 0)
    return rrt_error_errno(err, "setns into the container's user namespace");
  if (setns(netns_fd, CLONE_NEWNET) < 0)
    return rrt_error_errno(err, "setns into the container's network namespace");
  if (chdir("/") < 0)
    return rrt_error_errno(err, "chdir /");
  return setup_tap(cfg, a, err);
}

static __attribute__((noreturn)) void agent_main(int sock, int userns_fd, int netns_fd,
                                                 pid_t helper, const struct rrt_net_config *cfg,
                                                 const struct net_addrs *a)
{
  struct rrt_error err = RRT_ERROR_INIT;
  int keep[] = {sock, userns_fd, netns_fd, rrt_log_fd()};
  net_close_fds_except(keep, sizeof(keep) / sizeof(keep[0]));

  /* The agent must not outlive the helper it serves. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != helper)
    _exit(1);
  int tap = agent_setup(userns_fd, netns_fd, cfg, a, &err);
  if (userns_fd >= 0)
    close(userns_fd);
  close(netns_fd);
  if (tap < 0) {
    (void)net_send_status(sock, -1, &err);
    _exit(1);
  }
  if (net_send_status(sock, tap, NULL) < 0)
    _exit(1);
  close(tap);
  if (!cfg->outbound_via_slirp && send_fast_path(sock, cfg, a) < 0)
    _exit(1);

  if (!cfg->outbound_via_slirp && send_udp_path(sock, cfg, a) < 0)
    _exit(1);

  /* Socket factory: one request byte (and for 'R' the address), one reply carrying the socket;
   * 'D' and 'd' ask it to delete the rules instead, answered without one. */
  for (;;) {
    char req[1 + sizeof(struct sockaddr_in6)];
    ssize_t n = recv(sock, req, sizeof(req), 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      _exit(0);
    if (req[0] == 'D' || req[0] == 'd') {
      /* The rules to a listener the container's root destroyed (ss -K): its own traffic goes
       * through libslirp from now on, not to a port where nothing listens. */
      int r = net_nft_delete(req[0] == 'd', &err);
      if (net_send_status(sock, -1, r < 0 ? &err : NULL) < 0)
        _exit(1);
      rrt_error_clear(&err);
      continue;
    }
    int fd;
    if (req[0] == 'R') {
      struct sockaddr_storage ss = {0};
      memcpy(&ss, req + 1, (size_t)n - 1);
      fd = reply_socket(&ss, (socklen_t)(n - 1), &err);
    } else if (req[0] == 'I' || req[0] == 'i') {
      /* Raw, headers included: ICMP errors to the container from the address it sent to. */
      fd = socket(req[0] == 'i' ? AF_INET6 : AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
                  IPPROTO_RAW);
      if (fd < 0)
        rrt_error_errno(&err, "raw socket in the container network namespace");
    } else {
      fd = socket(AF_INET,
                  (req[0] == 'U' ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0)
        rrt_error_errno(&err, "socket in the container network namespace");
    }
    if (fd < 0) {
      if (net_send_status(sock, -1, &err) < 0)
        _exit(1);
      rrt_error_clear(&err);
      continue;
    }
    if (net_send_status(sock, fd, NULL) < 0)
      _exit(1);
    close(fd);
  }
}

pid_t net_agent_spawn(int userns_fd, int netns_fd, const struct rrt_net_config *cfg,
                      const struct net_addrs *addrs, int *agent_sock, int *tap_fd,
                      struct rrt_error *err)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return rrt_error_errno(err, "socketpair");
  cleanup_close int mine = sv[0];
  cleanup_close int theirs = sv[1];
  pid_t self = getpid();
  cleanup_pid pid_t pid = fork();
  if (pid < 0)
    return rrt_error_errno(err, "fork ns agent");
  if (pid == 0)
    agent_main(theirs, userns_fd, netns_fd, self, cfg, addrs);
  close(steal_fd(&theirs));
  if (net_recv_status(mine, tap_fd, err) < 0)
    return -1;
  *agent_sock = steal_fd(&mine);
  return steal_pid(&pid);
}

int net_agent_fast_path(int agent_sock, int *l4, int *l6, int *nfq, struct rrt_error *err)
{
  *l4 = *l6 = *nfq = -1;
  if (net_recv_status(agent_sock, l4, err) < 0)
    return -1;
  if (net_recv_status(agent_sock, l6, err) < 0 || net_recv_status(agent_sock, nfq, err) < 0) {
    close(*l4);
    if (*l6 >= 0)
      close(*l6);
    *l4 = *l6 = -1;
    return -1;
  }
  return 0;
}

int net_agent_udp_path(int agent_sock, int *u4, int *u6, struct rrt_error *err)
{
  *u4 = *u6 = -1;
  if (net_recv_status(agent_sock, u4, err) < 0)
    return -1;
  if (net_recv_status(agent_sock, u6, err) < 0) {
    close(*u4);
    *u4 = -1;
    return -1;
  }
  return 0;
}

/* One request to the agent, answered with a status and a socket of its namespace. */
static int agent_request(int agent_sock, const void *req, size_t len, struct rrt_error *err)
{
  ssize_t n;
  do
    n = send(agent_sock, req, len, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return rrt_error_errno(err, "ns agent: send");
  int fd = -1;
  if (net_recv_status(agent_sock, &fd, err) < 0)
    return -1;
  if (fd < 0)
    return rrt_error_set(err, 0, "ns agent: reply without a socket");
  return fd;
}

int net_agent_reply_socket(int agent_sock, const struct sockaddr *sa, socklen_t len,
                           struct rrt_error *err)
{
  char req[1 + sizeof(struct sockaddr_in6)];
  if (len > sizeof(req) - 1)
    return rrt_error_set(err, EINVAL, "ns agent: a bad address");
  req[0] = 'R';
  memcpy(req + 1, sa, len);
  return agent_request(agent_sock, req, 1 + (size_t)len, err);
}

int net_agent_raw_socket(int agent_sock, int family, struct rrt_error *err)
{
  char req = family == AF_INET6 ? 'i' : 'I';
  return agent_request(agent_sock, &req, 1, err);
}

int net_agent_drop_rules(int agent_sock, bool udp, struct rrt_error *err)
{
  char req = udp ? 'd' : 'D';
  ssize_t n;
  do
    n = send(agent_sock, &req, 1, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return rrt_error_errno(err, "ns agent: send");
  return net_recv_status(agent_sock, NULL, err);
}

int net_agent_socket(int agent_sock, int type, struct rrt_error *err)
{
  char req = type == SOCK_DGRAM ? 'U' : 'T';
  return agent_request(agent_sock, &req, 1, err);
}

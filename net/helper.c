/* helper.c: the network helper: libslirp on the tap fd, published ports, lives as long as init. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <slirp/libslirp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"
#include "net_internal.h"

/* Frames read from the tap fd per wake-up before the other fds get a turn. */
#define TAP_BATCH 64
#define TAP_BUF (65536 + 64)
#define MAX_CONNS 1024

struct timer {
  SlirpTimerId id;
  void *cb_opaque;
  int64_t expire_ms;
  bool armed;
  struct timer *next; /* armed timers, soonest first */
};

struct helper {
  Slirp *slirp;
  int epfd, tap_fd, agent_sock;
  pid_t agent_pid;
  struct net_ev tap_ev, pidfd_ev, agent_ev;
  struct pollfd *pfd;
  size_t n_pfd, cap_pfd;
  struct timer *timers;
  struct net_relay *relay;
  struct net_outbound *outbound;
  struct net_udp_out *udp_out;
  uint8_t *buf;
  bool quit;
};

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
  struct helper *h = opaque;
  for (;;) {
    ssize_t n = write(h->tap_fd, buf, len);
    if (n >= 0)
      return n;
    if (errno == EINTR)
      continue;
    /* A full tap queue: drop the frame, TCP inside retransmits (libslirp's contract). */
    if (errno == EAGAIN)
      return (ssize_t)len;
    return -1;
  }
}

static void cb_guest_error(const char *msg, void *opaque)
{
  rrt_debug("net helper: libslirp: guest error: %s", msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
  return now_ns();
}

static void timer_unlink(struct helper *h, struct timer *t)
{
  for (struct timer **pp = &h->timers; *pp; pp = &(*pp)->next)
    if (*pp == t) {
      *pp = t->next;
      break;
    }
  t->armed = false;
  t->next = NULL;
}

static void *cb_timer_new_opaque(SlirpTimerId id, void *cb_opaque, void *opaque)
{
  struct timer *t = xzalloc(sizeof(*t));
  t->id = id;
  t->cb_opaque = cb_opaque;
  return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
  struct helper *h = opaque;
  timer_unlink(h, timer);
  free(timer);
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
  struct helper *h = opaque;
  struct timer *t = timer;
  timer_unlink(h, t);
  t->expire_ms = expire_ms;
  t->armed = true;
  struct timer **pp = &h->timers;
  while (*pp && (*pp)->expire_ms <= expire_ms)
    pp = &(*pp)->next;
  t->next = *pp;
  *pp = t;
}

/* The poll set is rebuilt on every iteration (libslirp's model), so there is nothing to track. */
static void cb_register_poll_fd(int fd, void *opaque)
{
}

static void cb_unregister_poll_fd(int fd, void *opaque)
{
}

static void cb_notify(void *opaque)
{
}

static void cb_init_completed(Slirp *slirp, void *opaque)
{
  struct helper *h = opaque;
  h->slirp = slirp;
}

static int cb_add_poll(int fd, int events, void *opaque)
{
  struct helper *h = opaque;
  if (h->n_pfd == h->cap_pfd) {
    h->cap_pfd = h->cap_pfd ? h->cap_pfd * 2 : 64;
    h->pfd = xrealloc(h->pfd, h->cap_pfd * sizeof(*h->pfd));
  }
  short ev = 0;
  if (events & SLIRP_POLL_IN)
    ev |= POLLIN;
  if (events & SLIRP_POLL_OUT)
    ev |= POLLOUT;
  if (events & SLIRP_POLL_PRI)
    ev |= POLLPRI;
  h->pfd[h->n_pfd] = (struct pollfd){.fd = fd, .events = ev};
  return (int)h->n_pfd++;
}

static int cb_get_revents(int idx, void *opaque)
{
  struct helper *h = opaque;
  short re = h->pfd[idx].revents;
  int r = 0;
  if (re & POLLIN)
    r |= SLIRP_POLL_IN;
  if (re & POLLOUT)
    r |= SLIRP_POLL_OUT;
  if (re & POLLPRI)
    r |= SLIRP_POLL_PRI;
  if (re & POLLERR)
    r |= SLIRP_POLL_ERR;
  if (re & POLLHUP)
    r |= SLIRP_POLL_HUP;
  return r;
}

static const SlirpCb slirp_callbacks = {
    .send_packet = cb_send_packet,
    .guest_error = cb_guest_error,
    .clock_get_ns = cb_clock_get_ns,
    .timer_free = cb_timer_free,
    .timer_mod = cb_timer_mod,
    .register_poll_fd = cb_register_poll_fd,
    .unregister_poll_fd = cb_unregister_poll_fd,
    .notify = cb_notify,
    .init_completed = cb_init_completed,
    .timer_new_opaque = cb_timer_new_opaque,
};

static int start_slirp(struct helper *h, const struct rrt_net_config *cfg,
                       const struct net_addrs *a, struct rrt_error *err)
{
  SlirpConfig sc = {
      .version = 4,
      .in_enabled = true,
      .vnetwork = a->network,
      .vnetmask = a->netmask,
      .vhost = a->gateway,
      .vdhcp_start = a->dhcp,
      .vnameserver = a->dns,
      .if_mtu = cfg->mtu,
      .if_mru = cfg->mtu,
      .disable_host_loopback = !cfg->host_loopback,
      .in6_enabled = cfg->ipv6,
  };
  if (cfg->ipv6) {
    inet_pton(AF_INET6, "fd00::", &sc.vprefix_addr6);
    sc.vprefix_len = 64;
    inet_pton(AF_INET6, "fd00::2", &sc.vhost6);
    inet_pton(AF_INET6, "fd00::3", &sc.vnameserver6);
  }
  Slirp *s = slirp_new(&sc, &slirp_callbacks, h);
  if (!s)
    return rrt_error_set(err, 0, "libslirp %s: slirp_new failed (mtu %u, cidr %s)",
                         slirp_version_string(), cfg->mtu, cfg->cidr);
  h->slirp = s;
  return 0;
}

static int slirp_forward(struct helper *h, const struct rrt_port *p, const struct net_addrs *a,
                         struct rrt_error *err)
{
  const char *proto = p->proto == IPPROTO_UDP ? "udp" : "tcp";
  struct in_addr host;
  if (inet_pton(AF_INET, p->host_ip, &host) != 1)
    return rrt_error_set(err, 0,
                         "publish [%s]:%u/%s: IPv6 host addresses are only supported for TCP "
                         "ports relayed by splice",
                         p->host_ip, p->host_port, proto);
  errno = 0;
  if (slirp_add_hostfwd(h->slirp, p->proto == IPPROTO_UDP, host, p->host_port, a->guest,
                        p->container_port) < 0)
    return rrt_error_set(err, errno ? errno : EADDRINUSE, "publish %s:%u/%s", p->host_ip,
                         p->host_port, proto);
  return 0;
}

static int epoll_add(struct helper *h, int fd, uint32_t events, struct net_ev *ev,
                     struct rrt_error *err)
{
  struct epoll_event e = {.events = events, .data.ptr = ev};
  if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
    return rrt_error_errno(err, "epoll_ctl");
  return 0;
}

/* Raises the soft fd limit: each relayed connection holds six fds (two sockets, two pipes). */
static size_t raise_nofile(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
    return 64;
  rl.rlim_cur = rl.rlim_max;
  (void)setrlimit(RLIMIT_NOFILE, &rl);
  (void)getrlimit(RLIMIT_NOFILE, &rl);
  size_t usable = rl.rlim_cur > 256 ? (size_t)rl.rlim_cur - 128 : 64;
  size_t conns = usable / 6;
  return conns < MAX_CONNS ? conns : MAX_CONNS;
}

/* The overflow id, "nobody": no file and no process of the host's is its own to change. */
#define HELPER_NOBODY 65534

/*
 * Real root's helper: from here on it parses what the container sends (libslirp), so it gives up
 * root. With a user namespace of the container's it becomes that namespace's root, a subordinate
 * uid on the host, as a user's own helper runs as the user that owns the namespace: the SYN
 * gate's verdicts (nfnetlink) need CAP_NET_ADMIN over the container's network namespace, which
 * that user namespace owns, and nobody has none there (every gated connection timed out). Without
 * one it goes on as nobody with no capability, and the agent set up no gate (real_root_gate).
 * Its ports are bound and its agent is in the container's namespaces already; what it connects to
 * needs no privilege (ICMP echo then needs net.ipv4.ping_group_range to allow it, as rootless).
 */
static bool real_root(void)
{
  /* uid 0 in a user namespace (rootless podman calls us so) is a user's already. */
  return geteuid() == 0 && rrt_in_initial_userns();
}

static int drop_root(int userns_fd, struct rrt_error *err)
{
  if (!real_root())
    return 0;
  /* Root's supplementary groups go while they still can: in the container's namespace they
   * would stay, unmapped, and still open files of the host's group 0. */
  if (setgroups(0, NULL) < 0)
    return rrt_error_errno(err, "give up root's groups");
  if (userns_fd >= 0) {
    if (setns(userns_fd, CLONE_NEWUSER) < 0)
      return rrt_error_errno(err, "give up root: join the container's user namespace");
    if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
      return rrt_error_errno(err, "give up root: become the container's root (uid 0 must be "
                                  "mapped in linux.uidMappings and linux.gidMappings)");
  } else if (setresgid(HELPER_NOBODY, HELPER_NOBODY, HELPER_NOBODY) < 0 ||
             setresuid(HELPER_NOBODY, HELPER_NOBODY, HELPER_NOBODY) < 0) {
    return rrt_error_errno(err, "give up root (become uid %d)", HELPER_NOBODY);
  }
  /* A changed uid made it dumpable again: no other process of that uid may ptrace it. */
  if (prctl(PR_SET_DUMPABLE, 0) < 0)
    return rrt_error_errno(err, "prctl(PR_SET_DUMPABLE)");
  return 0;
}

static int helper_setup(struct helper *h, int userns_fd, int netns_fd, int init_pidfd,
                        const struct rrt_net_config *cfg, struct rrt_error *err)
{
  struct net_addrs a;
  if (net_cidr_parse(cfg->cidr, &a, err) < 0)
    return -1;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return rrt_error_errno(err, "prctl(PR_SET_NO_NEW_PRIVS)");
  size_t max_conns = raise_nofile();

  /* Real root without a user namespace of the container's ends as nobody (drop_root), who could
   * not judge the gate's SYNs: the agent makes none, and connects after accept. */
  struct rrt_net_config agent_cfg = *cfg;
  agent_cfg.no_syn_gate = real_root() && userns_fd < 0;
  /* Forked before libslirp starts: setns into a user namespace needs a single-threaded process. */
  h->agent_pid =
      net_agent_spawn(userns_fd, netns_fd, &agent_cfg, &a, &h->agent_sock, &h->tap_fd, err);
  if (h->agent_pid < 0)
    return -1;
  h->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (h->epfd < 0)
    return rrt_error_errno(err, "epoll_create1");
  h->tap_ev.kind = NET_EV_TAP;
  h->pidfd_ev.kind = NET_EV_PIDFD;
  h->agent_ev.kind = NET_EV_AGENT;
  /* The agent only answers requests; registered with no events, epoll still reports its hang-up. */
  if (epoll_add(h, h->tap_fd, EPOLLIN, &h->tap_ev, err) < 0 ||
      epoll_add(h, init_pidfd, EPOLLIN, &h->pidfd_ev, err) < 0 ||
      epoll_add(h, h->agent_sock, 0, &h->agent_ev, err) < 0)
    return -1;
  if (start_slirp(h, cfg, &a, err) < 0)
    return -1;
  h->relay = net_relay_new(h->epfd, h->agent_sock, max_conns);
  net_relay_set_udp_idle(h->relay, (int64_t)(cfg->udp_idle_s ? cfg->udp_idle_s : 60) * 1000);
  /* The agent sent the fast path's listeners (or why not) right after tap0. */
  int l4 = -1, l6 = -1, nfq = -1;
  if (!cfg->outbound_via_slirp) {
    struct rrt_error fast = RRT_ERROR_INIT;
    if (net_agent_fast_path(h->agent_sock, &l4, &l6, &nfq, &fast) < 0)
      rrt_debug("net helper: the container's own connections go through libslirp (slower): %s",
                rrt_error_msg(&fast));
    rrt_error_clear(&fast);
  }
  if (l4 >= 0 || l6 >= 0) {
    h->outbound = net_outbound_new(h->relay, h->epfd, h->agent_sock, cfg, &a, l4, l6, nfq, err);
    if (!h->outbound)
      return -1;
  }
  int u4 = -1, u6 = -1;
  if (!cfg->outbound_via_slirp) {
    struct rrt_error fast = RRT_ERROR_INIT;
    if (net_agent_udp_path(h->agent_sock, &u4, &u6, &fast) < 0)
      rrt_debug("net helper: the container's own datagrams go through libslirp (slower): %s",
                rrt_error_msg(&fast));
    rrt_error_clear(&fast);
  }
  if (u4 >= 0 || u6 >= 0) {
    h->udp_out = net_udp_out_new(h->epfd, h->agent_sock, cfg, &a, u4, u6, err);
    if (!h->udp_out)
      return -1;
  }
  if (h->outbound || h->udp_out)
    rrt_debug("net helper: the container's own connections by the fast path:%s%s%s%s",
              l4 >= 0 ? " TCP" : "", nfq >= 0 ? " (with the SYN gate)" : "", u4 >= 0 ? " UDP" : "",
              l6 >= 0 || u6 >= 0 ? ", IPv6 too" : "");
  /* Listening before readiness is reported: a port in use fails `create`. */
  for (size_t i = 0; i < cfg->n_ports; i++) {
    const struct rrt_port *p = &cfg->ports[i];
    /* UDP always by the relay: libslirp drops the container's replies to the gateway address
     * when host loopback is disabled (sotranslate_out), so its UDP forwarding is one-way. */
    bool relay = p->proto == IPPROTO_UDP || !cfg->ports_via_slirp;
    int r = relay ? net_relay_listen(h->relay, p, err) : slirp_forward(h, p, &a, err);
    if (r < 0)
      return -1;
  }
  struct pollfd pf = {.fd = init_pidfd, .events = POLLIN};
  if (poll(&pf, 1, 0) > 0)
    return rrt_error_set(err, 0, "the container's init exited before its network was ready");
  return drop_root(userns_fd, err);
}

static void read_tap(struct helper *h)
{
  for (int i = 0; i < TAP_BATCH; i++) {
    ssize_t n = read(h->tap_fd, h->buf, TAP_BUF);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno != EAGAIN)
        rrt_warn("net helper: read tap0: %s", strerror(errno));
      return;
    }
    if (n == 0)
      return;
    slirp_input(h->slirp, h->buf, (int)n);
  }
}

static void handle_events(struct helper *h)
{
  struct epoll_event evs[64];
  int n = epoll_wait(h->epfd, evs, 64, 0);
  for (int i = 0; i < n; i++) {
    struct net_ev *ev = evs[i].data.ptr;
    switch (ev->kind) {
    case NET_EV_TAP:
      read_tap(h);
      break;
    case NET_EV_PIDFD:
      rrt_debug("net helper: the container's init exited");
      h->quit = true;
      break;
    case NET_EV_AGENT:
      rrt_warn("net helper: the namespace agent exited; stopping the network");
      h->quit = true;
      break;
    case NET_EV_OUT_LISTENER:
    case NET_EV_OUT_QUEUE:
    case NET_EV_OUT_CONNECT:
      net_outbound_event(ev, evs[i].events);
      break;
    case NET_EV_UDPOUT_LISTENER:
    case NET_EV_UDPOUT_FLOW:
      net_udp_out_event(ev);
      break;
    default:
      net_relay_event(h->relay, ev, evs[i].events);
      break;
    }
  }
  net_relay_reap(h->relay);
}

static void run_timers(struct helper *h)
{
  int64_t now_ms = now_ns() / 1000000;
  while (h->timers && h->timers->expire_ms <= now_ms) {
    struct timer *t = h->timers;
    timer_unlink(h, t);
    slirp_handle_timer(h->slirp, t->id, t->cb_opaque);
  }
}

static void helper_loop(struct helper *h)
{
  while (!h->quit) {
    uint32_t timeout = UINT32_MAX;
    h->n_pfd = 0;
    cb_add_poll(h->epfd, SLIRP_POLL_IN, h);
    slirp_pollfds_fill(h->slirp, &timeout, cb_add_poll, h);
    int64_t to = timeout == UINT32_MAX ? -1 : (int64_t)timeout;
    if (h->timers) {
      int64_t left = h->timers->expire_ms - now_ns() / 1000000;
      left = left < 0 ? 0 : left;
      to = to < 0 || left < to ? left : to;
    }
    int64_t gate = net_outbound_expire(h->outbound);
    if (gate >= 0 && (to < 0 || gate < to))
      to = gate;
    int64_t udp = net_udp_out_expire(h->udp_out);
    if (udp >= 0 && (to < 0 || udp < to))
      to = udp;
    if (net_relay_run_pending(h->relay))
      to = 0;
    net_relay_reap(h->relay);
    int n = poll(h->pfd, h->n_pfd, to > INT_MAX ? INT_MAX : (int)to);
    if (n < 0 && errno != EINTR) {
      rrt_warn("net helper: poll: %s", strerror(errno));
      return;
    }
    if (n > 0 && h->pfd[0].revents)
      handle_events(h);
    slirp_pollfds_poll(h->slirp, n < 0, cb_get_revents, h);
    run_timers(h);
  }
}

void net_helper_main(int ready_fd, int userns_fd, int netns_fd, int init_pidfd,
                     const struct rrt_net_config *cfg)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct helper h = {.epfd = -1, .tap_fd = -1, .agent_sock = -1, .agent_pid = -1};
  h.buf = xmalloc(TAP_BUF);

  /* Writes to a peer that hung up must be errors, not a silent death. */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGCHLD, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);

  int r = helper_setup(&h, userns_fd, netns_fd, init_pidfd, cfg, &err);
  if (userns_fd >= 0)
    close(userns_fd);
  close(netns_fd);
  cleanup_free char *status =
      r < 0 ? xasprintf("E%d %s", err.errnum, rrt_error_msg(&err)) : xstrdup("ok");
  (void)rrt_write_all(ready_fd, status, strlen(status));
  close(ready_fd);
  if (r == 0)
    helper_loop(&h);

  /* Every relayed connection is reset with the container gone. */
  net_outbound_free(h.outbound);
  net_udp_out_free(h.udp_out);
  net_relay_free(h.relay);
  if (h.slirp)
    slirp_cleanup(h.slirp);
  /* The agent stops at this hang-up: as nobody, the helper may not signal a root agent. */
  if (h.agent_sock >= 0)
    close(h.agent_sock);
  if (h.agent_pid > 0) {
    kill(h.agent_pid, SIGKILL);
    while (waitpid(h.agent_pid, NULL, 0) < 0 && errno == EINTR)
      ;
  }
  _exit(r < 0 ? 1 : 0);
}

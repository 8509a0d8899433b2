/* outbound.c: the container's own TCP connections, accepted in its netns, connected from ours. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/log.h"
#include "rootlessrt/util.h"
#include "net_internal.h"

/*
 * nft.c's rules redirect each TCP connection the container starts to a listener of ours on its
 * loopback; the kernel's conntrack keeps where it was going (SO_ORIGINAL_DST). We connect there
 * from the helper's namespace, with what libslirp would have reached (10.0.2.2 is the host's
 * loopback with --host-loopback, nothing else of 10.0.2.0/24), and splice the two: the kernel's
 * TCP stack on both sides, no segment through libslirp.
 *
 * The kernel would answer the container's SYN at once from our listener, so that its connect()
 * succeeded whatever the destination says. The gate (nft.c) queues each first SYN to us first:
 * we connect from our namespace and only then let the SYN on (NF_ACCEPT) to the redirect, or
 * mark it for the kernel to refuse it in the container as the destination refused us (a reset:
 * ECONNREFUSED; an ICMP unreachable: ENETUNREACH, EHOSTUNREACH), as libslirp answers a SYN only
 * once its own connect() is done. The accepted connection then finds its host socket by its
 * addresses. Without the gate (no NFQUEUE target, or the container's root removed that chain),
 * we connect after accept, and a refused destination is a reset after an accepted connect().
 */

/* A host connection made for a gated SYN, until the container's connection is accepted. */
#define PENDING_MAX 1024
#define PENDING_IDS 8
/* Connected, the SYN let through: the accept follows within a round trip on loopback. */
#define PENDING_ACCEPT_MS 10000

struct out_listener {
  struct net_ev ev;
  int fd, family;
  struct net_outbound *o;
};

/* A connection by its addresses as the container sent it: family, source, original destination. */
struct out_key {
  int family;
  uint16_t sport, dport;
  uint8_t saddr[16], daddr[16];
};

struct pending {
  struct net_ev ev; /* NET_EV_OUT_CONNECT */
  struct net_outbound *o;
  struct out_key k;
  int hfd;
  bool connected, dead;
  uint32_t ids[PENDING_IDS]; /* the queued SYN and its retransmissions */
  size_t n_ids;
  int64_t expire_ms;
  char what[INET6_ADDRSTRLEN + 8];
  struct pending *next; /* the live list, or the graveyard */
};

struct net_outbound {
  struct out_listener l4, l6;
  struct net_ev queue_ev;
  int nfq;
  struct net_relay *relay;
  int epfd, agent_sock;
  struct net_addrs a;
  struct in6_addr net6, gw6;
  bool host_loopback;
  bool limit_logged, fd_logged, queue_logged;
  struct pending *pending, *graveyard;
  size_t n_pending;
  uint8_t qbuf[512] __attribute__((aligned(4)));
};

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void reset_close(int fd)
{
  struct linger lg = {.l_onoff = 1, .l_linger = 0};
  (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  close(fd);
}

/* Where libslirp would have taken a connection to dst, in place; false: nowhere. */
static bool translate4(const struct net_outbound *o, struct sockaddr_in *dst)
{
  uint32_t d = ntohl(dst->sin_addr.s_addr);
  if (d == ntohl(o->a.gateway.s_addr)) {
    if (!o->host_loopback)
      return false;
    dst->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return true;
  }
  if ((d & ntohl(o->a.netmask.s_addr)) == ntohl(o->a.network.s_addr))
    return false;
  /* Loopback (the container's own, or our listener connected to directly), "this network",
   * multicast and broadcast: nothing a connection of the container's may reach on the host. */
  return (d >> 24) != 127 && (d >> 24) != 0 && d < 0xe0000000u;
}

static bool translate6(const struct net_outbound *o, struct sockaddr_in6 *dst)
{
  const struct in6_addr *d = &dst->sin6_addr;
  if (memcmp(d, &o->gw6, sizeof(*d)) == 0) {
    if (!o->host_loopback)
      return false;
    dst->sin6_addr = in6addr_loopback;
    dst->sin6_scope_id = 0;
    return true;
  }
  if (memcmp(d, &o->net6, 8) == 0)
    return false;
  return !IN6_IS_ADDR_LOOPBACK(d) && !IN6_IS_ADDR_UNSPECIFIED(d) && !IN6_IS_ADDR_LINKLOCAL(d) &&
         !IN6_IS_ADDR_MULTICAST(d) && !IN6_IS_ADDR_V4MAPPED(d) && !IN6_IS_ADDR_V4COMPAT(d);
}

static void addr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
  char ip[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
    inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
    port = ntohs(s6->sin6_port);
    snprintf(buf, len, "[%s]:%u", ip, port);
    return;
  }
  const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
  inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
  snprintf(buf, len, "%s:%u", ip, ntohs(s4->sin_port));
}

static void key_dst(const struct out_key *k, struct sockaddr_storage *ss)
{
  memset(ss, 0, sizeof(*ss));
  if (k->family == AF_INET6) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    s6->sin6_family = AF_INET6;
    memcpy(&s6->sin6_addr, k->daddr, 16);
    s6->sin6_port = k->dport;
  } else {
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    s4->sin_family = AF_INET;
    memcpy(&s4->sin_addr, k->daddr, 4);
    s4->sin_port = k->dport;
  }
}

static bool translate(const struct net_outbound *o, struct sockaddr_storage *dst)
{
  return dst->ss_family == AF_INET6 ? translate6(o, (struct sockaddr_in6 *)dst)
                                    : translate4(o, (struct sockaddr_in *)dst);
}

static socklen_t sa_len(int family)
{
  return family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static void out_accept(struct out_listener *l);
static void gate_connected(struct pending *p);

/* ---------------------------------------------------------------- the SYN gate */

static void pending_verdicts(struct pending *p, bool accept, uint32_t mark)
{
  for (size_t i = 0; i < p->n_ids; i++)
    (void)net_nfq_verdict(p->o->nfq, p->ids[i], accept, mark);
  p->n_ids = 0;
}

static void pending_kill(struct net_outbound *o, struct pending *p)
{
  if (p->dead)
    return;
  for (struct pending **pp = &o->pending; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  if (p->hfd >= 0)
    close(p->hfd); /* leaves the epoll set with it */
  p->hfd = -1;
  p->dead = true;
  p->next = o->graveyard;
  o->graveyard = p;
  o->n_pending--;
}

static struct pending *pending_find(struct net_outbound *o, const struct out_key *k)
{
  for (struct pending *p = o->pending; p; p = p->next)
    if (memcmp(&p->k, k, sizeof(*k)) == 0)
      return p;
  return NULL;
}

/*
 * The pending connection an accepted one takes: its own, by its addresses; else the oldest one
 * let through to the same destination from the same address. The rules' redirect sends every
 * connection to one listener, so two of the container's connections from one port to two
 * destinations (the kernel chooses a source port per destination) have the same reply tuple
 * while the first's conntrack entry lives (TIME_WAIT: 2 minutes), and NAT gives the second
 * another source port: accepted, it is not found by the port its SYN had. Any host connection to
 * the same destination serves it as well, and the remapped one's own is then left for the next.
 */
static struct pending *pending_for_accept(struct net_outbound *o, const struct out_key *k)
{
  struct pending *p = pending_find(o, k), *oldest = NULL;
  if (p)
    return p;
  for (p = o->pending; p; p = p->next)
    if (p->connected && !p->dead && p->k.family == k->family && p->k.dport == k->dport &&
        memcmp(p->k.saddr, k->saddr, sizeof(k->saddr)) == 0 &&
        memcmp(p->k.daddr, k->daddr, sizeof(k->daddr)) == 0)
      oldest = p; /* the list is newest first */
  return oldest;
}

/* How a failed connect of ours becomes the container's error, as libslirp's does (a connect
 * that fails at once: an ICMP error for an unreachable network or host, else a reset):
 * NF_ACCEPT with a mark the verdict chain rejects. */
static void refuse(struct net_outbound *o, uint32_t id, int e)
{
  uint32_t mark = e == ENETUNREACH    ? NET_MARK_NETUNREACH
                  : e == EHOSTUNREACH ? NET_MARK_HOSTUNREACH
                                      : NET_MARK_REFUSED;
  (void)net_nfq_verdict(o->nfq, id, true, mark);
}

static bool parse_syn(const uint8_t *pkt, size_t len, struct out_key *k)
{
  memset(k, 0, sizeof(*k));
  if (len < 20)
    return false;
  size_t l4;
  if ((pkt[0] >> 4) == 4) {
    l4 = (size_t)(pkt[0] & 0x0f) * 4;
    if (l4 < 20 || pkt[9] != IPPROTO_TCP)
      return false;
    k->family = AF_INET;
    memcpy(k->saddr, pkt + 12, 4);
    memcpy(k->daddr, pkt + 16, 4);
  } else if ((pkt[0] >> 4) == 6) {
    l4 = 40;
    if (len < 40 || pkt[6] != IPPROTO_TCP)
      return false;
    k->family = AF_INET6;
    memcpy(k->saddr, pkt + 8, 16);
    memcpy(k->daddr, pkt + 24, 16);
  } else {
    return false;
  }
  /* A first SYN only: the container's root may queue any packet to us (a rule of its own), and
   * each must not become a connection of ours to its destination. */
  if (len < l4 + 14 || (pkt[l4 + 13] & 0x12) != 0x02)
    return false;
  memcpy(&k->sport, pkt + l4, 2);
  memcpy(&k->dport, pkt + l4 + 2, 2);
  return true;
}

static void gate_syn(struct net_outbound *o, uint32_t id, const uint8_t *pkt, size_t len)
{
  struct out_key k;
  if (!parse_syn(pkt, len, &k)) {
    (void)net_nfq_verdict(o->nfq, id, true, 0); /* not ours to judge: on to the redirect */
    return;
  }
  struct pending *p = pending_find(o, &k);
  if (p) {
    /* A retransmission: through at once if we are connected, else with the first. */
    if (p->connected || p->n_ids == PENDING_IDS)
      (void)net_nfq_verdict(o->nfq, id, p->connected, 0);
    else
      p->ids[p->n_ids++] = id;
    return;
  }
  struct sockaddr_storage dst;
  char what[INET6_ADDRSTRLEN + 8];
  key_dst(&k, &dst);
  addr_text(&dst, what, sizeof(what));
  if (!translate(o, &dst)) {
    rrt_debug("the container's connection to %s: not a destination it may reach: refused", what);
    refuse(o, id, ECONNREFUSED);
    return;
  }
  if (o->n_pending >= PENDING_MAX || net_relay_full(o->relay)) {
    if (!o->limit_logged)
      rrt_warn("the container's connections: the connection limit is reached, refusing new "
               "ones (%s) until some close",
               what);
    o->limit_logged = true;
    refuse(o, id, ECONNREFUSED);
    return;
  }
  o->limit_logged = false;
  int hfd = socket(k.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (hfd < 0) {
    rrt_warn("the container's connection to %s: socket: %s", what, strerror(errno));
    refuse(o, id, ECONNREFUSED);
    return;
  }
  if (connect(hfd, (struct sockaddr *)&dst, sa_len(k.family)) < 0 && errno != EINPROGRESS) {
    int e = errno;
    rrt_debug("the container's connection to %s: %s", what, strerror(e));
    close(hfd);
    refuse(o, id, e);
    return;
  }
  p = xzalloc(sizeof(*p));
  p->ev.kind = NET_EV_OUT_CONNECT;
  p->o = o;
  p->k = k;
  p->hfd = hfd;
  p->ids[p->n_ids++] = id;
  /* The host's own SYN retries end a connect that gets no answer first (about 2 minutes). */
  p->expire_ms = now_ms() + 180000;
  snprintf(p->what, sizeof(p->what), "%s", what);
  struct epoll_event e = {.events = EPOLLOUT | EPOLLET, .data.ptr = &p->ev};
  if (epoll_ctl(o->epfd, EPOLL_CTL_ADD, hfd, &e) < 0) {
    rrt_warn("the container's connection to %s: epoll_ctl: %s", what, strerror(errno));
    close(hfd);
    refuse(o, id, ECONNREFUSED);
    free(p);
    return;
  }
  p->next = o->pending;
  o->pending = p;
  o->n_pending++;
  /* A connect to a loopback or local address is done by the time connect() returns: the SYN goes
   * on now, not a wake-up later. */
  struct pollfd pf = {.fd = hfd, .events = POLLOUT};
  if (poll(&pf, 1, 0) > 0)
    gate_connected(p);
}

static void gate_connected(struct pending *p)
{
  if (p->dead || p->connected)
    return;
  int soerr = 0;
  socklen_t len = sizeof(soerr);
  if (getsockopt(p->hfd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
    soerr = errno;
  if (soerr == EINPROGRESS)
    return;
  if (soerr != 0) {
    rrt_debug("the container's connection to %s: %s", p->what, strerror(soerr));
    /* Refused later (a remote host's reset): refused at once in the container too. Unreachable
     * later (no ARP answer, a timeout): no answer to the SYN, as libslirp gives none, and the
     * container's connect() times out, retrying (each retry is a new connect of ours). */
    for (size_t i = 0; i < p->n_ids; i++) {
      if (soerr == ECONNREFUSED)
        refuse(p->o, p->ids[i], ECONNREFUSED);
      else
        (void)net_nfq_verdict(p->o->nfq, p->ids[i], false, 0);
    }
    p->n_ids = 0;
    pending_kill(p->o, p);
    return;
  }
  /* Out of the epoll set until the relay adds it again with its own events. */
  (void)epoll_ctl(p->o->epfd, EPOLL_CTL_DEL, p->hfd, NULL);
  p->connected = true;
  p->expire_ms = now_ms() + PENDING_ACCEPT_MS;
  pending_verdicts(p, true, 0);
  /* The SYN let through, the handshake with our listener on loopback is done by now: accept it in
   * this wake-up (p may be adopted, and gone, then). */
  struct net_outbound *o = p->o;
  struct out_listener *l = p->k.family == AF_INET6 ? &o->l6 : &o->l4;
  if (l->fd >= 0)
    out_accept(l);
}

static void gate_read(struct net_outbound *o)
{
  for (;;) {
    uint32_t id;
    const uint8_t *pkt = NULL;
    ssize_t n = net_nfq_next(o->nfq, o->qbuf, sizeof(o->qbuf), &id, &pkt);
    if (n < 0) {
      if (errno != EAGAIN && !o->queue_logged) {
        /* ENOBUFS: messages were lost; their SYNs went on (fail-open) or come again. */
        rrt_debug("the container's connections: queue: %s", strerror(errno));
        o->queue_logged = true;
      }
      if (errno == EAGAIN || errno == ENOBUFS)
        return;
      return;
    }
    gate_syn(o, id, pkt, (size_t)n);
  }
}

int64_t net_outbound_expire(struct net_outbound *o)
{
  if (!o)
    return -1;
  while (o->graveyard) {
    struct pending *p = o->graveyard;
    o->graveyard = p->next;
    free(p);
  }
  int64_t now = now_ms(), next = -1;
  for (struct pending *p = o->pending, *nx; p; p = nx) {
    nx = p->next;
    if (p->expire_ms <= now) {
      rrt_debug("the container's connection to %s: not accepted in time, closed", p->what);
      pending_verdicts(p, false, 0);
      pending_kill(o, p);
      continue;
    }
    if (next < 0 || p->expire_ms - now < next)
      next = p->expire_ms - now;
  }
  return next;
}

/* ---------------------------------------------------------------- accepted connections */

/* One accepted connection: where it was going, and its host socket from the gate or a connect()
 * there from our namespace now. */
static void out_one(struct net_outbound *o, struct out_listener *l, int cfd,
                    const struct sockaddr_storage *peer)
{
  struct sockaddr_storage dst = {0};
  socklen_t dlen = sizeof(dst);
  char what[INET6_ADDRSTRLEN + 8];
  int r = l->family == AF_INET6 ? getsockopt(cfd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &dst, &dlen)
                                : getsockopt(cfd, SOL_IP, SO_ORIGINAL_DST, &dst, &dlen);
  if (r < 0 || dst.ss_family != l->family || peer->ss_family != l->family) {
    rrt_debug("the container's connection: no original destination (%s): reset",
              r < 0 ? strerror(errno) : "another family");
    reset_close(cfd);
    return;
  }
  struct out_key k = {.family = l->family};
  if (l->family == AF_INET6) {
    const struct sockaddr_in6 *p6 = (const struct sockaddr_in6 *)peer;
    const struct sockaddr_in6 *d6 = (const struct sockaddr_in6 *)&dst;
    memcpy(k.saddr, &p6->sin6_addr, 16);
    memcpy(k.daddr, &d6->sin6_addr, 16);
    k.sport = p6->sin6_port;
    k.dport = d6->sin6_port;
  } else {
    const struct sockaddr_in *p4 = (const struct sockaddr_in *)peer;
    const struct sockaddr_in *d4 = (const struct sockaddr_in *)&dst;
    memcpy(k.saddr, &p4->sin_addr, 4);
    memcpy(k.daddr, &d4->sin_addr, 4);
    k.sport = p4->sin_port;
    k.dport = d4->sin_port;
  }
  struct pending *p = pending_for_accept(o, &k);
  if (p) {
    int hfd = p->hfd;
    bool connecting = !p->connected;
    if (connecting)
      (void)epoll_ctl(o->epfd, EPOLL_CTL_DEL, hfd, NULL);
    pending_verdicts(p, true, 0);
    p->hfd = -1;
    pending_kill(o, p);
    (void)net_relay_adopt(o->relay, hfd, cfd, connecting, p->what);
    return;
  }
  addr_text(&dst, what, sizeof(what));
  if (o->nfq >= 0)
    rrt_debug("the container's connection to %s: not through the gate, connecting now", what);
  if (!translate(o, &dst)) {
    rrt_debug("the container's connection to %s: not a destination it may reach: reset", what);
    reset_close(cfd);
    return;
  }
  if (net_relay_full(o->relay)) {
    if (!o->limit_logged)
      rrt_warn("the container's connections: the connection limit is reached, resetting new "
               "ones (%s) until some close",
               what);
    o->limit_logged = true;
    reset_close(cfd);
    return;
  }
  o->limit_logged = false;
  int hfd = socket(l->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (hfd < 0) {
    rrt_warn("the container's connection to %s: socket: %s", what, strerror(errno));
    reset_close(cfd);
    return;
  }
  if (connect(hfd, (struct sockaddr *)&dst, sa_len(l->family)) < 0 && errno != EINPROGRESS) {
    rrt_debug("the container's connection to %s: %s", what, strerror(errno));
    close(hfd);
    reset_close(cfd);
    return;
  }
  (void)net_relay_adopt(o->relay, hfd, cfd, true, what);
}

/*
 * The container's root may destroy our listener in its netns (ss -K, SOCK_DESTROY): it stops
 * listening, and epoll would report it ready (EPOLLHUP) on every wait. The agent deletes the rules
 * that send connections to it, and the container's own go through libslirp from then on.
 */
static void listener_gone(struct out_listener *l)
{
  struct net_outbound *o = l->o;
  struct rrt_error err = RRT_ERROR_INIT;
  rrt_debug("the container's connections: our listener was destroyed in its netns: they go "
            "through libslirp from now on");
  for (int i = 0; i < 2; i++) {
    struct out_listener *x = i ? &o->l6 : &o->l4;
    if (x->fd >= 0)
      close(x->fd); /* leaves the epoll set with it */
    x->fd = -1;
  }
  if (net_agent_drop_rules(o->agent_sock, false, &err) < 0)
    rrt_warn("the container's connections: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
}

static void out_accept(struct out_listener *l)
{
  if (l->fd < 0)
    return; /* gone earlier in this batch of events */
  for (;;) {
    struct sockaddr_storage peer;
    socklen_t plen = sizeof(peer);
    int cfd = accept4(l->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd >= 0) {
      out_one(l->o, l, cfd, &peer);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED)
      continue;
    if (errno == EINVAL) {
      listener_gone(l);
      return;
    }
    if (errno != EAGAIN && !l->o->fd_logged) {
      /* EMFILE: the connection waits in the backlog until a close frees an fd. */
      rrt_warn("the container's connections: accept: %s", strerror(errno));
      l->o->fd_logged = true;
    }
    return;
  }
}

void net_outbound_event(struct net_ev *ev, uint32_t events)
{
  if (ev->kind == NET_EV_OUT_LISTENER)
    out_accept((struct out_listener *)((char *)ev - offsetof(struct out_listener, ev)));
  else if (ev->kind == NET_EV_OUT_QUEUE)
    gate_read((struct net_outbound *)((char *)ev - offsetof(struct net_outbound, queue_ev)));
  else if (ev->kind == NET_EV_OUT_CONNECT)
    gate_connected((struct pending *)((char *)ev - offsetof(struct pending, ev)));
}

static int listener_add(struct net_outbound *o, struct out_listener *l, int family,
                        struct rrt_error *err)
{
  int fd = l->fd;
  l->ev.kind = NET_EV_OUT_LISTENER;
  l->family = family;
  l->o = o;
  if (fd < 0)
    return 0;
  struct epoll_event e = {.events = EPOLLIN, .data.ptr = &l->ev};
  if (epoll_ctl(o->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
    return rrt_error_errno(err, "the container's connections: epoll_ctl");
  return 0;
}

struct net_outbound *net_outbound_new(struct net_relay *relay, int epfd, int agent_sock,
                                      const struct rrt_net_config *cfg, const struct net_addrs *a,
                                      int l4, int l6, int nfq, struct rrt_error *err)
{
  struct net_outbound *o = xzalloc(sizeof(*o));
  o->agent_sock = agent_sock;
  o->nfq = nfq;
  o->queue_ev.kind = NET_EV_OUT_QUEUE;
  o->relay = relay;
  o->epfd = epfd;
  o->a = *a;
  o->host_loopback = cfg->host_loopback;
  inet_pton(AF_INET6, NET_PREFIX6, &o->net6);
  inet_pton(AF_INET6, NET_GATEWAY6, &o->gw6);
  o->l4.fd = l4;
  o->l6.fd = l6;
  if (listener_add(o, &o->l4, AF_INET, err) < 0 || listener_add(o, &o->l6, AF_INET6, err) < 0) {
    net_outbound_free(o);
    return NULL;
  }
  struct epoll_event e = {.events = EPOLLIN, .data.ptr = &o->queue_ev};
  if (nfq >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, nfq, &e) < 0) {
    rrt_error_errno(err, "the container's connections: epoll_ctl");
    net_outbound_free(o);
    return NULL;
  }
  return o;
}

void net_outbound_free(struct net_outbound *o)
{
  if (!o)
    return;
  if (o->l4.fd >= 0)
    close(o->l4.fd);
  if (o->l6.fd >= 0)
    close(o->l6.fd);
  while (o->pending)
    pending_kill(o, o->pending);
  (void)net_outbound_expire(o);
  /* SYNs still queued die with the queue's socket (NFQUEUE's bypass lets new ones through). */
  if (o->nfq >= 0)
    close(o->nfq);
  free(o);
}

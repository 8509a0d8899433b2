/* udp_out.c: the container's own UDP (DNS included), from its netns by tproxy, sent from ours. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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
 * nft.c's UDP table marks each datagram the container sends out (not to lo, not to libslirp's
 * own addresses but its DNS and, with --host-loopback, its gateway), the mark routes it to lo,
 * and tproxy hands it to our transparent socket there with its original destination. A flow is
 * the container's source and that destination: a socket of ours, in our namespace, connected to
 * where libslirp would have sent it (10.0.2.3:53 is the host's nameserver, 10.0.2.2 the host's
 * loopback with --host-loopback), and the replies go back to that source from a transparent
 * socket bound to the destination it sent to. Flows close after their idle time (10 s for DNS, as
 * libslirp's, else udp-idle-timeout), the oldest first when there are too many.
 */

#define FLOWS_MAX 1024
#define BUCKETS 256
#define DNS_IDLE_MS 10000
#define SWEEP_MS 1000
#define DGRAM_MAX 65536
/* Datagrams per recvmmsg/sendmmsg: one system call for a burst, where libslirp makes one each. */
#define BATCH 32

struct udp_reply {
  struct sockaddr_storage addr;
  socklen_t len;
  int fd;
  unsigned refs;
  struct udp_reply *next;
};

struct oflow {
  struct net_ev ev; /* NET_EV_UDPOUT_FLOW */
  struct net_udp_out *u;
  struct sockaddr_storage src, dst; /* the container's source, its original destination */
  int hfd;
  struct udp_reply *reply;
  int64_t last_ms, idle_ms;
  bool dead;
  struct oflow *next; /* in its bucket, or the graveyard */
};

struct uo_listener {
  struct net_ev ev; /* NET_EV_UDPOUT_LISTENER */
  int fd, family;
  struct net_udp_out *u;
};

struct net_udp_out {
  struct uo_listener l4, l6;
  int epfd, agent_sock;
  struct net_addrs a;
  struct in6_addr gw6, net6, dns6;
  bool host_loopback;
  struct sockaddr_storage ns4, ns6; /* the host's nameserver for 10.0.2.3 and fd00::3 */
  struct oflow *buckets[BUCKETS], *graveyard;
  size_t n_flows;
  struct udp_reply *replies;
  int64_t idle_ms, next_sweep;
  bool limit_logged;
  int raw4, raw6;             /* for ICMP errors, made when first needed (-2: refused) */
  uint8_t (*bufs)[DGRAM_MAX]; /* BATCH of them */
  struct mmsghdr in[BATCH], out[BATCH];
  struct iovec iov_in[BATCH], iov_out[BATCH];
  struct sockaddr_storage names[BATCH];
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(struct sockaddr_in6))];
  } cms[BATCH];
};

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static socklen_t sa_len(int family)
{
  return family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Address and port only: what names an end of a datagram. */
static bool sa_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
  if (a->ss_family != b->ss_family)
    return false;
  if (a->ss_family == AF_INET6) {
    const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
    return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
  }
  const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
  return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
}

static uint32_t sa_hash(uint32_t h, const struct sockaddr_storage *s)
{
  const uint8_t *p;
  size_t n;
  uint16_t port;
  if (s->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const void *)s;
    p = (const uint8_t *)&s6->sin6_addr;
    n = 16;
    port = s6->sin6_port;
  } else {
    const struct sockaddr_in *s4 = (const void *)s;
    p = (const uint8_t *)&s4->sin_addr;
    n = 4;
    port = s4->sin_port;
  }
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 16777619u;
  h = (h ^ (port & 0xff)) * 16777619u;
  return (h ^ (port >> 8)) * 16777619u;
}

static size_t bucket_of(const struct sockaddr_storage *src, const struct sockaddr_storage *dst)
{
  return sa_hash(sa_hash(2166136261u, src), dst) % BUCKETS;
}

static uint16_t sa_port(const struct sockaddr_storage *s)
{
  return ntohs(s->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)s)->sin6_port
                                        : ((const struct sockaddr_in *)s)->sin_port);
}

/* ---------------------------------------------------------------- where to */

/* The first nameserver of the host's resolv.conf of each family, as libslirp reads it; loopback
 * where there is none (libslirp's fallback too). */
static void read_nameservers(struct net_udp_out *u)
{
  struct sockaddr_in *n4 = (struct sockaddr_in *)&u->ns4;
  struct sockaddr_in6 *n6 = (struct sockaddr_in6 *)&u->ns6;
  bool have4 = false, have6 = false;
  FILE *f = fopen("/etc/resolv.conf", "re");
  char line[512];
  while (f && fgets(line, sizeof(line), f)) {
    char addr[128];
    if (sscanf(line, " nameserver %127s", addr) != 1)
      continue;
    char *pct = strchr(addr, '%'); /* a scope: not ours to follow */
    if (pct)
      *pct = '\0';
    if (!have4 && inet_pton(AF_INET, addr, &n4->sin_addr) == 1)
      have4 = true;
    else if (!have6 && inet_pton(AF_INET6, addr, &n6->sin6_addr) == 1)
      have6 = true;
  }
  if (f)
    fclose(f);
  n4->sin_family = AF_INET;
  n4->sin_port = htons(53);
  n6->sin6_family = AF_INET6;
  n6->sin6_port = htons(53);
  if (!have4 && !have6) {
    n4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    n6->sin6_addr = in6addr_loopback;
    have4 = have6 = true;
  }
  if (!have4)
    u->ns4 = u->ns6;
  if (!have6)
    u->ns6 = u->ns4;
}

static bool translate4(const struct net_udp_out *u, struct sockaddr_storage *ss)
{
  struct sockaddr_in *dst = (struct sockaddr_in *)ss;
  uint32_t d = ntohl(dst->sin_addr.s_addr);
  if (d == ntohl(u->a.dns.s_addr) && ntohs(dst->sin_port) == 53) {
    *ss = u->ns4;
    return true;
  }
  if (d == ntohl(u->a.gateway.s_addr)) {
    if (!u->host_loopback)
      return false;
    dst->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return true;
  }
  if ((d & ntohl(u->a.netmask.s_addr)) == ntohl(u->a.network.s_addr))
    return false;
  return (d >> 24) != 127 && (d >> 24) != 0 && d < 0xe0000000u;
}

static bool translate6(const struct net_udp_out *u, struct sockaddr_storage *ss)
{
  struct sockaddr_in6 *dst = (struct sockaddr_in6 *)ss;
  const struct in6_addr *d = &dst->sin6_addr;
  if (memcmp(d, &u->dns6, 16) == 0 && ntohs(dst->sin6_port) == 53) {
    *ss = u->ns6;
    return true;
  }
  if (memcmp(d, &u->gw6, 16) == 0) {
    if (!u->host_loopback)
      return false;
    dst->sin6_addr = in6addr_loopback;
    dst->sin6_scope_id = 0;
    return true;
  }
  if (memcmp(d, &u->net6, 8) == 0)
    return false;
  return !IN6_IS_ADDR_LOOPBACK(d) && !IN6_IS_ADDR_UNSPECIFIED(d) && !IN6_IS_ADDR_LINKLOCAL(d) &&
         !IN6_IS_ADDR_MULTICAST(d) && !IN6_IS_ADDR_V4MAPPED(d);
}

/* ---------------------------------------------------------------- flows */

static struct udp_reply *reply_get(struct net_udp_out *u, const struct sockaddr_storage *dst)
{
  for (struct udp_reply *r = u->replies; r; r = r->next)
    if (sa_same(&r->addr, dst)) {
      r->refs++;
      return r;
    }
  struct rrt_error err = RRT_ERROR_INIT;
  int fd = net_agent_reply_socket(u->agent_sock, (const struct sockaddr *)dst,
                                  sa_len(dst->ss_family), &err);
  if (fd < 0) {
    rrt_debug("the container's datagrams: %s", rrt_error_msg(&err));
    rrt_error_clear(&err);
    return NULL;
  }
  struct udp_reply *r = xzalloc(sizeof(*r));
  r->addr = *dst;
  r->len = sa_len(dst->ss_family);
  r->fd = fd;
  r->refs = 1;
  r->next = u->replies;
  u->replies = r;
  return r;
}

static void reply_put(struct net_udp_out *u, struct udp_reply *r)
{
  if (!r || --r->refs > 0)
    return;
  for (struct udp_reply **pp = &u->replies; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      break;
    }
  close(r->fd);
  free(r);
}

/* Freed after the current batch of events, which may still name it. */
static void flow_close(struct net_udp_out *u, struct oflow **pp)
{
  struct oflow *f = *pp;
  *pp = f->next;
  close(f->hfd); /* leaves the epoll set with it */
  f->hfd = -1;
  reply_put(u, f->reply);
  f->reply = NULL;
  f->dead = true;
  f->next = u->graveyard;
  u->graveyard = f;
  u->n_flows--;
}

/* At the limit: the flow idle longest goes. */
static void evict_oldest(struct net_udp_out *u)
{
  struct oflow **oldest = NULL;
  for (size_t b = 0; b < BUCKETS; b++)
    for (struct oflow **pp = &u->buckets[b]; *pp; pp = &(*pp)->next)
      if (!oldest || (*pp)->last_ms < (*oldest)->last_ms)
        oldest = pp;
  if (oldest)
    flow_close(u, oldest);
}

static struct oflow *flow_new(struct net_udp_out *u, const struct sockaddr_storage *src,
                              const struct sockaddr_storage *dst, size_t b)
{
  struct sockaddr_storage to = *dst;
  bool ok = dst->ss_family == AF_INET6 ? translate6(u, &to) : translate4(u, &to);
  if (!ok)
    return NULL;
  if (u->n_flows >= FLOWS_MAX) {
    if (!u->limit_logged)
      rrt_debug("the container's datagrams: %d flows at once, closing the oldest", FLOWS_MAX);
    u->limit_logged = true;
    evict_oldest(u);
  }
  int hfd = socket(to.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (hfd < 0)
    return NULL;
  if (to.ss_family == AF_INET6) {
    int one = 1;
    (void)setsockopt(hfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  struct oflow *f = xzalloc(sizeof(*f));
  f->ev.kind = NET_EV_UDPOUT_FLOW;
  f->u = u;
  f->src = *src;
  f->dst = *dst;
  f->hfd = hfd;
  f->idle_ms = sa_port(dst) == 53 ? DNS_IDLE_MS : u->idle_ms;
  struct epoll_event e = {.events = EPOLLIN, .data.ptr = &f->ev};
  if (connect(hfd, (struct sockaddr *)&to, sa_len(to.ss_family)) < 0 ||
      epoll_ctl(u->epfd, EPOLL_CTL_ADD, hfd, &e) < 0 || !(f->reply = reply_get(u, dst))) {
    close(hfd);
    free(f);
    return NULL;
  }
  f->next = u->buckets[b];
  u->buckets[b] = f;
  u->n_flows++;
  return f;
}

/* Sends what was gathered for flow f (one sendmmsg, fewer if the socket's queue is full: the
 * rest is dropped, as a datagram may be). */
static void flush(struct net_udp_out *u, struct oflow *f, unsigned n, bool to_ctr)
{
  if (!f || n == 0)
    return;
  for (unsigned i = 0; i < n; i++) {
    u->out[i].msg_hdr = (struct msghdr){.msg_iov = &u->iov_out[i], .msg_iovlen = 1};
    if (to_ctr) {
      u->out[i].msg_hdr.msg_name = &f->src;
      u->out[i].msg_hdr.msg_namelen = sa_len(f->src.ss_family);
    }
  }
  (void)sendmmsg(to_ctr ? f->reply->fd : f->hfd, u->out, n, 0);
}

static int recv_batch(struct net_udp_out *u, int fd, bool names)
{
  for (unsigned i = 0; i < BATCH; i++) {
    u->iov_in[i] = (struct iovec){.iov_base = u->bufs[i], .iov_len = DGRAM_MAX};
    u->in[i].msg_hdr = (struct msghdr){.msg_iov = &u->iov_in[i], .msg_iovlen = 1};
    if (names) {
      u->in[i].msg_hdr.msg_name = &u->names[i];
      u->in[i].msg_hdr.msg_namelen = sizeof(u->names[i]);
      u->in[i].msg_hdr.msg_control = u->cms[i].buf;
      u->in[i].msg_hdr.msg_controllen = sizeof(u->cms[i].buf);
    }
  }
  int n;
  do
    n = recvmmsg(fd, u->in, BATCH, MSG_DONTWAIT, NULL);
  while (n < 0 && errno == EINTR);
  return n;
}

static bool orig_dst(struct msghdr *msg, struct sockaddr_storage *dst)
{
  for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
    if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_ORIGDSTADDR &&
         c->cmsg_len >= CMSG_LEN(sizeof(struct sockaddr_in))) ||
        (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_ORIGDSTADDR &&
         c->cmsg_len >= CMSG_LEN(sizeof(struct sockaddr_in6)))) {
      memset(dst, 0, sizeof(*dst));
      memcpy(dst, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
      return true;
    }
  return false;
}

/*
 * The container's root may destroy our socket in its netns (ss -K, SOCK_DESTROY): the kernel
 * reports ECONNABORTED once and unbinds it (its port was the kernel's choice), so that the rules
 * hand datagrams to nothing. The agent deletes them: its own go through libslirp from then on.
 */
static bool listener_gone(struct net_udp_out *u, struct uo_listener *l)
{
  struct sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  if (getsockname(l->fd, (struct sockaddr *)&ss, &len) == 0 && sa_port(&ss) != 0)
    return false;
  rrt_debug("the container's datagrams: our socket was destroyed in its netns: they go through "
            "libslirp from now on");
  for (int i = 0; i < 2; i++) {
    struct uo_listener *x = i ? &u->l6 : &u->l4;
    if (x->fd >= 0)
      close(x->fd); /* leaves the epoll set with it */
    x->fd = -1;
  }
  struct rrt_error err = RRT_ERROR_INIT;
  if (net_agent_drop_rules(u->agent_sock, true, &err) < 0)
    rrt_warn("the container's datagrams: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  return true;
}

/* The container's datagrams, each to its flow; a run of one flow's in one sendmmsg. */
static void from_ctr(struct net_udp_out *u, struct uo_listener *l)
{
  int64_t now = now_ms();
  for (int round = 0; round < 8 && l->fd >= 0; round++) {
    int n = recv_batch(u, l->fd, true);
    if (n < 0 && errno != EAGAIN && listener_gone(u, l))
      return;
    if (n <= 0)
      return;
    struct oflow *run = NULL;
    unsigned k = 0;
    for (int i = 0; i < n; i++) {
      struct msghdr *msg = &u->in[i].msg_hdr;
      struct sockaddr_storage *src = &u->names[i], dst;
      if (!orig_dst(msg, &dst) || dst.ss_family != l->family || src->ss_family != l->family)
        continue;
      struct oflow *f = run;
      if (!f || !sa_same(&f->src, src) || !sa_same(&f->dst, &dst)) {
        size_t b = bucket_of(src, &dst);
        for (f = u->buckets[b]; f && !(sa_same(&f->src, src) && sa_same(&f->dst, &dst));
             f = f->next)
          ;
        if (!f) {
          /* A new flow may evict the run's: send the run first. */
          flush(u, run, k, false);
          run = NULL;
          k = 0;
          if (!(f = flow_new(u, src, &dst, b)))
            continue; /* dropped, as a datagram may be */
        }
      }
      if (f != run) {
        flush(u, run, k, false);
        run = f;
        k = 0;
      }
      f->last_ms = now;
      u->iov_out[k++] = (struct iovec){.iov_base = u->bufs[i], .iov_len = u->in[i].msg_len};
    }
    flush(u, run, k, false);
    if (n < BATCH)
      return;
  }
}

static uint16_t csum(uint32_t sum, const void *data, size_t len)
{
  const uint8_t *p = data;
  for (size_t i = 0; i + 1 < len; i += 2)
    sum += (uint32_t)(p[i] << 8 | p[i + 1]);
  if (len & 1)
    sum += (uint32_t)(p[len - 1] << 8);
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return htons((uint16_t)~sum);
}

/*
 * The host's "port unreachable" for a flow (ECONNREFUSED on our socket) to the container, from the
 * address it sent to, quoting its datagram's headers: its connected socket gets ECONNREFUSED as
 * libslirp's ICMP error gives it, not a timeout.
 */
static void port_unreachable(struct net_udp_out *u, struct oflow *f)
{
  bool v6 = f->src.ss_family == AF_INET6;
  int *raw = v6 ? &u->raw6 : &u->raw4;
  if (*raw == -1) {
    struct rrt_error err = RRT_ERROR_INIT;
    *raw = net_agent_raw_socket(u->agent_sock, f->src.ss_family, &err);
    if (*raw < 0) {
      rrt_debug("the container's datagrams: no ICMP errors: %s", rrt_error_msg(&err));
      rrt_error_clear(&err);
      *raw = -2;
    }
  }
  if (*raw < 0)
    return;
  uint8_t pkt[40 + 8 + 40 + 8] = {0};
  size_t len;
  if (!v6) {
    const struct sockaddr_in *s = (const void *)&f->src, *d = (const void *)&f->dst;
    uint8_t *ip = pkt, *icmp = pkt + 20, *in = pkt + 28, *udp = pkt + 48;
    len = 56;
    ip[0] = 0x45;
    ip[2] = (uint8_t)(len >> 8);
    ip[3] = (uint8_t)len;
    ip[8] = 64;
    ip[9] = IPPROTO_ICMP;
    memcpy(ip + 12, &d->sin_addr, 4);
    memcpy(ip + 16, &s->sin_addr, 4);
    icmp[0] = 3; /* destination unreachable */
    icmp[1] = 3; /* port unreachable */
    in[0] = 0x45;
    in[3] = 28;
    in[8] = 64;
    in[9] = IPPROTO_UDP;
    memcpy(in + 12, &s->sin_addr, 4);
    memcpy(in + 16, &d->sin_addr, 4);
    uint16_t c = csum(0, in, 20);
    memcpy(in + 10, &c, 2);
    memcpy(udp, &s->sin_port, 2);
    memcpy(udp + 2, &d->sin_port, 2);
    udp[5] = 8;
    c = csum(0, icmp, 8 + 28);
    memcpy(icmp + 2, &c, 2);
  } else {
    const struct sockaddr_in6 *s = (const void *)&f->src, *d = (const void *)&f->dst;
    uint8_t *ip = pkt, *icmp = pkt + 40, *in = pkt + 48, *udp = pkt + 88;
    len = 96;
    size_t plen = len - 40;
    ip[0] = 0x60;
    ip[4] = (uint8_t)(plen >> 8);
    ip[5] = (uint8_t)plen;
    ip[6] = IPPROTO_ICMPV6;
    ip[7] = 64;
    memcpy(ip + 8, &d->sin6_addr, 16);
    memcpy(ip + 24, &s->sin6_addr, 16);
    icmp[0] = 1; /* destination unreachable */
    icmp[1] = 4; /* port unreachable */
    in[0] = 0x60;
    in[5] = 8;
    in[6] = IPPROTO_UDP;
    in[7] = 64;
    memcpy(in + 8, &s->sin6_addr, 16);
    memcpy(in + 24, &d->sin6_addr, 16);
    memcpy(udp, &s->sin6_port, 2);
    memcpy(udp + 2, &d->sin6_port, 2);
    udp[5] = 8;
    /* The pseudo-header: both addresses, the length, the next header. */
    uint32_t sum = 0;
    for (size_t i = 8; i < 40; i += 2)
      sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    sum += (uint32_t)plen + IPPROTO_ICMPV6;
    uint16_t c = csum(sum, icmp, plen);
    memcpy(icmp + 2, &c, 2);
  }
  struct sockaddr_storage to = f->src;
  if (v6)
    ((struct sockaddr_in6 *)&to)->sin6_port = 0;
  else
    ((struct sockaddr_in *)&to)->sin_port = 0;
  (void)sendto(*raw, pkt, len, 0, (struct sockaddr *)&to, sa_len(to.ss_family));
}

/* Replies to a flow: back to the container's source, from where it sent to. */
static void from_host(struct net_udp_out *u, struct oflow *f)
{
  for (int round = 0; round < 8; round++) {
    int n = recv_batch(u, f->hfd, false);
    if (n < 0 && errno == ECONNREFUSED) {
      port_unreachable(u, f); /* an ICMP error of an earlier datagram: the flow goes on */
      continue;
    }
    if (n <= 0)
      return;
    f->last_ms = now_ms();
    for (int i = 0; i < n; i++)
      u->iov_out[i] = (struct iovec){.iov_base = u->bufs[i], .iov_len = u->in[i].msg_len};
    flush(u, f, (unsigned)n, true);
    if (n < BATCH)
      return;
  }
}

void net_udp_out_event(struct net_ev *ev)
{
  if (ev->kind == NET_EV_UDPOUT_LISTENER) {
    struct uo_listener *l = (struct uo_listener *)((char *)ev - offsetof(struct uo_listener, ev));
    from_ctr(l->u, l);
  } else {
    struct oflow *f = (struct oflow *)((char *)ev - offsetof(struct oflow, ev));
    if (!f->dead)
      from_host(f->u, f);
  }
}

int64_t net_udp_out_expire(struct net_udp_out *u)
{
  if (!u)
    return -1;
  while (u->graveyard) {
    struct oflow *f = u->graveyard;
    u->graveyard = f->next;
    free(f);
  }
  if (u->n_flows == 0)
    return -1;
  int64_t now = now_ms();
  if (now >= u->next_sweep) {
    u->next_sweep = now + SWEEP_MS;
    for (size_t b = 0; b < BUCKETS; b++)
      for (struct oflow **pp = &u->buckets[b]; *pp;) {
        if (now - (*pp)->last_ms > (*pp)->idle_ms)
          flow_close(u, pp);
        else
          pp = &(*pp)->next;
      }
  }
  return u->next_sweep - now;
}

static int listener_add(struct net_udp_out *u, struct uo_listener *l, int family,
                        struct rrt_error *err)
{
  l->ev.kind = NET_EV_UDPOUT_LISTENER;
  l->family = family;
  l->u = u;
  if (l->fd < 0)
    return 0;
  struct epoll_event e = {.events = EPOLLIN, .data.ptr = &l->ev};
  if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, l->fd, &e) < 0)
    return rrt_error_errno(err, "the container's datagrams: epoll_ctl");
  return 0;
}

struct net_udp_out *net_udp_out_new(int epfd, int agent_sock, const struct rrt_net_config *cfg,
                                    const struct net_addrs *a, int u4, int u6,
                                    struct rrt_error *err)
{
  struct net_udp_out *u = xzalloc(sizeof(*u));
  u->epfd = epfd;
  u->agent_sock = agent_sock;
  u->a = *a;
  u->host_loopback = cfg->host_loopback;
  u->idle_ms = (int64_t)(cfg->udp_idle_s ? cfg->udp_idle_s : 60) * 1000;
  inet_pton(AF_INET6, NET_GATEWAY6, &u->gw6);
  inet_pton(AF_INET6, NET_PREFIX6, &u->net6);
  inet_pton(AF_INET6, NET_DNS6, &u->dns6);
  read_nameservers(u);
  u->bufs = xmalloc(BATCH * sizeof(*u->bufs));
  u->raw4 = u->raw6 = -1;
  u->l4.fd = u4;
  u->l6.fd = u6;
  if (listener_add(u, &u->l4, AF_INET, err) < 0 || listener_add(u, &u->l6, AF_INET6, err) < 0) {
    net_udp_out_free(u);
    return NULL;
  }
  return u;
}

void net_udp_out_free(struct net_udp_out *u)
{
  if (!u)
    return;
  for (size_t b = 0; b < BUCKETS; b++)
    while (u->buckets[b])
      flow_close(u, &u->buckets[b]);
  u->n_flows = 0;
  (void)net_udp_out_expire(u);
  if (u->l4.fd >= 0)
    close(u->l4.fd);
  if (u->l6.fd >= 0)
    close(u->l6.fd);
  if (u->raw4 >= 0)
    close(u->raw4);
  if (u->raw6 >= 0)
    close(u->raw6);
  free(u->bufs);
  free(u);
}

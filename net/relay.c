/* relay.c: a splice() relay between a host socket and a container socket: published TCP ports,
 * the container's own connections (outbound.c), and published UDP ports. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

#define container_of(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

/* Big pipes let one splice move a whole socket buffer; the kernel may refuse
 * (pipe-user-pages-soft), and then the default 64 KiB still works. */
#define PIPE_SIZE (1024 * 1024)
/* Bytes one direction may move per event before yielding to the others:
 * with edge-triggered epoll the connection is then queued as pending. */
#define PUMP_BUDGET (4 * 1024 * 1024)

struct listener {
  struct net_ev ev;
  int fd;
  struct rrt_port port;
  struct listener *next;
};

/* One direction of a connection: src -> pipe -> dst. */
struct flow {
  int src, dst;
  int pipe_r, pipe_w;
  size_t in_pipe, pipe_cap;
  bool eof, done;
};

struct conn {
  struct net_ev host_ev, ctr_ev;
  int host_fd, ctr_fd;
  bool connecting, dead, pending;
  bool host_connecting; /* the container's own connection: the host side connects */
  struct flow up;       /* host -> container */
  struct flow down;     /* container -> host */
  uint16_t ctr_port;
  char dest[INET6_ADDRSTRLEN + 8]; /* host_connecting: where to, for the debug log */
  struct conn *prev, *next;        /* live list, or the graveyard once dead */
  struct conn *pending_next;
};

/* A published UDP port: one socket in the container netns per host-side client, connected to
 * the container's port on its loopback; replies go back from the listening socket. */
#define UDP_FLOWS_MAX 256
#define UDP_IDLE_MS_DEFAULT 60000
#define UDP_BUF 65536

struct udp_flow {
  struct net_ev ev;
  int fd;
  struct udp_listener *l;
  struct sockaddr_storage peer;
  socklen_t peer_len;
  int64_t last_ms;
  bool dead;
  struct udp_flow *next; /* the listener's flows, or the graveyard once dead */
};

struct udp_listener {
  struct net_ev ev;
  int fd;
  struct rrt_port port;
  size_t n_flows;
  struct udp_flow *flows;
  struct udp_listener *next;
};

struct net_relay {
  int epfd, agent_sock;
  size_t max_conns, n_conns;
  bool limit_logged;
  struct listener *listeners;
  struct udp_listener *udp;
  struct conn *conns, *graveyard, *pending;
  struct udp_flow *udp_graveyard;
  int64_t udp_idle_ms;
  int64_t (*clock_ms)(void);
  uint8_t *udp_buf;
};

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct net_relay *net_relay_new(int epfd, int agent_sock, size_t max_conns)
{
  struct net_relay *r = xzalloc(sizeof(*r));
  r->epfd = epfd;
  r->agent_sock = agent_sock;
  r->max_conns = max_conns;
  r->udp_idle_ms = UDP_IDLE_MS_DEFAULT;
  r->clock_ms = now_ms;
  return r;
}

void net_relay_set_udp_idle(struct net_relay *r, int64_t ms)
{
  r->udp_idle_ms = ms;
}

void net_relay_set_clock(struct net_relay *r, int64_t (*clock_ms)(void))
{
  r->clock_ms = clock_ms ? clock_ms : now_ms;
}

size_t net_relay_conn_count(const struct net_relay *r)
{
  return r->n_conns;
}

static int udp_listen(struct net_relay *r, const struct rrt_port *port,
                      const struct sockaddr_storage *ss, socklen_t len, struct rrt_error *err)
{
  cleanup_close int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return rrt_error_errno(err, "publish %s:%u/udp: socket", port->host_ip, port->host_port);
  int one = 1;
  if (ss->ss_family == AF_INET6)
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (bind(fd, (const struct sockaddr *)ss, len) < 0)
    return rrt_error_errno(err, "publish %s:%u/udp", port->host_ip, port->host_port);
  struct udp_listener *l = xzalloc(sizeof(*l));
  l->ev.kind = NET_EV_UDP_LISTENER;
  l->port = *port;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->ev};
  if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
    free(l);
    return rrt_error_errno(err, "publish %s:%u/udp: epoll_ctl", port->host_ip, port->host_port);
  }
  l->fd = steal_fd(&fd);
  l->next = r->udp;
  r->udp = l;
  if (!r->udp_buf)
    r->udp_buf = xmalloc(UDP_BUF);
  return 0;
}

/* Freed after the current batch of epoll events, which may still name it (as TCP's). */
static void udp_flow_close(struct net_relay *r, struct udp_listener *l, struct udp_flow **pp)
{
  struct udp_flow *f = *pp;
  *pp = f->next;
  /* Out of the epoll set first: a close alone leaves it there while another fd shares the socket
   * (the agent's copy, which it may not have closed yet), and an event of a later batch would
   * then name the flow once it is freed. */
  (void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, f->fd, NULL);
  close(f->fd);
  f->fd = -1;
  f->dead = true;
  f->next = r->udp_graveyard;
  r->udp_graveyard = f;
  l->n_flows--;
}

/* A datagram from a host-side client: to the container through that client's flow. */
static void udp_from_host(struct net_relay *r, struct udp_listener *l)
{
  for (;;) {
    struct sockaddr_storage peer;
    socklen_t plen = sizeof(peer);
    ssize_t n = recvfrom(l->fd, r->udp_buf, UDP_BUF, 0, (struct sockaddr *)&peer, &plen);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return; /* EAGAIN, or an ICMP error of an earlier send */
    }
    int64_t now = r->clock_ms();
    struct udp_flow *f = NULL;
    for (struct udp_flow **pp = &l->flows; *pp;) {
      if ((*pp)->peer_len == plen && memcmp(&(*pp)->peer, &peer, plen) == 0) {
        f = *pp;
        break;
      }
      if (now - (*pp)->last_ms > r->udp_idle_ms)
        udp_flow_close(r, l, pp);
      else
        pp = &(*pp)->next;
    }
    if (!f) {
      if (l->n_flows >= UDP_FLOWS_MAX) {
        rrt_warn("publish %s:%u/udp: %d clients at once, dropping a datagram from a new one",
                 l->port.host_ip, l->port.host_port, UDP_FLOWS_MAX);
        continue;
      }
      struct rrt_error err = RRT_ERROR_INIT;
      int fd = net_agent_socket(r->agent_sock, SOCK_DGRAM, &err);
      if (fd < 0) {
        rrt_warn("publish %s:%u/udp: %s", l->port.host_ip, l->port.host_port, rrt_error_msg(&err));
        rrt_error_clear(&err);
        continue;
      }
      struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(l->port.container_port)};
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      f = xzalloc(sizeof(*f));
      f->ev.kind = NET_EV_UDP_FLOW;
      f->fd = fd;
      f->l = l;
      f->peer = peer;
      f->peer_len = plen;
      struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &f->ev};
      if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 ||
          epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        rrt_warn("publish %s:%u/udp: %s", l->port.host_ip, l->port.host_port, strerror(errno));
        close(fd);
        free(f);
        continue;
      }
      f->next = l->flows;
      l->flows = f;
      l->n_flows++;
    }
    f->last_ms = now;
    /* Lost like any datagram when the container's queue is full or nothing listens. */
    (void)send(f->fd, r->udp_buf, (size_t)n, 0);
  }
}

/* Replies from the container: back to the client from the published address. */
static void udp_from_ctr(struct net_relay *r, struct udp_flow *f)
{
  for (;;) {
    ssize_t n = recv(f->fd, r->udp_buf, UDP_BUF, 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    f->last_ms = r->clock_ms();
    (void)sendto(f->l->fd, r->udp_buf, (size_t)n, 0, (struct sockaddr *)&f->peer, f->peer_len);
  }
}

static int host_sockaddr(const struct rrt_port *p, struct sockaddr_storage *ss, socklen_t *len)
{
  memset(ss, 0, sizeof(*ss));
  struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
  if (inet_pton(AF_INET, p->host_ip, &s4->sin_addr) == 1) {
    s4->sin_family = AF_INET;
    s4->sin_port = htons(p->host_port);
    *len = sizeof(*s4);
    return 0;
  }
  if (inet_pton(AF_INET6, p->host_ip, &s6->sin6_addr) == 1) {
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(p->host_port);
    *len = sizeof(*s6);
    return 0;
  }
  return -1;
}

int net_relay_listen(struct net_relay *r, const struct rrt_port *port, struct rrt_error *err)
{
  struct sockaddr_storage ss;
  socklen_t len;
  if (host_sockaddr(port, &ss, &len) < 0)
    return rrt_error_set(err, 0, "publish %s:%u: host address is not an IP address", port->host_ip,
                         port->host_port);
  if (port->proto == IPPROTO_UDP)
    return udp_listen(r, port, &ss, len, err);
  cleanup_close int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return rrt_error_errno(err, "publish %s:%u: socket", port->host_ip, port->host_port);
  int one = 1;
  /* Without SO_REUSEADDR a port published by a container that just exited
   * stays unusable while its old connections sit in TIME_WAIT. */
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (ss.ss_family == AF_INET6)
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (bind(fd, (struct sockaddr *)&ss, len) < 0)
    return rrt_error_errno(err, "publish %s:%u", port->host_ip, port->host_port);
  if (listen(fd, 512) < 0)
    return rrt_error_errno(err, "publish %s:%u: listen", port->host_ip, port->host_port);
  struct listener *l = xzalloc(sizeof(*l));
  l->ev.kind = NET_EV_LISTENER;
  l->port = *port;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->ev};
  if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
    free(l);
    return rrt_error_errno(err, "publish %s:%u: epoll_ctl", port->host_ip, port->host_port);
  }
  l->fd = steal_fd(&fd);
  l->next = r->listeners;
  r->listeners = l;
  return 0;
}

static void flow_init(struct flow *f, int src, int dst)
{
  f->src = src;
  f->dst = dst;
  f->pipe_r = f->pipe_w = -1;
}

static int flow_open_pipe(struct flow *f)
{
  int p[2];
  if (pipe2(p, O_NONBLOCK | O_CLOEXEC) < 0)
    return -1;
  f->pipe_r = p[0];
  f->pipe_w = p[1];
  int sz = fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
  if (sz < 0)
    sz = fcntl(p[1], F_GETPIPE_SZ);
  f->pipe_cap = sz > 0 ? (size_t)sz : 65536;
  return 0;
}

static void flow_close(struct flow *f)
{
  if (f->pipe_r >= 0)
    close(f->pipe_r);
  if (f->pipe_w >= 0)
    close(f->pipe_w);
  f->pipe_r = f->pipe_w = -1;
}

/*
 * Moves what it can; 1 when the budget ran out with more to do, 0 when it
 * must wait for an event, -1 on a socket error. The byte count in the pipe is
 * tracked so that a full pipe is never mistaken for an empty socket: EAGAIN on
 * the way in then only means the socket is drained (or the pipe's slots are
 * used up, which the way out frees, and the loop tries again).
 */
static int flow_pump(struct flow *f)
{
  size_t moved = 0;
  while (!f->done) {
    bool progress = false;
    if (!f->eof && f->in_pipe < f->pipe_cap) {
      ssize_t n = splice(f->src, NULL, f->pipe_w, NULL, f->pipe_cap - f->in_pipe,
                         SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        f->in_pipe += (size_t)n;
        progress = true;
      } else if (n == 0) {
        f->eof = true;
        progress = true;
      } else if (errno != EAGAIN && errno != EINTR) {
        return -1;
      }
    }
    if (f->in_pipe > 0) {
      ssize_t n =
          splice(f->pipe_r, NULL, f->dst, NULL, f->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n > 0) {
        f->in_pipe -= (size_t)n;
        moved += (size_t)n;
        progress = true;
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        return -1;
      }
    }
    if (f->eof && f->in_pipe == 0) {
      /* Half-close: the peer learns that no more data comes, and may still answer. */
      (void)shutdown(f->dst, SHUT_WR);
      f->done = true;
      break;
    }
    if (!progress)
      return 0;
    if (moved >= PUMP_BUDGET)
      return 1;
  }
  return 0;
}

static void conn_kill(struct net_relay *r, struct conn *c, bool reset)
{
  if (c->dead)
    return;
  c->dead = true;
  if (reset) {
    /* An error on one side becomes a reset on the other, as it would be
     * without a relay in between, instead of a clean EOF that looks like a
     * complete transfer. */
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(c->host_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    (void)setsockopt(c->ctr_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  }
  /* Out of the epoll set before the close, as a UDP flow's (udp_flow_close). */
  (void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, c->host_fd, NULL);
  (void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, c->ctr_fd, NULL);
  close(c->host_fd);
  close(c->ctr_fd);
  flow_close(&c->up);
  flow_close(&c->down);
  if (c->prev)
    c->prev->next = c->next;
  else
    r->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  /* Freed after the current batch of epoll events, which may still name it. */
  c->prev = NULL;
  c->next = r->graveyard;
  r->graveyard = c;
  r->n_conns--;
  if (r->limit_logged && r->n_conns < r->max_conns) {
    rrt_info("published ports: below the connection limit (%zu) again", r->max_conns);
    r->limit_logged = false;
  }
}

static void conn_pump(struct net_relay *r, struct conn *c)
{
  int a = flow_pump(&c->up);
  int b = a < 0 ? 0 : flow_pump(&c->down);
  if (a < 0 || b < 0) {
    conn_kill(r, c, true);
    return;
  }
  if (c->up.done && c->down.done) {
    conn_kill(r, c, false);
    return;
  }
  if ((a > 0 || b > 0) && !c->pending) {
    c->pending = true;
    c->pending_next = r->pending;
    r->pending = c;
  }
}

static void set_nodelay(int fd)
{
  int one = 1;
  /* Each side already had Nagle applied by the original sender; delaying
   * again in the relay only adds latency. */
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* A live connection of the two sockets (its own from here on), or NULL and they stay the
 * caller's; `what` names it in warnings. */
static struct conn *conn_add(struct net_relay *r, int hfd, int cfd, bool connecting,
                             bool host_connecting, const char *what)
{
  set_nodelay(hfd);
  set_nodelay(cfd);
  struct conn *c = xzalloc(sizeof(*c));
  c->host_ev.kind = NET_EV_CONN_HOST;
  c->ctr_ev.kind = NET_EV_CONN_CTR;
  c->connecting = connecting;
  c->host_connecting = host_connecting;
  flow_init(&c->up, hfd, cfd);
  flow_init(&c->down, cfd, hfd);
  if (flow_open_pipe(&c->up) < 0 || flow_open_pipe(&c->down) < 0) {
    rrt_warn("%s: pipe: %s", what, strerror(errno));
    flow_close(&c->up);
    flow_close(&c->down);
    free(c);
    return NULL;
  }
  struct epoll_event eh = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                           .data.ptr = &c->host_ev};
  struct epoll_event ec = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                           .data.ptr = &c->ctr_ev};
  if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, hfd, &eh) < 0 ||
      epoll_ctl(r->epfd, EPOLL_CTL_ADD, cfd, &ec) < 0) {
    rrt_warn("%s: epoll_ctl: %s", what, strerror(errno));
    (void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, hfd, NULL);
    flow_close(&c->up);
    flow_close(&c->down);
    free(c);
    return NULL;
  }
  c->host_fd = hfd;
  c->ctr_fd = cfd;
  c->next = r->conns;
  if (r->conns)
    r->conns->prev = c;
  r->conns = c;
  r->n_conns++;
  return c;
}

static void conn_new(struct net_relay *r, struct listener *l, int host_fd)
{
  struct rrt_error err = RRT_ERROR_INIT;
  cleanup_close int hfd = host_fd;
  /* A socket made in the container's netns and connected to its loopback:
   * the container sees the connection come from 127.0.0.1, and the client's
   * real address is not preserved (no PROXY protocol, no transparent mode). */
  cleanup_close int cfd = net_agent_socket(r->agent_sock, SOCK_STREAM, &err);
  if (cfd < 0) {
    rrt_warn("publish %s:%u: %s", l->port.host_ip, l->port.host_port, rrt_error_msg(&err));
    rrt_error_clear(&err);
    return;
  }
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(l->port.container_port)};
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool connecting = false;
  if (connect(cfd, (struct sockaddr *)&to, sizeof(to)) < 0) {
    if (errno != EINPROGRESS) {
      rrt_debug("publish %s:%u: connect to container port %u: %s", l->port.host_ip,
                l->port.host_port, l->port.container_port, strerror(errno));
      struct linger lg = {.l_onoff = 1, .l_linger = 0};
      (void)setsockopt(hfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
      return;
    }
    connecting = true;
  }
  char what[96];
  snprintf(what, sizeof(what), "publish %s:%u", l->port.host_ip, l->port.host_port);
  struct conn *c = conn_add(r, hfd, cfd, connecting, false, what);
  if (!c)
    return;
  steal_fd(&hfd);
  steal_fd(&cfd);
  c->ctr_port = l->port.container_port;
  if (!connecting)
    conn_pump(r, c);
}

bool net_relay_full(const struct net_relay *r)
{
  return r->n_conns >= r->max_conns;
}

bool net_relay_adopt(struct net_relay *r, int host_fd, int ctr_fd, bool connecting,
                     const char *dest)
{
  struct conn *c = conn_add(r, host_fd, ctr_fd, connecting, true, dest);
  if (!c) {
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(ctr_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(host_fd);
    close(ctr_fd);
    return false;
  }
  snprintf(c->dest, sizeof(c->dest), "%s", dest);
  if (!connecting)
    conn_pump(r, c);
  return true;
}

static void on_accept(struct net_relay *r, struct listener *l)
{
  for (;;) {
    int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno != EAGAIN)
        rrt_warn("publish %s:%u: accept: %s", l->port.host_ip, l->port.host_port, strerror(errno));
      return;
    }
    if (r->n_conns >= r->max_conns) {
      if (!r->limit_logged)
        rrt_warn("published ports: connection limit (%zu) reached, refusing new connections "
                 "on %s:%u until some close",
                 r->max_conns, l->port.host_ip, l->port.host_port);
      r->limit_logged = true;
      struct linger lg = {.l_onoff = 1, .l_linger = 0};
      (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
      close(fd);
      continue;
    }
    conn_new(r, l, fd);
  }
}

void net_relay_event(struct net_relay *r, struct net_ev *ev, uint32_t events)
{
  if (ev->kind == NET_EV_LISTENER) {
    on_accept(r, container_of(ev, struct listener, ev));
    return;
  }
  if (ev->kind == NET_EV_UDP_LISTENER) {
    udp_from_host(r, container_of(ev, struct udp_listener, ev));
    return;
  }
  if (ev->kind == NET_EV_UDP_FLOW) {
    struct udp_flow *f = container_of(ev, struct udp_flow, ev);
    if (!f->dead)
      udp_from_ctr(r, f);
    return;
  }
  struct conn *c = ev->kind == NET_EV_CONN_HOST ? container_of(ev, struct conn, host_ev)
                                                : container_of(ev, struct conn, ctr_ev);
  if (c->dead)
    return;
  if (c->connecting) {
    /* Only the connecting side's events tell how its connect() ended; the other's data waits
     * (edge-triggered: the first pump reads what came meanwhile). */
    if (ev->kind != (c->host_connecting ? NET_EV_CONN_HOST : NET_EV_CONN_CTR)) {
      if (events & (EPOLLERR | EPOLLHUP))
        conn_kill(r, c, true);
      return;
    }
    int soerr = 0;
    socklen_t len = sizeof(soerr);
    if (getsockopt(c->host_connecting ? c->host_fd : c->ctr_fd, SOL_SOCKET, SO_ERROR, &soerr,
                   &len) < 0)
      soerr = errno;
    if (soerr == EINPROGRESS || (soerr == 0 && !(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))))
      return;
    if (soerr != 0) {
      if (c->host_connecting)
        rrt_debug("the container's connection to %s: %s", c->dest, strerror(soerr));
      else
        rrt_debug("published port: connect to container port %u: %s", c->ctr_port, strerror(soerr));
      /* Refused or unreachable: a reset in the container at once, as libslirp answers its SYN. */
      conn_kill(r, c, true);
      return;
    }
    c->connecting = false;
  } else if (events & EPOLLERR) {
    conn_kill(r, c, true);
    return;
  }
  conn_pump(r, c);
}

/* Runs connections that stopped on their budget; true when some still have work. */
bool net_relay_run_pending(struct net_relay *r)
{
  struct conn *list = r->pending;
  r->pending = NULL;
  while (list) {
    struct conn *c = list;
    list = c->pending_next;
    c->pending = false;
    if (!c->dead)
      conn_pump(r, c);
  }
  return r->pending != NULL;
}

/* Frees connections closed during the last batch of events. */
void net_relay_reap(struct net_relay *r)
{
  if (r->pending) {
    /* Drop dead entries from the pending list before freeing them. */
    struct conn **pp = &r->pending;
    while (*pp) {
      if ((*pp)->dead)
        *pp = (*pp)->pending_next;
      else
        pp = &(*pp)->pending_next;
    }
  }
  while (r->graveyard) {
    struct conn *c = r->graveyard;
    r->graveyard = c->next;
    free(c);
  }
  while (r->udp_graveyard) {
    struct udp_flow *f = r->udp_graveyard;
    r->udp_graveyard = f->next;
    free(f);
  }
}

void net_relay_free(struct net_relay *r)
{
  if (!r)
    return;
  while (r->conns)
    conn_kill(r, r->conns, true);
  r->pending = NULL;
  net_relay_reap(r);
  while (r->listeners) {
    struct listener *l = r->listeners;
    r->listeners = l->next;
    close(l->fd);
    free(l);
  }
  while (r->udp) {
    struct udp_listener *l = r->udp;
    r->udp = l->next;
    while (l->flows)
      udp_flow_close(r, l, &l->flows);
    close(l->fd);
    free(l);
  }
  net_relay_reap(r);
  free(r->udp_buf);
  free(r);
}

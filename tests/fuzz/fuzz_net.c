/* fuzz_net.c: libFuzzer harness for the network helper: the ns agent's replies (net_recv_status),
 * publish specs and CIDRs, and the published-port relay's UDP flow table under churn (clients
 * coming, replies, a clock that jumps past the idle timeout, batches of events as the helper's
 * loop runs them) and its TCP connections (connect, accept, bytes, half-close, close or reset at
 * either end), all on loopback, with an in-process agent thread as the socket factory. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../net/net_internal.h"
#include "rootlessrt/net.h"
#include "rootlessrt/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CLIENTS 16
#define PEERS 64
#define TCP_SLOTS 8

static int agent_mine = -1;
static uint16_t host_port, ctr_port;
static int ctr_fd = -1;
static int clients[CLIENTS];
static uint16_t tcp_host_port, tcp_ctr_port;
static int tcp_ctr_listen = -1;
static int64_t fake_now;

static int64_t fake_clock(void)
{
  return fake_now;
}

/* The agent's side of the protocol, as net/agent.c serves it, in the runtime's netns. It keeps
 * its copy of the last sockets it sent a while: the real agent closes its copy after the send,
 * and may not have yet when the relay closes its own (the socket then stays in the relay's epoll
 * set unless the relay takes it out). */
#define AGENT_KEEPS 8
static void *agent_thread(void *arg)
{
  int sock = (int)(intptr_t)arg;
  int kept[AGENT_KEEPS];
  unsigned next = 0;
  for (int i = 0; i < AGENT_KEEPS; i++)
    kept[i] = -1;
  for (;;) {
    char req;
    if (recv(sock, &req, 1, 0) <= 0)
      return NULL;
    int fd =
        socket(AF_INET, (req == 'U' ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct rrt_error err = RRT_ERROR_INIT;
    if (fd < 0)
      rrt_error_errno(&err, "socket");
    (void)net_send_status(sock, fd, fd < 0 ? &err : NULL);
    rrt_error_clear(&err);
    if (fd >= 0) {
      if (kept[next % AGENT_KEEPS] >= 0)
        close(kept[next % AGENT_KEEPS]);
      kept[next++ % AGENT_KEEPS] = fd;
    }
  }
}

static uint16_t bound_port(int fd)
{
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
    abort();
  return ntohs(a.sin_port);
}

static int udp_bound(uint16_t port)
{
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
    abort();
  return fd;
}

static int tcp_listening(uint16_t *port)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0)
    abort();
  *port = bound_port(fd);
  return fd;
}

static void setup(void)
{
  /* As the helper does (net_helper_main): a write to a peer that hung up is an error. */
  signal(SIGPIPE, SIG_IGN);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    abort();
  agent_mine = sv[0];
  pthread_t t;
  if (pthread_create(&t, NULL, agent_thread, (void *)(intptr_t)sv[1]) != 0)
    abort();
  pthread_detach(t);
  ctr_fd = udp_bound(0);
  ctr_port = bound_port(ctr_fd);
  int probe = udp_bound(0); /* a free port for the published one, given back at once */
  host_port = bound_port(probe);
  close(probe);
  for (int i = 0; i < CLIENTS; i++)
    clients[i] = udp_bound(0);
  tcp_ctr_listen = tcp_listening(&tcp_ctr_port);
  int tprobe = tcp_listening(&tcp_host_port);
  close(tprobe);
}

static void close_slot(int *fd, bool reset)
{
  if (*fd < 0)
    return;
  if (reset) {
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(*fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  }
  close(*fd);
  *fd = -1;
}

/* TCP through the splice relay: connect, accept, bytes either way, close or reset either end. */
static void tcp_op(uint8_t op, uint8_t arg, int *cli, int *srv)
{
  int k = arg % TCP_SLOTS;
  char buf[4096];
  memset(buf, arg, sizeof(buf));
  switch (op) {
  case 8: /* a host client connects */
    if (cli[k] < 0) {
      cli[k] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(tcp_host_port)};
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      (void)connect(cli[k], (struct sockaddr *)&to, sizeof(to));
    }
    break;
  case 9: /* the container accepts */
    if (srv[k] < 0)
      srv[k] = accept4(tcp_ctr_listen, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    break;
  case 10:
    if (cli[k] >= 0)
      (void)send(cli[k], buf, (size_t)(arg * 16 + 1), MSG_NOSIGNAL | MSG_DONTWAIT);
    break;
  case 11:
    if (srv[k] >= 0)
      (void)send(srv[k], buf, (size_t)(arg * 16 + 1), MSG_NOSIGNAL | MSG_DONTWAIT);
    break;
  case 12:
    if (cli[k] >= 0)
      while (recv(cli[k], buf, sizeof(buf), MSG_DONTWAIT) > 0)
        ;
    if (srv[k] >= 0)
      while (recv(srv[k], buf, sizeof(buf), MSG_DONTWAIT) > 0)
        ;
    break;
  case 13:
    if (cli[k] >= 0)
      (void)shutdown(cli[k], SHUT_WR);
    break;
  case 14:
    close_slot(&cli[k], arg & 0x80);
    break;
  case 15:
    close_slot(&srv[k], arg & 0x80);
    break;
  }
}

static void drain(int fd)
{
  char buf[256];
  while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
    ;
}

/* One batch of events, as handle_events() runs it. */
static void batch(int epfd, struct net_relay *r)
{
  struct epoll_event evs[64];
  int n = epoll_wait(epfd, evs, 64, 0);
  for (int i = 0; i < n; i++)
    net_relay_event(r, evs[i].data.ptr, evs[i].events);
  net_relay_reap(r);
}

static void churn(const uint8_t *data, size_t size)
{
  struct rrt_error err = RRT_ERROR_INIT;
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0)
    abort();
  struct net_relay *r = net_relay_new(epfd, agent_mine, 64);
  net_relay_set_clock(r, fake_clock);
  net_relay_set_udp_idle(r, 1000);
  fake_now = 0;
  struct rrt_port p = {.proto = IPPROTO_UDP, .host_port = host_port, .container_port = ctr_port};
  strcpy(p.host_ip, "127.0.0.1");
  struct rrt_port tp = {
      .proto = IPPROTO_TCP, .host_port = tcp_host_port, .container_port = tcp_ctr_port};
  strcpy(tp.host_ip, "127.0.0.1");
  if (net_relay_listen(r, &p, &err) < 0 || net_relay_listen(r, &tp, &err) < 0) {
    /* The port was taken between the probe and now: nothing to fuzz this round. */
    rrt_error_clear(&err);
    net_relay_free(r);
    close(epfd);
    return;
  }
  drain(ctr_fd);
  int cli[TCP_SLOTS], srv[TCP_SLOTS];
  for (int i = 0; i < TCP_SLOTS; i++)
    cli[i] = srv[i] = -1;
  int stale;
  while ((stale = accept4(tcp_ctr_listen, NULL, NULL, SOCK_CLOEXEC)) >= 0)
    close(stale);
  for (int i = 0; i < CLIENTS; i++)
    drain(clients[i]);
  struct sockaddr_in peers[PEERS];
  size_t n_peers = 0;
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(host_port)};
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (size_t i = 0; i + 1 < size; i += 2) {
    uint8_t op = data[i] & 15, arg = data[i + 1];
    if (op >= 8) {
      tcp_op(op, arg, cli, srv);
      continue;
    }
    switch (op) {
    case 0: /* a client sends */
    case 1:
      (void)sendto(clients[arg % CLIENTS], &arg, 1, 0, (struct sockaddr *)&to, sizeof(to));
      break;
    case 2: { /* the container reads what reached it and remembers who sent it */
      struct sockaddr_in from;
      socklen_t len = sizeof(from);
      char buf[64];
      while (recvfrom(ctr_fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &len) >= 0)
        if (n_peers < PEERS)
          peers[n_peers++] = from;
      break;
    }
    case 3: /* the container replies on one of the flows */
      if (n_peers)
        (void)sendto(ctr_fd, &arg, 1, 0, (struct sockaddr *)&peers[arg % n_peers],
                     sizeof(peers[0]));
      break;
    case 4: /* time passes: past the idle timeout when arg is large */
      fake_now += (int64_t)arg * 20;
      break;
    case 5:
    case 6: /* the helper's loop runs a batch of events */
      batch(epfd, r);
      break;
    case 7: /* a client reads its replies */
      drain(clients[arg % CLIENTS]);
      break;
    }
  }
  batch(epfd, r);
  while (net_relay_run_pending(r))
    net_relay_reap(r);
  net_relay_reap(r);
  net_relay_free(r);
  for (int i = 0; i < TCP_SLOTS; i++) {
    close_slot(&cli[i], false);
    close_slot(&srv[i], false);
  }
  close(epfd);
}

/* An agent reply of these bytes (with a descriptor attached when asked) must parse or fail with
 * a message, never hand out a descriptor on failure. */
static void agent_reply(const uint8_t *data, size_t size)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    abort();
  bool with_fd = size > 0 && (data[0] & 1);
  struct iovec iov = {.iov_base = (void *)(size > 1 ? data + 1 : data),
                      .iov_len = size > 1 ? (size - 1 < 2000 ? size - 1 : 2000) : 0};
  union rrt_fd_cmsg u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  rrt_msg_attach_fd(&msg, &u, with_fd ? sv[1] : -1);
  if (iov.iov_len == 0) {
    close(sv[1]); /* a hang-up: "exited unexpectedly" */
    sv[1] = -1;
  } else if (sendmsg(sv[1], &msg, MSG_NOSIGNAL) < 0) {
    abort();
  }
  int fd = -2;
  struct rrt_error err = RRT_ERROR_INIT;
  int r = net_recv_status(sv[0], &fd, &err);
  if (r < 0 && (!err.msg || fd != -2))
    abort();
  if (r == 0 && fd >= 0)
    close(fd);
  rrt_error_clear(&err);
  close(sv[0]);
  if (sv[1] >= 0)
    close(sv[1]);
}

static void texts(const uint8_t *data, size_t size)
{
  cleanup_free char *s = xstrndup((const char *)data, size);
  struct rrt_port p;
  struct rrt_error err = RRT_ERROR_INIT;
  if (rrt_net_publish_parse(s, &p, &err) < 0) {
    if (!err.msg)
      abort();
    rrt_error_clear(&err);
  } else if (p.host_port == 0 || p.container_port == 0 ||
             (p.proto != IPPROTO_TCP && p.proto != IPPROTO_UDP)) {
    abort();
  }
  struct net_addrs a;
  if (net_cidr_parse(s, &a, &err) < 0) {
    if (!err.msg)
      abort();
    rrt_error_clear(&err);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (agent_mine < 0)
    setup();
  if (size == 0)
    return 0;
  switch (data[0] % 3) {
  case 0:
    agent_reply(data + 1, size - 1);
    break;
  case 1:
    texts(data + 1, size - 1);
    break;
  default:
    churn(data + 1, size - 1);
    break;
  }
  return 0;
}

/* rrt-netbench.c: bench-net.sh's rates: UDP echoes and short HTTP connections per second. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 *   rrt-netbench echo ADDR PORT            echoes every datagram (recvmmsg/sendmmsg: the server
 *                                          is not what limits the rate)
 *   rrt-netbench http ADDR PORT            per connection: reads the request, answers a 3-byte
 *                                          page, closes (one process, no fork per connection)
 *   rrt-netbench get ADDR PORT SECS        sequential HTTP/1.0 GETs, each a new connection, read
 *                                          to EOF; prints the connections per second
 *   rrt-netbench rate ADDR PORT SECS WINDOW  64-byte datagrams with WINDOW in flight, each echo
 *                                         answered by a new one (all WINDOW again after 50 ms
 *                                         without any); prints the echoes per second
 * UDP as DNS asks and is answered: both directions of the path under test, per datagram.
 */

#define BATCH 64
#define LEN 64

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int resolve(const char *addr, const char *port, struct sockaddr_storage *ss, socklen_t *len)
{
  struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST}, *ai;
  if (getaddrinfo(addr, port, &hints, &ai) != 0)
    return -1;
  memcpy(ss, ai->ai_addr, ai->ai_addrlen);
  *len = ai->ai_addrlen;
  freeaddrinfo(ai);
  return 0;
}

static int echo(int fd)
{
  static char bufs[BATCH][2048];
  struct mmsghdr m[BATCH];
  struct iovec iov[BATCH];
  struct sockaddr_storage peers[BATCH];
  for (;;) {
    for (int i = 0; i < BATCH; i++) {
      iov[i] = (struct iovec){.iov_base = bufs[i], .iov_len = sizeof(bufs[i])};
      m[i].msg_hdr = (struct msghdr){.msg_name = &peers[i],
                                     .msg_namelen = sizeof(peers[i]),
                                     .msg_iov = &iov[i],
                                     .msg_iovlen = 1};
    }
    int n = recvmmsg(fd, m, BATCH, MSG_WAITFORONE, NULL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      perror("recvmmsg");
      return 1;
    }
    for (int i = 0; i < n; i++)
      iov[i].iov_len = m[i].msg_len;
    (void)sendmmsg(fd, m, (unsigned)n, 0);
  }
}

static int send_n(int fd, int n)
{
  static char buf[LEN];
  struct mmsghdr m[BATCH];
  struct iovec iov = {.iov_base = buf, .iov_len = LEN};
  memset(buf, 'r', LEN);
  int sent = 0;
  while (sent < n) {
    int k = n - sent < BATCH ? n - sent : BATCH;
    for (int i = 0; i < k; i++)
      m[i].msg_hdr = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
    int r = sendmmsg(fd, m, (unsigned)k, 0);
    if (r <= 0)
      return sent;
    sent += r;
  }
  return sent;
}

static int rate(int fd, double secs, int window)
{
  static char bufs[BATCH][2048];
  struct mmsghdr m[BATCH];
  struct iovec iov[BATCH];
  long n = 0;
  double t0 = now(), end = t0 + secs;
  send_n(fd, window);
  while (now() < end) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, 50) <= 0) {
      send_n(fd, window);
      continue;
    }
    for (int i = 0; i < BATCH; i++) {
      iov[i] = (struct iovec){.iov_base = bufs[i], .iov_len = sizeof(bufs[i])};
      m[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
    }
    int got = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
    if (got <= 0)
      continue;
    n += got;
    send_n(fd, got);
  }
  printf("%.0f\n", (double)n / (now() - t0));
  return 0;
}

static int http(int fd)
{
  static const char page[] = "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
  if (listen(fd, 512) < 0) {
    perror("listen");
    return 1;
  }
  for (;;) {
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      perror("accept");
      return 1;
    }
    char req[2048];
    (void)!read(c, req, sizeof(req));
    (void)!write(c, page, sizeof(page) - 1);
    close(c);
  }
}

static int get(const struct sockaddr_storage *ss, socklen_t len, double secs)
{
  static const char req[] = "GET / HTTP/1.0\r\n\r\n";
  long n = 0;
  double t0 = now(), end = t0 + secs;
  while (now() < end) {
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)ss, len) < 0) {
      perror("connect");
      return 1;
    }
    char buf[4096];
    if (write(fd, req, sizeof(req) - 1) == (ssize_t)(sizeof(req) - 1))
      while (read(fd, buf, sizeof(buf)) > 0)
        ;
    close(fd);
    n++;
  }
  printf("%.0f\n", (double)n / (now() - t0));
  return 0;
}

int main(int argc, char **argv)
{
  struct sockaddr_storage ss;
  socklen_t len;
  if (argc < 4 || resolve(argv[2], argv[3], &ss, &len) < 0) {
    fprintf(stderr, "usage: rrt-netbench echo|http ADDR PORT | get ADDR PORT SECS | rate ADDR "
                    "PORT SECS WINDOW\n");
    return 2;
  }
  if (strcmp(argv[1], "get") == 0 && argc == 5)
    return get(&ss, len, atof(argv[4]));
  bool tcp = strcmp(argv[1], "http") == 0;
  int fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    perror("socket");
    return 1;
  }
  int big = 4 << 20, one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
  if (tcp) {
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
      perror("bind");
      return 1;
    }
    return http(fd);
  }
  if (strcmp(argv[1], "echo") == 0) {
    if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
      perror("bind");
      return 1;
    }
    return echo(fd);
  }
  if (strcmp(argv[1], "rate") == 0 && argc == 6) {
    if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
      perror("connect");
      return 1;
    }
    return rate(fd, atof(argv[4]), atoi(argv[5]));
  }
  fprintf(stderr, "rrt-netbench: unknown verb %s\n", argv[1]);
  return 2;
}

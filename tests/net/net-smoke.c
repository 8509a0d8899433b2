/* net-smoke.c: end-to-end checks of rrt_net_start as an unprivileged user (TAP output). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rootlessrt/net.h"
#include "../unit/tap.h"

#define CTR_TCP 8080
#define CTR_UDP 5353

static unsigned port_base = 18080;

/* ---- a target process in its own user + network namespace ---- */

static void write_str(const char *path, const char *s)
{
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, s, strlen(s)) < 0) {
    perror(path);
    _exit(1);
  }
  close(fd);
}

/* Like the runtime's order: user namespace first, then the netns it owns. */
static pid_t target_start(void)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    abort();
  uid_t uid = getuid();
  gid_t gid = getgid();
  pid_t pid = fork();
  if (pid == 0) {
    char m[64];
    if (unshare(CLONE_NEWUSER) < 0) {
      perror("unshare user");
      _exit(1);
    }
    write_str("/proc/self/setgroups", "deny");
    snprintf(m, sizeof(m), "0 %u 1", (unsigned)uid);
    write_str("/proc/self/uid_map", m);
    snprintf(m, sizeof(m), "0 %u 1", (unsigned)gid);
    write_str("/proc/self/gid_map", m);
    if (unshare(CLONE_NEWNET) < 0) {
      perror("unshare net");
      _exit(1);
    }
    if (write(p[1], "x", 1) < 0)
      _exit(1);
    for (;;)
      pause();
  }
  close(p[1]);
  char c;
  if (read(p[0], &c, 1) != 1) {
    fprintf(stderr, "target failed to start\n");
    exit(1);
  }
  close(p[0]);
  return pid;
}

static void enter_ns(pid_t target)
{
  char path[64];
  const char *ns[] = {"user", "net"};
  int types[] = {CLONE_NEWUSER, CLONE_NEWNET};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)target, ns[i]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, types[i]) < 0) {
      perror(path);
      _exit(1);
    }
    close(fd);
  }
}

/* ---- deterministic streams ---- */

static void fill(uint64_t *state, unsigned char *buf, size_t n)
{
  for (size_t i = 0; i < n; i += 8) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    size_t k = n - i < 8 ? n - i : 8;
    memcpy(buf + i, &x, k);
  }
}

static int write_full(int fd, const void *buf, size_t n)
{
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static ssize_t read_full(int fd, void *buf, size_t n)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* Sends n bytes of stream `seed`. */
static int send_stream(int fd, uint64_t seed, uint64_t n)
{
  static unsigned char buf[1 << 16];
  uint64_t st = seed;
  while (n > 0) {
    size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);
    fill(&st, buf, sizeof(buf));
    if (write_full(fd, buf, k) < 0)
      return -1;
    n -= k;
  }
  return 0;
}

/* Reads until EOF; true when exactly n bytes of stream `seed` came. */
static bool recv_stream(int fd, uint64_t seed, uint64_t n)
{
  static unsigned char want[1 << 16], got[1 << 16];
  uint64_t st = seed, total = 0;
  for (;;) {
    ssize_t r = read_full(fd, got, sizeof(got));
    if (r < 0)
      return false;
    fill(&st, want, sizeof(want));
    if (memcmp(want, got, (size_t)r) != 0)
      return false;
    total += (uint64_t)r;
    if ((size_t)r < sizeof(got))
      break;
  }
  return total == n;
}

/* ---- the server inside the namespace ---- */

struct xhdr {
  char cmd;
  uint64_t up, down, seed;
} __attribute__((packed));

static void serve_tcp(int ls)
{
  for (;;) {
    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
      continue;
    struct xhdr h;
    if (read_full(c, &h, 1) != 1) {
      close(c);
      continue;
    }
    if (h.cmd == 'E') {
      char buf[64];
      ssize_t n = read(c, buf, sizeof(buf));
      if (n > 0)
        (void)write_full(c, buf, (size_t)n);
    } else if (h.cmd == 'X' && read_full(c, (char *)&h + 1, sizeof(h) - 1) == sizeof(h) - 1) {
      /* Reads to EOF first: the reply only flows after the client's half-close. */
      bool good = recv_stream(c, h.seed, h.up);
      (void)write_full(c, good ? "Y" : "N", 1);
      (void)send_stream(c, h.seed + 1, h.down);
    } else if (h.cmd == 'P') {
      /* Peer address as the server sees it. */
      struct sockaddr_in sa;
      socklen_t len = sizeof(sa);
      char ip[32] = "?";
      if (getpeername(c, (struct sockaddr *)&sa, &len) == 0)
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
      (void)write_full(c, ip, strlen(ip));
    }
    close(c);
  }
}

static pid_t server_start(pid_t target)
{
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    abort();
  pid_t pid = fork();
  if (pid == 0) {
    enter_ns(target);
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(CTR_TCP)};
    if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1024) < 0) {
      perror("server bind");
      _exit(1);
    }
    int us = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sa.sin_port = htons(CTR_UDP);
    if (bind(us, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
      perror("udp bind");
      _exit(1);
    }
    if (write(p[1], "x", 1) < 0)
      _exit(1);
    if (fork() == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      char buf[2048];
      for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(us, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        if (n > 0)
          sendto(us, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
      }
    }
    serve_tcp(ls);
    _exit(0);
  }
  close(p[1]);
  char c;
  if (read(p[0], &c, 1) != 1)
    exit(1);
  close(p[0]);
  return pid;
}

/* ---- host-side clients ---- */

static int connect_to(const char *ip, unsigned port)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, ip, &sa.sin_addr);
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    close(fd);
    return -1;
  }
  struct timeval tv = {.tv_sec = 20};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Up and down through the published port; true when both arrive intact. */
static bool exchange(unsigned port, uint64_t up, uint64_t down, uint64_t seed, double *secs)
{
  int fd = connect_to("127.0.0.1", port);
  if (fd < 0)
    return false;
  double t0 = now();
  struct xhdr h = {.cmd = 'X', .up = up, .down = down, .seed = seed};
  bool good = write_full(fd, &h, sizeof(h)) == 0 && send_stream(fd, seed, up) == 0 &&
              shutdown(fd, SHUT_WR) == 0;
  char verdict = 0;
  good = good && read_full(fd, &verdict, 1) == 1 && verdict == 'Y';
  good = good && recv_stream(fd, seed + 1, down);
  if (secs)
    *secs = now() - t0;
  close(fd);
  return good;
}

static bool echo_once(int fd)
{
  char msg[] = "Ehello", got[16];
  if (write_full(fd, msg, 6) < 0)
    return false;
  ssize_t n = read_full(fd, got, sizeof(got));
  return n == 5 && memcmp(got, "hello", 5) == 0;
}

static int count_fds(pid_t pid)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
  DIR *d = opendir(path);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

static bool alive(pid_t pid)
{
  char path[64], buf[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f)
    return false;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *rp = strrchr(buf, ')');
  return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

static pid_t child_of(pid_t parent)
{
  DIR *d = opendir("/proc");
  struct dirent *e;
  pid_t found = -1;
  while (d && (e = readdir(d))) {
    char path[300], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "re");
    if (!f)
      continue;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    int ppid = 0;
    char st;
    if (rp && sscanf(rp + 2, "%c %d", &st, &ppid) == 2 && ppid == parent)
      found = atoi(e->d_name);
  }
  if (d)
    closedir(d);
  return found;
}

static bool wait_gone(pid_t pid, double timeout)
{
  double end = now() + timeout;
  while (now() < end) {
    if (!alive(pid))
      return true;
    usleep(20000);
  }
  return false;
}

static bool port_free(unsigned port, int type)
{
  int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  bool r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
  close(fd);
  return r;
}

static bool shell_has(pid_t target, const char *cmd, const char *needle)
{
  char line[512];
  snprintf(line, sizeof(line), "nsenter --preserve-credentials -U -n -t %d %s 2>&1", (int)target,
           cmd);
  FILE *f = popen(line, "r");
  if (!f)
    return false;
  static char out[8192];
  size_t n = fread(out, 1, sizeof(out) - 1, f);
  out[n] = '\0';
  pclose(f);
  bool r = strstr(out, needle) != NULL;
  if (!r)
    printf("# `%s`:\n# %s\n", cmd, out);
  return r;
}

/* From inside the netns: connect to ip:port, send "ping", expect "pong". */
static bool outbound(pid_t target, const char *ip, unsigned port)
{
  pid_t pid = fork();
  if (pid == 0) {
    enter_ns(target);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = {.tv_sec = 3};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    char buf[8];
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || write_full(fd, "ping", 4) < 0 ||
        read_full(fd, buf, 4) != 4 || memcmp(buf, "pong", 4) != 0)
      _exit(1);
    _exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static pid_t pong_server(unsigned port)
{
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 16) < 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) {
      int c = accept(ls, NULL, NULL);
      char buf[4];
      if (c >= 0 && read_full(c, buf, 4) == 4)
        (void)write_full(c, "pong", 4);
      if (c >= 0)
        close(c);
    }
  }
  close(ls);
  return pid;
}

static void kill_wait(pid_t pid)
{
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static struct rrt_net_config config(unsigned tcp_port, unsigned udp_port, bool host_loopback)
{
  static struct rrt_port ports[2];
  struct rrt_net_config c = {.mode = RRT_NET_SLIRP, .mtu = 65520, .host_loopback = host_loopback};
  snprintf(c.cidr, sizeof(c.cidr), "10.0.2.0/24");
  ports[0] = (struct rrt_port){
      .proto = IPPROTO_TCP, .host_port = (uint16_t)tcp_port, .container_port = CTR_TCP};
  strcpy(ports[0].host_ip, "127.0.0.1");
  ports[1] = (struct rrt_port){
      .proto = IPPROTO_UDP, .host_port = (uint16_t)udp_port, .container_port = CTR_UDP};
  strcpy(ports[1].host_ip, "127.0.0.1");
  c.ports = ports;
  c.n_ports = udp_port ? 2 : 1;
  return c;
}

static bool udp_echo(unsigned port)
{
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct timeval tv = {.tv_sec = 1};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  bool good = false;
  for (int i = 0; i < 3 && !good; i++) {
    sendto(fd, "udp-hello", 9, 0, (struct sockaddr *)&sa, sizeof(sa));
    char buf[32];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    good = n == 9 && memcmp(buf, "udp-hello", 9) == 0;
  }
  close(fd);
  return good;
}

static int tun_check(void)
{
  /* Run by the script while /dev/net/tun is 0600: the error must say how to fix it. */
  struct rrt_error err = RRT_ERROR_INIT;
  pid_t t = target_start();
  struct rrt_net_config c = config(port_base + 9, 0, false);
  pid_t helper;
  int r = rrt_net_start(t, &c, &helper, &err);
  ok(r < 0, "rrt_net_start fails when /dev/net/tun is not accessible");
  printf("# %s\n", rrt_error_msg(&err));
  ok(err.msg && strstr(err.msg, "/dev/net/tun: Permission denied") &&
         strstr(err.msg, "chmod 0666 /dev/net/tun"),
     "  the message names the device and the fix");
  ok(port_free(port_base + 9, SOCK_STREAM), "  the port is not left listening");
  kill_wait(t);
  return tap_done();
}

/* For benchmarks: a target with its network; prints "TARGET HELPER", waits for stdin EOF. */
static int hold(const char *port, const char *via, const char *mtu)
{
  struct rrt_error err = RRT_ERROR_INIT;
  pid_t t = target_start();
  struct rrt_net_config c = config((unsigned)atoi(port), 0, true);
  c.ports[0].container_port = (uint16_t)atoi(port);
  c.ports_via_slirp = strcmp(via, "slirp") == 0;
  c.mtu = (unsigned)atoi(mtu);
  c.ipv6 = getenv("RRT_IPV6") != NULL;
  pid_t helper;
  if (rrt_net_start(t, &c, &helper, &err) < 0) {
    fprintf(stderr, "net-smoke: %s\n", rrt_error_msg(&err));
    kill_wait(t);
    return 1;
  }
  printf("%d %d\n", (int)t, (int)helper);
  fflush(stdout);
  char buf[64];
  while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
    ;
  kill_wait(t);
  return 0;
}

int main(int argc, char **argv)
{
  if (getenv("PORT_BASE"))
    port_base = (unsigned)atoi(getenv("PORT_BASE"));
  if (argc > 1 && strcmp(argv[1], "--tun-check") == 0)
    return tun_check();
  if (argc > 2 && strcmp(argv[1], "--hold") == 0)
    return hold(argv[2], argc > 3 ? argv[3] : "splice", argc > 4 ? argv[4] : "65520");
  unsigned p_tcp = port_base, p_udp = port_base + 1, p_host = port_base + 2, p_tcp2 = port_base + 3,
           p_slirp = port_base + 4;
  struct rrt_error err = RRT_ERROR_INIT;

  pid_t t1 = target_start();
  pid_t srv = server_start(t1);
  struct rrt_net_config c1 = config(p_tcp, p_udp, true);
  pid_t h1 = -1;
  double t0 = now();
  int r = rrt_net_start(t1, &c1, &h1, &err);
  ok(r == 0, "rrt_net_start with a published TCP and UDP port (%.1f ms)", (now() - t0) * 1000);
  if (r < 0) {
    printf("# %s\n", rrt_error_msg(&err));
    kill_wait(srv);
    kill_wait(t1);
    return tap_done();
  }
  ok(getppid() != h1 && child_of(getpid()) != h1, "the helper is not our child");
  pid_t agent = child_of(h1);
  ok(agent > 0, "the ns agent runs as the helper's child");

  ok(shell_has(t1, "ip -o -4 addr show tap0", "inet 10.0.2.100/24"), "tap0 has 10.0.2.100/24");
  ok(shell_has(t1, "ip route", "default via 10.0.2.2 dev tap0"), "default route via 10.0.2.2");
  ok(shell_has(t1, "ip link show tap0", "mtu 65520"), "tap0 mtu 65520");
  ok(shell_has(t1, "ip link show lo", "UP"), "lo is up");

  double secs;
  ok(exchange(p_tcp, 4 << 20, 3 << 20, 42, &secs),
     "4 MiB up, half-close, 3 MiB down, byte-exact (%.3f s)", secs);
  ok(exchange(p_tcp, 0, 1 << 20, 7, NULL), "nothing up, half-close, 1 MiB down");
  ok(exchange(p_tcp, 1 << 20, 0, 9, NULL), "1 MiB up, nothing down");

  int fd = connect_to("127.0.0.1", p_tcp);
  char peer[32] = {0};
  ok(fd >= 0 && write_full(fd, "P", 1) == 0 && read_full(fd, peer, sizeof(peer) - 1) > 0 &&
         strcmp(peer, "127.0.0.1") == 0,
     "the container sees the connection from 127.0.0.1 (got %s)", peer);
  if (fd >= 0)
    close(fd);

  usleep(200000); /* let the helper finish closing the connections above */
  int base_fds = count_fds(h1);
  int failures = 0;
  t0 = now();
  for (int i = 0; i < 1000; i++) {
    int s = connect_to("127.0.0.1", p_tcp);
    if (s < 0 || !echo_once(s))
      failures++;
    if (s >= 0)
      close(s);
  }
  double seq_secs = now() - t0;
  ok(failures == 0, "1000 sequential short connections (%d failed, %.0f conn/s)", failures,
     1000 / seq_secs);

  int conc[100];
  failures = 0;
  for (int i = 0; i < 100; i++) {
    conc[i] = connect_to("127.0.0.1", p_tcp);
    if (conc[i] < 0 || write_full(conc[i], "Ehello", 6) < 0)
      failures++;
  }
  for (int i = 0; i < 100; i++) {
    char got[16];
    if (conc[i] >= 0 && (read_full(conc[i], got, sizeof(got)) != 5 || memcmp(got, "hello", 5)))
      failures++;
    if (conc[i] >= 0)
      close(conc[i]);
  }
  ok(failures == 0, "100 concurrent connections (%d failed)", failures);
  usleep(200000);
  int after_fds = count_fds(h1);
  ok(after_fds == base_fds, "the helper's fd count is back to its baseline (%d -> %d)", base_fds,
     after_fds);

  ok(udp_echo(p_udp), "published UDP port (slirp path) echoes");

  pid_t pong = pong_server(p_host);
  ok(outbound(t1, "10.0.2.2", p_host),
     "host loopback on: the netns reaches host 127.0.0.1 via 10.0.2.2");

  /* Second container: the same port is refused clearly, nothing left behind. */
  pid_t t2 = target_start();
  struct rrt_net_config c2 = config(p_tcp, 0, false);
  pid_t h2 = -1;
  r = rrt_net_start(t2, &c2, &h2, &err);
  ok(r < 0, "a second container asking for a port in use fails");
  printf("# %s\n", rrt_error_msg(&err));
  char want[128];
  snprintf(want, sizeof(want), "publish 127.0.0.1:%u: Address already in use", p_tcp);
  ok(err.msg && strstr(err.msg, want), "  the message names the address and the cause");
  rrt_error_clear(&err);
  c2 = config(p_tcp2, 0, false);
  r = rrt_net_start(t2, &c2, &h2, &err);
  ok(r == 0, "two containers publish different ports at once");
  if (r < 0) {
    printf("# %s\n", rrt_error_msg(&err));
    rrt_error_clear(&err);
  } else {
    pid_t srv2 = server_start(t2);
    ok(exchange(p_tcp2, 1 << 20, 1 << 20, 5, NULL), "  the second container's port works");
    ok(!outbound(t2, "10.0.2.2", p_host), "host loopback off (default): 10.0.2.2 refuses");
    kill_wait(srv2);
    kill_wait(t2);
    ok(wait_gone(h2, 3), "  its helper exits with it");
  }

  /* The slirp path for TCP, forced. */
  pid_t t3 = target_start();
  pid_t srv3 = server_start(t3);
  struct rrt_net_config c3 = config(p_slirp, 0, false);
  c3.ports_via_slirp = true;
  pid_t h3 = -1;
  r = rrt_net_start(t3, &c3, &h3, &err);
  ok(r == 0, "ports via slirp");
  if (r < 0) {
    printf("# %s\n", rrt_error_msg(&err));
    rrt_error_clear(&err);
  } else {
    ok(exchange(p_slirp, 4 << 20, 4 << 20, 11, &secs),
       "  4 MiB both ways through the slirp path, byte-exact (%.3f s)", secs);
    fd = connect_to("127.0.0.1", p_slirp);
    memset(peer, 0, sizeof(peer));
    ok(fd >= 0 && write_full(fd, "P", 1) == 0 && read_full(fd, peer, sizeof(peer) - 1) > 0,
       "  the container sees the connection from %s on the slirp path", peer);
    if (fd >= 0)
      close(fd);
  }

  /* Dying mid-transfer: the host side must see the end promptly. */
  fd = connect_to("127.0.0.1", p_tcp);
  struct xhdr hx = {.cmd = 'X', .up = 0, .down = 1ULL << 40, .seed = 1};
  bool started = fd >= 0 && write_full(fd, &hx, sizeof(hx)) == 0 && shutdown(fd, SHUT_WR) == 0;
  char sink[65536];
  started = started && read_full(fd, sink, sizeof(sink)) == sizeof(sink);
  ok(started, "a long transfer is running");
  kill(srv, SIGKILL);
  kill(t1, SIGKILL);
  waitpid(t1, NULL, 0);
  t0 = now();
  ssize_t n;
  do
    n = read(fd, sink, sizeof(sink));
  while (n > 0 && now() - t0 < 10);
  ok(n <= 0 && now() - t0 < 5, "the client sees EOF/reset %.2f s after the container died",
     now() - t0);
  if (fd >= 0)
    close(fd);
  waitpid(srv, NULL, 0);
  ok(wait_gone(h1, 3), "the helper exits after kill -9 of the container");
  ok(agent < 0 || wait_gone(agent, 3), "the ns agent is gone too");
  ok(port_free(p_tcp, SOCK_STREAM), "the published port is free again");
  ok(port_free(p_udp, SOCK_DGRAM), "the published UDP port is free again");

  if (h3 > 0) {
    kill_wait(srv3);
    kill_wait(t3);
    ok(wait_gone(h3, 3), "the slirp-path helper exits with its container");
  } else {
    kill_wait(srv3);
    kill_wait(t3);
  }
  kill_wait(pong);
  rrt_error_clear(&err);
  return tap_done();
}

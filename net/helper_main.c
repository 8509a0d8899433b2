/* helper_main.c: rootlessrt-net, the network helper's program: libslirp and GLib live here only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/log.h"
#include "rootlessrt/util.h"
#include "net_internal.h"

/*
 * Started by rootlessrt (net/start.c, the only caller) as
 *   rootlessrt-net PROTOCOL READY_FD USERNS_FD NETNS_FD PIDFD LOG_FD LOG_FLAGS MTU IPV6
 *                  HOST_LOOPBACK PORTS_VIA_SLIRP OUTBOUND_VIA_SLIRP CIDR UDP_IDLE_S
 * [PROTO:HOSTPORT:CTRPORT:HOSTIP
 * ...] with the descriptors inherited; USERNS_FD and LOG_FD may be -1, LOG_FLAGS is "-", "j", "d"
 * or "jd" (json, debug). Failures go to READY_FD as "E<errno> <message>", as the helper's own do.
 */
static int fail(int ready_fd, int e, const char *msg)
{
  char buf[512];
  int n = snprintf(buf, sizeof(buf), "E%d %s", e, msg);
  if (ready_fd >= 0 && n > 0)
    (void)!write(ready_fd, buf, (size_t)n);
  else
    fprintf(stderr, "rootlessrt-net: %s\n", msg);
  return 1;
}

static int num(const char *s, long long lo, long long hi, long long *out)
{
  long long v;
  if (rrt_parse_i64(s, &v) < 0 || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

static int parse_port(const char *s, struct rrt_port *p)
{
  char proto[8];
  unsigned host, ctr;
  int off = 0;
  if (sscanf(s, "%7[a-z]:%u:%u:%n", proto, &host, &ctr, &off) < 3 || off == 0 || host > 65535 ||
      ctr > 65535 || strlen(s + off) >= sizeof(p->host_ip))
    return -1;
  p->proto = strcmp(proto, "udp") == 0 ? IPPROTO_UDP : IPPROTO_TCP;
  p->host_port = (uint16_t)host;
  p->container_port = (uint16_t)ctr;
  strcpy(p->host_ip, s + off);
  return 0;
}

int main(int argc, char **argv)
{
  long long fds[5], mtu, ipv6, loopback, via, out_via, udp_idle;
  int ready = -1;
  if (argc >= 3 && num(argv[2], 0, 1 << 20, &fds[0]) == 0)
    ready = (int)fds[0];
  if (argc < 15)
    return fail(ready, EINVAL,
                "network helper: started without its arguments (it is run by rootlessrt)");
  if (strcmp(argv[1], NET_HELPER_PROTOCOL) != 0) {
    char msg[512];
    snprintf(msg, sizeof(msg),
             "network helper %s speaks %s, rootlessrt %s: install the two from one release",
             argv[0], NET_HELPER_PROTOCOL, argv[1]);
    return fail(ready, EINVAL, msg);
  }
  for (int i = 0; i < 5; i++)
    if (num(argv[2 + i], -1, 1 << 20, &fds[i]) < 0)
      return fail(ready, EINVAL, "network helper: a bad descriptor argument");
  if (num(argv[8], 68, 65521, &mtu) < 0 || num(argv[9], 0, 1, &ipv6) < 0 ||
      num(argv[10], 0, 1, &loopback) < 0 || num(argv[11], 0, 1, &via) < 0 ||
      num(argv[12], 0, 1, &out_via) < 0 ||
      strlen(argv[13]) >= sizeof(((struct rrt_net_config *)NULL)->cidr) ||
      num(argv[14], 1, 86400, &udp_idle) < 0)
    return fail(ready, EINVAL, "network helper: a bad setting argument");
  struct rrt_net_config cfg = {.mode = RRT_NET_SLIRP,
                               .mtu = (unsigned)mtu,
                               .ipv6 = ipv6 != 0,
                               .host_loopback = loopback != 0,
                               .ports_via_slirp = via != 0,
                               .outbound_via_slirp = out_via != 0,
                               .udp_idle_s = (unsigned)udp_idle};
  strcpy(cfg.cidr, argv[13]);
  cfg.n_ports = (size_t)(argc - 15);
  cfg.ports = xcalloc(cfg.n_ports ? cfg.n_ports : 1, sizeof(*cfg.ports));
  for (size_t i = 0; i < cfg.n_ports; i++)
    if (parse_port(argv[15 + i], &cfg.ports[i]) < 0)
      return fail(ready, EINVAL, "network helper: a bad port argument");
  if (fds[4] >= 0)
    rrt_log_init_fd((int)fds[4], strchr(argv[7], 'j') != NULL, strchr(argv[7], 'd') != NULL);
  /* Nothing of ours may reach what the helper starts (its agent joins the container). */
  for (int i = 0; i < 5; i++)
    if (fds[i] >= 0)
      (void)fcntl((int)fds[i], F_SETFD, FD_CLOEXEC);
  net_helper_main((int)fds[0], (int)fds[1], (int)fds[2], (int)fds[3], &cfg);
}

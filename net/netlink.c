/* netlink.c: the few rtnetlink requests that configure lo and tap0, and lo up by ioctl. */
#include <errno.h>
#include <linux/fib_rules.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rootlessrt/net.h"
#include "rootlessrt/util.h"
#include "net_internal.h"

struct nl_req {
  struct nlmsghdr nh;
  char buf[256];
};

int net_nl_open(struct rrt_error *err)
{
  cleanup_close int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return rrt_error_errno(err, "socket(AF_NETLINK)");
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return rrt_error_errno(err, "bind(AF_NETLINK)");
  return steal_fd(&fd);
}

static void *nl_tail(struct nl_req *r)
{
  return (char *)&r->nh + NLMSG_ALIGN(r->nh.nlmsg_len);
}

static void nl_attr(struct nl_req *r, unsigned short type, const void *data, size_t len)
{
  struct rtattr *rta = nl_tail(r);
  rta->rta_type = type;
  rta->rta_len = (unsigned short)RTA_LENGTH(len);
  if (len > 0)
    memcpy(RTA_DATA(rta), data, len);
  r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/* Sends one request with NLM_F_ACK and waits for the kernel's answer to it. */
static int nl_talk(int nl, struct nl_req *r, const char *what, struct rrt_error *err)
{
  static uint32_t seq;
  r->nh.nlmsg_seq = ++seq;
  r->nh.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  if (sendto(nl, r, r->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return rrt_error_errno(err, "%s: netlink send", what);
  for (;;) {
    char buf[4096] __attribute__((aligned(4)));
    ssize_t n = recv(nl, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return rrt_error_errno(err, "%s: netlink recv", what);
    }
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n);
         h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != r->nh.nlmsg_seq || h->nlmsg_type != NLMSG_ERROR)
        continue;
      const struct nlmsgerr *e = NLMSG_DATA(h);
      if (e->error == 0)
        return 0;
      return rrt_error_set(err, -e->error, "%s", what);
    }
  }
}

int net_nl_link_up(int nl, int ifindex, unsigned mtu, struct rrt_error *err)
{
  struct nl_req r = {0};
  r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
  r.nh.nlmsg_type = RTM_NEWLINK;
  struct ifinfomsg *ifi = NLMSG_DATA(&r.nh);
  ifi->ifi_family = AF_UNSPEC;
  ifi->ifi_index = ifindex;
  ifi->ifi_flags = IFF_UP;
  ifi->ifi_change = IFF_UP;
  if (mtu > 0)
    nl_attr(&r, IFLA_MTU, &mtu, sizeof(mtu));
  return nl_talk(nl, &r, mtu > 0 ? "set link up and mtu" : "set link up", err);
}

int net_nl_addr_add(int nl, int ifindex, struct in_addr addr, unsigned prefix,
                    struct rrt_error *err)
{
  struct nl_req r = {0};
  r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
  r.nh.nlmsg_type = RTM_NEWADDR;
  r.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  struct ifaddrmsg *ifa = NLMSG_DATA(&r.nh);
  ifa->ifa_family = AF_INET;
  ifa->ifa_prefixlen = (unsigned char)prefix;
  ifa->ifa_scope = RT_SCOPE_UNIVERSE;
  ifa->ifa_index = (unsigned)ifindex;
  nl_attr(&r, IFA_LOCAL, &addr, sizeof(addr));
  nl_attr(&r, IFA_ADDRESS, &addr, sizeof(addr));
  return nl_talk(nl, &r, "add address", err);
}

int net_nl_route_default(int nl, int ifindex, struct in_addr gw, struct rrt_error *err)
{
  struct nl_req r = {0};
  r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  r.nh.nlmsg_type = RTM_NEWROUTE;
  r.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  struct rtmsg *rt = NLMSG_DATA(&r.nh);
  rt->rtm_family = AF_INET;
  rt->rtm_dst_len = 0;
  rt->rtm_table = RT_TABLE_MAIN;
  rt->rtm_protocol = RTPROT_BOOT;
  rt->rtm_scope = RT_SCOPE_UNIVERSE;
  rt->rtm_type = RTN_UNICAST;
  uint32_t oif = (uint32_t)ifindex;
  nl_attr(&r, RTA_GATEWAY, &gw, sizeof(gw));
  nl_attr(&r, RTA_OIF, &oif, sizeof(oif));
  return nl_talk(nl, &r, "add default route", err);
}

static size_t nl_nest_begin(struct nl_req *r, unsigned short type)
{
  size_t off = NLMSG_ALIGN(r->nh.nlmsg_len);
  nl_attr(r, type, NULL, 0);
  return off;
}

static void nl_nest_end(struct nl_req *r, size_t off)
{
  struct rtattr *rta = (struct rtattr *)((char *)&r->nh + off);
  rta->rta_len = (unsigned short)(r->nh.nlmsg_len - off);
}

int net_nl_rule(int nl, int family, uint8_t proto, uint32_t mark, uint32_t table, uint32_t pref,
                struct rrt_error *err)
{
  struct nl_req r = {0};
  r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct fib_rule_hdr));
  r.nh.nlmsg_type = RTM_NEWRULE;
  r.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  struct fib_rule_hdr *fr = NLMSG_DATA(&r.nh);
  fr->family = (uint8_t)family;
  fr->action = FR_ACT_TO_TBL;
  nl_attr(&r, FRA_TABLE, &table, sizeof(table));
  nl_attr(&r, FRA_PRIORITY, &pref, sizeof(pref));
  if (proto)
    nl_attr(&r, FRA_IP_PROTO, &proto, sizeof(proto));
  if (mark) {
    uint32_t mask = ~0u;
    nl_attr(&r, FRA_FWMARK, &mark, sizeof(mark));
    nl_attr(&r, FRA_FWMASK, &mask, sizeof(mask));
  }
  return nl_talk(nl, &r, "add rule", err);
}

int net_nl_route_table(int nl, int family, int ifindex, const void *dst, unsigned dst_len,
                       const void *gw, unsigned mtu, uint32_t table, struct rrt_error *err)
{
  size_t alen = family == AF_INET6 ? 16 : 4;
  struct nl_req r = {0};
  r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  r.nh.nlmsg_type = RTM_NEWROUTE;
  r.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  struct rtmsg *rt = NLMSG_DATA(&r.nh);
  rt->rtm_family = (unsigned char)family;
  rt->rtm_dst_len = (unsigned char)dst_len;
  rt->rtm_table = RT_TABLE_UNSPEC;
  rt->rtm_protocol = RTPROT_BOOT;
  rt->rtm_scope = gw ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
  rt->rtm_type = RTN_UNICAST;
  /* The gateway is on tap0 whatever addresses it has yet (IPv6's come later, by SLAAC). */
  rt->rtm_flags = gw ? RTNH_F_ONLINK : 0;
  uint32_t oif = (uint32_t)ifindex;
  nl_attr(&r, RTA_TABLE, &table, sizeof(table));
  if (dst_len > 0)
    nl_attr(&r, RTA_DST, dst, alen);
  if (gw)
    nl_attr(&r, RTA_GATEWAY, gw, alen);
  nl_attr(&r, RTA_OIF, &oif, sizeof(oif));
  size_t m = nl_nest_begin(&r, RTA_METRICS);
  nl_attr(&r, RTAX_MTU, &mtu, sizeof(mtu));
  nl_nest_end(&r, m);
  return nl_talk(nl, &r, "add route", err);
}

int net_nl_route_local_all(int nl, int family, uint32_t table, struct rrt_error *err)
{
  struct nl_req r = {0};
  r.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  r.nh.nlmsg_type = RTM_NEWROUTE;
  r.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
  struct rtmsg *rt = NLMSG_DATA(&r.nh);
  rt->rtm_family = (unsigned char)family;
  rt->rtm_table = RT_TABLE_UNSPEC;
  rt->rtm_protocol = RTPROT_BOOT;
  rt->rtm_scope = RT_SCOPE_HOST;
  rt->rtm_type = RTN_LOCAL;
  uint32_t oif = 1; /* lo */
  nl_attr(&r, RTA_TABLE, &table, sizeof(table));
  nl_attr(&r, RTA_OIF, &oif, sizeof(oif));
  return nl_talk(nl, &r, "add local route", err);
}

int rrt_net_loopback_up(struct rrt_error *err)
{
  cleanup_close int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return rrt_error_errno(err, "lo up: socket");
  struct ifreq ifr = {0};
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
    return rrt_error_errno(err, "lo up: SIOCGIFFLAGS");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
    return rrt_error_errno(err, "lo up: SIOCSIFFLAGS");
  return 0;
}

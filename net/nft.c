/* nft.c: the nf_tables rules that hand the container's own TCP connections to the helper. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/util.h"
#include "net_internal.h"

/*
 * The nft netlink protocol spoken directly (no nft binary, no libnftnl): one batch with a table
 * of family inet in the container's network namespace, made by the agent (root of the
 * container's user namespace, which owns that netns). In nft's words, for the helper's listener
 * at 127.0.0.1:P (and [::1]:P6 with --ipv6) and its queue Q:
 *
 *   table inet rootlessrt {
 *     chain gate { type filter hook output priority -150;   # the first SYN of a connection
 *       SELECT tcp flags & (fin|syn|rst|ack) != syn accept ... queue num Q bypass }
 *     chain verdict { type filter hook output priority -140;
 *       meta mark REFUSED reject with tcp reset
 *       meta mark NETUNREACH reject with icmpx no-route
 *       meta mark HOSTUNREACH reject with icmpx host-unreachable }
 *     chain out { type nat hook output priority -100;
 *       SELECT ... meta nfproto ipv4 redirect to :P; meta nfproto ipv6 redirect to :P6 }
 *   }
 *
 * where SELECT accepts (leaves to libslirp, through tap0) oif lo, what is not TCP, libslirp's own
 * addresses (10.0.2.0/24, fd00::/64, fe80::/10) but the gateway with --host-loopback. The gate
 * holds each SYN until the helper has connected from its namespace: its verdict lets the SYN on
 * to the redirect, or marks it to be refused as the real destination refused it. The gate needs
 * nft_compat's NFQUEUE target; without it the fast path still works, connecting after accept.
 */

#define NFT_TABLE "rootlessrt"
#define NFT_TABLE_UDP "rootlessrt-udp"
#define NFT_BUF 8192

struct nlb {
  char buf[NFT_BUF] __attribute__((aligned(4)));
  size_t len;
  uint32_t seq, first_seq, n_acks;
  bool overflow;
  const char *table, *chain; /* of the chains and rules being added */
};

static void *nlb_put(struct nlb *b, size_t len)
{
  size_t need = NLMSG_ALIGN(len);
  if (b->overflow || b->len + need > sizeof(b->buf)) {
    b->overflow = true;
    return NULL;
  }
  void *p = b->buf + b->len;
  memset(p, 0, need);
  b->len += need;
  return p;
}

static size_t msg_begin(struct nlb *b, uint16_t type, uint16_t flags, uint8_t family,
                        uint16_t res_id)
{
  size_t off = b->len;
  struct nlmsghdr *nh = nlb_put(b, NLMSG_HDRLEN);
  struct nfgenmsg *g = nlb_put(b, sizeof(struct nfgenmsg));
  if (!nh || !g)
    return off;
  nh->nlmsg_type = type;
  nh->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | flags);
  nh->nlmsg_seq = b->seq++;
  g->nfgen_family = family;
  g->version = NFNETLINK_V0;
  g->res_id = htons(res_id);
  if (flags & NLM_F_ACK)
    b->n_acks++;
  return off;
}

static void msg_end(struct nlb *b, size_t off)
{
  if (!b->overflow)
    ((struct nlmsghdr *)(b->buf + off))->nlmsg_len = (uint32_t)(b->len - off);
}

static void attr(struct nlb *b, uint16_t type, const void *data, size_t len)
{
  struct nlattr *a = nlb_put(b, NLA_HDRLEN + len);
  if (!a)
    return;
  a->nla_type = type;
  a->nla_len = (uint16_t)(NLA_HDRLEN + len);
  memcpy((char *)a + NLA_HDRLEN, data, len);
}

static void attr_str(struct nlb *b, uint16_t type, const char *s)
{
  attr(b, type, s, strlen(s) + 1);
}

static void attr_be32(struct nlb *b, uint16_t type, uint32_t v)
{
  uint32_t be = htonl(v);
  attr(b, type, &be, sizeof(be));
}

static size_t nest_begin(struct nlb *b, uint16_t type)
{
  size_t off = b->len;
  struct nlattr *a = nlb_put(b, NLA_HDRLEN);
  if (a)
    a->nla_type = (uint16_t)(type | NLA_F_NESTED);
  return off;
}

static void nest_end(struct nlb *b, size_t off)
{
  if (!b->overflow)
    ((struct nlattr *)(b->buf + off))->nla_len = (uint16_t)(b->len - off);
}

/* ---------------------------------------------------------------- expressions */

struct nest2 {
  size_t outer, inner;
};

static struct nest2 expr_begin(struct nlb *b, const char *name)
{
  struct nest2 e;
  e.outer = nest_begin(b, NFTA_LIST_ELEM);
  attr_str(b, NFTA_EXPR_NAME, name);
  e.inner = nest_begin(b, NFTA_EXPR_DATA);
  return e;
}

static void expr_end(struct nlb *b, struct nest2 e)
{
  nest_end(b, e.inner);
  nest_end(b, e.outer);
}

static void expr_meta(struct nlb *b, uint32_t key)
{
  struct nest2 e = expr_begin(b, "meta");
  attr_be32(b, NFTA_META_KEY, key);
  attr_be32(b, NFTA_META_DREG, NFT_REG_1);
  expr_end(b, e);
}

static void expr_payload(struct nlb *b, uint32_t base, uint32_t offset, uint32_t len)
{
  struct nest2 e = expr_begin(b, "payload");
  attr_be32(b, NFTA_PAYLOAD_DREG, NFT_REG_1);
  attr_be32(b, NFTA_PAYLOAD_BASE, base);
  attr_be32(b, NFTA_PAYLOAD_OFFSET, offset);
  attr_be32(b, NFTA_PAYLOAD_LEN, len);
  expr_end(b, e);
}

static void data_value(struct nlb *b, uint16_t type, const void *v, size_t len)
{
  size_t n = nest_begin(b, type);
  attr(b, NFTA_DATA_VALUE, v, len);
  nest_end(b, n);
}

static void expr_cmp(struct nlb *b, enum nft_cmp_ops op, const void *v, size_t len)
{
  struct nest2 e = expr_begin(b, "cmp");
  attr_be32(b, NFTA_CMP_SREG, NFT_REG_1);
  attr_be32(b, NFTA_CMP_OP, op);
  data_value(b, NFTA_CMP_DATA, v, len);
  expr_end(b, e);
}

/* reg1 = reg1 & mask (xor 0). */
static void expr_mask(struct nlb *b, const void *mask, size_t len)
{
  static const uint8_t zero[16];
  struct nest2 e = expr_begin(b, "bitwise");
  attr_be32(b, NFTA_BITWISE_SREG, NFT_REG_1);
  attr_be32(b, NFTA_BITWISE_DREG, NFT_REG_1);
  attr_be32(b, NFTA_BITWISE_LEN, (uint32_t)len);
  data_value(b, NFTA_BITWISE_MASK, mask, len);
  data_value(b, NFTA_BITWISE_XOR, zero, len);
  expr_end(b, e);
}

static void expr_accept(struct nlb *b)
{
  struct nest2 e = expr_begin(b, "immediate");
  attr_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
  size_t d = nest_begin(b, NFTA_IMMEDIATE_DATA);
  size_t v = nest_begin(b, NFTA_DATA_VERDICT);
  attr_be32(b, NFTA_VERDICT_CODE, NF_ACCEPT);
  nest_end(b, v);
  nest_end(b, d);
  expr_end(b, e);
}

static void expr_redirect(struct nlb *b, uint16_t port)
{
  uint16_t be = htons(port);
  struct nest2 e = expr_begin(b, "immediate");
  attr_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_1);
  data_value(b, NFTA_IMMEDIATE_DATA, &be, sizeof(be));
  expr_end(b, e);
  e = expr_begin(b, "redir");
  attr_be32(b, NFTA_REDIR_REG_PROTO_MIN, NFT_REG_1);
  expr_end(b, e);
}

/* ---------------------------------------------------------------- rules */

static struct nest2 rule_begin(struct nlb *b)
{
  struct nest2 r;
  r.outer = msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE,
                      NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, NFPROTO_INET, 0);
  attr_str(b, NFTA_RULE_TABLE, b->table);
  attr_str(b, NFTA_RULE_CHAIN, b->chain);
  r.inner = nest_begin(b, NFTA_RULE_EXPRESSIONS);
  return r;
}

static void rule_end(struct nlb *b, struct nest2 r)
{
  nest_end(b, r.inner);
  msg_end(b, r.outer);
}

static void match_nfproto(struct nlb *b, uint8_t proto)
{
  expr_meta(b, NFT_META_NFPROTO);
  expr_cmp(b, NFT_CMP_EQ, &proto, 1);
}

/* What a chain does with a connection it takes: the nat chain redirects it to the listener of its
 * family, the gate chain queues its SYN to the helper. */
struct chain_action {
  bool queue;
  uint16_t port4, port6;
};

static void expr_queue(struct nlb *b)
{
  /* The NFQUEUE target through nft_compat (CONFIG_NFT_QUEUE is often left out, xt_NFQUEUE is
   * not): fail-open and bypass, so that a helper gone or behind lets SYNs through to the nat
   * redirect, which then resets them, or to the connect-after-accept path. */
  struct xt_nfq {
    uint16_t queuenum, queues_total, flags, pad;
  } info = {.queuenum = NET_NFQ_NUM, .queues_total = 1, .flags = 0x01 /* NFQ_FLAG_BYPASS */};
  struct nest2 e = expr_begin(b, "target");
  attr_str(b, NFTA_TARGET_NAME, "NFQUEUE");
  attr_be32(b, NFTA_TARGET_REV, 3);
  attr(b, NFTA_TARGET_INFO, &info, sizeof(info));
  expr_end(b, e);
}

static void expr_action(struct nlb *b, const struct chain_action *act, bool v6)
{
  /* ROOTLESSRT_NET_FAULT=nft-rule: an expression this kernel lacks, so that it refuses the batch
   * (all of it: nf_tables applies a batch whole or not at all) as one without nft_redir would. */
  if (net_fault("nft-rule")) {
    struct nest2 e = expr_begin(b, "rootlessrt-none");
    expr_end(b, e);
  }
  if (act->queue)
    expr_queue(b);
  else
    expr_redirect(b, v6 ? act->port6 : act->port4);
}

/* "ip[6] daddr ADDR[/PREFIX] VERDICT": the chain's action, or accept (libslirp's) when act is NULL.
 */
static void rule_daddr(struct nlb *b, bool v6, const void *addr, unsigned prefix,
                       const struct chain_action *act)
{
  size_t len = v6 ? 16 : 4;
  struct nest2 m = rule_begin(b);
  match_nfproto(b, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
  expr_payload(b, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 24 : 16, (uint32_t)len);
  if (prefix < len * 8) {
    uint8_t mask[16] = {0}, net[16];
    for (unsigned i = 0; i < prefix; i++)
      mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
    memcpy(net, addr, len);
    for (size_t i = 0; i < len; i++)
      net[i] &= mask[i];
    expr_mask(b, mask, len);
    expr_cmp(b, NFT_CMP_EQ, net, len);
  } else {
    expr_cmp(b, NFT_CMP_EQ, addr, len);
  }
  if (act)
    expr_action(b, act, v6);
  else
    expr_accept(b);
  rule_end(b, m);
}

static void new_chain(struct nlb *b, const char *name, const char *type, int32_t prio,
                      uint32_t hook)
{
  size_t m = msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWCHAIN, NLM_F_CREATE | NLM_F_ACK,
                       NFPROTO_INET, 0);
  attr_str(b, NFTA_CHAIN_TABLE, b->table);
  attr_str(b, NFTA_CHAIN_NAME, name);
  size_t h = nest_begin(b, NFTA_CHAIN_HOOK);
  attr_be32(b, NFTA_HOOK_HOOKNUM, hook);
  attr_be32(b, NFTA_HOOK_PRIORITY, (uint32_t)prio);
  nest_end(b, h);
  attr_str(b, NFTA_CHAIN_TYPE, type);
  msg_end(b, m);
}

/* The first two rules of every chain: what leaves by lo (ifindex 1 in every network
 * namespace) and what is not PROTO are accepted, left alone. */
static void rule_skip_lo_and_other(struct nlb *b, uint8_t proto)
{
  uint32_t lo = 1;
  struct nest2 r = rule_begin(b);
  expr_meta(b, NFT_META_OIF);
  expr_cmp(b, NFT_CMP_EQ, &lo, sizeof(lo));
  expr_accept(b);
  rule_end(b, r);
  r = rule_begin(b);
  expr_meta(b, NFT_META_L4PROTO);
  expr_cmp(b, NFT_CMP_NEQ, &proto, 1);
  expr_accept(b);
  rule_end(b, r);
}

/* The selection both chains share: lo, what is not TCP (and for the gate what is not a first
 * SYN) and libslirp's own addresses are accepted; the rest gets the chain's action. */
static void chain_body(struct nlb *b, const char *chain, const struct rrt_net_config *cfg,
                       const struct net_addrs *a, const struct chain_action *act)
{
  b->chain = chain;
  rule_skip_lo_and_other(b, IPPROTO_TCP);
  struct nest2 r;

  if (act->queue) {
    /* tcp flags & (fin|syn|rst|ack) != syn accept */
    uint8_t mask = 0x17, syn = 0x02;
    r = rule_begin(b);
    expr_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1);
    expr_mask(b, &mask, 1);
    expr_cmp(b, NFT_CMP_NEQ, &syn, 1);
    expr_accept(b);
    rule_end(b, r);
  }

  if (cfg->host_loopback)
    rule_daddr(b, false, &a->gateway, 32, act);
  rule_daddr(b, false, &a->network, a->prefix, NULL);
  if (act->port6) {
    struct in6_addr gw6, net6, ll;
    inet_pton(AF_INET6, NET_GATEWAY6, &gw6);
    inet_pton(AF_INET6, NET_PREFIX6, &net6);
    inet_pton(AF_INET6, "fe80::", &ll);
    if (cfg->host_loopback)
      rule_daddr(b, true, &gw6, 128, act);
    rule_daddr(b, true, &net6, 64, NULL);
    rule_daddr(b, true, &ll, 10, NULL);
  }
  for (int v6 = 0; v6 < 2; v6++) {
    if (!(v6 ? act->port6 : act->port4))
      continue;
    r = rule_begin(b);
    match_nfproto(b, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
    expr_action(b, act, v6 != 0);
    rule_end(b, r);
  }
}

/* "meta mark MARK reject with ...": how the helper's verdict on a SYN becomes the container's
 * error (ECONNREFUSED, ENETUNREACH, EHOSTUNREACH). */
static void rule_reject(struct nlb *b, uint32_t mark, uint32_t type, uint8_t code)
{
  struct nest2 r = rule_begin(b);
  expr_meta(b, NFT_META_MARK);
  expr_cmp(b, NFT_CMP_EQ, &mark, sizeof(mark));
  struct nest2 e = expr_begin(b, "reject");
  attr_be32(b, NFTA_REJECT_TYPE, type);
  if (type == NFT_REJECT_ICMPX_UNREACH)
    attr(b, NFTA_REJECT_ICMP_CODE, &code, 1);
  expr_end(b, e);
  rule_end(b, r);
}

static void build(struct nlb *b, const struct rrt_net_config *cfg, const struct net_addrs *a,
                  uint16_t port4, uint16_t port6, bool gate)
{
  size_t m = msg_begin(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  msg_end(b, m);
  b->table = NFT_TABLE;

  m = msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_ACK,
                NFPROTO_INET, 0);
  attr_str(b, NFTA_TABLE_NAME, NFT_TABLE);
  msg_end(b, m);

  uint16_t p6 = cfg->ipv6 ? port6 : 0;
  /* Conntrack (-200), the gate (-150), the verdicts (-140), the nat redirect (-100, dstnat). */
  if (gate) {
    new_chain(b, "gate", "filter", -150, NF_INET_LOCAL_OUT);
    new_chain(b, "verdict", "filter", -140, NF_INET_LOCAL_OUT);
  }
  new_chain(b, "out", "nat", -100, NF_INET_LOCAL_OUT);
  if (gate) {
    struct chain_action q = {.queue = true, .port4 = port4, .port6 = p6};
    chain_body(b, "gate", cfg, a, &q);
    b->chain = "verdict";
    rule_reject(b, NET_MARK_REFUSED, NFT_REJECT_TCP_RST, 0);
    rule_reject(b, NET_MARK_NETUNREACH, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_NO_ROUTE);
    rule_reject(b, NET_MARK_HOSTUNREACH, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_HOST_UNREACH);
  }
  struct chain_action rd = {.port4 = port4, .port6 = p6};
  chain_body(b, "out", cfg, a, &rd);

  m = msg_begin(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  msg_end(b, m);
}

/* ---------------------------------------------------------------- UDP */

/*
 * The container's own UDP (a table of its own, so that TCP's stays when this one is refused):
 *
 *   table inet rootlessrt-udp {
 *     chain mark { type route hook output priority -150;
 *       oif lo accept; meta l4proto != udp accept
 *       ip daddr GATEWAY meta mark set M      # only with --host-loopback
 *       ip daddr DNS udp dport 53 meta mark set M
 *       ip daddr NETWORK/PREFIX accept; ip daddr 224.0.0.0/3 accept
 *       (the same for IPv6 with --ipv6: fd00::2, fd00::3, fd00::/64, fe80::/10, ff00::/8)
 *       meta nfproto ipv4 meta mark set M ... }
 *     chain tproxy { type filter hook prerouting priority -150;
 *       meta mark M meta nfproto ipv4 tproxy ip to 127.0.0.1:PU; ... ip6 to [::1]:PU6 }
 *   }
 *
 * with "ip rule fwmark M lookup T" and "local default dev lo table T" (agent.c): the mark makes
 * the route chain route the datagram again, to lo, where tproxy hands it to the helper's
 * transparent socket with its original destination (IP_ORIGDSTADDR).
 */
static void expr_imm(struct nlb *b, const void *v, size_t len)
{
  struct nest2 e = expr_begin(b, "immediate");
  attr_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_1);
  data_value(b, NFTA_IMMEDIATE_DATA, v, len);
  expr_end(b, e);
}

static void expr_set_mark(struct nlb *b)
{
  uint32_t m = NET_MARK_UDP;
  expr_imm(b, &m, sizeof(m));
  struct nest2 e = expr_begin(b, "meta");
  attr_be32(b, NFTA_META_KEY, NFT_META_MARK);
  attr_be32(b, NFTA_META_SREG, NFT_REG_1);
  expr_end(b, e);
}

/* "ip[6] daddr ADDR/PREFIX [udp dport PORT] (meta mark set M | accept)" */
static void udp_rule(struct nlb *b, bool v6, const void *addr, unsigned prefix, uint16_t dport,
                     bool mark)
{
  size_t len = v6 ? 16 : 4;
  struct nest2 r = rule_begin(b);
  match_nfproto(b, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
  expr_payload(b, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 24 : 16, (uint32_t)len);
  uint8_t mask[16] = {0}, net[16];
  for (unsigned i = 0; i < prefix; i++)
    mask[i / 8] |= (uint8_t)(0x80 >> (i % 8));
  memcpy(net, addr, len);
  for (size_t i = 0; i < len; i++)
    net[i] &= mask[i];
  if (prefix < len * 8)
    expr_mask(b, mask, len);
  expr_cmp(b, NFT_CMP_EQ, net, len);
  if (dport) {
    uint16_t be = htons(dport);
    expr_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
    expr_cmp(b, NFT_CMP_EQ, &be, 2);
  }
  if (mark)
    expr_set_mark(b);
  else
    expr_accept(b);
  rule_end(b, r);
}

static void build_udp(struct nlb *b, const struct rrt_net_config *cfg, const struct net_addrs *a,
                      uint16_t port4, uint16_t port6)
{
  bool refuse = net_fault("udp-table"); /* an expression the kernel lacks: the batch is refused */
  size_t m = msg_begin(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  msg_end(b, m);
  b->table = NFT_TABLE_UDP;
  m = msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_ACK,
                NFPROTO_INET, 0);
  attr_str(b, NFTA_TABLE_NAME, NFT_TABLE_UDP);
  msg_end(b, m);
  new_chain(b, "mark", "route", -150, NF_INET_LOCAL_OUT);
  new_chain(b, "tproxy", "filter", -150, NF_INET_PRE_ROUTING);

  b->chain = "mark";
  rule_skip_lo_and_other(b, IPPROTO_UDP);
  uint8_t udp = IPPROTO_UDP;
  struct nest2 r;
  struct in_addr mc = {htonl(0xe0000000u)};
  if (cfg->host_loopback)
    udp_rule(b, false, &a->gateway, 32, 0, true);
  udp_rule(b, false, &a->dns, 32, 53, true);
  udp_rule(b, false, &a->network, a->prefix, 0, false);
  udp_rule(b, false, &mc, 3, 0, false);
  uint16_t p6 = cfg->ipv6 ? port6 : 0;
  if (p6) {
    struct in6_addr gw6, dns6, net6, ll, mc6;
    inet_pton(AF_INET6, NET_GATEWAY6, &gw6);
    inet_pton(AF_INET6, NET_DNS6, &dns6);
    inet_pton(AF_INET6, NET_PREFIX6, &net6);
    inet_pton(AF_INET6, "fe80::", &ll);
    inet_pton(AF_INET6, "ff00::", &mc6);
    if (cfg->host_loopback)
      udp_rule(b, true, &gw6, 128, 0, true);
    udp_rule(b, true, &dns6, 128, 53, true);
    udp_rule(b, true, &net6, 64, 0, false);
    udp_rule(b, true, &ll, 10, 0, false);
    udp_rule(b, true, &mc6, 8, 0, false);
  }
  for (int v6 = 0; v6 < 2; v6++) {
    if (!(v6 ? p6 : port4))
      continue;
    r = rule_begin(b);
    match_nfproto(b, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
    expr_set_mark(b);
    rule_end(b, r);
  }

  if (refuse) {
    r = rule_begin(b);
    struct nest2 e = expr_begin(b, "rootlessrt-none");
    expr_end(b, e);
    rule_end(b, r);
  }
  b->chain = "tproxy";
  for (int v6 = 0; v6 < 2; v6++) {
    uint16_t port = v6 ? p6 : port4;
    if (!port)
      continue;
    uint32_t mark = NET_MARK_UDP;
    r = rule_begin(b);
    expr_meta(b, NFT_META_MARK);
    expr_cmp(b, NFT_CMP_EQ, &mark, sizeof(mark));
    match_nfproto(b, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
    expr_meta(b, NFT_META_L4PROTO);
    expr_cmp(b, NFT_CMP_EQ, &udp, 1);
    /* reg1: the address, reg2: the port. */
    struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
    struct in_addr lo4 = {htonl(INADDR_LOOPBACK)};
    expr_imm(b, v6 ? (const void *)&lo6 : (const void *)&lo4, v6 ? 16 : 4);
    uint16_t be = htons(port);
    struct nest2 e = expr_begin(b, "immediate");
    attr_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_2);
    data_value(b, NFTA_IMMEDIATE_DATA, &be, sizeof(be));
    expr_end(b, e);
    e = expr_begin(b, "tproxy");
    attr_be32(b, NFTA_TPROXY_FAMILY, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
    attr_be32(b, NFTA_TPROXY_REG_ADDR, NFT_REG_1);
    attr_be32(b, NFTA_TPROXY_REG_PORT, NFT_REG_2);
    expr_end(b, e);
    rule_end(b, r);
  }
  m = msg_begin(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  msg_end(b, m);
}

/* Reads the kernel's answer to every message that asked for one; the first error wins. */
static int read_acks(int fd, const struct nlb *b, struct rrt_error *err)
{
  uint32_t got = 0;
  while (got < b->n_acks) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int r = poll(&pf, 1, 5000);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return rrt_error_set(err, r < 0 ? errno : ETIMEDOUT, "netfilter: no answer from the kernel");
    char buf[8192] __attribute__((aligned(4)));
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return rrt_error_errno(err, "netfilter: recv");
    }
    for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n);
         h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_seq < b->first_seq)
        continue;
      const struct nlmsgerr *e = NLMSG_DATA(h);
      if (e->error != 0)
        return rrt_error_set(err, -e->error, "netfilter: message %u of the batch",
                             h->nlmsg_seq - b->first_seq);
      got++;
    }
  }
  return 0;
}

int net_nfq_open(struct rrt_error *err)
{
  cleanup_close int fd =
      net_fault("nfq-socket")
          ? -1
          : socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_NETFILTER);
  if (fd < 0)
    return rrt_error_errno(err, "nfqueue: socket(NETLINK_NETFILTER)");
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return rrt_error_errno(err, "nfqueue: bind");
  /* A burst of SYNs must not overflow it: what does is let through (fail-open), not lost. */
  int rcv = 1 << 20;
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
  cleanup_free struct nlb *b = xzalloc(sizeof(*b));
  b->seq = b->first_seq = ((uint32_t)getpid() << 8) | 0x80;
  uint16_t type = (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_CONFIG;
  size_t m = msg_begin(b, type, NLM_F_ACK, AF_UNSPEC, NET_NFQ_NUM);
  struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND, .pf = htons(AF_INET)};
  attr(b, NFQA_CFG_CMD, &cmd, sizeof(cmd));
  msg_end(b, m);
  m = msg_begin(b, type, NLM_F_ACK, AF_UNSPEC, NET_NFQ_NUM);
  /* The IP and TCP headers are all it reads (60 + 60 bytes at most for IPv4, 40 + 60 for v6). */
  struct nfqnl_msg_config_params params = {.copy_range = htonl(128),
                                           .copy_mode = NFQNL_COPY_PACKET};
  attr(b, NFQA_CFG_PARAMS, &params, sizeof(params));
  attr_be32(b, NFQA_CFG_QUEUE_MAXLEN, 4096);
  attr_be32(b, NFQA_CFG_MASK, NFQA_CFG_F_FAIL_OPEN);
  attr_be32(b, NFQA_CFG_FLAGS, NFQA_CFG_F_FAIL_OPEN);
  msg_end(b, m);
  ssize_t n;
  do
    n = sendto(fd, b->buf, b->len, 0, (struct sockaddr *)&sa, sizeof(sa));
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return rrt_error_errno(err, "nfqueue: send");
  if (read_acks(fd, b, err) < 0)
    return rrt_error_wrap(err, "nfqueue: bind queue %d", NET_NFQ_NUM);
  return steal_fd(&fd);
}

static int send_batch(struct nlb *b, struct rrt_error *err)
{
  cleanup_close int fd =
      net_fault("nft-socket") ? -1 : socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
  if (fd < 0)
    return rrt_error_errno(err, "nf_tables: socket(NETLINK_NETFILTER)");
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return rrt_error_errno(err, "nf_tables: bind");
  if (b->overflow)
    return rrt_error_set(err, ENOBUFS, "nf_tables: the rules do not fit in %d bytes", NFT_BUF);
  ssize_t n;
  do
    n = net_fault("nft-send") ? -1
                              : sendto(fd, b->buf, b->len, 0, (struct sockaddr *)&sa, sizeof(sa));
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return rrt_error_errno(err, "nf_tables: send");
  return read_acks(fd, b, err);
}

int net_nft_install(const struct rrt_net_config *cfg, const struct net_addrs *a, uint16_t port4,
                    uint16_t port6, bool gate, struct rrt_error *err)
{
  cleanup_free struct nlb *b = xzalloc(sizeof(*b));
  b->seq = b->first_seq = (uint32_t)getpid() << 8;
  build(b, cfg, a, port4, port6, gate);
  return send_batch(b, err);
}

int net_nft_install_udp(const struct rrt_net_config *cfg, const struct net_addrs *a, uint16_t port4,
                        uint16_t port6, struct rrt_error *err)
{
  cleanup_free struct nlb *b = xzalloc(sizeof(*b));
  b->seq = b->first_seq = ((uint32_t)getpid() << 8) | 0x40;
  build_udp(b, cfg, a, port4, port6);
  return send_batch(b, err);
}

int net_nft_delete(bool udp, struct rrt_error *err)
{
  cleanup_free struct nlb *b = xzalloc(sizeof(*b));
  b->seq = b->first_seq = ((uint32_t)getpid() << 8) | 0x20;
  size_t m = msg_begin(b, NFNL_MSG_BATCH_BEGIN, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  msg_end(b, m);
  m = msg_begin(b, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE, NLM_F_ACK, NFPROTO_INET, 0);
  attr_str(b, NFTA_TABLE_NAME, udp ? NFT_TABLE_UDP : NFT_TABLE);
  msg_end(b, m);
  m = msg_begin(b, NFNL_MSG_BATCH_END, 0, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  msg_end(b, m);
  if (send_batch(b, err) < 0) {
    if (err->errnum != ENOENT)
      return rrt_error_wrap(err, "delete table inet %s", udp ? NFT_TABLE_UDP : NFT_TABLE);
    rrt_error_clear(err);
  }
  return 0;
}

int net_nfq_verdict(int fd, uint32_t id, bool accept, uint32_t mark)
{
  /* One message, built again for each verdict (the helper is single-threaded). */
  static struct nlb b;
  b.len = 0;
  b.seq = 0;
  b.n_acks = 0;
  b.overflow = false;
  size_t m = msg_begin(&b, (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_VERDICT, 0, AF_UNSPEC, NET_NFQ_NUM);
  struct nfqnl_msg_verdict_hdr vh = {.verdict = htonl(accept ? NF_ACCEPT : NF_DROP),
                                     .id = htonl(id)};
  attr(&b, NFQA_VERDICT_HDR, &vh, sizeof(vh));
  if (mark)
    attr_be32(&b, NFQA_MARK, mark);
  msg_end(&b, m);
  struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
  ssize_t n;
  do
    n = sendto(fd, b.buf, b.len, 0, (struct sockaddr *)&sa, sizeof(sa));
  while (n < 0 && errno == EINTR);
  return n < 0 ? -1 : 0;
}

ssize_t net_nfq_next(int fd, void *buf, size_t cap, uint32_t *id, const uint8_t **pkt)
{
  for (;;) {
    ssize_t n = recv(fd, buf, cap, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    struct nlmsghdr *h = buf;
    if (!NLMSG_OK(h, (unsigned)n) || h->nlmsg_type != ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET))
      continue;
    const char *p = (const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct nfgenmsg));
    const char *end = (const char *)h + h->nlmsg_len;
    bool have_id = false;
    ssize_t plen = -1;
    while (p + NLA_HDRLEN <= end) {
      const struct nlattr *a = (const struct nlattr *)p;
      if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
        break;
      uint16_t type = a->nla_type & NLA_TYPE_MASK;
      const char *data = p + NLA_HDRLEN;
      size_t dlen = a->nla_len - NLA_HDRLEN;
      if (type == NFQA_PACKET_HDR && dlen >= sizeof(struct nfqnl_msg_packet_hdr)) {
        const struct nfqnl_msg_packet_hdr *ph = (const void *)data;
        *id = ntohl(ph->packet_id);
        have_id = true;
      } else if (type == NFQA_PAYLOAD) {
        *pkt = (const uint8_t *)data;
        plen = (ssize_t)dlen;
      }
      p += NLA_ALIGN(a->nla_len);
    }
    if (have_id && plen >= 0)
      return plen;
    if (have_id) {
      *pkt = NULL;
      return 0;
    }
  }
}

/* ---------------------------------------------------------------- rootlessrt check */

static void probe_child(int fd)
{
  struct rrt_net_config cfg = {.mode = RRT_NET_SLIRP, .mtu = 65520};
  snprintf(cfg.cidr, sizeof(cfg.cidr), "10.0.2.0/24");
  struct net_addrs a;
  struct rrt_error err = RRT_ERROR_INIT;
  int tcp = 0, gate = 0, udp = 0;
  cleanup_free char *why = NULL;
  if (net_cidr_parse(cfg.cidr, &a, &err) < 0 || unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
    dprintf(fd, "E %d %s", errno, err.msg ? err.msg : "unshare(CLONE_NEWUSER|CLONE_NEWNET)");
    _exit(1);
  }
  int q = net_nfq_open(&err);
  if (q < 0 || net_nft_install(&cfg, &a, 1, 0, true, &err) < 0) {
    gate = err.errnum ? err.errnum : EPERM;
    why = xstrdup(rrt_error_msg(&err));
    rrt_error_clear(&err);
    if (net_nft_install(&cfg, &a, 1, 0, false, &err) < 0) {
      tcp = err.errnum ? err.errnum : EPERM;
      free(why);
      why = xstrdup(rrt_error_msg(&err));
      rrt_error_clear(&err);
    }
  }
  if (net_nft_install_udp(&cfg, &a, 1, 0, &err) < 0) {
    udp = err.errnum ? err.errnum : EPERM;
    if (!why)
      why = xstrdup(rrt_error_msg(&err));
    rrt_error_clear(&err);
  }
  dprintf(fd, "%d %d %d %s", tcp, gate, udp, why ? why : "");
  _exit(0);
}

int rrt_net_fast_path_probe(int *tcp, int *gate, int *udp, char **why, struct rrt_error *err)
{
  int p[2];
  *why = NULL;
  if (pipe2(p, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "pipe2");
  cleanup_close int rd = p[0];
  cleanup_close int wr = p[1];
  pid_t pid = fork();
  if (pid < 0)
    return rrt_error_errno(err, "fork");
  if (pid == 0) {
    close(rd);
    probe_child(wr);
  }
  close(steal_fd(&wr));
  char buf[1024];
  ssize_t n = rrt_read_all(rd, buf, sizeof(buf) - 1);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  buf[n > 0 ? n : 0] = '\0';
  int off = 0;
  if (buf[0] == 'E') {
    int e = 0;
    if (sscanf(buf + 1, " %d %n", &e, &off) >= 1 && off > 0)
      return rrt_error_set(err, e, "%s", buf + off + 1);
    return rrt_error_set(err, 0, "the probe failed");
  }
  if (sscanf(buf, "%d %d %d %n", tcp, gate, udp, &off) < 3)
    return rrt_error_set(err, 0, "the probe exited without an answer");
  if (buf[off])
    *why = xstrdup(buf + off);
  return 0;
}

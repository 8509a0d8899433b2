/* net_internal.h: what the files of net/ share with each other and no one else. */
#ifndef RRT_NET_INTERNAL_H
#define RRT_NET_INTERNAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootlessrt/error.h"
#include "rootlessrt/net.h"

/* The addresses derived from cfg->cidr (slirp4netns' layout). */
struct net_addrs {
  struct in_addr network, netmask;
  struct in_addr gateway; /* .2: libslirp's vhost, the host as seen from inside */
  struct in_addr dns;     /* .3 */
  struct in_addr dhcp;    /* .15: first DHCP lease, unused by us but required */
  struct in_addr guest;   /* .100: tap0 */
  unsigned prefix;
};

int net_cidr_parse(const char *cidr, struct net_addrs *out, struct rrt_error *err);

/* libslirp's IPv6 layout with --ipv6: the prefix, the host (gateway) and the DNS address. */
#define NET_PREFIX6 "fd00::"
#define NET_GATEWAY6 "fd00::2"
#define NET_DNS6 "fd00::3"

/*
 * The fast path for the container's own TCP connections (nft.c, run by the agent in the
 * container's netns): an nf_tables nat chain at the output hook redirects each connection the
 * container starts to the helper's listener at 127.0.0.1:port4 (and [::1]:port6, 0: none);
 * libslirp keeps its own addresses, lo, and everything that is not TCP. With gate, a chain
 * before it queues each first SYN (queue NET_NFQ_NUM) until the helper's verdict, whose mark
 * can make the kernel refuse it (NET_MARK_*).
 */
#define NET_NFQ_NUM 0
#define NET_MARK_REFUSED 0x72727401u     /* reject with tcp reset: ECONNREFUSED */
#define NET_MARK_NETUNREACH 0x72727402u  /* icmp net unreachable: ENETUNREACH */
#define NET_MARK_HOSTUNREACH 0x72727403u /* icmp host unreachable: EHOSTUNREACH */
int net_nft_install(const struct rrt_net_config *cfg, const struct net_addrs *a, uint16_t port4,
                    uint16_t port6, bool gate, struct rrt_error *err);
/* The container's own UDP (another table): marked to be routed to lo, where tproxy hands it to the
 * helper's transparent socket at 127.0.0.1:port4 ([::1]:port6). */
#define NET_MARK_UDP 0x72727410u
int net_nft_install_udp(const struct rrt_net_config *cfg, const struct net_addrs *a, uint16_t port4,
                        uint16_t port6, struct rrt_error *err);
/* Deletes the table of the TCP rules (udp: of the UDP rules) in the calling process's netns;
 * gone already is done. */
int net_nft_delete(bool udp, struct rrt_error *err);
/* The netlink socket of queue NET_NFQ_NUM, bound in the calling process's netns (non-blocking). */
int net_nfq_open(struct rrt_error *err);
/* The next queued packet: its id and IP packet (*pkt, the returned length; NULL and 0 if none
 * came with it); -1 with errno (EAGAIN: no more). */
ssize_t net_nfq_next(int fd, void *buf, size_t cap, uint32_t *id, const uint8_t **pkt);
/* The verdict on packet id: accept (with mark, 0: none) or drop. */
int net_nfq_verdict(int fd, uint32_t id, bool accept, uint32_t mark);

/* Test-only fault injection: ROOTLESSRT_NET_FAULT=STEP makes that step of the fast path's set-up
 * fail with EPERM, as a kernel without nf_tables would (agent.c names the steps). */
bool net_fault(const char *step);

/* rtnetlink, in the netns of the calling process. */
int net_nl_open(struct rrt_error *err);
int net_nl_link_up(int nl, int ifindex, unsigned mtu, struct rrt_error *err);
int net_nl_addr_add(int nl, int ifindex, struct in_addr addr, unsigned prefix,
                    struct rrt_error *err);
int net_nl_route_default(int nl, int ifindex, struct in_addr gw, struct rrt_error *err);
/* "ip rule add [ipproto PROTO] [fwmark MARK] lookup TABLE pref PREF" for family (AF_INET,
 * AF_INET6); proto and mark 0: not matched. */
int net_nl_rule(int nl, int family, uint8_t proto, uint32_t mark, uint32_t table, uint32_t pref,
                struct rrt_error *err);
/* "ip route add local default dev lo table TABLE": everything is delivered here. */
int net_nl_route_local_all(int nl, int family, uint32_t table, struct rrt_error *err);
/* A route to dst/dst_len (0: default) on ifindex, via gw (NULL: on-link), with an MTU, in table. */
int net_nl_route_table(int nl, int family, int ifindex, const void *dst, unsigned dst_len,
                       const void *gw, unsigned mtu, uint32_t table, struct rrt_error *err);

/*
 * The ns agent: a child of the helper living in the container's user and
 * network namespaces. It creates and configures tap0, sends its fd back, and
 * then serves as a socket factory until its socket hangs up.
 */
pid_t net_agent_spawn(int userns_fd, int netns_fd, const struct rrt_net_config *cfg,
                      const struct net_addrs *addrs, int *agent_sock, int *tap_fd,
                      struct rrt_error *err);
/* The fast path's listeners from the agent (net_nft_install's), l6 -1 without --ipv6, and the SYN
 * gate's queue (-1: none); -1 and why when the kernel refused it. Read once, before any other
 * request to the agent. */
int net_agent_fast_path(int agent_sock, int *l4, int *l6, int *nfq, struct rrt_error *err);
/* The UDP fast path's transparent sockets (u6 -1 without --ipv6), read right after the above; -1
 * and why when the kernel refused it. */
int net_agent_udp_path(int agent_sock, int *u4, int *u6, struct rrt_error *err);
/* A transparent UDP socket in the container netns bound to sa (an address not its own), to send
 * the container replies from the address it sent to. */
int net_agent_reply_socket(int agent_sock, const struct sockaddr *sa, socklen_t len,
                           struct rrt_error *err);
/* A raw socket (IPPROTO_RAW: headers included) of that family in the container netns. */
int net_agent_raw_socket(int agent_sock, int family, struct rrt_error *err);
/* A socket of that type (SOCK_STREAM, SOCK_DGRAM) created in the container netns. */
int net_agent_socket(int agent_sock, int type, struct rrt_error *err);
/* The agent deletes the rules that send the container's TCP (udp: its UDP) to a listener of ours
 * that the container's root destroyed: its own traffic then goes through libslirp. */
int net_agent_drop_rules(int agent_sock, bool udp, struct rrt_error *err);

/* Small fd-protocol helpers shared by the agent and the helper. */
int net_send_status(int sock, int fd, const struct rrt_error *err);
int net_recv_status(int sock, int *fd, struct rrt_error *err);

/* Closes every fd from 3 up except those listed (negative entries ignored). */
void net_close_fds_except(const int *keep, size_t n);

/* What epoll_event.data.ptr points to in the helper's loop. */
enum net_ev_kind {
  NET_EV_TAP,
  NET_EV_PIDFD,
  NET_EV_AGENT,
  NET_EV_LISTENER,
  NET_EV_CONN_HOST,
  NET_EV_CONN_CTR,
  NET_EV_UDP_LISTENER,
  NET_EV_UDP_FLOW,
  NET_EV_OUT_LISTENER,
  NET_EV_OUT_QUEUE,
  NET_EV_OUT_CONNECT,
  NET_EV_UDPOUT_LISTENER,
  NET_EV_UDPOUT_FLOW
};
struct net_ev {
  enum net_ev_kind kind;
};

/* The relay for published ports: TCP by splice(), UDP by a socket per client, both made in the
 * container netns (the slirp path cannot answer UDP with host loopback disabled). */
struct net_relay;
struct net_relay *net_relay_new(int epfd, int agent_sock, size_t max_conns);
/* How long a UDP client's flow may stay idle before a datagram of another client closes it. */
void net_relay_set_udp_idle(struct net_relay *r, int64_t ms);
/* The clock the relay's timeouts read (CLOCK_MONOTONIC, ms); the fuzz target sets its own. */
void net_relay_set_clock(struct net_relay *r, int64_t (*clock_ms)(void));
int net_relay_listen(struct net_relay *r, const struct rrt_port *port, struct rrt_error *err);
void net_relay_event(struct net_relay *r, struct net_ev *ev, uint32_t events);
size_t net_relay_conn_count(const struct net_relay *r);
/* At the connection limit (shared by published ports and the container's own connections). */
bool net_relay_full(const struct net_relay *r);
/* The container's own connection: ctr_fd accepted in its netns, host_fd connected or (connecting)
 * connecting from the helper's; relayed once connected, reset in the container if the connect
 * fails. The fds are the relay's from here on, also when it fails (false). */
bool net_relay_adopt(struct net_relay *r, int host_fd, int ctr_fd, bool connecting,
                     const char *dest);
/* Connections that stopped on their fairness budget; true while work remains. */
bool net_relay_run_pending(struct net_relay *r);
/* Frees what the last batch of events closed (it may still have been named in the batch). */
void net_relay_reap(struct net_relay *r);
void net_relay_free(struct net_relay *r);

/* The container's own TCP connections (outbound.c), from the agent's listeners and queue (any may
 * be -1; they are its own from here on, also on failure). */
struct net_outbound;
struct net_outbound *net_outbound_new(struct net_relay *relay, int epfd, int agent_sock,
                                      const struct rrt_net_config *cfg, const struct net_addrs *a,
                                      int l4, int l6, int nfq, struct rrt_error *err);
/* An event of its listeners, its queue or a connect it made (NET_EV_OUT_*). */
void net_outbound_event(struct net_ev *ev, uint32_t events);
/* Drops the SYNs' host connections nobody accepted in time; the ms until the next is due (-1). */
int64_t net_outbound_expire(struct net_outbound *o);
void net_outbound_free(struct net_outbound *o);

/* The container's own UDP (udp_out.c), from the agent's transparent sockets (either may be -1;
 * they are its own from here on, also on failure). */
struct net_udp_out;
struct net_udp_out *net_udp_out_new(int epfd, int agent_sock, const struct rrt_net_config *cfg,
                                    const struct net_addrs *a, int u4, int u6,
                                    struct rrt_error *err);
void net_udp_out_event(struct net_ev *ev);
/* Closes idle flows, frees what the last batch closed; ms until it wants to run again (-1). */
int64_t net_udp_out_expire(struct net_udp_out *u);
void net_udp_out_free(struct net_udp_out *u);

/* What rootlessrt passes rootlessrt-net on its command line, in this order (helper_main.c);
 * changing it means a new number, so that a helper of another release refuses to start. */
#define NET_HELPER_PROTOCOL "rootlessrt-net/3"

/* The helper's body, in the runtime's namespaces; never returns. */
__attribute__((noreturn)) void net_helper_main(int ready_fd, int userns_fd, int netns_fd,
                                               int init_pidfd, const struct rrt_net_config *cfg);

#endif

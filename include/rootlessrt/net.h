/* net.h: built-in rootless networking (libslirp) and published ports. */
#ifndef ROOTLESSRT_NET_H
#define ROOTLESSRT_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

enum rrt_net_mode { RRT_NET_DEFAULT, RRT_NET_NONE, RRT_NET_HOST, RRT_NET_SLIRP };

struct rrt_port {
  int proto;        /* IPPROTO_TCP or IPPROTO_UDP */
  char host_ip[46]; /* "127.0.0.1" when not given */
  uint16_t host_port;
  uint16_t container_port;
};

struct rrt_net_config {
  enum rrt_net_mode mode;
  unsigned mtu; /* default 65520 */
  bool ipv6;
  bool host_loopback;      /* default false */
  char cidr[32];           /* default "10.0.2.0/24": container .100, gateway .2, dns .3 */
  bool ports_via_slirp;    /* force the slirp path for published ports */
  bool outbound_via_slirp; /* the container's own connections through libslirp, not spliced */
  unsigned udp_idle_s;     /* a published UDP port's client socket closes after this idle; 0: 60 */
  bool no_syn_gate;        /* the helper's own: its agent makes no SYN gate (see drop_root) */
  struct rrt_port *ports;
  size_t n_ports;
};

/* "[HOSTIP:]HOSTPORT:CTRPORT[/tcp|/udp]"; errors name the field and why. */
int rrt_net_publish_parse(const char *s, struct rrt_port *out, struct rrt_error *err);

/* Annotations (rootlessrt.network, rootlessrt.publish, rootlessrt.mtu,
 * rootlessrt.ipv6, rootlessrt.host-loopback, rootlessrt.cidr,
 * rootlessrt.ports-via, rootlessrt.outbound-via, rootlessrt.udp-idle-timeout) first, then the
 * command-line values (cli_* may be NULL / 0) override them: --network, --publish, and cli_opts as
 * "KEY=VALUE" with the annotations' keys (mtu, ipv6, host-loopback, cidr, ports-via, outbound-via,
 * udp-idle-timeout). */
int rrt_net_config_build(const struct rrt_spec *spec, const char *cli_network,
                         char *const *cli_publish, size_t n_cli_publish, char *const *cli_opts,
                         size_t n_cli_opts, struct rrt_net_config *cfg, struct rrt_error *err);
void rrt_net_config_free(struct rrt_net_config *cfg);

/* Inside the container's own netns (called by init): lo up. */
int rrt_net_loopback_up(struct rrt_error *err);

/* Text for the container's /etc/resolv.conf in slirp mode (malloc'd). */
char *rrt_net_resolv_conf(const struct rrt_net_config *cfg);

/*
 * Slirp mode, called by `create` while init is blocked: enters init's user
 * and network namespaces, creates tap0 with the address/route/MTU, starts the
 * helper (runtime namespace, libslirp loop, published ports listening), and
 * returns once all of it is ready. The helper exits when init exits.
 */
int rrt_net_start(pid_t init_pid, const struct rrt_net_config *cfg, pid_t *helper_pid,
                  struct rrt_error *err);

/* For `rootlessrt check`: the nf_tables rules of the fast path for the container's own
 * connections, tried in a child's user and network namespace of its own. *tcp, *gate (the SYN
 * gate) and *udp: 0, or the errno that refused it; *why: the first refusal (malloc'd, or NULL).
 * -1: the probe itself could not run (no user namespace). */
int rrt_net_fast_path_probe(int *tcp, int *gate, int *udp, char **why, struct rrt_error *err);

/* Where rootlessrt-net is looked for: $ROOTLESSRT_NET_HELPER, beside this binary, in
 * ../libexec/rootlessrt/ from it, else this build's install path (malloc'd). */
char *rrt_net_helper_path(void);

#endif

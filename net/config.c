/* config.c: the network configuration from annotations and flags, publish specs, resolv.conf. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rootlessrt/net.h"
#include "rootlessrt/util.h"
#include "net_internal.h"

/* libslirp clamps anything outside IF_MTU_MIN..IF_MTU_MAX silently; we say so instead. */
#define NET_MTU_MIN 68
#define NET_MTU_MAX 65521
#define NET_MTU_DEFAULT 65520
#define NET_UDP_IDLE_DEFAULT 60
#define NET_UDP_IDLE_MAX 86400

static int parse_port_field(const char *spec, const char *field, const char *s, uint16_t *out,
                            struct rrt_error *err)
{
  unsigned long long v;
  if (*s == '\0')
    return rrt_error_set(err, 0, "publish \"%s\": %s: missing", spec, field);
  if (rrt_parse_u64(s, &v) < 0)
    return rrt_error_set(err, 0, "publish \"%s\": %s: not a number", spec, field);
  if (v < 1 || v > 65535)
    return rrt_error_set(err, 0, "publish \"%s\": %s: %llu is out of range (1-65535)", spec, field,
                         v);
  *out = (uint16_t)v;
  return 0;
}

int rrt_net_publish_parse(const char *s, struct rrt_port *out, struct rrt_error *err)
{
  cleanup_free char *buf = xstrdup(s);
  struct rrt_port p = {.proto = IPPROTO_TCP};
  strcpy(p.host_ip, "127.0.0.1");

  char *slash = strchr(buf, '/');
  if (slash) {
    *slash = '\0';
    const char *proto = slash + 1;
    if (strcasecmp(proto, "tcp") == 0)
      p.proto = IPPROTO_TCP;
    else if (strcasecmp(proto, "udp") == 0)
      p.proto = IPPROTO_UDP;
    else
      return rrt_error_set(err, 0, "publish \"%s\": protocol: expected tcp or udp, got \"%s\"", s,
                           proto);
  }

  /* Split from the right so that an IPv6 host address ("[::1]:8080:80") keeps its colons. */
  char *c2 = strrchr(buf, ':');
  if (!c2)
    return rrt_error_set(err, 0, "publish \"%s\": expected [HOSTIP:]HOSTPORT:CTRPORT[/tcp|/udp]",
                         s);
  *c2 = '\0';
  const char *ctr = c2 + 1;
  char *c1 = strrchr(buf, ':');
  const char *host_port = buf;
  if (c1) {
    *c1 = '\0';
    host_port = c1 + 1;
    char *ip = buf;
    size_t n = strlen(ip);
    if (n >= 2 && ip[0] == '[' && ip[n - 1] == ']') {
      ip[n - 1] = '\0';
      ip++;
    }
    if (*ip != '\0') {
      struct in6_addr a6;
      struct in_addr a4;
      if (inet_pton(AF_INET, ip, &a4) != 1 && inet_pton(AF_INET6, ip, &a6) != 1)
        return rrt_error_set(err, 0, "publish \"%s\": host address: \"%s\" is not an IP address", s,
                             ip);
      snprintf(p.host_ip, sizeof(p.host_ip), "%s", ip);
    }
  }
  if (parse_port_field(s, "host port", host_port, &p.host_port, err) < 0 ||
      parse_port_field(s, "container port", ctr, &p.container_port, err) < 0)
    return -1;
  *out = p;
  return 0;
}

int net_cidr_parse(const char *cidr, struct net_addrs *out, struct rrt_error *err)
{
  char buf[32];
  if (snprintf(buf, sizeof(buf), "%s", cidr) >= (int)sizeof(buf))
    return rrt_error_set(err, 0, "cidr \"%s\": too long", cidr);
  char *slash = strchr(buf, '/');
  if (!slash)
    return rrt_error_set(err, 0, "cidr \"%s\": expected ADDRESS/PREFIX, e.g. 10.0.2.0/24", cidr);
  *slash = '\0';
  unsigned long long prefix;
  struct in_addr net;
  if (inet_pton(AF_INET, buf, &net) != 1)
    return rrt_error_set(err, 0, "cidr \"%s\": \"%s\" is not an IPv4 address", cidr, buf);
  /* The container is host number 100 of the subnet: anything smaller than a /25 cannot hold it. */
  if (rrt_parse_u64(slash + 1, &prefix) < 0 || prefix < 1 || prefix > 25)
    return rrt_error_set(err, 0, "cidr \"%s\": prefix: expected a number from 1 to 25", cidr);
  uint32_t mask = prefix == 0 ? 0 : ~0u << (32 - prefix);
  uint32_t n = ntohl(net.s_addr);
  if (n & ~mask)
    return rrt_error_set(err, 0, "cidr \"%s\": host bits are set (did you mean %s/%llu?)", cidr,
                         inet_ntoa((struct in_addr){htonl(n & mask)}), prefix);
  memset(out, 0, sizeof(*out));
  out->network.s_addr = htonl(n);
  out->netmask.s_addr = htonl(mask);
  out->gateway.s_addr = htonl(n | 2);
  out->dns.s_addr = htonl(n | 3);
  out->dhcp.s_addr = htonl(n | 15);
  out->guest.s_addr = htonl(n | 100);
  out->prefix = (unsigned)prefix;
  return 0;
}

static int parse_bool(const char *what, const char *v, bool *out, struct rrt_error *err)
{
  if (strcmp(v, "true") == 0)
    *out = true;
  else if (strcmp(v, "false") == 0)
    *out = false;
  else
    return rrt_error_set(err, 0, "%s: expected true or false, got \"%s\"", what, v);
  return 0;
}

static int parse_mode(const char *what, const char *v, enum rrt_net_mode *out,
                      struct rrt_error *err)
{
  if (strcmp(v, "slirp") == 0)
    *out = RRT_NET_SLIRP;
  else if (strcmp(v, "none") == 0)
    *out = RRT_NET_NONE;
  else if (strcmp(v, "host") == 0)
    *out = RRT_NET_HOST;
  else
    return rrt_error_set(err, 0, "%s: expected slirp, none or host, got \"%s\"", what, v);
  return 0;
}

static void add_port(struct rrt_net_config *cfg, const struct rrt_port *p)
{
  cfg->ports = xrealloc(cfg->ports, (cfg->n_ports + 1) * sizeof(*cfg->ports));
  cfg->ports[cfg->n_ports++] = *p;
}

static int parse_publish_list(const char *list, struct rrt_net_config *cfg, struct rrt_error *err)
{
  cleanup_free char *buf = xstrdup(list);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    if (*tok == '\0')
      continue;
    struct rrt_port p;
    if (rrt_net_publish_parse(tok, &p, err) < 0)
      return -1;
    add_port(cfg, &p);
  }
  return 0;
}

/* One network option, from an annotation ("annotation rootlessrt.mtu") or a
 * flag ("--mtu"); `what` names it in errors. */
static int apply_option(const char *key, const char *v, const char *what,
                        struct rrt_net_config *cfg, struct rrt_error *err)
{
  if (strcmp(key, "network") == 0)
    return parse_mode(what, v, &cfg->mode, err);
  if (strcmp(key, "publish") == 0) {
    if (parse_publish_list(v, cfg, err) < 0)
      return rrt_error_wrap(err, "%s", what);
    return 0;
  }
  if (strcmp(key, "mtu") == 0) {
    unsigned long long mtu;
    if (rrt_parse_u64(v, &mtu) < 0 || mtu < NET_MTU_MIN || mtu > NET_MTU_MAX)
      return rrt_error_set(err, 0, "%s: expected a number from %d to %d, got \"%s\"", what,
                           NET_MTU_MIN, NET_MTU_MAX, v);
    cfg->mtu = (unsigned)mtu;
    return 0;
  }
  if (strcmp(key, "ipv6") == 0)
    return parse_bool(what, v, &cfg->ipv6, err);
  if (strcmp(key, "host-loopback") == 0)
    return parse_bool(what, v, &cfg->host_loopback, err);
  if (strcmp(key, "cidr") == 0) {
    struct net_addrs a;
    if (net_cidr_parse(v, &a, err) < 0)
      return rrt_error_wrap(err, "%s", what);
    snprintf(cfg->cidr, sizeof(cfg->cidr), "%s", v);
    return 0;
  }
  if (strcmp(key, "udp-idle-timeout") == 0) {
    unsigned long long s;
    if (rrt_parse_u64(v, &s) < 0 || s < 1 || s > NET_UDP_IDLE_MAX)
      return rrt_error_set(err, 0, "%s: expected seconds from 1 to %d, got \"%s\"", what,
                           NET_UDP_IDLE_MAX, v);
    cfg->udp_idle_s = (unsigned)s;
    return 0;
  }
  if (strcmp(key, "ports-via") == 0) {
    if (strcmp(v, "splice") == 0)
      cfg->ports_via_slirp = false;
    else if (strcmp(v, "slirp") == 0)
      cfg->ports_via_slirp = true;
    else
      return rrt_error_set(err, 0, "%s: expected splice or slirp, got \"%s\"", what, v);
    return 0;
  }
  if (strcmp(key, "outbound-via") == 0) {
    if (strcmp(v, "splice") == 0)
      cfg->outbound_via_slirp = false;
    else if (strcmp(v, "slirp") == 0)
      cfg->outbound_via_slirp = true;
    else
      return rrt_error_set(err, 0, "%s: expected splice or slirp, got \"%s\"", what, v);
    return 0;
  }
  return rrt_error_set(err, 0,
                       "%s: unknown network option (known: network, publish, mtu, ipv6, "
                       "host-loopback, cidr, ports-via, outbound-via, udp-idle-timeout)",
                       what);
}

static const char *const annotation_keys[] = {"network",   "publish",       "mtu",
                                              "ipv6",      "host-loopback", "cidr",
                                              "ports-via", "outbound-via",  "udp-idle-timeout"};

static int apply_annotations(const struct rrt_spec *spec, struct rrt_net_config *cfg,
                             struct rrt_error *err)
{
  for (size_t i = 0; i < sizeof(annotation_keys) / sizeof(annotation_keys[0]); i++) {
    char name[64];
    snprintf(name, sizeof(name), "rootlessrt.%s", annotation_keys[i]);
    const char *v = rrt_spec_annotation(spec, name);
    if (!v)
      continue;
    char what[80];
    snprintf(what, sizeof(what), "annotation %s", name);
    if (apply_option(annotation_keys[i], v, what, cfg, err) < 0)
      return -1;
  }
  return 0;
}

/* "KEY=VALUE" from --network-opt (and the shorthand flags, which the command
 * line turns into the same form). */
static int apply_cli_options(char *const *opts, size_t n, struct rrt_net_config *cfg,
                             struct rrt_error *err)
{
  for (size_t i = 0; i < n; i++) {
    const char *eq = strchr(opts[i], '=');
    if (!eq || eq == opts[i])
      return rrt_error_set(err, 0, "--network-opt \"%s\": expected KEY=VALUE", opts[i]);
    cleanup_free char *key = xstrndup(opts[i], (size_t)(eq - opts[i]));
    cleanup_free char *what = xasprintf("--%s", key);
    if (strcmp(key, "publish") == 0 || strcmp(key, "network") == 0)
      return rrt_error_set(err, 0, "--network-opt %s: use --%s", key, key);
    if (apply_option(key, eq + 1, what, cfg, err) < 0)
      return -1;
  }
  return 0;
}

int rrt_net_config_build(const struct rrt_spec *spec, const char *cli_network,
                         char *const *cli_publish, size_t n_cli_publish, char *const *cli_opts,
                         size_t n_cli_opts, struct rrt_net_config *cfg, struct rrt_error *err)
{
  __attribute__((cleanup(rrt_net_config_free))) struct rrt_net_config c = {
      .mode = RRT_NET_DEFAULT, .mtu = NET_MTU_DEFAULT, .udp_idle_s = NET_UDP_IDLE_DEFAULT};
  snprintf(c.cidr, sizeof(c.cidr), "10.0.2.0/24");

  if (spec && apply_annotations(spec, &c, err) < 0)
    return -1;
  if (cli_network && parse_mode("--network", cli_network, &c.mode, err) < 0)
    return -1;
  if (apply_cli_options(cli_opts, n_cli_opts, &c, err) < 0)
    return -1;
  /* A list given on the command line replaces the annotation's list rather than
   * adding to it: the person typing -p wants exactly those ports. */
  if (n_cli_publish > 0) {
    rrt_net_config_free(&c);
    for (size_t i = 0; i < n_cli_publish; i++) {
      struct rrt_port p;
      if (rrt_net_publish_parse(cli_publish[i], &p, err) < 0)
        return -1;
      add_port(&c, &p);
    }
  }
  if (c.n_ports > 0) {
    /* Publishing a port only makes sense with slirp: imply it rather than ignore -p. */
    if (c.mode == RRT_NET_DEFAULT) {
      c.mode = RRT_NET_SLIRP;
    } else if (c.mode != RRT_NET_SLIRP) {
      return rrt_error_set(err, 0,
                           "publish: ports can only be published with network slirp, not %s",
                           c.mode == RRT_NET_HOST ? "host" : "none");
    }
  }
  for (size_t i = 0; i < c.n_ports; i++)
    for (size_t j = 0; j < i; j++)
      if (c.ports[i].proto == c.ports[j].proto && c.ports[i].host_port == c.ports[j].host_port &&
          strcmp(c.ports[i].host_ip, c.ports[j].host_ip) == 0) {
        return rrt_error_set(err, 0, "publish %s:%u/%s: host port given twice", c.ports[i].host_ip,
                             c.ports[i].host_port, c.ports[i].proto == IPPROTO_UDP ? "udp" : "tcp");
      }
  *cfg = c;
  c.ports = NULL; /* handed over to *cfg */
  return 0;
}

void rrt_net_config_free(struct rrt_net_config *cfg)
{
  if (!cfg)
    return;
  free(cfg->ports);
  cfg->ports = NULL;
  cfg->n_ports = 0;
}

char *rrt_net_resolv_conf(const struct rrt_net_config *cfg)
{
  struct net_addrs a;
  struct rrt_error err = RRT_ERROR_INIT;
  /* config_build validated the cidr; fall back to the default layout if a
   * caller filled the struct by hand with something unusable. */
  if (net_cidr_parse(cfg->cidr, &a, &err) < 0) {
    rrt_error_clear(&err);
    net_cidr_parse("10.0.2.0/24", &a, &err);
  }
  char dns[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &a.dns, dns, sizeof(dns));
  if (cfg->ipv6)
    return xasprintf("nameserver %s\nnameserver fd00::3\n", dns);
  return xasprintf("nameserver %s\n", dns);
}

bool net_fault(const char *step)
{
  const char *f = getenv("ROOTLESSRT_NET_FAULT");
  if (!f || strcmp(f, step) != 0)
    return false;
  errno = EPERM;
  return true;
}

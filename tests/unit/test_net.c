/* test_net.c: publish specs, the network config from annotations and flags, resolv.conf text. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/net.h"
#include "rootlessrt/spec.h"
#include "tap.h"

static void good(const char *s, int proto, const char *ip, unsigned hp, unsigned cp)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_port p;
  int r = rrt_net_publish_parse(s, &p, &err);
  ok(r == 0, "publish \"%s\" parses", s);
  if (r < 0) {
    printf("#   error: %s\n", rrt_error_msg(&err));
    rrt_error_clear(&err);
    return;
  }
  is_int(p.proto, proto, "  protocol");
  is_str(p.host_ip, ip, "  host address");
  is_int(p.host_port, hp, "  host port");
  is_int(p.container_port, cp, "  container port");
}

static void bad(const char *s, const char *msg)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_port p;
  int r = rrt_net_publish_parse(s, &p, &err);
  ok(r < 0, "publish \"%s\" is refused", s);
  is_str(err.msg, msg, "  with the message naming the field");
  rrt_error_clear(&err);
}

static void test_publish(void)
{
  good("8080:80", IPPROTO_TCP, "127.0.0.1", 8080, 80);
  good("8080:80/tcp", IPPROTO_TCP, "127.0.0.1", 8080, 80);
  good("5353:53/udp", IPPROTO_UDP, "127.0.0.1", 5353, 53);
  good("5353:53/UDP", IPPROTO_UDP, "127.0.0.1", 5353, 53);
  good("0.0.0.0:1:65535", IPPROTO_TCP, "0.0.0.0", 1, 65535);
  good("192.168.1.5:443:8443/tcp", IPPROTO_TCP, "192.168.1.5", 443, 8443);
  good("[::1]:8080:80", IPPROTO_TCP, "::1", 8080, 80);
  good(":8080:80", IPPROTO_TCP, "127.0.0.1", 8080, 80);

  bad("8080:abc", "publish \"8080:abc\": container port: not a number");
  bad("abc:80", "publish \"abc:80\": host port: not a number");
  bad("8080:0", "publish \"8080:0\": container port: 0 is out of range (1-65535)");
  bad("70000:80", "publish \"70000:80\": host port: 70000 is out of range (1-65535)");
  bad("8080", "publish \"8080\": expected [HOSTIP:]HOSTPORT:CTRPORT[/tcp|/udp]");
  bad("8080:", "publish \"8080:\": container port: missing");
  bad("8080:80/sctp", "publish \"8080:80/sctp\": protocol: expected tcp or udp, got \"sctp\"");
  bad("localhost:8080:80",
      "publish \"localhost:8080:80\": host address: \"localhost\" is not an IP address");
  bad("1.2.3:8080:80", "publish \"1.2.3:8080:80\": host address: \"1.2.3\" is not an IP address");
  bad("-1:80", "publish \"-1:80\": host port: not a number");
}

static struct rrt_spec *spec_with(const char *const *kv)
{
  struct rrt_spec *s = calloc(1, sizeof(*s));
  size_t n = 0;
  while (kv[2 * n])
    n++;
  s->annotations = calloc(n + 1, sizeof(*s->annotations));
  for (size_t i = 0; i < n; i++) {
    s->annotations[i].key = strdup(kv[2 * i]);
    s->annotations[i].value = strdup(kv[2 * i + 1]);
  }
  s->n_annotations = n;
  return s;
}

static void spec_drop(struct rrt_spec *s)
{
  for (size_t i = 0; i < s->n_annotations; i++) {
    free(s->annotations[i].key);
    free(s->annotations[i].value);
  }
  free(s->annotations);
  free(s);
}

static void test_defaults(void)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_net_config c;
  const char *none[] = {NULL};
  struct rrt_spec *s = spec_with(none);
  ok(rrt_net_config_build(s, NULL, NULL, 0, NULL, 0, &c, &err) == 0, "empty config builds");
  is_int(c.mode, RRT_NET_DEFAULT, "  mode stays default for the caller to decide");
  is_int(c.mtu, 65520, "  mtu 65520");
  ok(!c.ipv6 && !c.host_loopback && !c.ports_via_slirp, "  ipv6, host loopback, slirp ports off");
  ok(!c.outbound_via_slirp, "  the container's own connections by the fast path");
  is_str(c.cidr, "10.0.2.0/24", "  cidr 10.0.2.0/24");
  is_int(c.n_ports, 0, "  no ports");
  rrt_net_config_free(&c);
  ok(rrt_net_config_build(NULL, "none", NULL, 0, NULL, 0, &c, &err) == 0 && c.mode == RRT_NET_NONE,
     "no spec at all, --network none");
  rrt_net_config_free(&c);
  spec_drop(s);
}

static void test_annotations(void)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_net_config c;
  const char *kv[] = {"rootlessrt.network",
                      "slirp",
                      "rootlessrt.publish",
                      "8080:80/tcp, 127.0.0.1:5353:53/udp",
                      "rootlessrt.mtu",
                      "1500",
                      "rootlessrt.ipv6",
                      "true",
                      "rootlessrt.host-loopback",
                      "true",
                      "rootlessrt.cidr",
                      "10.10.0.0/16",
                      "rootlessrt.ports-via",
                      "slirp",
                      "rootlessrt.outbound-via",
                      "slirp",
                      NULL};
  struct rrt_spec *s = spec_with(kv);
  int r = rrt_net_config_build(s, NULL, NULL, 0, NULL, 0, &c, &err);
  ok(r == 0, "annotations build");
  if (r < 0) {
    printf("#   %s\n", rrt_error_msg(&err));
    rrt_error_clear(&err);
    spec_drop(s);
    return;
  }
  is_int(c.mode, RRT_NET_SLIRP, "  network slirp");
  is_int(c.n_ports, 2, "  two ports");
  is_int(c.ports[1].proto, IPPROTO_UDP, "  second is udp");
  is_int(c.ports[1].container_port, 53, "  to 53");
  is_int(c.mtu, 1500, "  mtu 1500");
  ok(c.ipv6 && c.host_loopback && c.ports_via_slirp, "  ipv6, host loopback, slirp ports on");
  ok(c.outbound_via_slirp, "  rootlessrt.outbound-via=slirp");
  is_str(c.cidr, "10.10.0.0/16", "  cidr");
  char *rc = rrt_net_resolv_conf(&c);
  is_str(rc, "nameserver 10.10.0.3\nnameserver fd00::3\n", "  resolv.conf follows cidr and ipv6");
  free(rc);
  rrt_net_config_free(&c);

  /* The command line wins: mode and the whole port list. */
  char *cli[] = {"9000:90"};
  r = rrt_net_config_build(s, "slirp", cli, 1, NULL, 0, &c, &err);
  ok(r == 0 && c.n_ports == 1 && c.ports[0].host_port == 9000,
     "-p replaces the annotation's port list");
  rrt_net_config_free(&c);
  r = rrt_net_config_build(s, "none", NULL, 0, NULL, 0, &c, &err);
  ok(r < 0, "--network none with published ports is refused");
  is_str(err.msg, "publish: ports can only be published with network slirp, not none",
         "  and says why");
  rrt_error_clear(&err);
  spec_drop(s);

  const char *implied[] = {"rootlessrt.publish", "8080:80", NULL};
  s = spec_with(implied);
  ok(rrt_net_config_build(s, NULL, NULL, 0, NULL, 0, &c, &err) == 0 && c.mode == RRT_NET_SLIRP,
     "publishing a port implies network slirp");
  char *rc2 = rrt_net_resolv_conf(&c);
  is_str(rc2, "nameserver 10.0.2.3\n", "default resolv.conf");
  free(rc2);
  rrt_net_config_free(&c);
  spec_drop(s);
}

static void bad_annotation(const char *key, const char *value, const char *msg)
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_net_config c;
  const char *kv[] = {key, value, NULL};
  struct rrt_spec *s = spec_with(kv);
  ok(rrt_net_config_build(s, NULL, NULL, 0, NULL, 0, &c, &err) < 0, "%s=%s is refused", key, value);
  is_str(err.msg, msg, "  message");
  rrt_error_clear(&err);
  spec_drop(s);
}

static void test_bad_annotations(void)
{
  bad_annotation("rootlessrt.network", "bridge",
                 "annotation rootlessrt.network: expected slirp, none or host, got \"bridge\"");
  bad_annotation("rootlessrt.mtu", "65536",
                 "annotation rootlessrt.mtu: expected a number from 68 to 65521, got \"65536\"");
  bad_annotation("rootlessrt.ipv6", "yes",
                 "annotation rootlessrt.ipv6: expected true or false, got \"yes\"");
  bad_annotation("rootlessrt.cidr", "10.0.2.1/24",
                 "annotation rootlessrt.cidr: cidr \"10.0.2.1/24\": host bits are set (did you "
                 "mean 10.0.2.0/24?)");
  bad_annotation("rootlessrt.cidr", "10.0.2.0/28",
                 "annotation rootlessrt.cidr: cidr \"10.0.2.0/28\": prefix: expected a number "
                 "from 1 to 25");
  bad_annotation("rootlessrt.ports-via", "pasta",
                 "annotation rootlessrt.ports-via: expected splice or slirp, got \"pasta\"");
  bad_annotation("rootlessrt.outbound-via", "pasta",
                 "annotation rootlessrt.outbound-via: expected splice or slirp, got \"pasta\"");
  bad_annotation("rootlessrt.publish", "8080:80,8080:81",
                 "publish 127.0.0.1:8080/tcp: host port given twice");
  bad_annotation("rootlessrt.publish", "8080:x",
                 "annotation rootlessrt.publish: publish \"8080:x\": container port: not a "
                 "number");
}

static void test_cli_options(void)
{
  struct rrt_net_config c;
  struct rrt_error err = RRT_ERROR_INIT;
  char *opts[] = {"mtu=1500",         "ipv6=true",       "host-loopback=true",
                  "cidr=10.9.0.0/24", "ports-via=slirp", "outbound-via=slirp"};
  ok(rrt_net_config_build(NULL, "slirp", NULL, 0, opts, 6, &c, &err) == 0, "flags build: %s",
     rrt_error_msg(&err));
  ok(c.outbound_via_slirp, "--network-opt outbound-via=slirp");
  is_int(c.mtu, 1500, "--mtu");
  ok(c.ipv6 && c.host_loopback && c.ports_via_slirp, "--ipv6 --host-loopback --ports-via slirp");
  is_str(c.cidr, "10.9.0.0/24", "--cidr");
  rrt_net_config_free(&c);
  char *bad[] = {"mtu=12"};
  ok(rrt_net_config_build(NULL, "slirp", NULL, 0, bad, 1, &c, &err) < 0 && err.msg &&
         strstr(err.msg, "--mtu: expected a number"),
     "a bad --mtu names the flag: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  char *unknown[] = {"speed=fast"};
  ok(rrt_net_config_build(NULL, "slirp", NULL, 0, unknown, 1, &c, &err) < 0 && err.msg &&
         strstr(err.msg, "unknown network option"),
     "an unknown --network-opt is an error: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  is_int(c.udp_idle_s, 60, "UDP flows close after 60 s idle by default");
  char *idle[] = {"udp-idle-timeout=5"};
  ok(rrt_net_config_build(NULL, "slirp", NULL, 0, idle, 1, &c, &err) == 0 && c.udp_idle_s == 5,
     "--network-opt udp-idle-timeout=5: %s", rrt_error_msg(&err));
  rrt_net_config_free(&c);
  char *idle0[] = {"udp-idle-timeout=0"};
  ok(rrt_net_config_build(NULL, "slirp", NULL, 0, idle0, 1, &c, &err) < 0 && err.msg &&
         strstr(err.msg, "udp-idle-timeout: expected seconds from 1 to 86400, got \"0\""),
     "udp-idle-timeout=0 is refused: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  char *noeq[] = {"mtu"};
  ok(rrt_net_config_build(NULL, "slirp", NULL, 0, noeq, 1, &c, &err) < 0 && err.msg &&
         strstr(err.msg, "KEY=VALUE"),
     "--network-opt without = is an error");
  rrt_error_clear(&err);
}

int main(void)
{
  test_cli_options();
  test_publish();
  test_defaults();
  test_annotations();
  test_bad_annotations();
  return tap_done();
}

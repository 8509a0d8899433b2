/* cmd_create.c: `create` and `run`: parse flags, call the lifecycle. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/check.h"
#include "rootlessrt/cmd.h"
#include "rootlessrt/image.h"
#include "rootlessrt/util.h"

enum {
  OPT_PID_FILE = 256,
  OPT_CONSOLE_SOCKET,
  OPT_PRESERVE_FDS,
  OPT_NO_PIVOT,
  OPT_NO_NEW_KEYRING,
  OPT_NETWORK,
  OPT_NETWORK_OPT,
  OPT_MTU,
  OPT_IPV6,
  OPT_HOST_LOOPBACK,
  OPT_CIDR,
  OPT_PORTS_VIA,
  OPT_HELP,
  OPT_IGNORED_ARG,
  OPT_IGNORED_FLAG,
  OPT_KEEP,
};

static const struct option create_options[] = {
    {"bundle", required_argument, NULL, 'b'},
    {"pid-file", required_argument, NULL, OPT_PID_FILE},
    {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
    {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
    {"no-pivot", no_argument, NULL, OPT_NO_PIVOT},
    {"no-new-keyring", no_argument, NULL, OPT_NO_NEW_KEYRING},
    {"detach", no_argument, NULL, 'd'},
    {"network", required_argument, NULL, OPT_NETWORK},
    {"publish", required_argument, NULL, 'p'},
    {"network-opt", required_argument, NULL, OPT_NETWORK_OPT},
    {"mtu", required_argument, NULL, OPT_MTU},
    {"ipv6", no_argument, NULL, OPT_IPV6},
    {"host-loopback", no_argument, NULL, OPT_HOST_LOOPBACK},
    {"cidr", required_argument, NULL, OPT_CIDR},
    {"ports-via", required_argument, NULL, OPT_PORTS_VIA},
    {"help", no_argument, NULL, 'h'},
    /* runc flags engines may pass that have no meaning here. */
    {"no-subreaper", no_argument, NULL, OPT_IGNORED_FLAG},
    {"keep", no_argument, NULL, OPT_KEEP},
    {"criu", required_argument, NULL, OPT_IGNORED_ARG},
    {NULL, 0, NULL, 0},
};

static void add_net_opt(struct rrt_create_opts *o, char *kv)
{
  o->net_opts = xrealloc(o->net_opts, (o->n_net_opts + 1) * sizeof(char *));
  o->net_opts[o->n_net_opts++] = kv;
}

static void opts_free(struct rrt_create_opts *o)
{
  free(o->publish);
  for (size_t i = 0; i < o->n_net_opts; i++)
    free(o->net_opts[i]);
  free(o->net_opts);
}

static int parse(int argc, char **argv, bool run, struct rrt_create_opts *o, bool *help,
                 struct rrt_error *err)
{
  const char *verb = argv[0];
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, run ? "+:b:dp:h" : "+:b:p:h", create_options)) != -1) {
    switch (c) {
    case 'b':
      o->bundle = optarg;
      break;
    case OPT_PID_FILE:
      o->pid_file = optarg;
      break;
    case OPT_CONSOLE_SOCKET:
      o->console_socket = optarg;
      break;
    case OPT_PRESERVE_FDS: {
      unsigned long long n;
      if (rrt_parse_u64(optarg, &n) < 0 || n > 4096)
        return rrt_error_msgf(err, EINVAL, "%s --preserve-fds: \"%s\" is not a number of fds", verb,
                              optarg);
      o->preserve_fds = (int)n;
      break;
    }
    case OPT_NO_PIVOT:
      o->no_pivot = true;
      break;
    case OPT_NO_NEW_KEYRING:
      o->no_new_keyring = true;
      break;
    case 'd':
      if (!run)
        return rrt_error_msgf(err, EINVAL, "create: --detach is a flag of run");
      o->detach = true;
      break;
    case OPT_NETWORK:
      o->network = optarg;
      break;
    case 'p':
      o->publish = xrealloc(o->publish, (o->n_publish + 1) * sizeof(char *));
      o->publish[o->n_publish++] = optarg;
      break;
    case OPT_NETWORK_OPT:
      add_net_opt(o, xstrdup(optarg));
      break;
    case OPT_MTU:
      add_net_opt(o, xasprintf("mtu=%s", optarg));
      break;
    case OPT_IPV6:
      add_net_opt(o, xstrdup("ipv6=true"));
      break;
    case OPT_HOST_LOOPBACK:
      add_net_opt(o, xstrdup("host-loopback=true"));
      break;
    case OPT_CIDR:
      add_net_opt(o, xasprintf("cidr=%s", optarg));
      break;
    case OPT_PORTS_VIA:
      add_net_opt(o, xasprintf("ports-via=%s", optarg));
      break;
    case 'h':
      *help = true;
      return 0;
    case OPT_KEEP: /* runc's run --keep: not deleted once it exits */
      if (!run)
        return rrt_error_msgf(err, EINVAL, "create: --keep is a flag of run");
      o->keep = true;
      break;
    case OPT_IGNORED_ARG:
    case OPT_IGNORED_FLAG:
      break;
    case ':':
      return rrt_error_msgf(err, EINVAL, "%s: %s needs a value", verb, argv[optind - 1]);
    default:
      return rrt_error_msgf(err, EINVAL, "%s: unknown flag %s (see `rootlessrt help %s`)", verb,
                            argv[optind - 1], verb);
    }
  }
  if (o->keep && o->detach)
    return rrt_error_msgf(err, EINVAL,
                          "run: --keep and --detach: a detached container is kept until delete "
                          "already");
  o->listen_fds = rrt_listen_fds_from_env();
  return rrt_cmd_one_id(argc, argv, optind, &o->id, err);
}

int rrt_cmd_create(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  struct rrt_create_opts o = {0};
  bool help = false;
  int ret = parse(argc, argv, false, &o, &help, err);
  if (ret == 0 && help)
    rrt_cmd_usage("create");
  else if (ret == 0 && (ret = rrt_container_create(g, &o, err)) < 0)
    rrt_check_explain(err);
  opts_free(&o);
  return ret;
}

int rrt_cmd_run(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  if (rrt_run_is_desktop(argc, argv)) {
    int r = rrt_cmd_run_image(g, argc, argv, err);
    if (r < 0)
      rrt_check_explain(err);
    return r;
  }
  struct rrt_create_opts o = {0};
  bool help = false;
  int status = 0;
  int ret = parse(argc, argv, true, &o, &help, err);
  if (ret == 0 && help) {
    rrt_cmd_usage("run");
  } else if (ret == 0) {
    o.foreground = !o.detach;
    if ((ret = rrt_container_run(g, &o, &status, err)) < 0)
      rrt_check_explain(err);
  }
  if (ret < 0)
    rrt_run_note_other_reading(argc, argv, NULL, err);
  opts_free(&o);
  return ret < 0 ? -1 : status;
}

/* cmd_run_image.c: the desktop form of `run` (an image or a root directory, and a command):
 * parse podman-like flags, call image/run.c. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/image.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

enum {
  OPT_RM = 256,
  OPT_NAME,
  OPT_ENV_FILE,
  OPT_TMPFS,
  OPT_NETWORK,
  OPT_HOSTNAME,
  OPT_READ_ONLY,
  OPT_READ_ONLY_TMPFS,
  OPT_ENTRYPOINT,
  OPT_CAP_ADD,
  OPT_CAP_DROP,
  OPT_SECURITY_OPT,
  OPT_USERNS,
  OPT_OVERLAY,
  OPT_STORAGE,
  OPT_PRINT_CONFIG,
  OPT_PLATFORM,
  OPT_AUTHFILE,
  OPT_TLS_VERIFY,
  OPT_PULL,
};

static const struct option run_options[] = {
    {"rm", no_argument, NULL, OPT_RM},
    {"detach", no_argument, NULL, 'd'},
    {"interactive", no_argument, NULL, 'i'},
    {"tty", no_argument, NULL, 't'},
    {"name", required_argument, NULL, OPT_NAME},
    {"env", required_argument, NULL, 'e'},
    {"env-file", required_argument, NULL, OPT_ENV_FILE},
    {"workdir", required_argument, NULL, 'w'},
    {"user", required_argument, NULL, 'u'},
    {"volume", required_argument, NULL, 'v'},
    {"tmpfs", required_argument, NULL, OPT_TMPFS},
    {"publish", required_argument, NULL, 'p'},
    {"network", required_argument, NULL, OPT_NETWORK},
    {"hostname", required_argument, NULL, OPT_HOSTNAME},
    {"read-only", no_argument, NULL, OPT_READ_ONLY},
    {"read-only-tmpfs", optional_argument, NULL, OPT_READ_ONLY_TMPFS},
    {"entrypoint", required_argument, NULL, OPT_ENTRYPOINT},
    {"cap-add", required_argument, NULL, OPT_CAP_ADD},
    {"cap-drop", required_argument, NULL, OPT_CAP_DROP},
    {"security-opt", required_argument, NULL, OPT_SECURITY_OPT},
    {"userns", required_argument, NULL, OPT_USERNS},
    {"overlay", required_argument, NULL, OPT_OVERLAY},
    {"storage", required_argument, NULL, OPT_STORAGE},
    {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
    {"platform", required_argument, NULL, OPT_PLATFORM},
    {"authfile", required_argument, NULL, OPT_AUTHFILE},
    {"tls-verify", optional_argument, NULL, OPT_TLS_VERIFY},
    {"pull", required_argument, NULL, OPT_PULL},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void add(struct rrt_kv_list *l, char *v)
{
  l->v = xrealloc(l->v, (l->n + 1) * sizeof(char *));
  l->v[l->n++] = v;
}

static void opts_free(struct rrt_run_image_opts *o)
{
  struct rrt_kv_list *lists[] = {&o->env,     &o->env_files, &o->volumes,  &o->tmpfs,
                                 &o->publish, &o->cap_add,   &o->cap_drop, &o->security_opts};
  for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
    free(lists[i]->v);
}

static int on_value(int c, struct rrt_run_image_opts *o, struct rrt_error *err)
{
  enum rrt_overlay_mode mode;
  switch (c) {
  case OPT_NAME:
    o->name = optarg;
    break;
  case 'e':
    add(&o->env, optarg);
    break;
  case OPT_ENV_FILE:
    add(&o->env_files, optarg);
    break;
  case 'w':
    o->workdir = optarg;
    break;
  case 'u':
    o->user = optarg;
    break;
  case 'v':
    add(&o->volumes, optarg);
    break;
  case OPT_TMPFS:
    add(&o->tmpfs, optarg);
    break;
  case 'p':
    add(&o->publish, optarg);
    break;
  case OPT_NETWORK:
    o->network = optarg;
    break;
  case OPT_HOSTNAME:
    o->hostname = optarg;
    break;
  case OPT_ENTRYPOINT:
    o->entrypoint = optarg, o->entrypoint_set = true;
    break;
  case OPT_CAP_ADD:
    add(&o->cap_add, optarg);
    break;
  case OPT_CAP_DROP:
    add(&o->cap_drop, optarg);
    break;
  case OPT_SECURITY_OPT:
    add(&o->security_opts, optarg);
    break;
  case OPT_STORAGE:
    o->storage = optarg;
    break;
  case OPT_USERNS:
    if (strcmp(optarg, "keep-id") != 0 && strcmp(optarg, "auto") != 0 && strcmp(optarg, "") != 0)
      return rrt_error_msgf(err, EINVAL, "run: --userns \"%s\": only keep-id is supported", optarg);
    o->keep_id = strcmp(optarg, "keep-id") == 0;
    break;
  case OPT_READ_ONLY_TMPFS:
    if (!optarg || strcmp(optarg, "true") == 0)
      o->no_read_only_tmpfs = false;
    else if (strcmp(optarg, "false") == 0)
      o->no_read_only_tmpfs = true;
    else
      return rrt_error_msgf(err, EINVAL, "run: --read-only-tmpfs=\"%s\": true or false", optarg);
    break;
  case OPT_PLATFORM:
  case OPT_AUTHFILE:
  case OPT_TLS_VERIFY:
    return rrt_pull_opt_parse(c == OPT_PLATFORM   ? "platform"
                              : c == OPT_AUTHFILE ? "authfile"
                                                  : "tls-verify",
                              optarg, &o->pull, err);
  case OPT_PULL:
    o->pull.policy_set = true;
    return rrt_pull_policy_parse(optarg, &o->pull.policy, err) < 0 ? rrt_error_wrap(err, "run") : 0;
  case OPT_OVERLAY:
    if (rrt_overlay_mode_parse(optarg, &mode, err) < 0)
      return rrt_error_wrap(err, "run: --overlay");
    o->overlay = optarg;
    break;
  default:
    return 1;
  }
  return 0;
}

static int parse(int argc, char **argv, struct rrt_run_image_opts *o, bool *help,
                 struct rrt_error *err)
{
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, "+:dite:w:u:v:p:h", run_options)) != -1) {
    int r = on_value(c, o, err);
    if (r < 0)
      return -1;
    if (r == 0)
      continue;
    switch (c) {
    case OPT_RM:
      o->rm = true;
      break;
    case 'd':
      o->detach = true;
      break;
    case 'i':
      o->interactive = true;
      break;
    case 't':
      o->tty = o->tty_set = true;
      break;
    case OPT_READ_ONLY:
      o->read_only = true;
      break;
    case OPT_PRINT_CONFIG:
      o->print_config = true;
      break;
    case 'h':
      *help = true;
      return 0;
    case ':':
      return rrt_error_msgf(err, EINVAL, "run: %s needs a value", argv[optind - 1]);
    default:
      return rrt_error_msgf(err, EINVAL, "run: unknown flag %s (see `rootlessrt help run`)",
                            argv[optind - 1]);
    }
  }
  if (optind >= argc)
    return rrt_error_msgf(err, EINVAL, "run: no image or root directory");
  o->ref = argv[optind];
  o->cmd = argv + optind + 1;
  o->n_cmd = (size_t)(argc - optind - 1);
  /* Default: a terminal when stdin is one and the container is not detached (-t forces it). */
  if (!o->tty_set && !o->detach && isatty(0) && isatty(1))
    o->tty = true;
  return 0;
}

int rrt_cmd_run_image(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  struct rrt_run_image_opts o = {0};
  bool help = false;
  int status = 0;
  int ret = parse(argc, argv, &o, &help, err);
  if (ret == 0 && help)
    rrt_cmd_usage("run");
  else if (ret == 0)
    ret = rrt_image_run(g, &o, &status, err);
  opts_free(&o);
  if (ret < 0 && status > 1) {
    /* Not run: the error, with podman's status for the command (127, 126). */
    rrt_log(RRT_LOG_ERROR, "%s", rrt_error_msg(err));
    rrt_error_clear(err);
    return status;
  }
  return ret < 0 ? -1 : status;
}

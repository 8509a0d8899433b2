/* cmd_exec.c: `exec [flags] ID [CMD ARGS...]`: parse flags, run rrt_exec. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/log.h"
#include "rootlessrt/util.h"

enum {
  OPT_CONSOLE_SOCKET = 256,
  OPT_PID_FILE,
  OPT_CWD,
  OPT_CAP,
  OPT_NO_NEW_PRIVS,
  OPT_PRESERVE_FDS,
  OPT_CGROUP,
  OPT_PROCESS,
  OPT_IGNORE_PAUSED,
  OPT_ADDITIONAL_GIDS,
  OPT_IGNORED,
};

struct exec_flags {
  struct rrt_exec_opts o;
  char **env;
  size_t n_env;
  char **caps;
  size_t n_caps;
  char **cgroups;
  size_t n_cgroups;
  char **gids;
  size_t n_gids;
};

static void push(char ***v, size_t *n, const char *s)
{
  *v = xrealloc(*v, (*n + 2) * sizeof(char *));
  (*v)[(*n)++] = (char *)s;
  (*v)[*n] = NULL;
}

static int exec_flag(int c, void *arg, struct rrt_error *err)
{
  struct exec_flags *f = arg;
  switch (c) {
  case OPT_PROCESS:
  case 'p':
    f->o.process_file = optarg;
    break;
  case 't':
    f->o.tty = true;
    f->o.tty_set = true;
    break;
  case OPT_CONSOLE_SOCKET:
    f->o.console_socket = optarg;
    break;
  case 'd':
    f->o.detach = true;
    break;
  case OPT_PID_FILE:
    f->o.pid_file = optarg;
    break;
  case 'e':
    push(&f->env, &f->n_env, optarg);
    break;
  case OPT_CWD:
    f->o.cwd = optarg;
    break;
  case 'u':
    f->o.user = optarg;
    break;
  case OPT_CAP:
  case 'c':
    push(&f->caps, &f->n_caps, optarg);
    break;
  case OPT_NO_NEW_PRIVS:
    f->o.no_new_privs = true;
    break;
  case OPT_PRESERVE_FDS: {
    long long n;
    if (rrt_parse_i64(optarg, &n) < 0 || n < 0 || n > 65536)
      return rrt_error_msgf(err, EINVAL, "exec: --preserve-fds \"%s\": not a count", optarg);
    f->o.preserve_fds = (int)n;
    break;
  }
  case OPT_CGROUP:
    push(&f->cgroups, &f->n_cgroups, optarg);
    break;
  case OPT_ADDITIONAL_GIDS:
    push(&f->gids, &f->n_gids, optarg);
    break;
  case OPT_IGNORE_PAUSED:
    f->o.ignore_paused = true;
    break;
  case OPT_IGNORED:
    if (optarg && *optarg)
      rrt_warn("exec: LSM labels are not supported by rootlessrt: \"%s\" ignored", optarg);
    break;
  }
  return 0;
}

int rrt_cmd_exec(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {
      {"process", required_argument, NULL, 'p'},
      {"tty", no_argument, NULL, 't'},
      {"console-socket", required_argument, NULL, OPT_CONSOLE_SOCKET},
      {"detach", no_argument, NULL, 'd'},
      {"pid-file", required_argument, NULL, OPT_PID_FILE},
      {"env", required_argument, NULL, 'e'},
      {"cwd", required_argument, NULL, OPT_CWD},
      {"user", required_argument, NULL, 'u'},
      {"cap", required_argument, NULL, 'c'},
      {"no-new-privs", no_argument, NULL, OPT_NO_NEW_PRIVS},
      {"preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS},
      {"cgroup", required_argument, NULL, OPT_CGROUP},
      {"ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED},
      {"additional-gids", required_argument, NULL, OPT_ADDITIONAL_GIDS},
      {"apparmor", required_argument, NULL, OPT_IGNORED},
      {"process-label", required_argument, NULL, OPT_IGNORED},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  struct exec_flags f = {0};
  bool help = false;
  int ret = -1;
  if (rrt_cmd_parse_flags(argc, argv, "+p:tde:u:c:h", opts, exec_flag, &f, &help, err) < 0)
    goto out;
  if (help) {
    rrt_cmd_usage("exec");
    ret = 0;
    goto out;
  }
  if (optind >= argc) {
    rrt_error_msgf(err, EINVAL, "exec: a container id is required");
    goto out;
  }
  f.o.id = argv[optind];
  f.o.args = argv + optind + 1;
  f.o.env = f.env;
  f.o.caps = f.caps;
  f.o.cgroups = f.cgroups;
  f.o.additional_gids = f.gids;
  if (f.o.process_file && f.o.args[0]) {
    rrt_error_msgf(err, EINVAL, "exec: --process and a command line cannot be used together");
    goto out;
  }
  if (!f.o.process_file && !f.o.args[0]) {
    rrt_error_msgf(err, EINVAL, "exec: a command (or --process FILE) is required");
    goto out;
  }
  ret = rrt_exec(g, &f.o, err);
out:
  free(f.env);
  free(f.caps);
  free(f.cgroups);
  free(f.gids);
  return ret;
}

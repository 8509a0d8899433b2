/* cmd_kill.c: `kill [--all] ID [SIGNAL]`. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/util.h"

static int kill_flag(int c, void *arg, struct rrt_error *err)
{
  if (c == 'a')
    *(bool *)arg = true;
  return 0;
}

int rrt_cmd_kill(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {
      {"all", no_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  bool help = false, all = false;
  if (rrt_cmd_parse_flags(argc, argv, "+ah", opts, kill_flag, &all, &help, err) < 0)
    return -1;
  if (help) {
    rrt_cmd_usage("kill");
    return 0;
  }
  if (optind >= argc)
    return rrt_error_msgf(err, EINVAL, "kill: a container id is required");
  const char *id = argv[optind];
  int sig = SIGTERM;
  if (optind + 1 < argc) {
    /* Signal 0 sends nothing: the liveness check engines make (runc, kill(2)). */
    const char *name = argv[optind + 1];
    sig = strcmp(name, "0") == 0 ? 0 : rrt_signal_parse(name);
    if (sig < 0)
      return rrt_error_msgf(err, EINVAL, "kill: unknown signal \"%s\"", argv[optind + 1]);
    if (optind + 2 < argc)
      return rrt_error_msgf(err, EINVAL, "kill: unexpected argument \"%s\"", argv[optind + 2]);
  }
  return rrt_container_kill(g, id, sig, all, err);
}

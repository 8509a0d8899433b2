/* cmd_start.c: `start ID`: release a created container's init. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/util.h"

int rrt_cmd_start(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  bool help = false;
  const char *id = NULL;
  if (rrt_cmd_parse_flags(argc, argv, "+h", rrt_cmd_help_only, rrt_cmd_no_flags, NULL, &help, err) <
      0)
    return -1;
  if (help) {
    rrt_cmd_usage("start");
    return 0;
  }
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0)
    return -1;
  return rrt_container_start(g, id, err);
}

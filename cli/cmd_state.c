/* cmd_state.c: `state ID`: print the OCI state JSON. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/util.h"

int rrt_cmd_state(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  bool help = false;
  const char *id = NULL;
  if (rrt_cmd_parse_flags(argc, argv, "+h", rrt_cmd_help_only, rrt_cmd_no_flags, NULL, &help, err) <
      0)
    return -1;
  if (help) {
    rrt_cmd_usage("state");
    return 0;
  }
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0)
    return -1;
  char *json = NULL;
  if (rrt_container_state(g, id, &json, err) < 0)
    return -1;
  printf("%s\n", json);
  free(json);
  return 0;
}

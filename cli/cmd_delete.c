/* cmd_delete.c: `delete [--force] ID`. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/image.h"
#include "rootlessrt/util.h"

static int delete_flag(int c, void *arg, struct rrt_error *err)
{
  if (c == 'f')
    *(bool *)arg = true;
  return 0;
}

int rrt_cmd_delete(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {
      {"force", no_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  bool help = false, force = false;
  const char *id = NULL;
  if (rrt_cmd_parse_flags(argc, argv, "+fh", opts, delete_flag, &force, &help, err) < 0)
    return -1;
  if (help) {
    rrt_cmd_usage("delete");
    return 0;
  }
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0)
    return -1;
  if (rrt_container_delete(g, id, force, err) < 0)
    return -1;
  /* A container of the desktop run: its generated bundle (and --rm's upper directory). */
  return rrt_image_forget(g, id, err);
}

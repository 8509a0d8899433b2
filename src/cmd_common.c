/* cmd_common.c: flag-parsing pieces shared by the verbs. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/util.h"

int rrt_cmd_one_id(int argc, char **argv, int first, const char **id, struct rrt_error *err)
{
  if (first >= argc)
    return rrt_error_msgf(err, EINVAL, "%s: a container id is required", argv[0]);
  if (first + 1 < argc)
    return rrt_error_msgf(err, EINVAL, "%s: unexpected argument \"%s\" after the container id",
                          argv[0], argv[first + 1]);
  *id = argv[first];
  return 0;
}

int rrt_cmd_parse_flags(int argc, char **argv, const char *shortopts, const struct option *longopts,
                        int (*on_flag)(int c, void *arg, struct rrt_error *err), void *arg,
                        bool *help, struct rrt_error *err)
{
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
    if (c == 'h') {
      *help = true;
      return 0;
    }
    if (c == '?' || c == ':')
      return rrt_error_msgf(err, EINVAL, "%s: unknown flag %s (see `rootlessrt help %s`)", argv[0],
                            argv[optind - 1], argv[0]);
    if (on_flag(c, arg, err) < 0)
      return -1;
  }
  return 0;
}

int rrt_cmd_no_flags(int c, void *arg, struct rrt_error *err)
{
  return 0;
}

const struct option rrt_cmd_help_only[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

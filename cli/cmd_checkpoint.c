/* cmd_checkpoint.c: `checkpoint` and `restore`: runc's verbs, which rootlessrt does not support
 * (no CRIU): a clear error instead of "unknown verb", for engines and users that ask. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/util.h"

/* Whatever runc's flags were given (--image-path, --leave-running, ...), nothing is done. */
static int unsupported(const char *verb, int argc, char **argv, struct rrt_error *err)
{
  bool help = false;
  if (rrt_cmd_listing)
    return rrt_cmd_parse_flags(argc, argv, "+h", rrt_cmd_help_only, rrt_cmd_no_flags, NULL, &help,
                               err);
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      rrt_cmd_usage(verb);
      return 0;
    }
  return rrt_error_msgf(
      err, ENOTSUP, "%s: not supported by rootlessrt (no CRIU support); nothing was done", verb);
}

int rrt_cmd_checkpoint(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  return unsupported("checkpoint", argc, argv, err);
}

int rrt_cmd_restore(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  return unsupported("restore", argc, argv, err);
}

/* cmd_pull.c: `pull [--storage DIR] [--platform P] [--authfile F] [--tls-verify=BOOL] REF`:
 * an image from a registry into the store, for runs to come. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/image.h"

int rrt_cmd_pull(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  (void)g;
  static const struct option opts[] = {
      {"storage", required_argument, NULL, 's'},  {"platform", required_argument, NULL, 'P'},
      {"authfile", required_argument, NULL, 'a'}, {"tls-verify", optional_argument, NULL, 'T'},
      {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
  const char *storage = NULL;
  struct rrt_pull_opts po = {0};
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, "+:h", opts)) != -1) {
    if (c == 's') {
      storage = optarg;
    } else if (c == 'P' || c == 'a' || c == 'T') {
      const char *name = c == 'P' ? "platform" : c == 'a' ? "authfile" : "tls-verify";
      if (rrt_pull_opt_parse(name, optarg, &po, err) < 0)
        return rrt_error_wrap(err, "pull");
    } else if (c == 'h') {
      rrt_cmd_usage("pull");
      return 0;
    } else if (c == ':') {
      return rrt_error_msgf(err, EINVAL, "pull: %s needs a value", argv[optind - 1]);
    } else {
      return rrt_error_msgf(err, EINVAL, "pull: unknown flag %s (see `rootlessrt help pull`)",
                            argv[optind - 1]);
    }
  }
  if (optind >= argc)
    return rrt_error_msgf(err, EINVAL, "pull: name an image (docker://HOST/NAME:TAG)");
  if (optind + 1 < argc)
    return rrt_error_msgf(err, EINVAL, "pull: unexpected argument \"%s\"", argv[optind + 1]);
  return rrt_pull(argv[optind], &po, storage, err) < 0 ? -1 : 0;
}

/* cmd_spec.c: `spec [--rootless] [-b DIR]`: writes a config.json run accepts. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/cmd.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

int rrt_cmd_spec(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"rootless", no_argument, NULL, 'r'},
                                       {"bundle", required_argument, NULL, 'b'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  bool rootless = !rrt_host_privileged();
  bool explicit_rootless = false;
  const char *bundle = ".";
  optind = 1;
  opterr = 0;
  int c;
  while ((c = rrt_cmd_getopt(argc, argv, "+b:h", opts)) != -1) {
    if (c == 'r')
      explicit_rootless = true;
    else if (c == 'b')
      bundle = optarg;
    else if (c == 'h') {
      rrt_cmd_usage("spec");
      return 0;
    } else
      return rrt_error_msgf(err, EINVAL, "spec: unknown flag %s", argv[optind - 1]);
  }
  if (optind < argc)
    return rrt_error_msgf(err, EINVAL, "spec: unexpected argument \"%s\"", argv[optind]);
  rootless |= explicit_rootless;
  cleanup_free char *path = xasprintf("%s/config.json", bundle);
  cleanup_free char *text = rrt_spec_default_json(rootless);
  cleanup_free char *body = xasprintf("%s\n", text);
  cleanup_close int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST)
    return rrt_error_msgf(err, EEXIST, "spec: %s exists already: remove it first", path);
  if (fd < 0)
    return rrt_error_errno(err, "spec: open %s", path);
  /* Made here and not written whole (a full disk): a cut config.json would only be refused by
   * create, and by the next spec as existing already. */
  if (rrt_write_all(fd, body, strlen(body)) < 0) {
    int e = errno;
    unlink(path);
    return rrt_error_set(err, e, "spec: write %s", path);
  }
  return 0;
}

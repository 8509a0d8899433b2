/* cmd_update.c: `update [-r|--resources FILE|-] ID`: resource limits through
 * the container's cgroup, when it has a delegated one. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/cmd.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

static int update_flag(int c, void *arg, struct rrt_error *err)
{
  if (c == 'r')
    *(const char **)arg = optarg;
  return 0;
}

int rrt_cmd_update(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  static const struct option opts[] = {{"resources", required_argument, NULL, 'r'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  const char *file = NULL;
  bool help = false;
  const char *id = NULL;
  if (rrt_cmd_parse_flags(argc, argv, "+r:h", opts, update_flag, &file, &help, err) < 0)
    return -1;
  if (help) {
    rrt_cmd_usage("update");
    return 0;
  }
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0)
    return -1;
  if (!file)
    return rrt_error_msgf(err, EINVAL,
                          "update: --resources FILE (or - for stdin) is required: rootlessrt takes "
                          "the limits as a linux.resources JSON object");
  cleanup_free char *text = NULL;
  if (strcmp(file, "-") == 0 ? rrt_read_fd(STDIN_FILENO, &text, NULL, err) < 0
                             : rrt_read_file(file, &text, NULL, err) < 0)
    return rrt_error_wrap(err, "update: --resources");
  struct rrt_live l;
  struct rrt_cgroup cg = {0};
  int ret = -1;
  if (rrt_live_load(g, id, true, true, false, &l, err) < 0)
    goto out;
  if (strcmp(rrt_state_status(&l.st), "stopped") == 0) {
    rrt_error_msgf(err, ESRCH, "update: container \"%s\" is not running", id);
    goto out;
  }
  /* Nothing is written unless everything can be: the error names what cannot. Device rules
   * only as real root, who set them at create. */
  rrt_cgroup_load(&l.st, &cg);
  bool devices = rrt_host_privileged() && rrt_cgroup_has_device_rules(text);
  if (rrt_cgroup_update(&cg, text, devices, err) < 0) {
    rrt_error_wrap(err, "update: container \"%s\"", id);
    goto out;
  }
  ret = 0;
out:
  rrt_cgroup_free(&cg);
  rrt_live_free(&l);
  return ret;
}

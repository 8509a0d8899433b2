/* cmd_pause.c: `pause ID` and `resume ID` through the cgroup freezer (v1 freezer.state or v2
 * cgroup.freeze). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/cmd.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/util.h"

static int freeze(const struct rrt_global *g, int argc, char **argv, bool on, struct rrt_error *err)
{
  const char *verb = argv[0];
  bool help = false;
  const char *id = NULL;
  if (rrt_cmd_parse_flags(argc, argv, "+h", rrt_cmd_help_only, rrt_cmd_no_flags, NULL, &help, err) <
      0)
    return -1;
  if (help) {
    rrt_cmd_usage(verb);
    return 0;
  }
  if (rrt_cmd_one_id(argc, argv, optind, &id, err) < 0)
    return -1;
  cleanup_cgroup_target struct rrt_cmd_cgroup_target t = RRT_CMD_CGROUP_TARGET_INIT;
  if (rrt_cmd_cgroup_target_load(g, id, &t, err) < 0)
    return -1;
  const char *status = rrt_state_status(&t.l.st);
  if (strcmp(status, "stopped") == 0)
    return rrt_error_msgf(err, ESRCH, "%s: container \"%s\" is not running", verb, id);
  if (on && strcmp(status, "paused") == 0)
    return rrt_error_msgf(err, EINVAL, "pause: container \"%s\" is already paused", id);
  if (!on && strcmp(status, "paused") != 0)
    return rrt_error_msgf(err, EINVAL, "resume: container \"%s\" is %s, not paused", id, status);
  if (!rrt_cgroup_has_freezer(&t.cg))
    return rrt_error_msgf(err, ENOTSUP,
                          "%s: container \"%s\" has no cgroup: no freezer is available to an "
                          "unprivileged user here (no delegated cgroup v2)",
                          verb, id);
  if (rrt_cgroup_freeze(&t.cg, on, err) < 0)
    return rrt_error_wrap(err, "%s: container \"%s\"", verb, id);
  return 0;
}

int rrt_cmd_pause(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  return freeze(g, argc, argv, true, err);
}

int rrt_cmd_resume(const struct rrt_global *g, int argc, char **argv, struct rrt_error *err)
{
  return freeze(g, argc, argv, false, err);
}

/* delete.c: the delete and state verbs. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/container.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/log.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

int rrt_container_delete_known(const struct rrt_global *g, const char *id, bool force,
                               struct rrt_spec *known, struct rrt_error *err)
{
  struct loaded l;
  int ret = -1;
  if (rrt_load_container(g, id, true, true, known, force, &l, err) < 0) {
    /* --force on a container that does not exist is not an error (runc). */
    if (force && err->errnum == ENOENT && rrt_state_validate_id(id, NULL) == 0) {
      rrt_error_clear(err);
      ret = 0;
    }
    goto out;
  }
  const char *status = l.broken ? "broken" : rrt_state_status(&l.st);
  if (strcmp(status, "stopped") != 0 && !force) {
    rrt_error_msgf(err, EBUSY, "container \"%s\" is %s: stop it first or use delete --force", id,
                   status);
    goto out;
  }
  ret = rrt_loaded_destroy(&l, err);
out:
  rrt_loaded_free(&l);
  return ret;
}

int rrt_container_delete(const struct rrt_global *g, const char *id, bool force,
                         struct rrt_error *err)
{
  return rrt_container_delete_known(g, id, force, NULL, err);
}

/* A container still being created is "creating" (runtime.md); one whose create died or whose
 * state.json is corrupt is an error saying so, and how to remove it. */
int rrt_container_state(const struct rrt_global *g, const char *id, char **json,
                        struct rrt_error *err)
{
  cleanup_free char *root = NULL;
  cleanup_free char *why = NULL;
  struct rrt_state st;
  const char *status = NULL;
  if (rrt_state_root(g->root, false, &root, err) < 0 ||
      rrt_state_inspect(root, id, &st, &status, &why, err) < 0)
    return -1;
  int ret = 0;
  if (strcmp(status, "broken") == 0)
    ret = rrt_error_msgf(err, EUCLEAN, "container \"%s\" is broken: %s", id, why);
  else
    *json = rrt_state_oci_json(&st, status, true);
  rrt_state_free(&st);
  return ret;
}

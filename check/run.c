/* run.c: the order the checks run in (each in host.c, ids.c, kernel.c, storage.c), and freeing
 * their results. */
#include <stdlib.h>
#include <unistd.h>

#include "check_internal.h"
#include "rootlessrt/util.h"

void rrt_check_run(struct rrt_check *c)
{
  if (!c->prefix)
    c->prefix = "";
  c->uid = getuid();
  c->gid = getgid();
  const char *name = rrt_user_name(c->uid);
  c->user = name ? xstrdup(name) : xasprintf("%u", (unsigned)c->uid);
  check_detect_distro(c);
  check_subids(c);
  check_helpers(c);
  check_userns(c);
  check_nested(c);
  check_runtime_dir(c);
  check_cgroups(c);
  check_devices(c);
  check_fuse_overlayfs(c);
  check_net_helpers(c);
  check_storage(c);
}

void rrt_check_free(struct rrt_check *c)
{
  for (size_t i = 0; i < c->n; i++) {
    free(c->items[i].found);
    free(c->items[i].fix);
  }
  free(c->items);
  free(c->distro_id);
  free(c->distro_name);
  free(c->user);
}

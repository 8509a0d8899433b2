/* sysctl.h: linux.sysctl, only ever written inside the container's own namespace for it. */
#ifndef ROOTLESSRT_SYSCTL_H
#define ROOTLESSRT_SYSCTL_H

#include <stdbool.h>
#include <stddef.h>

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/* The CLONE_NEW* namespace a sysctl key belongs to (ipc: fs.mqueue.*, kernel.msg*, kernel.sem,
 * kernel.shm*; net: net.*; uts: kernel.hostname, kernel.domainname); 0 for a key that is not
 * namespaced, -1 for a malformed one (empty, "..", a leading separator). Keys may use '.' or
 * '/' as separators. */
int rrt_sysctl_namespace(const char *key);

/* Which namespaces the container will have: created (ns_flags), or joined by path. */
struct rrt_ns_plan {
  int ns_flags;
  const int *join_types;
  const char *const *join_paths;
  size_t n_join;
};

/* The container has a namespace of that type that is not the runtime's own: a new one, or one
 * joined by a path that names another namespace than /proc/self/ns/<type> and /proc/1/ns/<type>
 * (the host's). */
bool rrt_ns_private(const struct rrt_ns_plan *plan, int type);

/* At create, before anything exists: every linux.sysctl key is namespaced and the container has
 * a namespace of its own for it; hostname and domainname need an own uts namespace. The error
 * names the key and the missing namespace. */
int rrt_sysctl_check(const struct rrt_spec *spec, const struct rrt_ns_plan *plan,
                     struct rrt_error *err);

/* In init, after pivot_root: writes each key under /proc/sys. */
int rrt_sysctl_apply(const struct rrt_spec *spec, struct rrt_error *err);

#endif

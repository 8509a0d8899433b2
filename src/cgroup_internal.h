/* cgroup_internal.h: what src/cgroup*.c share: interface file access and the pieces of create. */
#ifndef ROOTLESSRT_CGROUP_INTERNAL_H
#define ROOTLESSRT_CGROUP_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>

#include "rootlessrt/cgroup.h"

/* Writes value to dir/file (one write, as the kernel wants it). */
int rrt_cg_write(const char *dir, const char *file, const char *value, struct rrt_error *err);
/* dir/file's text without the trailing newline, or NULL. */
char *rrt_cg_read(const char *dir, const char *file);
bool rrt_cg_has(const char *dir, const char *file);

/* linux.resources.devices (an array, or NULL for none) plus the devices every container needs:
 * the v1 devices controller when there is one, else an eBPF program on the v2 directory. */
int rrt_cg_devices_apply(const struct rrt_cgroup *cg, json_object *devices, struct rrt_error *err);

/* The cgroup v2 / v1 hierarchies of this mount namespace (cgroup.c). */
struct rrt_cg_mounts {
  char *v2_mnt, *v2_root;                           /* the cgroup2 mount we see */
  char *v1_mnt[RRT_CG_V1_N], *v1_root[RRT_CG_V1_N]; /* each v1 controller's mount */
};
void rrt_cg_mounts_read(struct rrt_cg_mounts *m);
void rrt_cg_mounts_free(struct rrt_cg_mounts *m);

#endif

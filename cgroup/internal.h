/* cgroup_internal.h: what src/cgroup*.c share: interface file access and the pieces of create. */
#ifndef ROOTLESSRT_CGROUP_INTERNAL_H
#define ROOTLESSRT_CGROUP_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>

#include "rootlessrt/cgroup.h"

/* Writes value to dir/file (one write, as the kernel wants it). */
int rrt_cg_v1_index(const char *name); /* a v1 controller's enum rrt_cg_v1, or -1 (fs.c) */
int rrt_cg_write(const char *dir, const char *file, const char *value, struct rrt_error *err);
/* dir/file's text without the trailing newline, or NULL. */
char *rrt_cg_read(const char *dir, const char *file);
bool rrt_cg_has(const char *dir, const char *file);

/* linux.resources.devices (an array, or NULL for none) plus the devices every container needs:
 * the v1 devices controller when there is one, else an eBPF program on the v2 directory. */
int rrt_cg_devices_apply(const struct rrt_cgroup *cg, json_object *devices, struct rrt_error *err);
/* What the v1 devices controller is given for those rules (the config's and the needed ones):
 * the default ("a" to devices.deny, or to devices.allow when allow_default) and the exception
 * lines ("c 1:3 rwm", never type a), the final policy of the rules computed once. */
struct rrt_cg_v1_plan {
  bool allow_default;
  char **lines; /* NULL-terminated */
  size_t n;
};
int rrt_cg_devices_v1_plan(json_object *devices, struct rrt_cg_v1_plan *p, struct rrt_error *err);
void rrt_cg_v1_plan_free(struct rrt_cg_v1_plan *p);
/* The eBPF program for the same rules (malloc'd instructions). */
struct bpf_insn;
int rrt_cg_devices_program(json_object *devices, struct bpf_insn **insns, size_t *len,
                           struct rrt_error *err);

/* The cgroup v2 / v1 hierarchies of this mount namespace (cgroup.c). */
struct rrt_cg_mounts {
  char *v2_mnt, *v2_root;                           /* the cgroup2 mount we see */
  char *v1_mnt[RRT_CG_V1_N], *v1_root[RRT_CG_V1_N]; /* each v1 controller's mount */
};
void rrt_cg_mounts_read(struct rrt_cg_mounts *m);
void rrt_cg_mounts_free(struct rrt_cg_mounts *m);
/* The directory of cgroup `cg` through a mount (mnt, its root), or NULL when it is not under it. */
char *rrt_cg_dir_of(const char *mnt, const char *root, const char *cg);
/* cgroup v2: every controller dir has, turned on for its children (where it can be). */
void rrt_cg_enable_controllers(const char *dir);

/* The systemd driver (cgroup_systemd.c). create: the scope, init in it, the limits systemd has
 * properties for; *rest the resources left for cgroupfs (NULL: all of them). No bus or no
 * helper: *fallback, one warning, nothing made. */
int rrt_cg_systemd_create(const struct rrt_cgroup_opts *o, pid_t init, struct rrt_cgroup *cg,
                          char **rest, bool *fallback, struct rrt_error *err);
/* update: *rest (when not NULL) as above; with apply, the unit properties are set
 * (SetUnitProperties: systemd checks every one before it changes any). */
int rrt_cg_systemd_update(const struct rrt_cgroup *cg, const char *json, bool apply, char **rest,
                          struct rrt_error *err);
/* delete: StopUnit (gone already is fine). */
void rrt_cg_systemd_stop(const struct rrt_cgroup *cg);

#endif

/* cgroup.h: a container's own cgroup v2 directory, when the caller has a delegated one. */
#ifndef ROOTLESSRT_CGROUP_H
#define ROOTLESSRT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rootlessrt/error.h"

/*
 * At create, with init blocked: when the caller's own cgroup v2 directory is
 * writable by the caller (a delegated subtree), makes the child
 * "rootlessrt-<id>" in it and moves init there; *path is then its absolute
 * directory (malloc'd). Otherwise (disabled, no cgroup2 mount, not delegated)
 * *path is NULL, a debug line says why, and 0 is returned: an unprivileged
 * user without delegation simply has no cgroup. Negative only when a
 * delegated cgroup exists but the container's could not be set up.
 */
int rrt_cgroup_create(const char *id, pid_t init, bool disabled, char **path,
                      struct rrt_error *err);

/* The caller's own cgroup v2 directory through a cgroup2 mount (malloc'd), or NULL. */
char *rrt_cgroup_own_dir(void);

/* At delete: cgroup.kill, wait until it is empty, rmdir. NULL is a no-op.
 * Best effort: what cannot be removed is logged as a warning. */
void rrt_cgroup_destroy(const char *path);

/* The pids in the cgroup and its descendants (cgroup.procs). */
int rrt_cgroup_pids(const char *path, pid_t **pids, size_t *n, struct rrt_error *err);

/* Writes cgroup.freeze and waits until cgroup.events says frozen 1 (or 0). */
int rrt_cgroup_freeze(const char *path, bool freeze, struct rrt_error *err);

/* Moves pid (0: the caller) into the cgroup. */
int rrt_cgroup_enter(const char *path, pid_t pid, struct rrt_error *err);

/*
 * Applies a linux.resources object (config.md) to the cgroup (NULL: none):
 * memory, pids, cpu, cpuset, blockIO weight and unified. Whatever cannot be
 * applied is a warning naming the field and why; *applied and *asked count
 * the limits. Negative only for a malformed document.
 */
int rrt_cgroup_update(const char *path, const char *resources_json, int *applied, int *asked,
                      struct rrt_error *err);

#endif

/* cgroup.h: a container's cgroups: the cgroup v2 directory (a delegated subtree for a user,
 * anywhere for root), the cgroup v1 controllers as real root on legacy and hybrid hosts, or a
 * systemd scope; limits, device rules, freezer, processes, cleanup. */
#ifndef ROOTLESSRT_CGROUP_H
#define ROOTLESSRT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootlessrt/error.h"
#include "rootlessrt/state.h"

/* The cgroup v1 controllers rootlessrt uses (as real root only). */
enum rrt_cg_v1 {
  RRT_CG_CPU,
  RRT_CG_CPUACCT,
  RRT_CG_CPUSET,
  RRT_CG_MEMORY,
  RRT_CG_PIDS,
  RRT_CG_FREEZER,
  RRT_CG_DEVICES,
  RRT_CG_BLKIO,
  RRT_CG_HUGETLB,
  RRT_CG_NET_CLS,
  RRT_CG_NET_PRIO,
  RRT_CG_NAME_SYSTEMD, /* systemd's named hierarchy (no controller): init is put at the path
                        * there too, as runc and crun do, so systemd sees it apart */
  RRT_CG_V1_N
};

/* Where a container's cgroups are. Every member may be NULL. */
struct rrt_cgroup {
  char *v2;              /* its cgroup2 directory */
  char *v1[RRT_CG_V1_N]; /* its directory in each cgroup v1 hierarchy (co-mounted ones share) */
  char *unit;            /* the systemd scope holding it (--systemd-cgroup) */
  bool system_bus;       /* that scope belongs to the system manager, not the user's */
  bool limits_warn;      /* RRT_LIMITS_ANNOTATION=warn: not recorded, set at each use */
  /* At create only: the topmost directory create itself made for v2 and for each v1 directory,
   * NULL where the directory was there before. A failed create removes what it made, and never
   * kills anything in or removes a cgroup that was there before it. */
  char *made_v2;
  char *made_v1[RRT_CG_V1_N];
};

/* The annotation that turns a limit that cannot be applied into a warning (value "warn"), as
 * runc does for rootless containers; without it such a limit fails create and update. */
#define RRT_LIMITS_ANNOTATION "run.oci.rootlessrt.limits"

/* The annotation that lets a container into a cgroup that already holds processes (value
 * "shared"), with a warning, as runc 1.1 does on cgroup v1; "own" (the default) refuses it. */
#define RRT_CGROUP_ANNOTATION "run.oci.rootlessrt.cgroup"
/* Its value (NULL: absent) as *shared; anything but "shared" or "own" is an error. */
int rrt_cgroup_shared_mode(const char *value, bool *shared, struct rrt_error *err);

/* The annotation's value (NULL: absent) as *warn; anything but "warn" or "error" is an error. */
int rrt_cgroup_limits_mode(const char *value, bool *warn, struct rrt_error *err);

/* What a linux.resources value asks for (rrt_cgroup_asks). */
enum rrt_cg_ask {
  RRT_CG_UNSET,   /* "not set" as engines mean it (0 shares, 0 weight, 0 period): never written */
  RRT_CG_DEFAULT, /* the kernel's default (-1 unlimited, 1024 shares): written where its file is,
                   * and nothing to enforce where it is not */
  RRT_CG_LIMIT,   /* a limit: one that cannot be applied is an error */
};
/* field: "memory.limit", "cpu.shares", "blockIO.weightDevice"... (no index); value: the JSON
 * value as text ("0", "-1", "" for an empty string). The one place that decides it. */
enum rrt_cg_ask rrt_cgroup_asks(const char *field, const char *value);

/* What create asks for. */
struct rrt_cgroup_opts {
  const char *id;
  const char *path;           /* linux.cgroupsPath, or NULL */
  const char *resources_json; /* linux.resources, or NULL */
  bool has_limits;            /* resources asks for a limit only a cgroup enforces */
  bool disabled;              /* --cgroup-manager=disabled */
  bool systemd;               /* --systemd-cgroup / --cgroup-manager=systemd */
  bool privileged;            /* real root on the host: v1 controllers, device rules */
  bool limits_warn;           /* RRT_LIMITS_ANNOTATION=warn */
  bool cgroup_shared;         /* RRT_CGROUP_ANNOTATION=shared */
  /* Called once, before any directory is made: mine names the directories create is about to
   * make (not one that is there already), or the systemd scope once made. create records it,
   * so that delete --force finds the cgroup whatever instant create dies at. */
  int (*record)(const struct rrt_cgroup *mine, void *arg, struct rrt_error *err);
  void *record_arg;
};

/* After a failed create, once the container's cgroup is destroyed: the levels above it that
 * create made (made_v2, made_v1) go too. */
void rrt_cgroup_remove_made(const struct rrt_cgroup *cg);

/* The names the v1 controllers have in /proc/self/cgroup and mount options. */
const char *rrt_cgroup_v1_name(enum rrt_cg_v1 c);

/*
 * At create, with init blocked: makes the container's cgroups where opts->path says (absolute:
 * from the cgroup mount's root; relative: from the caller's own cgroup; none: rootlessrt-<id>
 * in the caller's own cgroup), applies linux.resources and the device rules, and moves init in.
 * An unprivileged caller without a delegated cgroup v2 gets none (cg stays empty, a debug line
 * says why) unless limits were asked: then that is an error naming the limit and how to
 * delegate. An invalid path is an error.
 */
int rrt_cgroup_create(const struct rrt_cgroup_opts *o, pid_t init, struct rrt_cgroup *cg,
                      struct rrt_error *err);
/* init 0 (cgroupfs only, not systemd): made and limited, nothing moved in; init joins itself. */

/*
 * Joining without a migration by another process. A write of another process's pid to
 * cgroup.procs takes the kernel's global threadgroup lock for writing, whose first taker in a
 * while waits for an RCU grace period (7-14 ms on this 2-CPU virtual machine, most of a root
 * create). Two ways in do not take it: clone3(CLONE_INTO_CGROUP) starts the child in the v2
 * directory, and a single-threaded process that writes "0" (itself) to a v1 hierarchy's
 * `tasks` file moves alone. Needs the rights of real root in the initial user namespace.
 */
struct rrt_cgroup_join {
  int v2_fd;                   /* the cgroup2 directory (O_CLOEXEC), or -1 */
  char *v2_procs;              /* its cgroup.procs: the way in when the clone3 is refused */
  char *v1_tasks[RRT_CG_V1_N]; /* each distinct v1 directory's tasks file, or NULL */
};
int rrt_cgroup_join_prepare(const struct rrt_cgroup *cg, struct rrt_cgroup_join *j,
                            struct rrt_error *err);
void rrt_cgroup_join_free(struct rrt_cgroup_join *j);
/* fork(), the child starting in j's v2 directory (*in_v2) when the kernel takes
 * CLONE_INTO_CGROUP (5.7); otherwise a plain fork and *in_v2 false. */
pid_t rrt_cgroup_fork_into(const struct rrt_cgroup_join *j, bool *in_v2);
/* In the process that joins (single-threaded): every v1 directory, and v2 unless in_v2. */
int rrt_cgroup_join_self(const struct rrt_cgroup_join *j, bool in_v2, struct rrt_error *err);

/* The caller's own cgroup v2 directory through the cgroup2 mount it sees (malloc'd), or NULL. */
char *rrt_cgroup_own_dir(void);

/* Records cg in the state (st->cgroup: the v2 directory; st->cgroups_json: the rest) and reads
 * it back. */
void rrt_cgroup_store(const struct rrt_cgroup *cg, struct rrt_state *st);
void rrt_cgroup_load(const struct rrt_state *st, struct rrt_cgroup *cg);
void rrt_cgroup_free(struct rrt_cgroup *cg);
/* Whether the container has any cgroup that still exists. */
bool rrt_cgroup_exists(const struct rrt_cgroup *cg);

/* At delete: kills everything left in it (frozen processes too), waits until it is empty and
 * removes it (and the systemd scope). Best effort: what cannot be removed is a warning. */
void rrt_cgroup_destroy(const struct rrt_cgroup *cg);
/* Whether the kernel's OOM killer killed a process in the container's cgroup. */
bool rrt_cgroup_oom_killed(const struct rrt_state *st);
/* The same for the cgroups a state records. */
void rrt_cgroup_destroy_state(const struct rrt_state *st);
/* After a failed create: what runs in the cgroups st records is killed (they held nothing when
 * create took them), and only the directories create made (made_v2, made_v1) are removed; a
 * cgroup that was there before stays, with whatever sub-cgroups it had. */
void rrt_cgroup_destroy_failed(const struct rrt_state *st, const struct rrt_cgroup *made);

/* The pids in the container's cgroup and its descendants (cgroup.procs). */
int rrt_cgroup_pids(const struct rrt_cgroup *cg, pid_t **pids, size_t *n, struct rrt_error *err);

/* The freezer: cgroup v1 freezer.state, or cgroup v2 cgroup.freeze; waits until done. */
int rrt_cgroup_freeze(const struct rrt_cgroup *cg, bool freeze, struct rrt_error *err);
bool rrt_cgroup_frozen(const struct rrt_cgroup *cg);
/* Whether pause/resume can work for it. */
bool rrt_cgroup_has_freezer(const struct rrt_cgroup *cg);

/* Moves pid (0: the caller) into every one of the container's cgroups. */
/* exec --cgroup (runc's form): [CONTROLLER[,CONTROLLER]:]PATH, a sub-cgroup of the container's
 * that must exist, taken from the container's cgroup as runc joins it ("/" and "memory:/" are
 * that cgroup itself); without controllers in every hierarchy, with them in those v1 ones, each
 * one the container has (cgroup v2 has one hierarchy: a path alone). cg then names those
 * sub-cgroups. */
int rrt_cgroup_narrow(struct rrt_cgroup *cg, const char *spec, struct rrt_error *err);
int rrt_cgroup_enter(const struct rrt_cgroup *cg, pid_t pid, struct rrt_error *err);

/*
 * Applies a linux.resources object (config.md) to the container's cgroups (update, and create
 * through rrt_cgroup_create). Everything is checked before anything is written: a limit that
 * cannot be applied (no such controller here, not delegated, no equivalent in this cgroup
 * version, an unknown unified key) is an error naming it and how to get the controller.
 * Device rules are applied when `devices` (real root) and the object has any.
 */
int rrt_cgroup_update(const struct rrt_cgroup *cg, const char *resources_json, bool devices,
                      struct rrt_error *err);

/* kill --all once init has exited: signals what is left in the cgroups a state records (none:
 * nothing to do). */
int rrt_cgroup_kill_state(const struct rrt_state *st, int sig, struct rrt_error *err);

/* Whether a linux.resources object has device rules. */
bool rrt_cgroup_has_device_rules(const char *resources_json);

/* The container's resource usage as runc's `events` reports it (cpu, memory, pids, blkio,
 * hugetlb; stats.c), each from the v1 controller where it has one, else from cgroup v2. */
struct json_object;
struct json_object *rrt_cgroup_stats(const struct rrt_cgroup *cg);
/* The OOM kills counted in its memory cgroup so far (v2 memory.events, v1 memory.oom_control). */
uint64_t rrt_cgroup_oom_count(const struct rrt_cgroup *cg);

/* Signals every process in the container's cgroups (kill --all). *n: how many were signalled. */
int rrt_cgroup_kill(const struct rrt_cgroup *cg, int sig, size_t *n, struct rrt_error *err);

#endif

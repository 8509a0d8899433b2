/* init.h: the container's side of create: from clone to the blocked init. */
#ifndef ROOTLESSRT_INIT_H
#define ROOTLESSRT_INIT_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "rootlessrt/hostfds.h"
#include "rootlessrt/net.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/userns.h"

#define RRT_MAX_JOIN 8

struct rrt_cgroup_join;

struct rrt_init_args {
  /* The runtime's CPU when it cloned us, and the CPUs we may use: the namespaces are made on
   * another one while the runtime starts newuidmap and newgidmap (-1: no hint). */
  int runtime_cpu;
  cpu_set_t cpus;
  const struct rrt_spec *spec;
  const struct rrt_userns_plan *plan;
  const char *rootfs;
  int sync_fd;    /* SOCK_SEQPACKET to the runtime */
  int maps_fd;    /* pipe: EOF once the runtime wrote the id maps */
  int maps_wfd;   /* its write end, the runtime's: closed in the child */
  int listen_fd;  /* start socket, received with CONTINUE: init accepts `start` on it */
  int console_fd; /* connected --console-socket, or -1 */
  bool own_terminal;
  bool no_pivot;
  bool no_new_keyring;
  bool nested;      /* the runtime runs in a CI job's container (rrt_userns_caller.nested) */
  int preserve_fds; /* listen_fds included */
  int listen_fds;
  int ns_flags; /* CLONE_NEW* to create (the user namespace excluded) */
  int join_types[RRT_MAX_JOIN];
  const char *join_paths[RRT_MAX_JOIN];
  size_t n_join;
  enum rrt_net_mode net_mode;
  const char *resolv_conf;
  int resolv_fd; /* RRT_SYNC_RESOLV: its clone, for when init cannot open the path; else -1 */
  const char *seccomp_cache;
  const struct rrt_hostfds *hostfds; /* real root with a user namespace: see hostfds.h */
  /* Real root without a user namespace: the container's cgroups, made already, which init
   * joins itself (cgroup.h, rrt_cgroup_join); NULL: the runtime moves init in. */
  const struct rrt_cgroup_join *cg_join;
  bool cg_in_v2;       /* the child is init and was cloned into the v2 directory already */
  bool oom_by_runtime; /* real root writes init's process.oomScoreAdj itself (handshake.c) */
};

/* Runs in the cloned child; never returns. Failures travel to the runtime
 * over sync_fd as (errno, message). */
__attribute__((noreturn)) void rrt_init_main(struct rrt_init_args *ia);

/* Terminal: a pty from the container's devpts; master sent over console_fd
 * (SCM_RIGHTS), slave becomes stdio, controlling tty and /dev/console. */
int rrt_terminal_setup(const struct rrt_process *proc, int console_fd, struct rrt_error *err);

#endif

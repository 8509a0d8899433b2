/* container.h: the container lifecycle: create, start, run, kill, delete, state. */
#ifndef ROOTLESSRT_CONTAINER_H
#define ROOTLESSRT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rootlessrt/confine.h"
#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/* Global flags (before the verb). */
struct rrt_global {
  const char *root; /* --root, or NULL for the default */
  const char *log;
  bool log_json;
  bool debug;
  const char *rootless; /* true|false|auto: accepted */
  bool systemd_cgroup;
  bool cgroup_disabled; /* --cgroup-manager disabled */
};

struct rrt_create_opts {
  const char *id;
  const char *bundle; /* NULL: cwd */
  const char *pid_file;
  const char *console_socket;
  int preserve_fds;
  int listen_fds; /* from the caller's LISTEN_FDS (rrt_listen_fds_from_env), before preserve_fds */
  bool no_pivot;
  bool no_new_keyring;
  bool detach;         /* run -d */
  bool foreground;     /* run without -d: create + start + wait + delete */
  bool keep;           /* run --keep: the stopped container stays, for state and delete */
  const char *network; /* --network */
  char **net_opts;     /* --network-opt KEY=VALUE and its shorthands */
  size_t n_net_opts;
  char **publish; /* --publish, repeatable */
  size_t n_publish;
};

int rrt_container_create(const struct rrt_global *g, const struct rrt_create_opts *o,
                         struct rrt_error *err);
int rrt_container_start(const struct rrt_global *g, const char *id, struct rrt_error *err);
/* Foreground run: *status is the exit code (128+N when killed by signal N). */
int rrt_container_run(const struct rrt_global *g, const struct rrt_create_opts *o, int *status,
                      struct rrt_error *err);
int rrt_container_kill(const struct rrt_global *g, const char *id, int sig, bool all,
                       struct rrt_error *err);
int rrt_container_delete(const struct rrt_global *g, const char *id, bool force,
                         struct rrt_error *err);
int rrt_container_state(const struct rrt_global *g, const char *id, char **json,
                        struct rrt_error *err);
/* The pids of every process in the container (pid namespace scan), init first. */
int rrt_container_pids(pid_t init, pid_t **pids, size_t *n, struct rrt_error *err);

/* What init does between CREATED and execve (process.c). */
struct rrt_exec_ctx {
  const struct rrt_spec *spec;
  const struct rrt_process *proc;
  int preserve_fds; /* listen_fds included */
  int listen_fds;
  int report_fd;                     /* error messages go here on failure; O_CLOEXEC */
  bool setgroups_allowed;            /* false when the user namespace denies setgroups */
  const char *state_json;            /* for seccomp notify listeners */
  const char *seccomp_cache;         /* directory, or NULL */
  struct rrt_seccomp_filter *filter; /* compiled before pivot_root, or NULL */
  bool limits_applied;               /* init did rlimits & co. at create already */
  const char *exec_path;             /* args[0] as create found it in PATH, or NULL */
  /* Run once the process is confined as it will be (user, groups, capabilities, no_new_privs,
   * rlimits, the seccomp filter, the LSM label), just before its execve: init's startContainer
   * hooks, forked from there so that they run with exactly that confinement. NULL: none. */
  int (*before_execve)(void *arg, struct rrt_error *err);
  void *before_execve_arg;
};
/* At create, in init after pivot_root and before the read-only remount of
 * the root: process.cwd, made when missing, refused when not a directory. */
int rrt_process_prepare_cwd(const struct rrt_process *proc, struct rrt_error *err);
/* At create, in init after pivot_root: what runc and crun also refuse at
 * create rather than at start: process.user ids that the user namespace does
 * not map, rlimits, personality, ioPriority and scheduler (applied now:
 * they survive execve). */
int rrt_process_prepare(const struct rrt_spec *spec, struct rrt_error *err);
/* At create, in the container's root: process.args[0] exists (PATH search
 * as execve will do) and process.user may execute it (not a directory, an execute bit for the
 * user, not on a noexec mount), so create fails as with runc and crun, in runc's words
 * (`exec: "x": stat x: no such file or directory`, `...: permission denied`, `...: executable
 * file not found in $PATH`), which engines map to 127 and 126. keep_groups: the supplementary
 * groups stay the runtime's (rrt_process_keep_groups). */
/* found (may be NULL): the path a PATH search found, or NULL when args[0] has a slash. */
int rrt_process_find_exec(const struct rrt_process *proc, bool keep_groups, char **found,
                          struct rrt_error *err);
/* The annotation run.oci.keep_original_groups (podman's --group-add keep-groups): no setgroups,
 * the process keeps the runtime's supplementary groups, as with crun. */
bool rrt_process_keep_groups(const struct rrt_spec *spec);
/* Never returns on success. */
int rrt_process_exec(const struct rrt_exec_ctx *x, struct rrt_error *err);

#endif

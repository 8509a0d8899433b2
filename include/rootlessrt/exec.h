/* exec.h: another process in a running container (exec), and the loading of
 * a container's state for the verbs that act on a live container. */
#ifndef ROOTLESSRT_EXEC_H
#define ROOTLESSRT_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rootlessrt/container.h"
#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"
#include "rootlessrt/state.h"

/* A container's state (and saved config when asked), read under its lock;
 * the lock is released once read unless keep_lock. */
struct rrt_live {
  char *root;
  int dirfd; /* -1 unless keep_lock */
  struct rrt_state st;
  char *config_text; /* STATE_DIR/config.json, when want_config */
  struct rrt_spec *spec;
};

int rrt_live_load(const struct rrt_global *g, const char *id, bool exclusive, bool keep_lock,
                  bool want_config, struct rrt_live *l, struct rrt_error *err);
void rrt_live_free(struct rrt_live *l);

/* Every pid of the container: its cgroup when it has one, else its pid
 * namespace (or init's descendants when it shares ours), init first. For
 * ps and kill --all. */
int rrt_live_pids(const struct rrt_state *st, pid_t **pids, size_t *n, struct rrt_error *err);

/* pid is in the same NAME namespace as the caller (/proc/PID/ns/NAME vs /proc/self/ns/NAME). */
bool rrt_same_ns(pid_t pid, const char *name);

struct rrt_exec_opts {
  const char *id;
  const char *process_file; /* --process; NULL: from the command line */
  char **args;              /* CMD ARGS... (NULL-terminated), when no --process */
  char **env;               /* -e K=V (NULL-terminated, may be NULL) */
  const char *cwd;
  const char *user; /* "UID[:GID]" */
  char **caps;      /* --cap, added (NULL-terminated, may be NULL) */
  bool no_new_privs;
  bool tty, tty_set;
  const char *console_socket;
  bool detach;
  const char *pid_file;
  int preserve_fds;
  char **cgroups; /* --cgroup [CONTROLLER[,CONTROLLER]:]PATH (NULL-terminated, may be NULL) */
  char **additional_gids; /* --additional-gids GID, replacing user.additionalGids (may be NULL) */
  bool ignore_paused;     /* --ignore-paused: a paused container too (the process waits, frozen) */
};

/* Returns the exit status of the process in the foreground (128+N when
 * killed by signal N; 127/126 when the program is missing / not executable,
 * after logging why), 0 once it runs with detach, or -1 with err. */
int rrt_exec(const struct rrt_global *g, const struct rrt_exec_opts *o, struct rrt_error *err);

/* exec's side of the report socket (exec.c; public for tests/unit/test_exec.c): child is the
 * joining child it forked. One INIT_PID, whose pidfd must name child's child (it is acked with
 * CONTINUE, and *pid, *pidfd set), and at most one ERROR, until EOF; a second report of either
 * kind, or any other message, kills the process (by its pidfd) and child, and fails with EPROTO.
 * *pidfd must be -1 on entry; the caller closes it. */
int rrt_exec_collect_reports(int fd, pid_t child, pid_t *pid, int *pidfd, struct rrt_error *err);

#endif

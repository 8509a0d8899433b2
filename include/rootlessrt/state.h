/* state.h: the state directory of a container: lock, state file, status. */
#ifndef ROOTLESSRT_STATE_H
#define ROOTLESSRT_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "rootlessrt/error.h"

struct rrt_state {
  char *id;
  char *bundle;                 /* absolute */
  char *rootfs;                 /* absolute */
  pid_t pid;                    /* init, in the runtime's pid namespace; 0 before it exists */
  unsigned long long pid_start; /* /proc/PID/stat starttime: guards against pid reuse */
  bool started;                 /* start confirmed the user program's execve (the marker file) */
  char *created;                /* RFC 3339 UTC */
  uid_t owner;
  pid_t net_helper; /* 0 when none */
  unsigned long long net_helper_start;
  char *cgroup;           /* absolute cgroup2 directory owned by the container, or NULL */
  char *cgroups_json;     /* object: its cgroup v1 directories, its systemd scope (cgroup.c) */
  char *annotations_json; /* object, or NULL */
};

/* The state root: --root, else $XDG_RUNTIME_DIR/rootlessrt, else
 * /run/user/UID/rootlessrt, else /tmp/rootlessrt-UID. Created 0700 and checked
 * to be ours (not a symlink, not someone else's) when `create` is true. */
int rrt_state_root(const char *flag_root, bool create, char **out, struct rrt_error *err);

/* runc's rule: [A-Za-z0-9_+.-]+, not "." or "..". */
int rrt_state_validate_id(const char *id, struct rrt_error *err);

/* Makes ROOT/ID (fails clearly when it exists) and locks it exclusively. */
int rrt_state_create_dir(const char *root, const char *id, int *dirfd, struct rrt_error *err);
/* Opens and locks (exclusive, or shared without waiting) an existing ROOT/ID; unknown -> error
 * "container \"ID\" does not exist". */
int rrt_state_open(const char *root, const char *id, bool exclusive, int *dirfd,
                   struct rrt_error *err);
/* Removes ROOT/ID with everything in it. */
int rrt_state_remove(const char *root, const char *id, struct rrt_error *err);

int rrt_state_write(int dirfd, const struct rrt_state *st, struct rrt_error *err);
/* Records that start confirmed the execve: an empty file "started" beside state.json, which is
 * written once, at create. */
int rrt_state_mark_started(int dirfd, struct rrt_error *err);
int rrt_state_read(int dirfd, struct rrt_state *st, struct rrt_error *err);
void rrt_state_free(struct rrt_state *st);

/* /proc/PID/stat field 22; 0 when the process is gone or a zombie. */
unsigned long long rrt_proc_start_time(pid_t pid);
/* True when pid is alive (not a zombie) and still the same process. */
bool rrt_proc_same(pid_t pid, unsigned long long start);

/* "created", "running", "paused" or "stopped". */
const char *rrt_state_status(const struct rrt_state *st);

/* The OCI state JSON (runtime.md) plus runc's created and owner; pretty when
 * asked. status overrides the computed one when non-NULL. */
char *rrt_state_oci_json(const struct rrt_state *st, const char *status, bool pretty);

#endif

/* state.h: the state directory of a container: lock, state file, status. */
#ifndef ROOTLESSRT_STATE_H
#define ROOTLESSRT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rootlessrt/error.h"

#define RRT_MAX_FUSE_HELPERS 16

struct rrt_state {
  char *id;
  char *bundle;                 /* absolute */
  char *rootfs;                 /* absolute */
  pid_t pid;                    /* init, in the runtime's pid namespace; 0 before it exists */
  unsigned long long pid_start; /* /proc/PID/stat starttime: guards against pid reuse */
  char *init_comm;              /* init's command name before its execve (the runtime's) */
  bool started;                 /* start confirmed the user program's execve (the marker file) */
  char *created;                /* RFC 3339 UTC */
  uid_t owner;
  pid_t net_helper; /* 0 when none */
  unsigned long long net_helper_start;
  /* The fuse-overlayfs servers (image/fuse_serve.c), each the pid 1 of its daemon's pid ns. */
  size_t n_fuse_helpers;
  pid_t fuse_helper[RRT_MAX_FUSE_HELPERS];
  unsigned long long fuse_helper_start[RRT_MAX_FUSE_HELPERS];
  char *cgroup;           /* absolute cgroup2 directory owned by the container, or NULL */
  char *cgroups_json;     /* object: its cgroup v1 directories, its systemd scope (cgroup.c) */
  char *annotations_json; /* object, or NULL */
};

/* The state root: --root, else $XDG_RUNTIME_DIR/rootlessrt, else
 * /run/user/UID/rootlessrt, else /tmp/rootlessrt-UID. Created 0700 when `create` is true.
 * Whoever asks, it is checked (trust.h): a real directory of the caller's that no one else can
 * write; a root that does not exist yet is fine when not creating (no container exists). */
int rrt_state_root(const char *flag_root, bool create, char **out, struct rrt_error *err);

/* The private directory beside the root (spares, seccomp cache), made when `make`; NULL when
 * it cannot be had or fails the root's checks. */
char *rrt_state_private_dir(const char *root, bool make);

/* runc's rule: [A-Za-z0-9_+.-]+, not "." or "..". */
int rrt_state_validate_id(const char *id, struct rrt_error *err);

/* Makes ROOT/ID (fails clearly when it exists) and locks it exclusively. */
int rrt_state_create_dir(const char *root, const char *id, int *dirfd, struct rrt_error *err);
/* Opens and locks (exclusive, or shared without waiting) an existing ROOT/ID, which must be a
 * real directory of the caller's that no one else can write; unknown -> error (ENOENT)
 * "container \"ID\" does not exist". Its state.json is not looked at. */
int rrt_state_open(const char *root, const char *id, bool exclusive, int *dirfd,
                   struct rrt_error *err);
/* A file of the state directory (config.json...): a regular file of the caller's that no one
 * else can write, not a symlink. */
int rrt_state_read_file(int dirfd, const char *name, char **out, size_t *len,
                        struct rrt_error *err);
/* The records create makes before state.json, each once: symlinks "init" (pid and start time),
 * and "cgroups" (st->cgroup and st->cgroups_json: the directories create is about to make)
 * before the first cgroup directory is made. */
int rrt_state_record_init(int dirfd, pid_t pid, unsigned long long start, struct rrt_error *err);
int rrt_state_record_cgroup(int dirfd, const struct rrt_state *st, struct rrt_error *err);
/* delete --force of a container an earlier version's create left half made: rmdir of the
 * directory its "cgroup-new" record names, no more. */
void rrt_state_remove_pending_cgroup(int dirfd);
/* What the records say when state.json cannot be read: st gets id, owner, and init's pid and
 * start time and the cgroup when recorded. */
void rrt_state_from_records(int dirfd, const char *id, struct rrt_state *st);
/* For list and state: the container whatever moment create, start or delete stopped at.
 * *status: computed from state.json, or "creating" (no state.json yet and create holds the
 * lock), or "broken" (create died before state.json, or it is corrupt; *why says which, and st
 * is what the records say). Errors: the entry does not exist, or is not to be trusted. */
int rrt_state_inspect(const char *root, const char *id, struct rrt_state *st, const char **status,
                      char **why, struct rrt_error *err);
/* Removes ROOT/ID with everything in it. */
int rrt_state_remove(const char *root, const char *id, struct rrt_error *err);

int rrt_state_write(int dirfd, const struct rrt_state *st, struct rrt_error *err);
/* Records that start confirmed the execve: an empty file "started" beside state.json, which is
 * written once, at create. */
int rrt_state_mark_started(int dirfd, struct rrt_error *err);
/* Errors: ENODATA when there is no state.json (create did not finish), EUCLEAN when it is
 * corrupt, EPERM when it is not the caller's. */
int rrt_state_read(int dirfd, struct rrt_state *st, struct rrt_error *err);
void rrt_state_free(struct rrt_state *st);

/* /proc/PID/stat field 22; 0 when the process is gone or a zombie. */
unsigned long long rrt_proc_start_time(pid_t pid);
/* The same, and the command name (field 2) into comm when not NULL. */
unsigned long long rrt_proc_stat(pid_t pid, char *comm, size_t comm_len);
/* True when pid is alive (not a zombie) and still the same process. */
bool rrt_proc_same(pid_t pid, unsigned long long start);

/* "created", "running", "paused" or "stopped". */
const char *rrt_state_status(const struct rrt_state *st);

/* The OCI state JSON (runtime.md) plus runc's created and owner; pretty when
 * asked. status overrides the computed one when non-NULL. */
char *rrt_state_oci_json(const struct rrt_state *st, const char *status, bool pretty);

#endif

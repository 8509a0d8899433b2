/* sync.h: the typed parent<->child message protocol over a SOCK_SEQPACKET pair. */
#ifndef ROOTLESSRT_SYNC_H
#define ROOTLESSRT_SYNC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rootlessrt/error.h"

/* Every step is request/ack; the comment says who sends it. */
enum rrt_sync_type {
  RRT_SYNC_INIT_PID = 1, /* child -> runtime: value = init's pid in the runtime's pid ns */
  RRT_SYNC_CONTINUE,     /* runtime -> init: go on */
  RRT_SYNC_NS_READY,     /* init -> runtime: namespaces and mounts exist, before pivot_root */
  RRT_SYNC_HOOKS_DONE,   /* runtime -> init: prestart/createRuntime ran; payload = state JSON */
  RRT_SYNC_CREATED,      /* init -> runtime: pivoted, waiting for start */
  RRT_SYNC_START,        /* start -> init (over the start socket): run the user process */
  RRT_SYNC_ERROR,        /* either way: value = errno, payload = message */
  RRT_SYNC_HELPER,       /* runtime -> init: a pidfd (attached) of an id-map helper to watch */
  RRT_SYNC_RESOLV,       /* runtime -> init: the state directory's resolv.conf (attached, a
                            detached mount) for real root's user namespace, before CONTINUE */
  RRT_SYNC_FUSE,         /* init -> runtime: serve a fuse-overlayfs mount; attached: a private
                            socket over which FUSE (attached: the /dev/fuse fd, payload: its
                            options) goes, and FUSE_READY comes back */
  RRT_SYNC_FUSE_READY,   /* runtime -> init, on that socket: served; value = the server's pid */
};

#define RRT_SYNC_MAX_PAYLOAD (256 * 1024)

struct rrt_sync_msg {
  uint32_t type;
  int64_t value;
  size_t len; /* payload bytes (NUL-terminated in data) */
  char *data; /* malloc'd by rrt_sync_recv, or NULL */
  int fd;     /* a descriptor that came with it (O_CLOEXEC), or -1; closed by msg_free */
};

int rrt_sync_send(int fd, enum rrt_sync_type type, int64_t value, const char *payload,
                  struct rrt_error *err);
/* The same with a descriptor attached (SCM_RIGHTS); pass_fd < 0 attaches none. */
int rrt_sync_send_fd(int fd, enum rrt_sync_type type, int64_t value, const char *payload,
                     int pass_fd, struct rrt_error *err);
/* Sends err's errno and message; never fails loudly (best effort). */
void rrt_sync_send_error(int fd, const struct rrt_error *e);
#define RRT_SYNC_EOF (-2)

/* Receives one message. An RRT_SYNC_ERROR becomes *err (returns -1); a closed
 * peer fills *err too but returns RRT_SYNC_EOF: for `start`, that EOF is the
 * news that execve succeeded (the socket was close-on-exec). */
int rrt_sync_recv(int fd, struct rrt_sync_msg *msg, struct rrt_error *err);
/* Receives and checks the type; value/payload are optional outputs. */
int rrt_sync_expect(int fd, enum rrt_sync_type type, int64_t *value, char **payload,
                    struct rrt_error *err);
/* rrt_sync_expect that also takes the attached descriptor (-1 when none). */
int rrt_sync_expect_fd(int fd, enum rrt_sync_type type, int64_t *value, int *passed,
                       struct rrt_error *err);
void rrt_sync_msg_free(struct rrt_sync_msg *msg);

/*
 * A pid from the kernel, not from the container (confine.h, THE REACH RULE): the pidfd a child
 * of ours attached to its INIT_PID report names the process; its pid is the pidfd's "Pid:" in
 * /proc/self/fdinfo (this process's pid namespace), and it must be `child` itself or a process
 * whose parent is `child` (which the caller has not reaped, so that pid is not reused). The
 * report's own value is not trusted. Returns 0 with *pid and *pidfd (the caller's to close).
 */
int rrt_sync_child_pid(int pidfd, pid_t child, pid_t *pid, struct rrt_error *err);
/* Receives INIT_PID with its pidfd and checks it with rrt_sync_child_pid. */
int rrt_sync_expect_child_pid(int fd, pid_t child, pid_t *pid, int *pidfd, struct rrt_error *err);

#endif

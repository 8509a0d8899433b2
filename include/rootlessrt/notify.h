/* notify.h: systemd's NOTIFY_SOCKET relayed from the container to the runtime's caller. */
#ifndef ROOTLESSRT_NOTIFY_H
#define ROOTLESSRT_NOTIFY_H

#include <sys/types.h>

#include "rootlessrt/error.h"
#include "rootlessrt/spec.h"

/* Where the container's socket is when process.env does not say. */
#define RRT_NOTIFY_DEFAULT "/run/notify/notify.sock"

struct rrt_notify {
  char *host;      /* the caller's NOTIFY_SOCKET ("@name": abstract), NULL: nothing to relay */
  char *container; /* the socket's path in the container */
  int fd;          /* the datagram socket bound in the state directory, or -1 */
};

/* At create, before the clone. When the runtime's environment has NOTIFY_SOCKET, the container
 * gets a socket at process.env's NOTIFY_SOCKET (added, as RRT_NOTIFY_DEFAULT, when absent): a bind
 * mount of STATE_DIR/notify.sock appended to the config's mounts. Does nothing otherwise. */
int rrt_notify_plan(struct rrt_spec *spec, const char *state_dir, struct rrt_notify *n,
                    struct rrt_error *err);
/* Once the state directory exists: binds notify.sock in it (n->host set only). */
int rrt_notify_bind(struct rrt_notify *n, int dirfd, struct rrt_error *err);
/* Forks the relay, which forwards every datagram the container sends to the caller's socket
 * (READY=1 with MAINPID=init, as runc does) and exits when init does; nothing of the runtime's
 * (fds, the state lock, signal handlers) stays with it. Its pid goes to notify.pid in dirfd. */
int rrt_notify_start_relay(struct rrt_notify *n, int dirfd, pid_t init, struct rrt_error *err);
void rrt_notify_free(struct rrt_notify *n);

#endif

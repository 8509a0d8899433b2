/* start.c: start: init released to exec its program, poststart. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "create.h"
#include "internal.h"
#include "rootlessrt/container.h"
#include "rootlessrt/state.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/util.h"

/* Connects to init's start socket, asks it to exec, and waits for the verdict:
 * EOF (the close-on-exec socket closed by a successful execve) or an error. */
static int release_init(int dirfd, const char *id, int sync_fd, bool sent, struct rrt_error *err)
{
  cleanup_close int fd = -1;
  if (sync_fd >= 0) {
    fd = sync_fd; /* run: create's socket, still open */
  } else {
    struct sockaddr_un sa;
    if (rrt_start_socket_addr(dirfd, &sa) < 0)
      return rrt_error_set(err, ENAMETOOLONG, "start socket path");
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return rrt_error_errno(err, "socket");
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
      if (errno == ECONNREFUSED)
        return rrt_error_msgf(err, EALREADY,
                              "container \"%s\" is being started already: init no longer waits "
                              "for start (another start released it)",
                              id);
      return rrt_error_errno(err, "container \"%s\": init is not waiting for start", id);
    }
  }
  if (!sent && rrt_sync_send(fd, RRT_SYNC_START, 0, NULL, err) < 0)
    return -1;
  struct rrt_sync_msg m;
  int r = rrt_sync_recv(fd, &m, err);
  if (r == RRT_SYNC_EOF) {
    rrt_error_clear(err);
    return 0;
  }
  if (r < 0)
    return -1;
  rrt_sync_msg_free(&m);
  return rrt_error_msgf(err, EPROTO, "start: unexpected message from init");
}

static int start_container(const struct rrt_global *g, const char *id, struct rrt_error *err)
{
  struct loaded l;
  int ret = -1;
  if (rrt_load_container(g, id, true, true, NULL, false, &l, err) == 0) {
    const char *status = rrt_state_status(&l.st);
    if (strcmp(status, "running") == 0 || strcmp(status, "paused") == 0)
      rrt_error_msgf(err, EALREADY, "container \"%s\" has been started already (it is %s)", id,
                     status);
    else if (strcmp(status, "created") != 0)
      rrt_error_msgf(err, EINVAL, "container \"%s\" is %s, not created: cannot start it", id,
                     status);
    else
      ret = rrt_start_loaded(&l, -1, false, err);
  }
  rrt_loaded_free(&l);
  return ret;
}

/* sync_fd: run's socket to init (taken and closed), or -1 to connect to the start socket. */
int rrt_start_loaded(struct loaded *l, int sync_fd, bool sent, struct rrt_error *err)
{
  const char *id = l->st.id;
  int ret = -1;
  if (release_init(l->dirfd, id, sync_fd, sent, err) < 0) {
    struct rrt_error ignored = RRT_ERROR_INIT;
    rrt_loaded_destroy(l, &ignored);
    rrt_error_clear(&ignored);
    goto out;
  }
  l->st.started = true;
  if (rrt_state_mark_started(l->dirfd, err) < 0)
    goto out;
  if (rrt_loaded_hooks(l, RRT_HOOK_POSTSTART, "running", err) < 0) {
    /* runtime-spec 1.3.0: a failing poststart hook stops the container. */
    struct rrt_error ignored = RRT_ERROR_INIT;
    rrt_loaded_destroy(l, &ignored);
    rrt_error_clear(&ignored);
    goto out;
  }
  ret = 0;
out:
  return ret;
}

int rrt_container_start(const struct rrt_global *g, const char *id, struct rrt_error *err)
{
  return start_container(g, id, err);
}

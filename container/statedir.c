/* statedir.c: the state directory create makes (its config copy, resolv.conf and start
 * socket) and the records it writes there before state.json. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "create.h"
#include "rootlessrt/net.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

/* The start socket lives in the state directory; a /proc/self/fd path keeps
 * sun_path short whatever the length of the root and the id. */
int rrt_start_socket_addr(int dirfd, struct sockaddr_un *sa)
{
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  return snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/start.sock", dirfd) <
                 (int)sizeof(sa->sun_path)
             ? 0
             : -1;
}

/*
 * The state directory, its config copy and start socket: made while newuidmap and newgidmap
 * run, as is everything here; its ext4 work (a directory, two inodes) is often waiting on the
 * journal. init gets the start socket with CONTINUE.
 */
static int make_state_files(struct create_ctx *c, struct rrt_error *err);

/* A write into the state directory failed (a full disk: "No space left on device"): whose
 * directory, and where, so that the user knows which filesystem to look at. */
int rrt_create_in_state_dir(const struct create_ctx *c, struct rrt_error *err)
{
  return rrt_error_wrap(err, "container \"%s\": state directory %s/%s", c->o->id, c->root,
                        c->o->id);
}

int rrt_create_make_state(struct create_ctx *c, struct rrt_error *err)
{
  if (rrt_state_create_dir(c->root, c->o->id, &c->dirfd, err) < 0)
    return -1;
  c->dir_created = true;
  if (make_state_files(c, err) < 0)
    return rrt_create_in_state_dir(c, err);
  PHASE("state directory made (config copy, start socket)");
  return 0;
}

static int make_state_files(struct create_ctx *c, struct rrt_error *err)
{
  /* A private copy: delete runs the poststop hooks of the config as created. */
  if (c->config_text) {
    cleanup_close int fd =
        openat(c->dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || rrt_write_all(fd, c->config_text, strlen(c->config_text)) < 0)
      return rrt_error_errno(err, "write config.json");
  }
  if (c->net.mode == RRT_NET_SLIRP) {
    cleanup_free char *text = rrt_net_resolv_conf(&c->net);
    cleanup_close int fd =
        openat(c->dirfd, "resolv.conf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || rrt_write_all(fd, text, strlen(text)) < 0)
      return rrt_error_errno(err, "write resolv.conf");
  }
  c->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (c->listen_fd < 0)
    return rrt_error_errno(err, "start socket");
  struct sockaddr_un sa;
  if (rrt_start_socket_addr(c->dirfd, &sa) < 0)
    return rrt_error_set(err, ENAMETOOLONG, "start socket path");
  if (bind(c->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(c->listen_fd, 4) < 0)
    return rrt_error_errno(err, "make start.sock");
  return 0;
}

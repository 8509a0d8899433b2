/* sync.c: typed messages over SOCK_SEQPACKET: header then payload, one datagram. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rootlessrt/sync.h"
#include "rootlessrt/util.h"

struct wire_header {
  uint32_t type;
  uint32_t len;
  int64_t value;
};

static const char *type_name(uint32_t t)
{
  static const char *names[] = {"?",       "INIT_PID", "CONTINUE", "NS_READY", "HOOKS_DONE",
                                "CREATED", "START",    "ERROR",    "HELPER"};
  return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

int rrt_sync_send(int fd, enum rrt_sync_type type, int64_t value, const char *payload,
                  struct rrt_error *err)
{
  return rrt_sync_send_fd(fd, type, value, payload, -1, err);
}

int rrt_sync_send_fd(int fd, enum rrt_sync_type type, int64_t value, const char *payload,
                     int pass_fd, struct rrt_error *err)
{
  size_t len = payload ? strlen(payload) : 0;
  if (len > RRT_SYNC_MAX_PAYLOAD)
    len = RRT_SYNC_MAX_PAYLOAD;
  struct wire_header h = {.type = type, .len = (uint32_t)len, .value = value};
  struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)payload, len}};
  struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
  union rrt_fd_cmsg ctl;
  rrt_msg_attach_fd(&m, &ctl, pass_fd);
  ssize_t r;
  do
    r = sendmsg(fd, &m, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err, "sync: send %s", type_name(type));
  return 0;
}

void rrt_sync_send_error(int fd, const struct rrt_error *e)
{
  struct rrt_error ignored = RRT_ERROR_INIT;
  (void)rrt_sync_send(fd, RRT_SYNC_ERROR, e->errnum, rrt_error_msg(e), &ignored);
  rrt_error_clear(&ignored);
}

int rrt_sync_recv(int fd, struct rrt_sync_msg *msg, struct rrt_error *err)
{
  memset(msg, 0, sizeof(*msg));
  msg->fd = -1;
  /* A peek at the header with MSG_TRUNC gives the datagram's whole length, so the payload
   * buffer has exactly its size: no 256 KiB buffer mapped and unmapped per message. */
  struct wire_header h;
  ssize_t r;
  do
    r = recv(fd, &h, sizeof(h), MSG_PEEK | MSG_TRUNC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err, "sync: receive");
  if (r == 0) {
    rrt_error_msgf(err, EPIPE, "the container process exited before it was ready");
    return RRT_SYNC_EOF;
  }
  size_t total = (size_t)r;
  bool bad = total < sizeof(h) || h.len != total - sizeof(h) || h.len > RRT_SYNC_MAX_PAYLOAD;
  cleanup_free char *data = bad ? NULL : xmalloc((size_t)h.len + 1);
  struct iovec iov[2] = {{&h, sizeof(h)}, {data, data ? h.len : 0}};
  union rrt_fd_cmsg ctl;
  struct msghdr m = {.msg_iov = iov, .msg_iovlen = data ? 2 : 1};
  rrt_msg_expect_fd(&m, &ctl);
  /* Read even a bad one: it must not stay queued. */
  do
    r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err, "sync: receive");
  cleanup_close int passed = rrt_msg_fd(&m);
  if (bad)
    return rrt_error_set(err, EPROTO, "sync: %s",
                         total < sizeof(h) ? "short message" : "bad message length");
  data[h.len] = '\0';
  if (h.type == RRT_SYNC_ERROR) {
    rrt_error_set(err, 0, "%s", data);
    err->errnum = (int)h.value;
    return -1;
  }
  msg->type = h.type;
  msg->value = h.value;
  msg->len = h.len;
  msg->fd = steal_fd(&passed);
  if (h.len > 0)
    msg->data = steal_ptr(&data);
  return 0;
}

/* One message of the given type; its value, payload and descriptor to whichever asks. */
static int expect(int fd, enum rrt_sync_type type, int64_t *value, char **payload, int *passed,
                  struct rrt_error *err)
{
  struct rrt_sync_msg m;
  if (passed)
    *passed = -1;
  if (rrt_sync_recv(fd, &m, err) < 0)
    return -1;
  if (m.type != (uint32_t)type) {
    rrt_sync_msg_free(&m);
    return rrt_error_set(err, EPROTO, "sync: expected %s, got %s", type_name(type),
                         type_name(m.type));
  }
  if (value)
    *value = m.value;
  if (payload)
    *payload = steal_ptr(&m.data);
  if (passed)
    *passed = steal_fd(&m.fd);
  rrt_sync_msg_free(&m);
  return 0;
}

int rrt_sync_expect(int fd, enum rrt_sync_type type, int64_t *value, char **payload,
                    struct rrt_error *err)
{
  return expect(fd, type, value, payload, NULL, err);
}

int rrt_sync_expect_fd(int fd, enum rrt_sync_type type, int64_t *value, int *passed,
                       struct rrt_error *err)
{
  return expect(fd, type, value, NULL, passed, err);
}

void rrt_sync_msg_free(struct rrt_sync_msg *msg)
{
  free(msg->data);
  msg->data = NULL;
  if (msg->fd >= 0)
    close(msg->fd);
  msg->fd = -1;
}

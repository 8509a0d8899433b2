/* sync.c: typed messages over SOCK_SEQPACKET: header then payload, one datagram. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "rootlessrt/sync.h"
#include "rootlessrt/util.h"

struct wire_header {
  uint32_t type;
  uint32_t len;
  int64_t value;
};

static const char *type_name(uint32_t t)
{
  static const char *names[] = {"?",          "INIT_PID", "CONTINUE", "NS_READY",
                                "HOOKS_DONE", "CREATED",  "START",    "ERROR"};
  return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

int rrt_sync_send(int fd, enum rrt_sync_type type, int64_t value, const char *payload,
                  struct rrt_error *err)
{
  size_t len = payload ? strlen(payload) : 0;
  if (len > RRT_SYNC_MAX_PAYLOAD)
    len = RRT_SYNC_MAX_PAYLOAD;
  struct wire_header h = {.type = type, .len = (uint32_t)len, .value = value};
  struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)payload, len}};
  struct msghdr m = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
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
  size_t cap = sizeof(struct wire_header) + RRT_SYNC_MAX_PAYLOAD + 1;
  cleanup_free char *buf = xmalloc(cap);
  ssize_t r;
  memset(msg, 0, sizeof(*msg));
  do
    r = recv(fd, buf, cap - 1, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return rrt_error_errno(err, "sync: receive");
  if (r == 0) {
    rrt_error_msgf(err, EPIPE, "the container process exited before it was ready");
    return RRT_SYNC_EOF;
  }
  if ((size_t)r < sizeof(struct wire_header))
    return rrt_error_set(err, EPROTO, "sync: short message");
  struct wire_header h;
  memcpy(&h, buf, sizeof(h));
  if (h.len != (size_t)r - sizeof(h))
    return rrt_error_set(err, EPROTO, "sync: bad message length");
  if (h.type == RRT_SYNC_ERROR) {
    buf[r] = '\0';
    rrt_error_set(err, 0, "%s", buf + sizeof(h));
    err->errnum = (int)h.value;
    return -1;
  }
  msg->type = h.type;
  msg->value = h.value;
  msg->len = h.len;
  if (h.len > 0) {
    msg->data = xmalloc(h.len + 1);
    memcpy(msg->data, buf + sizeof(h), h.len);
    msg->data[h.len] = '\0';
  }
  return 0;
}

int rrt_sync_expect(int fd, enum rrt_sync_type type, int64_t *value, char **payload,
                    struct rrt_error *err)
{
  struct rrt_sync_msg m;
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
  rrt_sync_msg_free(&m);
  return 0;
}

void rrt_sync_msg_free(struct rrt_sync_msg *msg)
{
  free(msg->data);
  msg->data = NULL;
}

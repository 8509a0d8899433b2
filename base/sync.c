/* sync.c: typed messages over SOCK_SEQPACKET: header then payload, one datagram. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
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
  static const char *names[] = {"?",          "INIT_PID", "CONTINUE", "NS_READY",
                                "HOOKS_DONE", "CREATED",  "START",    "ERROR",
                                "HELPER",     "RESOLV",   "FUSE",     "FUSE_READY"};
  return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static int recv_one(int fd, struct rrt_sync_msg *msg, int flags, struct rrt_error *err);

/* The peer is gone (a send failed with EPIPE or ECONNRESET): it may have said why before it
 * went. Its messages are still queued here; the ERROR among them is the error to report, not the
 * broken pipe. Never blocks: a closed peer sends nothing more. */
static bool peer_error(int fd, struct rrt_error *err)
{
  for (int i = 0; i < 64; i++) {
    struct rrt_error e = RRT_ERROR_INIT;
    struct rrt_sync_msg m;
    int r = recv_one(fd, &m, MSG_DONTWAIT, &e);
    if (r == 0) {
      rrt_sync_msg_free(&m);
      continue;
    }
    bool found = r == -1 && e.msg && m.type == RRT_SYNC_ERROR;
    if (found) {
      rrt_error_clear(err);
      *err = e;
      return true;
    }
    rrt_error_clear(&e);
    return false;
  }
  return false;
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
  if (r < 0) {
    int saved = errno;
    if ((saved == EPIPE || saved == ECONNRESET) && peer_error(fd, err))
      return -1;
    errno = saved;
    return rrt_error_errno(err, "sync: send %s", type_name(type));
  }
  return 0;
}

void rrt_sync_send_error(int fd, const struct rrt_error *e)
{
  struct rrt_error ignored = RRT_ERROR_INIT;
  (void)rrt_sync_send(fd, RRT_SYNC_ERROR, e->errnum, rrt_error_msg(e), &ignored);
  rrt_error_clear(&ignored);
}

/* recv() that reads past a reset: when the peer closed with our messages unread in its queue,
 * the kernel reports ECONNRESET once (and clears it), but what the peer sent before it closed is
 * still queued here, its error message included. The next call returns it, or 0 at the end. */
static ssize_t recv_past_reset(int fd, struct msghdr *m, int flags)
{
  ssize_t r;
  int resets = 0;
  for (;;) {
    r = recvmsg(fd, m, flags);
    if (r >= 0 || (errno != EINTR && (errno != ECONNRESET || ++resets > 4)))
      return r;
  }
}

static int recv_one(int fd, struct rrt_sync_msg *msg, int flags, struct rrt_error *err)
{
  memset(msg, 0, sizeof(*msg));
  msg->fd = -1;
  /* A peek at the header with MSG_TRUNC gives the datagram's whole length, so the payload
   * buffer has exactly its size: no 256 KiB buffer mapped and unmapped per message. */
  struct wire_header h;
  struct iovec hv = {&h, sizeof(h)};
  struct msghdr peek = {.msg_iov = &hv, .msg_iovlen = 1};
  ssize_t r = recv_past_reset(fd, &peek, flags | MSG_PEEK | MSG_TRUNC);
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
  r = recv_past_reset(fd, &m, flags | MSG_CMSG_CLOEXEC);
  if (r < 0)
    return rrt_error_errno(err, "sync: receive");
  cleanup_close int passed = rrt_msg_fd(&m);
  if (bad)
    return rrt_error_set(err, EPROTO, "sync: %s",
                         total < sizeof(h) ? "short message" : "bad message length");
  data[h.len] = '\0';
  msg->type = h.type;
  if (h.type == RRT_SYNC_ERROR) {
    rrt_error_set(err, 0, "%s", data);
    err->errnum = (int)h.value;
    return -1;
  }
  msg->value = h.value;
  msg->len = h.len;
  msg->fd = steal_fd(&passed);
  if (h.len > 0)
    msg->data = steal_ptr(&data);
  return 0;
}

int rrt_sync_recv(int fd, struct rrt_sync_msg *msg, struct rrt_error *err)
{
  return recv_one(fd, msg, 0, err);
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

/* A "Key:\tN" line of a /proc file, or fallback. */
static long long proc_field(const char *path, const char *key, long long fallback)
{
  cleanup_free char *text = NULL;
  if (rrt_read_file(path, &text, NULL, NULL) < 0)
    return fallback;
  size_t klen = strlen(key);
  for (const char *line = text; line && *line;
       line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    long long v;
    if (strncmp(line, key, klen) == 0 && line[klen] == ':' &&
        sscanf(line + klen + 1, "%lld", &v) == 1)
      return v;
  }
  return fallback;
}

int rrt_sync_child_pid(int pidfd, pid_t child, pid_t *pid, struct rrt_error *err)
{
  if (pidfd < 0)
    return rrt_error_msgf(err, EPROTO, "sync: INIT_PID came without the process's pidfd");
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
  long long p = proc_field(path, "Pid", 0);
  if (p <= 0)
    return rrt_error_msgf(err, EPROTO,
                          "sync: INIT_PID: the process its pidfd names is gone or not in our pid "
                          "namespace");
  if (p != child) {
    snprintf(path, sizeof(path), "/proc/%lld/status", p);
    long long ppid = proc_field(path, "PPid", -1);
    if (ppid != child)
      return rrt_error_msgf(err, EPROTO,
                            "sync: INIT_PID names pid %lld, which is neither our child %d nor its "
                            "child (its parent is %lld): refused",
                            p, (int)child, ppid);
  }
  *pid = (pid_t)p;
  return 0;
}

int rrt_sync_expect_child_pid(int fd, pid_t child, pid_t *pid, int *pidfd, struct rrt_error *err)
{
  int64_t ignored;
  cleanup_close int passed = -1;
  if (rrt_sync_expect_fd(fd, RRT_SYNC_INIT_PID, &ignored, &passed, err) < 0)
    return -1;
  if (rrt_sync_child_pid(passed, child, pid, err) < 0)
    return -1;
  *pidfd = steal_fd(&passed);
  return 0;
}

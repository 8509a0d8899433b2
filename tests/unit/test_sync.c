/* test_sync.c: the typed message protocol over a SOCK_SEQPACKET pair. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/sync.h"
#include "rootlessrt/util.h"
#include "tap.h"

static void roundtrip(int s[2])
{
  struct rrt_error err = RRT_ERROR_INIT;
  struct rrt_sync_msg m;
  ok(rrt_sync_send(s[0], RRT_SYNC_INIT_PID, 4242, NULL, &err) == 0, "send INIT_PID, no payload");
  ok(rrt_sync_recv(s[1], &m, &err) == 0, "receive it");
  is_int(m.type, RRT_SYNC_INIT_PID, "type survives");
  is_int(m.value, 4242, "value survives");
  is_int(m.len, 0, "no payload");
  ok(m.data == NULL, "no payload buffer");
  rrt_sync_msg_free(&m);

  ok(rrt_sync_send(s[0], RRT_SYNC_HOOKS_DONE, -7, "{\"status\":\"created\"}", &err) == 0,
     "send a payload");
  char *payload = NULL;
  int64_t v = 0;
  ok(rrt_sync_expect(s[1], RRT_SYNC_HOOKS_DONE, &v, &payload, &err) == 0, "expect it");
  is_str(payload, "{\"status\":\"created\"}", "payload survives, NUL-terminated");
  is_int(v, -7, "negative value survives");
  free(payload);
}

static void big(int s[2])
{
  struct rrt_error err = RRT_ERROR_INIT;
  size_t n = 200 * 1024;
  char *text = xmalloc(n + 1);
  for (size_t i = 0; i < n; i++)
    text[i] = (char)('a' + i % 26);
  text[n] = '\0';
  /* 200 KiB does not fit the default socket buffer in one go for every kernel: a writer. */
  pid_t pid = fork();
  if (pid == 0) {
    struct rrt_error e = RRT_ERROR_INIT;
    int r = rrt_sync_send(s[0], RRT_SYNC_HOOKS_DONE, 1, text, &e);
    free(text);
    _exit(r == 0 ? 0 : 1);
  }
  struct rrt_sync_msg m;
  ok(rrt_sync_recv(s[1], &m, &err) == 0, "a 200 KiB payload is received");
  is_int(m.len, n, "all of it");
  ok(m.data && memcmp(m.data, text, n) == 0 && m.data[n] == '\0', "byte for byte");
  rrt_sync_msg_free(&m);
  int st = -1;
  waitpid(pid, &st, 0);
  is_int(st, 0, "the writer succeeded");
  free(text);
  rrt_error_clear(&err);
}

/* CONTINUE carries init's start socket: one descriptor per message, close-on-exec. */
static void fds(int s[2])
{
  struct rrt_error err = RRT_ERROR_INIT;
  int p[2];
  if (pipe(p) < 0)
    return;
  ok(rrt_sync_send_fd(s[0], RRT_SYNC_CONTINUE, 5, NULL, p[1], &err) == 0, "send a descriptor");
  int got = -1;
  int64_t v = 0;
  ok(rrt_sync_expect_fd(s[1], RRT_SYNC_CONTINUE, &v, &got, &err) == 0, "receive it");
  ok(got >= 0 && got != p[1], "a new descriptor (%d)", got);
  is_int(v, 5, "the value comes along");
  ok(got >= 0 && (fcntl(got, F_GETFD) & FD_CLOEXEC), "it is close-on-exec");
  ok(got >= 0 && write(got, "x", 1) == 1, "it writes into the same pipe");
  char c = 0;
  ok(read(p[0], &c, 1) == 1 && c == 'x', "which the sender's end reads");
  if (got >= 0)
    close(got);
  ok(rrt_sync_send(s[0], RRT_SYNC_CONTINUE, 0, NULL, &err) == 0, "no descriptor this time");
  ok(rrt_sync_expect_fd(s[1], RRT_SYNC_CONTINUE, NULL, &got, &err) == 0 && got == -1,
     "expect_fd says -1");
  int before = tap_count_fds();
  ok(rrt_sync_send_fd(s[0], RRT_SYNC_NS_READY, 0, NULL, p[0], &err) == 0,
     "a descriptor on a message expected without one");
  ok(rrt_sync_expect(s[1], RRT_SYNC_NS_READY, NULL, NULL, &err) == 0, "is received");
  is_int(tap_count_fds(), before, "and closed, not leaked");
  close(p[0]);
  close(p[1]);
  rrt_error_clear(&err);
}

static void errors(int s[2])
{
  struct rrt_error err = RRT_ERROR_INIT, e = RRT_ERROR_INIT;
  struct rrt_sync_msg m;
  rrt_error_msgf(&e, ENOENT, "exec \"x\": not found");
  rrt_sync_send_error(s[0], &e);
  is_int(rrt_sync_recv(s[1], &m, &err), -1, "an ERROR message is an error");
  is_int(err.errnum, ENOENT, "with the sender's errno");
  is_str(rrt_error_msg(&err), "exec \"x\": not found", "and its message");
  rrt_error_clear(&err);
  rrt_error_clear(&e);

  ok(rrt_sync_send(s[0], RRT_SYNC_CREATED, 0, NULL, &err) == 0, "send CREATED");
  ok(rrt_sync_expect(s[1], RRT_SYNC_START, NULL, NULL, &err) < 0, "expecting START fails");
  ok(strstr(rrt_error_msg(&err), "expected START, got CREATED") != NULL,
     "the error names both types: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);

  /* Not our framing: a short datagram, then a header that lies about its length. */
  ok(send(s[0], "abc", 3, 0) == 3, "a 3-byte datagram");
  is_int(rrt_sync_recv(s[1], &m, &err), -1, "is refused");
  ok(strstr(rrt_error_msg(&err), "short message") != NULL, "as short: %s", rrt_error_msg(&err));
  rrt_error_clear(&err);
  struct {
    uint32_t type, len;
    int64_t value;
  } lie = {RRT_SYNC_CONTINUE, 100, 0};
  ok(send(s[0], &lie, sizeof(lie), 0) == (ssize_t)sizeof(lie), "a header claiming 100 bytes");
  is_int(rrt_sync_recv(s[1], &m, &err), -1, "is refused");
  ok(strstr(rrt_error_msg(&err), "bad message length") != NULL, "as a bad length: %s",
     rrt_error_msg(&err));
  rrt_error_clear(&err);
  ok(rrt_sync_send(s[0], RRT_SYNC_CONTINUE, 3, NULL, &err) == 0, "a good one after the bad");
  int64_t v = 0;
  ok(rrt_sync_expect(s[1], RRT_SYNC_CONTINUE, &v, NULL, &err) == 0 && v == 3,
     "is read: the bad ones did not stay queued");

  close(s[0]);
  is_int(rrt_sync_recv(s[1], &m, &err), RRT_SYNC_EOF, "a closed peer is RRT_SYNC_EOF");
  is_int(err.errnum, EPIPE, "with EPIPE");
  rrt_error_clear(&err);
}

int main(void)
{
  int s[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s) < 0)
    return 1;
  roundtrip(s);
  big(s);
  fds(s);
  errors(s);
  close(s[1]);
  return tap_done();
}

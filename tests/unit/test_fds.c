/* test_fds.c: closing the runtime's fds before execve (close_range and the /proc/self/fd walk)
 * and the LISTEN_FDS a socket activation hands over. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "confine_child.h"
#include "rootlessrt/confine.h"
#include "tap.h"

struct fds_case {
  bool no_close_range; /* force the /proc/self/fd walk */
};

static bool fd_open(int fd)
{
  return fcntl(fd, F_GETFD) >= 0;
}

static int fds_child(int out, void *arg)
{
  const struct fds_case *c = arg;
  int fds[6];
  for (int i = 0; i < 6; i++)
    fds[i] = open("/dev/null", O_RDONLY | (i % 2 ? O_CLOEXEC : 0));
  /* keep[] is unsorted and holds one fd below `first`. */
  int keep[] = {fds[4], out, fds[1], 0};
  struct rrt_error e = RRT_ERROR_INIT;
  if (c->no_close_range) {
    struct rrt_seccomp_syscall s[] = {{.names = STRV("close_range"),
                                       .action = "SCMP_ACT_ERRNO",
                                       .has_errno_ret = true,
                                       .errno_ret = ENOSYS}};
    struct rrt_seccomp sc = {.default_action = "SCMP_ACT_ALLOW", .syscalls = s, .n_syscalls = 1};
    struct rrt_seccomp_filter *f = NULL;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || rrt_seccomp_compile(&sc, NULL, &f, &e) < 0 ||
        rrt_seccomp_load(f, &sc, NULL, &e) < 0)
      return say(out, "setup: %s", rrt_error_msg(&e)), 3;
    rrt_seccomp_filter_free(f);
    if (close_range(1000, 1001, 0) == 0 || errno != ENOSYS)
      return say(out, "close_range not blocked"), 3;
  }
  if (rrt_close_fds_from(3, keep, 4, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 4;
  int n_open = 0;
  for (int fd = 3; fd < 64; fd++)
    n_open += fd_open(fd);
  bool gone = !fd_open(fds[0]) && !fd_open(fds[2]) && !fd_open(fds[3]) && !fd_open(fds[5]);
  say(out, "open=%d gone=%d kept=%d%d cloexec=%d%d", n_open, gone, fd_open(fds[1]), fd_open(fds[4]),
      (fcntl(fds[1], F_GETFD) & FD_CLOEXEC) != 0, (fcntl(fds[4], F_GETFD) & FD_CLOEXEC) != 0);
  return 0;
}

static void test_fds(void)
{
  char *out = NULL;
  struct fds_case c = {false};
  int st = in_child(fds_child, &c, &out);
  ok(exited0(st), "close_fds: ran");
  /* out (the pipe), fds[1] (CLOEXEC) and fds[4] (not) stay. */
  is_str(out, "open=3 gone=1 kept=11 cloexec=10",
         "close_fds: only kept fds survive, CLOEXEC flags untouched");
  free(out);
  c.no_close_range = true;
  st = in_child(fds_child, &c, &out);
  is_str(out, "open=3 gone=1 kept=11 cloexec=10",
         "close_fds: same result through /proc/self/fd when close_range is unavailable");
  free(out);
  struct rrt_error e = RRT_ERROR_INIT;
  ok(rrt_close_fds_from(-1, NULL, 0, &e) < 0, "close_fds: negative first refused");
  rrt_error_clear(&e);
}

/* In a child: fds 3 and 4 open, LISTEN_* as given; writes N and whether fd 3 became CLOEXEC. */
static int listen_child(int out, void *arg)
{
  const char *const *env = arg;
  int o = fcntl(out, F_DUPFD_CLOEXEC, 20);
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (o < 0 || fd < 0 || dup2(fd, 3) < 0 || dup2(fd, 4) < 0)
    return 2;
  for (int i = 5; i < 20; i++)
    close(i);
  /* as a socket activation hands them over: inheritable */
  if (fcntl(3, F_SETFD, 0) < 0 || fcntl(4, F_SETFD, 0) < 0)
    return 2;
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_PID");
  char pid[32];
  snprintf(pid, sizeof(pid), "%d", (int)getpid());
  if (env[0])
    setenv("LISTEN_FDS", env[0], 1);
  if (env[1])
    setenv("LISTEN_PID", strcmp(env[1], "self") == 0 ? pid : env[1], 1);
  int n = rrt_listen_fds_from_env();
  dprintf(o, "%d %d", n, (fcntl(3, F_GETFD) & FD_CLOEXEC) != 0);
  return 0;
}

static void test_listen_fds(void)
{
  const char
      *cases[][3] =
          {
              {"2", "self", "2 1"}, {"2", NULL, "2 1"},   {"2", "1", "0 0"},
              {"0", "self", "0 0"}, {"x", "self", "0 0"}, {NULL, "self", "0 0"},
              {"5", "self", "0 1"}, /* fds 5.. are not open: not ours (3 was marked on the way) */
          };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *out = NULL;
    const char *env[2] = {cases[i][0], cases[i][1]};
    int st = in_child(listen_child, (void *)env, &out);
    ok(exited0(st), "listen fds: LISTEN_FDS=%s LISTEN_PID=%s ran", env[0] ? env[0] : "(unset)",
       env[1] ? env[1] : "(unset)");
    is_str(out, cases[i][2], "listen fds: LISTEN_FDS=%s LISTEN_PID=%s -> %s",
           env[0] ? env[0] : "(unset)", env[1] ? env[1] : "(unset)", cases[i][2]);
    free(out);
  }
}

int main(void)
{
  test_fds();
  test_listen_fds();
  return tap_done();
}

/* test_exec.c: exec's report protocol (the reach rule, confine.h): the pid comes from a pidfd
 * of the joining child's own child, one report of each kind, a forged or second one refused. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/exec.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/util.h"
#include "tap.h"

enum script {
  HONEST,        /* INIT_PID with the grandchild's pidfd, then EOF */
  SECOND_REPORT, /* then, after the ack, a second INIT_PID naming the test process */
  FORGED,        /* INIT_PID with a pidfd of the test process (not our child) */
  NO_PIDFD,      /* INIT_PID with a pid value only */
};

/* The joining child's part: fork a "process" that sleeps, report it as the script says. */
static void __attribute__((noreturn)) child_main(int fd, enum script s, pid_t test_pid)
{
  struct rrt_error e = RRT_ERROR_INIT;
  pid_t g = fork();
  if (g == 0) {
    pause();
    _exit(0);
  }
  int gfd = (int)syscall(SYS_pidfd_open, g, 0);
  int tfd = (int)syscall(SYS_pidfd_open, test_pid, 0);
  if (s == FORGED)
    rrt_sync_send_fd(fd, RRT_SYNC_INIT_PID, g, NULL, tfd, &e);
  else if (s == NO_PIDFD)
    rrt_sync_send(fd, RRT_SYNC_INIT_PID, g, NULL, &e);
  else
    rrt_sync_send_fd(fd, RRT_SYNC_INIT_PID, g, NULL, gfd, &e);
  if (rrt_sync_expect(fd, RRT_SYNC_CONTINUE, NULL, NULL, &e) == 0 && s == SECOND_REPORT) {
    rrt_sync_send_fd(fd, RRT_SYNC_INIT_PID, test_pid, NULL, tfd, &e);
    pause(); /* the runtime kills us */
  }
  kill(g, SIGKILL);
  _exit(0);
}

struct outcome {
  int r;
  pid_t pid;
  int pidfd;
  char *msg;
  bool process_killed; /* the reported process got SIGKILL */
  int child_status;
};

static struct outcome play(enum script s)
{
  struct outcome o = {.pidfd = -1};
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    abort();
  pid_t test_pid = getpid();
  pid_t child = fork();
  if (child == 0) {
    close(sv[0]);
    child_main(sv[1], s, test_pid);
  }
  close(sv[1]);
  struct rrt_error err = RRT_ERROR_INIT;
  o.r = rrt_exec_collect_reports(sv[0], child, &o.pid, &o.pidfd, &err);
  o.msg = xstrdup(rrt_error_msg(&err) ? rrt_error_msg(&err) : "");
  rrt_error_clear(&err);
  if (o.pidfd >= 0) {
    struct pollfd p = {.fd = o.pidfd, .events = POLLIN};
    /* The process exits when it is killed: wait for that (bounded), not a fixed time. */
    o.process_killed = poll(&p, 1, 5000) == 1;
  }
  waitpid(child, &o.child_status, 0);
  close(sv[0]);
  return o;
}

int main(void)
{
  struct outcome o = play(HONEST);
  is_int(o.r, 0, "an honest report is accepted");
  ok(o.pid > 0 && o.pid != getpid(), "the pid is the process the child forked");
  ok(o.pidfd >= 0, "and its pidfd is handed back");
  is_int(WIFEXITED(o.child_status) ? WEXITSTATUS(o.child_status) : -1, 0,
         "the child was acked and exited");
  free(o.msg);
  if (o.pidfd >= 0)
    close(o.pidfd);

  o = play(SECOND_REPORT);
  is_int(o.r, -1, "a second INIT_PID report fails the exec");
  ok(strstr(o.msg, "a second INIT_PID report") && strstr(o.msg, "protocol error"),
     "and says so: %s", o.msg);
  ok(o.process_killed, "the process the first report named is killed");
  ok(kill(getpid(), 0) == 0, "the pid the second report named (ours) is not signalled");
  ok(WIFSIGNALED(o.child_status), "the joining child is killed");
  free(o.msg);
  if (o.pidfd >= 0)
    close(o.pidfd);

  o = play(FORGED);
  is_int(o.r, -1, "a report whose pidfd names a process that is not the child's is refused");
  ok(strstr(o.msg, "neither our child") != NULL, "with a message naming why: %s", o.msg);
  free(o.msg);

  o = play(NO_PIDFD);
  is_int(o.r, -1, "a report without a pidfd is refused");
  ok(strstr(o.msg, "without the process's pidfd") != NULL, "with a message naming why: %s", o.msg);
  free(o.msg);
  return tap_done();
}

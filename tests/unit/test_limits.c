/* test_limits.c: rlimits, oomScoreAdj, ioPriority, the scheduler and the personality, each applied
 * in a child. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "confine_child.h"
#include "rootlessrt/confine.h"
#include "tap.h"

static int rlimit_child(int out, void *arg)
{
  struct rrt_rlimit rl[] = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 512, 1024},
                            {"RLIMIT_CORE", RLIMIT_CORE, 0, 0}};
  struct rrt_process proc = {.rlimits = rl, .n_rlimits = 2};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  struct rlimit a, b;
  getrlimit(RLIMIT_NOFILE, &a);
  getrlimit(RLIMIT_CORE, &b);
  say(out, "%llu/%llu %llu/%llu", (unsigned long long)a.rlim_cur, (unsigned long long)a.rlim_max,
      (unsigned long long)b.rlim_cur, (unsigned long long)b.rlim_max);
  return 0;
}

/* In a user namespace CAP_SYS_RESOURCE does not count: a hard limit cannot
 * go back up, as for a rootless runtime. */
static int rlimit_raise_child(int out, void *arg)
{
  if (unshare(CLONE_NEWUSER) < 0)
    return say(out, "unshare: %s", strerror(errno)), 2;
  struct rlimit low = {256, 1024};
  if (setrlimit(RLIMIT_NOFILE, &low) < 0)
    return 2;
  struct rrt_rlimit rl[] = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 512, 4096}};
  struct rrt_process proc = {.rlimits = rl, .n_rlimits = 1};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) == 0)
    return say(out, "raised"), 0;
  say(out, "%s", rrt_error_msg(&e));
  return 1;
}

static int read_int_file(const char *path)
{
  char *s = NULL;
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_read_file(path, &s, NULL, &e) < 0) {
    rrt_error_clear(&e);
    return -99999;
  }
  int v = atoi(s);
  free(s);
  return v;
}

static int oom_child(int out, void *arg)
{
  struct rrt_process proc = {.has_oom_score_adj = true, .oom_score_adj = 500};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_oom_score_adj_apply(&proc, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  say(out, "%d", read_int_file("/proc/self/oom_score_adj"));
  /* Lowering it again without CAP_SYS_RESOURCE is only a warning. */
  if (unshare(CLONE_NEWUSER) == 0) {
    proc.oom_score_adj = -500;
    if (rrt_oom_score_adj_apply(&proc, &e) < 0)
      return say(out, " %s", rrt_error_msg(&e)), 4;
    say(out, " %d", read_int_file("/proc/self/oom_score_adj"));
  }
  return 0;
}

static int sched_io_child(int out, void *arg)
{
  struct rrt_process proc = {
      .io_priority = {.present = true, .klass = "IOPRIO_CLASS_BE", .priority = 5},
      .scheduler = {.present = true, .policy = "SCHED_BATCH", .nice = 7},
  };
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  long io = syscall(SYS_ioprio_get, 1, 0);
  say(out, "io=%ld/%ld batch=%d nice=%d", io >> 13, io & 7, sched_getscheduler(0) == SCHED_BATCH,
      getpriority(PRIO_PROCESS, 0));
  return 0;
}

static int sched_fifo_child(int out, void *arg)
{
  if (unshare(CLONE_NEWUSER) < 0)
    return 2;
  struct rrt_process proc = {
      .scheduler = {.present = true, .policy = "SCHED_FIFO", .priority = 10},
  };
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_process_limits_apply(&proc, &e) == 0)
    return say(out, "allowed"), 0;
  say(out, "%s", rrt_error_msg(&e));
  return 1;
}

static int personality_child(int out, void *arg)
{
  struct rrt_personality pers = {.domain = "LINUX32"};
  struct rrt_error e = RRT_ERROR_INIT;
  if (rrt_personality_apply(&pers, &e) < 0)
    return say(out, "%s", rrt_error_msg(&e)), 3;
  struct utsname u;
  uname(&u);
  say(out, "%d %s", (personality(0xffffffff) & PER_MASK) == PER_LINUX32, u.machine);
  return 0;
}

/* fn's child, which needs a user namespace (a counted skip without one), reports want. */
static void userns_child_says(bool have_userns, child_fn fn, const char *want, const char *name)
{
  if (!have_userns) {
    ok(1, "# SKIP user namespaces unavailable");
    return;
  }
  char *out = NULL;
  in_child(fn, NULL, &out);
  is_str(out, want, "%s", name);
  free(out);
}

static void test_limits(bool have_userns)
{
  char *out = NULL;
  int st = in_child(rlimit_child, NULL, &out);
  ok(exited0(st), "rlimits: applied");
  is_str(out, "512/1024 0/0", "rlimits: getrlimit sees soft/hard as configured");
  free(out);

  userns_child_says(have_userns, rlimit_raise_child,
                    "process.rlimits[0] (RLIMIT_NOFILE): cannot raise hard limit above 1024: "
                    "Operation not permitted",
                    "rlimits: raising the hard limit fails with a clear error");

  struct rrt_rlimit bad[] = {{"RLIMIT_NOFILE", RLIMIT_NOFILE, 10, 5}};
  struct rrt_process proc = {.rlimits = bad, .n_rlimits = 1};
  struct rrt_error e = RRT_ERROR_INIT;
  ok(rrt_process_limits_apply(&proc, &e) < 0 && strstr(rrt_error_msg(&e), "soft 10 above hard 5"),
     "rlimits: soft above hard refused (%s)", rrt_error_msg(&e));
  rrt_error_clear(&e);

  st = in_child(oom_child, NULL, &out);
  ok(exited0(st), "oomScoreAdj: applied (%s)", out);
  ok(strncmp(out, "500", 3) == 0, "oomScoreAdj: raised to 500");
  if (have_userns)
    is_str(out, "500 500", "oomScoreAdj: lowering unprivileged warns, keeps the value");
  else
    ok(1, "# SKIP user namespaces unavailable");
  free(out);

  st = in_child(sched_io_child, NULL, &out);
  is_str(out, "io=2/5 batch=1 nice=7", "ioPriority BE/5 and SCHED_BATCH nice 7 applied");
  free(out);

  userns_child_says(have_userns, sched_fifo_child,
                    "process.scheduler (SCHED_FIFO, priority 10, nice 0): sched_setattr: "
                    "Operation not permitted",
                    "scheduler: EPERM names the policy");

  struct rrt_process badsched = {.scheduler = {.present = true, .policy = "SCHED_FAST"}};
  ok(rrt_process_limits_apply(&badsched, &e) < 0 &&
         strcmp(rrt_error_msg(&e), "process.scheduler.policy: unknown policy SCHED_FAST") == 0,
     "scheduler: unknown policy refused");
  rrt_error_clear(&e);

  st = in_child(personality_child, NULL, &out);
  is_str(out, "1 i686", "personality LINUX32: uname says i686");
  free(out);
}

int main(void)
{
  bool have_userns = userns_works();
  test_limits(have_userns);
  return tap_done();
}

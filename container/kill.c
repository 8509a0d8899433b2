/* kill.c: the kill verb: a signal to init, or (--all) to every process of the container, all
 * held until each has it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/container.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/log.h"
#include "rootlessrt/state.h"
#include "rootlessrt/util.h"

/* The state letter of /proc/PID/stat ('T' stopped), or 0 when it is gone. */
static char proc_state(pid_t pid)
{
  char path[64], buf[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}

/* Without a freezer: each running process stopped (SIGSTOP), and waited for, up to 1 s in all:
 * a signal sent before the stop took effect could be handled first. stopped[i]: ours to SIGCONT
 * (a process stopped already stays so). */
static void stop_each(const pid_t *pids, size_t n, bool *stopped)
{
  for (size_t i = 0; i < n; i++) {
    char c = proc_state(pids[i]);
    stopped[i] = c && c != 'T' && c != 't' && c != 'Z' && kill(pids[i], SIGSTOP) == 0;
  }
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (size_t i = 0; i < n; i++) {
    for (;;) {
      char c = !stopped[i] ? 'T' : proc_state(pids[i]);
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (c == 'T' || c == 'Z' || c == 0 || now.tv_sec - t0.tv_sec >= 1)
        break;
      nanosleep(&(struct timespec){0, 200000}, NULL);
    }
  }
}

/*
 * kill --all: each process there gets the signal before any of them runs again, so that none,
 * init included, can exit on another's signal before its own arrives: the cgroup is frozen
 * around the kills (as runc does), or without a freezer each process is stopped and continued.
 * SIGKILL, SIGSTOP and SIGCONT need neither.
 */
static void signal_all(const struct rrt_state *st, const pid_t *pids, size_t n, int sig)
{
  struct rrt_cgroup cg;
  rrt_cgroup_load(st, &cg);
  bool has_cg = rrt_cgroup_exists(&cg);
  /* A paused container is held already. */
  bool hold = sig != 0 && sig != SIGKILL && sig != SIGSTOP && sig != SIGCONT && n > 1 &&
              !(has_cg && rrt_cgroup_frozen(&cg));
  struct rrt_error e = RRT_ERROR_INIT;
  bool frozen =
      hold && has_cg && rrt_cgroup_has_freezer(&cg) && rrt_cgroup_freeze(&cg, true, &e) == 0;
  rrt_error_clear(&e);
  cleanup_free bool *stopped = xzalloc(n * sizeof(bool));
  if (hold && !frozen)
    stop_each(pids, n, stopped);
  for (size_t i = 0; i < n; i++)
    kill(pids[i], sig);
  if (frozen && rrt_cgroup_freeze(&cg, false, &e) < 0)
    rrt_warn("kill --all: thaw: %s", rrt_error_msg(&e));
  rrt_error_clear(&e);
  for (size_t i = 0; i < n; i++)
    if (stopped[i])
      kill(pids[i], SIGCONT);
  rrt_cgroup_free(&cg);
}

int rrt_container_kill(const struct rrt_global *g, const char *id, int sig, bool all,
                       struct rrt_error *err)
{
  struct loaded l;
  int ret = -1;
  if (rrt_load_container(g, id, false, false, NULL, false, &l, err) < 0)
    goto out;
  const char *status = rrt_state_status(&l.st);
  if (strcmp(status, "stopped") == 0 && all) {
    /* init is gone, but what it left in its cgroup is not (containerd cleans a shared pid
     * namespace up so): signalled, and that is a success. */
    ret = rrt_cgroup_kill_state(&l.st, sig, err);
    goto out;
  }
  if (strcmp(status, "stopped") == 0) {
    /* containerd's checkKillError and runc's tests match "container not running". */
    rrt_error_msgf(err, ESRCH, "container \"%s\": container not running (it has stopped)", id);
    goto out;
  }
  if (all) {
    pid_t *pids = NULL;
    size_t n = 0;
    if (rrt_live_pids(&l.st, &pids, &n, err) < 0)
      goto out;
    signal_all(&l.st, pids, n, sig);
    free(pids);
  } else if (kill(l.st.pid, sig) < 0) {
    rrt_error_errno(err, "kill container \"%s\" (pid %d)", id, l.st.pid);
    goto out;
  }
  ret = 0;
out:
  rrt_loaded_free(&l);
  return ret;
}

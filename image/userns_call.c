/* userns_call.c: a function run as root of a new user namespace with the caller's default id
 * maps, the ids every container of the caller sees: unpacking layers, removing upper dirs. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/image.h"
#include "rootlessrt/rmtree.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* In the child: wait for the maps, become root, run fn, report its error on the pipe. */
static int child(int ready, int go, int report, int (*fn)(void *, struct rrt_error *), void *arg)
{
  struct rrt_error err = RRT_ERROR_INIT;
  char c = 0;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (unshare(CLONE_NEWUSER) < 0) {
    rrt_error_errno(&err, "unshare(CLONE_NEWUSER)");
    goto fail;
  }
  if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1 || c != 'g')
    _exit(3);
  if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
    rrt_error_errno(&err, "become root in the user namespace");
    goto fail;
  }
  if (fn(arg, &err) == 0)
    _exit(0);
fail:
  dprintf(report, "%s", rrt_error_msg(&err));
  _exit(1);
}

static int map_child(pid_t pid, struct rrt_error *err)
{
  /* A new user namespace without maps in the config: the maps a container of this caller
   * gets by default (container/plan.c), nested or not. */
  struct rrt_namespace userns = {.type = CLONE_NEWUSER};
  struct rrt_spec spec = {.lnx = {.namespaces = &userns, .n_namespaces = 1}};
  struct rrt_userns_plan plan = {0};
  struct rrt_userns_caller caller;
  rrt_userns_caller_read(&caller);
  int r = rrt_userns_plan_caller(&spec, &caller, &plan, err);
  rrt_userns_caller_free(&caller);
  if (r == 0 && plan.method != RRT_MAP_NONE)
    r = rrt_userns_write_maps(pid, &plan, err);
  rrt_userns_plan_free(&plan);
  return r;
}

int rrt_userns_call(int (*fn)(void *arg, struct rrt_error *err), void *arg, struct rrt_error *err)
{
  /* Real root needs no user namespace: the store holds the image's own ids. */
  if (rrt_host_privileged())
    return fn(arg, err);
  int ready[2], go[2], report[2];
  if (pipe2(ready, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "pipe");
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
    rrt_error_errno(err, "pipe");
    close(ready[0]);
    close(ready[1]);
    return -1;
  }
  fflush(NULL);
  cleanup_pid pid_t pid = fork();
  if (pid < 0)
    rrt_error_errno(err, "fork");
  else if (pid == 0)
    child(ready[1], go[0], report[1], fn, arg);
  close(ready[1]);
  close(go[0]);
  close(report[1]);
  cleanup_close int rd = ready[0], gw = go[1], rep = report[0];
  if (pid < 0)
    return -1;
  char c;
  bool ready_ok = read(rd, &c, 1) == 1;
  if (ready_ok && map_child(pid, err) < 0)
    return rrt_error_wrap(err, "user namespace");
  if (ready_ok && write(gw, "g", 1) != 1)
    return rrt_error_errno(err, "user namespace child");
  close(steal_fd(&gw));
  cleanup_free char *msg = NULL;
  size_t len = 0;
  rrt_read_fd(rep, &msg, &len, NULL);
  int status;
  pid_t p = steal_pid(&pid);
  while (waitpid(p, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return 0;
  if (len)
    return rrt_error_msgf(err, EIO, "%s", msg);
  return rrt_error_msgf(err, EIO, "the user namespace child ended (status %d)", status);
}

/* The tree may be a container's upper directory, which a process of it that outlived init can
 * still be changing: rrt_remove_tree never follows a symlink nor enters another mount. */
static int remove_fn(void *arg, struct rrt_error *err)
{
  return rrt_remove_tree(arg, err);
}

int rrt_remove_tree_userns(const char *path, struct rrt_error *err)
{
  struct stat st;
  if (lstat(path, &st) < 0 && errno == ENOENT)
    return 0;
  /* Our own tree needs no user namespace; one with subordinate ids does. */
  if (remove_fn((void *)path, NULL) == 0 && lstat(path, &st) < 0 && errno == ENOENT)
    return 0;
  return rrt_userns_call(remove_fn, (void *)path, err);
}

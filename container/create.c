/* create.c: the create walk: the clone, the guards on what it started, the undoing of a failed
 * create; plan.c decides before the clone, handshake.c talks to init after it. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "create.h"
#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/container.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/init.h"
#include "rootlessrt/state.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

static void create_ctx_free(struct create_ctx *c)
{
  rrt_spec_free(c->spec);
  free(c->config_text);
  free(c->bundle);
  free(c->rootfs);
  free(c->root);
  free(c->pid_file);
  free(c->resolv_conf);
  free(c->seccomp_cache);
  rrt_cgroup_free(&c->cg_made);
  if (c->dirfd >= 0)
    close(c->dirfd);
  if (c->listen_fd >= 0)
    close(c->listen_fd);
  if (c->console_fd >= 0)
    close(c->console_fd);
  if (c->terminal_fd >= 0)
    close(c->terminal_fd);
  if (c->sync_fd >= 0)
    close(c->sync_fd);
  rrt_hostfds_release(&c->hostfds);
  rrt_userns_plan_free(&c->plan);
  rrt_net_config_free(&c->net);
  rrt_notify_free(&c->notify);
  rrt_state_free(&c->st);
  rrt_cgroup_join_free(&c->join);
}

/*
 * Real root with no user namespace (containerd's shim, docker): the cgroups are made before the
 * clone and init joins them itself, starting in the v2 one and moving itself into each v1 one
 * (cgroup.h: no global lock, no RCU grace period to wait for, which was 7-14 ms of a 20 ms
 * create here). A user namespace's init has no right to those files; systemd moves init itself.
 */
static bool init_joins_cgroup(const struct create_ctx *c)
{
  return !c->g->cgroup_disabled && !c->g->systemd_cgroup && !c->plan.create && !c->plan.join &&
         rrt_host_privileged();
}

/* Whether the child forks init (into a pid or time namespace, created or joined) or is init. */
static bool child_forks_init(const struct rrt_init_args *ia)
{
  if (ia->ns_flags & (CLONE_NEWPID | CLONE_NEWTIME))
    return true;
  for (size_t i = 0; i < ia->n_join; i++)
    if (ia->join_types[i] == CLONE_NEWPID || ia->join_types[i] == CLONE_NEWTIME)
      return true;
  return false;
}

static void maps_job_abort(struct rrt_maps_job **job)
{
  rrt_userns_maps_abort(*job);
}

/* Waits for the intermediate child when init is a grandchild. */
void rrt_reap_quietly(pid_t pid)
{
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* The container process closed its end before it was ready (EPIPE): when the kernel's OOM
 * killer took it, in the container's cgroup, say so rather than only that it exited. */
static void why_init_ended(const struct create_ctx *c, struct rrt_error *err)
{
  if (err->errnum == EPIPE && rrt_cgroup_oom_killed(&c->st))
    rrt_error_msgf(err, EPIPE,
                   "the container process was killed by the kernel's OOM killer before it was "
                   "ready: linux.resources.memory.limit is too low for it");
}

static int do_create(struct create_ctx *c, pid_t *init_out, struct rrt_error *err)
{
  if (rrt_create_prepare(c, err) < 0)
    return -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return rrt_error_errno(err, "socketpair");
  cleanup_close int parent_fd = sv[0];
  cleanup_close int child_fd = sv[1];
  c->init.sync_fd = child_fd;
  int mp[2];
  if (pipe2(mp, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "pipe");
  cleanup_close int maps_r = mp[0];
  cleanup_close int maps_w = mp[1];
  c->init.maps_fd = maps_r;
  c->init.maps_wfd = maps_w;

  /* The user namespace first, alone: every namespace the child creates
   * afterwards is owned by it, so its owner (this user) can enter them. */
  c->init.runtime_cpu = -1;
  c->init.oom_by_runtime = rrt_host_privileged(); /* set_oom_score_adj */
  if (c->plan.method == RRT_MAP_HELPERS &&
      sched_getaffinity(0, sizeof(c->init.cpus), &c->init.cpus) == 0 &&
      CPU_COUNT(&c->init.cpus) > 1)
    c->init.runtime_cpu = sched_getcpu(); /* init.c: leave_runtime_cpu */
  if (init_joins_cgroup(c)) {
    if ((!c->dir_created && rrt_create_make_state(c, err) < 0) ||
        rrt_create_setup_cgroup(c, 0, err) < 0)
      return -1;
    c->cgroup_made = true;
    c->init.cg_join = &c->join;
  }
  PHASE("cloning");
  int flags = SIGCHLD | (c->plan.create ? CLONE_NEWUSER : 0);
  /* Without a pid (or time) namespace the child is init (init.c): it starts in its cgroup. */
  cleanup_pid pid_t child = c->init.cg_join && !child_forks_init(&c->init)
                                ? rrt_cgroup_fork_into(c->init.cg_join, &c->init.cg_in_v2)
                                : (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, 0);
  if (child < 0)
    return rrt_error_errno(err, "clone(%s)", c->plan.create ? "CLONE_NEWUSER" : "");
  if (child > 0)
    PHASE("clone: child %d%s", (int)child, c->plan.create ? " in a new user namespace" : "");
  rrt_create_child = child;
  if (child == 0) {
    close(parent_fd);
    parent_fd = -1;
    /* Made before the clone when NOTIFY_SOCKET is relayed: init must not hold the state lock
     * (start takes it) nor the start socket, which comes with CONTINUE. */
    if (c->dirfd >= 0)
      close(c->dirfd);
    if (c->listen_fd >= 0)
      close(c->listen_fd);
    if (c->notify.fd >= 0)
      close(c->notify.fd);
    rrt_init_main(&c->init); /* never returns */
  }
  close(steal_fd(&child_fd));
  close(steal_fd(&maps_r));

  /* newuidmap and newgidmap run now; the child makes its namespaces meanwhile (init.c), and
   * forks init into the new pid namespace. Its pid, its cgroup and the go-ahead do not need
   * the maps: they are done while the helpers run, not after. */
  __attribute__((cleanup(maps_job_abort))) struct rrt_maps_job *maps = NULL;
  if (c->plan.create && rrt_userns_maps_begin(child, &c->plan, &maps, err) < 0)
    return rrt_error_wrap(err, "user namespace");
  /* From the kernel (a pidfd of the child or of its child), not from what init says: in a
   * joined pid namespace another container sees init (confine.h, THE REACH RULE). */
  pid_t init = 0;
  cleanup_close int init_pidfd = -1;
  if (rrt_sync_expect_child_pid(parent_fd, child, &init, &init_pidfd, err) < 0)
    return -1;
  PHASE("init's pid received (pid %d): the child made its namespaces", (int)init);
  cleanup_pid pid_t init_guard = -1;
  if (init != child)
    init_guard = init; /* init is ours to kill; the intermediate exits after the maps */
  c->st.pid = init;
  char comm[64];
  c->st.pid_start = rrt_proc_stat(init, comm, sizeof(comm));
  c->st.init_comm = xstrdup(comm); /* the runtime's until init's execve: see rrt_state_status */
  rrt_create_init = init;
  if (rrt_create_interrupted)
    kill(init, SIGKILL);
  if (rrt_create_while_helpers_run(c, parent_fd, init, maps, err) < 0) {
    why_init_ended(c, err);
    return -1;
  }
  int r = rrt_userns_maps_end(steal_ptr(&maps), err);
  if (r < 0)
    return rrt_error_wrap(err, "user namespace");
  if (c->plan.create)
    PHASE("user namespace: id maps written");
  else
    PHASE("user namespace: none made, no id maps to write");
  close(steal_fd(&maps_w));
  if (rrt_create_after_init(c, parent_fd, init, err) < 0) {
    why_init_ended(c, err);
    return -1;
  }
  if (init != child)
    rrt_reap_quietly(steal_pid(&child));
  if (c->pid_file && rrt_write_pid_file(c->pid_file, init, err) < 0)
    return -1;
  c->pid_file_written = c->pid_file != NULL;
  PHASE("create done");
  if (c->for_run)
    c->sync_fd = steal_fd(&parent_fd);
  /* Success: init stays blocked until start; the guards disarm. */
  steal_pid(&init_guard);
  steal_pid(&child);
  *init_out = init;
  return 0;
}

/* Undoes a failed create: kills what it started, runs poststop when the
 * environment had been created, removes the state directory. */
static void destroy_failed(struct create_ctx *c)
{
  struct rrt_error ignored = RRT_ERROR_INIT;
  if (c->st.pid > 0)
    rrt_kill_and_wait(c->st.pid, c->st.pid_start, 2000);
  if (c->st.net_helper > 0)
    rrt_kill_and_wait(c->st.net_helper, c->st.net_helper_start, 2000);
  for (size_t i = 0; i < c->st.n_fuse_helpers; i++)
    rrt_kill_and_wait(c->st.fuse_helper[i], c->st.fuse_helper_start[i], 2000);
  rrt_cgroup_destroy_failed(&c->st, &c->cg_made);
  if (c->st.pid > 0 && c->spec && c->spec->hooks[RRT_HOOK_POSTSTOP].n > 0) {
    cleanup_free char *json = rrt_state_oci_json(&c->st, "stopped", false);
    rrt_hooks_run(c->spec, RRT_HOOK_POSTSTOP, json, &ignored);
  }
  if (c->dir_created)
    rrt_state_remove(c->root, c->o->id, &ignored);
  if (c->pid_file_written)
    unlink(c->pid_file);
  rrt_error_clear(&ignored);
}

void rrt_created_free(struct created *cr)
{
  rrt_spec_free(cr->spec);
  free(cr->root);
  if (cr->dirfd >= 0)
    close(cr->dirfd);
  if (cr->sync_fd >= 0)
    close(cr->sync_fd);
  if (cr->terminal_fd >= 0)
    close(cr->terminal_fd);
  rrt_state_free(&cr->st);
}

int rrt_create_container(const struct rrt_global *g, const struct rrt_create_opts *o,
                         struct created *out, struct rrt_error *err)
{
  struct create_ctx c = {.g = g,
                         .o = o,
                         .join = {.v2_fd = -1},
                         .dirfd = -1,
                         .listen_fd = -1,
                         .console_fd = -1,
                         .terminal_fd = -1,
                         .sync_fd = -1,
                         .notify = {.fd = -1},
                         .for_run = out != NULL};
  pid_t init = 0;
  if (rrt_state_validate_id(o->id, err) < 0)
    return -1;
  rrt_create_interrupted = 0;
  rrt_create_child = rrt_create_init = -1;
  rrt_create_signals_set(true);
  int ret = do_create(&c, &init, err);
  if (ret == 0 && rrt_create_interrupted)
    ret = rrt_error_msgf(err, EINTR, "create interrupted by signal %s",
                         rrt_signal_name(rrt_create_interrupted));
  else if (ret < 0 && rrt_create_interrupted)
    rrt_error_wrap(err, "create interrupted by signal %s", rrt_signal_name(rrt_create_interrupted));
  if (ret < 0)
    destroy_failed(&c);
  rrt_create_signals_set(false);
  rrt_create_child = rrt_create_init = -1;
  if (ret == 0 && out) {
    out->init = init;
    out->terminal_fd = steal_fd(&c.terminal_fd);
    out->spec = steal_ptr(&c.spec);
    out->root = steal_ptr(&c.root);
    out->dirfd = steal_fd(&c.dirfd);
    out->sync_fd = steal_fd(&c.sync_fd);
    out->start_sent = c.start_sent;
    out->st = c.st;
    memset(&c.st, 0, sizeof(c.st));
  }
  create_ctx_free(&c);
  return ret;
}

int rrt_container_create(const struct rrt_global *g, const struct rrt_create_opts *o,
                         struct rrt_error *err)
{
  return rrt_create_container(g, o, NULL, err);
}

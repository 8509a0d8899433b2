/* handshake.c: create's side of init's walk from the clone to CREATED: the cgroup, the
 * go-ahead while newuidmap and newgidmap run, the network helper, the prestart and
 * createRuntime hooks. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "create.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/image.h"
#include "rootlessrt/net.h"
#include "rootlessrt/notify.h"
#include "rootlessrt/state.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

static int run_hooks(struct create_ctx *c, enum rrt_hook_kind kind, const char *status,
                     struct rrt_error *err)
{
  if (c->spec->hooks[kind].n == 0)
    return 0;
  cleanup_free char *json = rrt_state_oci_json(&c->st, status, false);
  rrt_create_signals_set(false);
  int r = rrt_create_interrupted ? rrt_error_msgf(err, EINTR, "interrupted")
                                 : rrt_hooks_run(c->spec, kind, json, err);
  rrt_create_signals_set(true);
  if (r == 0)
    PHASE("hooks: %zu %s hook%s run", c->spec->hooks[kind].n, rrt_hook_kind_name(kind),
          c->spec->hooks[kind].n == 1 ? "" : "s");
  return r;
}

/* The container's cgroups (cgroup.c says where and what): limits and device rules applied
 * before init is moved in. */
/* rrt_cgroup_opts.record: the state directory records, once, the cgroup directories create is
 * about to make, before the first is made. */
static int record_cgroup(const struct rrt_cgroup *mine, void *arg, struct rrt_error *err)
{
  struct create_ctx *c = arg;
  struct rrt_state st = {0};
  rrt_cgroup_store(mine, &st);
  int r = rrt_state_record_cgroup(c->dirfd, &st, err);
  rrt_state_free(&st);
  return r < 0 ? rrt_create_in_state_dir(c, err) : 0;
}

/* init 0: made before the clone, init joins it (c->join). */
int rrt_create_setup_cgroup(struct create_ctx *c, pid_t init, struct rrt_error *err)
{
  bool limits_warn = false, shared = false;
  if (rrt_cgroup_limits_mode(rrt_spec_annotation(c->spec, RRT_LIMITS_ANNOTATION), &limits_warn,
                             err) < 0 ||
      rrt_cgroup_shared_mode(rrt_spec_annotation(c->spec, RRT_CGROUP_ANNOTATION), &shared, err) < 0)
    return -1;
  const struct rrt_cgroup_opts o = {.id = c->o->id,
                                    .path = c->spec->lnx.cgroups_path,
                                    .resources_json = c->spec->lnx.resources_json,
                                    .has_limits = c->spec->lnx.has_resource_limits,
                                    .disabled = c->g->cgroup_disabled,
                                    .systemd = c->g->systemd_cgroup,
                                    .privileged = rrt_host_privileged(),
                                    .limits_warn = limits_warn,
                                    .cgroup_shared = shared,
                                    .record = record_cgroup,
                                    .record_arg = c};
  struct rrt_cgroup cg;
  if (rrt_cgroup_create(&o, init, &cg, err) < 0)
    return -1;
  int r = init == 0 ? rrt_cgroup_join_prepare(&cg, &c->join, err) : 0;
  rrt_cgroup_store(&cg, &c->st);
  c->cg_made.made_v2 = steal_ptr(&cg.made_v2);
  for (int i = 0; i < RRT_CG_V1_N; i++)
    c->cg_made.made_v1[i] = steal_ptr(&cg.made_v1[i]);
  rrt_cgroup_free(&cg);
  if (r == 0)
    rrt_phase("cgroup: made, limits and device rules written%s",
              init ? ", init moved in" : "; init joins it itself");
  return r;
}

/* HOOKS_DONE, and for run the START behind it: init reads them when it gets there, so it never
 * waits on a round trip through the runtime. START is held back when a pid file is asked for,
 * so that the file exists before the program runs. */
static int send_hooks_done(struct create_ctx *c, int sync_fd, struct rrt_error *err)
{
  /* init needs the state only for its own hooks and a seccomp listener. */
  const struct rrt_spec *sp = c->spec;
  bool init_needs_state = sp->hooks[RRT_HOOK_CREATE_CONTAINER].n > 0 ||
                          sp->hooks[RRT_HOOK_START_CONTAINER].n > 0 || sp->lnx.seccomp;
  cleanup_free char *state_json =
      init_needs_state ? rrt_state_oci_json(&c->st, "created", false) : NULL;
  if (rrt_sync_send(sync_fd, RRT_SYNC_HOOKS_DONE, 0, state_json, err) < 0)
    return -1;
  c->hooks_done_sent = true;
  PHASE("sync: HOOKS_DONE sent");
  if (c->for_run && !c->pid_file) {
    if (rrt_sync_send(sync_fd, RRT_SYNC_START, 0, NULL, err) < 0)
      return -1;
    c->start_sent = true;
  }
  return 0;
}

/* NS_READY, serving on the way each fuse-overlayfs mount init makes (image/fuse_serve.c): the
 * servers are recorded before init goes on, so that delete finds them. */
static int expect_ns_ready(struct create_ctx *c, int sync_fd, pid_t init, struct rrt_error *err)
{
  for (;;) {
    struct rrt_sync_msg m;
    if (rrt_sync_recv(sync_fd, &m, err) < 0)
      return -1;
    if (m.type != RRT_SYNC_FUSE) {
      uint32_t type = m.type;
      rrt_sync_msg_free(&m);
      if (type == RRT_SYNC_NS_READY)
        return 0;
      return rrt_error_set(err, EPROTO, "sync: expected NS_READY, got message %u", type);
    }
    pid_t helper = 0;
    int r = rrt_overlay_serve_request(init, m.fd, &helper, err);
    rrt_sync_msg_free(&m);
    if (r < 0)
      return -1;
    if (helper <= 0)
      continue;
    if (c->st.n_fuse_helpers == RRT_MAX_FUSE_HELPERS) {
      kill(helper, SIGKILL);
      return rrt_error_msgf(err, E2BIG, "more than %d fuse-overlayfs mounts", RRT_MAX_FUSE_HELPERS);
    }
    c->st.fuse_helper[c->st.n_fuse_helpers] = helper;
    c->st.fuse_helper_start[c->st.n_fuse_helpers++] = rrt_proc_start_time(helper);
    if (rrt_state_write(c->dirfd, &c->st, err) < 0)
      return rrt_create_in_state_dir(c, err);
  }
}

/* From init's go-ahead (in its cgroup, ids mapped) to its blocked state: mounts, network,
 * prestart and createRuntime hooks, createContainer and pivot. */
int rrt_create_after_init(struct create_ctx *c, int sync_fd, pid_t init, struct rrt_error *err)
{
  if (expect_ns_ready(c, sync_fd, init, err) < 0)
    return -1;
  PHASE("sync: NS_READY received (init's namespaces and mounts ready)");
  rrt_hostfds_release(&c->hostfds); /* init has mounted them */
  if (c->hooks_done_sent)
    goto created;
  if (c->net.mode == RRT_NET_SLIRP) {
    pid_t helper = 0;
    if (rrt_net_start(init, &c->net, &helper, err) < 0)
      return -1; /* net.c names it: "network slirp: ..." */
    c->st.net_helper = helper;
    c->st.net_helper_start = rrt_proc_start_time(helper);
    if (rrt_state_write(c->dirfd, &c->st, err) < 0)
      return rrt_create_in_state_dir(c, err);
  }
  if (run_hooks(c, RRT_HOOK_PRESTART, "created", err) < 0 ||
      run_hooks(c, RRT_HOOK_CREATE_RUNTIME, "created", err) < 0)
    return -1;
  if (send_hooks_done(c, sync_fd, err) < 0)
    return -1;
created:
  if (rrt_sync_expect(sync_fd, RRT_SYNC_CREATED, NULL, NULL, err) < 0)
    return -1;
  PHASE("sync: CREATED received (init created and blocked until start)");
  return 0;
}

/* Real root's user namespace cannot enter the state directory: init gets the resolv.conf
 * written there as a detached mount made with our credentials (hostfds.h does the same for
 * bind sources, which exist before the clone). */
static int send_resolv_conf(struct create_ctx *c, int sync_fd, struct rrt_error *err)
{
  if (c->net.mode != RRT_NET_SLIRP || !c->init.hostfds)
    return 0;
  cleanup_close int fd = open_tree(c->dirfd, "resolv.conf", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0)
    return rrt_error_errno(err, "open_tree resolv.conf");
  return rrt_sync_send_fd(sync_fd, RRT_SYNC_RESOLV, 0, NULL, fd, err);
}

/* process.oomScoreAdj as real root: written by the runtime into init, blocked and still ours,
 * since init in a user namespace has no CAP_SYS_RESOURCE (needed to lower it) on the host; a
 * value the kernel refuses is an error, as with runc. Init writes none itself then
 * (oom_by_runtime): undumpable in a joined pid namespace, it could not open its own file. */
static int set_oom_score_adj(const struct rrt_spec *spec, pid_t init, struct rrt_error *err)
{
  if (!spec->process || !spec->process->has_oom_score_adj || !rrt_host_privileged())
    return 0;
  cleanup_free char *path = xasprintf("/proc/%d/oom_score_adj", (int)init);
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  char buf[16];
  int len = snprintf(buf, sizeof(buf), "%d", spec->process->oom_score_adj);
  if (fd < 0 || rrt_write_all(fd, buf, (size_t)len) < 0)
    return rrt_error_errno(err, "process.oomScoreAdj: write %d to %s", spec->process->oom_score_adj,
                           path);
  return 0;
}

/* While newuidmap and newgidmap run: the state directory, init's cgroup, the go-ahead with the
 * helpers' pidfds, state.json, and HOOKS_DONE when nothing waits for NS_READY. */
int rrt_create_while_helpers_run(struct create_ctx *c, int sync_fd, pid_t init,
                                 const struct rrt_maps_job *maps, struct rrt_error *err)
{
  /* The init record first, so that delete --force finds init whatever instant create dies at. */
  if (!c->dir_created && rrt_create_make_state(c, err) < 0)
    return -1;
  if (rrt_state_record_init(c->dirfd, c->st.pid, c->st.pid_start, err) < 0)
    return rrt_create_in_state_dir(c, err);
  PHASE("state: init recorded");
  /* Its directories are recorded as they are made (record_cgroup). */
  if ((!c->cgroup_made && rrt_create_setup_cgroup(c, init, err) < 0) ||
      set_oom_score_adj(c->spec, init, err) < 0)
    return -1;
  if (rrt_notify_start_relay(&c->notify, c->dirfd, init, err) < 0)
    return -1;
  /* init watches the helpers itself: it goes on the moment they are done, without a wake-up of
   * this process in between (on an idle virtual CPU that costs a fifth of a millisecond). */
  pid_t helpers[2];
  size_t n_helpers = rrt_userns_maps_pids(maps, helpers);
  for (size_t i = 0; i < n_helpers; i++) {
    cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, helpers[i], 0);
    if (pidfd >= 0 && rrt_sync_send_fd(sync_fd, RRT_SYNC_HELPER, 0, NULL, pidfd, err) < 0)
      return -1;
  }
  if (send_resolv_conf(c, sync_fd, err) < 0 ||
      rrt_sync_send_fd(sync_fd, RRT_SYNC_CONTINUE, 0, NULL, c->listen_fd, err) < 0)
    return -1;
  PHASE("sync: CONTINUE sent");
  /* Everything state.json holds is known now, but for a network helper yet to start. */
  if (c->net.mode == RRT_NET_SLIRP)
    return 0;
  if (rrt_state_write(c->dirfd, &c->st, err) < 0)
    return rrt_create_in_state_dir(c, err);
  PHASE("state.json written");
  /* Nothing for the runtime to do at NS_READY either: no prestart or createRuntime hook. */
  if (c->spec->hooks[RRT_HOOK_PRESTART].n == 0 && c->spec->hooks[RRT_HOOK_CREATE_RUNTIME].n == 0)
    return send_hooks_done(c, sync_fd, err);
  return 0;
}

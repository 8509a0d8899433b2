/* init.c: the child after clone: become root in the new user namespace, create
 * or join the other namespaces, build the rootfs, wait for start, exec. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/confine.h"
#include "rootlessrt/container.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/image.h"
#include "rootlessrt/init.h"
#include "rootlessrt/log.h"
#include "rootlessrt/net.h"
#include "rootlessrt/rootfs.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/sysctl.h"
#include "rootlessrt/util.h"

#include <sys/ioctl.h>

#ifndef NS_GET_NSTYPE
#define NS_GET_NSTYPE _IO(0xb7, 0x3)
#endif
#ifndef KEYCTL_JOIN_SESSION_KEYRING
#define KEYCTL_JOIN_SESSION_KEYRING 1
#endif

static int ioctl_nstype(int fd)
{
  return ioctl(fd, NS_GET_NSTYPE);
}

static int become_root(const struct rrt_userns_plan *plan, struct rrt_error *err)
{
  if (!plan->create && !plan->join)
    return 0;
  /* Root of the new user namespace: full capabilities over every namespace
   * it will own. */
  if (setresgid(0, 0, 0) < 0)
    return rrt_error_errno(err, "setresgid(0) in the user namespace (is gid 0 mapped?)");
  if (setresuid(0, 0, 0) < 0)
    return rrt_error_errno(err, "setresuid(0) in the user namespace (is uid 0 mapped?)");
  return 0;
}

static int join_namespaces(const struct rrt_init_args *ia, int *fds, struct rrt_error *err)
{
  for (size_t i = 0; i < ia->n_join; i++) {
    if (setns(fds[i], ia->join_types[i]) < 0)
      return rrt_error_errno(err, "join %s namespace %s",
                             rrt_namespace_type_name(ia->join_types[i]), ia->join_paths[i]);
  }
  return 0;
}

/* Opens every namespace path up front: after joining a mount namespace the
 * paths would resolve elsewhere. The type is checked so a wrong path is an
 * error, not a silent join of something else. */
static int open_namespaces(const struct rrt_init_args *ia, int *fds, struct rrt_error *err)
{
  for (size_t i = 0; i < ia->n_join; i++) {
    fds[i] = open(ia->join_paths[i], O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0)
      return rrt_error_errno(err, "linux.namespaces: %s", ia->join_paths[i]);
    /* NS_GET_NSTYPE */
    int type = ioctl_nstype(fds[i]);
    if (type >= 0 && type != ia->join_types[i])
      return rrt_error_msgf(err, EINVAL, "linux.namespaces: %s is not a %s namespace",
                            ia->join_paths[i], rrt_namespace_type_name(ia->join_types[i]));
    if (type < 0)
      return rrt_error_msgf(err, EINVAL, "linux.namespaces: %s is not a namespace",
                            ia->join_paths[i]);
  }
  return 0;
}

static int write_time_offsets(const struct rrt_spec *spec, struct rrt_error *err)
{
  for (size_t i = 0; i < spec->lnx.n_time_offsets; i++) {
    const struct rrt_time_offset *t = &spec->lnx.time_offsets[i];
    cleanup_free char *line =
        xasprintf("%s %lld %u\n", t->clock, (long long)t->secs, (unsigned)t->nanosecs);
    if (rrt_write_file("/proc/self/timens_offsets", line, strlen(line), 0, 0, err) < 0)
      return rrt_error_wrap(err, "linux.timeOffsets.%s", t->clock);
  }
  return 0;
}

/* Phase 1, in the cloned child: namespaces. Returns in init (maybe a fork). */
/* Blocks until the runtime has written our id maps: it closes its end of
 * the pipe then (EOF). */
static void wait_for_maps(int fd)
{
  char c;
  while (read(fd, &c, 1) < 0 && errno == EINTR)
    ;
}

/*
 * Off the runtime's CPU while making the namespaces, and back before init is forked. Created on
 * the runtime's CPU, this child preempts it there for the half millisecond of its unshare (a
 * network namespace is the dearest part) while the runtime has the two newuidmap/newgidmap
 * execs to start, which bound create's time. A hint: a failure leaves it to the scheduler.
 */
static void leave_runtime_cpu(const struct rrt_init_args *ia)
{
  if (ia->runtime_cpu < 0 || !CPU_ISSET(ia->runtime_cpu, &ia->cpus))
    return;
  cpu_set_t others = ia->cpus;
  CPU_CLR(ia->runtime_cpu, &others);
  (void)sched_setaffinity(0, sizeof(others), &others);
}

static void restore_cpus(const struct rrt_init_args *ia)
{
  if (ia->runtime_cpu >= 0)
    (void)sched_setaffinity(0, sizeof(ia->cpus), &ia->cpus);
}

/* Both maps in place: the files have lines once newuidmap and newgidmap wrote them. */
static bool maps_written(void)
{
  const char *files[] = {"/proc/self/uid_map", "/proc/self/gid_map"};
  for (size_t i = 0; i < 2; i++) {
    cleanup_free char *text = NULL;
    if (rrt_read_file(files[i], &text, NULL, NULL) < 0 || !strchr(text, '\n'))
      return false;
  }
  return true;
}

/*
 * CONTINUE (with the start socket), then the id maps. The runtime sends the helpers' pidfds
 * ahead of CONTINUE: once both helpers have exited and the maps are there, init goes on, without
 * waiting for the runtime to notice and say so. Otherwise (no helpers, or one failed) the
 * runtime's EOF on the maps pipe says when; its error is the one reported.
 */
static int await_continue_and_maps(struct rrt_init_args *ia, struct rrt_error *err)
{
  int helpers[2] = {-1, -1};
  size_t n = 0;
  int ret = -1;
  for (;;) {
    struct rrt_sync_msg m;
    if (rrt_sync_recv(ia->sync_fd, &m, err) < 0)
      goto out;
    if (m.type == RRT_SYNC_HELPER && m.fd >= 0 && n < 2) {
      helpers[n++] = steal_fd(&m.fd);
      rrt_sync_msg_free(&m);
      continue;
    }
    if (m.type == RRT_SYNC_RESOLV && m.fd >= 0 && ia->resolv_fd < 0) {
      ia->resolv_fd = steal_fd(&m.fd);
      rrt_sync_msg_free(&m);
      continue;
    }
    if (m.type != RRT_SYNC_CONTINUE || m.fd < 0) {
      rrt_sync_msg_free(&m);
      rrt_error_msgf(err, EPROTO, "sync: expected CONTINUE with the start socket");
      goto out;
    }
    ia->listen_fd = steal_fd(&m.fd);
    rrt_sync_msg_free(&m);
    break;
  }
  size_t exited = 0;
  while (n > 0 && exited < n) {
    struct pollfd p[3] = {{.fd = ia->maps_fd, .events = POLLIN},
                          {.fd = helpers[0], .events = POLLIN},
                          {.fd = helpers[1], .events = POLLIN}};
    if (poll(p, 1 + (nfds_t)n, -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    if (p[0].revents)
      break; /* the runtime is done (or gone): the maps pipe decides below */
    for (size_t i = 0; i < n; i++)
      if (p[1 + i].revents && helpers[i] >= 0) {
        close(steal_fd(&helpers[i]));
        exited++;
      }
  }
  if (n == 0 || exited < n || !maps_written())
    wait_for_maps(ia->maps_fd);
  ret = 0;
out:
  for (size_t i = 0; i < 2; i++)
    if (helpers[i] >= 0)
      close(helpers[i]);
  return ret;
}

/* A namespace of that type, created or joined by path. */
static bool has_ns(const struct rrt_init_args *ia, int type)
{
  if (ia->ns_flags & type)
    return true;
  for (size_t i = 0; i < ia->n_join; i++)
    if (ia->join_types[i] == type)
      return true;
  return false;
}

/* CONTINUE came after the runtime moved init into the container's cgroup: a cgroup namespace
 * made now has that cgroup as its root, so the container sees "0::/" and nothing above it. */
static int enter_cgroup_ns(const struct rrt_init_args *ia, struct rrt_error *err)
{
  if ((ia->ns_flags & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) < 0)
    return rrt_error_errno(err, "unshare the cgroup namespace");
  return 0;
}

/* A user namespace joined by path (linux.namespaces): entered first, so that every other
 * namespace joined or made after belongs to it. */
static int join_user_ns(const struct rrt_init_args *ia, struct rrt_error *err)
{
  cleanup_close int ufd = open(ia->plan->join, O_RDONLY | O_CLOEXEC);
  if (ufd < 0 || setns(ufd, CLONE_NEWUSER) < 0)
    return rrt_error_errno(err, "join user namespace %s", ia->plan->join);
  return become_root(ia->plan, err);
}

/* The namespaces joined by path, then the new ones but the cgroup namespace (it waits for init
 * to be in its cgroup, see enter_cgroup_ns), and a new time namespace's offsets. */
static int enter_namespaces(struct rrt_init_args *ia, struct rrt_error *err)
{
  int fds[RRT_MAX_JOIN];
  for (size_t i = 0; i < RRT_MAX_JOIN; i++)
    fds[i] = -1;
  rrt_phase("init: cloned");
  int r = open_namespaces(ia, fds, err) < 0 || join_namespaces(ia, fds, err) < 0 ? -1 : 0;
  for (size_t i = 0; i < RRT_MAX_JOIN; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  if (r < 0)
    return -1;
  leave_runtime_cpu(ia);
  int early = ia->ns_flags & ~CLONE_NEWCGROUP;
  r = early ? unshare(early) : 0;
  int unshare_errno = errno;
  restore_cpus(ia); /* init and the container keep the caller's CPUs */
  if (r < 0) {
    errno = unshare_errno;
    return rrt_error_errno(err, "unshare(0x%x)", early);
  }
  rrt_phase("init: namespaces 0x%x made", early);
  if ((ia->ns_flags & CLONE_NEWTIME) && write_time_offsets(ia->spec, err) < 0)
    return -1;
  return 0;
}

/* Tells the runtime init's pid, as a pidfd (sync.h). A pid (or time) namespace, new or joined,
 * applies to children only: init is then a fork, or it would stay in the caller's, seeing and
 * able to signal every process there; the parent stays until the maps are written and exits. */
static int become_init(struct rrt_init_args *ia, bool joined_pid, struct rrt_error *err)
{
  /* Now, while this process is dumpable, and inherited by the fork (confine.h). */
  if (!ia->oom_by_runtime && rrt_oom_score_adj_apply(ia->spec->process, err) < 0)
    return -1;
  if (!has_ns(ia, CLONE_NEWPID) && !has_ns(ia, CLONE_NEWTIME)) {
    if (ia->cg_join && rrt_cgroup_join_self(ia->cg_join, ia->cg_in_v2, err) < 0)
      return -1;
    cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (pidfd < 0)
      return rrt_error_errno(err, "pidfd_open init");
    return rrt_sync_send_fd(ia->sync_fd, RRT_SYNC_INIT_PID, getpid(), NULL, pidfd, err);
  }
  /* In another container's pid namespace, that container sees init from the fork on: init is
   * not dumpable until its execve (confine.h, THE REACH RULE). Cleared here, before the fork,
   * so that init never exists dumpable there, not even before it first runs. */
  if (joined_pid)
    rrt_confine_undumpable();
  bool in_v2 = false;
  pid_t pid = ia->cg_join ? rrt_cgroup_fork_into(ia->cg_join, &in_v2) : fork();
  if (pid < 0)
    return rrt_error_errno(err, "fork init");
  if (pid == 0) {
    if (ia->cg_join && rrt_cgroup_join_self(ia->cg_join, in_v2, err) < 0)
      return -1;
    rrt_phase("init: forked%s", ia->cg_join ? ", in the container's cgroups" : "");
    return 0;
  }
  /* newuidmap writes our maps through our /proc entry; we are not in that namespace. */
  if (joined_pid && ia->plan->create)
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  /* init as a pidfd: the runtime takes its pid from the kernel and checks it is our child
   * (sync.h). init cannot be reaped (and its pid reused) before: we do not wait. */
  cleanup_close int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0 || rrt_sync_send_fd(ia->sync_fd, RRT_SYNC_INIT_PID, pid, NULL, pidfd, err) < 0)
    kill(pid, SIGKILL);
  /* The maps are written through this process's /proc entry: stay
   * until they are. */
  wait_for_maps(ia->maps_fd);
  _exit(0);
}

static int setup_namespaces(struct rrt_init_args *ia, struct rrt_error *err)
{
  if (ia->plan->join && join_user_ns(ia, err) < 0)
    return -1;
  /* While the runtime runs newuidmap/newgidmap (milliseconds of setuid
   * exec), the namespaces are made already: the creator of a user namespace
   * has every capability in it before any id is mapped. Only what needs a
   * mapped id (setresuid, files) waits for the maps. */
  if (enter_namespaces(ia, err) < 0)
    return -1;
  bool joined_pid = has_ns(ia, CLONE_NEWPID) && !(ia->ns_flags & CLONE_NEWPID);
  if (become_init(ia, joined_pid, err) < 0 || await_continue_and_maps(ia, err) < 0)
    return -1;
  rrt_phase("init: sync: CONTINUE received%s", ia->plan->create ? ", id maps written" : "");
  close(ia->maps_fd);
  ia->maps_fd = -1;
  if (ia->plan->create && become_root(ia->plan, err) < 0)
    return -1;
  if (enter_cgroup_ns(ia, err) < 0)
    return -1;
  /* The credential change cleared "dumpable", and our mm still belongs to
   * the initial user namespace (it was forked, not exec'd): without this the
   * owner's hooks could not open /proc/PID/ns/ of init until start. Never in a
   * joined pid namespace: the container there would reach init (confine.h). */
  if (!joined_pid)
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  else
    rrt_confine_undumpable();
  return 0;
}

/*
 * After an EPERM from sethostname (or setdomainname) in the container's own uts namespace:
 * whether a seccomp filter outside refused it (podman's default profile does without
 * CAP_SYS_ADMIN, a CI job's container nested) rather than the kernel. The kernel checks the
 * capability, which init holds here, and then the length: a name one byte too long is EINVAL
 * from the kernel and EPERM only from a filter. Then the container keeps the name it inherited,
 * and one warning says so: the job runs, as under any engine that sets no hostname.
 */
static bool name_refused_by_seccomp(int (*set)(const char *, size_t), const char *what,
                                    const char *name)
{
  if (errno != EPERM)
    return false;
  char long_name[66];
  memset(long_name, 'x', sizeof(long_name));
  if (set(long_name, 65) == 0 || errno != EPERM) {
    errno = EPERM;
    return false;
  }
  rrt_warn("%s \"%s\" not set: the outer container's seccomp profile refuses %s (podman's "
           "default does without CAP_SYS_ADMIN); the container keeps the one it inherited",
           what, name, strcmp(what, "hostname") == 0 ? "sethostname" : "setdomainname");
  return true;
}

static int set_names(const struct rrt_init_args *ia, struct rrt_error *err)
{
  const struct rrt_spec *spec = ia->spec;
  bool own_uts = (ia->ns_flags & CLONE_NEWUTS) != 0;
  for (size_t i = 0; i < ia->n_join; i++)
    own_uts |= ia->join_types[i] == CLONE_NEWUTS;
  if ((spec->hostname || spec->domainname) && !own_uts)
    return rrt_error_msgf(err, EINVAL, "hostname: needs a uts namespace in linux.namespaces");
  if (spec->hostname && sethostname(spec->hostname, strlen(spec->hostname)) < 0 &&
      !name_refused_by_seccomp(sethostname, "hostname", spec->hostname))
    return rrt_error_errno(err, "hostname \"%s\"", spec->hostname);
  if (spec->domainname && setdomainname(spec->domainname, strlen(spec->domainname)) < 0 &&
      !name_refused_by_seccomp(setdomainname, "domainname", spec->domainname))
    return rrt_error_errno(err, "domainname \"%s\"", spec->domainname);
  return 0;
}

static void join_session_keyring(bool skip)
{
  if (skip)
    return;
  /* A private session keyring keeps the container out of the caller's keys;
   * kernels or sandboxes that refuse keyrings are not worth failing for. */
  (void)syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL, 0, 0, 0);
}

/* Our copies of what the runtime opened for us: mounted now, or never. */
static void close_hostfds(const struct rrt_hostfds *h)
{
  for (size_t i = 0; h && i < h->n_mounts; i++)
    if (h->mount_fds[i] >= 0)
      close(h->mount_fds[i]);
  for (size_t i = 0; h && i < h->n_devices; i++)
    if (h->device_fds[i] >= 0)
      close(h->device_fds[i]);
}

/* Phase 2, in init: the container's environment, up to the blocked state. */
static int setup_container(struct rrt_init_args *ia, char **state_json,
                           struct rrt_seccomp_filter **filter, char **exec_path,
                           struct rrt_error *err)
{
  const struct rrt_spec *spec = ia->spec;
  if (!has_ns(ia, CLONE_NEWNS))
    return rrt_error_msgf(err, EINVAL, "linux.namespaces: a mount namespace is required");
  struct rrt_rootfs_ctx rc = {
      .spec = spec,
      .rootfs = ia->rootfs,
      .userns = !rrt_in_initial_userns(),
      .nested = ia->nested,
      .new_netns = (ia->ns_flags & CLONE_NEWNET) != 0,
      .new_pidns = has_ns(ia, CLONE_NEWPID),
      .new_ipcns = has_ns(ia, CLONE_NEWIPC),
      .new_cgroupns = has_ns(ia, CLONE_NEWCGROUP),
      .console_slave_fd = -1,
      .resolv_conf = ia->resolv_conf,
      .resolv_fd = ia->resolv_fd,
      .mount_fds = ia->hostfds ? ia->hostfds->mount_fds : NULL,
      .device_fds = ia->hostfds ? ia->hostfds->device_fds : NULL,
  };
  rrt_overlay_set_runtime(ia->sync_fd); /* the runtime serves fuse-overlayfs (image.h) */
  int r = rrt_rootfs_prepare(&rc, err);
  if (r == 0)
    rrt_phase("init: rootfs and the config's mounts made");
  close_hostfds(ia->hostfds);
  if (ia->resolv_fd >= 0)
    close(steal_fd(&ia->resolv_fd));
  if (r < 0)
    return -1;
  if (set_names(ia, err) < 0)
    return -1;
  if ((ia->ns_flags & CLONE_NEWNET) && rrt_net_loopback_up(err) < 0)
    return rrt_error_wrap(err, "network namespace");
  if (spec->lnx.seccomp &&
      rrt_seccomp_compile(spec->lnx.seccomp, ia->seccomp_cache, filter, err) < 0)
    return rrt_error_wrap(err, "linux.seccomp");
  if (rrt_sync_send(ia->sync_fd, RRT_SYNC_NS_READY, 0, NULL, err) < 0)
    return -1;
  if (rrt_sync_expect(ia->sync_fd, RRT_SYNC_HOOKS_DONE, NULL, state_json, err) < 0)
    return -1;
  rrt_phase("init: sync: HOOKS_DONE received");
  /* In the container's root, as runc runs them: a relative path in a hook is the container's. */
  if (spec->hooks[RRT_HOOK_CREATE_CONTAINER].n > 0 && chdir(rc.rootfs) < 0)
    return rrt_error_errno(err, "createContainer hooks: chdir %s", rc.rootfs);
  if (spec->hooks[RRT_HOOK_CREATE_CONTAINER].n > 0 &&
      rrt_hooks_run(spec, RRT_HOOK_CREATE_CONTAINER, *state_json, err) < 0)
    return -1;
  if (spec->hooks[RRT_HOOK_CREATE_CONTAINER].n > 0)
    rrt_phase("init: hooks: createContainer run");
  if (rrt_rootfs_pivot(&rc, ia->no_pivot, err) < 0)
    return -1;
  rrt_phase("init: %s done", ia->no_pivot ? "chroot (--no-pivot)" : "pivot_root");
  /* Before finalize: readonlyPaths (podman lists /proc/sys) would make the
   * sysctl files read-only. */
  if (rrt_sysctl_apply(spec, err) < 0)
    return -1;
  /* A missing cwd is made before a read-only root forbids it (process.c). */
  if (spec->process && rrt_process_prepare_cwd(spec->process, err) < 0)
    return -1;
  if (rrt_rootfs_finalize(&rc, err) < 0)
    return -1;
  rrt_phase("init: masked and read-only paths done");
  /* runtime.md: a config without process can be created; start is what fails. */
  if (spec->process &&
      (rrt_process_find_exec(spec->process, rrt_process_keep_groups(spec), exec_path, err) < 0 ||
       rrt_process_prepare(spec, err) < 0))
    return -1;
  join_session_keyring(ia->no_new_keyring);
  if (ia->console_fd >= 0 && rrt_terminal_setup(spec->process, ia->console_fd, err) < 0)
    return rrt_error_wrap(err, "terminal");
  rrt_phase("init: process checked and prepared; sync: CREATED sent");
  return rrt_sync_send(ia->sync_fd, RRT_SYNC_CREATED, 0, NULL, err);
}

/* Our own maps may deny setgroups, and so may the user namespace we were
 * started in (`unshare -r` writes "deny"): then setgroups(2) always fails. */
static bool setgroups_allowed(const struct rrt_userns_plan *plan)
{
  if (plan->deny_setgroups)
    return false;
  char *sg = NULL;
  if (rrt_read_file("/proc/self/setgroups", &sg, NULL, NULL) < 0)
    return true;
  bool allowed = strncmp(sg, "allow", 5) == 0;
  free(sg);
  return allowed;
}

/* Blocks until `start` connects to the start socket, or `run`, which kept create's sync socket,
 * sends START on it; returns that connection. EOF on the sync socket (create is over) leaves
 * the start socket alone. */
static int wait_for_start(int listen_fd, int *sync_fd, struct rrt_error *err)
{
  for (;;) {
    struct pollfd p[2] = {{.fd = listen_fd, .events = POLLIN}, {.fd = *sync_fd, .events = POLLIN}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return rrt_error_errno(err, "wait for start");
    }
    if (p[1].revents) {
      struct rrt_error e = RRT_ERROR_INIT;
      int r = rrt_sync_expect(*sync_fd, RRT_SYNC_START, NULL, NULL, &e);
      rrt_error_clear(&e);
      int fd = steal_fd(sync_fd);
      if (r == 0)
        return fd;
      close(fd);
      continue;
    }
    if (!p[0].revents)
      continue;
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      return rrt_error_errno(err, "wait for start");
    }
    struct rrt_error e = RRT_ERROR_INIT;
    if (rrt_sync_expect(fd, RRT_SYNC_START, NULL, NULL, &e) == 0)
      return fd;
    /* A stray connection: not `start`. Keep waiting. */
    rrt_error_clear(&e);
    close(fd);
  }
}

struct start_hooks {
  const struct rrt_spec *spec;
  const char *state_json;
  bool failed; /* a hook failed: init exits 1, not the execve's 127 or 126 */
};

/*
 * The startContainer hooks, from rrt_process_exec once init is confined as the process will be
 * (issue 27): user, groups, capabilities, no_new_privs, rlimits, the LSM label and the seccomp
 * filter are inherited by the fork, so a hook (a binary of the image's) can do no more than the
 * container's program. Their supervision (pipes, poll, waitpid, the timeout's kill) runs under
 * that filter too, as runc's does: a profile that denies it fails the hook, naming the call.
 */
static int run_start_hooks(void *arg, struct rrt_error *err)
{
  struct start_hooks *h = arg;
  if (rrt_hooks_run(h->spec, RRT_HOOK_START_CONTAINER, h->state_json, err) == 0)
    return 0;
  h->failed = true;
  return -1;
}

void rrt_init_main(struct rrt_init_args *ia)
{
  struct rrt_error err = RRT_ERROR_INIT;
  char *state_json = NULL;
  struct rrt_seccomp_filter *filter = NULL;
  char *exec_path = NULL;

  /* create's interrupt handlers are the runtime's, not ours. */
  int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
    signal(sigs[i], SIG_DFL);
  /* Only the runtime may end the wait for the maps. */
  close(ia->maps_wfd);
  /* No PDEATHSIG: init may be the runtime's own child and must outlive
   * `create`. A runtime that dies early closes the sync socket instead, and
   * every wait above ends with an error. */
  if (setup_namespaces(ia, &err) < 0 ||
      setup_container(ia, &state_json, &filter, &exec_path, &err) < 0) {
    rrt_sync_send_error(ia->sync_fd, &err);
    _exit(1);
  }
  if (ia->console_fd >= 0)
    close(ia->console_fd);

  int conn = wait_for_start(ia->listen_fd, &ia->sync_fd, &err);
  if (conn < 0)
    _exit(1);
  /* Started: nothing needs init's /proc entry until its execve, and an `exec` may be in
   * its pid namespace (confine.h, THE REACH RULE). Before the startContainer hooks fork. */
  rrt_confine_undumpable();
  close(ia->listen_fd);
  if (ia->sync_fd >= 0)
    close(ia->sync_fd);

  if (!ia->spec->process) {
    rrt_error_msgf(&err, EINVAL, "process: config.json has no process to start");
    rrt_sync_send_error(conn, &err);
    _exit(1);
  }
  struct start_hooks hooks = {.spec = ia->spec, .state_json = state_json};
  struct rrt_exec_ctx x = {
      .spec = ia->spec,
      .proc = ia->spec->process,
      .preserve_fds = ia->preserve_fds,
      .listen_fds = ia->listen_fds,
      .report_fd = conn,
      .setgroups_allowed = setgroups_allowed(ia->plan),
      .state_json = state_json,
      .seccomp_cache = NULL,
      .filter = filter,
      .limits_applied = true,
      .exec_path = exec_path,
      .before_execve = ia->spec->hooks[RRT_HOOK_START_CONTAINER].n > 0 ? run_start_hooks : NULL,
      .before_execve_arg = &hooks,
  };
  rrt_process_exec(&x, &err);
  rrt_sync_send_error(conn, &err);
  if (hooks.failed)
    _exit(1);
  /* 127/126 like a shell: engines read them. */
  _exit(err.errnum == ENOENT ? 127 : err.errnum == EACCES ? 126 : 1);
}

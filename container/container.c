/* container.c: create/start/run/kill/delete orchestration, nothing else. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/cgroup.h"
#include "rootlessrt/confine.h"
#include "rootlessrt/container.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/hooks.h"
#include "rootlessrt/hostfds.h"
#include "rootlessrt/image.h"
#include "rootlessrt/init.h"
#include "rootlessrt/log.h"
#include "rootlessrt/net.h"
#include "rootlessrt/notify.h"
#include "rootlessrt/state.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/sysctl.h"
#include "rootlessrt/terminal_proxy.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* --debug shows where create/run spend their time (log.h). */
#define PHASE(...) rrt_phase(__VA_ARGS__)

static char *now_rfc3339(void)
{
  struct timespec ts;
  struct tm tm;
  char buf[64];
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  /* Not strftime: it loads the time zone (/etc/localtime) that UTC does not need. */
  snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec);
  return xstrdup(buf);
}

static char *annotations_json(const struct rrt_spec *spec)
{
  if (spec->n_annotations == 0)
    return NULL;
  json_object *o = json_object_new_object();
  for (size_t i = 0; i < spec->n_annotations; i++)
    json_object_object_add(o, spec->annotations[i].key,
                           json_object_new_string(spec->annotations[i].value));
  char *r = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
  json_object_put(o);
  return r;
}

/* An absolute path from a possibly relative one, against the current cwd. */
static char *absolute(const char *path)
{
  if (path[0] == '/')
    return xstrdup(path);
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof(cwd)))
    return xstrdup(path);
  return xasprintf("%s/%s", cwd, path);
}

/* The start socket lives in the state directory; a /proc/self/fd path keeps
 * sun_path short whatever the length of the root and the id. */
static int start_socket_addr(int dirfd, struct sockaddr_un *sa)
{
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  return snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/start.sock", dirfd) <
                 (int)sizeof(sa->sun_path)
             ? 0
             : -1;
}

/* SIGTERM/SIGINT/SIGHUP/SIGQUIT during create (an engine giving up, ^C):
 * the handler kills what create started, so the wait in progress fails and
 * the ordinary failure path destroys the rest (state, poststop). Hooks have
 * their own handling (hooks.c), so these handlers are lifted around them. */
static volatile sig_atomic_t create_interrupted;
static volatile pid_t create_child = -1, create_init = -1;
static const int create_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define N_CREATE_SIGNALS (sizeof(create_signals) / sizeof(create_signals[0]))

static void on_create_signal(int sig)
{
  create_interrupted = sig;
  if (create_init > 0)
    kill(create_init, SIGKILL);
  if (create_child > 0)
    kill(create_child, SIGKILL);
}

static void create_signals_set(bool catch)
{
  struct sigaction sa = {.sa_handler = catch ? on_create_signal : SIG_DFL};
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < N_CREATE_SIGNALS; i++)
    sigaction(create_signals[i], &sa, NULL);
}

struct create_ctx {
  const struct rrt_global *g;
  struct rrt_cgroup cg_made; /* only made_v2 and made_v1: what a failed create removes */
  const struct rrt_create_opts *o;
  struct rrt_spec *spec;
  char *config_text;
  char *bundle;
  char *rootfs;
  char *root;
  char *pid_file;
  bool pid_file_written; /* by this create: the only pid file a failed one removes */
  char *resolv_conf;     /* the generated resolv.conf, slirp mode */
  char *seccomp_cache;   /* in the private directory beside ROOT, or NULL */
  int dirfd;
  int listen_fd;
  int console_fd;
  int terminal_fd; /* foreground run: our end of the socket init sends its pty to */
  int sync_fd;     /* run: the sync socket, kept to send START on */
  bool for_run;
  bool hooks_done_sent; /* HOOKS_DONE went with CONTINUE: nothing to do at NS_READY */
  bool start_sent;      /* run: START queued behind it, init does not wait for us */
  struct rrt_userns_plan plan;
  struct rrt_net_config net;
  struct rrt_hostfds hostfds; /* real root with a user namespace; released at NS_READY */
  struct rrt_notify notify;   /* NOTIFY_SOCKET relayed, when the caller set it */
  struct rrt_init_args init;
  struct rrt_state st;
  bool dir_created;
  bool cgroup_made;            /* before the clone: init joins it itself (init_joins_cgroup) */
  struct rrt_cgroup_join join; /* what init joins with */
};

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

static int load_bundle(struct create_ctx *c, struct rrt_error *err)
{
  c->bundle = absolute(c->o->bundle ? c->o->bundle : ".");
  char real[PATH_MAX];
  if (!realpath(c->bundle, real))
    return rrt_error_errno(err, "bundle %s", c->bundle);
  free(c->bundle);
  c->bundle = xstrdup(real);
  cleanup_free char *cfg = xasprintf("%s/config.json", c->bundle);
  size_t len = 0;
  if (rrt_read_file(cfg, &c->config_text, &len, err) < 0)
    return -1;
  if (rrt_spec_parse_file(c->config_text, len, cfg, &c->spec, err) < 0)
    return -1; /* the messages start with cfg */
  /* Capability names that cannot be mapped are warned about here, once. A config without
   * process can be created (runtime.md): start is what fails then. */
  if (c->spec->process && (rrt_caps_validate(c->spec->process->capabilities, err) < 0 ||
                           rrt_lsm_check(c->spec->process, err) < 0))
    return rrt_error_wrap(err, "%s", cfg);
  cleanup_free char *rootfs = c->spec->root_path[0] == '/'
                                  ? xstrdup(c->spec->root_path)
                                  : xasprintf("%s/%s", c->bundle, c->spec->root_path);
  if (!realpath(rootfs, real))
    return rrt_error_errno(err, "root.path %s", rootfs);
  c->rootfs = xstrdup(real);
  return 0;
}

/* Which namespaces the child creates, and which it joins, from the config
 * and the network mode. */
static int plan_namespaces(struct create_ctx *c, struct rrt_error *err)
{
  const struct rrt_spec *spec = c->spec;
  struct rrt_init_args *ia = &c->init;
  for (size_t i = 0; i < spec->lnx.n_namespaces; i++) {
    const struct rrt_namespace *ns = &spec->lnx.namespaces[i];
    if (ns->type == CLONE_NEWUSER)
      continue;
    if (ns->type == CLONE_NEWNET && c->net.mode == RRT_NET_HOST)
      continue;
    if (ns->path) {
      if (ia->n_join >= RRT_MAX_JOIN)
        return rrt_error_msgf(err, EINVAL, "linux.namespaces: too many");
      ia->join_types[ia->n_join] = ns->type;
      ia->join_paths[ia->n_join] = ns->path;
      ia->n_join++;
    } else {
      ia->ns_flags |= ns->type;
    }
  }
  if (c->net.mode == RRT_NET_SLIRP && !(ia->ns_flags & CLONE_NEWNET)) {
    for (size_t i = 0; i < ia->n_join; i++)
      if (ia->join_types[i] == CLONE_NEWNET)
        return rrt_error_msgf(err, EINVAL,
                              "--network slirp: the config joins an existing network namespace");
    ia->ns_flags |= CLONE_NEWNET;
  }
  return 0;
}

/* The rootfs is built in the container's mount namespace: it makes / a slave, mounts, and
 * pivot_root moves every process of that namespace into the rootfs. In the host's own (joined by
 * path, as real root) that would be the whole host. */
static int check_mount_ns(const struct rrt_ns_plan *nsp, struct rrt_error *err)
{
  if (rrt_ns_private(nsp, CLONE_NEWNS))
    return 0;
  for (size_t i = 0; i < nsp->n_join; i++)
    if (nsp->join_types[i] == CLONE_NEWNS)
      return rrt_error_msgf(err, EINVAL,
                            "linux.namespaces: the mount namespace %s is the runtime's (the "
                            "host's) own: the container's mounts and pivot_root would be the "
                            "host's",
                            nsp->join_paths[i]);
  return rrt_error_msgf(err, EINVAL, "linux.namespaces: a mount namespace is required");
}

/* Where init sends its pty master: the --console-socket, or, for a
 * foreground run, a socket pair whose other end run keeps (it is the
 * terminal itself then). */
static int open_console_socket(struct create_ctx *c, struct rrt_error *err)
{
  c->console_fd = c->terminal_fd = -1;
  /* runc refuses this too: the socket's owner would wait for a pty master that never comes. */
  if ((!c->spec->process || !c->spec->process->terminal) && c->o->console_socket)
    return rrt_error_msgf(err, EINVAL,
                          "--console-socket: process.terminal is false: there is no terminal to "
                          "send");
  if (!c->spec->process || !c->spec->process->terminal)
    return 0;
  if (c->o->console_socket) {
    c->console_fd = rrt_console_socket_connect(c->o->console_socket, err);
    return c->console_fd < 0 ? -1 : 0;
  }
  if (c->o->detach)
    return rrt_error_msgf(err, EINVAL,
                          "process.terminal is true: run --detach needs --console-socket");
  if (!c->o->foreground)
    return rrt_error_msgf(err, EINVAL,
                          "process.terminal is true: --console-socket is required with create");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return rrt_error_errno(err, "terminal: socketpair");
  c->terminal_fd = sv[0];
  c->console_fd = sv[1];
  return 0;
}

/* What state.json will say, decided before the clone; nothing is written yet. */
static int plan_state(struct create_ctx *c, struct rrt_error *err)
{
  if (rrt_state_root(c->g->root, true, &c->root, err) < 0)
    return -1;
  c->st.id = xstrdup(c->o->id);
  c->st.bundle = xstrdup(c->bundle);
  c->st.rootfs = xstrdup(c->rootfs);
  c->st.created = now_rfc3339();
  c->st.owner = geteuid();
  c->st.annotations_json = annotations_json(c->spec);
  return 0;
}

/*
 * The state directory, its config copy and start socket: made while newuidmap and newgidmap
 * run, as is everything here; its ext4 work (a directory, two inodes) is often waiting on the
 * journal. init gets the start socket with CONTINUE.
 */
static int make_state_files(struct create_ctx *c, struct rrt_error *err);

/* A write into the state directory failed (a full disk: "No space left on device"): whose
 * directory, and where, so that the user knows which filesystem to look at. */
static int in_state_dir(const struct create_ctx *c, struct rrt_error *err)
{
  return rrt_error_wrap(err, "container \"%s\": state directory %s/%s", c->o->id, c->root,
                        c->o->id);
}

static int make_state(struct create_ctx *c, struct rrt_error *err)
{
  if (rrt_state_create_dir(c->root, c->o->id, &c->dirfd, err) < 0)
    return -1;
  c->dir_created = true;
  if (make_state_files(c, err) < 0)
    return in_state_dir(c, err);
  PHASE("state directory made (config copy, start socket)");
  return 0;
}

static int make_state_files(struct create_ctx *c, struct rrt_error *err)
{
  /* A private copy: delete runs the poststop hooks of the config as created. */
  if (c->config_text) {
    cleanup_close int fd =
        openat(c->dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || rrt_write_all(fd, c->config_text, strlen(c->config_text)) < 0)
      return rrt_error_errno(err, "write config.json");
  }
  if (c->net.mode == RRT_NET_SLIRP) {
    cleanup_free char *text = rrt_net_resolv_conf(&c->net);
    cleanup_close int fd =
        openat(c->dirfd, "resolv.conf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || rrt_write_all(fd, text, strlen(text)) < 0)
      return rrt_error_errno(err, "write resolv.conf");
  }
  c->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (c->listen_fd < 0)
    return rrt_error_errno(err, "start socket");
  struct sockaddr_un sa;
  if (start_socket_addr(c->dirfd, &sa) < 0)
    return rrt_error_set(err, ENAMETOOLONG, "start socket path");
  if (bind(c->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(c->listen_fd, 4) < 0)
    return rrt_error_errno(err, "make start.sock");
  return 0;
}

/* Host root, root of rootless podman's namespace, a user, or a CI job's container (userns.h). */
static int setup_userns_plan(struct create_ctx *c, struct rrt_error *err)
{
  struct rrt_userns_caller caller;
  rrt_userns_caller_read(&caller);
  int r = rrt_userns_plan_caller(c->spec, &caller, &c->plan, err);
  c->init.nested = caller.nested;
  rrt_userns_caller_free(&caller);
  return r < 0 ? rrt_error_wrap(err, "user namespace") : 0;
}

static int run_hooks(struct create_ctx *c, enum rrt_hook_kind kind, const char *status,
                     struct rrt_error *err)
{
  if (c->spec->hooks[kind].n == 0)
    return 0;
  cleanup_free char *json = rrt_state_oci_json(&c->st, status, false);
  create_signals_set(false);
  int r = create_interrupted ? rrt_error_msgf(err, EINTR, "interrupted")
                             : rrt_hooks_run(c->spec, kind, json, err);
  create_signals_set(true);
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
  return r < 0 ? in_state_dir(c, err) : 0;
}

/* init 0: made before the clone, init joins it (c->join). */
static int setup_cgroup(struct create_ctx *c, pid_t init, struct rrt_error *err)
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
static void reap_quietly(pid_t pid)
{
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* Everything create decides and prepares before the clone. */
static int create_prepare(struct create_ctx *c, struct rrt_error *err)
{
  if (load_bundle(c, err) < 0)
    return -1;
  PHASE("config.json parsed and validated");
  if (rrt_net_config_build(c->spec, c->o->network, c->o->publish, c->o->n_publish, c->o->net_opts,
                           c->o->n_net_opts, &c->net, err) < 0)
    return -1;
  if (plan_namespaces(c, err) < 0)
    return -1;
  struct rrt_ns_plan nsp = {.ns_flags = c->init.ns_flags,
                            .join_types = c->init.join_types,
                            .join_paths = c->init.join_paths,
                            .n_join = c->init.n_join};
  if (check_mount_ns(&nsp, err) < 0 || rrt_sysctl_check(c->spec, &nsp, err) < 0)
    return -1;
  if (setup_userns_plan(c, err) < 0)
    return -1;
  PHASE("namespaces, network and user namespace planned");
  if (c->o->pid_file)
    c->pid_file = absolute(c->o->pid_file);
  if (open_console_socket(c, err) < 0)
    return -1;
  if (plan_state(c, err) < 0)
    return -1;
  /* Before the clone: init mounts the socket with the config's mounts, so the socket exists
   * before then too (as root with a user namespace the runtime opens bind sources itself). */
  cleanup_free char *state_dir = xasprintf("%s/%s", c->root, c->o->id);
  if (rrt_notify_plan(c->spec, state_dir, &c->notify, err) < 0)
    return -1;
  if (c->notify.host && (make_state(c, err) < 0 || rrt_notify_bind(&c->notify, c->dirfd, err) < 0))
    return -1;
  if (chdir(c->bundle) < 0)
    return rrt_error_errno(err, "chdir %s", c->bundle);
  /* Root's user namespace cannot enter what only host root may, nor mknod: the runtime opens
   * bind sources and makes device nodes, init inherits them as detached mounts. */
  if (rrt_hostfds_needed(c->spec, &c->plan)) {
    /* Device nodes are made beside the root, not in it (see rrt_state_private_dir). */
    cleanup_free char *priv = c->spec->lnx.n_devices ? rrt_state_private_dir(c->root, true) : NULL;
    if (rrt_hostfds_open(c->spec, &c->plan, priv ? priv : c->root, &c->hostfds, err) < 0)
      return -1;
    c->init.hostfds = &c->hostfds;
  }

  struct rrt_init_args *ia = &c->init;
  ia->spec = c->spec;
  ia->plan = &c->plan;
  ia->rootfs = c->rootfs;
  ia->listen_fd = -1; /* comes with CONTINUE */
  ia->console_fd = c->console_fd;
  ia->no_pivot = c->o->no_pivot;
  ia->no_new_keyring = c->o->no_new_keyring;
  ia->preserve_fds = c->o->listen_fds + c->o->preserve_fds;
  ia->listen_fds = c->o->listen_fds;
  ia->net_mode = c->net.mode;
  if (c->net.mode == RRT_NET_SLIRP) {
    /* Written by make_state, mounted by init after CONTINUE. */
    c->resolv_conf = xasprintf("%s/%s/resolv.conf", c->root, c->o->id);
    ia->resolv_conf = c->resolv_conf;
  }
  ia->resolv_fd = -1; /* arrives with RRT_SYNC_RESOLV, see send_resolv_conf */
  /* Compiled filters are cached per --root (keyed by a hash of the profile and the libseccomp
   * version), beside it rather than in it (see rrt_state_private_dir). */
  if (c->spec->lnx.seccomp) {
    cleanup_free char *priv = rrt_state_private_dir(c->root, true);
    c->seccomp_cache = priv ? xasprintf("%s/seccomp-cache", priv) : NULL;
  }
  ia->seccomp_cache = c->seccomp_cache;
  if (c->o->foreground && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
    return rrt_error_errno(err, "prctl(PR_SET_CHILD_SUBREAPER)");
  return 0;
}

/* From init's go-ahead (in its cgroup, ids mapped) to its blocked state: mounts, network,
 * prestart and createRuntime hooks, createContainer and pivot. */
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
      return in_state_dir(c, err);
  }
}

static int create_after_init(struct create_ctx *c, int sync_fd, pid_t init, struct rrt_error *err)
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
      return in_state_dir(c, err);
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
static int while_helpers_run(struct create_ctx *c, int sync_fd, pid_t init,
                             const struct rrt_maps_job *maps, struct rrt_error *err)
{
  /* The init record first, so that delete --force finds init whatever instant create dies at. */
  if (!c->dir_created && make_state(c, err) < 0)
    return -1;
  if (rrt_state_record_init(c->dirfd, c->st.pid, c->st.pid_start, err) < 0)
    return in_state_dir(c, err);
  PHASE("state: init recorded");
  /* Its directories are recorded as they are made (record_cgroup). */
  if ((!c->cgroup_made && setup_cgroup(c, init, err) < 0) ||
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
    return in_state_dir(c, err);
  PHASE("state.json written");
  /* Nothing for the runtime to do at NS_READY either: no prestart or createRuntime hook. */
  if (c->spec->hooks[RRT_HOOK_PRESTART].n == 0 && c->spec->hooks[RRT_HOOK_CREATE_RUNTIME].n == 0)
    return send_hooks_done(c, sync_fd, err);
  return 0;
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
  if (create_prepare(c, err) < 0)
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
    if ((!c->dir_created && make_state(c, err) < 0) || setup_cgroup(c, 0, err) < 0)
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
  create_child = child;
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
  create_init = init;
  if (create_interrupted)
    kill(init, SIGKILL);
  if (while_helpers_run(c, parent_fd, init, maps, err) < 0) {
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
  if (create_after_init(c, parent_fd, init, err) < 0) {
    why_init_ended(c, err);
    return -1;
  }
  if (init != child)
    reap_quietly(steal_pid(&child));
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

/* What run goes on with after create: no need to read it back from disk. */
struct created {
  pid_t init;
  int terminal_fd;       /* see create_ctx.terminal_fd; -1 when none */
  struct rrt_spec *spec; /* the config create parsed: the state directory's copy of it */
  char *root;
  int dirfd;       /* the state directory, still locked: no `start` from elsewhere between */
  int sync_fd;     /* init listens on it for START as well as on its start socket */
  bool start_sent; /* and has START already */
  struct rrt_state st;
};

static void created_free(struct created *cr)
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

static int create_container(const struct rrt_global *g, const struct rrt_create_opts *o,
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
  create_interrupted = 0;
  create_child = create_init = -1;
  create_signals_set(true);
  int ret = do_create(&c, &init, err);
  if (ret == 0 && create_interrupted)
    ret = rrt_error_msgf(err, EINTR, "create interrupted by signal %s",
                         rrt_signal_name(create_interrupted));
  else if (ret < 0 && create_interrupted)
    rrt_error_wrap(err, "create interrupted by signal %s", rrt_signal_name(create_interrupted));
  if (ret < 0)
    destroy_failed(&c);
  create_signals_set(false);
  create_child = create_init = -1;
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
  return create_container(g, o, NULL, err);
}

/* Connects to init's start socket, asks it to exec, and waits for the verdict:
 * EOF (the close-on-exec socket closed by a successful execve) or an error. */
static int release_init(int dirfd, const char *id, int sync_fd, bool sent, struct rrt_error *err)
{
  cleanup_close int fd = -1;
  if (sync_fd >= 0) {
    fd = sync_fd; /* run: create's socket, still open */
  } else {
    struct sockaddr_un sa;
    if (start_socket_addr(dirfd, &sa) < 0)
      return rrt_error_set(err, ENAMETOOLONG, "start socket path");
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return rrt_error_errno(err, "socket");
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
      if (errno == ECONNREFUSED)
        return rrt_error_msgf(err, EALREADY,
                              "container \"%s\" is being started already: init no longer waits "
                              "for start (another start released it)",
                              id);
      return rrt_error_errno(err, "container \"%s\": init is not waiting for start", id);
    }
  }
  if (!sent && rrt_sync_send(fd, RRT_SYNC_START, 0, NULL, err) < 0)
    return -1;
  struct rrt_sync_msg m;
  int r = rrt_sync_recv(fd, &m, err);
  if (r == RRT_SYNC_EOF) {
    rrt_error_clear(err);
    return 0;
  }
  if (r < 0)
    return -1;
  rrt_sync_msg_free(&m);
  return rrt_error_msgf(err, EPROTO, "start: unexpected message from init");
}

/* sync_fd: run's socket to init (taken and closed), or -1 to connect to the start socket. */
static int start_loaded(struct loaded *l, int sync_fd, bool sent, struct rrt_error *err);

static int start_container(const struct rrt_global *g, const char *id, struct rrt_error *err)
{
  struct loaded l;
  int ret = -1;
  if (rrt_load_container(g, id, true, true, NULL, false, &l, err) == 0) {
    const char *status = rrt_state_status(&l.st);
    if (strcmp(status, "running") == 0 || strcmp(status, "paused") == 0)
      rrt_error_msgf(err, EALREADY, "container \"%s\" has been started already (it is %s)", id,
                     status);
    else if (strcmp(status, "created") != 0)
      rrt_error_msgf(err, EINVAL, "container \"%s\" is %s, not created: cannot start it", id,
                     status);
    else
      ret = start_loaded(&l, -1, false, err);
  }
  rrt_loaded_free(&l);
  return ret;
}

/* run: what create made, still locked, so nothing is read back from disk and no start socket
 * is needed. l keeps it for delete, unlocked meanwhile. */
static int start_created(struct created *cr, struct loaded *l, struct rrt_error *err)
{
  *l = (struct loaded){.root = steal_ptr(&cr->root),
                       .dirfd = steal_fd(&cr->dirfd),
                       .st = cr->st,
                       .spec = cr->spec,
                       .spec_borrowed = true};
  memset(&cr->st, 0, sizeof(cr->st));
  int ret = start_loaded(l, steal_fd(&cr->sync_fd), cr->start_sent, err);
  (void)flock(l->dirfd, LOCK_UN);
  return ret;
}

/* run, once the container is gone: its state as start left it, locked again. Gone already
 * (`delete` from elsewhere: the directory has no link left) is fine, as for delete --force. */
static int delete_started(struct loaded *l, struct rrt_error *err)
{
  int r;
  do
    r = flock(l->dirfd, LOCK_EX);
  while (r < 0 && errno == EINTR);
  struct stat sb;
  if (r < 0 || fstat(l->dirfd, &sb) < 0)
    return rrt_error_errno(err, "lock container \"%s\"", l->st.id);
  if (sb.st_nlink == 0)
    return 0;
  return rrt_loaded_destroy(l, err);
}

static int start_loaded(struct loaded *l, int sync_fd, bool sent, struct rrt_error *err)
{
  const char *id = l->st.id;
  int ret = -1;
  if (release_init(l->dirfd, id, sync_fd, sent, err) < 0) {
    struct rrt_error ignored = RRT_ERROR_INIT;
    rrt_loaded_destroy(l, &ignored);
    rrt_error_clear(&ignored);
    goto out;
  }
  l->st.started = true;
  if (rrt_state_mark_started(l->dirfd, err) < 0)
    goto out;
  if (rrt_loaded_hooks(l, RRT_HOOK_POSTSTART, "running", err) < 0) {
    /* runtime-spec 1.3.0: a failing poststart hook stops the container. */
    struct rrt_error ignored = RRT_ERROR_INIT;
    rrt_loaded_destroy(l, &ignored);
    rrt_error_clear(&ignored);
    goto out;
  }
  ret = 0;
out:
  return ret;
}

int rrt_container_start(const struct rrt_global *g, const char *id, struct rrt_error *err)
{
  return start_container(g, id, err);
}

int rrt_container_run(const struct rrt_global *g, const struct rrt_create_opts *o, int *status,
                      struct rrt_error *err)
{
  PHASE("run");
  struct created cr = {.init = -1, .terminal_fd = -1, .dirfd = -1, .sync_fd = -1};
  struct loaded l = {.dirfd = -1};
  if (create_container(g, o, &cr, err) < 0)
    return -1;
  pid_t init = cr.init;
  /* With a terminal and no --console-socket, run is the terminal. */
  bool proxy = cr.terminal_fd >= 0;
  struct rrt_tproxy tp = {.sock = {steal_fd(&cr.terminal_fd), -1}, .master = -1};
  int ret = -1;
  if (proxy) {
    if (rrt_tproxy_recv_master(&tp, err) < 0) {
      struct rrt_error ignored = RRT_ERROR_INIT;
      close(steal_fd(&cr.dirfd)); /* the lock, for delete */
      rrt_container_delete_known(g, o->id, true, cr.spec, &ignored);
      rrt_error_clear(&ignored);
      goto out;
    }
  }
  if (!o->detach)
    rrt_forward_signals(init, false);
  if (start_created(&cr, &l, err) < 0) {
    struct rrt_error ignored = RRT_ERROR_INIT;
    delete_started(&l, &ignored);
    rrt_error_clear(&ignored);
    if (!o->detach)
      reap_quietly(init);
    goto out;
  }
  *status = 0;
  if (o->detach) {
    ret = 0;
    goto out;
  }
  /* The copy loop ends when every slave fd is closed: the container is gone
   * or has let go of its terminal; its status comes from wait. */
  if (proxy && rrt_tproxy_run(&tp, err) < 0)
    rrt_warn("terminal: %s", rrt_error_msg(err));
  rrt_error_clear(err);
  PHASE("started");
  *status = rrt_wait_reaping(init);
  if (*status < 0) {
    rrt_error_errno(err, "wait for the container");
    goto out;
  }
  PHASE("container exited");
  rrt_forward_signals_stop();
  ret = o->keep ? 0 : delete_started(&l, err);
  PHASE("deleted");
out:
  rrt_loaded_free(&l);
  if (proxy)
    rrt_tproxy_close(&tp);
  created_free(&cr);
  return ret;
}

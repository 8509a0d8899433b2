/* plan.c: what create decides and prepares before the clone: the bundle and its config, the
 * namespaces, the user namespace's plan, the console, what state.json will say, init's
 * arguments. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "create.h"
#include "rootlessrt/confine.h"
#include "rootlessrt/hostfds.h"
#include "rootlessrt/notify.h"
#include "rootlessrt/state.h"
#include "rootlessrt/sysctl.h"
#include "rootlessrt/terminal_proxy.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

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

/* Everything create decides and prepares before the clone. */
int rrt_create_prepare(struct create_ctx *c, struct rrt_error *err)
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
  if (c->notify.host &&
      (rrt_create_make_state(c, err) < 0 || rrt_notify_bind(&c->notify, c->dirfd, err) < 0))
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
    /* Written by rrt_create_make_state, mounted by init after CONTINUE. */
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

/* exec.c: another process in a container: join init's namespaces (user
 * first, mount last), enter its root and cgroup, then the same last steps
 * as init (process.c). */
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/cgroup.h"
#include "rootlessrt/confine.h"
#include "rootlessrt/exec.h"
#include "rootlessrt/log.h"
#include "rootlessrt/sync.h"
#include "rootlessrt/terminal_proxy.h"
#include "rootlessrt/util.h"

/* ---------------------------------------------------------------- the process */

static json_object *obj_member(json_object *o, const char *key, json_type type)
{
  json_object *v = NULL;
  if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type))
    return v;
  v = type == json_type_array ? json_object_new_array() : json_object_new_object();
  json_object_object_add(o, key, v);
  return v;
}

static void env_set(json_object *env, const char *kv)
{
  size_t klen = strcspn(kv, "=");
  size_t n = json_object_array_length(env);
  for (size_t i = 0; i < n; i++) {
    const char *e = json_object_get_string(json_object_array_get_idx(env, i));
    if (e && strncmp(e, kv, klen) == 0 && (e[klen] == '=' || e[klen] == '\0')) {
      json_object_array_put_idx(env, i, json_object_new_string(kv));
      return;
    }
  }
  json_object_array_add(env, json_object_new_string(kv));
}

static bool strv_json_has(json_object *a, const char *s)
{
  for (size_t i = 0; i < json_object_array_length(a); i++)
    if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s) == 0)
      return true;
  return false;
}

static int parse_user(const char *s, json_object *proc, struct rrt_error *err)
{
  unsigned long long uid, gid;
  cleanup_free char *copy = xstrdup(s);
  char *colon = strchr(copy, ':');
  if (colon)
    *colon = '\0';
  if (rrt_parse_u64(copy, &uid) < 0 || uid > UINT32_MAX ||
      (colon && (rrt_parse_u64(colon + 1, &gid) < 0 || gid > UINT32_MAX)))
    return rrt_error_msgf(err, EINVAL, "exec: --user \"%s\": expected UID[:GID] (numbers)", s);
  json_object *u = obj_member(proc, "user", json_type_object);
  json_object_object_add(u, "uid", json_object_new_int64((int64_t)uid));
  if (colon)
    json_object_object_add(u, "gid", json_object_new_int64((int64_t)gid));
  return 0;
}

/* The command line over the container's own process object, as runc does:
 * args replaced, env extended, the rest only when asked. */
static int apply_cli(const struct rrt_exec_opts *o, json_object *proc, struct rrt_error *err)
{
  json_object *args = json_object_new_array();
  for (char **a = o->args; a && *a; a++)
    json_object_array_add(args, json_object_new_string(*a));
  json_object_object_add(proc, "args", args);
  json_object *env = obj_member(proc, "env", json_type_array);
  for (char **e = o->env; e && *e; e++) {
    if (!strchr(*e, '='))
      return rrt_error_msgf(err, EINVAL, "exec: --env \"%s\": expected KEY=VALUE", *e);
    env_set(env, *e);
  }
  if (o->cwd)
    json_object_object_add(proc, "cwd", json_object_new_string(o->cwd));
  if (o->user && parse_user(o->user, proc, err) < 0)
    return -1;
  if (o->additional_gids && o->additional_gids[0]) {
    json_object *gids = json_object_new_array();
    json_object_object_add(obj_member(proc, "user", json_type_object), "additionalGids", gids);
    for (char **g = o->additional_gids; *g; g++) {
      unsigned long long gid;
      if (rrt_parse_u64(*g, &gid) < 0 || gid > UINT32_MAX)
        return rrt_error_msgf(err, EINVAL, "exec: --additional-gids \"%s\": not a gid (a number)",
                              *g);
      json_object_array_add(gids, json_object_new_int64((int64_t)gid));
    }
  }
  if (o->caps && o->caps[0]) {
    json_object *caps = obj_member(proc, "capabilities", json_type_object);
    static const char *const sets[] = {"bounding", "effective", "permitted"};
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
      json_object *set = obj_member(caps, sets[i], json_type_array);
      for (char **c = o->caps; *c; c++) {
        cleanup_free char *name =
            strncasecmp(*c, "CAP_", 4) == 0 ? xstrdup(*c) : xasprintf("CAP_%s", *c);
        for (char *p = name; *p; p++)
          *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
        if (!strv_json_has(set, name))
          json_object_array_add(set, json_object_new_string(name));
      }
    }
  }
  if (o->no_new_privs)
    json_object_object_add(proc, "noNewPrivileges", json_object_new_boolean(1));
  json_object_object_add(proc, "terminal", json_object_new_boolean(o->tty));
  return 0;
}

/* The process to run, validated by the config parser itself. */
static int build_process(const struct rrt_exec_opts *o, const char *config_text,
                         struct rrt_spec **out, struct rrt_error *err)
{
  json_object *proc = NULL;
  const char *what = "exec";
  if (o->process_file) {
    cleanup_free char *text = NULL;
    if (rrt_read_file(o->process_file, &text, NULL, err) < 0)
      return rrt_error_wrap(err, "exec: --process");
    proc = json_tokener_parse(text);
    if (!proc || !json_object_is_type(proc, json_type_object)) {
      if (proc)
        json_object_put(proc);
      return rrt_error_msgf(err, EINVAL, "exec: --process %s: not a JSON object", o->process_file);
    }
    if (o->tty_set)
      json_object_object_add(proc, "terminal", json_object_new_boolean(o->tty));
    what = o->process_file;
  } else {
    json_object *cfg = json_tokener_parse(config_text);
    json_object *p = NULL;
    if (cfg && json_object_object_get_ex(cfg, "process", &p) &&
        json_object_is_type(p, json_type_object))
      proc = json_object_get(p);
    if (cfg)
      json_object_put(cfg);
    if (!proc)
      return rrt_error_msgf(err, EINVAL, "exec: the container's config.json has no process");
    if (apply_cli(o, proc, err) < 0) {
      json_object_put(proc);
      return -1;
    }
  }
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "ociVersion", json_object_new_string(RRT_OCI_VERSION));
  json_object *root = json_object_new_object();
  json_object_object_add(root, "path", json_object_new_string("/"));
  json_object_object_add(doc, "root", root);
  json_object_object_add(doc, "process", proc);
  const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
  int r = rrt_spec_parse(text, strlen(text), out, err);
  json_object_put(doc);
  if (r < 0)
    return rrt_error_wrap(err, "exec: %s", what);
  if (rrt_caps_validate((*out)->process->capabilities, err) < 0)
    return rrt_error_wrap(err, "exec: %s", what);
  return 0;
}

/* ---------------------------------------------------------------- joining */

/* Order matters: the user namespace first (it grants the capabilities the
 * other setns calls need), the mount namespace last (after it, /proc paths
 * are the container's). */
static const struct {
  int type;
  const char *name;
} ns_order[] = {
    {CLONE_NEWUSER, "user"}, {CLONE_NEWCGROUP, "cgroup"}, {CLONE_NEWIPC, "ipc"},
    {CLONE_NEWUTS, "uts"},   {CLONE_NEWNET, "net"},       {CLONE_NEWPID, "pid"},
    {CLONE_NEWTIME, "time"}, {CLONE_NEWNS, "mnt"},
};
#define N_NS (sizeof(ns_order) / sizeof(ns_order[0]))

struct target {
  pid_t pid;
  int ns[N_NS]; /* -1: shared with us, nothing to join */
  int rootfd;
  bool setgroups_allowed;
  struct rrt_cgroup cgroup;
};

static void target_close(struct target *t)
{
  for (size_t i = 0; i < N_NS; i++)
    if (t->ns[i] >= 0)
      close(t->ns[i]);
  if (t->rootfd >= 0)
    close(t->rootfd);
  rrt_cgroup_free(&t->cgroup);
}

static int target_open(const struct rrt_state *st, struct target *t, struct rrt_error *err)
{
  t->pid = st->pid;
  for (size_t i = 0; i < N_NS; i++) {
    t->ns[i] = -1;
    if (rrt_same_ns(st->pid, ns_order[i].name))
      continue;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/%s", st->pid, ns_order[i].name);
    t->ns[i] = open(path, O_RDONLY | O_CLOEXEC);
    if (t->ns[i] < 0 && errno != ENOENT)
      return rrt_error_errno(err, "exec: open %s", path);
  }
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/root", st->pid);
  t->rootfd = open(path, O_PATH | O_CLOEXEC);
  if (t->rootfd < 0)
    return rrt_error_errno(err, "exec: open %s", path);
  /* The fds are of the right process only if it is still the same one. */
  if (!rrt_proc_same(st->pid, st->pid_start))
    return rrt_error_msgf(err, ESRCH, "container \"%s\" is not running", st->id);
  snprintf(path, sizeof(path), "/proc/%d/setgroups", st->pid);
  cleanup_free char *sg = NULL;
  t->setgroups_allowed = rrt_read_file(path, &sg, NULL, NULL) < 0 || strncmp(sg, "allow", 5) == 0;
  rrt_cgroup_load(st, &t->cgroup);
  return 0;
}

struct child_args {
  const struct target *t;
  const struct rrt_spec *container;
  const struct rrt_spec *pspec;
  struct rrt_seccomp_filter *filter;
  const char *state_json;
  int report_fd;
  int console_fd;
  int preserve_fds;
};

/* The grandchild: in the container's pid namespace; never returns. */
__attribute__((noreturn)) static void run_process(const struct child_args *a)
{
  struct rrt_error err = RRT_ERROR_INIT;
  const struct rrt_process *proc = a->pspec->process;
  char *exec_path = NULL; /* this process execs or exits: never freed */
  /* Our root is still the runtime's: take the container's, held open from
   * before the mount namespace changed. */
  if (fchdir(a->t->rootfd) < 0 || chroot(".") < 0) {
    rrt_error_errno(&err, "exec: enter the container's root");
    goto fail;
  }
  if (a->console_fd >= 0) {
    if (rrt_pty_for_exec(proc, a->console_fd, &err) < 0) {
      rrt_error_wrap(&err, "exec: terminal");
      goto fail;
    }
    close(a->console_fd);
  }
  /* As at create: a missing or non-executable program fails in runc's words before anything
   * else is changed. */
  if (rrt_process_find_exec(proc, rrt_process_keep_groups(a->container), &exec_path, &err) < 0)
    goto fail;
  struct rrt_exec_ctx x = {
      .spec = a->container,
      .proc = proc,
      .exec_path = exec_path,
      .preserve_fds = a->preserve_fds,
      .report_fd = a->report_fd,
      .setgroups_allowed = a->t->setgroups_allowed,
      .state_json = a->state_json,
      .seccomp_cache = NULL,
      .filter = a->filter,
  };
  rrt_process_exec(&x, &err);
fail:
  rrt_sync_send_error(a->report_fd, &err);
  _exit(err.errnum == ENOENT ? 127 : err.errnum == EACCES ? 126 : 1);
}

/* The child: joins, forks the process (a pid namespace applies to children
 * only), reports its pid, exits. */
__attribute__((noreturn)) static void join_and_fork(const struct child_args *a)
{
  struct rrt_error err = RRT_ERROR_INIT;
  /* While still dumpable, with the runtime's credentials; the process forked below inherits it
   * (confine.h). */
  if (rrt_oom_score_adj_apply(a->pspec->process, &err) < 0)
    goto fail;
  /* Before the first setns: from here on, the container could see us (confine.h). The process
   * forked below inherits it. */
  rrt_confine_undumpable();
  if (rrt_cgroup_enter(&a->t->cgroup, 0, &err) < 0) {
    rrt_error_wrap(&err, "exec: join the container's cgroup");
    goto fail;
  }
  for (size_t i = 0; i < N_NS; i++) {
    if (a->t->ns[i] >= 0 && setns(a->t->ns[i], ns_order[i].type) < 0) {
      rrt_error_errno(&err, "exec: join the %s namespace of pid %d", ns_order[i].name, a->t->pid);
      goto fail;
    }
  }
  pid_t pid = fork();
  if (pid < 0) {
    rrt_error_errno(&err, "exec: fork");
    goto fail;
  }
  if (pid == 0)
    run_process(a);
  /* The process as a pidfd, and we stay its parent until the runtime has checked it
   * (rrt_sync_child_pid): its pid comes from the kernel, not from a report. */
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    rrt_error_errno(&err, "exec: pidfd_open the process");
    kill(pid, SIGKILL);
    goto fail;
  }
  if (rrt_sync_send_fd(a->report_fd, RRT_SYNC_INIT_PID, pid, NULL, pidfd, &err) < 0 ||
      rrt_sync_expect(a->report_fd, RRT_SYNC_CONTINUE, NULL, NULL, &err) < 0) {
    kill(pid, SIGKILL);
    _exit(1);
  }
  _exit(0);
fail:
  rrt_sync_send_error(a->report_fd, &err);
  _exit(1);
}

static const char *report_name(uint32_t type)
{
  return type == RRT_SYNC_INIT_PID ? "INIT_PID" : type == RRT_SYNC_ERROR ? "ERROR" : "unexpected";
}

/*
 * Reads the children's reports, one of each at most: the process's pid from the joining child
 * (with its pidfd: the pid is the kernel's, see rrt_sync_child_pid), then EOF (execve succeeded:
 * the socket is close-on-exec) or one error. Anything more is a protocol error: the process is
 * killed (through its pidfd, never by a pid a report named) and the exec fails saying so.
 */
int rrt_exec_collect_reports(int fd, pid_t child, pid_t *pid, int *pidfd, struct rrt_error *err)
{
  struct rrt_error failure = RRT_ERROR_INIT;
  bool have_error = false;
  for (;;) {
    struct rrt_sync_msg m;
    struct rrt_error e = RRT_ERROR_INIT;
    int r = rrt_sync_recv(fd, &m, &e);
    if (r == RRT_SYNC_EOF) {
      rrt_error_clear(&e);
      break;
    }
    uint32_t type = m.type;
    bool again = type == RRT_SYNC_ERROR ? have_error : type == RRT_SYNC_INIT_PID && *pid > 0;
    if (r < 0 && type == RRT_SYNC_ERROR && !have_error) {
      have_error = true;
      rrt_error_move(&failure, &e);
      continue;
    }
    if (r < 0 || again || type != RRT_SYNC_INIT_PID) {
      if (r == 0)
        rrt_sync_msg_free(&m);
      rrt_error_clear(&e);
      rrt_error_clear(&failure);
      if (*pidfd >= 0)
        (void)syscall(SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
      kill(child, SIGKILL);
      return rrt_error_msgf(err, EPROTO,
                            "exec: %s %s report from the process: protocol error, the exec was "
                            "killed",
                            again ? "a second" : "an", report_name(type));
    }
    pid_t p = 0;
    int rc = rrt_sync_child_pid(m.fd, child, &p, &e);
    if (rc == 0) {
      *pid = p;
      *pidfd = steal_fd(&m.fd);
    }
    rrt_sync_msg_free(&m);
    if (rc < 0) {
      /* No pid to trust: the joining child, told so, kills the process it forked (it is
       * waiting for our CONTINUE, see join_and_fork) and exits. */
      rrt_sync_send_error(fd, &e);
      rrt_error_clear(&failure);
      rrt_error_move(err, &e);
      return rrt_error_wrap(err, "exec");
    }
    if (rrt_sync_send(fd, RRT_SYNC_CONTINUE, 0, NULL, &e) < 0) {
      (void)syscall(SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
      kill(child, SIGKILL);
      rrt_error_clear(&failure);
      rrt_error_move(err, &e);
      return rrt_error_wrap(err, "exec");
    }
  }
  if (have_error) {
    rrt_error_move(err, &failure);
    return -1;
  }
  if (*pid <= 0)
    return rrt_error_msgf(err, EPROTO, "exec: the process did not start");
  return 0;
}

struct exec_run {
  struct rrt_live l;
  struct rrt_spec *pspec;
  struct rrt_seccomp_filter *filter;
  char *state_json;
  struct target t;
  struct rrt_tproxy tp;
  int console_fd;
};

static int prepare(const struct rrt_global *g, const struct rrt_exec_opts *o, struct exec_run *r,
                   struct rrt_error *err)
{
  if (rrt_live_load(g, o->id, false, false, true, &r->l, err) < 0)
    return -1;
  const char *status = rrt_state_status(&r->l.st);
  if (strcmp(status, "stopped") == 0)
    return rrt_error_msgf(err, ESRCH, "exec: container \"%s\" is stopped: cannot exec in it",
                          o->id);
  /* runc's words; with --ignore-paused the process joins the frozen cgroup and runs at resume. */
  if (strcmp(status, "paused") == 0 && !o->ignore_paused)
    return rrt_error_msgf(err, EBUSY,
                          "exec: container \"%s\" is paused: cannot exec in a paused container "
                          "(resume it, or use --ignore-paused)",
                          o->id);
  /* Until start, init still holds the runtime's privileges and stays reachable (the owner's
   * hooks and the network helper open its /proc entries): no container process may exist
   * beside it then (the reach rule, confine.h). */
  if (strcmp(status, "created") == 0)
    return rrt_error_msgf(err, EBUSY,
                          "exec: container \"%s\" is created, not started: start it first "
                          "(until start its init holds the runtime's privileges)",
                          o->id);
  if (build_process(o, r->l.config_text, &r->pspec, err) < 0)
    return -1;
  const struct rrt_process *proc = r->pspec->process;
  if (proc->terminal && o->detach && !o->console_socket)
    return rrt_error_msgf(err, EINVAL,
                          "exec: a terminal with --detach needs --console-socket to hand it to");
  if (!proc->terminal && o->console_socket)
    return rrt_error_msgf(err, EINVAL, "exec: --console-socket needs a terminal (-t)");
  /* Compiled here, from the cache create filled: the container's mount
   * namespace has neither the cache nor the listenerPath. */
  const struct rrt_seccomp *sc = r->l.spec->lnx.seccomp;
  cleanup_free char *priv = sc ? rrt_state_private_dir(r->l.root, false) : NULL;
  cleanup_free char *cache = priv ? xasprintf("%s/seccomp-cache", priv) : NULL;
  if (sc && rrt_seccomp_compile(sc, cache, &r->filter, err) < 0)
    return rrt_error_wrap(err, "exec: linux.seccomp");
  r->state_json = rrt_state_oci_json(&r->l.st, NULL, false);
  if (target_open(&r->l.st, &r->t, err) < 0)
    return -1;
  for (char **c = o->cgroups; c && *c; c++)
    if (rrt_cgroup_narrow(&r->t.cgroup, *c, err) < 0)
      return -1;
  if (proc->terminal) {
    if (o->console_socket) {
      r->console_fd = rrt_console_socket_connect(o->console_socket, err);
      if (r->console_fd < 0)
        return -1;
    } else {
      if (rrt_tproxy_open(&r->tp, err) < 0)
        return -1;
      r->console_fd = r->tp.sock[1];
    }
  }
  return 0;
}

static void exec_run_free(struct exec_run *r)
{
  if (r->console_fd >= 0 && r->console_fd != r->tp.sock[1])
    close(r->console_fd);
  rrt_tproxy_close(&r->tp);
  target_close(&r->t);
  free(r->state_json);
  rrt_seccomp_filter_free(r->filter);
  rrt_spec_free(r->pspec);
  rrt_live_free(&r->l);
}

static int finish(const struct rrt_exec_opts *o, struct exec_run *r, pid_t pid,
                  struct rrt_error *err)
{
  bool proxy = r->tp.sock[0] >= 0;
  if (proxy && rrt_tproxy_recv_master(&r->tp, err) < 0)
    return -1;
  if (o->pid_file && rrt_write_pid_file(o->pid_file, pid, err) < 0)
    return -1;
  if (o->detach)
    return 0;
  int status = 0;
  if (proxy && rrt_tproxy_run(&r->tp, err) < 0)
    rrt_warn("%s", rrt_error_msg(err));
  status = rrt_wait_reaping(pid);
  rrt_forward_signals_stop();
  if (status < 0)
    return rrt_error_errno(err, "exec: wait for the process");
  return status;
}

/* Forks the child that joins the container and forks the process in it (join_and_fork); *report
 * is our end of the socket its reports come back on. The child holds the console's end and the
 * notify listener's connection from then on: ours are closed. */
static int fork_joiner(const struct rrt_exec_opts *o, struct exec_run *r, int *report, pid_t *child,
                       struct rrt_error *err)
{
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return rrt_error_errno(err, "exec: socketpair");
  cleanup_close int ours = sv[0];
  cleanup_close int theirs = sv[1];
  /* In the foreground the process is reparented to us once the joining
   * child exits: we wait for it and forward signals to it. */
  if (!o->detach && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
    return rrt_error_errno(err, "prctl(PR_SET_CHILD_SUBREAPER)");
  struct child_args a = {
      .t = &r->t,
      .container = r->l.spec,
      .pspec = r->pspec,
      .filter = r->filter,
      .state_json = r->state_json,
      .report_fd = theirs,
      .console_fd = r->console_fd,
      .preserve_fds = o->preserve_fds,
  };
  if (!o->detach)
    rrt_forward_signals_early(r->tp.sock[0] < 0);
  *child = fork();
  if (*child < 0)
    return rrt_error_errno(err, "exec: fork");
  if (*child == 0) {
    close(ours);
    join_and_fork(&a);
  }
  close(steal_fd(&theirs));
  /* The child holds the notify listener connection now; ours would keep the
   * agent from seeing its end. */
  rrt_seccomp_filter_release_listener(r->filter);
  if (r->tp.sock[1] >= 0) {
    rrt_tproxy_child_end_close(&r->tp);
    r->console_fd = -1;
  } else if (r->console_fd >= 0) {
    close(r->console_fd);
    r->console_fd = -1;
  }
  *report = steal_fd(&ours);
  return 0;
}

/* The process failed before execve: an error (exec exits 255, not a status the process could
 * have had), once the process is gone in the foreground. */
static int failed_before_execve(const struct rrt_exec_opts *o, pid_t pid, struct rrt_error *err)
{
  if (pid > 0 && !o->detach) {
    rrt_forward_signals(pid, false);
    (void)rrt_wait_reaping(pid);
  }
  return -1;
}

/* The joiner's reports, the joiner reaped, then the process: its exit status in the foreground,
 * 0 once it runs detached, -1 on error. */
static int wait_process(const struct rrt_exec_opts *o, struct exec_run *r, int report, pid_t child,
                        struct rrt_error *err)
{
  cleanup_close int pidfd = -1;
  pid_t pid = 0;
  int cr = rrt_exec_collect_reports(report, child, &pid, &pidfd, err);
  while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
    ;
  if (cr < 0)
    return failed_before_execve(o, pid, err);
  if (!o->detach)
    rrt_forward_signals(pid, r->tp.sock[0] < 0);
  int ret = finish(o, r, pid, err);
  /* Detached too: an exec that reports failure (its --pid-file could not be written, the disk
   * is full) leaves no process that the caller, told it failed, would never stop. */
  if (ret < 0)
    (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  return ret;
}

int rrt_exec(const struct rrt_global *g, const struct rrt_exec_opts *o, struct rrt_error *err)
{
  struct exec_run r = {.console_fd = -1, .tp = {{-1, -1}, -1}};
  for (size_t i = 0; i < N_NS; i++)
    r.t.ns[i] = -1;
  r.t.rootfd = -1;
  int ret = -1;
  if (prepare(g, o, &r, err) == 0) {
    cleanup_close int report = -1;
    pid_t child = -1;
    if (fork_joiner(o, &r, &report, &child, err) == 0)
      ret = wait_process(o, &r, report, child, err);
  }
  exec_run_free(&r);
  return ret;
}

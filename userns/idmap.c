/* idmap.c: deciding a container's user namespace and writing its uid/gid maps. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootlessrt/log.h"
#include "rootlessrt/userns.h"
#include "rootlessrt/util.h"

/* Kernel limit on lines in /proc/PID/{uid,gid}_map since Linux 4.15. */
#define MAX_MAP_LINES 340

static bool have_helpers(void)
{
  cleanup_free char *u = rrt_userns_find_helper("newuidmap");
  cleanup_free char *g = rrt_userns_find_helper("newgidmap");
  return u && g;
}

static void maps_add(struct rrt_id_mappings *m, uint32_t container_id, uint32_t host_id,
                     uint32_t size)
{
  m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
  m->v[m->n++] = (struct rrt_id_mapping){container_id, host_id, size};
}

static void maps_copy(struct rrt_id_mappings *dst, const struct rrt_id_mappings *src)
{
  for (size_t i = 0; i < src->n; i++)
    maps_add(dst, src->v[i].container_id, src->v[i].host_id, src->v[i].size);
}

/* Exactly one id, the caller's own: the only map an unprivileged process may
 * write itself (user_namespaces(7), "Defining user and group ID mappings"). */
static bool maps_is_self(const struct rrt_id_mappings *m, uint32_t id)
{
  return m->n == 1 && m->v[0].host_id == id && m->v[0].size == 1;
}

/* The checks the kernel would make, done early so the error names the config
 * entry instead of a bare EINVAL from a write to /proc. */
static int check_maps(const struct rrt_id_mappings *m, const char *name, struct rrt_error *err)
{
  if (m->n == 0)
    return rrt_error_set(err, 0, "%s: required with a new user namespace", name);
  if (m->n > MAX_MAP_LINES)
    return rrt_error_set(err, 0, "%s: %zu entries, the kernel accepts at most %d", name, m->n,
                         MAX_MAP_LINES);
  for (size_t i = 0; i < m->n; i++) {
    const struct rrt_id_mapping *e = &m->v[i];
    if (e->size == 0)
      return rrt_error_set(err, 0, "%s[%zu].size: must be > 0", name, i);
    if ((uint64_t)e->container_id + e->size > UINT32_MAX)
      return rrt_error_set(err, 0, "%s[%zu]: containerID + size overflows the 32-bit id space",
                           name, i);
    if ((uint64_t)e->host_id + e->size > UINT32_MAX)
      return rrt_error_set(err, 0, "%s[%zu]: hostID + size overflows the 32-bit id space", name, i);
  }
  return 0;
}

static const struct rrt_namespace *find_userns(const struct rrt_spec *spec)
{
  for (size_t i = 0; i < spec->lnx.n_namespaces; i++)
    if (spec->lnx.namespaces[i].type == CLONE_NEWUSER)
      return &spec->lnx.namespaces[i];
  return NULL;
}

static void set_self_maps(struct rrt_userns_plan *plan, uid_t uid, gid_t gid)
{
  maps_add(&plan->uid_map, 0, (uint32_t)uid, 1);
  maps_add(&plan->gid_map, 0, (uint32_t)gid, 1);
  plan->method = RRT_MAP_SELF;
  /* The kernel lets an unprivileged process write its gid_map only after
   * setgroups is denied, or it could drop supplementary groups used as
   * negative permissions. */
  plan->deny_setgroups = true;
}

/* Container ids 1..size must stay below (uid_t)-1. */
static uint32_t capped_size(unsigned long count)
{
  return count > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)count;
}

static int plan_default(struct rrt_userns_plan *plan, uid_t uid, gid_t gid, const char *username,
                        const char *subuid_file, const char *subgid_file, struct rrt_error *err)
{
  cleanup_free struct rrt_subid_range *ur = NULL;
  cleanup_free struct rrt_subid_range *gr = NULL;
  size_t nu = 0, ng = 0;
  if (rrt_subid_lookup(subuid_file, username, uid, &ur, &nu, err) < 0)
    return -1;
  /* /etc/subgid is keyed by the user too (name or uid), not by a group. */
  if (rrt_subid_lookup(subgid_file, username, uid, &gr, &ng, err) < 0)
    return -1;

  if (nu == 0 || ng == 0 || !have_helpers()) {
    rrt_debug("user namespace: mapping only uid %u and gid %u (%s)", (unsigned)uid, (unsigned)gid,
              nu == 0   ? "no subordinate uids"
              : ng == 0 ? "no subordinate gids"
                        : "newuidmap/newgidmap not found");
    set_self_maps(plan, uid, gid);
    return 0;
  }
  maps_add(&plan->uid_map, 0, (uint32_t)uid, 1);
  maps_add(&plan->uid_map, 1, (uint32_t)ur[0].start, capped_size(ur[0].count));
  maps_add(&plan->gid_map, 0, (uint32_t)gid, 1);
  maps_add(&plan->gid_map, 1, (uint32_t)gr[0].start, capped_size(gr[0].count));
  plan->method = RRT_MAP_HELPERS;
  return 0;
}

/* The maps of a user namespace the config names without any, or that the runtime adds. */
static int plan_defaults(struct rrt_userns_plan *plan, const struct rrt_userns_caller *c,
                         struct rrt_error *err)
{
  if (c->nested) {
    rrt_userns_plan_nested(plan, c);
    return 0;
  }
  return plan_default(plan, c->uid, c->gid, c->username, c->subuid_file, c->subgid_file, err);
}

static int plan_config(struct rrt_userns_plan *plan, const struct rrt_linux *l, uid_t uid,
                       gid_t gid, bool privileged, struct rrt_error *err)
{
  if (check_maps(&l->uid_mappings, "linux.uidMappings", err) < 0 ||
      check_maps(&l->gid_mappings, "linux.gidMappings", err) < 0)
    return -1;
  maps_copy(&plan->uid_map, &l->uid_mappings);
  maps_copy(&plan->gid_map, &l->gid_mappings);
  /* Root of the host, or root of the user namespace we run in (rootless
   * podman), holds CAP_SETUID/CAP_SETGID over the parent namespace and may
   * write any map whose ids exist there. */
  if (privileged) {
    plan->method = RRT_MAP_DIRECT;
    return 0;
  }
  if (maps_is_self(&l->uid_mappings, (uint32_t)uid) &&
      maps_is_self(&l->gid_mappings, (uint32_t)gid)) {
    plan->method = RRT_MAP_SELF;
    plan->deny_setgroups = true;
    return 0;
  }
  const char *names[] = {"newuidmap", "newgidmap"};
  for (size_t i = 0; i < 2; i++) {
    cleanup_free char *p = rrt_userns_find_helper(names[i]);
    if (!p)
      return rrt_error_set(err, 0,
                           "%s: mapping more than uid %u and gid %u needs %s, not found in PATH, "
                           "/usr/bin, /usr/sbin or /bin (install shadow's uidmap package)",
                           i == 0 ? "linux.uidMappings" : "linux.gidMappings", (unsigned)uid,
                           (unsigned)gid, names[i]);
  }
  plan->method = RRT_MAP_HELPERS;
  return 0;
}

static int plan_build(const struct rrt_spec *spec, const struct rrt_userns_caller *c,
                      struct rrt_userns_plan *plan, struct rrt_error *err)
{
  uid_t uid = c->uid;
  gid_t gid = c->gid;
  bool privileged = c->privileged;
  const struct rrt_linux *l = &spec->lnx;
  const struct rrt_namespace *ns = find_userns(spec);
  bool has_maps = l->uid_mappings.n > 0 || l->gid_mappings.n > 0;
  const char *maps_name = l->uid_mappings.n > 0 ? "linux.uidMappings" : "linux.gidMappings";

  if (ns && ns->path) {
    /* The namespace exists and its creator wrote its maps; ours would be
     * rejected anyway (a map can be written once). */
    plan->join = ns->path;
    return 0;
  }
  if (!ns) {
    if (has_maps)
      return rrt_error_set(err, 0, "%s: set, but linux.namespaces lists no user namespace",
                           maps_name);
    if (privileged)
      return 0;
    /* Without a user namespace an unprivileged user could create none of the
     * other namespaces nor mount anything: add one. */
    plan->create = true;
    return plan_defaults(plan, c, err);
  }
  plan->create = true;
  if (has_maps)
    /* Nested with CAP_SETUID and CAP_SETGID (a job container's root): written directly too. */
    return plan_config(plan, l, uid, gid, privileged || (c->nested && c->setid), err);
  if (c->host_privileged)
    /* Defaulting to 0..65535 -> host 0.. would hand the container the real
     * root and system accounts: make the caller say what it wants. */
    return rrt_error_set(err, 0,
                         "linux.uidMappings: required when running as root with a "
                         "new user namespace");
  return plan_defaults(plan, c, err);
}

int rrt_userns_plan_caller(const struct rrt_spec *spec, const struct rrt_userns_caller *c,
                           struct rrt_userns_plan *plan, struct rrt_error *err)
{
  memset(plan, 0, sizeof(*plan));
  plan->method = RRT_MAP_NONE;
  bool from_config = spec->lnx.uid_mappings.n > 0;
  if (plan_build(spec, c, plan, err) < 0 ||
      rrt_userns_plan_check_nested(plan, c, from_config, err) < 0) {
    rrt_userns_plan_free(plan);
    return -1;
  }
  return 0;
}

int rrt_userns_plan(const struct rrt_spec *spec, uid_t uid, gid_t gid, const char *username,
                    bool privileged, const char *subuid_file, const char *subgid_file,
                    struct rrt_userns_plan *plan, struct rrt_error *err)
{
  /* The caller as these arguments describe it, on a host: privileged is root's answer. */
  const struct rrt_userns_caller c = {.uid = uid,
                                      .euid = uid,
                                      .gid = gid,
                                      .username = username,
                                      .initial = true,
                                      .host_privileged = privileged,
                                      .privileged = privileged,
                                      .subuid_file = subuid_file,
                                      .subgid_file = subgid_file};
  return rrt_userns_plan_caller(spec, &c, plan, err);
}

void rrt_userns_plan_free(struct rrt_userns_plan *plan)
{
  if (!plan)
    return;
  free(plan->uid_map.v);
  free(plan->gid_map.v);
  memset(plan, 0, sizeof(*plan));
}

char *rrt_idmap_format(const struct rrt_id_mappings *maps)
{
  /* "4294967295 4294967295 4294967295\n" is 33 bytes. */
  size_t cap = maps->n * 34 + 1, used = 0;
  char *s = xmalloc(cap);
  s[0] = '\0';
  for (size_t i = 0; i < maps->n; i++)
    used += (size_t)snprintf(s + used, cap - used, "%u %u %u\n", maps->v[i].container_id,
                             maps->v[i].host_id, maps->v[i].size);
  return s;
}

/* "0 1000 1, 1 100000 65536": a map on one line for error messages. */
static char *idmap_oneline(const struct rrt_id_mappings *maps)
{
  char *s = rrt_idmap_format(maps);
  size_t len = strlen(s);
  if (len > 0 && s[len - 1] == '\n')
    s[--len] = '\0';
  char *out = xmalloc(len * 2 + 1), *o = out;
  for (const char *p = s; *p; p++) {
    if (*p == '\n') {
      *o++ = ',';
      *o++ = ' ';
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  free(s);
  return out;
}

/* `shown` is the data as the error message should quote it. */
static int write_proc_file(pid_t pid, const char *file, const char *data, const char *shown,
                           bool optional, struct rrt_error *err)
{
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    /* Kernels before 3.19 have no setgroups file and no restriction. */
    if (optional && errno == ENOENT)
      return 0;
    return rrt_error_errno(err, "open %s", path);
  }
  /* The kernel takes a map in one write() and refuses any later one, so a
   * partial write cannot be completed: retry only EINTR. */
  size_t len = strlen(data);
  ssize_t w;
  do
    w = write(fd, data, len);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return rrt_error_errno(err, "write \"%s\" to %s", shown, path);
  if ((size_t)w != len)
    return rrt_error_set(err, EIO, "write \"%s\" to %s: short write", shown, path);
  return 0;
}

static int write_one_map(pid_t pid, const char *file, const struct rrt_id_mappings *maps,
                         struct rrt_error *err)
{
  cleanup_free char *data = rrt_idmap_format(maps);
  cleanup_free char *line = idmap_oneline(maps);
  return write_proc_file(pid, file, data, line, false, err);
}

static int write_map_files(pid_t pid, const struct rrt_userns_plan *plan, struct rrt_error *err)
{
  /* SELF always denies: the kernel refuses an unprivileged gid_map otherwise. */
  if (plan->deny_setgroups || plan->method == RRT_MAP_SELF)
    if (write_proc_file(pid, "setgroups", "deny", "deny", true, err) < 0)
      return -1;
  if (write_one_map(pid, "gid_map", &plan->gid_map, err) < 0)
    return -1;
  return write_one_map(pid, "uid_map", &plan->uid_map, err);
}

static char **helper_argv(const char *name, pid_t pid, const struct rrt_id_mappings *m)
{
  char **argv = xcalloc(m->n * 3 + 3, sizeof(char *));
  size_t i = 0;
  argv[i++] = xstrdup(name);
  argv[i++] = xasprintf("%d", (int)pid);
  for (size_t j = 0; j < m->n; j++) {
    argv[i++] = xasprintf("%u", m->v[j].container_id);
    argv[i++] = xasprintf("%u", m->v[j].host_id);
    argv[i++] = xasprintf("%u", m->v[j].size);
  }
  return argv;
}

static char *strv_join(char **v)
{
  size_t len = 1;
  for (size_t i = 0; v[i]; i++)
    len += strlen(v[i]) + 1;
  char *s = xmalloc(len), *o = s;
  for (size_t i = 0; v[i]; i++)
    o += sprintf(o, "%s%s", i ? " " : "", v[i]);
  *o = '\0';
  return s;
}

/* Runs in the forked child: only async-signal-safe calls until execve. On
 * failure the errno goes to report_fd, which execve closes on success. */
__attribute__((noreturn)) static void exec_helper(const char *path, char **argv, int out_fd,
                                                  int report_fd, const cpu_set_t *cpus)
{
  if (cpus)
    (void)sched_setaffinity(0, sizeof(*cpus), cpus); /* a hint: see helper_cpus */
  /* Move both pipes above stdio first so the dup2 calls below cannot clobber
   * them when the runtime was started with closed stdio. */
  int out = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
  int report = fcntl(report_fd, F_DUPFD_CLOEXEC, 3);
  if (out < 0 || report < 0)
    goto fail;
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, STDIN_FILENO) < 0)
    goto fail;
  if (dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
    goto fail;
  /* A blocked signal mask survives execve; the helper should see a clean one. */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  execve(path, argv, environ);
fail:;
  int e = errno;
  if (report >= 0)
    (void)!write(report, &e, sizeof(e));
  _exit(127);
}

static char *describe_status(int status)
{
  if (WIFEXITED(status))
    return xasprintf("exited with status %d", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char *name = rrt_signal_name(WTERMSIG(status));
    return xasprintf("killed by signal %d%s%s", WTERMSIG(status), name ? " SIG" : "",
                     name ? name : "");
  }
  return xasprintf("ended with wait status %d", status);
}

/* A helper started but not yet waited for: newgidmap and newuidmap run at
 * the same time (each is a setuid exec costing milliseconds). */
struct helper_run {
  const char *name;
  char *path;
  char *cmd;
  pid_t child;
  int out_r;
  int report_r;
};

static void helper_run_free(struct helper_run *h)
{
  if (h->child > 0)
    rrt_cleanup_pidp(&h->child);
  if (h->out_r >= 0)
    close(h->out_r);
  if (h->report_r >= 0)
    close(h->report_r);
  free(h->path);
  free(h->cmd);
}

/*
 * Where the two helpers run: the first on this CPU, which the runtime leaves for a wait right
 * after, the second on any other. Each is a millisecond of CPU-bound setuid exec, and left alone
 * the scheduler here often queues the second behind the first on one CPU while another idles
 * (fork placement goes by load averages, and an idle CPU does not pull work it expects to be
 * idle only briefly). false: a single CPU, no hint.
 */
static bool helper_cpus(cpu_set_t *first, cpu_set_t *second)
{
  cpu_set_t all;
  int cpu = sched_getcpu();
  if (cpu < 0 || sched_getaffinity(0, sizeof(all), &all) < 0 || CPU_COUNT(&all) < 2 ||
      !CPU_ISSET(cpu, &all))
    return false;
  CPU_ZERO(first);
  CPU_SET(cpu, first);
  *second = all;
  CPU_CLR(cpu, second);
  return true;
}

static int start_helper(const char *name, pid_t pid, const struct rrt_id_mappings *m,
                        const cpu_set_t *cpus, struct helper_run *h, struct rrt_error *err)
{
  *h = (struct helper_run){.name = name, .child = -1, .out_r = -1, .report_r = -1};
  h->path = rrt_userns_find_helper(name);
  if (!h->path)
    return rrt_error_set(err, 0,
                         "%s: not found (looked in PATH, /usr/bin, /usr/sbin, /bin; install "
                         "shadow's uidmap package)",
                         name);
  cleanup_strv char **argv = helper_argv(name, pid, m);
  h->cmd = strv_join(argv);

  int out[2], report[2];
  if (pipe2(out, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "%s: pipe", h->cmd);
  h->out_r = out[0];
  cleanup_close int out_w = out[1];
  if (pipe2(report, O_CLOEXEC) < 0)
    return rrt_error_errno(err, "%s: pipe", h->cmd);
  h->report_r = report[0];
  cleanup_close int report_w = report[1];

  h->child = fork();
  if (h->child < 0)
    return rrt_error_errno(err, "%s: fork", h->cmd);
  if (h->child == 0)
    exec_helper(h->path, argv, out_w, report_w, cpus);
  /* Our write ends close here, so the reads in finish_helper see EOF when
   * the helper exits. */
  return 0;
}

static int finish_helper(struct helper_run *h, struct rrt_error *err)
{
  const char *cmd = h->cmd;
  cleanup_free char *output = NULL;
  if (rrt_read_fd(h->out_r, &output, NULL, err) < 0)
    return rrt_error_wrap(err, "%s: read its output", cmd);
  int exec_errno = 0;
  ssize_t got = rrt_read_all(h->report_r, &exec_errno, sizeof(exec_errno));

  int status;
  while (waitpid(h->child, &status, 0) < 0)
    if (errno != EINTR)
      return rrt_error_errno(err, "%s: waitpid", cmd);
  h->child = -1;

  if (got == (ssize_t)sizeof(exec_errno))
    return rrt_error_set(err, exec_errno, "%s: exec %s", h->name, h->path);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return 0;
  /* Keep the helper's own words: they say which subuid check failed. */
  size_t len = strlen(output);
  while (len > 0 && (output[len - 1] == '\n' || output[len - 1] == ' '))
    output[--len] = '\0';
  cleanup_free char *how = describe_status(status);
  return rrt_error_set(err, 0, "%s: %s%s%.1024s", cmd, how, len ? ": " : "", output);
}

/* Both helpers at once: each is a setuid exec costing about a millisecond. */
struct rrt_maps_job {
  struct helper_run gid, uid;
};

void rrt_userns_maps_abort(struct rrt_maps_job *job)
{
  if (!job)
    return;
  helper_run_free(&job->gid);
  helper_run_free(&job->uid);
  free(job);
}

int rrt_userns_maps_begin(pid_t pid, const struct rrt_userns_plan *plan, struct rrt_maps_job **job,
                          struct rrt_error *err)
{
  *job = NULL;
  switch (plan->method) {
  case RRT_MAP_NONE:
    return 0;
  case RRT_MAP_DIRECT:
  case RRT_MAP_SELF:
    return write_map_files(pid, plan, err);
  case RRT_MAP_HELPERS:
    break;
  default:
    return rrt_error_set(err, EINVAL, "unknown id-map method %d", (int)plan->method);
  }
  struct rrt_maps_job *j = xzalloc(sizeof(*j));
  j->gid = j->uid = (struct helper_run){.child = -1, .out_r = -1, .report_r = -1};
  cpu_set_t first, second;
  bool spread = helper_cpus(&first, &second);
  if (start_helper("newgidmap", pid, &plan->gid_map, spread ? &first : NULL, &j->gid, err) < 0 ||
      start_helper("newuidmap", pid, &plan->uid_map, spread ? &second : NULL, &j->uid, err) < 0) {
    rrt_userns_maps_abort(j);
    return -1;
  }
  *job = j;
  return 0;
}

size_t rrt_userns_maps_pids(const struct rrt_maps_job *job, pid_t pids[2])
{
  size_t n = 0;
  if (job && job->gid.child > 0)
    pids[n++] = job->gid.child;
  if (job && job->uid.child > 0)
    pids[n++] = job->uid.child;
  return n;
}

int rrt_userns_maps_end(struct rrt_maps_job *job, struct rrt_error *err)
{
  if (!job)
    return 0;
  /* Both are waited for even when the first failed: no zombie, and the
   * first failure is the one reported. */
  int ret = finish_helper(&job->gid, err);
  struct rrt_error uerr = RRT_ERROR_INIT;
  if (finish_helper(&job->uid, &uerr) < 0 && ret == 0) {
    rrt_error_move(err, &uerr);
    ret = -1;
  }
  rrt_error_clear(&uerr);
  rrt_userns_maps_abort(job);
  return ret;
}

int rrt_userns_write_maps(pid_t pid, const struct rrt_userns_plan *plan, struct rrt_error *err)
{
  struct rrt_maps_job *job = NULL;
  if (rrt_userns_maps_begin(pid, plan, &job, err) < 0)
    return -1;
  return rrt_userns_maps_end(job, err);
}

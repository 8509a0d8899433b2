/* cgroup_systemd.c: the systemd cgroup driver (--systemd-cgroup): cgroupsPath slice:prefix:name
 * as a transient scope with Delegate=yes, made by the caller's systemd over D-Bus through the
 * rootlessrt-systemd helper (systemd/helper_main.c, linked with libsystemd); limits systemd has
 * properties for become unit properties, the rest cgroupfs writes (cgroup_res.c). */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "rootlessrt/log.h"
#include "rootlessrt/reexec.h"
#include "rootlessrt/util.h"

#define HELPER_NO_BUS 3

/* ---------------------------------------------------------------- the helper */

static void read_all(int fd, char **out)
{
  size_t len = 0, cap = 256;
  char *buf = xmalloc(cap);
  ssize_t n;
  for (;;) {
    if (len + 1 == cap)
      buf = xrealloc(buf, cap *= 2);
    n = read(fd, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  while (len > 0 && buf[len - 1] == '\n')
    len--;
  buf[len] = '\0';
  *out = buf;
}

/* Runs rootlessrt-systemd [--system] ARGS...; its exit status (-1: not started), stdout in *out
 * and stderr in *msg. */
static int run_helper(bool system, const char *const *args, char **out, char **msg)
{
  cleanup_free char *path = rrt_helper_path("rootlessrt-systemd", "ROOTLESSRT_SYSTEMD_HELPER");
  *out = *msg = NULL;
  int o[2], e[2];
  if (pipe2(o, O_CLOEXEC) < 0)
    return -1;
  if (pipe2(e, O_CLOEXEC) < 0) {
    close(o[0]);
    close(o[1]);
    return -1;
  }
  const char *argv[32];
  size_t n = 0;
  argv[n++] = path;
  if (system)
    argv[n++] = "--system";
  for (size_t i = 0; args[i] && n < 31; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    if (dup2(o[1], STDOUT_FILENO) < 0 || dup2(e[1], STDERR_FILENO) < 0)
      _exit(127);
    execv(path, (char *const *)argv);
    dprintf(STDERR_FILENO, "%s: %s", path, strerror(errno));
    _exit(127);
  }
  close(o[1]);
  close(e[1]);
  if (pid > 0) {
    read_all(o[0], out); /* small: the pipe never fills while stderr waits */
    read_all(e[0], msg);
  }
  close(o[0]);
  close(e[0]);
  int st = -1; /* not "exited 0" when waitpid fails */
  if (pid < 0)
    return -1;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---------------------------------------------------------------- names */

static bool unit_chars(const char *s)
{
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          strchr(":_.-@\\", *s)))
      return false;
  return true;
}

/* slice:prefix:name -> the slice and "prefix-name.scope"; no path: the default slice and
 * rootlessrt-<id>.scope. */
static int parse_path(const struct rrt_cgroup_opts *o, char **slice, char **unit,
                      struct rrt_error *err)
{
  const char *dflt = o->privileged ? "system.slice" : "user.slice";
  if (!o->path) {
    *slice = xstrdup(dflt);
    *unit = xasprintf("rootlessrt-%s.scope", o->id);
    return 0;
  }
  const char *c1 = strchr(o->path, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c2 || strchr(c2 + 1, ':'))
    return rrt_error_msgf(err, EINVAL,
                          "linux.cgroupsPath \"%s\": the systemd cgroup driver takes "
                          "slice:prefix:name",
                          o->path);
  cleanup_free char *s = xstrndup(o->path, (size_t)(c1 - o->path));
  cleanup_free char *prefix = xstrndup(c1 + 1, (size_t)(c2 - c1 - 1));
  const char *name = c2 + 1;
  if (*s && (strlen(s) < 7 || strcmp(s + strlen(s) - 6, ".slice") != 0 || !unit_chars(s)))
    return rrt_error_msgf(err, EINVAL, "linux.cgroupsPath \"%s\": \"%s\" is not a slice name",
                          o->path, s);
  if (!*name || !unit_chars(name) || !unit_chars(prefix) || strlen(o->path) > 200)
    return rrt_error_msgf(err, EINVAL,
                          "linux.cgroupsPath \"%s\": the name must be non-empty, of letters, "
                          "digits and :_.-@",
                          o->path);
  if (strlen(name) > 6 && strcmp(name + strlen(name) - 6, ".slice") == 0)
    return rrt_error_msgf(err, ENOTSUP,
                          "linux.cgroupsPath \"%s\": a container in a slice of its own is not "
                          "supported; name a scope",
                          o->path);
  *slice = xstrdup(*s ? s : dflt);
  *unit = *prefix ? xasprintf("%s-%s.scope", prefix, name) : xasprintf("%s.scope", name);
  return 0;
}

/* ---------------------------------------------------------------- properties */

static json_object *member(json_object *o, const char *k)
{
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) && !json_object_is_type(v, json_type_null) ? v
                                                                                             : NULL;
}

struct props {
  char **v;
  size_t n;
};

static void prop(struct props *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void prop(struct props *p, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *s = xvasprintf(fmt, ap);
  va_end(ap);
  p->v = xrealloc(p->v, (p->n + 2) * sizeof(*p->v));
  p->v[p->n++] = s;
  p->v[p->n] = NULL;
}

static void props_free(struct props *p)
{
  for (size_t i = 0; i < p->n; i++)
    free(p->v[i]);
  free(p->v);
}

static char *amount(long long v)
{
  return v < 0 ? xstrdup("max") : xasprintf("%lld", v);
}

/* An integer member, taken out of its object (it becomes a unit property). */
static bool take_int(json_object *o, const char *k, long long *v)
{
  json_object *x = member(o, k);
  if (!x || !json_object_is_type(x, json_type_int))
    return false;
  *v = json_object_get_int64(x);
  json_object_object_del(o, k);
  return true;
}

/* Whether an integer member asks for anything (rrt_cgroup_asks): a "not set" 0 becomes no
 * property, so that Docker's zeros and the shim's unchanged period and quota change nothing. */
static bool asks(const char *field, long long v)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%lld", v);
  return rrt_cgroup_asks(field, buf) != RRT_CG_UNSET;
}

static void memory_props(struct props *p, json_object *mem)
{
  long long limit = 0, v = 0;
  bool has_limit = take_int(mem, "limit", &limit) && asks("memory.limit", limit);
  if (has_limit) {
    cleanup_free char *a = amount(limit);
    prop(p, "MemoryMax=%s", a);
  }
  if (take_int(mem, "reservation", &v) && asks("memory.reservation", v)) {
    cleanup_free char *a = amount(v);
    prop(p, "MemoryLow=%s", a);
  }
  /* OCI's swap is memory+swap; MemorySwapMax is the swap alone. */
  if (has_limit && limit > 0 && member(mem, "swap") && take_int(mem, "swap", &v) &&
      asks("memory.swap", v)) {
    cleanup_free char *a = amount(v < 0 ? -1 : v - limit < 0 ? 0 : v - limit);
    prop(p, "MemorySwapMax=%s", a);
  }
}

static void cpu_props(struct props *p, json_object *cpu)
{
  long long v = 0, quota = 0, period = 100000;
  if (take_int(cpu, "shares", &v) && asks("cpu.shares", v)) {
    long long w = v <= 0 ? 100 : 1 + ((v - 2) * 9999) / 262142;
    prop(p, "CPUWeight=%lld", w < 1 ? 1 : w > 10000 ? 10000 : w);
  }
  bool hp = take_int(cpu, "period", &period) && asks("cpu.period", period);
  bool hq = take_int(cpu, "quota", &quota) && asks("cpu.quota", quota);
  if (!hp)
    period = 100000;
  if (hq && quota > 0)
    prop(p, "CPUQuotaPerSecUSec=%lld", quota * 1000000 / period);
  else if (hq)
    prop(p, "CPUQuotaPerSecUSec=max");
  if (hp)
    prop(p, "CPUQuotaPeriodUSec=%lld", period);
  static const struct {
    const char *key, *name;
  } lists[] = {{"cpus", "AllowedCPUs"}, {"mems", "AllowedMemoryNodes"}};
  for (size_t i = 0; i < 2; i++) {
    json_object *x = member(cpu, lists[i].key);
    if (x && json_object_is_type(x, json_type_string) && *json_object_get_string(x)) {
      prop(p, "%s=%s", lists[i].name, json_object_get_string(x));
      json_object_object_del(cpu, lists[i].key);
    }
  }
}

/* unified keys with a unit property of their own. */
static void unified_props(struct props *p, json_object *u)
{
  static const struct {
    const char *key, *name;
  } map[] = {{"memory.max", "MemoryMax"},          {"memory.high", "MemoryHigh"},
             {"memory.low", "MemoryLow"},          {"memory.min", "MemoryMin"},
             {"memory.swap.max", "MemorySwapMax"}, {"pids.max", "TasksMax"},
             {"cpu.weight", "CPUWeight"}};
  for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
    json_object *x = member(u, map[i].key);
    const char *s = x ? json_object_get_string(x) : NULL;
    unsigned long long n;
    if (s && (strcmp(s, "max") == 0 || rrt_parse_u64(s, &n) == 0)) {
      prop(p, "%s=%s", map[i].name, s);
      json_object_object_del(u, map[i].key);
    }
  }
}

/* linux.resources -> unit properties, and what is left for cgroupfs writes. */
static int split(const char *json, struct props *p, char **rest, struct rrt_error *err)
{
  json_object *res = json_tokener_parse(json ? json : "{}");
  if (!res || !json_object_is_type(res, json_type_object)) {
    json_object_put(res);
    return rrt_error_msgf(err, EINVAL, "the resources are not a JSON object");
  }
  json_object *x;
  long long v;
  if ((x = member(res, "memory")))
    memory_props(p, x);
  if ((x = member(res, "cpu")))
    cpu_props(p, x);
  if ((x = member(res, "pids")) && take_int(x, "limit", &v) && asks("pids.limit", v)) {
    cleanup_free char *a = amount(v); /* -1 none; 0 (none, as engines send it) never gets here */
    prop(p, "TasksMax=%s", a);
  }
  if ((x = member(res, "blockIO")) && take_int(x, "weight", &v) && asks("blockIO.weight", v))
    prop(p, "IOWeight=%lld", 1 + (v - 10) * 9999 / 990);
  if ((x = member(res, "unified")) && json_object_is_type(x, json_type_object))
    unified_props(p, x);
  *rest = xstrdup(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
  json_object_put(res);
  return 0;
}

/* ---------------------------------------------------------------- create, update, stop */

/* systemd's cgroup v2 properties apply on a cgroup v2 host only; elsewhere all is cgroupfs. */
static bool unified_host(void)
{
  struct rrt_cg_mounts m;
  rrt_cg_mounts_read(&m);
  bool v1 = false;
  for (int i = 0; i < RRT_CG_V1_N; i++)
    v1 = v1 || m.v1_mnt[i];
  bool r = m.v2_mnt && !v1;
  rrt_cg_mounts_free(&m);
  return r;
}

int rrt_cg_systemd_update(const struct rrt_cgroup *cg, const char *json, bool apply, char **rest,
                          struct rrt_error *err)
{
  struct props p = {0};
  cleanup_free char *left = NULL;
  if (rest)
    *rest = NULL;
  if (!unified_host())
    return 0;
  int r = split(json, &p, &left, err);
  if (rest)
    *rest = steal_ptr(&left);
  if (r == 0 && apply && p.n > 0) {
    const char *args[32] = {"set", cg->unit};
    for (size_t i = 0; i < p.n && i < 28; i++)
      args[2 + i] = p.v[i];
    cleanup_free char *out = NULL, *msg = NULL;
    int st = run_helper(cg->system_bus, args, &out, &msg);
    if (st != 0)
      r = rrt_error_msgf(err, EIO, "systemd: set the properties of %s: %s", cg->unit,
                         msg && *msg ? msg : "rootlessrt-systemd failed");
  }
  props_free(&p);
  return r;
}

void rrt_cg_systemd_stop(const struct rrt_cgroup *cg)
{
  const char *args[] = {"stop", cg->unit, NULL};
  cleanup_free char *out = NULL, *msg = NULL;
  if (run_helper(cg->system_bus, args, &out, &msg) != 0)
    rrt_warn("systemd: stop %s: %s", cg->unit, msg && *msg ? msg : "rootlessrt-systemd failed");
}

/* The scope's directories. On cgroup v2 init goes into its sub-cgroup "container", so that the
 * scope holds no process and controllers can be enabled below it. */
static int scope_dirs(const char *cgpath, bool privileged, pid_t init, struct rrt_cgroup *cg,
                      struct rrt_error *err)
{
  struct rrt_cg_mounts m;
  rrt_cg_mounts_read(&m);
  int r = 0;
  cleanup_free char *scope = rrt_cg_dir_of(m.v2_mnt, m.v2_root, cgpath);
  struct stat st;
  if (scope && stat(scope, &st) == 0) {
    cg->v2 = xasprintf("%s/container", scope);
    char pid[24];
    snprintf(pid, sizeof(pid), "%d", (int)init);
    if ((mkdir(cg->v2, 0755) < 0 && errno != EEXIST))
      r = rrt_error_errno(err, "systemd: mkdir %s", cg->v2);
    else if (rrt_cg_write(cg->v2, "cgroup.procs", pid, err) < 0)
      r = rrt_error_wrap(err, "systemd: move init below its scope");
    else
      rrt_cg_enable_controllers(scope);
  }
  for (int i = 0; r == 0 && privileged && i < RRT_CG_V1_N; i++) {
    char *d = rrt_cg_dir_of(m.v1_mnt[i], m.v1_root[i], cgpath);
    if (d && stat(d, &st) == 0)
      cg->v1[i] = d;
    else
      free(d);
  }
  if (r == 0 && !cg->v2 && !cg->v1[RRT_CG_PIDS] && !cg->v1[RRT_CG_FREEZER])
    r = rrt_error_msgf(err, ENOENT, "systemd: the scope's cgroup %s is not visible here", cgpath);
  rrt_cg_mounts_free(&m);
  return r;
}

int rrt_cg_systemd_create(const struct rrt_cgroup_opts *o, pid_t init, struct rrt_cgroup *cg,
                          char **rest, bool *fallback, struct rrt_error *err)
{
  cleanup_free char *slice = NULL, *unit = NULL;
  *rest = NULL;
  *fallback = false;
  if (parse_path(o, &slice, &unit, err) < 0)
    return -1;
  struct props p = {0};
  if (unified_host() && split(o->resources_json, &p, rest, err) < 0)
    return -1;
  char pid[24];
  snprintf(pid, sizeof(pid), "%d", (int)init);
  const char *args[40] = {"start", unit, slice, pid};
  for (size_t i = 0; i < p.n && i < 32; i++)
    args[4 + i] = p.v[i];
  cleanup_free char *out = NULL, *msg = NULL;
  int st = run_helper(o->privileged, args, &out, &msg);
  props_free(&p);
  if (st == HELPER_NO_BUS || st == 127 || st < 0) {
    rrt_warn("--systemd-cgroup: %s: the container's cgroup is made in the caller's own cgroup "
             "(cgroupfs) instead",
             msg && *msg ? msg : "rootlessrt-systemd could not run");
    *fallback = true;
    free(*rest); /* cgroupfs gets every limit, none went to systemd */
    *rest = NULL;
    return 0;
  }
  if (st != 0)
    return rrt_error_msgf(err, EIO, "systemd: start %s in %s: %s", unit, slice,
                          msg && *msg ? msg : "rootlessrt-systemd failed");
  cg->unit = steal_ptr(&unit);
  cg->system_bus = o->privileged;
  if (scope_dirs(out, o->privileged, init, cg, err) < 0)
    return -1;
  rrt_debug("cgroup: container %s in the systemd scope %s (%s)", o->id, cg->unit, out);
  return 0;
}

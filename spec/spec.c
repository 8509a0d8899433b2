/* spec.c: config.json -> struct rrt_spec, every field validated once and named by its JSON path. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <json-c/json.h>

#include "rootlessrt/spec.h"
#include "rootlessrt/util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080 /* headers older than Linux 5.6 */
#endif

/* ------------------------------------------------------------------------------------------ */
/* Name tables                                                                                 */

static const char *const hook_names[RRT_HOOK__COUNT] = {
    [RRT_HOOK_PRESTART] = "prestart",
    [RRT_HOOK_CREATE_RUNTIME] = "createRuntime",
    [RRT_HOOK_CREATE_CONTAINER] = "createContainer",
    [RRT_HOOK_START_CONTAINER] = "startContainer",
    [RRT_HOOK_POSTSTART] = "poststart",
    [RRT_HOOK_POSTSTOP] = "poststop",
};

static const struct {
  int type;
  const char *name; /* as in config.json */
  const char *proc; /* as in /proc/PID/ns */
} ns_table[] = {
    {CLONE_NEWPID, "pid", "pid"},          {CLONE_NEWNET, "network", "net"},
    {CLONE_NEWNS, "mount", "mnt"},         {CLONE_NEWIPC, "ipc", "ipc"},
    {CLONE_NEWUTS, "uts", "uts"},          {CLONE_NEWUSER, "user", "user"},
    {CLONE_NEWCGROUP, "cgroup", "cgroup"}, {CLONE_NEWTIME, "time", "time"},
};

#define RL(x)                                                                                      \
  {                                                                                                \
    "RLIMIT_" #x, RLIMIT_##x                                                                       \
  }
static const struct {
  const char *name;
  int resource;
} rlimit_table[] = {
    RL(AS),   RL(CORE),   RL(CPU),   RL(DATA), RL(FSIZE),  RL(LOCKS),  RL(MEMLOCK),    RL(MSGQUEUE),
    RL(NICE), RL(NOFILE), RL(NPROC), RL(RSS),  RL(RTPRIO), RL(RTTIME), RL(SIGPENDING), RL(STACK),
};
#undef RL

static const char *const ioprio_classes[] = {"IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE",
                                             "IOPRIO_CLASS_IDLE", NULL};
static const char *const sched_policies[] = {"SCHED_OTHER",    "SCHED_FIFO", "SCHED_RR",
                                             "SCHED_BATCH",    "SCHED_ISO",  "SCHED_IDLE",
                                             "SCHED_DEADLINE", NULL};
static const char *const sched_flags[] = {"SCHED_FLAG_RESET_ON_FORK",  "SCHED_FLAG_RECLAIM",
                                          "SCHED_FLAG_DL_OVERRUN",     "SCHED_FLAG_KEEP_POLICY",
                                          "SCHED_FLAG_KEEP_PARAMS",    "SCHED_FLAG_UTIL_CLAMP_MIN",
                                          "SCHED_FLAG_UTIL_CLAMP_MAX", NULL};
/* The schema lists only the first four; the r* forms are what runc, crun and podman emit. */
static const char *const propagations[] = {"private",    "shared",      "slave",
                                           "unbindable", "rprivate",    "rshared",
                                           "rslave",     "runbindable", NULL};
static const char *const personality_domains[] = {"LINUX", "LINUX32", NULL};
static const char *const seccomp_actions[] = {"SCMP_ACT_KILL",        "SCMP_ACT_KILL_PROCESS",
                                              "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
                                              "SCMP_ACT_ERRNO",       "SCMP_ACT_TRACE",
                                              "SCMP_ACT_ALLOW",       "SCMP_ACT_LOG",
                                              "SCMP_ACT_NOTIFY",      NULL};
static const char *const seccomp_flags[] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                                            "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                                            "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL};
static const char *const seccomp_ops[] = {"SCMP_CMP_NE",        "SCMP_CMP_LT", "SCMP_CMP_LE",
                                          "SCMP_CMP_EQ",        "SCMP_CMP_GE", "SCMP_CMP_GT",
                                          "SCMP_CMP_MASKED_EQ", NULL};
static const char *const seccomp_archs[] = {
    "SCMP_ARCH_X86",         "SCMP_ARCH_X86_64",      "SCMP_ARCH_X32",     "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64",     "SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_M68K",    "SCMP_ARCH_MIPS",
    "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",   "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64",
    "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",         "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",
    "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",       "SCMP_ARCH_SH",      "SCMP_ARCH_SHEB",
    "SCMP_ARCH_PARISC",      "SCMP_ARCH_PARISC64",    "SCMP_ARCH_RISCV64", NULL};
static const char *const time_clocks[] = {"monotonic", "boottime", NULL};

const char *rrt_hook_kind_name(enum rrt_hook_kind kind)
{
  if ((int)kind < 0 || kind >= RRT_HOOK__COUNT)
    return NULL;
  return hook_names[kind];
}

int rrt_namespace_type_from_name(const char *name)
{
  for (size_t i = 0; name && i < sizeof ns_table / sizeof ns_table[0]; i++)
    if (strcmp(ns_table[i].name, name) == 0)
      return ns_table[i].type;
  return 0;
}

const char *rrt_namespace_type_name(int type)
{
  for (size_t i = 0; i < sizeof ns_table / sizeof ns_table[0]; i++)
    if (ns_table[i].type == type)
      return ns_table[i].name;
  return NULL;
}

const char *rrt_namespace_proc_name(int type)
{
  for (size_t i = 0; i < sizeof ns_table / sizeof ns_table[0]; i++)
    if (ns_table[i].type == type)
      return ns_table[i].proc;
  return NULL;
}

static bool in_list(const char *s, const char *const *list)
{
  for (; *list; list++)
    if (strcmp(*list, s) == 0)
      return true;
  return false;
}

/* ------------------------------------------------------------------------------------------ */
/* Typed access with the JSON path in every message                                           */

enum { F_REQ = 1, F_ABS = 2, F_NONEMPTY = 4 };

static char *key_path(const char *parent, const char *key)
{
  return parent[0] ? xasprintf("%s.%s", parent, key) : xstrdup(key);
}

static char *idx_path(const char *parent, size_t i)
{
  return xasprintf("%s[%zu]", parent, i);
}

/* A JSON null reads as "not set", the way the Go runtimes (and the tools that write
 * config.json with them) treat it. */
static json_object *member(json_object *obj, const char *key)
{
  json_object *v = NULL;
  if (!json_object_object_get_ex(obj, key, &v))
    return NULL;
  return v;
}

static int expect(json_object *v, json_type type, const char *path, const char *what,
                  struct rrt_error *err)
{
  if (json_object_is_type(v, type))
    return 0;
  return rrt_error_set(err, 0, "%s: expected %s", path, what);
}

static int want_str(json_object *v, const char *path, unsigned flags, char **out,
                    struct rrt_error *err)
{
  if (expect(v, json_type_string, path, "string", err) < 0)
    return -1;
  const char *s = json_object_get_string(v);
  /* "\u0000" would silently cut a path short where C reads it. */
  if ((size_t)json_object_get_string_len(v) != strlen(s))
    return rrt_error_set(err, 0, "%s: must not contain a NUL character", path);
  if ((flags & F_NONEMPTY) && s[0] == '\0')
    return rrt_error_set(err, 0, "%s: must not be empty", path);
  if ((flags & F_ABS) && s[0] != '/')
    return rrt_error_set(err, 0, "%s: must be absolute", path);
  free(*out);
  *out = xstrdup(s);
  return 0;
}

/* How a message shows an integer: json-c saturates one past 64 bits (99999999999999999999999
 * reads as 18446744073709551615), which must not be shown as if it had been written. */
static const char *shown_int(json_object *v)
{
  if (json_object_get_uint64(v) == UINT64_MAX || json_object_get_int64(v) == INT64_MIN)
    return "a number outside the 64-bit range";
  return json_object_to_json_string(v);
}

static int want_uint(json_object *v, const char *path, uint64_t max, uint64_t *out,
                     struct rrt_error *err)
{
  if (expect(v, json_type_int, path, "integer", err) < 0)
    return -1;
  /* json-c keeps values above INT64_MAX as uint64; get_int64 clamps those to INT64_MAX. */
  if (json_object_get_int64(v) < 0 || json_object_get_uint64(v) > max)
    return rrt_error_set(err, 0, "%s: expected integer in 0..%" PRIu64 ", got %s", path, max,
                         shown_int(v));
  *out = json_object_get_uint64(v);
  return 0;
}

static int want_int(json_object *v, const char *path, int64_t min, int64_t max, int64_t *out,
                    struct rrt_error *err)
{
  if (expect(v, json_type_int, path, "integer", err) < 0)
    return -1;
  int64_t i = json_object_get_int64(v);
  bool huge = i == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX;
  if (huge || i < min || i > max)
    return rrt_error_set(err, 0, "%s: expected integer in %" PRId64 "..%" PRId64 ", got %s", path,
                         min, max, shown_int(v));
  *out = i;
  return 0;
}

static int want_strv(json_object *v, const char *path, unsigned flags, struct rrt_strv *out,
                     struct rrt_error *err)
{
  if (!json_object_is_type(v, json_type_array))
    return rrt_error_set(err, 0, "%s: expected array of strings", path);
  size_t n = json_object_array_length(v);
  for (size_t i = 0; i < n; i++)
    if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
      return rrt_error_set(err, 0, "%s: expected array of strings", path);
  if ((flags & F_NONEMPTY) && n == 0)
    return rrt_error_set(err, 0, "%s: must not be empty", path);
  rrt_strv_free(out->v);
  out->v = xcalloc(n + 1, sizeof(char *));
  out->n = n;
  for (size_t i = 0; i < n; i++) {
    cleanup_free char *ip = idx_path(path, i);
    if (want_str(json_object_array_get_idx(v, i), ip, flags & F_ABS, &out->v[i], err) < 0)
      return -1;
  }
  return 0;
}

/* Looks key up; 1 with *v and *path set when present, 0 when absent and optional. */
static int field(json_object *obj, const char *parent, const char *key, unsigned flags,
                 json_object **v, char **path, struct rrt_error *err)
{
  *v = member(obj, key);
  *path = key_path(parent, key);
  if (*v)
    return 1;
  if (flags & F_REQ)
    return rrt_error_set(err, 0, "%s: required", *path);
  return 0;
}

static int get_str(json_object *obj, const char *parent, const char *key, unsigned flags,
                   char **out, struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = field(obj, parent, key, flags, &v, &p, err);
  return r <= 0 ? r : want_str(v, p, flags, out, err);
}

static int get_strv(json_object *obj, const char *parent, const char *key, unsigned flags,
                    struct rrt_strv *out, struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = field(obj, parent, key, flags, &v, &p, err);
  return r <= 0 ? r : want_strv(v, p, flags, out, err);
}

static int get_bool(json_object *obj, const char *parent, const char *key, bool *out,
                    struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  if (field(obj, parent, key, 0, &v, &p, err) == 0)
    return 0;
  if (expect(v, json_type_boolean, p, "boolean", err) < 0)
    return -1;
  *out = json_object_get_boolean(v);
  return 0;
}

static int get_uint(json_object *obj, const char *parent, const char *key, unsigned flags,
                    uint64_t max, bool *has, uint64_t *out, struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = field(obj, parent, key, flags, &v, &p, err);
  if (r <= 0)
    return r;
  if (want_uint(v, p, max, out, err) < 0)
    return -1;
  if (has)
    *has = true;
  return 0;
}

static int get_u32(json_object *obj, const char *parent, const char *key, unsigned flags, bool *has,
                   uint32_t *out, struct rrt_error *err)
{
  uint64_t u = 0;
  bool present = false;
  if (get_uint(obj, parent, key, flags, UINT32_MAX, &present, &u, err) < 0)
    return -1;
  if (present) {
    *out = (uint32_t)u;
    if (has)
      *has = true;
  }
  return 0;
}

static int get_int(json_object *obj, const char *parent, const char *key, unsigned flags,
                   int64_t min, int64_t max, bool *has, int64_t *out, struct rrt_error *err)
{
  json_object *v;
  cleanup_free char *p = NULL;
  int r = field(obj, parent, key, flags, &v, &p, err);
  if (r <= 0)
    return r;
  if (want_int(v, p, min, max, out, err) < 0)
    return -1;
  if (has)
    *has = true;
  return 0;
}

static int get_i32(json_object *obj, const char *parent, const char *key, int min, int max,
                   bool *has, int *out, struct rrt_error *err)
{
  int64_t i = 0;
  bool present = false;
  if (get_int(obj, parent, key, 0, min, max, &present, &i, err) < 0)
    return -1;
  if (present) {
    *out = (int)i;
    if (has)
      *has = true;
  }
  return 0;
}

/* Object- or array-valued member: *out stays NULL when absent; *path is always set. */
static int get_typed(json_object *obj, const char *parent, const char *key, unsigned flags,
                     json_type type, json_object **out, char **path, struct rrt_error *err)
{
  json_object *v;
  *out = NULL;
  int r = field(obj, parent, key, flags, &v, path, err);
  if (r <= 0)
    return r;
  if (expect(v, type, *path, type == json_type_object ? "object" : "array", err) < 0)
    return -1;
  *out = v;
  return 0;
}

static int want_enum(const char *s, const char *const *names, const char *path, const char *what,
                     struct rrt_error *err)
{
  if (in_list(s, names))
    return 0;
  return rrt_error_set(err, 0, "%s: unknown %s \"%s\"", path, what, s);
}

static int want_enum_strv(const struct rrt_strv *v, const char *const *names, const char *path,
                          const char *what, struct rrt_error *err)
{
  for (size_t i = 0; i < v->n; i++) {
    if (!in_list(v->v[i], names)) {
      cleanup_free char *ip = idx_path(path, i);
      return want_enum(v->v[i], names, ip, what, err);
    }
  }
  return 0;
}

/* A JSON object of strings as key/value pairs (annotations, sysctl). */
static int get_kv(json_object *obj, const char *parent, const char *key, struct rrt_kv **out,
                  size_t *n_out, struct rrt_error *err)
{
  json_object *map;
  cleanup_free char *path = NULL;
  if (get_typed(obj, parent, key, 0, json_type_object, &map, &path, err) < 0)
    return -1;
  if (!map)
    return 0;
  *out = xcalloc((size_t)json_object_object_length(map), sizeof **out);
  *n_out = 0;
  json_object_object_foreach(map, k, val)
  {
    struct rrt_kv *kv = &(*out)[(*n_out)++];
    kv->key = xstrdup(k);
    cleanup_free char *kp = key_path(path, k);
    if (k[0] == '\0')
      return rrt_error_set(err, 0, "%s: keys must not be empty", path);
    if (want_str(val, kp, 0, &kv->value, err) < 0)
      return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* process                                                                                     */

static int parse_user(json_object *proc, struct rrt_user *u, struct rrt_error *err)
{
  json_object *obj, *gids;
  cleanup_free char *path = NULL, *gpath = NULL;
  if (get_typed(proc, "process", "user", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0; /* root in the container, as runc and crun default */
  if (get_u32(obj, path, "uid", F_REQ, NULL, &u->uid, err) < 0 ||
      get_u32(obj, path, "gid", F_REQ, NULL, &u->gid, err) < 0 ||
      get_u32(obj, path, "umask", 0, &u->has_umask, &u->umask, err) < 0 ||
      get_str(obj, path, "username", 0, &u->username, err) < 0)
    return -1;
  if (u->has_umask && u->umask > 0777)
    return rrt_error_set(err, 0, "%s.umask: must be at most 0777 (511), got %" PRIu32, path,
                         u->umask);
  if (get_typed(obj, path, "additionalGids", 0, json_type_array, &gids, &gpath, err) < 0)
    return -1;
  if (!gids)
    return 0;
  u->n_additional_gids = json_object_array_length(gids);
  u->additional_gids = xcalloc(u->n_additional_gids, sizeof(uint32_t));
  for (size_t i = 0; i < u->n_additional_gids; i++) {
    cleanup_free char *ip = idx_path(gpath, i);
    uint64_t g;
    if (want_uint(json_object_array_get_idx(gids, i), ip, UINT32_MAX, &g, err) < 0)
      return -1;
    u->additional_gids[i] = (uint32_t)g;
  }
  return 0;
}

static int parse_caps(json_object *proc, struct rrt_process *p, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (get_typed(proc, "process", "capabilities", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  /* Names are not checked here: config.md wants unknown capabilities logged, not fatal. */
  p->capabilities = xzalloc(sizeof *p->capabilities);
  struct rrt_caps *c = p->capabilities;
  if (get_strv(obj, path, "bounding", 0, &c->bounding, err) < 0 ||
      get_strv(obj, path, "effective", 0, &c->effective, err) < 0 ||
      get_strv(obj, path, "permitted", 0, &c->permitted, err) < 0 ||
      get_strv(obj, path, "inheritable", 0, &c->inheritable, err) < 0 ||
      get_strv(obj, path, "ambient", 0, &c->ambient, err) < 0)
    return -1;
  return 0;
}

static int parse_rlimit(json_object *e, const char *ip, struct rrt_rlimit *rl,
                        struct rrt_error *err)
{
  if (expect(e, json_type_object, ip, "object", err) < 0 ||
      get_str(e, ip, "type", F_REQ, &rl->type, err) < 0 ||
      get_uint(e, ip, "soft", F_REQ, UINT64_MAX, NULL, &rl->soft, err) < 0 ||
      get_uint(e, ip, "hard", F_REQ, UINT64_MAX, NULL, &rl->hard, err) < 0)
    return -1;
  rl->resource = -1;
  for (size_t k = 0; k < sizeof rlimit_table / sizeof rlimit_table[0]; k++)
    if (strcmp(rlimit_table[k].name, rl->type) == 0)
      rl->resource = rlimit_table[k].resource;
  if (rl->resource < 0)
    return rrt_error_set(err, 0, "%s.type: unknown resource \"%s\"", ip, rl->type);
  /* setrlimit(2) refuses soft > hard with a bare EINVAL; say which entry here. */
  if (rl->soft > rl->hard)
    return rrt_error_set(err, 0, "%s: soft limit %" PRIu64 " exceeds hard limit %" PRIu64, ip,
                         rl->soft, rl->hard);
  return 0;
}

static int parse_rlimits(json_object *proc, struct rrt_process *p, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  if (get_typed(proc, "process", "rlimits", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  p->n_rlimits = json_object_array_length(arr);
  p->rlimits = xcalloc(p->n_rlimits, sizeof *p->rlimits);
  for (size_t i = 0; i < p->n_rlimits; i++) {
    cleanup_free char *ip = idx_path(path, i);
    if (parse_rlimit(json_object_array_get_idx(arr, i), ip, &p->rlimits[i], err) < 0)
      return -1;
    for (size_t j = 0; j < i; j++)
      if (p->rlimits[j].resource == p->rlimits[i].resource)
        return rrt_error_set(err, 0, "%s.type: duplicate \"%s\"", ip, p->rlimits[i].type);
  }
  return 0;
}

static int parse_io_priority(json_object *proc, struct rrt_io_priority *io, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL, *cpath = NULL;
  if (get_typed(proc, "process", "ioPriority", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  io->present = true;
  cpath = key_path(path, "class");
  /* ioprio_set(2) levels run 0 (highest) to 7 (lowest). */
  if (get_str(obj, path, "class", F_REQ, &io->klass, err) < 0 ||
      want_enum(io->klass, ioprio_classes, cpath, "class", err) < 0 ||
      get_i32(obj, path, "priority", 0, 7, NULL, &io->priority, err) < 0)
    return -1;
  return 0;
}

static int parse_scheduler(json_object *proc, struct rrt_scheduler *s, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL, *ppath = NULL, *fpath = NULL;
  if (get_typed(proc, "process", "scheduler", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  s->present = true;
  ppath = key_path(path, "policy");
  fpath = key_path(path, "flags");
  if (get_str(obj, path, "policy", F_REQ, &s->policy, err) < 0 ||
      want_enum(s->policy, sched_policies, ppath, "policy", err) < 0 ||
      get_i32(obj, path, "nice", INT32_MIN, INT32_MAX, NULL, &s->nice, err) < 0 ||
      get_i32(obj, path, "priority", INT32_MIN, INT32_MAX, NULL, &s->priority, err) < 0 ||
      get_strv(obj, path, "flags", 0, &s->flags, err) < 0 ||
      want_enum_strv(&s->flags, sched_flags, fpath, "flag", err) < 0 ||
      get_uint(obj, path, "runtime", 0, UINT64_MAX, NULL, &s->runtime, err) < 0 ||
      get_uint(obj, path, "deadline", 0, UINT64_MAX, NULL, &s->deadline, err) < 0 ||
      get_uint(obj, path, "period", 0, UINT64_MAX, NULL, &s->period, err) < 0)
    return -1;
  return 0;
}

static int parse_console_size(json_object *proc, struct rrt_process *p, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (get_typed(proc, "process", "consoleSize", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  p->has_console_size = true;
  if (get_u32(obj, path, "height", F_REQ, NULL, &p->console_height, err) < 0 ||
      get_u32(obj, path, "width", F_REQ, NULL, &p->console_width, err) < 0)
    return -1;
  return 0;
}

static int parse_process(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (get_typed(doc, "", "process", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  struct rrt_process *p = spec->process = xzalloc(sizeof *spec->process);
  int64_t oom = 0;
  if (get_bool(obj, path, "terminal", &p->terminal, err) < 0 ||
      parse_console_size(obj, p, err) < 0 || parse_user(obj, &p->user, err) < 0 ||
      get_strv(obj, path, "args", F_REQ | F_NONEMPTY, &p->args, err) < 0 ||
      get_str(obj, path, "commandLine", 0, &p->command_line, err) < 0 ||
      get_strv(obj, path, "env", 0, &p->env, err) < 0 ||
      get_str(obj, path, "cwd", F_REQ | F_ABS, &p->cwd, err) < 0 || parse_caps(obj, p, err) < 0 ||
      parse_rlimits(obj, p, err) < 0 ||
      get_bool(obj, path, "noNewPrivileges", &p->no_new_privileges, err) < 0 ||
      get_str(obj, path, "apparmorProfile", 0, &p->apparmor_profile, err) < 0 ||
      get_int(obj, path, "oomScoreAdj", 0, -1000, 1000, &p->has_oom_score_adj, &oom, err) < 0 ||
      get_str(obj, path, "selinuxLabel", 0, &p->selinux_label, err) < 0 ||
      parse_io_priority(obj, &p->io_priority, err) < 0 ||
      parse_scheduler(obj, &p->scheduler, err) < 0)
    return -1;
  p->oom_score_adj = (int)oom;
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* root, version, mounts, hooks                                                                */

static int parse_version(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  if (get_str(doc, "", "ociVersion", F_REQ, &spec->oci_version, err) < 0)
    return -1;
  const char *v = spec->oci_version;
  char *end;
  errno = 0;
  unsigned long major = strtoul(v, &end, 10);
  if (v[0] < '0' || v[0] > '9' || end[0] != '.' || errno != 0)
    return rrt_error_set(err, 0, "ociVersion: \"%s\" is not a SemVer version", v);
  /* 0.x is accepted: the spec's own examples still carry "0.5.0-dev", and 1.x kept every
   * field of those drafts that Linux uses. A 2.x document may mean something else. */
  if (major > 1)
    return rrt_error_set(err, 0,
                         "ociVersion: unsupported major version in \"%s\": this runtime "
                         "implements runtime-spec 1.x (%s)",
                         v, RRT_OCI_VERSION);
  return 0;
}

static int parse_root(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  /* Optional in the schema, but required on Linux (config.md). */
  if (get_typed(doc, "", "root", F_REQ, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (get_str(obj, path, "path", F_REQ | F_NONEMPTY, &spec->root_path, err) < 0 ||
      get_bool(obj, path, "readonly", &spec->root_readonly, err) < 0)
    return -1;
  return 0;
}

static int parse_id_mappings(json_object *obj, const char *parent, const char *key,
                             struct rrt_id_mappings *out, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  if (get_typed(obj, parent, key, 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  out->n = json_object_array_length(arr);
  out->v = xcalloc(out->n, sizeof *out->v);
  for (size_t i = 0; i < out->n; i++) {
    cleanup_free char *ip = idx_path(path, i);
    json_object *e = json_object_array_get_idx(arr, i);
    struct rrt_id_mapping *m = &out->v[i];
    if (expect(e, json_type_object, ip, "object", err) < 0 ||
        get_u32(e, ip, "containerID", F_REQ, NULL, &m->container_id, err) < 0 ||
        get_u32(e, ip, "hostID", F_REQ, NULL, &m->host_id, err) < 0 ||
        get_u32(e, ip, "size", F_REQ, NULL, &m->size, err) < 0)
      return -1;
    if (m->size == 0)
      return rrt_error_set(err, 0, "%s.size: must be greater than zero", ip);
  }
  return 0;
}

static int parse_mount(json_object *e, const char *ip, struct rrt_mount *m, struct rrt_error *err)
{
  if (expect(e, json_type_object, ip, "object", err) < 0 ||
      get_str(e, ip, "destination", F_REQ | F_NONEMPTY, &m->destination, err) < 0 ||
      get_str(e, ip, "source", 0, &m->source, err) < 0 ||
      get_str(e, ip, "type", 0, &m->type, err) < 0 ||
      get_strv(e, ip, "options", 0, &m->options, err) < 0 ||
      parse_id_mappings(e, ip, "uidMappings", &m->uid_mappings, err) < 0 ||
      parse_id_mappings(e, ip, "gidMappings", &m->gid_mappings, err) < 0)
    return -1;
  if (!m->uid_mappings.v != !m->gid_mappings.v)
    return rrt_error_set(err, 0, "%s: uidMappings and gidMappings must be given together", ip);
  /* config.md lets old configs use a relative destination, meaning relative to "/";
   * normalise here so every consumer sees an absolute path. */
  if (m->destination[0] != '/') {
    char *abs = xasprintf("/%s", m->destination);
    free(m->destination);
    m->destination = abs;
  }
  return 0;
}

static int parse_mounts(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  if (get_typed(doc, "", "mounts", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  spec->n_mounts = json_object_array_length(arr);
  spec->mounts = xcalloc(spec->n_mounts, sizeof *spec->mounts);
  for (size_t i = 0; i < spec->n_mounts; i++) {
    cleanup_free char *ip = idx_path(path, i);
    if (parse_mount(json_object_array_get_idx(arr, i), ip, &spec->mounts[i], err) < 0)
      return -1;
  }
  return 0;
}

static int parse_hook(json_object *e, const char *ip, struct rrt_hook *h, struct rrt_error *err)
{
  int64_t timeout = 0;
  bool has_timeout = false;
  if (expect(e, json_type_object, ip, "object", err) < 0 ||
      get_str(e, ip, "path", F_REQ | F_ABS, &h->path, err) < 0 ||
      get_strv(e, ip, "args", 0, &h->args, err) < 0 ||
      get_strv(e, ip, "env", 0, &h->env, err) < 0 ||
      get_int(e, ip, "timeout", 0, INT64_MIN, INT_MAX, &has_timeout, &timeout, err) < 0)
    return -1;
  if (has_timeout && timeout <= 0)
    return rrt_error_set(err, 0, "%s.timeout: must be greater than zero", ip);
  h->timeout = (int)timeout;
  return 0;
}

static int parse_hooks(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (get_typed(doc, "", "hooks", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  for (int k = 0; obj && k < RRT_HOOK__COUNT; k++) {
    json_object *arr;
    cleanup_free char *kpath = NULL;
    struct rrt_hook_list *list = &spec->hooks[k];
    if (get_typed(obj, path, hook_names[k], 0, json_type_array, &arr, &kpath, err) < 0)
      return -1;
    if (!arr)
      continue;
    list->n = json_object_array_length(arr);
    list->v = xcalloc(list->n, sizeof *list->v);
    for (size_t i = 0; i < list->n; i++) {
      cleanup_free char *ip = idx_path(kpath, i);
      if (parse_hook(json_object_array_get_idx(arr, i), ip, &list->v[i], err) < 0)
        return -1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* linux                                                                                       */

static int parse_namespaces(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  int seen = 0;
  if (get_typed(lnx, "linux", "namespaces", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  l->n_namespaces = json_object_array_length(arr);
  l->namespaces = xcalloc(l->n_namespaces, sizeof *l->namespaces);
  for (size_t i = 0; i < l->n_namespaces; i++) {
    cleanup_free char *ip = idx_path(path, i);
    cleanup_free char *name = NULL;
    json_object *e = json_object_array_get_idx(arr, i);
    struct rrt_namespace *ns = &l->namespaces[i];
    if (expect(e, json_type_object, ip, "object", err) < 0 ||
        get_str(e, ip, "type", F_REQ, &name, err) < 0 ||
        get_str(e, ip, "path", F_ABS, &ns->path, err) < 0)
      return -1;
    ns->type = rrt_namespace_type_from_name(name);
    if (ns->type == 0)
      return rrt_error_set(err, 0, "%s.type: unknown namespace type \"%s\"", ip, name);
    if (seen & ns->type)
      return rrt_error_set(err, 0, "%s.type: duplicate namespace type \"%s\"", ip, name);
    seen |= ns->type;
  }
  return 0;
}

static int parse_device(json_object *e, const char *ip, struct rrt_device *d, struct rrt_error *err)
{
  cleanup_free char *type = NULL;
  bool has_major = false, has_minor = false;
  if (expect(e, json_type_object, ip, "object", err) < 0 ||
      get_str(e, ip, "path", F_REQ | F_ABS, &d->path, err) < 0 ||
      get_str(e, ip, "type", F_REQ, &type, err) < 0)
    return -1;
  if (strlen(type) != 1 || !strchr("cbup", type[0]))
    return rrt_error_set(err, 0, "%s.type: expected one of c, b, u, p, got \"%s\"", ip, type);
  d->type = type[0];
  if (get_int(e, ip, "major", 0, INT64_MIN, INT64_MAX, &has_major, &d->major, err) < 0 ||
      get_int(e, ip, "minor", 0, INT64_MIN, INT64_MAX, &has_minor, &d->minor, err) < 0 ||
      get_u32(e, ip, "fileMode", 0, &d->has_file_mode, &d->file_mode, err) < 0 ||
      get_u32(e, ip, "uid", 0, &d->has_uid, &d->uid, err) < 0 ||
      get_u32(e, ip, "gid", 0, &d->has_gid, &d->gid, err) < 0)
    return -1;
  /* A fifo has no device number; everything else needs both for mknod(2). */
  if (d->type != 'p' && !has_major)
    return rrt_error_set(err, 0, "%s.major: required", ip);
  if (d->type != 'p' && !has_minor)
    return rrt_error_set(err, 0, "%s.minor: required", ip);
  return 0;
}

static int parse_devices(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  if (get_typed(lnx, "linux", "devices", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  l->n_devices = json_object_array_length(arr);
  l->devices = xcalloc(l->n_devices, sizeof *l->devices);
  for (size_t i = 0; i < l->n_devices; i++) {
    cleanup_free char *ip = idx_path(path, i);
    if (parse_device(json_object_array_get_idx(arr, i), ip, &l->devices[i], err) < 0)
      return -1;
  }
  return 0;
}

static int parse_syscall(json_object *e, const char *ip, struct rrt_seccomp_syscall *sc,
                         struct rrt_error *err)
{
  json_object *args;
  cleanup_free char *apath = NULL, *actpath = key_path(ip, "action");
  if (expect(e, json_type_object, ip, "object", err) < 0 ||
      get_strv(e, ip, "names", F_REQ | F_NONEMPTY, &sc->names, err) < 0 ||
      get_str(e, ip, "action", F_REQ, &sc->action, err) < 0 ||
      want_enum(sc->action, seccomp_actions, actpath, "action", err) < 0 ||
      get_u32(e, ip, "errnoRet", 0, &sc->has_errno_ret, &sc->errno_ret, err) < 0 ||
      get_typed(e, ip, "args", 0, json_type_array, &args, &apath, err) < 0)
    return -1;
  if (!args)
    return 0;
  sc->n_args = json_object_array_length(args);
  sc->args = xcalloc(sc->n_args, sizeof *sc->args);
  for (size_t i = 0; i < sc->n_args; i++) {
    cleanup_free char *ap = idx_path(apath, i);
    cleanup_free char *oppath = key_path(ap, "op");
    json_object *a = json_object_array_get_idx(args, i);
    struct rrt_seccomp_arg *arg = &sc->args[i];
    uint64_t index = 0;
    /* A syscall has six argument registers, numbered 0 to 5. */
    if (expect(a, json_type_object, ap, "object", err) < 0 ||
        get_uint(a, ap, "index", F_REQ, 5, NULL, &index, err) < 0 ||
        get_uint(a, ap, "value", F_REQ, UINT64_MAX, NULL, &arg->value, err) < 0 ||
        get_uint(a, ap, "valueTwo", 0, UINT64_MAX, NULL, &arg->value_two, err) < 0 ||
        get_str(a, ap, "op", F_REQ, &arg->op, err) < 0 ||
        want_enum(arg->op, seccomp_ops, oppath, "operator", err) < 0)
      return -1;
    arg->index = (uint32_t)index;
  }
  return 0;
}

static int parse_seccomp_syscalls(json_object *obj, const char *path, struct rrt_seccomp *s,
                                  struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *spath = NULL;
  if (get_typed(obj, path, "syscalls", 0, json_type_array, &arr, &spath, err) < 0)
    return -1;
  if (!arr)
    return 0;
  s->n_syscalls = json_object_array_length(arr);
  s->syscalls = xcalloc(s->n_syscalls, sizeof *s->syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++) {
    cleanup_free char *ip = idx_path(spath, i);
    if (parse_syscall(json_object_array_get_idx(arr, i), ip, &s->syscalls[i], err) < 0)
      return -1;
  }
  return 0;
}

static int parse_seccomp(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL, *dpath = NULL, *apath = NULL, *fpath = NULL;
  if (get_typed(lnx, "linux", "seccomp", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  struct rrt_seccomp *s = l->seccomp = xzalloc(sizeof *l->seccomp);
  dpath = key_path(path, "defaultAction");
  apath = key_path(path, "architectures");
  fpath = key_path(path, "flags");
  if (get_str(obj, path, "defaultAction", F_REQ, &s->default_action, err) < 0 ||
      want_enum(s->default_action, seccomp_actions, dpath, "action", err) < 0 ||
      get_u32(obj, path, "defaultErrnoRet", 0, &s->has_default_errno_ret, &s->default_errno_ret,
              err) < 0 ||
      get_strv(obj, path, "architectures", 0, &s->architectures, err) < 0 ||
      want_enum_strv(&s->architectures, seccomp_archs, apath, "architecture", err) < 0 ||
      get_strv(obj, path, "flags", 0, &s->flags, err) < 0 ||
      want_enum_strv(&s->flags, seccomp_flags, fpath, "flag", err) < 0 ||
      get_str(obj, path, "listenerPath", F_NONEMPTY, &s->listener_path, err) < 0 ||
      get_str(obj, path, "listenerMetadata", 0, &s->listener_metadata, err) < 0 ||
      parse_seccomp_syscalls(obj, path, s, err) < 0)
    return -1;
  if (s->listener_metadata && !s->listener_path)
    return rrt_error_set(err, 0, "%s.listenerMetadata: requires listenerPath", path);
  s->canonical_json = xstrdup(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
  return 0;
}

static int parse_time_offsets(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL;
  if (get_typed(lnx, "linux", "timeOffsets", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  l->time_offsets = xcalloc((size_t)json_object_object_length(obj), sizeof *l->time_offsets);
  json_object_object_foreach(obj, clock, val)
  {
    struct rrt_time_offset *t = &l->time_offsets[l->n_time_offsets++];
    cleanup_free char *cp = key_path(path, clock);
    t->clock = xstrdup(clock);
    if (!in_list(clock, time_clocks))
      return rrt_error_set(err, 0, "%s: unknown clock \"%s\" (expected monotonic or boottime)",
                           path, clock);
    if (expect(val, json_type_object, cp, "object", err) < 0 ||
        get_int(val, cp, "secs", 0, INT64_MIN, INT64_MAX, NULL, &t->secs, err) < 0 ||
        get_u32(val, cp, "nanosecs", 0, NULL, &t->nanosecs, err) < 0)
      return -1;
    /* /proc/PID/timens_offsets refuses a nanosecond part of a whole second or more. */
    if (t->nanosecs >= 1000000000u)
      return rrt_error_set(err, 0, "%s.nanosecs: must be less than 1000000000", cp);
  }
  return 0;
}

static int parse_personality(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL, *dpath = NULL;
  if (get_typed(lnx, "linux", "personality", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  l->personality = xzalloc(sizeof *l->personality);
  dpath = key_path(path, "domain");
  if (get_str(obj, path, "domain", F_REQ, &l->personality->domain, err) < 0 ||
      want_enum(l->personality->domain, personality_domains, dpath, "domain", err) < 0 ||
      get_strv(obj, path, "flags", 0, &l->personality->flags, err) < 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* linux.resources and the other linux objects this runtime passes through: checked against a  */
/* small schema so that a typo fails here rather than half-way through container creation.     */

enum kind { K_STR, K_BOOL, K_I64, K_U64, K_U32, K_U16, K_PAGESIZE, K_OBJ, K_ARR, K_MAP, K_STRMAP };

struct shape {
  const char *key;
  enum kind kind;
  bool required;
  const struct shape *sub; /* K_OBJ, K_ARR (of objects), K_MAP (of objects) */
};

static const struct shape sh_blkdev_weight[] = {{"major", K_I64, true, NULL},
                                                {"minor", K_I64, true, NULL},
                                                {"weight", K_U16, false, NULL},
                                                {"leafWeight", K_U16, false, NULL},
                                                {NULL, K_STR, false, NULL}};
static const struct shape sh_blkdev_throttle[] = {{"major", K_I64, true, NULL},
                                                  {"minor", K_I64, true, NULL},
                                                  {"rate", K_U64, false, NULL},
                                                  {NULL, K_STR, false, NULL}};
static const struct shape sh_blkio[] = {
    {"weight", K_U16, false, NULL},
    {"leafWeight", K_U16, false, NULL},
    {"weightDevice", K_ARR, false, sh_blkdev_weight},
    {"throttleReadBpsDevice", K_ARR, false, sh_blkdev_throttle},
    {"throttleWriteBpsDevice", K_ARR, false, sh_blkdev_throttle},
    {"throttleReadIOPSDevice", K_ARR, false, sh_blkdev_throttle},
    {"throttleWriteIOPSDevice", K_ARR, false, sh_blkdev_throttle},
    {NULL, K_STR, false, NULL}};
static const struct shape sh_cpu[] = {{"cpus", K_STR, false, NULL},
                                      {"mems", K_STR, false, NULL},
                                      {"period", K_U64, false, NULL},
                                      {"quota", K_I64, false, NULL},
                                      {"burst", K_U64, false, NULL},
                                      {"realtimePeriod", K_U64, false, NULL},
                                      {"realtimeRuntime", K_I64, false, NULL},
                                      {"shares", K_U64, false, NULL},
                                      {"idle", K_I64, false, NULL},
                                      {NULL, K_STR, false, NULL}};
static const struct shape sh_hugepage[] = {
    {"pageSize", K_PAGESIZE, true, NULL}, {"limit", K_U64, true, NULL}, {NULL, K_STR, false, NULL}};
static const struct shape sh_memory[] = {{"kernel", K_I64, false, NULL},
                                         {"kernelTCP", K_I64, false, NULL},
                                         {"limit", K_I64, false, NULL},
                                         {"reservation", K_I64, false, NULL},
                                         {"swap", K_I64, false, NULL},
                                         {"swappiness", K_U64, false, NULL},
                                         {"disableOOMKiller", K_BOOL, false, NULL},
                                         {"useHierarchy", K_BOOL, false, NULL},
                                         {"checkBeforeUpdate", K_BOOL, false, NULL},
                                         {NULL, K_STR, false, NULL}};
static const struct shape sh_devcgroup[] = {
    {"allow", K_BOOL, true, NULL}, {"type", K_STR, false, NULL},   {"major", K_I64, false, NULL},
    {"minor", K_I64, false, NULL}, {"access", K_STR, false, NULL}, {NULL, K_STR, false, NULL}};
static const struct shape sh_pids[] = {{"limit", K_I64, true, NULL}, {NULL, K_STR, false, NULL}};
static const struct shape sh_netprio[] = {
    {"name", K_STR, true, NULL}, {"priority", K_U32, true, NULL}, {NULL, K_STR, false, NULL}};
static const struct shape sh_network[] = {{"classID", K_U32, false, NULL},
                                          {"priorities", K_ARR, false, sh_netprio},
                                          {NULL, K_STR, false, NULL}};
static const struct shape sh_rdma[] = {{"hcaHandles", K_U32, false, NULL},
                                       {"hcaObjects", K_U32, false, NULL},
                                       {NULL, K_STR, false, NULL}};
static const struct shape sh_resources[] = {
    {"unified", K_STRMAP, false, NULL},  {"devices", K_ARR, false, sh_devcgroup},
    {"pids", K_OBJ, false, sh_pids},     {"blockIO", K_OBJ, false, sh_blkio},
    {"cpu", K_OBJ, false, sh_cpu},       {"hugepageLimits", K_ARR, false, sh_hugepage},
    {"memory", K_OBJ, false, sh_memory}, {"network", K_OBJ, false, sh_network},
    {"rdma", K_MAP, false, sh_rdma},     {NULL, K_STR, false, NULL}};
static const struct shape sh_netdevice[] = {{"name", K_STR, false, NULL},
                                            {NULL, K_STR, false, NULL}};
static const struct shape sh_intel_rdt[] = {{"closID", K_STR, false, NULL},
                                            {"l3CacheSchema", K_STR, false, NULL},
                                            {"memBwSchema", K_STR, false, NULL},
                                            {"enableMonitoring", K_BOOL, false, NULL},
                                            {NULL, K_STR, false, NULL}};
static const struct shape sh_linux_extra[] = {{"resources", K_OBJ, false, sh_resources},
                                              {"netDevices", K_MAP, false, sh_netdevice},
                                              {"intelRdt", K_OBJ, false, sh_intel_rdt},
                                              {NULL, K_STR, false, NULL}};

static int check_shape(json_object *obj, const char *path, const struct shape *sh,
                       struct rrt_error *err);

/* "64KB", "2MB", "1GB": the hugetlb cgroup file names are built from it. */
static bool valid_page_size(const char *s)
{
  size_t n = strspn(s, "0123456789");
  return n > 0 && s[0] != '0' && strchr("KMG", s[n]) && s[n] != '\0' && strcmp(s + n + 1, "B") == 0;
}

static int check_value(json_object *v, const char *p, const struct shape *f, struct rrt_error *err)
{
  uint64_t u;
  int64_t i;
  switch (f->kind) {
  case K_STR:
  case K_PAGESIZE:
    if (expect(v, json_type_string, p, "string", err) < 0)
      return -1;
    if (f->kind == K_PAGESIZE && !valid_page_size(json_object_get_string(v)))
      return rrt_error_set(err, 0, "%s: expected a size like 64KB, 2MB or 1GB, got \"%s\"", p,
                           json_object_get_string(v));
    return 0;
  case K_BOOL:
    return expect(v, json_type_boolean, p, "boolean", err);
  case K_I64:
    return want_int(v, p, INT64_MIN, INT64_MAX, &i, err);
  case K_U64:
    return want_uint(v, p, UINT64_MAX, &u, err);
  case K_U32:
    return want_uint(v, p, UINT32_MAX, &u, err);
  case K_U16:
    return want_uint(v, p, UINT16_MAX, &u, err);
  case K_OBJ:
    if (expect(v, json_type_object, p, "object", err) < 0)
      return -1;
    return check_shape(v, p, f->sub, err);
  case K_ARR:
    if (expect(v, json_type_array, p, "array", err) < 0)
      return -1;
    for (size_t idx = 0; idx < json_object_array_length(v); idx++) {
      cleanup_free char *ip = idx_path(p, idx);
      json_object *e = json_object_array_get_idx(v, idx);
      if (expect(e, json_type_object, ip, "object", err) < 0 || check_shape(e, ip, f->sub, err) < 0)
        return -1;
    }
    return 0;
  case K_MAP:
  case K_STRMAP: {
    if (expect(v, json_type_object, p, "object", err) < 0)
      return -1;
    bool objects = f->kind == K_MAP;
    json_object_object_foreach(v, k, e)
    {
      cleanup_free char *kp = key_path(p, k);
      if (expect(e, objects ? json_type_object : json_type_string, kp,
                 objects ? "object" : "string", err) < 0 ||
          (objects && check_shape(e, kp, f->sub, err) < 0))
        return -1;
    }
    return 0;
  }
  }
  return 0;
}

static int check_shape(json_object *obj, const char *path, const struct shape *sh,
                       struct rrt_error *err)
{
  for (const struct shape *f = sh; f->key; f++) {
    json_object *v;
    cleanup_free char *p = NULL;
    int r = field(obj, path, f->key, f->required ? F_REQ : 0, &v, &p, err);
    if (r < 0 || (r > 0 && check_value(v, p, f, err) < 0))
      return -1;
  }
  return 0;
}

static bool nonempty(json_object *obj, const char *key)
{
  json_object *v = member(obj, key);
  if (json_object_is_type(v, json_type_array))
    return json_object_array_length(v) > 0;
  if (json_object_is_type(v, json_type_object))
    return json_object_object_length(v) > 0;
  if (json_object_is_type(v, json_type_string))
    return json_object_get_string_len(v) > 0;
  return v != NULL;
}

static bool any_nonempty(json_object *obj, const char *const *keys)
{
  for (; obj && *keys; keys++)
    if (nonempty(obj, *keys))
      return true;
  return false;
}

/* Whether resources asks for something only a cgroup can enforce. Device rules do not count:
 * without a cgroup the runtime still confines devices by creating only the listed ones. */
static bool wants_cgroup_limits(json_object *res)
{
  static const char *const top[] = {"hugepageLimits", "unified", "rdma", NULL};
  static const char *const memory[] = {"limit", "reservation", "swap", NULL};
  static const char *const cpu[] = {"shares", "quota",           "period",         "cpus", "mems",
                                    "burst",  "realtimeRuntime", "realtimePeriod", NULL};
  static const char *const pids[] = {"limit", NULL};
  static const char *const blkio[] = {"weight",
                                      "leafWeight",
                                      "weightDevice",
                                      "throttleReadBpsDevice",
                                      "throttleWriteBpsDevice",
                                      "throttleReadIOPSDevice",
                                      "throttleWriteIOPSDevice",
                                      NULL};
  static const char *const network[] = {"classID", "priorities", NULL};
  return any_nonempty(res, top) || any_nonempty(member(res, "memory"), memory) ||
         any_nonempty(member(res, "cpu"), cpu) || any_nonempty(member(res, "pids"), pids) ||
         any_nonempty(member(res, "blockIO"), blkio) ||
         any_nonempty(member(res, "network"), network);
}

static int parse_resources(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  if (check_shape(lnx, "linux", sh_linux_extra, err) < 0)
    return -1;
  json_object *res = member(lnx, "resources");
  if (!res)
    return 0;
  l->resources_json = xstrdup(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
  l->has_resource_limits = wants_cgroup_limits(res);
  return 0;
}

static int parse_linux(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *lnx;
  cleanup_free char *path = NULL, *ppath = NULL;
  if (get_typed(doc, "", "linux", 0, json_type_object, &lnx, &path, err) < 0)
    return -1;
  if (!lnx)
    return 0;
  struct rrt_linux *l = &spec->lnx;
  spec->has_linux = true;
  ppath = key_path(path, "rootfsPropagation");
  if (parse_namespaces(lnx, l, err) < 0 ||
      parse_id_mappings(lnx, path, "uidMappings", &l->uid_mappings, err) < 0 ||
      parse_id_mappings(lnx, path, "gidMappings", &l->gid_mappings, err) < 0 ||
      parse_devices(lnx, l, err) < 0 ||
      get_kv(lnx, path, "sysctl", &l->sysctl, &l->n_sysctl, err) < 0 ||
      parse_resources(lnx, l, err) < 0 ||
      get_str(lnx, path, "cgroupsPath", 0, &l->cgroups_path, err) < 0 ||
      get_strv(lnx, path, "maskedPaths", F_ABS, &l->masked_paths, err) < 0 ||
      get_strv(lnx, path, "readonlyPaths", F_ABS, &l->readonly_paths, err) < 0 ||
      get_str(lnx, path, "rootfsPropagation", 0, &l->rootfs_propagation, err) < 0 ||
      (l->rootfs_propagation &&
       want_enum(l->rootfs_propagation, propagations, ppath, "propagation", err) < 0) ||
      get_str(lnx, path, "mountLabel", 0, &l->mount_label, err) < 0 ||
      parse_seccomp(lnx, l, err) < 0 || parse_time_offsets(lnx, l, err) < 0 ||
      parse_personality(lnx, l, err) < 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry points                                                                                */

static int parse_document(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  if (parse_version(doc, spec, err) < 0 || parse_root(doc, spec, err) < 0 ||
      get_str(doc, "", "hostname", 0, &spec->hostname, err) < 0 ||
      get_str(doc, "", "domainname", 0, &spec->domainname, err) < 0 ||
      parse_process(doc, spec, err) < 0 || parse_mounts(doc, spec, err) < 0 ||
      parse_hooks(doc, spec, err) < 0 ||
      get_kv(doc, "", "annotations", &spec->annotations, &spec->n_annotations, err) < 0 ||
      parse_linux(doc, spec, err) < 0)
    return -1;
  return 0;
}

static void json_tokener_freep(struct json_tokener **tok)
{
  if (*tok)
    json_tokener_free(*tok);
}

static void json_object_putp(json_object **obj)
{
  if (*obj)
    json_object_put(*obj);
}

static int syntax_error(const char *json, size_t offset, const char *name, const char *what,
                        struct rrt_error *err)
{
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; i++) {
    col++;
    if (json[i] == '\n') {
      line++;
      col = 1;
    }
  }
  return rrt_error_set(err, 0, "%s: invalid JSON: %s at line %zu, column %zu", name, what, line,
                       col);
}

/* Parses text into a json-c tree; `name` labels syntax errors. */
static int tokenize(const char *json, size_t len, const char *name, json_object **out,
                    struct rrt_error *err)
{
  __attribute__((cleanup(json_tokener_freep))) struct json_tokener *tok = json_tokener_new();
  if (!tok)
    abort();
  if (len > INT_MAX)
    return rrt_error_set(err, 0, "%s: too large (%zu bytes)", name, len);
  *out = json_tokener_parse_ex(tok, json, (int)len);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t end = json_tokener_get_parse_end(tok);
  if (jerr == json_tokener_continue)
    return syntax_error(json, len, name, "unexpected end of input", err);
  if (jerr != json_tokener_success)
    return syntax_error(json, end, name, json_tokener_error_desc(jerr), err);
  for (size_t i = end; i < len; i++) {
    if (!strchr(" \t\r\n", json[i])) {
      json_object_put(steal_ptr(out));
      return syntax_error(json, i, name, "trailing data after the document", err);
    }
  }
  return 0;
}

/* file == NULL: rrt_spec_parse, messages are bare JSON paths; else they start with file. */
static int parse_named(const char *json, size_t len, const char *file, struct rrt_spec **out,
                       struct rrt_error *err)
{
  __attribute__((cleanup(json_object_putp))) json_object *doc = NULL;
  *out = NULL;
  if (tokenize(json ? json : "", json ? len : 0, file ? file : "config.json", &doc, err) < 0)
    return -1;
  if (!json_object_is_type(doc, json_type_object))
    return rrt_error_set(err, 0, "%s: expected a JSON object at the top level",
                         file ? file : "config.json");
  struct rrt_spec *spec = xzalloc(sizeof *spec);
  if (parse_document(doc, spec, err) < 0) {
    rrt_spec_free(spec);
    return file ? rrt_error_wrap(err, "%s", file) : -1;
  }
  *out = spec;
  return 0;
}

int rrt_spec_parse(const char *json, size_t len, struct rrt_spec **out, struct rrt_error *err)
{
  return parse_named(json, len, NULL, out, err);
}

int rrt_spec_parse_file(const char *json, size_t len, const char *path, struct rrt_spec **out,
                        struct rrt_error *err)
{
  return parse_named(json, len, path, out, err);
}

int rrt_spec_load(const char *path, struct rrt_spec **out, struct rrt_error *err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  *out = NULL;
  if (rrt_read_file(path, &text, &len, err) < 0)
    return -1;
  return parse_named(text, len, path, out, err);
}

const char *rrt_spec_annotation(const struct rrt_spec *spec, const char *key)
{
  for (size_t i = 0; spec && key && i < spec->n_annotations; i++)
    if (spec->annotations[i].key && strcmp(spec->annotations[i].key, key) == 0)
      return spec->annotations[i].value;
  return NULL;
}

const struct rrt_namespace *rrt_spec_namespace(const struct rrt_spec *spec, int type)
{
  for (size_t i = 0; spec && i < spec->lnx.n_namespaces; i++)
    if (spec->lnx.namespaces[i].type == type)
      return &spec->lnx.namespaces[i];
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Freeing: every array is allocated zeroed at full length before it is filled, so a spec     */
/* abandoned half-way through parsing frees like a complete one.                               */

static void strv_clear(struct rrt_strv *v)
{
  rrt_strv_free(v->v);
}

static void kv_free(struct rrt_kv *kv, size_t n)
{
  for (size_t i = 0; kv && i < n; i++) {
    free(kv[i].key);
    free(kv[i].value);
  }
  free(kv);
}

static void process_free(struct rrt_process *p)
{
  if (!p)
    return;
  free(p->user.additional_gids);
  free(p->user.username);
  strv_clear(&p->args);
  free(p->command_line);
  strv_clear(&p->env);
  free(p->cwd);
  if (p->capabilities) {
    strv_clear(&p->capabilities->bounding);
    strv_clear(&p->capabilities->effective);
    strv_clear(&p->capabilities->permitted);
    strv_clear(&p->capabilities->inheritable);
    strv_clear(&p->capabilities->ambient);
    free(p->capabilities);
  }
  for (size_t i = 0; p->rlimits && i < p->n_rlimits; i++)
    free(p->rlimits[i].type);
  free(p->rlimits);
  free(p->apparmor_profile);
  free(p->selinux_label);
  free(p->io_priority.klass);
  free(p->scheduler.policy);
  strv_clear(&p->scheduler.flags);
  free(p);
}

static void seccomp_free(struct rrt_seccomp *s)
{
  if (!s)
    return;
  free(s->default_action);
  strv_clear(&s->architectures);
  strv_clear(&s->flags);
  free(s->listener_path);
  free(s->listener_metadata);
  for (size_t i = 0; s->syscalls && i < s->n_syscalls; i++) {
    struct rrt_seccomp_syscall *sc = &s->syscalls[i];
    strv_clear(&sc->names);
    free(sc->action);
    for (size_t j = 0; sc->args && j < sc->n_args; j++)
      free(sc->args[j].op);
    free(sc->args);
  }
  free(s->syscalls);
  free(s->canonical_json);
  free(s);
}

static void linux_free(struct rrt_linux *l)
{
  for (size_t i = 0; l->namespaces && i < l->n_namespaces; i++)
    free(l->namespaces[i].path);
  free(l->namespaces);
  free(l->uid_mappings.v);
  free(l->gid_mappings.v);
  for (size_t i = 0; l->devices && i < l->n_devices; i++)
    free(l->devices[i].path);
  free(l->devices);
  kv_free(l->sysctl, l->n_sysctl);
  free(l->resources_json);
  free(l->cgroups_path);
  strv_clear(&l->masked_paths);
  strv_clear(&l->readonly_paths);
  free(l->rootfs_propagation);
  free(l->mount_label);
  seccomp_free(l->seccomp);
  for (size_t i = 0; l->time_offsets && i < l->n_time_offsets; i++)
    free(l->time_offsets[i].clock);
  free(l->time_offsets);
  if (l->personality) {
    free(l->personality->domain);
    strv_clear(&l->personality->flags);
    free(l->personality);
  }
}

void rrt_spec_free(struct rrt_spec *spec)
{
  if (!spec)
    return;
  free(spec->oci_version);
  free(spec->root_path);
  free(spec->hostname);
  free(spec->domainname);
  process_free(spec->process);
  for (size_t i = 0; spec->mounts && i < spec->n_mounts; i++) {
    struct rrt_mount *m = &spec->mounts[i];
    free(m->destination);
    free(m->source);
    free(m->type);
    strv_clear(&m->options);
    free(m->uid_mappings.v);
    free(m->gid_mappings.v);
  }
  free(spec->mounts);
  for (int k = 0; k < RRT_HOOK__COUNT; k++) {
    for (size_t i = 0; spec->hooks[k].v && i < spec->hooks[k].n; i++) {
      free(spec->hooks[k].v[i].path);
      strv_clear(&spec->hooks[k].v[i].args);
      strv_clear(&spec->hooks[k].v[i].env);
    }
    free(spec->hooks[k].v);
  }
  kv_free(spec->annotations, spec->n_annotations);
  linux_free(&spec->lnx);
  free(spec);
}

/* linux.c: config.json's linux object: namespaces, devices, seccomp, time offsets,
 * personality, and a small schema for what is passed through (resources, rdt, netDevices). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "internal.h"
#include "rootlessrt/util.h"

static const char *const time_clocks[] = {"monotonic", "boottime", NULL};

static const char *const seccomp_archs[] = {
    "SCMP_ARCH_X86",         "SCMP_ARCH_X86_64",      "SCMP_ARCH_X32",     "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64",     "SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_M68K",    "SCMP_ARCH_MIPS",
    "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",   "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64",
    "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",         "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",
    "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",       "SCMP_ARCH_SH",      "SCMP_ARCH_SHEB",
    "SCMP_ARCH_PARISC",      "SCMP_ARCH_PARISC64",    "SCMP_ARCH_RISCV64", NULL};

static const char *const seccomp_ops[] = {"SCMP_CMP_NE",        "SCMP_CMP_LT", "SCMP_CMP_LE",
                                          "SCMP_CMP_EQ",        "SCMP_CMP_GE", "SCMP_CMP_GT",
                                          "SCMP_CMP_MASKED_EQ", NULL};

static const char *const seccomp_flags[] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                                            "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
                                            "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL};

static const char *const seccomp_actions[] = {"SCMP_ACT_KILL",        "SCMP_ACT_KILL_PROCESS",
                                              "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
                                              "SCMP_ACT_ERRNO",       "SCMP_ACT_TRACE",
                                              "SCMP_ACT_ALLOW",       "SCMP_ACT_LOG",
                                              "SCMP_ACT_NOTIFY",      NULL};

static const char *const personality_domains[] = {"LINUX", "LINUX32", NULL};

/* The schema lists only the first four; the r* forms are what runc, crun and podman emit. */
static const char *const propagations[] = {"private",    "shared",      "slave",
                                           "unbindable", "rprivate",    "rshared",
                                           "rslave",     "runbindable", NULL};

/* ------------------------------------------------------------------------------------------ */
/* linux                                                                                       */

static int parse_namespaces(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  json_object *arr;
  cleanup_free char *path = NULL;
  int seen = 0;
  if (spec_get_typed(lnx, "linux", "namespaces", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  l->n_namespaces = json_object_array_length(arr);
  l->namespaces = xcalloc(l->n_namespaces, sizeof *l->namespaces);
  for (size_t i = 0; i < l->n_namespaces; i++) {
    cleanup_free char *ip = spec_idx_path(path, i);
    cleanup_free char *name = NULL;
    json_object *e = json_object_array_get_idx(arr, i);
    struct rrt_namespace *ns = &l->namespaces[i];
    if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
        spec_get_str(e, ip, "type", F_REQ, &name, err) < 0 ||
        spec_get_str(e, ip, "path", F_ABS, &ns->path, err) < 0)
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
  if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
      spec_get_str(e, ip, "path", F_REQ | F_ABS, &d->path, err) < 0 ||
      spec_get_str(e, ip, "type", F_REQ, &type, err) < 0)
    return -1;
  if (strlen(type) != 1 || !strchr("cbup", type[0]))
    return rrt_error_set(err, 0, "%s.type: expected one of c, b, u, p, got \"%s\"", ip, type);
  d->type = type[0];
  if (spec_get_int(e, ip, "major", 0, INT64_MIN, INT64_MAX, &has_major, &d->major, err) < 0 ||
      spec_get_int(e, ip, "minor", 0, INT64_MIN, INT64_MAX, &has_minor, &d->minor, err) < 0 ||
      spec_get_u32(e, ip, "fileMode", 0, &d->has_file_mode, &d->file_mode, err) < 0 ||
      spec_get_u32(e, ip, "uid", 0, &d->has_uid, &d->uid, err) < 0 ||
      spec_get_u32(e, ip, "gid", 0, &d->has_gid, &d->gid, err) < 0)
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
  if (spec_get_typed(lnx, "linux", "devices", 0, json_type_array, &arr, &path, err) < 0)
    return -1;
  if (!arr)
    return 0;
  l->n_devices = json_object_array_length(arr);
  l->devices = xcalloc(l->n_devices, sizeof *l->devices);
  for (size_t i = 0; i < l->n_devices; i++) {
    cleanup_free char *ip = spec_idx_path(path, i);
    if (parse_device(json_object_array_get_idx(arr, i), ip, &l->devices[i], err) < 0)
      return -1;
  }
  return 0;
}

static int parse_syscall(json_object *e, const char *ip, struct rrt_seccomp_syscall *sc,
                         struct rrt_error *err)
{
  json_object *args;
  cleanup_free char *apath = NULL, *actpath = spec_key_path(ip, "action");
  if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
      spec_get_strv(e, ip, "names", F_REQ | F_NONEMPTY, &sc->names, err) < 0 ||
      spec_get_str(e, ip, "action", F_REQ, &sc->action, err) < 0 ||
      spec_want_enum(sc->action, seccomp_actions, actpath, "action", err) < 0 ||
      spec_get_u32(e, ip, "errnoRet", 0, &sc->has_errno_ret, &sc->errno_ret, err) < 0 ||
      spec_get_typed(e, ip, "args", 0, json_type_array, &args, &apath, err) < 0)
    return -1;
  if (!args)
    return 0;
  sc->n_args = json_object_array_length(args);
  sc->args = xcalloc(sc->n_args, sizeof *sc->args);
  for (size_t i = 0; i < sc->n_args; i++) {
    cleanup_free char *ap = spec_idx_path(apath, i);
    cleanup_free char *oppath = spec_key_path(ap, "op");
    json_object *a = json_object_array_get_idx(args, i);
    struct rrt_seccomp_arg *arg = &sc->args[i];
    uint64_t index = 0;
    /* A syscall has six argument registers, numbered 0 to 5. */
    if (spec_expect(a, json_type_object, ap, "object", err) < 0 ||
        spec_get_uint(a, ap, "index", F_REQ, 5, NULL, &index, err) < 0 ||
        spec_get_uint(a, ap, "value", F_REQ, UINT64_MAX, NULL, &arg->value, err) < 0 ||
        spec_get_uint(a, ap, "valueTwo", 0, UINT64_MAX, NULL, &arg->value_two, err) < 0 ||
        spec_get_str(a, ap, "op", F_REQ, &arg->op, err) < 0 ||
        spec_want_enum(arg->op, seccomp_ops, oppath, "operator", err) < 0)
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
  if (spec_get_typed(obj, path, "syscalls", 0, json_type_array, &arr, &spath, err) < 0)
    return -1;
  if (!arr)
    return 0;
  s->n_syscalls = json_object_array_length(arr);
  s->syscalls = xcalloc(s->n_syscalls, sizeof *s->syscalls);
  for (size_t i = 0; i < s->n_syscalls; i++) {
    cleanup_free char *ip = spec_idx_path(spath, i);
    if (parse_syscall(json_object_array_get_idx(arr, i), ip, &s->syscalls[i], err) < 0)
      return -1;
  }
  return 0;
}

static int parse_seccomp(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  json_object *obj;
  cleanup_free char *path = NULL, *dpath = NULL, *apath = NULL, *fpath = NULL;
  if (spec_get_typed(lnx, "linux", "seccomp", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  struct rrt_seccomp *s = l->seccomp = xzalloc(sizeof *l->seccomp);
  dpath = spec_key_path(path, "defaultAction");
  apath = spec_key_path(path, "architectures");
  fpath = spec_key_path(path, "flags");
  if (spec_get_str(obj, path, "defaultAction", F_REQ, &s->default_action, err) < 0 ||
      spec_want_enum(s->default_action, seccomp_actions, dpath, "action", err) < 0 ||
      spec_get_u32(obj, path, "defaultErrnoRet", 0, &s->has_default_errno_ret,
                   &s->default_errno_ret, err) < 0 ||
      spec_get_strv(obj, path, "architectures", 0, &s->architectures, err) < 0 ||
      spec_want_enum_strv(&s->architectures, seccomp_archs, apath, "architecture", err) < 0 ||
      spec_get_strv(obj, path, "flags", 0, &s->flags, err) < 0 ||
      spec_want_enum_strv(&s->flags, seccomp_flags, fpath, "flag", err) < 0 ||
      spec_get_str(obj, path, "listenerPath", F_NONEMPTY, &s->listener_path, err) < 0 ||
      spec_get_str(obj, path, "listenerMetadata", 0, &s->listener_metadata, err) < 0 ||
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
  if (spec_get_typed(lnx, "linux", "timeOffsets", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  l->time_offsets = xcalloc((size_t)json_object_object_length(obj), sizeof *l->time_offsets);
  json_object_object_foreach(obj, clock, val)
  {
    struct rrt_time_offset *t = &l->time_offsets[l->n_time_offsets++];
    cleanup_free char *cp = spec_key_path(path, clock);
    t->clock = xstrdup(clock);
    if (!spec_in_list(clock, time_clocks))
      return rrt_error_set(err, 0, "%s: unknown clock \"%s\" (expected monotonic or boottime)",
                           path, clock);
    if (spec_expect(val, json_type_object, cp, "object", err) < 0 ||
        spec_get_int(val, cp, "secs", 0, INT64_MIN, INT64_MAX, NULL, &t->secs, err) < 0 ||
        spec_get_u32(val, cp, "nanosecs", 0, NULL, &t->nanosecs, err) < 0)
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
  if (spec_get_typed(lnx, "linux", "personality", 0, json_type_object, &obj, &path, err) < 0)
    return -1;
  if (!obj)
    return 0;
  l->personality = xzalloc(sizeof *l->personality);
  dpath = spec_key_path(path, "domain");
  if (spec_get_str(obj, path, "domain", F_REQ, &l->personality->domain, err) < 0 ||
      spec_want_enum(l->personality->domain, personality_domains, dpath, "domain", err) < 0 ||
      spec_get_strv(obj, path, "flags", 0, &l->personality->flags, err) < 0)
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
    if (spec_expect(v, json_type_string, p, "string", err) < 0)
      return -1;
    if (f->kind == K_PAGESIZE && !valid_page_size(json_object_get_string(v)))
      return rrt_error_set(err, 0, "%s: expected a size like 64KB, 2MB or 1GB, got \"%s\"", p,
                           json_object_get_string(v));
    return 0;
  case K_BOOL:
    return spec_expect(v, json_type_boolean, p, "boolean", err);
  case K_I64:
    return spec_want_int(v, p, INT64_MIN, INT64_MAX, &i, err);
  case K_U64:
    return spec_want_uint(v, p, UINT64_MAX, &u, err);
  case K_U32:
    return spec_want_uint(v, p, UINT32_MAX, &u, err);
  case K_U16:
    return spec_want_uint(v, p, UINT16_MAX, &u, err);
  case K_OBJ:
    if (spec_expect(v, json_type_object, p, "object", err) < 0)
      return -1;
    return check_shape(v, p, f->sub, err);
  case K_ARR:
    if (spec_expect(v, json_type_array, p, "array", err) < 0)
      return -1;
    for (size_t idx = 0; idx < json_object_array_length(v); idx++) {
      cleanup_free char *ip = spec_idx_path(p, idx);
      json_object *e = json_object_array_get_idx(v, idx);
      if (spec_expect(e, json_type_object, ip, "object", err) < 0 ||
          check_shape(e, ip, f->sub, err) < 0)
        return -1;
    }
    return 0;
  case K_MAP:
  case K_STRMAP: {
    if (spec_expect(v, json_type_object, p, "object", err) < 0)
      return -1;
    bool objects = f->kind == K_MAP;
    json_object_object_foreach(v, k, e)
    {
      cleanup_free char *kp = spec_key_path(p, k);
      if (spec_expect(e, objects ? json_type_object : json_type_string, kp,
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
    int r = spec_field(obj, path, f->key, f->required ? F_REQ : 0, &v, &p, err);
    if (r < 0 || (r > 0 && check_value(v, p, f, err) < 0))
      return -1;
  }
  return 0;
}

static bool nonempty(json_object *obj, const char *key)
{
  json_object *v = spec_member(obj, key);
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
  return any_nonempty(res, top) || any_nonempty(spec_member(res, "memory"), memory) ||
         any_nonempty(spec_member(res, "cpu"), cpu) ||
         any_nonempty(spec_member(res, "pids"), pids) ||
         any_nonempty(spec_member(res, "blockIO"), blkio) ||
         any_nonempty(spec_member(res, "network"), network);
}

static int parse_resources(json_object *lnx, struct rrt_linux *l, struct rrt_error *err)
{
  if (check_shape(lnx, "linux", sh_linux_extra, err) < 0)
    return -1;
  json_object *res = spec_member(lnx, "resources");
  if (!res)
    return 0;
  l->resources_json = xstrdup(json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN));
  l->has_resource_limits = wants_cgroup_limits(res);
  return 0;
}

int spec_parse_linux(json_object *doc, struct rrt_spec *spec, struct rrt_error *err)
{
  json_object *lnx;
  cleanup_free char *path = NULL, *ppath = NULL;
  if (spec_get_typed(doc, "", "linux", 0, json_type_object, &lnx, &path, err) < 0)
    return -1;
  if (!lnx)
    return 0;
  struct rrt_linux *l = &spec->lnx;
  spec->has_linux = true;
  ppath = spec_key_path(path, "rootfsPropagation");
  if (parse_namespaces(lnx, l, err) < 0 ||
      spec_parse_id_mappings(lnx, path, "uidMappings", &l->uid_mappings, err) < 0 ||
      spec_parse_id_mappings(lnx, path, "gidMappings", &l->gid_mappings, err) < 0 ||
      parse_devices(lnx, l, err) < 0 ||
      spec_get_kv(lnx, path, "sysctl", &l->sysctl, &l->n_sysctl, err) < 0 ||
      parse_resources(lnx, l, err) < 0 ||
      spec_get_str(lnx, path, "cgroupsPath", 0, &l->cgroups_path, err) < 0 ||
      spec_get_strv(lnx, path, "maskedPaths", F_ABS, &l->masked_paths, err) < 0 ||
      spec_get_strv(lnx, path, "readonlyPaths", F_ABS, &l->readonly_paths, err) < 0 ||
      spec_get_str(lnx, path, "rootfsPropagation", 0, &l->rootfs_propagation, err) < 0 ||
      (l->rootfs_propagation &&
       spec_want_enum(l->rootfs_propagation, propagations, ppath, "propagation", err) < 0) ||
      spec_get_str(lnx, path, "mountLabel", 0, &l->mount_label, err) < 0 ||
      parse_seccomp(lnx, l, err) < 0 || parse_time_offsets(lnx, l, err) < 0 ||
      parse_personality(lnx, l, err) < 0)
    return -1;
  return 0;
}
